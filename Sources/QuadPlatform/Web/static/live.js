// Keeps a server-rendered page's live region current. The server draws the region alone at the page's
// URL plus ?fragment=live; this module fetches it when Server-Sent Events say something changed (or by
// polling when they are unavailable) and morphs the new HTML into the page, so focus, ticked boxes and
// half-typed text survive. The server's templates stay the one source of markup.

import { ago, t } from "./i18n.js";
import { holdWrites } from "./writes.js";

export { announce } from "./i18n.js";

// ±20 %: many open pages do not poll in step.
const jitter = (ms) => ms * (0.8 + Math.random() * 0.4);

function retryAfter(response) {
  const value = response.headers.get("Retry-After");
  if (!value) return 0;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? 0 : date - Date.now();
}

export function startLive({
  root, region, url, events = [], pollSeconds = 30, minIntervalMs = 0, morphOptions = {},
  onApplied, onEvent, banners = {}, freshness,
}) {
  const baseMs = Math.max(5, Number(pollSeconds) || 30) * 1000;
  const cleanups = [];
  let stopped = false, offline = false, streamOpen = false;
  let hadNews = false; // anything from the server since the page opened (it may be an offline copy)

  // The server's clock, from its answers' Date header: a device clock set wrong must not make
  // everything look stale.
  let clockOffset = 0;
  const serverNow = () => Date.now() + clockOffset;
  function learnClock(response) {
    const date = Date.parse(response.headers.get("Date") || "");
    if (Number.isNaN(date)) return;
    const offset = date - Date.now();
    clockOffset = Math.abs(offset) > 2000 ? offset : 0; // the header has whole seconds: smaller is noise
  }

  let freshAt = Number(freshness?.dataset.updatedAt) || serverNow();

  function renderFreshness() {
    if (streamOpen) freshAt = serverNow(); // an open stream is live news: nothing happened is news too
    if (freshness) freshness.textContent = ago(serverNow() - freshAt);
  }

  function markFresh() {
    freshAt = serverNow();
    hadNews = true;
    renderFreshness();
  }

  const showError = (on) => { if (banners.error) banners.error.hidden = !on; };

  // How the page hears of changes, for tests and styles.
  const showMode = () => { root.dataset.live = offline ? "offline" : streamOpen ? "stream" : "poll"; };

  // --- Fetching the fragment: one request at a time, one more queued behind it ----------------------

  let etag = null, failures = 0, pollTimer = 0, soonTimer = 0, lastStart = 0, running = null;
  let queued = null; // { revalidate, promise }: the one fetch after the running one
  let byEvent = false; // the next fetch answers an event (for onApplied)

  function schedule(ms) {
    stopPolling();
    if (stopped || streamOpen || document.hidden || offline) return;
    pollTimer = setTimeout(() => { pollTimer = 0; refresh(); }, ms);
  }

  function stopPolling() { clearTimeout(pollTimer); pollTimer = 0; }

  /** Fetches the fragment now, or right after the fetch under way; resolves true when it worked. */
  function refresh({ revalidate = true } = {}) {
    if (stopped) return Promise.resolve(false);
    if (queued) {
      queued.revalidate &&= revalidate; // a forced full answer wins
      return queued.promise;
    }
    if (!running) return run(revalidate);
    const next = { revalidate };
    const go = () => { queued = null; return run(next.revalidate); };
    next.promise = running.then(go, go);
    queued = next;
    return next.promise;
  }

  function run(revalidate) {
    running = load(revalidate).finally(() => { running = null; });
    return running;
  }

  // For events (which come in bursts): fetches are at least minIntervalMs apart, the last one trailing.
  function soon() {
    if (soonTimer || stopped) return;
    const wait = lastStart + minIntervalMs - Date.now();
    if (wait <= 0) refresh();
    else soonTimer = setTimeout(() => { soonTimer = 0; refresh(); }, wait);
  }

  // Loading: a fetch that takes a while (a slow network, a Retry) says so in the freshness line, and the
  // region is busy for assistive technology meanwhile. A quick one changes nothing on screen.
  function showLoading(on) {
    if (stopped) return;
    if (on) region.setAttribute("aria-busy", "true");
    else region.removeAttribute("aria-busy");
    if (on && freshness) freshness.textContent = t("time.updating");
    else renderFreshness();
  }

  async function load(revalidate) {
    stopPolling();
    lastStart = Date.now();
    const slow = setTimeout(() => showLoading(true), 400);
    const fromEvent = byEvent;
    byEvent = false;
    let next = jitter(baseMs), ok = false;
    const backOff = () => Math.min(300_000, jitter(baseMs * 2 ** ++failures));
    try {
      const headers = { Accept: "text/html" };
      if (etag && revalidate) headers["If-None-Match"] = etag;
      const response = await fetch(url, { cache: "no-store", credentials: "same-origin", headers });
      if (stopped) return false;
      // The service worker's last copy, when the server cannot be reached: better than the page's own
      // data only if that came from a cache too (nothing heard since it opened); never news. Its Date
      // and ETag are old, so neither is learnt.
      if (response.headers.has("X-Quad-Offline-Copy")) {
        if (!hadNews && response.status === 200) apply(await response.text(), false);
        throw new TypeError("offline copy");
      }
      learnClock(response);
      // Redirected (to sign in, say): not the fragment, so not to be drawn into the page.
      if (response.status === 200 && !response.redirected) {
        const html = await response.text();
        etag = response.headers.get("ETag");
        apply(html, fromEvent);
        ok = true;
      } else if (response.status === 304) {
        ok = true;
      } else {
        next = backOff();
        if (response.status === 429 || response.status === 503) next = Math.max(next, retryAfter(response));
        showError(true);
      }
    } catch {
      if (stopped) return false;
      // A network error: quiet when offline, which the banner says.
      next = backOff();
      if (navigator.onLine) showError(true);
      else setOffline(true);
    }
    clearTimeout(slow);
    showLoading(false);
    if (ok) {
      failures = 0;
      showError(false);
      markFresh();
      connect(); // a stream that gave up gets another chance, at most once a poll
    }
    schedule(next);
    return ok;
  }

  function apply(html, fromEvent) {
    if (stopped) return;
    const before = region.innerHTML;
    const changes = morph(region, html, morphOptions);
    const changed = region.innerHTML !== before; // a 200 may still draw what is shown (a first fetch)
    tick();
    if (offline) holdWrites(true, root); // an offline copy's markup has writes too
    onApplied?.(changes, { fromEvent, changed });
  }

  // --- Server-Sent Events ---------------------------------------------------------------------------

  let source = null, lastEventId = "", triedAtOnce = false;

  // Signed in, the stream is the person's own: their waiting and notice events reach every live page, whatever it
  // listens to, for the badge and the offers held for them (attention.js hears of every event as "quad:event").
  const personal = document.body.hasAttribute("data-signed-in")
    ? ["waiting", "notice"].filter((type) => !events.includes(type))
    : [];
  document.body.dataset.pageLive = "";
  const tell = (event) => document.dispatchEvent(new CustomEvent("quad:event", { detail: { type: event.type } }));

  function onStreamEvent(event) {
    tell(event);
    lastEventId = event.lastEventId || lastEventId;
    markFresh();
    let data = null;
    try { data = JSON.parse(event.data); } catch { /* not JSON: null */ }
    onEvent?.(event.type, data);
    byEvent = true;
    soon();
  }

  function connect() {
    if (source || stopped || !events.length || !("EventSource" in window) || document.hidden || offline) return;
    // Reopened after a pause, the stream replays what was missed since the last event seen.
    const stream = new EventSource("/api/events?types=" + [...events, ...personal].join(",") +
      (lastEventId ? "&lastEventId=" + encodeURIComponent(lastEventId) : ""));
    source = stream;
    stream.onopen = () => {
      streamOpen = true;
      stopPolling();
      showMode();
      refresh(); // catches up with anything between the page being drawn (or the stream dropping) and now
    };
    stream.onerror = () => {
      if (source !== stream) return;
      streamOpen = false;
      showMode();
      if (stream.readyState === EventSource.CLOSED) {
        // Refused (e.g. too many streams): polling takes over, and a good poll tries the stream again.
        stream.close();
        source = null;
      }
      // The browser retries the stream every few seconds, which must not keep pushing the next poll back.
      // A stream that never opened: poll at once, for news or an error to show.
      if (!hadNews && !triedAtOnce) {
        triedAtOnce = true;
        refresh();
      } else if (!pollTimer && !running) {
        schedule(jitter(baseMs));
      }
    };
    // "reset": the server could not replay what was missed; the fragment is the current state anyway.
    for (const type of [...events, "reset"]) stream.addEventListener(type, onStreamEvent);
    for (const type of personal) stream.addEventListener(type, tell);
  }

  function disconnect() {
    source?.close();
    source = null;
    streamOpen = false;
    showMode();
  }

  // --- Deadlines drawn by the server: data-live-until (then stale), data-refresh-at (then refetch) ----

  const refreshedFor = new Set();

  function tick() {
    const now = serverNow();
    for (const el of region.querySelectorAll("[data-live-until]")) {
      if (now < Number(el.dataset.liveUntil) || "stale" in el.dataset) continue;
      el.dataset.stale = "";
      const label = el.dataset.staleText !== undefined && el.querySelector("[data-stale-label]");
      if (label) {
        label.textContent = el.dataset.staleText;
        label.hidden = false;
      }
    }
    let due = false;
    for (const el of region.querySelectorAll("[data-refresh-at]")) {
      const at = el.dataset.refreshAt;
      if (now < Number(at) || refreshedFor.has(at)) continue;
      refreshedFor.add(at); // once per deadline, even if the server still draws it
      due = true;
    }
    if (due && !document.hidden && !offline) soon(); // else waking up refreshes anyway
  }

  // --- Offline, hidden, back ------------------------------------------------------------------------

  function setOffline(value) {
    offline = value;
    if (banners.offline) banners.offline.hidden = !value;
    // Offline by the browser's word or by a server out of reach: the page's writes wait either way.
    holdWrites(value, root);
    if (value) {
      showError(false);
      disconnect();
      stopPolling();
    }
    showMode();
  }

  function wake() {
    if (offline || document.hidden || stopped) return;
    refresh();
    connect();
  }

  function listen(target, type, handler) {
    target.addEventListener(type, handler);
    cleanups.push(() => target.removeEventListener(type, handler));
  }

  listen(window, "offline", () => setOffline(true));
  listen(window, "online", () => { setOffline(false); wake(); });
  listen(document, "visibilitychange", () => {
    if (!document.hidden) {
      wake();
    } else {
      // Nobody is looking: no stream held open, no polls.
      disconnect();
      stopPolling();
      clearTimeout(soonTimer);
      soonTimer = 0;
    }
  });
  listen(window, "pageshow", (event) => { if (event.persisted) wake(); });

  showMode();
  if (!navigator.onLine) {
    setOffline(true);
    refresh(); // the service worker's last copy may be newer than the page
  }
  renderFreshness();
  const freshnessTimer = setInterval(renderFreshness, 5000), tickTimer = setInterval(tick, 1000);
  tick();
  if (!document.hidden && !offline) {
    connect();
    schedule(jitter(baseMs)); // until the stream opens (it cancels this), or if it never does
  }

  function stop() {
    stopped = true;
    for (const cleanup of cleanups) cleanup();
    [freshnessTimer, tickTimer].forEach(clearInterval);
    clearTimeout(soonTimer);
    stopPolling();
    disconnect();
  }

  return { refresh, serverNow, stop };
}

// --- morph: make an element's children match server HTML, keeping the nodes that match ---------------

/**
 * Children are matched by id, else by the `key` attribute, else by position among unkeyed siblings of
 * the same tag. Returns the keyed elements whose data-announce changed or which are new with one.
 */
export function morph(target, html, { key = "data-key", keep = [], skip } = {}) {
  const template = document.createElement("template");
  template.innerHTML = html;
  const active = document.activeElement;
  const context = { key, keep: keep.join(", "), skip, changes: [], active };
  syncChildren(target, template.content, context);

  if (active && !active.isConnected) {
    // Focus was in a node that was replaced: to its counterpart, if the new tree has one.
    const value = active.getAttribute(key);
    const again = (active.id && document.getElementById(active.id)) ||
      (value !== null && target.querySelector(`[${key}="${CSS.escape(value)}"]`));
    if (again && target.contains(again)) again.focus({ preventScroll: true });
  } else if (active && active !== document.activeElement) {
    active.focus({ preventScroll: true }); // moved (where moveBefore is missing) and so blurred
  }
  return context.changes;
}

function identity(node, { key }) {
  if (node.nodeType !== Node.ELEMENT_NODE) return null;
  if (node.id) return "#" + node.id;
  const value = node.getAttribute(key);
  return value === null ? null : "=" + value;
}

const keeps = (node, { keep }) => Boolean(keep) && node.nodeType === Node.ELEMENT_NODE && node.matches(keep);
// Page-added nodes (keep) only ever match the server's own copy of such a node, never another <p>.
const group = (node, context) => node.nodeName + (keeps(node, context) ? " keep" : "");

function syncChildren(parent, fresh, context) {
  const keyed = new Map();
  const unkeyed = new Map(); // group -> old nodes, in order
  for (const node of parent.childNodes) {
    const id = identity(node, context);
    if (id) keyed.set(id, node);
    else unkeyed.set(group(node, context), [...(unkeyed.get(group(node, context)) || []), node]);
  }

  const used = new Set();
  const wanted = [];
  for (const node of Array.from(fresh.childNodes)) {
    const id = identity(node, context);
    let match = id ? keyed.get(id) : unkeyed.get(group(node, context))?.shift();
    if (match && (match.nodeName !== node.nodeName || used.has(match))) match = null;
    if (match) {
      used.add(match);
      update(match, node, context);
      wanted.push(match);
    } else {
      const after = id ? node.getAttribute("data-announce") : null;
      if (after !== null) context.changes.push({ key: id.slice(1), element: node, before: null, after });
      wanted.push(node);
    }
  }
  // What the page added itself stays, at the end, when the server's copy lacks it.
  for (const node of parent.childNodes) if (!used.has(node) && keeps(node, context)) wanted.push(node);

  wanted.forEach((node, index) => {
    const current = parent.childNodes[index] || null;
    if (current === node) return;
    // moveBefore (Chrome 133+) keeps focus and state; elsewhere morph() puts focus back after.
    if (node.parentNode === parent && parent.isConnected && parent.moveBefore) parent.moveBefore(node, current);
    else parent.insertBefore(node, current);
  });
  while (parent.childNodes.length > wanted.length) parent.lastChild.remove();
}

function update(old, fresh, context) {
  if (old.nodeType !== Node.ELEMENT_NODE) {
    if (old.data !== fresh.data) old.data = fresh.data;
    return;
  }
  if (context.skip?.(old, fresh)) return;
  const id = identity(old, context);
  const before = old.getAttribute("data-announce");
  const after = fresh.getAttribute("data-announce");
  if (id && before !== after) context.changes.push({ key: id.slice(1), element: old, before, after });

  // What someone is typing or choosing is theirs; the `checked` property is never reset (attribute only).
  const editing = old === context.active && /^(INPUT|TEXTAREA|SELECT)$/.test(old.nodeName);
  for (const { name, value } of Array.from(fresh.attributes)) {
    if (!(editing && name === "value") && old.getAttribute(name) !== value) old.setAttribute(name, value);
  }
  for (const { name } of Array.from(old.attributes)) {
    if (!(editing && name === "value") && !fresh.hasAttribute(name)) old.removeAttribute(name);
  }
  if (editing && old.nodeName === "TEXTAREA") return; // its text is its default value
  syncChildren(old, fresh, context);
}
