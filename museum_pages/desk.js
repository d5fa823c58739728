// The desk page: sells to walk-ins on the desk channel, shows and prints their tickets,
// finds and voids a ticket. Plain script, no framework: see museum_desk.py.
"use strict";

const STORED = "museum.desk.signIn"; // localStorage: {name, key} of a desk device
const REQUEST_TIMEOUT = 15000; // ms
const STAFF_ONLY = "This page is for desk and admin users: sign in as one";

const $ = (id) => document.getElementById(id);
const signInForm = $("sign-in");
const signInStatus = $("sign-in-status");
const nameField = $("name");
const secretField = $("secret");
const desk = $("desk");

// {name, key, role}: a desk device's key, kept in localStorage so a shared desk PC stays
// signed in; or an admin's password, kept in this page's memory only (an admin signs in
// again after a reload), as device sessions are for the door's and the desk's roles.
let signedIn = null;
let categories = [];
let currency = "";
let today = "";

// --- Talking to the service --------------------------------------------------------------

// Basic credentials, UTF-8 encoded as the service's challenge asks (btoa takes Latin-1).
function basicAuthorization(name, secret) {
  const bytes = new TextEncoder().encode(`${name}:${secret}`);
  return "Basic " + btoa(String.fromCharCode(...bytes));
}

function signedInAuthorization() {
  return signedIn ? basicAuthorization(signedIn.name, signedIn.key) : null;
}

// The response to one request to the service, with the signed-in credentials unless
// another `authorization` is given (null: none). Credentials "omit" and X-Requested-With:
// the browser adds none of its own, and the service answers a 401 without the challenge
// that would open the browser's login box.
async function signedInFetch(path, options = {}, authorization = signedInAuthorization()) {
  const response = await fetch(location.origin + path, {
    cache: "no-store", credentials: "omit", signal: AbortSignal.timeout(REQUEST_TIMEOUT),
    ...options,
    headers: {
      "X-Requested-With": "fetch", ...options.headers,
      ...(authorization && { Authorization: authorization }),
    },
  });
  if (response.status === 401 && authorization && signedIn) {
    signOut("Signed out: the key or password is no longer valid. Sign in again.");
  }
  return response;
}

// [status, parsed body or {}] of one API call (see signedInFetch).
async function call(...args) {
  const response = await signedInFetch(...args);
  const answer = await response.json().catch(() => ({}));
  return [response.status, answer];
}

function sendJson(path, method, body, headers = {}) {
  return call(path, {
    method, headers: { "Content-Type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

// What a refused call says: the problem's detail and each field's message.
function problemText(status, answer) {
  if (status === null) return "No connection to the service: try again.";
  const fields = (answer.errors || []).map((error) => `${error.field} ${error.message}`);
  return [answer.detail || answer.title || `The service answered ${status}.`, ...fields]
    .join(" — ");
}

async function tryCall(...args) {
  try {
    return await call(...args);
  } catch {
    return [null, {}];
  }
}

function money(amount) {
  return `${Number(amount).toFixed(2)} ${currency}`;
}

// --- Signing in ---------------------------------------------------------------------------

function storedSignIn() {
  try {
    const stored = JSON.parse(localStorage.getItem(STORED));
    if (stored && stored.name && stored.key) return { ...stored, role: "desk" };
  } catch {
    // unreadable: signed out
  }
  localStorage.removeItem(STORED);
  return null;
}

function showSignIn(message, isProblem) {
  signedIn = null;
  desk.hidden = true;
  signInForm.hidden = false;
  signInStatus.textContent = message;
  signInStatus.classList.toggle("problem", isProblem);
  (nameField.value ? secretField : nameField).focus();
}

function signOut(message, isProblem = true) {
  localStorage.removeItem(STORED);
  secretField.value = "";
  showSignIn(message, isProblem);
}

// A desk user's password becomes a device session (201: a device and its key), a desk
// device's key signs in as it is (204); the password leaves the page with that one
// request. An admin is refused a session (403): its password, checked by reading the
// sales report (which the desk's and the admin's roles may), stays in memory only.
async function signIn(name, secret) {
  showSignIn("Signing in…", false);
  secretField.value = "";
  const password = basicAuthorization(name, secret);
  const [status, answer] = await tryCall("/v1.1/devices/session", { method: "POST" }, password);
  if (status === 201 && answer.role === "desk") return keepDevice({ name: answer.name, key: answer.key });
  if (status === 201) { // a gate user: its new session is of no use here
    await tryCall("/v1.1/devices/session", { method: "DELETE" },
      basicAuthorization(answer.name, answer.key));
    return showSignIn(STAFF_ONLY, true);
  }
  if (status === 204) return keepDevice({ name, key: secret });
  if (status === 403) {
    const [checked] = await tryCall(`/v1.1/reports/sales?startDate=2000-01-01`, {}, password);
    if (checked === 200) return showDesk({ name, key: secret, role: "admin" });
    return showSignIn(STAFF_ONLY, true);
  }
  const reason = status === 401 ? "Wrong name, password or key: check them and try again"
    : status === 429 ? "Too many attempts: wait a minute and try again"
      : problemText(status, answer);
  showSignIn(reason, true);
}

function keepDevice(device) {
  localStorage.setItem(STORED, JSON.stringify(device));
  showDesk({ ...device, role: "desk" });
}

async function showDesk(user) {
  signedIn = user;
  $("who").textContent = `Signed in as ${user.name} (${user.role})`;
  signInForm.hidden = true;
  desk.hidden = false;
  for (const section of document.querySelectorAll(".admin")) {
    section.hidden = user.role !== "admin";
  }
  await loadMuseum();
  saleDate.focus(); // not left on the hidden sign-in form: the sale starts as "New sale" does
  if (user.role === "admin") await showAdmin();
  await showToday();
}

signInForm.addEventListener("submit", (event) => {
  event.preventDefault();
  signIn(nameField.value.trim(), secretField.value);
});

// A desk device's key is revoked before the browser forgets it; an admin's password is
// only forgotten.
$("sign-out").addEventListener("click", async () => {
  if (signedIn.role === "desk") await tryCall("/v1.1/devices/session", { method: "DELETE" });
  signOut("Signed out. Sign in again to sell.", false);
});

// --- Selling ------------------------------------------------------------------------------

const saleDate = $("sale-date");
const saleKind = $("sale-kind");
const saleSlot = $("sale-slot");
const sellStatus = $("sell-status");
let day = null; // the chosen day's availability

async function loadMuseum() {
  const [status, museum] = await tryCall("/v1.1/museum");
  const [listed, listing] = await tryCall("/v1.1/price-categories");
  if (status !== 200 || listed !== 200) {
    sellStatus.textContent = problemText(status === 200 ? listed : status, {});
    return;
  }
  today = museum.now.slice(0, 10);
  currency = museum.currency;
  categories = listing;
  saleDate.min = today;
  saleDate.value = today;
  $("find-date").value = today;
  renderCounts();
  await loadDay();
}

function renderCounts() {
  const counts = $("counts");
  counts.replaceChildren(...categories.map((category) => {
    const row = document.createElement("div");
    row.className = "count";
    const label = document.createElement("label");
    label.htmlFor = `count-${category.name}`;
    label.textContent = `${category.label} · ${money(category.price)}`;
    const input = document.createElement("input");
    input.id = `count-${category.name}`;
    input.type = "number";
    input.min = "0";
    input.max = "50";
    input.value = "0";
    input.inputMode = "numeric";
    input.dataset.category = category.name;
    input.addEventListener("input", quote);
    row.append(label, input);
    return row;
  }));
}

function option(value, text, disabled = false) {
  const element = new Option(text, value);
  element.disabled = disabled;
  return element;
}

function placesText(places) {
  if (places.available === null) return "";
  return places.available === 0 ? " — sold out" : ` — ${places.available} left`;
}

// The day's availability: general entry and the day's events as the ticket's choices,
// and with timed entry the slots, the ended and full ones shown but not offered.
async function loadDay() {
  const [status, days] = await tryCall(
    `/v1.1/availability?startDate=${saleDate.value}&endDate=${saleDate.value}`);
  day = status === 200 ? days[0] : null;
  if (!day) {
    saleKind.replaceChildren();
    sellStatus.textContent = problemText(status, days);
    return;
  }
  const choices = [];
  if (day.open) choices.push(option("general", `General entry${placesText(day.general)}`));
  for (const event of day.events) {
    choices.push(option(event.eventId, `${event.name}${placesText(event)}`,
      event.available === 0));
  }
  if (!choices.length) choices.push(option("", "Closed: nothing to sell", true));
  saleKind.replaceChildren(...choices);
  showSlots();
  quote();
}

function showSlots() {
  const slots = saleKind.value === "general" && day.slots ? day.slots : [];
  $("slot-row").hidden = !slots.length;
  saleSlot.replaceChildren(...slots.map((slot) => option(slot.time,
    slot.ended ? `${slot.time} — ended` : `${slot.time}${placesText(slot)}`,
    Boolean(slot.ended) || slot.available === 0)));
  const first = slots.find((slot) => !slot.ended && slot.available !== 0);
  if (first) saleSlot.value = first.time;
}

saleDate.addEventListener("change", () => {
  sellStatus.textContent = "";
  loadDay();
});
saleKind.addEventListener("change", () => { showSlots(); quote(); });
saleSlot.addEventListener("change", quote);

// The order's body from the form: one item per category with a count.
function orderBody() {
  const payment = document.querySelector("input[name=payment]:checked").value;
  const items = [...document.querySelectorAll("#counts input")]
    .filter((input) => Number(input.value) > 0)
    .map((input) => {
      const item = { ticketType: saleKind.value === "general" ? "general" : "event",
        ticketDate: saleDate.value, category: input.dataset.category,
        quantity: Number(input.value) };
      if (item.ticketType === "event") item.eventId = saleKind.value;
      if (!$("slot-row").hidden) item.entryTime = saleSlot.value;
      return item;
    });
  return { channel: "desk", payment, items };
}

// The total as the service would charge it (a quote: ?simulate=true buys nothing).
async function quote() {
  const body = orderBody();
  const total = $("total");
  if (!body.items.length || !saleKind.value) {
    total.textContent = "";
    return;
  }
  const [status, answer] = await sendJson("/v1.1/orders?simulate=true", "POST", body)
    .catch(() => [null, {}]);
  total.textContent = status === 200
    ? `Total ${money(answer.total)} for ${answer.tickets.length} ticket(s)` : "";
}

let saleKey = crypto.randomUUID(); // one sale's Idempotency-Key: a retry sells once

$("sell").addEventListener("submit", async (event) => {
  event.preventDefault();
  const body = orderBody();
  if (!body.items.length) {
    sellStatus.textContent = "Give how many tickets of at least one category.";
    return;
  }
  $("sell-button").disabled = true;
  sellStatus.textContent = "Selling…";
  const [status, answer] = await sendJson("/v1.1/orders", "POST", body,
    { "Idempotency-Key": saleKey }).catch(() => [null, {}]);
  $("sell-button").disabled = false;
  if (status !== 201) {
    sellStatus.textContent = `Not sold: ${problemText(status, answer)}`;
    sellStatus.className = "problem";
    return;
  }
  saleKey = crypto.randomUUID();
  sellStatus.className = "";
  sellStatus.textContent = `Sold: ${answer.tickets.length} ticket(s), ` +
    `${money(answer.total)} paid ${answer.payment}.`;
  showTickets(answer);
  loadDay();
});

// The PNG of a ticket's code as a data: URL (the page's policy allows no blob: images,
// and an <img src> could not send the credentials).
async function codeImage(ticketId) {
  const response = await signedInFetch(`/v1.1/tickets/${ticketId}/qr`);
  if (!response.ok) return null;
  const blob = await response.blob();
  return new Promise((resolve) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result);
    reader.readAsDataURL(blob);
  });
}

function ticketLine(ticket) {
  const what = ticket.eventName || "General entry";
  const when = ticket.entryTime ? `${ticket.ticketDate} ${ticket.entryTime}` : ticket.ticketDate;
  const category = categories.find((known) => known.name === ticket.category);
  return [what, when, category ? category.label : ticket.category, money(ticket.price)]
    .filter(Boolean).join(" · ");
}

async function showTickets(order) {
  $("sold-summary").textContent = `Order ${order.orderCode}: ${money(order.total)}, ` +
    `paid ${order.payment}`;
  const list = $("tickets");
  list.replaceChildren(...order.tickets.map((ticket) => {
    const item = document.createElement("li");
    item.className = "ticket";
    const image = document.createElement("img");
    image.alt = `QR code of ticket ${ticket.confirmationCode}`;
    image.width = 240;
    image.height = 240;
    image.dataset.ticketId = ticket.ticketId;
    const line = document.createElement("p");
    line.textContent = ticketLine(ticket);
    const code = document.createElement("p");
    code.className = "code";
    code.textContent = ticket.confirmationCode;
    item.append(image, line, code);
    return item;
  }));
  $("sold").hidden = false;
  await Promise.all([...list.querySelectorAll("img")].map(async (image) => {
    const source = await codeImage(image.dataset.ticketId).catch(() => null);
    if (source) image.src = source;
    else image.alt = `${image.alt} (not loaded: print the code below it)`;
  }));
  list.dataset.loaded = "true";
  $("print").focus();
}

$("print").addEventListener("click", () => window.print());

$("new-sale").addEventListener("click", () => {
  $("sold").hidden = true;
  $("tickets").replaceChildren();
  for (const input of document.querySelectorAll("#counts input")) input.value = "0";
  sellStatus.textContent = "";
  $("total").textContent = "";
  saleDate.focus();
});

// --- Finding and voiding ------------------------------------------------------------------

const findStatus = $("find-status");

$("find").addEventListener("submit", (event) => {
  event.preventDefault();
  findTickets();
});

// The tickets (and their orders) that the find form's code or email names, on its day.
async function findTickets() {
  const code = $("find-code").value.trim();
  const email = $("find-email").value.trim();
  const body = code ? { code } : { email };
  if ($("find-date").value) body.date = $("find-date").value;
  findStatus.textContent = "Finding…";
  const [status, answer] = await sendJson("/v1.1/admissions/lookup", "POST", body)
    .catch(() => [null, {}]);
  if (status !== 200) {
    findStatus.textContent = problemText(status, answer);
    $("found").replaceChildren();
    $("found-orders").replaceChildren();
    return;
  }
  findStatus.textContent = answer.tickets.length
    ? `${answer.tickets.length} ticket(s) on ${answer.date}` : `No ticket on ${answer.date}`;
  $("found").replaceChildren(...answer.tickets.map(foundTicket));
  await showOrders(answer.tickets);
}

// A line of a found ticket or order, hidden while it has nothing to say.
function setLine(line, text) {
  line.textContent = text;
  line.hidden = !text;
}

function voidReasonText(found) {
  return found.voidReason ? `Reason for the void: ${found.voidReason}` : "";
}

function foundTicket(ticket) {
  const item = document.createElement("li");
  const line = document.createElement("p");
  const reason = document.createElement("p");
  const describe = () => {
    line.textContent = `${ticket.confirmationCode} · ${ticket.eventName || "General entry"}` +
      `${ticket.entryTime ? " " + ticket.entryTime : ""} · ${ticket.status}`;
    setLine(reason, voidReasonText(ticket));
  };
  describe();
  item.append(line, reason);
  if (ticket.status === "valid" || ticket.status === "admitted") {
    addVoidButton(item, {
      path: `/v1.1/tickets/${ticket.ticketId}`, id: ticket.ticketId,
      name: ticket.confirmationCode,
      voided: (why) => {
        Object.assign(ticket, { status: "void", voidReason: why });
        describe();
      },
    });
  }
  return item;
}

// A found ticket's or order's Void button, which asks for the void (see askVoid).
function addVoidButton(item, voiding) {
  const voidButton = document.createElement("button");
  voidButton.type = "button";
  voidButton.className = "danger";
  voidButton.textContent = `Void ${voiding.name}`;
  voidButton.addEventListener("click", () => askVoid(voiding, item, voidButton));
  item.append(voidButton);
}

// A void (of a ticket or a whole order: `voiding` says which, and what follows it) asks for
// its reason (kept with it, shown to the staff) and once more before it is done: it cannot
// be undone.
function askVoid(voiding, item, voidButton) {
  voidButton.hidden = true;
  const form = document.createElement("form");
  const label = document.createElement("label");
  const reason = document.createElement("input");
  reason.id = `void-reason-${voiding.id}`;
  reason.required = true;
  reason.maxLength = 200;
  label.htmlFor = reason.id;
  label.textContent = "Reason for the void";
  const confirm = document.createElement("button");
  confirm.type = "submit";
  confirm.className = "danger confirm";
  confirm.textContent = "Yes, void it";
  form.append(label, reason, confirm);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const why = reason.value.trim();
    if (!why) {
      findStatus.textContent = "Not voided: say why in the reason for the void.";
      reason.focus();
      return;
    }
    confirm.disabled = true;
    const [status, answer] = await sendJson(voiding.path, "DELETE", { reason: why })
      .catch(() => [null, {}]);
    if (status === 204) {
      form.remove();
      await voiding.voided(why);
      findStatus.textContent = `Voided ${voiding.name}.`;
    } else {
      confirm.disabled = false;
      findStatus.textContent = `Not voided: ${problemText(status, answer)}`;
    }
  });
  item.append(form);
  reason.focus();
}

// --- The orders of the tickets found: what is due, and marking it paid ---------------------

// Each order that a found ticket belongs to, read whole (its total, payment and void).
async function showOrders(tickets) {
  const ids = [...new Set(tickets.map((ticket) => ticket.orderId).filter(Boolean))];
  const answers = await Promise.all(ids.map((id) => tryCall(`/v1.1/orders/${id}`)));
  $("found-orders").replaceChildren(...answers.filter(([status]) => status === 200)
    .map(([, order]) => foundOrder(order)));
}

function orderAmount(order) {
  return `${Number(order.total).toFixed(2)} ${order.currency}`;
}

function paymentText(order) {
  if (order.payment === "due") return `Payment due: ${orderAmount(order)}`;
  if (order.paidAt) return `Paid ${order.payment}: ${orderAmount(order)}`;
  return order.payment ? `Paid ${order.payment} at the sale` : "";
}

function foundOrder(order) {
  const item = document.createElement("li");
  const line = document.createElement("p");
  line.textContent = `Order ${order.orderCode} · ${order.tickets.length} ticket(s) · ` +
    order.status;
  const payment = document.createElement("p");
  const reason = document.createElement("p");
  const describe = () => {
    setLine(payment, paymentText(order));
    payment.classList.toggle("due", order.payment === "due");
    setLine(reason, voidReasonText(order));
  };
  describe();
  item.append(line, payment, reason);
  if (order.payment === "due" && order.status === "confirmed") {
    const buttons = document.createElement("div");
    buttons.className = "row-buttons";
    for (const way of ["cash", "card"]) {
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = `Paid ${way}`;
      button.addEventListener("click", () => markPaid(order, way, buttons, describe));
      buttons.append(button);
    }
    item.append(buttons);
  }
  if (order.status === "confirmed" || order.status === "pending") {
    // Once voided, its tickets are found again: each now reads void, with the reason.
    addVoidButton(item, {
      path: `/v1.1/orders/${order.orderId}`, id: order.orderId, name: order.orderCode,
      voided: findTickets,
    });
  }
  return item;
}

// The same call again answers the order as it is: a click whose answer was lost is retried.
async function markPaid(order, way, buttons, describe) {
  for (const button of buttons.children) button.disabled = true;
  const [status, answer] = await sendJson(`/v1.1/orders/${order.orderId}/payment`, "POST",
    { payment: way }).catch(() => [null, {}]);
  if (status === 200) {
    Object.assign(order, answer);
    buttons.remove();
    describe();
    findStatus.textContent = `Order ${order.orderCode} paid ${way}: ${orderAmount(order)}.`;
  } else {
    for (const button of buttons.children) button.disabled = false;
    findStatus.textContent = `Not marked paid: ${problemText(status, answer)}`;
  }
}

// --- Today at a glance ---------------------------------------------------------------------

// A table of `rows` (arrays of cells) under `headings`, with its caption.
function fillTable(table, caption, headings, rows) {
  const title = document.createElement("caption");
  title.textContent = caption;
  const head = document.createElement("tr");
  head.append(...headings.map((text) => {
    const cell = document.createElement("th");
    cell.scope = "col";
    cell.textContent = text;
    return cell;
  }));
  table.replaceChildren(title, head, ...rows.map((cells) => {
    const line = document.createElement("tr");
    line.append(...cells.map((text) => {
      const cell = document.createElement("td");
      cell.textContent = text;
      return cell;
    }));
    return line;
  }));
}

function countBy(rows, key) {
  const counts = new Map();
  for (const row of rows) counts.set(key(row), (counts.get(key(row)) || 0) + 1);
  return counts;
}

// The day from the door's own reads: the list of today's tickets (each slot's and
// category's sold and arrived, the arrivals per hour), the availability (each slot's
// capacity) and the door's counters (double entries).
async function showToday() {
  const [listed, list] = await tryCall("/v1.1/admissions/list");
  const [counted, summary] = await tryCall("/v1.1/admissions/summary");
  const [found, days] = await tryCall(`/v1.1/availability?startDate=${today}&endDate=${today}`);
  if (listed !== 200 || counted !== 200 || found !== 200) {
    $("today-status").textContent = problemText(listed !== 200 ? listed : counted, {});
    return;
  }
  const rows = list.tickets.map((values) => Object.fromEntries(
    list.columns.map((column, index) => [column, values[index]])))
    .filter((row) => row.status !== "void" && row.status !== "cancelled");
  const arrived = rows.filter((row) => row.admittedAt);
  $("today-status").textContent = `${today}: ${rows.length} ticket(s) sold, ` +
    `${arrived.length} arrived, ${summary.doubleEntries} double entr` +
    `${summary.doubleEntries === 1 ? "y" : "ies"}`;
  const sold = countBy(rows, (row) => row.entryTime);
  const came = countBy(arrived, (row) => row.entryTime);
  fillTable($("today-slots"), "Per entry time", ["time", "sold / places", "arrived"],
    (days[0].slots || []).map((slot) => [slot.time,
      `${sold.get(slot.time) || 0} / ${slot.capacity ?? "∞"}`, came.get(slot.time) || 0]));
  const hourOf = new Intl.DateTimeFormat("en-GB", { timeZone: list.timeZone, hour: "2-digit",
    hourCycle: "h23" });
  const hours = countBy(arrived, (row) => `${hourOf.format(new Date(row.admittedAt))}:00`);
  fillTable($("today-hours"), "Arrivals per hour", ["hour", "arrived"],
    [...hours].sort().map(([hour, count]) => [hour, count]));
  // (The list names each ticket's category once the door's list carries it.)
  const byCategory = countBy(rows.filter((row) => row.category), (row) => row.category);
  const arrivedBy = countBy(arrived, (row) => row.category);
  fillTable($("today-categories"), "Per category", ["category", "sold", "arrived"],
    [...byCategory].map(([name, count]) => [
      (categories.find((known) => known.name === name) || { label: name || "—" }).label,
      count, arrivedBy.get(name) || 0]));
  await showSvg($("today-arrivals-chart"), arrivalsChartPath(today, today));
}

$("today-refresh").addEventListener("click", showToday);

// --- Events (admins) -----------------------------------------------------------------------

const eventChoice = $("event-choice");
const eventForm = $("event");
const eventStatus = $("event-status");
const EVENT_TEXTS = ["name", "location", "eventDescription"];
let events = [];

async function showAdmin() {
  $("report-start").value = today;
  $("report-end").value = today;
  $("event-prices").replaceChildren(...categories.map((category) => {
    const row = document.createElement("div");
    row.className = "count";
    const label = document.createElement("label");
    label.htmlFor = `event-price-${category.name}`;
    label.textContent = category.label;
    const input = document.createElement("input");
    input.id = `event-price-${category.name}`;
    input.inputMode = "decimal";
    input.dataset.category = category.name;
    row.append(label, input);
    return row;
  }));
  await loadEvents();
  await showFailedMessages();
}

async function loadEvents(chosen = "") {
  const [status, answer] = await tryCall(`/v1.1/special-events?startDate=${today}&limit=30`);
  events = status === 200 ? answer : [];
  eventChoice.replaceChildren(option("", "New event"), ...events.map(
    (event) => option(event.eventId, `${event.name} (${event.dates[0]}…)`)));
  eventChoice.value = chosen;
  fillEvent();
}

// The form shows the chosen event, or is empty for a new one.
function fillEvent() {
  const event = events.find((known) => known.eventId === eventChoice.value) || {};
  for (const name of EVENT_TEXTS) $(`event-${name}`).value = event[name] || "";
  $("event-dates").value = (event.dates || []).join(" ");
  $("event-price").value = event.price ?? "";
  $("event-capacity").value = event.capacity ?? "";
  for (const input of $("event-prices").querySelectorAll("input")) {
    input.value = (event.prices || {})[input.dataset.category] ?? "";
  }
  $("event-save").textContent = event.eventId ? "Save changes" : "Create event";
  $("event-cancel").hidden = !event.eventId;
  $("event-cancel-confirm").hidden = true;
  showFieldErrors([]);
}

eventChoice.addEventListener("change", () => {
  eventStatus.textContent = "";
  fillEvent();
});

// A number as typed, or the text itself when it is none: the service then names the field.
function typedNumber(text) {
  const trimmed = text.trim();
  return trimmed !== "" && Number.isFinite(Number(trimmed)) ? Number(trimmed) : trimmed;
}

function eventBody(changing) {
  const body = {};
  for (const name of EVENT_TEXTS) body[name] = $(`event-${name}`).value;
  body.dates = $("event-dates").value.split(/[\s,]+/).filter(Boolean);
  body.price = typedNumber($("event-price").value);
  const capacity = $("event-capacity").value.trim();
  if (capacity) body.capacity = typedNumber(capacity);
  else if (changing) body.capacity = null; // unlimited again
  const prices = {};
  for (const input of $("event-prices").querySelectorAll("input")) {
    if (input.value.trim()) prices[input.dataset.category] = typedNumber(input.value);
  }
  if (Object.keys(prices).length || changing) body.prices = prices;
  return body;
}

// Each field's message from the service, next to its field (`dates[1]`, `prices.child`
// are shown at `dates` and `prices`).
function showFieldErrors(errors) {
  for (const line of eventForm.querySelectorAll(".field-error")) line.textContent = "";
  for (const error of errors) {
    const line = $(`event-${error.field.split(/[.[]/)[0]}-error`);
    if (line) line.textContent += `${line.textContent ? " " : ""}${error.field} ${error.message}`;
  }
}

eventForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  const eventId = eventChoice.value;
  eventStatus.textContent = "Saving…";
  const [status, answer] = await (eventId
    ? sendJson(`/v1.1/special-events/${eventId}`, "PATCH", eventBody(true))
    : sendJson("/v1.1/special-events", "POST", eventBody(false))).catch(() => [null, {}]);
  if (status === 200 || status === 201) {
    await loadEvents(answer.eventId);
    eventStatus.textContent = `${eventId ? "Saved" : "Created"}: ${answer.name}.`;
    return loadDay();
  }
  showFieldErrors(answer.errors || []);
  eventStatus.textContent = `Not saved: ${answer.detail || problemText(status, answer)}`;
  const first = eventForm.querySelector(".field-error:not(:empty)");
  if (first) $(first.id.replace(/-error$/, "")).focus();
});

$("event-cancel").addEventListener("click", () => {
  $("event-cancel").hidden = true;
  $("event-cancel-confirm").hidden = false;
  $("event-cancel-confirm").focus();
});

$("event-cancel-confirm").addEventListener("click", async () => {
  const chosen = events.find((known) => known.eventId === eventChoice.value);
  const [status, answer] = await tryCall(`/v1.1/special-events/${chosen.eventId}`,
    { method: "DELETE" });
  if (status !== 204) {
    eventStatus.textContent = `Not cancelled: ${problemText(status, answer)}`;
    return;
  }
  await loadEvents();
  eventStatus.textContent = `Cancelled: ${chosen.name}.`;
  loadDay();
});

// --- The sales report (admins) ------------------------------------------------------------

const REPORT_COLUMNS = ["date", "eventName", "sold", "void", "admitted", "revenue",
  "doubleEntries"];

function reportPath(format) {
  return `/v1.1/reports/sales?startDate=${$("report-start").value}` +
    `&endDate=${$("report-end").value}&format=${format}`;
}

$("report").addEventListener("submit", async (event) => {
  event.preventDefault();
  const [status, rows] = await tryCall(reportPath("json"));
  if (status !== 200) {
    $("report-status").textContent = problemText(status, rows);
    return;
  }
  $("report-status").textContent = `${rows.length} row(s)`;
  showChart();
  const head = document.createElement("tr");
  head.append(...REPORT_COLUMNS.map((column) => {
    const cell = document.createElement("th");
    cell.scope = "col";
    cell.textContent = column === "eventName" ? "what" : column;
    return cell;
  }));
  $("report-table").replaceChildren(head, ...rows.map((row) => {
    const line = document.createElement("tr");
    line.append(...REPORT_COLUMNS.map((column) => {
      const cell = document.createElement("td");
      cell.textContent = column === "eventName" ? row.eventName || "General entry"
        : column === "revenue" ? money(row.revenue) : row[column];
      return cell;
    }));
    return line;
  }));
});

// The service's own charts of the window: the tickets sold per day, the arrivals per hour.
async function showChart() {
  const start = $("report-start").value;
  const end = $("report-end").value;
  await Promise.all([
    showSvg($("report-chart"), `/v1.1/reports/sales/chart?startDate=${start}&endDate=${end}`),
    showSvg($("report-arrivals-chart"), arrivalsChartPath(start, end))]);
}

// The CSV is fetched with the credentials (a link could not carry them), then saved
// under the name the service gives it.
$("report-csv").addEventListener("click", async () => {
  let response;
  try {
    response = await signedInFetch(reportPath("csv"));
  } catch {
    $("report-status").textContent = problemText(null, {});
    return;
  }
  if (!response.ok) {
    $("report-status").textContent = problemText(response.status,
      await response.json().catch(() => ({})));
    return;
  }
  const named = /filename="?([^";]+)"?/.exec(response.headers.get("Content-Disposition"));
  const link = document.createElement("a");
  link.href = URL.createObjectURL(await response.blob());
  link.download = named ? named[1] : "sales.csv";
  link.click();
  URL.revokeObjectURL(link.href);
  $("report-status").textContent = `Downloaded ${link.download}`;
});

// --- Charts drawn by the service ------------------------------------------------------------

function arrivalsChartPath(start, end) {
  return `/v1.1/reports/arrivals/chart?startDate=${start}&endDate=${end}`;
}

// The service's SVG chart at `path` in `image`, as a data: URL (an <img src> could not send
// the credentials); its alt text is the chart's own title and description, which lists
// every bar. Hidden when it cannot be read.
async function showSvg(image, path) {
  const response = await signedInFetch(path).catch(() => null);
  image.hidden = !(response && response.ok);
  if (image.hidden) return;
  const svg = await response.text();
  const chart = new DOMParser().parseFromString(svg, "image/svg+xml").documentElement;
  image.alt = [...chart.children].filter((part) => ["title", "desc"].includes(part.localName))
    .map((part) => part.textContent).join(": ");
  image.src = "data:image/svg+xml;charset=utf-8," + encodeURIComponent(svg);
}

// --- Failed mails and webhooks (admins) -------------------------------------------------

const outboxStatus = $("outbox-status");
// When a message was queued, in the browser's zone, named: it may not be the museum's.
const QUEUED_AT = { year: "numeric", month: "short", day: "numeric", hour: "2-digit",
  minute: "2-digit", timeZoneName: "short" };

// The outbox's failed messages: the panel shows only when there are some (or when asked
// again from it, so its Refresh button keeps its place).
async function showFailedMessages(keepShown = false) {
  const [status, messages] = await tryCall("/v1.1/outbox?state=failed");
  if (status !== 200) {
    outboxStatus.textContent = problemText(status, messages);
    return;
  }
  $("outbox-section").hidden = !messages.length && !keepShown;
  outboxStatus.textContent = messages.length
    ? `${messages.length} failed message(s)` : "No failed messages.";
  $("outbox-messages").replaceChildren(...messages.map(failedMessage));
}

function failedMessage(message) {
  const item = document.createElement("li");
  const what = document.createElement("p");
  what.textContent = `${message.kind === "email" ? "Mail" : "Webhook"} to ${message.target}`;
  const why = document.createElement("p");
  why.textContent = `${message.lastAnswer || "no answer"} · ${message.attempts} ` +
    `attempt(s) · queued ${new Date(message.createdAt).toLocaleString(undefined, QUEUED_AT)}`;
  const again = document.createElement("button");
  again.type = "button";
  again.textContent = "Send again";
  again.addEventListener("click", () => sendAgain(message, item));
  const drop = document.createElement("button");
  drop.type = "button";
  drop.className = "danger";
  drop.textContent = "Drop";
  drop.addEventListener("click", () => dropMessage(message, item, drop));
  item.append(what, why, again, drop);
  return item;
}

async function sendAgain(message, item) {
  const [status, answer] = await tryCall(`/v1.1/outbox/${message.messageId}/retry`,
    { method: "POST" });
  if (status !== 200) {
    outboxStatus.textContent = `Not sent again: ${problemText(status, answer)}`;
    return;
  }
  item.remove();
  outboxStatus.textContent = `Queued again: the ${message.kind === "email" ? "mail" : "webhook"}` +
    ` to ${message.target} is sent at the service's next look.`;
}

// A drop asks once more: the message is then never sent.
async function dropMessage(message, item, drop) {
  if (!drop.classList.contains("confirm")) {
    drop.classList.add("confirm");
    drop.textContent = "Yes, drop it";
    return;
  }
  const [status, answer] = await tryCall(`/v1.1/outbox/${message.messageId}`,
    { method: "DELETE" });
  if (status !== 204) {
    outboxStatus.textContent = `Not dropped: ${problemText(status, answer)}`;
    return;
  }
  item.remove();
  outboxStatus.textContent = `Dropped: the message to ${message.target} is not sent.`;
}

$("outbox-refresh").addEventListener("click", () => showFailedMessages(true));

// --- Start ----------------------------------------------------------------------------------

const stored = storedSignIn();
if (stored) showDesk(stored);
else showSignIn(signInStatus.textContent, false);
