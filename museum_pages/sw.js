// The scanner page's service worker: keeps the page's own files (its HTML, script and
// stylesheet), so that a reload while the service cannot be reached still shows the page,
// which then decides scans from the admission list it keeps in browser storage.
//
// Network first: a page that reaches the service always gets its newest files (and keeps
// them for the next outage); the kept copy is used only when the service does not answer
// within 2 s, or answers with a proxy's error. API calls are never touched.
"use strict";

const KEPT = "museum-scan-page";
const FILES = ["/scan", "/scan/scan.js", "/scan/scan.css", "/scan/offline.js"];
const NETWORK_WITHIN = 2000; // ms

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(KEPT).then((kept) => kept.addAll(FILES)));
  self.skipWaiting(); // a newer worker takes over at once: its files are the newest
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
    return (await kept.match(path)) || response;
  } catch {
    return (await kept.match(path)) || Response.error();
  }
}
