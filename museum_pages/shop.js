// The booking page (/shop): a visitor picks general entry or an event, a day and an entry
// time with places left, a number of tickets per price category, and books them with an
// email; the tickets' QR codes are then on screen. Everything comes from the API, asked
// without credentials ([shop] enabled lets it), and nothing is fetched from elsewhere.
// The page's words, in English and German, are all in STRINGS below.
"use strict";

const API = "/v1.1";
const WINDOW_DAYS = 14; // the days offered: today and the 13 after

const STRINGS = {
  en: {
    title: "Book your visit", loading: "Loading…",
    what: "What would you like to visit?", general: "General entry",
    day: "Day", slot: "Entry time", tickets: "Tickets",
    email: "Your email address (for the tickets)", book: "Book", booking: "Booking…",
    free: "free", left: (n) => `${n} left`, full: "full", ended: "ended",
    noDays: "No day with places left in the next two weeks.",
    payAtDesk: "Tickets with a price are paid at the desk when you arrive.",
    nothingOffered: "Tickets for this can only be bought at the desk.",
    fewer: (label) => `One fewer: ${label}`, more: (label) => `One more: ${label}`,
    quoting: "Total: …", totalFree: "Total: free",
    total: (amount) => `Total: ${amount}, paid at the desk`,
    chooseDay: "Choose a day.", chooseSlot: "Choose an entry time.",
    chooseTickets: "Choose at least one ticket.",
    booked: "Booked!", order: (code) => `Order ${code}`,
    due: (amount) => `To pay at the desk: ${amount}`,
    sent: (email) => `Your tickets were sent to ${email}.`,
    showAtEntrance: "Show a ticket's code at the entrance, on this screen or printed.",
    ticket: (label, n, count) => `${label} · ticket ${n} of ${count}`,
    qr: (label) => `QR code of the ticket ${label}`,
    ticketPage: "Open this ticket on its own page", again: "Book more tickets",
    tooMany: (minutes) => "Thank you for your interest! Too many bookings came from here "
      + `just now: please try again in ${minutes} ${minutes === 1 ? "minute" : "minutes"}.`,
    offline: "The museum cannot be reached just now. Check your connection and try again.",
    closed: "Online booking is not open. Please ask the museum.",
    failed: "Something went wrong on the museum's side. Please try again later.",
    fields: { email: "Email", ticketDate: "Day", entryTime: "Entry time",
      category: "Tickets", quantity: "Number of tickets", items: "Tickets" },
  },
  de: {
    title: "Besuch buchen", loading: "Wird geladen…",
    what: "Was möchten Sie besuchen?", general: "Eintritt ins Museum",
    day: "Tag", slot: "Einlasszeit", tickets: "Tickets",
    email: "Ihre E-Mail-Adresse (für die Tickets)", book: "Buchen", booking: "Wird gebucht…",
    free: "frei", left: (n) => `noch ${n} frei`, full: "ausgebucht", ended: "vorbei",
    noDays: "In den nächsten zwei Wochen ist kein Tag mehr frei.",
    payAtDesk: "Tickets mit Preis bezahlen Sie bei Ihrer Ankunft an der Kasse.",
    nothingOffered: "Tickets dafür gibt es nur an der Kasse.",
    fewer: (label) => `Eins weniger: ${label}`, more: (label) => `Eins mehr: ${label}`,
    quoting: "Summe: …", totalFree: "Summe: kostenlos",
    total: (amount) => `Summe: ${amount}, zu zahlen an der Kasse`,
    chooseDay: "Bitte wählen Sie einen Tag.", chooseSlot: "Bitte wählen Sie eine Einlasszeit.",
    chooseTickets: "Bitte wählen Sie mindestens ein Ticket.",
    booked: "Gebucht!", order: (code) => `Buchung ${code}`,
    due: (amount) => `An der Kasse zu zahlen: ${amount}`,
    sent: (email) => `Ihre Tickets wurden an ${email} geschickt.`,
    showAtEntrance: "Zeigen Sie am Eingang den Code eines Tickets, hier oder ausgedruckt.",
    ticket: (label, n, count) => `${label} · Ticket ${n} von ${count}`,
    qr: (label) => `QR-Code des Tickets ${label}`,
    ticketPage: "Dieses Ticket auf eigener Seite öffnen", again: "Weitere Tickets buchen",
    tooMany: (minutes) => "Danke für Ihr Interesse! Von hier kamen gerade zu viele "
      + `Buchungen: Bitte versuchen Sie es in ${minutes} `
      + `${minutes === 1 ? "Minute" : "Minuten"} wieder.`,
    offline: "Das Museum ist gerade nicht erreichbar. Prüfen Sie Ihre Verbindung und "
      + "versuchen Sie es noch einmal.",
    closed: "Die Online-Buchung ist nicht geöffnet. Bitte fragen Sie das Museum.",
    failed: "Beim Museum ist etwas schiefgegangen. Bitte versuchen Sie es später noch einmal.",
    fields: { email: "E-Mail", ticketDate: "Tag", entryTime: "Einlasszeit",
      category: "Tickets", quantity: "Anzahl", items: "Tickets" },
  },
};

// ?lang=de in the page's address (as a museum's German site embeds it) wins; then the
// browser's languages (what it sends as Accept-Language); English otherwise.
function chooseLanguage() {
  const asked = new URLSearchParams(location.search).get("lang");
  const wanted = [asked, ...(navigator.languages || [navigator.language])];
  for (const tag of wanted) {
    const language = (tag || "").slice(0, 2).toLowerCase();
    if (language in STRINGS) return language;
  }
  return "en";
}

const LANGUAGE = chooseLanguage();
const T = STRINGS[LANGUAGE];
const $ = (id) => document.getElementById(id);
const settings = document.body.dataset; // the shop's settings, written in by the service
const state = { museum: null, days: [], events: [], offer: "general", day: null, slot: null,
  idempotency: null };

// -- talking to the API -------------------------------------------------------------------

class ShopError extends Error {
  constructor(message, fields = [], reason = null) {
    super(message);
    this.fields = fields; // [{field, message}] from a problem's `errors`
    this.reason = reason; // a 409's
  }
}

async function call(method, path, body, headers = {}) {
  let response;
  try {
    response = await fetch(API + path, {
      method, credentials: "omit", body: body && JSON.stringify(body),
      headers: { Accept: "application/json",
        ...(body ? { "Content-Type": "application/json" } : {}), ...headers } });
  } catch {
    throw new ShopError(T.offline);
  }
  const data = await response.json().catch(() => null);
  if (response.ok) return data;
  if (response.status === 429) {
    const seconds = Number(response.headers.get("Retry-After")) || 60;
    throw new ShopError(T.tooMany(Math.max(1, Math.ceil(seconds / 60))));
  }
  if (response.status === 401 || response.status === 403) throw new ShopError(T.closed);
  if (!data || response.status >= 500) throw new ShopError(T.failed);
  throw new ShopError(data.detail, data.errors || [], data.reason);
}

// -- dates, times and money as the visitor reads them -----------------------------------

const addDays = (isoDate, days) =>
  new Date(Date.parse(`${isoDate}T00:00:00Z`) + days * 86400000).toISOString().slice(0, 10);

function dayName(isoDate) {
  return new Intl.DateTimeFormat(LANGUAGE, { weekday: "short", day: "numeric", month: "short",
    timeZone: "UTC" }).format(new Date(`${isoDate}T00:00:00Z`));
}

function money(amount) {
  return new Intl.NumberFormat(LANGUAGE, { style: "currency",
    currency: state.museum.currency }).format(amount);
}

// -- what is offered ---------------------------------------------------------------------

function offeredEvent() {
  return state.events.find((event) => event.eventId === state.offer) || null;
}

function priceOf(category) {
  const event = offeredEvent();
  if (!event) return category.price;
  return (event.prices || {})[category.name] ?? event.price;
}

// Free reservations always; a priced ticket only when the museum takes payment at its desk.
function offeredCategories() {
  return state.museum.categories.filter(
    (category) => priceOf(category) === 0 || settings.payAtDesk === "true");
}

// Each open day of the window for this offer: {date, label, note, bookable}.
function dayChoices() {
  const event = offeredEvent();
  return state.days.flatMap((day) => {
    if (!day.open) return [];
    const label = dayName(day.date), hours = `${day.hours.timeOpen}–${day.hours.timeClose}`;
    const choice = (note, bookable) => [{ date: day.date, label,
      note: [hours, note].filter(Boolean).join(" · "), bookable }];
    if (event) {
      const places = day.events.find((each) => each.eventId === event.eventId);
      return places ? choice(...placesNote(places.available)) : [];
    }
    if (day.slots && day.slots.length) {
      const ended = day.slots.every((slot) => slot.ended);
      const left = day.slots.some((slot) => !slot.ended && slot.available !== 0);
      return choice(ended ? T.ended : left ? "" : T.full, left);
    }
    return choice(...placesNote(day.general.available));
  });
}

// [note, bookable] of a number of places left (null: no limit).
function placesNote(available) {
  if (available === null) return ["", true];
  return [available > 0 ? T.left(available) : T.full, available > 0];
}

function chosenDay() {
  return state.days.find((day) => day.date === state.day) || null;
}

// -- drawing the form -----------------------------------------------------------------------

function radio(group, value, text, note, enabled, checked) {
  const id = `${group}-${value}`;
  const input = Object.assign(document.createElement("input"),
    { type: "radio", name: group, id, value, disabled: !enabled, checked });
  const label = Object.assign(document.createElement("label"), { htmlFor: id });
  label.append(text);
  if (note) {
    label.append(" ", Object.assign(document.createElement("span"),
      { className: "note", textContent: note }));
  }
  const choice = Object.assign(document.createElement("div"),
    { className: enabled ? "choice" : "choice unavailable" });
  choice.append(input, label);
  return choice;
}

function drawOffers() {
  const offers = [radio("offer", "general", T.general, "", true, state.offer === "general"),
    ...state.events.map((event) => radio("offer", event.eventId, event.name, event.location,
      true, state.offer === event.eventId))];
  $("offers").replaceChildren(...offers);
  const event = offeredEvent();
  $("offer-about").textContent = event ? event.eventDescription : "";
  $("offer-about").hidden = !event;
}

function drawDays() {
  const choices = dayChoices();
  if (!choices.some((choice) => choice.date === state.day && choice.bookable)) {
    state.day = (choices.find((choice) => choice.bookable) || {}).date || null;
  }
  $("days").replaceChildren(...choices.map((choice) => radio("day", choice.date, choice.label,
    choice.note, choice.bookable, choice.date === state.day)));
  $("no-days").hidden = choices.some((choice) => choice.bookable);
  drawSlots();
}

function drawSlots() {
  const day = chosenDay();
  const slots = !offeredEvent() && day && day.slots ? day.slots : [];
  $("slot-choice").hidden = !slots.length;
  const open = (slot) => !slot.ended && slot.available !== 0;
  if (!slots.some((slot) => slot.time === state.slot && open(slot))) {
    state.slot = (slots.find(open) || {}).time || null;
  }
  $("slots").replaceChildren(...slots.map((slot) => radio("slot", slot.time, slot.time,
    slot.ended ? T.ended : slot.available === 0 ? T.full
      : slot.available === null ? "" : T.left(slot.available),
    open(slot), slot.time === state.slot)));
}

function quantities() {
  return Object.fromEntries([...document.querySelectorAll("#categories input")]
    .map((input) => [input.dataset.category, Number(input.value) || 0]));
}

function drawCategories() {
  const offered = offeredCategories();
  const max = Number(settings.maxTickets) || 10;
  const before = quantities(); // kept when the places left are read again
  $("categories").replaceChildren(...offered.map((category) => {
    const id = `quantity-${category.name}`;
    const row = Object.assign(document.createElement("div"), { className: "category" });
    const label = Object.assign(document.createElement("label"),
      { htmlFor: id, textContent: category.label });
    const price = priceOf(category);
    const cost = Object.assign(document.createElement("span"), { className: "price",
      textContent: price === 0 ? T.free : money(price) });
    const input = Object.assign(document.createElement("input"), { type: "number", id,
      min: 0, max, value: before[category.name] || 0, inputMode: "numeric" });
    input.dataset.category = category.name;
    const step = (by, text, name) => {
      const button = Object.assign(document.createElement("button"),
        { type: "button", className: "step", textContent: text });
      button.setAttribute("aria-label", name);
      button.addEventListener("click", () => {
        input.value = Math.min(max, Math.max(0, (Number(input.value) || 0) + by));
        changed();
      });
      return button;
    };
    const stepper = Object.assign(document.createElement("div"), { className: "stepper" });
    stepper.append(step(-1, "−", T.fewer(category.label)), input,
      step(1, "+", T.more(category.label)));
    row.append(label, cost, stepper);
    if (category.note) {
      row.append(Object.assign(document.createElement("p"), { className: "note",
        textContent: category.note }));
    }
    return row;
  }));
  $("pay-at-desk").textContent = offered.length ? T.payAtDesk : T.nothingOffered;
  $("pay-at-desk").hidden = offered.length && !offered.some((category) => priceOf(category) > 0);
}

// -- the order ------------------------------------------------------------------------------

function items() {
  const event = offeredEvent();
  return Object.entries(quantities())
    .map(([category, quantity]) => ({ category, quantity }))
    .filter((item) => item.quantity > 0)
    .map((item) => ({ ticketType: event ? "event" : "general", ticketDate: state.day,
      ...(event ? { eventId: event.eventId } : {}),
      ...(!event && state.slot ? { entryTime: state.slot } : {}), ...item }));
}

// No payment: with [shop] pay_at_desk the service itself marks a priced order as due.
function orderBody() {
  return { items: items(), email: $("email").value.trim() };
}

// What is missing before the API is asked, in the visitor's language.
function missing() {
  if (!state.day) return T.chooseDay;
  if (!$("slot-choice").hidden && !state.slot) return T.chooseSlot;
  if (!items().length) return T.chooseTickets;
  return null;
}

let quoting = null;

async function quote() {
  const asked = JSON.stringify(items());
  quoting = asked;
  if (missing()) {
    $("total").textContent = "";
    return;
  }
  $("total").textContent = T.quoting;
  try {
    // A quote needs no email: the visitor gives it last, when booking.
    const answer = await call("POST", "/orders?simulate=true", { items: items() });
    if (quoting !== asked) return; // the visitor changed the order meanwhile
    $("total").textContent = answer.total > 0 ? T.total(money(answer.total)) : T.totalFree;
    showProblem(null);
  } catch (error) {
    if (quoting !== asked) return;
    $("total").textContent = "";
    showProblem(error);
  }
}

function changed() {
  state.idempotency = null; // a changed order is a new one, never a replay of the last
  showProblem(null);
  quote();
}

function fieldName(field) {
  const last = String(field).split(/[.[\]/]/).filter(Boolean).pop();
  return T.fields[last] || T.fields[String(field).split(/[.[\]/]/)[0]] || field;
}

function showProblem(error) {
  const emailErrors = error ? error.fields.filter((each) => each.field === "email") : [];
  const others = error ? error.fields.filter((each) => each.field !== "email") : [];
  $("email-error").textContent = emailErrors
    .map((each) => `${T.fields.email}: ${each.message}`).join(" ");
  $("email-error").hidden = !emailErrors.length;
  $("email").setAttribute("aria-invalid", String(emailErrors.length > 0));
  const text = others.length ? others.map((each) => `${fieldName(each.field)}: ${each.message}`)
    : error && !emailErrors.length ? [error.message] : [];
  $("problem").textContent = text.join(" ");
  $("problem").hidden = !text.length;
}

async function book(event) {
  event.preventDefault();
  const gap = missing();
  if (gap) {
    showProblem(new ShopError(gap));
    return;
  }
  state.idempotency = state.idempotency || crypto.randomUUID();
  $("book").disabled = true;
  $("book").textContent = T.booking;
  try {
    const order = await call("POST", "/orders", orderBody(),
      { "Idempotency-Key": state.idempotency });
    showConfirmation(order);
  } catch (error) {
    if (error.reason === "sold-out") await load(); // the places left now, then why
    showProblem(error);
  } finally {
    $("book").disabled = false;
    $("book").textContent = T.book;
  }
}

function showConfirmation(order) {
  $("booking").hidden = true;
  $("booked").textContent = T.booked;
  const first = order.tickets[0];
  const when = [dayName(first.ticketDate), first.entryTime].filter(Boolean).join(" · ");
  $("order-facts").textContent = `${T.order(order.orderCode)} · ${when}`;
  $("order-due").hidden = !(order.total > 0);
  $("order-due").textContent = T.due(money(order.total));
  $("order-mail").hidden = settings.mail !== "true";
  $("order-mail").textContent = T.sent($("email").value.trim());
  const labels = Object.fromEntries(state.museum.categories.map((each) => [each.name, each.label]));
  $("order-tickets").replaceChildren(...order.tickets.map((ticket, index) => {
    const name = T.ticket(labels[ticket.category] || ticket.category, index + 1,
      order.tickets.length);
    const item = document.createElement("li");
    item.append(Object.assign(document.createElement("h3"), { textContent: name }));
    if (ticket.qrText) item.append(QRCode.svg(ticket.qrText, T.qr(ticket.confirmationCode)));
    item.append(Object.assign(document.createElement("p"), { className: "code",
      textContent: ticket.confirmationCode }));
    if (ticket.ticketPage) {
      item.append(Object.assign(document.createElement("a"), { href: ticket.ticketPage,
        target: "_blank", rel: "noopener", textContent: T.ticketPage }));
    }
    return item;
  }));
  $("confirmation").hidden = false;
  $("confirmation").focus();
}

function startAgain() {
  $("confirmation").hidden = true;
  $("booking").hidden = false;
  state.idempotency = null;
  document.querySelectorAll("#categories input").forEach((input) => { input.value = 0; });
  load(); // the places left changed
}

// -- start --------------------------------------------------------------------------------

async function load() {
  try {
    const museum = await call("GET", "/museum");
    const today = museum.now.slice(0, 10);
    const end = addDays(today, WINDOW_DAYS - 1);
    const [hours, availability, events] = await Promise.all([
      call("GET", `/museum-hours?startDate=${today}&limit=${WINDOW_DAYS}`),
      call("GET", `/availability?startDate=${today}&endDate=${end}`),
      call("GET", "/special-events?limit=30")]);
    const hoursOf = Object.fromEntries(hours.map((day) => [day.date, day]));
    state.museum = museum;
    state.days = availability.map((day) => ({ ...day, hours: hoursOf[day.date],
      open: day.open && day.date in hoursOf }));
    const offered = new Set(availability.flatMap((day) => day.events.map((each) => each.eventId)));
    state.events = events.filter((event) => offered.has(event.eventId));
    if (state.offer !== "general" && !offeredEvent()) state.offer = "general";
    $("museum-name").textContent = museum.name;
    document.title = `${T.title} · ${museum.name}`;
    drawOffers();
    drawDays();
    drawCategories();
    $("loading").hidden = true;
    $("booking").hidden = false;
    await quote();
  } catch (error) {
    $("loading").hidden = true;
    $("status").textContent = error.message;
    $("status").hidden = false;
  }
}

function start() {
  document.documentElement.lang = LANGUAGE;
  document.querySelectorAll("[data-text]").forEach((element) => {
    element.textContent = T[element.dataset.text];
  });
  $("booking").addEventListener("change", (event) => {
    if (event.target.name === "offer") {
      state.offer = event.target.value;
      drawOffers();
      drawDays();
      drawCategories();
      // The choices are new elements: the focus goes back to the one chosen, not to the page.
      $(`offer-${state.offer}`).focus();
    } else if (event.target.name === "day") {
      state.day = event.target.value;
      drawSlots();
    } else if (event.target.name === "slot") {
      state.slot = event.target.value;
    } else {
      return; // the email is checked when booking; a number is followed as it is typed
    }
    changed();
  });
  $("booking").addEventListener("input", (event) => {
    if (event.target.type === "number") changed();
  });
  $("booking").addEventListener("submit", book);
  $("again").addEventListener("click", startAgain);
  load();
}

start();
