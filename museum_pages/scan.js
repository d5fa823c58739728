// The entrance scanner: every code typed into the field (by a barcode scanner in keyboard
// mode, by hand, or read by the camera) is sent to POST /v1.1/admissions, and the answer
// fills the screen.
//
// The page signs in by itself, gates only: by a pairing link (/scan#pair=CODE, a one-time
// code exchanged for the device's key in a POST), or by a gate user's name and password
// (exchanged once for a device session) or a gate device's name and key in its form. It
// keeps the device's key only, in this browser until "Sign out" (which revokes it and
// erases the scans kept here), and sends it as Basic credentials with every API call.
//
// For a queue at the door: every answer also goes into a strip of this device's last scans
// (kept across reloads), so a refusal hidden by the next scan is still seen; the outcome
// returns to "Ready" by itself; a tone and a vibration tell admitted from refused without a
// look; an admission made by mistake is undone from the strip; a visitor without the ticket
// is found by the buyer's email or a part of the code, with the rest of the family.
//
// A scan is always a scan: keys typed at a scanner's speed and ended by Enter are taken as a
// scan wherever the focus is (a window closes for it), never as a field's text or a button's
// Enter; confirmations (Undo, Admit) take a tap or a click. Times are the museum's.
//
// Each scan is read here first (its keys, its keyboard layout), then sent through
// offline.js, which retries a lost answer under the scan's id and, without the service,
// decides from the day's admission list it keeps (and sets the museum's clock from).
"use strict";

const signInForm = document.getElementById("sign-in");
const signInStatus = document.getElementById("sign-in-status");
const nameField = document.getElementById("name");
const secretField = document.getElementById("secret");
const signInButton = document.getElementById("sign-in-button");
const scanner = document.getElementById("scanner");
const deviceName = document.getElementById("device");
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
const admitAllButton = document.getElementById("admit-all");
const clock = document.getElementById("clock");

const REQUEST_TIMEOUT = 10000; // ms; a hung network reads as no connection
const BUSY_TRIES = 3; // sends of one request answered "busy" (429, Retry-After: 1)
const COUNTERS_EVERY = 30000; // ms; other gates admit too
const SAME_CODE_PAUSE = 3000; // ms a code must leave the camera's view to be sent again
const STORED = "museum.scanner.signIn"; // localStorage: {name, key} of this device
const SETTINGS = "museum.scanner.settings"; // localStorage: {clearAfter, muted}
const RECENT = "museum.scanner.recent."; // localStorage, + device name: its strip of scans
const STRIP_LENGTH = 20; // scans kept in the strip
const HURRIED = 1500; // ms; a refusal shown for less than this is pointed out by the next
const UNDO_WINDOW = 10 * 60 * 1000; // ms; a gate may undo its own admission this long
const STRIP_EVERY = 30000; // ms; the strip's admitted rows are checked again (another undo)

let camera = null; // {stream, lastText, lastSeen} while the camera is open

// --- The museum's clock -----------------------------------------------------------------

// One clock for every time the page prints: the museum's zone and the service's time, from
// the day's admission list (GET /v1.1/admissions/list), which offline.js keeps and sets it
// from. Until the list has answered, the device's own zone and clock.
const museumClock = { timeZone: undefined, offset: 0 }; // offset: service's ms − device's

function setMuseumClock({ timeZone, now }) {
  if (timeZone) museumClock.timeZone = timeZone;
  if (now) museumClock.offset = Date.parse(now) - Date.now();
  showClock();
}

function museumNow() {
  return Date.now() + museumClock.offset;
}

function museumTime(timestamp, withSeconds = false) {
  return new Intl.DateTimeFormat("en-GB", {
    timeZone: museumClock.timeZone, hourCycle: "h23", hour: "2-digit", minute: "2-digit",
    second: withSeconds ? "2-digit" : undefined,
  }).format(new Date(timestamp));
}

function showClock() {
  clock.textContent = museumTime(museumNow());
}

// --- Outcomes --------------------------------------------------------------------------

function ticketKind(answer) {
  return answer.eventName ? `Event: ${answer.eventName}` : "General entry";
}

// What the door checks of a ticket's price category ("check student ID"), as a line of its
// own that stands out, naming the category (none for a category without a note: its
// tickets need no look).
function doorNote(answer) {
  if (!answer.doorNote) return null;
  return { text: `${answer.categoryLabel || answer.category}: ${answer.doorNote}`,
    className: "door-note" };
}

// The ticket's kind as an outcome's line: the one line that may end in an ellipsis (an event's
// name may be 200 characters long; the strip's details show it whole).
function kindLine(answer) {
  return { text: ticketKind(answer), className: "kind" };
}

// A timed ticket's slot, as a line of its own (none without timed entry).
function slot(answer) {
  return answer.entryTime ? `entry ${answer.entryTime}` : null;
}

function secondsAgo(timestamp) {
  return Math.max(0, Math.round((museumNow() - Date.parse(timestamp)) / 1000));
}

// An already-admitted answer: a refusal, unless this device let the visitor in moments ago
// (scanned twice: sameDevice); for an admission this device made offline, a double entry
// (the visitor is in twice: the other gate's admission came first).
function alreadyAdmitted(a) {
  if (a.doubleEntry) {
    return ["warn", `Double entry: also admitted by ${a.admittedBy} at ${museumTime(a.admittedAt)}`,
      [kindLine(a), slot(a)]];
  }
  if (a.sameDevice) {
    return ["warn", "Admitted here", [`${secondsAgo(a.admittedAt)} s ago`, kindLine(a), slot(a)]];
  }
  return ["bad", "Already admitted",
    [`at ${museumTime(a.admittedAt)} by ${a.admittedBy}`, kindLine(a), slot(a)]];
}

// A wrong date says early or past, as the service words it (older services give the date).
function wrongDate(answer) {
  return answer.when ? answer.detail : `ticket for ${answer.ticketDate}`;
}

// What each `result` of POST /v1.1/admissions shows: [tone, headline, detail lines]
// (a line null: not shown).
const OUTCOMES = {
  "admitted": (a) => ["good", "Admitted", [kindLine(a), doorNote(a), slot(a), a.ticketDate]],
  "already-admitted": alreadyAdmitted,
  "wrong-date": (a) => ["warn", "Wrong date", [wrongDate(a), kindLine(a), slot(a)]],
  // The headline says "too early": the line starts with the entry time.
  "too-early": (a) => ["warn", "Too early", [a.detail.replace(/^too early: /, ""),
    kindLine(a)]],
  "cancelled": (a) => ["bad", "Cancelled", ["the event was cancelled", kindLine(a)]],
  "void": (a) => ["bad", "Void", ["the ticket was voided (refunded)", kindLine(a)]],
  "unpaid": (a) => ["bad", "Not paid", ["its order is on hold: not paid yet", kindLine(a)]],
  "ambiguous": () => ["warn", "Type it whole", ["these digits end a ticket's and an " +
    "order's code"]],
  "forged": () => ["bad", "Forged", ["not a ticket of this museum"]],
  "unknown": () => ["bad", "Unknown", ["no ticket with this code was sold"]],
  // A misread (cut short, or not a ticket's code at all) is no fraud: read it again.
  "unreadable": () => ["warn", "Unreadable", ["scan again"]],
  // Decided from the day's list while the service could not be reached (offline.js).
  "admitted-offline": (a) => ["good", "Admitted (offline)",
    [kindLine(a), slot(a), "sent when online"]],
  "cannot-check-offline": () => ["warn", "Cannot check offline", ["not in today's list"]],
};

// Answers that are not about the ticket: [headline, detail] by HTTP status. (A 401 signs
// the device out instead, and a 429 says how long to wait.)
const FAILURES = {
  400: ["Not a ticket code", "check it and try again"],
  403: ["Not allowed", "this user may not admit tickets"],
};
const SERVER_ERROR = ["Server error", "try again"];
const NO_CONNECTION = ["Offline", "no connection — try again"];
const KEY_REVOKED = "Signed out: this device's key is no longer valid";
const GATES_ONLY = "Only a gate device or a gate user signs in here, not an admin or a " +
  "visitor: nothing was kept";
const RETRYING = "Checking… (retrying)";
const LONG_HEADLINE = 16; // characters ("Already admitted"); longer ones are set smaller

function tooManyAttempts(retryAfter) {
  return `Too many attempts, retry ${retryAfter ? `in ${retryAfter} s` : "shortly"}`;
}

// --- An order's code: all its tickets in one scan --------------------------------------

// "2 Adult, 1 Child" of `tickets`, by category in the order first met.
function countsByCategory(tickets) {
  const counts = new Map();
  for (const ticket of tickets) {
    const label = ticket.categoryLabel || ticket.category || ticketKind(ticket);
    counts.set(label, (counts.get(label) || 0) + 1);
  }
  return [...counts].map(([label, count]) => `${count} ${label}`).join(", ");
}

// Each category's door note among `tickets`, once.
function doorNotes(tickets) {
  const notes = new Map();
  for (const ticket of tickets) {
    const note = doorNote(ticket);
    if (note) notes.set(note.text, note);
  }
  return [...notes.values()];
}

// What the tickets not admitted by an order's scan were: "1 already admitted, 1 other day".
const NOT_ADMITTED = { "already-admitted": "already admitted", "wrong-date": "other day",
  "too-early": "too early", "cancelled": "cancelled", "void": "void" };
function notAdmitted(tickets) {
  const counts = new Map();
  for (const ticket of tickets) {
    if (ticket.result === "admitted") continue;
    const word = NOT_ADMITTED[ticket.result] || ticket.result;
    counts.set(word, (counts.get(word) || 0) + 1);
  }
  return [...counts].map(([word, count]) => `${count} ${word}`).join(", ") || null;
}

// An answer about tickets this device let in moments ago: a ticket's (sameDevice), or an
// order's whose every ticket already admitted was.
function admittedHere(answer) {
  if (answer.sameDevice === true) return true;
  return answer.result === "already-admitted" && Array.isArray(answer.tickets) &&
    answer.tickets.every((ticket) => ticket.result !== "already-admitted" || ticket.sameDevice);
}

// An order's answer: how many of its tickets were admitted, by category, with each
// category's door note; a refusal says why, as the service words it.
function orderVerdict(a) {
  const admitted = a.tickets.filter((ticket) => ticket.result === "admitted");
  if (a.result === "admitted") {
    return ["good", `${a.admitted} admitted`, [countsByCategory(admitted),
      ...doorNotes(admitted), notAdmitted(a.tickets)]];
  }
  if (a.result === "unpaid") {
    return ["bad", "Not paid", ["the order is on hold: not paid yet",
      countsByCategory(a.tickets)]];
  }
  if (admittedHere(a)) return ["warn", "Admitted here", [countsByCategory(a.tickets)]];
  const [tone, title] = (OUTCOMES[a.result] || OUTCOMES.unknown)(a.tickets[0] || a);
  return [tone, title, [a.detail, notAdmitted(a.tickets)]];
}

// [tone, headline, detail lines] of one answer to POST /v1.1/admissions (status null: none).
function verdict(status, answer, retryAfter) {
  const shown = outcomeVerdict(status, answer, retryAfter);
  return answer.collect && shown[0] === "good" ? collectVerdict(answer.collect, shown) : shown;
}

// An admission that lets in the first of the day's tickets of an order to be paid at the
// desk, not paid yet: amber, what to collect as the headline (the whole order's price),
// then what was admitted.
function collectVerdict({ amount, currency }, [, title, lines]) {
  return ["collect", `Collect ${amount} ${currency}`, [`${title}: not paid yet`, ...lines]];
}

// Whether an outcome's tone is an admission's: green, or amber with money to collect.
function admittedTone(tone) {
  return tone === "good" || tone === "collect";
}

function outcomeVerdict(status, answer, retryAfter) {
  if (answer.orderCode && Array.isArray(answer.tickets) && OUTCOMES[answer.result]) {
    const [tone, title, lines] = orderVerdict(answer);
    return [tone, title, lines.filter(Boolean)];
  }
  const outcome = OUTCOMES[answer.result];
  if (outcome) {
    const [tone, title, lines] = outcome(answer);
    return [tone, title, lines.filter(Boolean)];
  }
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

// One line of an outcome (a string, or {text, className}); a date in it is never broken at
// its hyphens, so a phone shows it whole on one line.
function outcomeLine(line) {
  const { text, className } = typeof line === "string" ? { text: line } : line;
  const element = paragraph("", className);
  element.append(...text.split(/(\d{4}-\d{2}-\d{2})/).map((part, index) => {
    if (index % 2 === 0) return part;
    const date = document.createElement("span");
    date.className = "date";
    date.textContent = part;
    return date;
  }));
  return element;
}

let shownScan = null; // the scan whose outcome fills the screen, or null
let clearTimer = null;

// Fills the screen with an outcome; `scan` is the scan it belongs to (null: none), and its
// `note` a line about the scanner itself. Any outcome but "Checking…" returns to Ready by
// itself after the device's delay.
function show(tone, title, lines, scan = null) {
  if (shownScan && shownScan !== scan) shownScan.hiddenAt ??= Date.now();
  shownScan = scan;
  if (scan && tone !== "busy") scan.shownAt ??= Date.now(); // its answer, not "Checking…"
  document.body.className = tone;
  headline.textContent = title;
  headline.classList.toggle("long", title.length > LONG_HEADLINE);
  details.replaceChildren(...lines.map(outcomeLine));
  if (scan?.note && tone !== "busy") details.append(paragraph(scan.note, "note"));
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

clearAfterField.addEventListener("input", () => {
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

// The page keeps one secret: a device's key, never a password and never in an address.
// A pairing link carries a one-time code in its fragment, exchanged at once for the key in a
// POST; a gate user's password typed in the form is exchanged once for a device session (a
// device of its own, and its key); a gate device's key typed in the form is kept as it is.
// Admins and visitors are refused here, and nothing of theirs is kept.
let signedIn = null; // {name, key} of this device, or null while signed out

function storedSignIn() {
  try {
    const stored = JSON.parse(localStorage.getItem(STORED));
    if (stored && stored.name && stored.key) return stored;
  } catch {
    // unreadable: signed out
  }
  // Older versions of the page kept {name, secret}, which may be a password: gone.
  localStorage.removeItem(STORED);
  return null;
}

// Basic credentials, UTF-8 encoded as the service's challenge asks (btoa takes Latin-1).
function basicAuthorization(name, secret) {
  const bytes = new TextEncoder().encode(`${name}:${secret}`);
  return "Basic " + btoa(String.fromCharCode(...bytes));
}

function deviceAuthorization() {
  return signedIn ? basicAuthorization(signedIn.name, signedIn.key) : null;
}

function showScanner(device) {
  signedIn = device;
  deviceName.textContent = `Signed in as ${device.name}`;
  deviceCount.textContent = "";
  signInForm.hidden = true;
  scanner.hidden = false;
  layoutNoted = false;
  loadRecent();
  doorOffline.start({
    name: device.name, send: sessionCall, synced, revoked: () => signOut(KEY_REVOKED),
  });
  showMute();
  showReady();
  field.focus();
  refreshCounters();
}

function keepDevice(device) {
  localStorage.setItem(STORED, JSON.stringify(device));
  showScanner(device);
}

function showSignIn(message, isProblem) {
  newSession();
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

// Forgets what this browser holds of the device: its key and its strip of scans, and the
// day's list (offline.js), which keeps the queue of unsent admissions for when this device
// signs in again. A 401 signs out so: the key is no longer valid.
function signOut(message, isProblem = true) {
  if (isProblem) signal(false);
  if (signedIn) eraseRecent();
  doorOffline.stop();
  localStorage.removeItem(STORED);
  secretField.value = "";
  showSignIn(message, isProblem);
}

// What the form says when a sign-in's check answered `status` (null: no answer at all).
function signInProblem(status, retryAfter) {
  if (status === null) return "Offline: no connection — try again";
  if (status === 401) return "Wrong name, key or password: check them and try again";
  if (status === 403) return GATES_ONLY;
  if (status === 429) return tooManyAttempts(retryAfter);
  return "Server error: try again";
}

// The form's name and key or password: a gate user's password becomes a device session
// (201: a device and its key), a gate device's key signs in as it is (204). The password
// leaves the page with this one request.
async function signIn(name, secret) {
  showSignIn("Signing in…", false);
  secretField.value = "";
  signInButton.disabled = true;
  let status = null;
  let answer = {};
  let retryAfter = null;
  try {
    [status, answer, retryAfter] = await call("/v1.1/devices/session", { method: "POST" },
      basicAuthorization(name, secret));
  } catch {
    // no answer: status stays null
  }
  signInButton.disabled = false;
  if (status === 201) return keepDevice({ name: answer.name, key: answer.key });
  if (status === 204) return keepDevice({ name, key: secret });
  showSignIn(signInProblem(status, retryAfter), true);
}

// A pairing link (/scan#pair=CODE): the fragment leaves the address at once, then the code
// is exchanged for the device's name and key. Any other fragment (an older link's key) is
// removed unused.
function pairFromLink() {
  if (!location.hash) return false;
  const code = new URLSearchParams(location.hash.slice(1)).get("pair");
  history.replaceState(null, "", location.pathname + location.search);
  if (!code) {
    showSignIn("This link is of an older kind, which pairs no more: have a new one made " +
      "(museum add-device)", true);
    return true;
  }
  pair(code);
  return true;
}

async function pair(code) {
  showSignIn("Pairing…", false);
  let status = null;
  let answer = {};
  let retryAfter = null;
  try {
    [status, answer, retryAfter] = await call("/v1.1/devices/pair", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ code }),
    }, null);
  } catch {
    // no answer: status stays null
  }
  if (status === 200) {
    nameField.value = answer.name;
    return keepDevice({ name: answer.name, key: answer.key });
  }
  const problem = status === 404 || status === 410 ? answer.detail
    : status === null ? "Offline: no connection — open the pairing link again"
      : signInProblem(status, retryAfter);
  showSignIn(problem, true);
}

signInForm.addEventListener("submit", (event) => {
  event.preventDefault();
  signIn(nameField.value.trim(), secretField.value);
});

// Signing out: the admissions made offline are sent first (if the service cannot be
// reached, signing out loses them, which the attendant confirms with a tap); then the
// device's key is revoked, and the strip, the day's list and the queue are erased.
const signOutStatus = document.getElementById("sign-out-status");
const signOutAnyway = document.getElementById("sign-out-anyway");
const SIGNED_OUT = "Signed out. Sign in again to scan.";

signOutButton.addEventListener("click", async () => {
  signOutStatus.textContent = "Sending the admissions made offline…";
  const unsent = await doorOffline.signOut();
  if (!unsent) return endSession();
  const these = unsent === 1 ? "1 admission made offline has" :
    `${unsent} admissions made offline have`;
  signOutStatus.textContent = `${these} not reached the service, which cannot be reached ` +
    "now. Signing out now loses them: the visitors are in, but the service will not know. " +
    "Wait until it answers, or sign out and lose them.";
  signOutAnyway.hidden = false;
});

signOutAnyway.addEventListener("click", () => {
  doorOffline.discard();
  endSession();
});

// The key is revoked before the browser forgets it; without an answer it is forgotten all
// the same, and the attendant is told whom to ask to revoke it. The session ends as the
// revocation is sent: no answer of a request still under way then changes what the page
// says of the sign-out.
async function endSession() {
  const { name } = signedIn;
  const authorization = deviceAuthorization();
  newSession();
  signOutStatus.textContent = "Signing out…";
  let status = null;
  try {
    [status] = await call("/v1.1/devices/session", { method: "DELETE" }, authorization);
  } catch {
    // no answer: status stays null
  }
  const revoked = [204, 401, 409].includes(status); // 409: a device of the config's [users]
  signOut(revoked ? SIGNED_OUT : `Signed out, but the service could not be told: have ` +
    `${name} revoked (museum revoke-device ${name})`, !revoked);
}

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

// The strip's scans leave the screen and the browser.
function eraseRecent() {
  localStorage.removeItem(recentKey());
  recent = [];
  latestScan = null;
  shownScan = null;
  openedScan = null;
  strip.replaceChildren();
  details.replaceChildren();
  scanFacts.replaceChildren();
  found.replaceChildren();
}

function saveRecent() {
  const kept = recent.map(({ shownAt, hiddenAt, ...scan }) => scan);
  localStorage.setItem(recentKey(), JSON.stringify(kept));
}

function canUndo(scan) {
  return admittedTone(scan.tone) && !scan.undone && Boolean(scan.ticketId) &&
    museumNow() - Date.parse(scan.admittedAt) < UNDO_WINDOW;
}

function stripRow(scan) {
  const row = document.createElement("li");
  row.className = scan.undone ? "undone" : scan.tone;
  const open = document.createElement("button");
  open.type = "button";
  open.className = "scan";
  open.append(paragraph(museumTime(scan.at), "time"),
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

// Whether the service's state of a ticket (GET /v1.1/admissions/{id}) undid the admission
// this scan made (an admin's undo, say, maybe admitted again since): the row says so.
function followed(scan, state) {
  if (!admittedTone(scan.tone) || scan.undone) return false;
  // (An admission within the same second by another user is another admission.)
  if (state.admittedAt === scan.admittedAt && state.admittedBy === scan.admittedBy) return false;
  scan.undone = true;
  renderStrip();
  saveRecent();
  return true;
}

// The strip's admissions still standing, checked against the service's state.
async function followStrip() {
  const standing = recent.filter((scan) => admittedTone(scan.tone) && !scan.undone &&
    scan.ticketId);
  for (const scan of standing) {
    try {
      const [status, state] = await sessionCall(
        `/v1.1/admissions/${encodeURIComponent(scan.ticketId)}`);
      if (status === 401) return signOut(KEY_REVOKED);
      if (status === 200 && followed(scan, state) && openedScan === scan && scanDialog.open) {
        showScanDetails(scan);
        askUndo(false);
      }
    } catch {
      return; // no connection: next time
    }
  }
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
  if (!scan || admittedTone(scan.tone) || scan.tone === "busy" || scan.sameDevice) return false;
  return !scan.shownAt || (scan.hiddenAt ?? Date.now()) - scan.shownAt < HURRIED;
}

// Records an answer in its scan's row of the strip; [tone, title, lines] of it.
function record(scan, status, answer, retryAfter) {
  const [tone, title, lines] = verdict(status, answer, retryAfter);
  Object.assign(scan, {
    tone, word: title, kind: answer.ticketDate ? ticketKind(answer) : lines[0],
    code: answer.confirmationCode || answer.orderCode || scan.text, ticketId: answer.ticketId,
    admittedAt: answer.admittedAt, admittedBy: answer.admittedBy, detail: answer.detail,
    sameDevice: admittedHere(answer),
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
  signal(admittedTone(tone) || admittedHere(answer));
  const previous = recent[recent.indexOf(scan) + 1];
  if (scan === latestScan) {
    show(tone, title, lines, scan);
    previousNote.hidden = !hurriedRefusal(previous);
  } else if (!admittedTone(tone) && shownScan === latestScan) {
    previousNote.hidden = false; // answered after a newer scan's outcome: point it out
  }
}

// --- Admitting -------------------------------------------------------------------------

// [status, parsed body or {}, Retry-After, headers] of one API call, with the device's key
// unless another `authorization` is given (null: none).
async function call(path, options = {}, authorization = deviceAuthorization()) {
  for (let attempt = 1; ; attempt++) {
    // From the origin, not relative to the page: fetch() refuses a URL that carries
    // user:password@, as an old bookmark of the page might. Credentials "omit": the browser
    // then adds none of its own and, on a 401, shows no login box of its own; the
    // Authorization header set here is sent all the same.
    const response = await fetch(location.origin + path, {
      cache: "no-store", credentials: "omit", signal: AbortSignal.timeout(REQUEST_TIMEOUT),
      ...options,
      headers: { ...options.headers, ...(authorization && { Authorization: authorization }) },
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

// --- One session's answers ---------------------------------------------------------------

// A session runs from a sign-in to its sign-out. A request sent with the device's key is
// the session's: its answer, or its failure, arriving once that session has ended is
// dropped, so that it changes nothing of the page signed out (or signed in afresh): not the
// sign-out's words (a 401 of a request still under way when the key was revoked would say
// the key is no longer valid), nor the strip, the counters or the day's list.
let session = 0;

function newSession() {
  session += 1;
}

// `call` with the device's key, for this session: when the session ends before the answer
// arrives, the promise never settles, and no code after it runs.
async function sessionCall(path, options = {}) {
  const sentIn = session;
  try {
    const answer = await call(path, options);
    if (sentIn === session) return answer;
  } catch (error) {
    if (sentIn === session) throw error;
  }
  return new Promise(() => {});
}

function postJson(path, body) {
  return sessionCall(path, {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  });
}

// Each scan has an id, sent with it: a scan whose answer was lost is sent again under the
// same id and gets its original outcome; without the service, it is decided from the day's
// list (offline.js). `note`: a line about the scanner itself, shown with the outcome.
async function admit(text, note = "") {
  const scan = { id: crypto.randomUUID(), at: museumNow(), text, tone: "busy",
    word: "Checking…", kind: "", note };
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
  if (text) decide(text);
});

// --- A scanner on another keyboard layout ----------------------------------------------

// The shapes of a ticket's texts, as the service reads them (museum_door.py): a code's
// random part, a whole confirmation code, and a QR text, MUSEUM1:<ticket id>:<code>:<tag>
// (its groups: the ticket id and the code; an order's QR names the order and its code). offline.js reads scans with them too.
const RANDOM_PART = /^[0-9a-f]{6}-[0-9a-f]{5}$/;
const CONFIRMATION_CODE = /^ticket-(general|event)-[0-9a-f]{6}-[0-9a-f]{5}$/;
const ORDER_CODE = /^order-[0-9a-f]{6}-[0-9a-f]{5}$/; // an order's QR admits all its tickets
const QR_TEXT = new RegExp("^MUSEUM1:([0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12})" +
  `:(${CONFIRMATION_CODE.source.slice(1, -1)}|${ORDER_CODE.source.slice(1, -1)})` +
  ":[0-9a-f]{20}$");

// A scanner types keys, not characters: one set to the US layout on a system set to another
// types, for each character of a QR text, what that key (with Shift for capitals and ":")
// gives there. Only the characters a QR text holds and that such a layout moves are listed.
const LAYOUTS = {
  // German QWERTZ: the keys of "-" and ";" give "ß" and "ö" (":" is Shift + ";": "Ö").
  "German (QWERTZ)": { ":": "Ö", "-": "ß" },
  // French AZERTY: digits need Shift there (unshifted: & é " ' ( - è _ ç à), A and Q are
  // swapped, M sits on ";" (so ":" gives "M") and the M key gives "," ("M": "?").
  "French (AZERTY)": {
    "1": "&", "2": "é", "3": "\"", "4": "'", "5": "(", "6": "-", "7": "è", "8": "_",
    "9": "ç", "0": "à", "-": ")", "a": "q", ":": "M", "M": "?",
  },
};

// [the QR text meant, the layout it was typed through] of a text that is a QR text typed
// through one of LAYOUTS; null for any other text.
function throughLayout(text) {
  for (const [layout, typed] of Object.entries(LAYOUTS)) {
    const meant = new Map(Object.entries(typed).map(([key, shown]) => [shown, key]));
    const original = [...text].map((character) => meant.get(character) ?? character).join("");
    if (QR_TEXT.test(original)) return [original, layout];
  }
  return null;
}

let layoutNoted = false; // said once per sign-in

// Sends a scanned or typed text, turned back into the QR text it was when a scanner typed it
// through another keyboard layout (said once: the scanner's setting is worth fixing).
function decide(text) {
  const translated = QR_TEXT.test(text) ? null : throughLayout(text);
  if (!translated) return admit(text);
  const [original, layout] = translated;
  const note = layoutNoted ? ""
    : `The scanner types with another keyboard layout (${layout}): set it to this one`;
  layoutNoted = true;
  return admit(original, note);
}

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
    `${museumTime(scan.admittedAt, true)}${scan.admittedBy ? ` by ${scan.admittedBy}` : ""}`;
  scanFacts.replaceChildren(
    ...fact("Scanned", museumTime(scan.at, true)), ...fact("Ticket", scan.kind),
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
    const [status, answer] = await sessionCall(
      `/v1.1/admissions/${encodeURIComponent(scan.ticketId)}`);
    if (status !== 200 || request !== historyAsked || !scanDialog.open) return;
    if (followed(scan, answer)) {
      showScanDetails(scan);
      askUndo(false);
    }
    const lines = answer.history.map(
      (entry) => `${entry.action} ${museumTime(entry.at, true)} by ${entry.by}`);
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
  scanTitle.focus(); // never on "Yes, undo it": a scanner's Enter would press it
}

async function undoAdmission() {
  const scan = openedScan;
  undoConfirm.disabled = true;
  undoStatus.textContent = "Undoing…";
  let status = null;
  let answer = {};
  try {
    [status, answer] = await sessionCall(
      `/v1.1/admissions/${encodeURIComponent(scan.ticketId)}`, { method: "DELETE" });
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

function confirmButton(text, onClick) {
  const button = document.createElement("button");
  button.type = "button";
  button.className = "confirm";
  button.textContent = text;
  button.addEventListener("click", onClick);
  return button;
}

function foundTicket(ticket) {
  const item = document.createElement("li");
  const admitted = ticket.admitted
    ? `admitted ${ticket.admittedAt ? museumTime(ticket.admittedAt) : ""}` +
      `${ticket.admittedBy ? ` by ${ticket.admittedBy}` : ""}`
    : "not admitted";
  const about = document.createElement("div");
  about.append(paragraph(ticketKind(ticket), "kind"),
    paragraph([ticket.ticketDate, slot(ticket), ticket.status, admitted]
      .filter(Boolean).join(" · ")),
    paragraph(ticket.orderCode ? `${ticket.confirmationCode} · ${ticket.orderCode}`
      : ticket.confirmationCode, "code"));
  item.append(about, confirmButton("Admit", () => {
    closeWindow(finder);
    admit(ticket.confirmationCode);
  }));
  return item;
}

// Admit all: every ticket found that is valid today (a family at once): an order's tickets
// by the order's code, in one scan; others one after the other. The strip shows each
// scan's outcome.
let admittable = [];

async function admitAll() {
  const codes = [...new Set(admittable.map((ticket) =>
    ticket.orderCode || ticket.confirmationCode))];
  closeWindow(finder);
  for (const code of codes) await admit(code);
}

// Sent in a POST body: an email address never goes into an address, or a server's log.
async function findTickets(query) {
  findStatus.textContent = "Looking…";
  found.replaceChildren();
  admitAllButton.hidden = true;
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
    admittable = answer.tickets.filter((ticket) => ticket.status === "valid" &&
      !ticket.admitted && ticket.ticketDate === answer.date);
    admitAllButton.textContent = `Admit all ${admittable.length}`;
    admitAllButton.hidden = admittable.length < 2;
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
  admittable = [];
  admitAllButton.hidden = true;
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
admitAllButton.addEventListener("click", admitAll);
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

// --- A scan is always a scan -------------------------------------------------------------

// A scanner types a code's characters a few ms apart and Enter; a person types far slower.
// Such a burst ended by Enter is a scan wherever the focus is: an open window closes and the
// scan is decided, the Enter presses no button and submits no form. Keys typed into a field
// other than the code field (Find's, the settings', the sign-in form's) are held back until
// they are known to be a person's, so a scan never lands in them.
const SCANNER_GAP = 50; // ms at most between a scanner's keys (people: 100 ms and more)
const SCANNER_STALL = 500; // ms a burst already known as a scanner's may pause
const SCAN_MIN_LENGTH = 8; // keys; a shorter burst is a person's (the shortest code: 12)

let burst = null; // {text, target, held, last}: the keys typed in one quick run
let burstTimer = null;

function holdsKeys(element) {
  return element instanceof HTMLInputElement && element !== field;
}

function scannerSpeed(run) {
  return run.text.length >= SCAN_MIN_LENGTH;
}

// A person's keys, held back meanwhile, are typed into their field after all.
function endBurst() {
  clearTimeout(burstTimer);
  if (burst?.held) insertText(burst.target, burst.text);
  burst = null;
}

function insertText(input, text) {
  try {
    input.setRangeText(text, input.selectionStart, input.selectionEnd, "end");
  } catch {
    input.value += text; // email and number fields have no selection to insert at
  }
  input.dispatchEvent(new Event("input", { bubbles: true }));
}

function typedKey(event) {
  const gap = burst ? event.timeStamp - burst.last : 0;
  if (burst && (burst.target !== event.target ||
      gap > (scannerSpeed(burst) ? SCANNER_STALL : SCANNER_GAP))) endBurst();
  burst ??= { text: "", target: event.target, held: holdsKeys(event.target) };
  burst.text += event.key;
  burst.last = event.timeStamp;
  if (burst.held) event.preventDefault();
  clearTimeout(burstTimer);
  burstTimer = setTimeout(endBurst, scannerSpeed(burst) ? SCANNER_STALL : SCANNER_GAP);
}

// Undo's confirmation, Admit and Admit all are given by a tap or a click only.
function isConfirmation(element) {
  return element instanceof HTMLButtonElement && element.classList.contains("confirm");
}

function pressedEnter(event) {
  const run = burst;
  const scanned = run && scannerSpeed(run) && event.timeStamp - run.last <= SCANNER_STALL;
  if (scanned && run.target !== field) {
    clearTimeout(burstTimer);
    burst = null;
    event.preventDefault();
    event.stopPropagation();
    takeScan(run.text.trim());
    return;
  }
  endBurst(); // a person's Enter: their keys first
  if (isConfirmation(event.target)) event.preventDefault();
}

function takeScan(text) {
  if (!signedIn) {
    signInStatus.textContent = "Scan after signing in: first open the pairing link, or sign in";
    signInStatus.classList.add("problem");
    return;
  }
  closeWindows();
  field.focus();
  if (text) decide(text);
}

document.addEventListener("keydown", (event) => {
  if (event.isComposing) return;
  if ((event.ctrlKey && !event.getModifierState("AltGraph")) || event.metaKey) {
    endBurst(); // a shortcut (paste, say) after the keys before it
    return;
  }
  if (event.key === "Enter") pressedEnter(event);
  else if (event.key === " " && isConfirmation(event.target)) event.preventDefault();
  else if (event.key.length === 1) typedKey(event);
  else endBurst(); // Backspace, Tab, arrows: a person's, after their held keys
}, true);
document.addEventListener("focusout", endBurst, true);

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
    const [status, summary] = await sessionCall("/v1.1/admissions/summary");
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
setInterval(() => { if (signedIn) followStrip(); }, STRIP_EVERY);
setInterval(showClock, 1000);
