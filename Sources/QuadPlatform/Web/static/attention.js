// The badge and the offers held for a signed-in person, on every page: the server draws them in the frame, and
// again alone at /me/attention (the same partials), which this fetches when the person's places, loans or bookings
// change (the page's event stream says so through live.js, "quad:event"; a page without one opens a stream of its
// own for the person's `waiting` and `notice` events), when the time the server drew is up, and when the page is seen again.
// Between fetches, the offers' minutes left count down here.
import { morph } from "./live.js";
import { plural } from "./i18n.js";

const changes = new Set(["waiting", "notice", "book", "room", "reset"]);

// Takes `fresh`'s attributes and children, keeping the nodes that match (a focused link stays focused).
function sync(element, fresh) {
  if (!element || !fresh) return;
  for (const { name } of Array.from(element.attributes)) {
    if (!fresh.hasAttribute(name)) element.removeAttribute(name);
  }
  for (const { name, value } of Array.from(fresh.attributes)) {
    if (element.getAttribute(name) !== value) element.setAttribute(name, value);
  }
  morph(element, fresh.innerHTML);
}

export function followAttention() {
  const body = document.body;
  if (!body.hasAttribute("data-signed-in")) return;
  let etag = null, running = false, again = false, deadline = 0, debounce = 0, stream = null;
  // The server's clock, once an answer's Date says it: a device set wrong must not end an offer early.
  let offset = 0;
  const serverNow = () => Date.now() + offset;

  // Minutes left, never "0": at its end the server draws the offer gone (the deadline below).
  function tick() {
    for (const el of document.querySelectorAll("#shell-offer [data-until]")) {
      const left = Number(el.dataset.until) - serverNow();
      el.textContent = plural("today.minutesLeft", Math.max(1, Math.ceil(left / 60000)));
    }
  }

  // The server's word on when what it drew changes by itself (an offer ends, a check-in opens).
  function schedule() {
    clearTimeout(deadline);
    const at = Number(body.dataset.attentionAt);
    if (at) deadline = setTimeout(refresh, Math.max(0, at - serverNow()) + 250);
  }

  async function refresh() {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      const headers = { Accept: "text/html" };
      if (etag) headers["If-None-Match"] = etag;
      const response = await fetch("/me/attention", { cache: "no-store", credentials: "same-origin", headers });
      const date = Date.parse(response.headers.get("Date") || "");
      // Whole seconds: a smaller difference is noise.
      if (!Number.isNaN(date) && !response.headers.has("X-Quad-Offline-Copy")) {
        offset = Math.abs(date - Date.now()) > 2000 ? date - Date.now() : 0;
      }
      // Redirected (signed out) or the service worker's old copy: not news.
      if (response.status === 200 && !response.redirected && !response.headers.has("X-Quad-Offline-Copy")) {
        etag = response.headers.get("ETag");
        apply(await response.text());
      }
    } catch {
      // Offline: the page keeps what it drew; coming back brings it again.
    }
    running = false;
    if (again) {
      again = false;
      refresh();
    }
  }

  function apply(html) {
    const template = document.createElement("template");
    template.innerHTML = html;
    const fresh = template.content.querySelector("[data-attention]");
    if (!fresh) return;
    if (fresh.dataset.attentionAt) body.dataset.attentionAt = fresh.dataset.attentionAt;
    else delete body.dataset.attentionAt;
    const badge = fresh.querySelector("[data-badge]");
    for (const el of document.querySelectorAll("[data-badge]")) sync(el, badge);
    sync(document.getElementById("shell-offer"), fresh.querySelector("#shell-offer"));
    tick();
    schedule();
  }

  // Events come in bursts (a cancellation moves a whole line): one fetch for them.
  function soon() {
    clearTimeout(debounce);
    debounce = setTimeout(refresh, 200);
  }

  document.addEventListener("quad:event", (event) => { if (changes.has(event.detail?.type)) soon(); });

  // A page with no live region of its own: a stream for the person's own waiting and notice events alone, while it is
  // seen.
  function openStream() {
    if (stream || document.hidden || !("EventSource" in window) || "pageLive" in body.dataset) return;
    stream = new EventSource("/api/events?types=waiting,notice");
    stream.addEventListener("waiting", soon);
    stream.addEventListener("notice", soon);
    stream.onerror = () => {
      if (stream?.readyState === EventSource.CLOSED) stream = null; // refused: the deadlines and coming back remain
    };
  }

  document.addEventListener("visibilitychange", () => {
    if (document.hidden) {
      stream?.close();
      stream = null;
    } else {
      refresh();
      openStream();
    }
  });
  window.addEventListener("pageshow", (event) => { if (event.persisted) refresh(); });
  // Page scripts (which start live.js) have run by then.
  document.addEventListener("DOMContentLoaded", openStream);
  setInterval(tick, 15000);
  tick();
  schedule();
}
