// The ticket page's service worker, one per page (its scope is the page's own address):
// keeps the page (its QR codes are drawn inside it), its stylesheet and its script, so that
// a phone without the network still shows the ticket once it was opened.
//
// Network first: a page that reaches the service always gets the ticket as it is now. The
// kept copy is used only when the service does not answer within 3 s, or answers with a
// proxy's error; a 404 or 410 (the ticket was voided) drops it and is shown as it is.
"use strict";

const KEPT = "museum-ticket-pages";
const PAGE = new URL(self.registration.scope).pathname;
const FILES = [PAGE, "/t/ticket.css", "/t/ticket.js"];
const NETWORK_WITHIN = 3000; // ms

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(KEPT).then((kept) => kept.addAll(FILES)));
  self.skipWaiting();
});

self.addEventListener("activate", (event) => {
  event.waitUntil(self.clients.claim());
});

self.addEventListener("fetch", (event) => {
  const url = new URL(event.request.url);
  if (event.request.method !== "GET" || url.origin !== location.origin ||
      !FILES.includes(url.pathname)) return;
  event.respondWith(networkFirst(event.request, url.pathname));
});

async function networkFirst(request, path) {
  const kept = await caches.open(KEPT);
  try {
    const response = await fetch(request, { signal: AbortSignal.timeout(NETWORK_WITHIN) });
    if (response.ok) {
      await kept.put(path, response.clone());
      return response;
    }
    if (response.status === 404 || response.status === 410) {
      await kept.delete(path);
      return response;
    }
    return (await kept.match(path)) || response;
  } catch {
    return (await kept.match(path)) || Response.error();
  }
}
