// The entrance scanner: every code typed into the field (by a barcode scanner in keyboard
// mode, by hand, or read by the camera) is sent to POST /v1.1/admissions, and the answer
// fills the screen.
//
// The page signs in by itself: it asks once for a device's name and key (or a gate user's
// name and password), or reads them from a pairing link (/scan#device=NAME&key=KEY, the key
// in the fragment so that it never reaches a server or its log), keeps them in this
// browser until "Sign out", and sends them as Basic credentials with every API call.
//
// For a queue at the door: every answer also goes into a strip of this device's last scans
// (kept across reloads), so a refusal hidden by the next scan is still seen; the outcome
// returns to "Ready" by itself; a tone and a vibration tell admitted from refused without a
// look; an admission made by mistake is undone from the strip; a visitor without the ticket
// is found by the buyer's email or a part of the code.
"use strict";

const signInForm = document.getElementById("sign-in");
const signInStatus = document.getElementById("sign-in-status");
const nameField = document.getElementById("name");
const secretField = document.getElementById("secret");
const signInButton = document.getElementById("sign-in-button");
const scanner = document.getElementById("scanner");
const device = document.getElementById("device");
const signOutButton = document.getElementById("sign-out");
const form = document.getElementById("entry");
const field = document.getElementById("code");
const cameraButton = document.getElementById("camera");
const preview = document.getElementById("preview");
const headline = document.getElementById("headline");
const details = document.getElementById("details");
const counters = document.getElementById("counters");
const day = document.getElementById("day");
const counts = document.getElementById("counts");
const deviceCount = document.getElementById("device-count");
const previousNote = document.getElementById("previous");
const strip = document.getElementById("strip");
const muteButton = document.getElementById("mute");
const clearAfterField = document.getElementById("clear-after");
const options = document.getElementById("options");
const scanDialog = document.getElementById("scan-details");
const scanTitle = document.getElementById("scan-title");
const scanFacts = document.getElementById("scan-facts");
const undoStatus = document.getElementById("undo-status");
const undoButton = document.getElementById("undo");
const undoConfirm = document.getElementById("undo-confirm");
const finder = document.getElementById("finder");
const findForm = document.getElementById("find-form");
const findEmail = document.getElementById("find-email");
const findCode = document.getElementById("find-code");
const findStatus = document.getElementById("find-status");
const found = document.getElementById("found");

const REQUEST_TIMEOUT = 10000; // ms; a hung network reads as no connection
const BUSY_TRIES = 3; // sends of one request answered "busy" (429, Retry-After: 1)
const COUNTERS_EVERY = 30000; // ms; other gates admit too
const SAME_CODE_PAUSE = 3000; // ms a code must leave the camera's view to be sent again
const STORED = "museum.scanner.signIn"; // localStorage: {name, secret} of this device
const SETTINGS = "museum.scanner.settings"; // localStorage: {clearAfter, muted}
const RECENT = "museum.scanner.recent."; // localStorage, + device name: its strip of scans
const STRIP_LENGTH = 20; // scans kept in the strip
const HURRIED = 1500; // ms; a refusal shown for less than this is pointed out by the next
const UNDO_WINDOW = 10 * 60 * 1000; // ms; a gate may undo its own admission this long

let camera = null; // {stream, lastText, lastSeen} while the camera is open

// --- Outcomes --------------------------------------------------------------------------

function twoDigits(number) {
  return String(number).padStart(2, "0");
}

function localTime(timestamp, withSeconds = false) {
  const moment = new Date(timestamp);
  const minutes = `${twoDigits(moment.getHours())}:${twoDigits(moment.getMinutes())}`;
  return withSeconds ? `${minutes}:${twoDigits(moment.getSeconds())}` : minutes;
}

function ticketKind(answer) {
  return answer.eventName ? `Event: ${answer.eventName}` : "General entry";
}

// A wrong date says early or past, as the service words it (older services give the date).
function wrongDate(answer) {
  return answer.when ? answer.detail : `ticket for ${answer.ticketDate}`;
}

// What each `result` of POST /v1.1/admissions shows: [tone, headline, detail lines].
const OUTCOMES = {
  "admitted": (a) => ["good", "Admitted", [ticketKind(a), a.ticketDate]],
  "already-admitted": (a) => ["bad", "Already admitted",
    [`at ${localTime(a.admittedAt)} by ${a.admittedBy}`, ticketKind(a)]],
  "wrong-date": (a) => ["warn", "Wrong date", [wrongDate(a), ticketKind(a)]],
  // The headline says "too early": the line starts with the entry time, which a phone's
  // one line still shows.
  "too-early": (a) => ["warn", "Too early", [a.detail.replace(/^too early: /, ""),
    ticketKind(a)]],
  "cancelled": (a) => ["bad", "Cancelled", ["the event was cancelled", ticketKind(a)]],
  "void": (a) => ["bad", "Void", ["the ticket was voided (refunded)", ticketKind(a)]],
  "forged": () => ["bad", "Forged", ["not a ticket of this museum"]],
  "unreadable": () => ["warn", "Unreadable", ["scan again"]],
  "unknown": () => ["bad", "Unknown", ["no ticket with this code was sold"]],
  // This device admitted the ticket a moment ago (its answer lost, or scanned twice).
  "admitted-here": (a) => ["warn", `Admitted here ${secondsAgo(a.admittedAt)} s ago`,
    [ticketKind(a)]],
  // Decided from the day's list while the service could not be reached (offline.js).
  "admitted-offline": (a) => ["good", "Admitted (offline)", [ticketKind(a), "sent when online"]],
  "cannot-check-offline": () => ["warn", "Cannot check offline", ["not in today's list"]],
  // An offline admission the service found admitted elsewhere: the visitor is in twice.
  "double-entry": (a) => ["warn",
    `Double entry: also admitted by ${a.admittedBy} at ${localTime(a.admittedAt)}`,
    [ticketKind(a)]],
};

function secondsAgo(timestamp) {
  return Math.max(0, Math.round((Date.now() - Date.parse(timestamp)) / 1000));
}

// The OUTCOMES entry of an answer: its result, or what an already-admitted answer adds.
function outcomeName(answer) {
  if (answer.doubleEntry) return "double-entry";
  if (answer.sameDevice) return "admitted-here";
  return answer.result;
}

// Answers that are not about the ticket: [headline, detail] by HTTP status. (A 401 signs
// the device out instead, and a 429 says how long to wait.)
const FAILURES = {
  400: ["Not a ticket code", "check it and try again"],
  403: ["Not allowed", "this user may not admit tickets"],
};
const SERVER_ERROR = ["Server error", "try again"];
const NO_CONNECTION = ["Offline", "no connection — try again"];
const KEY_REVOKED = "Signed out: this device's key is no longer valid";
const RETRYING = "Checking… (retrying)";
const LONG_HEADLINE = 16; // characters ("Already admitted"); longer ones are set smaller

function tooManyAttempts(retryAfter) {
  return `Too many attempts, retry ${retryAfter ? `in ${retryAfter} s` : "shortly"}`;
}

// [tone, headline, detail lines] of one answer to POST /v1.1/admissions (status null: none).
function verdict(status, answer, retryAfter) {
  const outcome = OUTCOMES[outcomeName(answer)];
  if (outcome) return outcome(answer);
  if (status === 429) return ["error", "Wait", [tooManyAttempts(retryAfter)]];
  const [title, line] = status === null ? NO_CONNECTION : FAILURES[status] || SERVER_ERROR;
  return ["error", title, [line]];
}

function paragraph(text, className) {
  const element = document.createElement("p");
  element.textContent = text;
  if (className) element.className = className;
  return element;
}

let shownScan = null; // the scan whose outcome fills the screen, or null
let clearTimer = null;

// Fills the screen with an outcome; `scan` is the scan it belongs to (null: none). Any
// outcome but "Checking…" returns to Ready by itself after the device's delay.
function show(tone, title, lines, scan = null) {
  if (shownScan && shownScan !== scan) shownScan.hiddenAt ??= Date.now();
  shownScan = scan;
  if (scan && tone !== "busy") scan.shownAt ??= Date.now(); // its answer, not "Checking…"
  document.body.className = tone;
  headline.textContent = title;
  headline.classList.toggle("long", title.length > LONG_HEADLINE);
  details.replaceChildren(...lines.map((line) => paragraph(line)));
  previousNote.hidden = true;
  // Restart the pop-in, so that the same outcome twice in a row is still seen as new.
  headline.classList.remove("fresh");
  void headline.offsetWidth;
  headline.classList.add("fresh");
  clearTimeout(clearTimer);
  if (tone !== "idle" && tone !== "busy") {
    clearTimer = setTimeout(showReady, settings.clearAfter * 1000);
  }
}

function showReady() {
  show("idle", "Ready", ["Scan a ticket"]);
}

function showFailure([title, line]) {
  show("error", title, [line]);
}

// --- This device's settings: how long an outcome stays, and the mute switch --------------

const DEFAULT_SETTINGS = { clearAfter: 4, muted: false };
const settings = { ...DEFAULT_SETTINGS, ...storedSettings() };

function storedSettings() {
  try {
    return JSON.parse(localStorage.getItem(SETTINGS)) || {};
  } catch {
    return {};
  }
}

function saveSettings() {
  localStorage.setItem(SETTINGS, JSON.stringify(settings));
}

function showMute() {
  muteButton.textContent = settings.muted ? "Muted" : "Sound on";
  muteButton.setAttribute("aria-pressed", String(settings.muted));
}

muteButton.addEventListener("click", () => {
  settings.muted = !settings.muted;
  saveSettings();
  showMute();
  field.focus();
});

clearAfterField.addEventListener("change", () => {
  const seconds = Number(clearAfterField.value);
  if (clearAfterField.checkValidity() && seconds > 0) {
    settings.clearAfter = seconds;
    saveSettings();
  }
});

// --- Sound and vibration ---------------------------------------------------------------

let audio = null; // made on first use: browsers start sound only after a key or a touch

// Tones made in the browser, no sound file: [[frequency Hz, start s, length s], ...].
function play(waveform, tones) {
  if (settings.muted || !("AudioContext" in window)) return;
  audio ??= new AudioContext();
  audio.resume().catch(() => {});
  const now = audio.currentTime;
  for (const [frequency, start, length] of tones) {
    const oscillator = audio.createOscillator();
    const volume = audio.createGain();
    oscillator.type = waveform;
    oscillator.frequency.value = frequency;
    // A quick fade out: a tone cut off abruptly clicks.
    volume.gain.setValueAtTime(0.3, now + start);
    volume.gain.exponentialRampToValueAtTime(0.001, now + start + length);
    oscillator.connect(volume).connect(audio.destination);
    oscillator.start(now + start);
    oscillator.stop(now + start + length);
  }
}

// Admitted: one short high tone and one buzz; anything else: a low double tone, two buzzes.
function signal(admitted) {
  if (admitted) play("sine", [[1320, 0, 0.15]]);
  else play("square", [[220, 0, 0.18], [220, 0.26, 0.18]]);
  if (navigator.vibrate) navigator.vibrate(admitted ? 80 : [200, 100, 200]);
}


// --- Signing in ------------------------------------------------------------------------

let signedIn = null; // {name, secret} of this device, or null while signed out

function storedSignIn() {
  try {
    const stored = JSON.parse(localStorage.getItem(STORED));
    return stored && stored.name && stored.secret ? stored : null;
  } catch {
    return null;
  }
}

// Basic credentials, UTF-8 encoded as the service's challenge asks (btoa takes Latin-1).
function basicAuthorization({ name, secret }) {
  const bytes = new TextEncoder().encode(`${name}:${secret}`);
  return "Basic " + btoa(String.fromCharCode(...bytes));
}

function showScanner(credentials) {
  signedIn = credentials;
  device.textContent = `Signed in as ${credentials.name}`;
  deviceCount.textContent = "";
  signInForm.hidden = true;
  scanner.hidden = false;
  loadRecent();
  doorOffline.start({
    name: credentials.name, send: call, synced, revoked: () => signOut(KEY_REVOKED),
  });
  showMute();
  showReady();
  field.focus();
  refreshCounters();
}

function showSignIn(message, isProblem) {
  signedIn = null;
  closeCamera();
  closeWindows();
  document.body.className = "idle";
  scanner.hidden = true;
  signInForm.hidden = false;
  signInStatus.textContent = message;
  signInStatus.classList.toggle("problem", isProblem);
  (nameField.value ? secretField : nameField).focus();
}

function signOut(message, isProblem = true) {
  doorOffline.stop();
  localStorage.removeItem(STORED);
  secretField.value = "";
  showSignIn(message, isProblem);
}

// What the form says when a sign-in's check answered `status` (null: no answer at all).
function signInProblem(status, retryAfter) {
  if (status === null) return "Offline: no connection — try again";
  if (status === 401) return "Wrong name, key or password: check them and try again";
  if (status === 403) return "This user may not admit tickets: sign in as a gate";
  if (status === 429) return tooManyAttempts(retryAfter);
  return "Server error: try again";
}

// Checks the credentials with a read only gates may make, and keeps them if they work.
async function signIn(credentials) {
  showSignIn("Signing in…", false);
  signInButton.disabled = true;
  let status = null;
  let retryAfter = null;
  try {
    [status, , retryAfter] = await call("/v1.1/admissions/summary", {}, credentials);
  } catch {
    // no answer: status stays null
  }
  signInButton.disabled = false;
  if (status === 200) {
    localStorage.setItem(STORED, JSON.stringify(credentials));
    showScanner(credentials);
    return;
  }
  if (status === 401 || status === 403) secretField.value = ""; // to type another
  showSignIn(signInProblem(status, retryAfter), true);
}

// A pairing link's fragment fills the form and signs in; it is then removed from the
// address, so that the key is not left in the history or shown on screen.
function pairFromLink() {
  const link = new URLSearchParams(location.hash.slice(1));
  if (!link.has("device") || !link.has("key")) return false;
  history.replaceState(null, "", location.pathname + location.search);
  nameField.value = link.get("device");
  secretField.value = link.get("key");
  signIn({ name: nameField.value, secret: secretField.value });
  return true;
}

signInForm.addEventListener("submit", (event) => {
  event.preventDefault();
  signIn({ name: nameField.value.trim(), secret: secretField.value });
});

// Admissions made offline are sent before signing out; if the service cannot be reached,
// signing out loses them, which the attendant must confirm with a tap.
const signOutStatus = document.getElementById("sign-out-status");
const signOutAnyway = document.getElementById("sign-out-anyway");
const SIGNED_OUT = "Signed out. Sign in again to scan.";

signOutButton.addEventListener("click", async () => {
  signOutStatus.textContent = "Sending the admissions made offline…";
  const unsent = await doorOffline.signOut();
  if (!unsent) return signOut(SIGNED_OUT, false);
  signOutStatus.textContent = `${unsent} admission${unsent === 1 ? "" : "s"} made offline ` +
    "could not be sent: the service cannot be reached. Sign out when it answers, or lose them.";
  signOutAnyway.hidden = false;
});

signOutAnyway.addEventListener("click", () => {
  doorOffline.discard();
  signOut(SIGNED_OUT, false);
});

window.addEventListener("hashchange", pairFromLink);

// --- Recent scans: the strip under the outcome ------------------------------------------

// Each scan: {at, text, tone, word, kind, code, ticketId, admittedAt, admittedBy, detail,
// undone}, newest first; `shownAt` and `hiddenAt` (ms) are kept in the page only.
let recent = [];
let latestScan = null; // only the newest scan's answer is shown

function recentKey() {
  return RECENT + signedIn.name;
}

function loadRecent() {
  try {
    recent = JSON.parse(localStorage.getItem(recentKey())) || [];
  } catch {
    recent = [];
  }
  // A scan still being checked when the page was closed has no answer to show.
  for (const scan of recent) {
    if (scan.tone === "busy") Object.assign(scan, { tone: "error", word: "No answer" });
  }
  renderStrip();
}

function saveRecent() {
  const kept = recent.map(({ shownAt, hiddenAt, ...scan }) => scan);
  localStorage.setItem(recentKey(), JSON.stringify(kept));
}

function canUndo(scan) {
  return scan.tone === "good" && !scan.undone && Boolean(scan.ticketId) &&
    Date.now() - Date.parse(scan.admittedAt) < UNDO_WINDOW;
}

function stripRow(scan) {
  const row = document.createElement("li");
  row.className = scan.undone ? "undone" : scan.tone;
  const open = document.createElement("button");
  open.type = "button";
  open.className = "scan";
  open.append(paragraph(localTime(scan.at), "time"),
    paragraph(scan.undone ? `${scan.word} · undone` : scan.word, "word"),
    paragraph(scan.kind, "kind"), paragraph(scan.code ? `…${scan.code.slice(-5)}` : "", "code"));
  open.addEventListener("click", () => openScan(scan, false));
  row.append(open);
  if (canUndo(scan)) {
    const undo = document.createElement("button");
    undo.type = "button";
    undo.className = "undo";
    undo.textContent = "Undo";
    undo.addEventListener("click", () => openScan(scan, true));
    row.append(undo);
  }
  return row;
}

function renderStrip() {
  strip.replaceChildren(...recent.map(stripRow));
  // A row's button that had the focus is gone: the scanner must not type into nothing.
  if (document.activeElement === document.body && !windowOpen()) field.focus();
}

function remember(scan) {
  recent.unshift(scan);
  recent.length = Math.min(recent.length, STRIP_LENGTH);
  renderStrip();
  saveRecent();
}

// A refusal that left the screen within HURRIED of being shown (or was never shown, the
// next scan being quicker) is pointed out by the outcome that replaced it.
function hurriedRefusal(scan) {
  if (!scan || scan.tone === "good" || scan.tone === "busy") return false;
  return !scan.shownAt || (scan.hiddenAt ?? Date.now()) - scan.shownAt < HURRIED;
}

// Records an answer in its scan's row of the strip; [tone, title, lines] of it.
function record(scan, status, answer, retryAfter) {
  const [tone, title, lines] = verdict(status, answer, retryAfter);
  Object.assign(scan, {
    tone, word: title, kind: answer.ticketDate ? ticketKind(answer) : lines[0],
    code: answer.confirmationCode || scan.text, ticketId: answer.ticketId,
    admittedAt: answer.admittedAt, admittedBy: answer.admittedBy, detail: answer.detail,
  });
  renderStrip();
  saveRecent();
  return [tone, title, lines];
}

// A scan admitted offline, answered once the service was back: its row says what the
// service made of it (admitted, a double entry...); the screen has moved on.
function synced(id, status, answer) {
  const scan = recent.find((each) => each.id === id);
  if (scan) record(scan, status, answer, null);
  refreshCounters();
}

// Records an answer in its scan, and shows it if no newer scan was made meanwhile.
function answered(scan, status, answer, retryAfter) {
  const [tone, title, lines] = record(scan, status, answer, retryAfter);
  signal(tone === "good");
  const previous = recent[recent.indexOf(scan) + 1];
  if (scan === latestScan) {
    show(tone, title, lines, scan);
    previousNote.hidden = !hurriedRefusal(previous);
  } else if (tone !== "good" && shownScan === latestScan) {
    previousNote.hidden = false; // answered after a newer scan's outcome: point it out
  }
}

// --- Admitting -------------------------------------------------------------------------

// [status, parsed body or {}, Retry-After, headers] of one API call with `credentials`.
async function call(path, options = {}, credentials = signedIn) {
  for (let attempt = 1; ; attempt++) {
    // From the origin, not relative to the page: fetch() refuses a URL that carries
    // user:password@, as an old bookmark of the page might. Credentials "omit": the browser
    // then adds none of its own and, on a 401, shows no login box of its own; the
    // Authorization header set here is sent all the same.
    const response = await fetch(location.origin + path, {
      cache: "no-store", credentials: "omit", signal: AbortSignal.timeout(REQUEST_TIMEOUT),
      ...options,
      headers: { ...options.headers, Authorization: basicAuthorization(credentials) },
    });
    // A short Retry-After on 429 means another login's password was being checked: this
    // request was not handled at all, so sending it again is safe.
    const wait = Number(response.headers.get("Retry-After"));
    if (response.status === 429 && wait <= 2 && attempt < BUSY_TRIES) {
      await new Promise((resolve) => setTimeout(resolve, wait * 1000));
      continue;
    }
    const answer = await response.json().catch(() => ({}));
    return [response.status, answer, response.headers.get("Retry-After"), response.headers];
  }
}

function postJson(path, body) {
  return call(path, {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  });
}

// Each scan has an id, sent with it: a scan whose answer was lost is sent again under the
// same id and gets its original outcome; without the service, it is decided from the day's
// list (offline.js).
async function admit(text) {
  const scan = { id: crypto.randomUUID(), at: Date.now(), text, tone: "busy",
    word: "Checking…", kind: "" };
  latestScan = scan;
  remember(scan);
  show("busy", "Checking…", [], scan);
  // QR codes carry a signed text; anything else is a confirmation code typed from a ticket.
  const body = text.startsWith("MUSEUM1:") ? { code: text } : { confirmationCode: text };
  const retrying = () => {
    Object.assign(scan, { word: RETRYING });
    renderStrip();
    if (scan === latestScan) show("busy", RETRYING, [], scan);
  };
  const { status, answer, retryAfter } = await doorOffline.admit(scan, body, retrying);
  if (status === 401) signOut(KEY_REVOKED);
  else answered(scan, status, answer, retryAfter);
  if (signedIn) refreshCounters();
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  const text = field.value.trim();
  field.value = ""; // ready for the next ticket while this one is checked
  field.inputMode = "none";
  if (text) admit(text);
});

// --- A scan's details, and undoing an admission made by mistake -------------------------

let openedScan = null; // the scan whose details are shown

function fact(term, value) {
  if (!value) return [];
  const name = document.createElement("dt");
  name.textContent = term;
  const text = document.createElement("dd");
  text.textContent = value;
  return [name, text];
}

function showScanDetails(scan) {
  scanTitle.textContent = scan.undone ? `${scan.word} · undone` : scan.word;
  scanDialog.className = scan.undone ? "undone" : scan.tone;
  const admitted = scan.admittedAt &&
    `${localTime(scan.admittedAt, true)}${scan.admittedBy ? ` by ${scan.admittedBy}` : ""}`;
  scanFacts.replaceChildren(
    ...fact("Scanned", localTime(scan.at, true)), ...fact("Ticket", scan.kind),
    ...fact("Ticket id", scan.ticketId), ...fact("Code", scan.code || scan.text),
    ...fact("Admitted", admitted), ...fact("The service said", scan.detail));
}

// The ticket's admission history, as the service keeps it: each admission and undo, when
// and by whom. Only a help: without it, the rest of the details stand.
let historyAsked = 0; // only the latest request's history is shown

async function showHistory(scan) {
  if (!scan.ticketId) return;
  const request = ++historyAsked;
  try {
    const [status, answer] = await call(
      `/v1.1/admissions/${encodeURIComponent(scan.ticketId)}`);
    if (status !== 200 || request !== historyAsked || !scanDialog.open) return;
    const lines = answer.history.map(
      (entry) => `${entry.action} ${localTime(entry.at, true)} by ${entry.by}`);
    scanFacts.append(...fact("History", lines.join("\n")));
  } catch {
    // no history shown
  }
}

// Opens a scan of the strip; `confirming`: at the undo's confirmation step.
function openScan(scan, confirming) {
  openedScan = scan;
  showScanDetails(scan);
  askUndo(confirming);
  scanDialog.showModal();
  showHistory(scan);
}

function askUndo(confirming) {
  const possible = canUndo(openedScan);
  undoStatus.textContent = confirming && possible
    ? "Undo this admission? The ticket will then scan as valid again." : "";
  undoButton.hidden = !possible || confirming;
  undoConfirm.hidden = !possible || !confirming;
}

async function undoAdmission() {
  const scan = openedScan;
  undoConfirm.disabled = true;
  undoStatus.textContent = "Undoing…";
  let status = null;
  let answer = {};
  try {
    [status, answer] = await call(`/v1.1/admissions/${encodeURIComponent(scan.ticketId)}`,
      { method: "DELETE" });
  } catch {
    // no answer: status stays null
  }
  undoConfirm.disabled = false;
  if (status === 401) return signOut(KEY_REVOKED);
  if (status === 204) {
    scan.undone = true;
    renderStrip();
    saveRecent();
    refreshCounters();
    showScanDetails(scan);
    showHistory(scan);
  }
  undoButton.hidden = true;
  undoConfirm.hidden = true;
  undoStatus.textContent = status === 204 ? "Undone: the ticket will scan as valid again."
    : status === null ? "Offline: no connection — try again"
      : answer.detail || "Server error: try again";
}

undoButton.addEventListener("click", () => askUndo(true));
undoConfirm.addEventListener("click", undoAdmission);
document.getElementById("scan-close").addEventListener("click", () => closeWindow(scanDialog));

// --- Finding a ticket by the buyer's email or a part of its code ------------------------

function foundTicket(ticket) {
  const item = document.createElement("li");
  const admitted = ticket.admitted
    ? `admitted ${ticket.admittedAt ? localTime(ticket.admittedAt) : ""}` +
      `${ticket.admittedBy ? ` by ${ticket.admittedBy}` : ""}`
    : "not admitted";
  const about = document.createElement("div");
  about.append(paragraph(ticket.eventName ? `Event: ${ticket.eventName}` : "General entry",
    "kind"),
  paragraph(`${ticket.ticketDate} · ${ticket.status} · ${admitted}`),
  paragraph(ticket.confirmationCode, "code"));
  const admitButton = document.createElement("button");
  admitButton.type = "button";
  admitButton.textContent = "Admit";
  admitButton.addEventListener("click", () => {
    closeWindow(finder);
    admit(ticket.confirmationCode);
  });
  item.append(about, admitButton);
  return item;
}

// Sent in a POST body: an email address never goes into an address, or a server's log.
async function findTickets(query) {
  findStatus.textContent = "Looking…";
  found.replaceChildren();
  let status = null;
  let answer = {};
  let retryAfter = null;
  try {
    [status, answer, retryAfter] = await postJson("/v1.1/admissions/lookup", query);
  } catch {
    // no answer: status stays null
  }
  if (status === 401) return signOut(KEY_REVOKED);
  if (status === 200) {
    const count = answer.tickets.length;
    findStatus.textContent = count
      ? `${count} ticket${count === 1 ? "" : "s"} for ${answer.date}`
      : `No ticket found for ${answer.date}`;
    found.replaceChildren(...answer.tickets.map(foundTicket));
  } else if (status === 429) {
    findStatus.textContent = tooManyAttempts(retryAfter);
  } else {
    findStatus.textContent = status === null ? "Offline: no connection — try again"
      : answer.detail || "Server error: try again";
  }
}

function openFinder() {
  findEmail.value = "";
  findCode.value = "";
  findStatus.textContent = "";
  found.replaceChildren();
  finder.showModal();
}

findForm.addEventListener("submit", (event) => {
  event.preventDefault();
  const email = findEmail.value.trim();
  const code = findCode.value.trim();
  if (Boolean(email) === Boolean(code)) {
    findStatus.textContent = "Type the buyer's email or the ticket's code (one of them)";
  } else {
    findTickets(email ? { email } : { code });
  }
});
document.getElementById("find").addEventListener("click", () => openFinder());
document.getElementById("find-close").addEventListener("click", () => closeWindow(finder));

// --- Settings: the delay back to Ready, and signing out ---------------------------------

document.getElementById("settings").addEventListener("click", () => {
  clearAfterField.value = settings.clearAfter;
  signOutStatus.textContent = "";
  signOutAnyway.hidden = true;
  options.showModal();
});
document.getElementById("options-close").addEventListener("click", () => closeWindow(options));

// A closed window gives the focus back to the code field, ready for the next ticket: at
// once when closed by its button (the browser would give it back to the button that opened
// the window), and when closed by Escape.
function closeWindow(dialog) {
  dialog.close();
  field.focus();
}

for (const dialog of [scanDialog, finder, options]) {
  dialog.addEventListener("close", () => field.focus());
}

function closeWindows() {
  for (const dialog of [scanDialog, finder, options]) if (dialog.open) dialog.close();
}


// --- Keeping the field focused ---------------------------------------------------------

// A scanner types wherever the focus is, so the focus always returns to the field, except
// to a button the user moved to or to an open window (find, details, settings). On a touch
// screen the field asks for no on-screen keyboard until it is touched, so the outcome stays
// in view.
function windowOpen() {
  return Boolean(document.querySelector("dialog[open]"));
}

field.addEventListener("blur", (event) => {
  if (!(event.relatedTarget instanceof HTMLButtonElement) && !windowOpen()) {
    setTimeout(() => field.focus(), 0);
  }
});
field.addEventListener("pointerdown", () => { field.inputMode = "text"; });
window.addEventListener("focus", () => { if (!windowOpen()) field.focus(); });

// --- Today's counters ------------------------------------------------------------------

function counterRow(name, admitted, sold) {
  return labelledRow(name, `${admitted} / ${sold}`);
}

function labelledRow(name, text) {
  const row = document.createElement("tr");
  const label = document.createElement("th");
  label.scope = "row";
  label.textContent = name;
  const value = document.createElement("td");
  value.textContent = text;
  row.append(label, value);
  return row;
}

// Tickets admitted twice today by gates that were offline at the time (none: no row).
function doubleEntryRows(summary) {
  if (!summary.doubleEntries) return [];
  const row = labelledRow("Double entries", String(summary.doubleEntries));
  row.className = "double-entries";
  return [row];
}

// This entrance's own admissions today, from the summary's per-device counts.
function showDeviceCount(devices) {
  if (!devices) return;
  const mine = devices.find((each) => each.name === signedIn.name);
  deviceCount.textContent = `· ${mine ? mine.admitted : 0} admitted here today`;
}

async function refreshCounters() {
  if (!signedIn) return;
  try {
    const [status, summary] = await call("/v1.1/admissions/summary");
    if (status === 401) signOut(KEY_REVOKED);
    if (status !== 200) throw new Error(`status ${status}`);
    day.textContent = `Today, ${summary.date}`;
    showDeviceCount(summary.devices);
    counts.replaceChildren(
      counterRow("General entry", summary.admitted.general, summary.sold.general),
      ...summary.events.map((e) => counterRow(e.name, e.admitted, e.sold)),
      ...doubleEntryRows(summary));
    counters.classList.remove("stale");
  } catch {
    counters.classList.add("stale"); // dimmed: these numbers may be old
  }
}

// --- The camera, where the browser can read QR codes itself ----------------------------

async function cameraCanScan() {
  if (!("BarcodeDetector" in window) || !navigator.mediaDevices) return false;
  const formats = await BarcodeDetector.getSupportedFormats().catch(() => []);
  return formats.includes("qr_code");
}

async function openCamera() {
  let stream;
  try {
    stream = await navigator.mediaDevices.getUserMedia({ video: { facingMode: "environment" } });
  } catch {
    showFailure(["No camera", "allow the camera, or type the code"]);
    return;
  }
  camera = { stream, lastText: "", lastSeen: 0 };
  preview.srcObject = stream;
  preview.hidden = false;
  cameraButton.textContent = "Stop";
  await preview.play();
  watch(new BarcodeDetector({ formats: ["qr_code"] }), camera);
}

function closeCamera() {
  if (!camera) return;
  camera.stream.getTracks().forEach((track) => track.stop());
  camera = null;
  preview.srcObject = null;
  preview.hidden = true;
  cameraButton.textContent = "Scan";
}

// Looks for a QR code a few times a second while this camera session is open. A code held
// in view is sent once; it is sent again only after it left the view for a moment.
async function watch(detector, session) {
  while (camera === session) {
    const codes = await detector.detect(preview).catch(() => []);
    const now = Date.now();
    const text = codes.length ? codes[0].rawValue.trim() : "";
    if (text) {
      if (text !== session.lastText || now - session.lastSeen > SAME_CODE_PAUSE) admit(text);
      session.lastText = text;
      session.lastSeen = now;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

cameraButton.addEventListener("click", async () => {
  if (camera) closeCamera(); else await openCamera();
  field.focus();
});
document.addEventListener("visibilitychange", () => { if (document.hidden) closeCamera(); });

// --- Start -----------------------------------------------------------------------------

cameraCanScan().then((can) => { cameraButton.hidden = !can; });
if (!pairFromLink()) {
  const stored = storedSignIn();
  if (stored) showScanner(stored); else showSignIn(signInStatus.textContent, false);
}
setInterval(refreshCounters, COUNTERS_EVERY);
setInterval(() => { if (signedIn) renderStrip(); }, COUNTERS_EVERY); // undo offers expire
