// Quad's shared script: small, no build step. Pages work without it; it only adds.
"use strict";

// The service worker keeps the shell (and what features add) for offline use.
if ("serviceWorker" in navigator) {
  window.addEventListener("load", () => {
    navigator.serviceWorker.register("/sw.js").catch(() => {});
  });
}
