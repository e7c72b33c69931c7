// Quad's shared script: small, no build step. Pages work without it; it only adds.
"use strict";
import { watchConnection } from "./writes.js";
import { followAttention } from "./attention.js";

// The service worker keeps the shell (and what features add) for offline use.
if ("serviceWorker" in navigator) {
  window.addEventListener("load", () => {
    navigator.serviceWorker.register("/sw.js").catch(() => {});
  });
}

// Forms that destroy something ask first (`data-confirm` holds the question); without JavaScript
// they post at once, which the server accepts.
document.addEventListener("submit", (event) => {
  const form = event.target;
  if (form instanceof HTMLFormElement && form.dataset.confirm && !window.confirm(form.dataset.confirm)) {
    event.preventDefault();
  }
});

// Offline, the page says so and its writes wait (writes.js).
watchConnection();

// What needs a signed-in person (the badge, the offers held for them) stays current on every page.
followAttention();
