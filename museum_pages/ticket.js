// The ticket page's script: a Print button, and the service worker that keeps this page
// for a visit without the network (ticket-sw.js), scoped to this page alone.
"use strict";

const printButton = document.getElementById("print");
if (document.querySelector(".ticket")) {
  printButton.hidden = false;
  printButton.addEventListener("click", () => window.print());
}

if ("serviceWorker" in navigator && document.querySelector(".ticket")) {
  navigator.serviceWorker.register("/t/ticket-sw.js", { scope: location.pathname })
    .catch(() => {});
}
