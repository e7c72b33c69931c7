// Offline, a page's writes wait: every button that would send a form is disabled and points to the reason
// (the page's offline banner, else the shell's), and every link to a form (data-write) is marked unavailable.
// Back online, each is as the page drew it; one the page had disabled itself is never touched. A part of a
// page that rules its own writes (Rooms: a full room stays unavailable online too) is marked data-own-writes.

const HELD = "data-offline-held"; // its value: the aria-describedby it had before

function reasonFor(scope) {
  return scope.querySelector(".banner-offline:not(#shell-offline)") || document.getElementById("shell-offline");
}

export function holdWrites(offline, scope = document.getElementById("main")) {
  if (!scope) return;
  const reason = reasonFor(scope);
  const writes = scope.querySelectorAll('form[method="post" i] button:not([type="button"]), a[data-write]');
  for (const element of writes) {
    if (element.closest("[data-own-writes]")) continue;
    const link = element.tagName === "A";
    if (offline && !element.hasAttribute(HELD) && !element.disabled) {
      const before = element.getAttribute("aria-describedby") || "";
      element.setAttribute(HELD, before);
      if (reason) element.setAttribute("aria-describedby", (before + " " + reason.id).trim());
      if (link) element.setAttribute("aria-disabled", "true");
      else element.disabled = true;
    } else if (!offline && element.hasAttribute(HELD)) {
      const before = element.getAttribute(HELD);
      if (before) element.setAttribute("aria-describedby", before);
      else element.removeAttribute("aria-describedby");
      element.removeAttribute(HELD);
      if (link) element.removeAttribute("aria-disabled");
      else element.disabled = false;
    }
  }
}

// The shell's own banner and holds, from what the browser says of the connection: for every page, those
// with a live part (live.js, which also notices a server it cannot reach) and the others (forms of their own).
export function watchConnection() {
  const main = document.getElementById("main");
  const banner = document.getElementById("shell-offline");
  if (!main) return;
  const update = () => {
    const offline = !navigator.onLine;
    // A page with a banner of its own shows that one (live.js does), so the news is said once.
    if (banner) banner.hidden = !offline || reasonFor(main) !== banner;
    holdWrites(offline, main);
  };
  window.addEventListener("offline", update);
  window.addEventListener("online", update);
  // A redraw (live.js merging the server's new markup) may bring new forms: they wait too.
  new MutationObserver(() => { if (!navigator.onLine) holdWrites(true, main); })
    .observe(main, { childList: true, subtree: true });
  // A held link does nothing (it has no disabled state of its own).
  document.addEventListener("click", (event) => {
    if (event.target instanceof Element && event.target.closest(`a[${HELD}]`)) event.preventDefault();
  }, true);
  update();
}
