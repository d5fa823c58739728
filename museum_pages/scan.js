// The entrance scanner: every code typed into the field (by a barcode scanner in keyboard
// mode, by hand, or read by the camera) is sent to POST /v1.1/admissions, and the answer
// fills the screen.
//
// The page signs in by itself: it asks once for a device's name and key (or a gate user's
// name and password), or reads them from a pairing link (/scan#device=NAME&key=KEY, the key
// in the fragment so that it never reaches a server or its log), keeps them in this
// browser until "Sign out", and sends them as Basic credentials with every API call.
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

const REQUEST_TIMEOUT = 10000; // ms; a hung network reads as no connection
const BUSY_TRIES = 3; // sends of one request answered "busy" (429, Retry-After: 1)
const COUNTERS_EVERY = 30000; // ms; other gates admit too
const SAME_CODE_PAUSE = 3000; // ms a code must leave the camera's view to be sent again
const STORED = "museum.scanner.signIn"; // localStorage: {name, secret} of this device

let latestScan = 0; // only the newest scan's answer is shown
let camera = null; // {stream, lastText, lastSeen} while the camera is open

// --- Outcomes --------------------------------------------------------------------------

function twoDigits(number) {
  return String(number).padStart(2, "0");
}

function localTime(timestamp) {
  const moment = new Date(timestamp);
  return `${twoDigits(moment.getHours())}:${twoDigits(moment.getMinutes())}`;
}

function ticketKind(answer) {
  return answer.eventName ? `Event: ${answer.eventName}` : "General entry";
}

// What each `result` of POST /v1.1/admissions shows: [tone, headline, detail lines].
const OUTCOMES = {
  "admitted": (a) => ["good", "Admitted", [ticketKind(a), a.ticketDate]],
  "already-admitted": (a) => ["bad", "Already admitted",
    [`at ${localTime(a.admittedAt)} by ${a.admittedBy}`, ticketKind(a)]],
  "wrong-date": (a) => ["warn", "Wrong date", [`ticket for ${a.ticketDate}`, ticketKind(a)]],
  "cancelled": (a) => ["bad", "Cancelled", ["the event was cancelled", ticketKind(a)]],
  "forged": () => ["bad", "Forged", ["not a ticket of this museum"]],
  "unknown": () => ["bad", "Unknown", ["no ticket with this code was sold"]],
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

function show(tone, title, lines) {
  document.body.className = tone;
  headline.textContent = title;
  details.textContent = lines.join("\n");
  // Restart the pop-in, so that the same outcome twice in a row is still seen as new.
  headline.classList.remove("fresh");
  void headline.offsetWidth;
  headline.classList.add("fresh");
}

function showFailure([title, line]) {
  show("error", title, [line]);
}

function tooManyAttempts(retryAfter) {
  return `Too many attempts, retry ${retryAfter ? `in ${retryAfter} s` : "shortly"}`;
}

function showAnswer(status, answer, retryAfter) {
  const outcome = OUTCOMES[answer.result];
  if (outcome) show(...outcome(answer));
  else if (status === 401) signOut(KEY_REVOKED);
  else if (status === 429) showFailure(["Wait", tooManyAttempts(retryAfter)]);
  else showFailure(FAILURES[status] || SERVER_ERROR);
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
  signInForm.hidden = true;
  scanner.hidden = false;
  show("idle", "Ready", ["Scan a ticket"]);
  field.focus();
  refreshCounters();
}

function showSignIn(message, isProblem) {
  signedIn = null;
  closeCamera();
  document.body.className = "idle";
  scanner.hidden = true;
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

signOutButton.addEventListener("click", () => signOut("Signed out. Sign in again to scan.", false));

window.addEventListener("hashchange", pairFromLink);

// --- Admitting -------------------------------------------------------------------------

// [status, parsed body or {}, Retry-After] of one API call with `credentials`.
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
    return [response.status, answer, response.headers.get("Retry-After")];
  }
}

async function admit(text) {
  const scan = ++latestScan;
  show("busy", "Checking…", []);
  // QR codes carry a signed text; anything else is a confirmation code typed from a ticket.
  const body = text.startsWith("MUSEUM1:") ? { code: text } : { confirmationCode: text };
  try {
    const [status, answer, retryAfter] = await call("/v1.1/admissions", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    if (scan === latestScan) showAnswer(status, answer, retryAfter);
  } catch {
    if (scan === latestScan) showFailure(NO_CONNECTION);
  }
  if (signedIn) refreshCounters();
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  const text = field.value.trim();
  field.value = ""; // ready for the next ticket while this one is checked
  field.inputMode = "none";
  if (text) admit(text);
});

// --- Keeping the field focused ---------------------------------------------------------

// A scanner types wherever the focus is, so the focus always returns to the field, except
// to a button the user moved to. On a touch screen the field asks for no on-screen keyboard
// until it is touched, so the outcome stays in view.
field.addEventListener("blur", (event) => {
  if (!(event.relatedTarget instanceof HTMLButtonElement)) setTimeout(() => field.focus(), 0);
});
field.addEventListener("pointerdown", () => { field.inputMode = "text"; });
window.addEventListener("focus", () => field.focus());

// --- Today's counters ------------------------------------------------------------------

function counterRow(name, admitted, sold) {
  const row = document.createElement("tr");
  const label = document.createElement("th");
  label.scope = "row";
  label.textContent = name;
  const value = document.createElement("td");
  value.textContent = `${admitted} / ${sold}`;
  row.append(label, value);
  return row;
}

async function refreshCounters() {
  if (!signedIn) return;
  try {
    const [status, summary] = await call("/v1.1/admissions/summary");
    if (status === 401) signOut(KEY_REVOKED);
    if (status !== 200) throw new Error(`status ${status}`);
    day.textContent = `Today, ${summary.date}`;
    counts.replaceChildren(
      counterRow("General entry", summary.admitted.general, summary.sold.general),
      ...summary.events.map((e) => counterRow(e.name, e.admitted, e.sold)));
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
