// The entrance scanner without the network: every scan is decided once, whatever happens
// to its request or to the service.
//
// - Each scan carries an id (the Idempotency-Key of POST /v1.1/admissions). When its answer
//   is lost, the same scan is sent again with the same id: the service answers the original
//   outcome, so a lost answer never turns into "Already admitted" for the visitor it let in.
// - A signed-in page keeps the day's admission list (GET /v1.1/admissions/list: ticket ids,
//   a digest of each code, event, status; no email or phone) in this browser, refreshed
//   every 30 s. When the service cannot be reached within 2 s, the scan is decided from the
//   list: a valid ticket is admitted offline and queued, an admitted one refused, anything
//   else "Cannot check offline".
// - The queue survives reloads and is sent when the service answers again, each scan with
//   its id and the time it was scanned (`scannedAt`). The service then records a ticket
//   that another gate admitted meanwhile as a double entry, which the strip shows.
// - A service worker (sw.js) keeps the page's own files, so a reload during an outage still
//   shows the page; the list and the queue are in localStorage.
//
// Loaded before scan.js, which calls `doorOffline` where a scan is sent and at sign-out;
// it uses the page's museum clock (museumNow, setMuseumClock) and the shapes of a ticket's
// texts (QR_TEXT, CONFIRMATION_CODE, RANDOM_PART) from scan.js, once the page has loaded.
"use strict";

const doorOffline = (() => {
  const FIRST_ANSWER_WITHIN = 2000; // ms; then a ticket in the list is decided offline
  const RETRY_FOR = 10000; // ms; without a list for today, a lost answer is asked again
  const RETRY_PAUSE = 300; // ms between sends of one scan
  const LIST_EVERY = 30000; // ms; other gates admit too
  const QUEUE_EVERY = 3000; // ms; how soon a queue is sent once the service is back
  const QUEUED_ANSWER_WITHIN = 5000; // ms; nobody waits on a queued scan's answer
  const LIST = "museum.scanner.list."; // localStorage, + device name: the day's list
  const QUEUE = "museum.scanner.queue."; // localStorage, + device name: scans to send
  // Answers that say the service itself was not reached (a proxy in front of it answers).
  const NOT_REACHED = new Set([502, 503, 504]);

  let device = null; // {name, send, synced, revoked} while signed in
  let list = null; // the stored answer of /admissions/list, its rows merged
  let byDigest = new Map(); // code digest -> row index in list.tickets
  let queue = []; // [{id, body, scannedAt}], oldest first
  let reachable = true; // false once a scan or a send found no service
  let sending = null; // the queue's sending under way (a promise), or null
  const timers = [];
  const state = document.getElementById("offline-state");

  // --- Stored state, per device name -----------------------------------------------------

  function stored(key, empty) {
    try {
      return JSON.parse(localStorage.getItem(key + device.name)) ?? empty;
    } catch {
      return empty;
    }
  }

  function saveList() {
    localStorage.setItem(LIST + device.name, JSON.stringify(list));
  }

  function saveQueue() {
    localStorage.setItem(QUEUE + device.name, JSON.stringify(queue));
    showState();
  }

  // What the attendant sees beside the device's name: scans waiting for the service.
  function showState() {
    if (!state) return;
    const waiting = queue.length ? `${queue.length} to send` : "";
    state.textContent = [reachable ? "" : "Offline", waiting].filter(Boolean).join(" · ");
    state.hidden = !state.textContent;
  }

  // --- The day's list ----------------------------------------------------------------------

  function column(name) {
    return list.columns.indexOf(name);
  }

  function indexList() {
    byDigest = new Map(list.tickets.map((row, index) => [row[column("codeDigest")], index]));
  }

  // Today at the museum, by its clock (scan.js): the list only decides for its own day.
  function museumToday() {
    return new Intl.DateTimeFormat("en-CA", {
      timeZone: list.timeZone, year: "numeric", month: "2-digit", day: "2-digit",
    }).format(new Date(museumNow()));
  }

  function listAddress() {
    if (!list) return "/v1.1/admissions/list";
    const today = museumToday();
    const since = list.date === today ? `&since=${encodeURIComponent(list.cursor)}` : "";
    return `/v1.1/admissions/list?date=${today}${since}`;
  }

  // A `since` answer holds the tickets changed since the cursor: they replace their rows.
  function mergeList(answer) {
    if (!answer.complete && list && list.date === answer.date) {
      const byTicket = new Map(list.tickets.map((row, index) => [row[column("ticketId")], index]));
      for (const row of answer.tickets) {
        const index = byTicket.get(row[column("ticketId")]);
        if (index === undefined) list.tickets.push(row); else list.tickets[index] = row;
      }
      Object.assign(list, { cursor: answer.cursor, now: answer.now, events: answer.events });
    } else {
      list = answer;
    }
  }

  // Asked only with an empty queue: a row this device admitted offline stays admitted
  // until the service has that admission.
  async function refreshList() {
    if (!device || queue.length) return;
    const address = listAddress();
    const headers = list && list.address === address ? { "If-None-Match": list.etag } : {};
    try {
      const [status, answer, , response] = await device.send(address, { headers });
      if (status === 401) return device.revoked();
      // The museum's zone and time for the page's clock: an unchanged list (304) has no
      // body, and its answer's Date header tells the service's time as well.
      if (status === 304) setMuseumClock({ now: response.get("Date") });
      if (status !== 200) return;
      setMuseumClock(answer);
      mergeList(answer);
      Object.assign(list, { address: listAddress(), etag: response.get("ETag") });
      indexList();
      saveList();
    } catch {
      // kept as it was: the next refresh tries again
    }
  }

  // The answer to a scan also tells the list: the next offline decision knows it. An
  // order's answer tells it of each of its tickets (so that its collect is asked once).
  function noteAnswer(answer) {
    if (!list) return;
    const tickets = Array.isArray(answer.tickets) ? answer.tickets : [answer];
    const rows = tickets.filter((ticket) => ticket.ticketId &&
      ["admitted", "already-admitted"].includes(ticket.result)).map((ticket) => [ticket,
      list.tickets.find((each) => each[column("ticketId")] === ticket.ticketId)]);
    for (const [ticket, row] of rows) {
      if (row) markAdmitted(row, ticket.admittedAt, ticket.admittedBy);
    }
    if (rows.some(([, row]) => row)) saveList();
  }

  function markAdmitted(row, at, by) {
    row[column("status")] = "admitted";
    row[column("admittedAt")] = at;
    row[column("admittedBy")] = by;
  }

  // --- Deciding from the list ------------------------------------------------------------

  async function digest(code) {
    const hash = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(code));
    return [...new Uint8Array(hash).slice(0, 8)]
      .map((byte) => byte.toString(16).padStart(2, "0")).join("");
  }

  // The codes a scan may be: a QR text's code (with its ticket id, which must match), or a
  // typed code, whole or its random part (either kind of ticket), as the service reads them.
  function candidates(body) {
    if (body.code) {
      const qr = QR_TEXT.exec(body.code);
      return qr ? [{ code: qr[2], ticketId: qr[1] }] : [];
    }
    const typed = body.confirmationCode.toLowerCase();
    if (CONFIRMATION_CODE.test(typed)) return [{ code: typed }];
    if (RANDOM_PART.test(typed)) {
      return ["general", "event"].map((kind) => ({ code: `ticket-${kind}-${typed}` }));
    }
    return [];
  }

  function listForToday() {
    return Boolean(list) && list.date === museumToday();
  }

  // The list's row of the scanned ticket ({row, code}), or null when the list cannot tell.
  async function findRow(body) {
    if (!listForToday()) return null;
    for (const { code, ticketId } of candidates(body)) {
      const index = byDigest.get(await digest(code));
      const row = list.tickets[index];
      if (row && (!ticketId || row[column("ticketId")] === ticketId)) return { row, code };
    }
    return null;
  }

  // An answer as the service would give it, from the list: [status, answer].
  function decideOffline(scan, body, found) {
    if (!found) return [null, { result: "cannot-check-offline" }];
    const { row, code } = found;
    const event = list.events[row[column("event")]];
    const ticket = {
      ticketDate: list.date, confirmationCode: code, eventName: event && event.eventName,
      ticketType: event ? "event" : "general",
    };
    const status = row[column("status")];
    if (status === "admitted") {
      return [409, { ...ticket, result: "already-admitted",
        admittedAt: row[column("admittedAt")], admittedBy: row[column("admittedBy")] }];
    }
    // void, cancelled; unpaid: its order is on hold (409, as the service answers it)
    if (status !== "valid") return [status === "unpaid" ? 409 : 410, { ...ticket, result: status }];
    const scannedAt = new Date(scan.at).toISOString();
    const collect = toCollect(row);
    markAdmitted(row, scannedAt, device.name);
    saveList();
    queue.push({ id: scan.id, body, scannedAt });
    saveQueue();
    // No ticket id yet: the strip offers Undo once the service has the admission.
    return [201, { ...ticket, result: "admitted-offline", admittedAt: scannedAt,
      admittedBy: device.name, ...(collect && { collect }) }];
  }

  // What to collect with the row's admission, as the service says it: the price of an
  // order to be paid at the desk and not paid yet, with the first of its tickets of the day
  // admitted (the list holds the others, admitted or not); null for any other ticket, and
  // for a list kept before it had these columns.
  function toCollect(row) {
    const order = row[column("orderId")];
    if (!order) return null;
    const asked = list.tickets.some((other) => other !== row &&
      other[column("orderId")] === order && other[column("status")] === "admitted");
    return asked ? null : row[column("collect")];
  }

  // --- Sending ---------------------------------------------------------------------------

  function post(id, body, timeout) {
    return device.send("/v1.1/admissions", {
      method: "POST", body: JSON.stringify(body), signal: AbortSignal.timeout(timeout),
      headers: { "Content-Type": "application/json", "Idempotency-Key": id },
    });
  }

  function pause(ms) {
    return new Promise((resolve) => setTimeout(resolve, ms));
  }

  // Sends `body`, the scan's request, under the scan's `id` until the service answers,
  // retrying a lost answer with the same id; decides from the list when the service is not
  // reached in time: within 2 s, or 10 s without a list for today (nothing else can
  // decide), at once when the service was already found unreachable. `retrying()` is
  // called before each new send. Resolves to {status, answer, retryAfter}.
  async function admit(scan, body, retrying) {
    const started = Date.now();
    const found = await findRow(body);
    const deadline = started + (listForToday() ? FIRST_ANSWER_WITHIN : RETRY_FOR);
    for (;;) {
      try {
        const left = Math.max(deadline - Date.now(), 1);
        const [status, answer, retryAfter] = await post(scan.id, body,
          Math.min(left, FIRST_ANSWER_WITHIN));
        if (!NOT_REACHED.has(status)) {
          answered(status, answer);
          return { status, answer, retryAfter };
        }
      } catch {
        // no answer: the request may or may not have reached the service
      }
      if (!reachable || Date.now() + RETRY_PAUSE >= deadline) break;
      retrying();
      await pause(RETRY_PAUSE);
    }
    setReachable(false);
    const [status, answer] = decideOffline(scan, body, found);
    return { status, answer, retryAfter: null };
  }

  function answered(status, answer) {
    setReachable(true);
    if (status === 201 || status === 409) noteAnswer(answer);
    if (queue.length) sendQueue();
  }

  function setReachable(now) {
    reachable = now;
    showState();
  }

  // Sends the queue, oldest first, until it is empty or the service is not reached; each
  // answer goes to the scan's row in the strip (`synced`). A call while a sending is under
  // way gets that one's promise: signing out waits for the scans already on their way.
  function sendQueue() {
    if (!sending && device && queue.length) {
      sending = sendEach().finally(() => { sending = null; });
    }
    return sending ?? Promise.resolve();
  }

  async function sendEach() {
    try {
      while (device && queue.length) {
        const entry = queue[0];
        const [status, answer] = await sendQueued(entry);
        if (status === 401) return device.revoked();
        if (NOT_REACHED.has(status) || status === 429 || status >= 500) break;
        queue.shift();
        saveQueue();
        answered(status, answer);
        device.synced(entry.id, status, answer);
      }
    } catch {
      setReachable(false);
    }
    if (!queue.length) refreshList();
  }

  // A queued scan goes with the time it was scanned. If its first send reached the service
  // after all (its answer lost), the service has that scan without `scannedAt` and answers
  // 422 to the same id with another body (a problem without a `result`): the original body
  // then gets the original outcome.
  async function sendQueued({ id, body, scannedAt }) {
    const sent = await post(id, { ...body, scannedAt }, QUEUED_ANSWER_WITHIN);
    const [status, answer] = sent;
    return status === 422 && !answer.result ? post(id, body, QUEUED_ANSWER_WITHIN) : sent;
  }

  // --- Signing in and out ------------------------------------------------------------------

  // Signed in as `name`: `send(path, options)` is the page's API call ([status, answer,
  // Retry-After, headers]); `synced(id, status, answer)` gets a queued scan's answer;
  // `revoked()` is called on a 401.
  function start(options) {
    stop();
    device = options;
    list = stored(LIST, null);
    if (list) {
      indexList();
      setMuseumClock({ timeZone: list.timeZone }); // its time is the refresh's to tell
    }
    queue = stored(QUEUE, []);
    reachable = true;
    showState();
    sendQueue();
    refreshList();
    timers.push(setInterval(refreshList, LIST_EVERY), setInterval(sendQueue, QUEUE_EVERY));
  }

  // Signed out by a 401 (the key revoked): the list goes; the queue stays for when this
  // device signs in again under its name (its scans are sent then, with the new key). The
  // attendant's sign-out sends or discards the queue first (signOut, discard).
  function stop() {
    timers.splice(0).forEach(clearInterval);
    sending = null; // a send under way is the ended session's: its answer is dropped
    if (device) localStorage.removeItem(LIST + device.name);
    device = null;
    list = null;
    byDigest = new Map();
    queue = [];
    if (state) state.hidden = true;
  }

  // Signing out: the queue is sent first. Resolves to the number of scans still unsent
  // (0: signed out, the list and queue dropped).
  async function signOut() {
    await sendQueue();
    if (queue.length) return queue.length;
    discard();
    return 0;
  }

  // The attendant confirmed that the unsent scans are lost.
  function discard() {
    if (device) localStorage.removeItem(QUEUE + device.name);
    stop();
  }

  if ("serviceWorker" in navigator) {
    navigator.serviceWorker.register("/scan/sw.js", { scope: "/scan" }).catch(() => {});
  }

  return { start, stop, signOut, discard, admit, pending: () => queue.length };
})();
