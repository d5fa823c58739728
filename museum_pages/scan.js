// The entrance scanner: every code typed into the field (by a barcode scanner in keyboard
// mode, by hand, or read by the camera) is sent to POST /v1.1/admissions, and the answer
// fills the screen. The browser's Basic auth login covers these same-origin calls.
"use strict";

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
  "void": (a) => ["bad", "Void", ["the ticket was voided (refunded)", ticketKind(a)]],
  "forged": () => ["bad", "Forged", ["not a ticket of this museum"]],
  "unknown": () => ["bad", "Unknown", ["no ticket with this code was sold"]],
};

// Answers that are not about the ticket: [headline, detail] by HTTP status.
const FAILURES = {
  400: ["Not a ticket code", "check it and try again"],
  401: ["Not signed in", "reload the page and sign in"],
  403: ["Not allowed", "this user may not admit tickets"],
  429: ["Too many failed logins", "wait a few minutes, then reload"],
};
const SERVER_ERROR = ["Server error", "try again"];
const NO_CONNECTION = ["Offline", "no connection — try again"];

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

function showAnswer(status, answer) {
  const outcome = OUTCOMES[answer.result];
  if (outcome) show(...outcome(answer)); else showFailure(FAILURES[status] || SERVER_ERROR);
}

// --- Admitting -------------------------------------------------------------------------

async function call(path, options = {}) {
  for (let attempt = 1; ; attempt++) {
    // From the origin, not relative to the page: a page opened as
    // http://user:password@host/scan keeps the credentials in its address, and fetch()
    // refuses a URL that carries them.
    const response = await fetch(location.origin + path, {
      cache: "no-store", signal: AbortSignal.timeout(REQUEST_TIMEOUT), ...options,
    });
    // A short Retry-After on 429 means another login's password was being checked: this
    // request was not handled at all, so sending it again is safe.
    const wait = Number(response.headers.get("Retry-After"));
    if (response.status === 429 && wait <= 2 && attempt < BUSY_TRIES) {
      await new Promise((resolve) => setTimeout(resolve, wait * 1000));
      continue;
    }
    const answer = await response.json().catch(() => ({}));
    return [response.status, answer];
  }
}

async function admit(text) {
  const scan = ++latestScan;
  show("busy", "Checking…", []);
  // QR codes carry a signed text; anything else is a confirmation code typed from a ticket.
  const body = text.startsWith("MUSEUM1:") ? { code: text } : { confirmationCode: text };
  try {
    const [status, answer] = await call("/v1.1/admissions", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    if (scan === latestScan) showAnswer(status, answer);
  } catch {
    if (scan === latestScan) showFailure(NO_CONNECTION);
  }
  refreshCounters();
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
  try {
    const [status, summary] = await call("/v1.1/admissions/summary");
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
field.focus();
refreshCounters();
setInterval(refreshCounters, COUNTERS_EVERY);
