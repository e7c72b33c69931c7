// The Rooms page, made live. The server renders a page that works on its own (forms post, the page
// reloads); this script only adds: spots change as people book (Server-Sent Events, polling when those
// are unavailable), booking and cancelling happen in place, the page says how fresh it is and what
// works offline. No build step. Every text people see comes from #rooms-strings (the server's
// translations), and the markup drawn here is that of the server's templates, so a reload looks the same.
"use strict";

(() => {
  const root = document.getElementById("rooms");
  const stringsScript = document.getElementById("rooms-strings");
  if (!root || !stringsScript) return;

  // --- Strings ------------------------------------------------------------------------------------

  const { lang, strings, plurals } = JSON.parse(stringsScript.textContent);
  const pluralRules = new Intl.PluralRules(lang);
  const fill = (text, values = {}) =>
    text.replace(/\{(\w+)\}/g, (whole, name) => (name in values ? String(values[name]) : whole));
  const t = (key, values) => fill(strings[key] ?? key, values);
  // As the server's Localizer chooses: an exact form ("0") wins over the language's category. French
  // needs it: 0 is "one" there, yet "Plus aucune place" reads better than "0 place restante".
  const tn = (key, count, values = {}) => {
    const forms = plurals[key] || {};
    return fill(forms[String(count)] ?? forms[pluralRules.select(count)] ?? forms.other ?? key, { ...values, count });
  };

  // --- The page's parts ---------------------------------------------------------------------------

  const byId = (id) => document.getElementById(id);
  const availableList = byId("rooms-available");
  const fullList = byId("rooms-full");
  const updatedLabel = byId("rooms-updated");
  const refreshButton = byId("rooms-refresh");
  const offlineBanner = byId("rooms-offline");
  const errorBanner = byId("rooms-error");
  const live = byId("rooms-live");
  const refreshMs = Math.max(5, Number(root.dataset.refreshSeconds) || 30) * 1000;
  const csrf = root.dataset.csrf || "";

  const cards = () => Array.from(root.querySelectorAll(".room-card"));
  const cardFor = (id) => cards().find((card) => card.dataset.roomId === id);
  const listItemFor = (bookingId) =>
    byId("my-bookings-list")?.querySelector(`li[data-booking-id="${CSS.escape(bookingId)}"]`);

  // --- Markup of the server's templates (room-card.mustache) --------------------------------------

  function h(tag, attributes, ...children) {
    const element = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
    element.append(...children);
    return element;
  }

  // A form posting to the server, as without this script; its button says what it does and, to screen
  // readers, for which room ("Book Ljerka").
  const postForm = (className, action, buttonAttributes, text, name) =>
    h("form", { class: className, method: "post", action },
      h("input", { type: "hidden", name: "csrf", value: csrf }),
      h("button", { type: "submit", ...buttonAttributes }, text, h("span", { class: "visually-hidden" }, ` ${name}`)));

  // The button that replaces the one just pressed (Cancel after Book) ignores presses for a moment,
  // so a double tap or a held Enter never books and then cancels at once.
  const swappedAt = new Map();
  const justSwapped = (id) => Date.now() - (swappedAt.get(id) ?? 0) < 800;

  /** Shows "Booked" and Cancel on the card, or (bookingId null) the Book button. */
  function showBooked(card, bookingId) {
    const { roomId: id, name } = card.dataset;
    const old = card.querySelectorAll(".book-form, .booked-state, .cancel-form");
    if (!old.length) return; // nobody signed in: the card offers to sign in instead
    const room = encodeURIComponent(id);
    const parts = bookingId
      ? [h("p", { class: "booked-state" }, h("span", { class: "badge badge-booked" }, t("rooms.booked"))),
        postForm("cancel-form", `/rooms/${room}/bookings/${encodeURIComponent(bookingId)}/cancel`,
          { class: "secondary" }, t("rooms.cancel"), name)]
      : [postForm("book-form", `/rooms/${room}/book`, { class: "book" }, t("rooms.book"), name)];
    old[0].before(...parts);
    old.forEach((element) => element.remove());
    if (bookingId) card.dataset.bookingId = bookingId;
    else delete card.dataset.bookingId;
    swappedAt.set(id, Date.now());
    syncButtons(id);
  }

  // --- Spots --------------------------------------------------------------------------------------

  // The server's rule, so a card looks the same whether the server or this script drew it last.
  const availability = (spots, capacity) =>
    spots <= 0 ? "full" : spots <= 3 || spots * 10 <= capacity ? "low" : "bookable";

  let offline = false;
  const busy = new Map(); // room id -> "book" or "cancel", while that request is under way

  /** Shows a room's spots; returns whether they changed. */
  function setSpots(card, spots) {
    const changed = Number(card.dataset.spots) !== spots;
    const state = availability(spots, Number(card.dataset.capacity));
    card.dataset.spots = String(spots);
    card.dataset.state = state;
    const badge = card.querySelector(".room-spots .badge");
    if (badge) {
      badge.className = `badge badge-${state}`;
      badge.textContent = t(`rooms.state.${state}`);
    }
    const text = card.querySelector(".spots-text");
    if (text) text.textContent = tn("rooms.spotsRemaining", spots);
    place(card);
    syncButtons(card.dataset.roomId);
    return changed;
  }

  // Same order as the server: most spots first, ties by name.
  const order = (x, y) => (x < y ? -1 : x > y ? 1 : 0);
  const compare = (a, b) =>
    Number(b.dataset.spots) - Number(a.dataset.spots) ||
    order(a.dataset.name.toLowerCase(), b.dataset.name.toLowerCase()) ||
    order(a.dataset.roomId, b.dataset.roomId);

  // A room that fills up moves to the full list; one that gets a spot back goes where a reload would put
  // it. Rooms that stay in their list keep their place: the list should not shuffle under the reader.
  function place(card) {
    const list = card.dataset.state === "full" ? fullList : availableList;
    if (!list || card.parentElement === list) return;
    const focused = card.contains(document.activeElement) ? document.activeElement : null;
    const before = Array.from(list.children).find((other) => compare(card, other) < 0) || null;
    list.insertBefore(card, before);
    if (focused && !focused.disabled) focused.focus({ preventScroll: true }); // moving a node drops its focus
    updateSections();
  }

  function updateSections() {
    for (const [id, list] of [["rooms-available-section", availableList], ["rooms-full-section", fullList]]) {
      const section = byId(id);
      if (section) section.hidden = !list.querySelector(".room-card");
    }
  }

  /** The room's Book and Cancel buttons (on its card and in the list of bookings) as things stand. */
  function syncButtons(id) {
    const full = cardFor(id)?.dataset.state === "full";
    for (const button of root.querySelectorAll(`[data-room-id="${CSS.escape(id)}"] form button`)) {
      const isBook = button.matches(".book");
      button.disabled = offline || busy.has(id) || (isBook && full);
      // Offline, the buttons stay announced, as unavailable: the banner says why.
      if (offline) button.setAttribute("aria-disabled", "true");
      else button.removeAttribute("aria-disabled");
      if (busy.has(id)) button.setAttribute("aria-busy", "true");
      else button.removeAttribute("aria-busy");
      if (isBook) setLabel(button, t(busy.get(id) === "book" ? "rooms.booking" : "rooms.book"));
    }
  }

  // The visible words only: the room's name for screen readers (the button's span) stays.
  function setLabel(button, text) {
    const first = button.firstChild;
    if (first?.nodeType !== Node.TEXT_NODE) button.prepend(text);
    else if (first.nodeValue !== text) first.nodeValue = text;
  }

  function syncAll() {
    new Set(Array.from(root.querySelectorAll("[data-room-id]"), (e) => e.dataset.roomId)).forEach(syncButtons);
    updateSections();
  }

  // --- Telling people -----------------------------------------------------------------------------

  let announceTimer = 0;
  function announce(text) {
    // Emptied first and filled a moment later, so the same words twice are still read out.
    clearTimeout(announceTimer);
    live.textContent = "";
    announceTimer = setTimeout(() => { live.textContent = text; }, 100);
  }

  /** A message on the card (seen) and in the live region (heard). */
  function say(card, text, kind) {
    announce(text);
    if (!card) return;
    card.querySelector(".card-message")?.remove();
    const message = h("p", { class: `card-message card-message-${kind}`, role: "status" }, text);
    message.tabIndex = -1; // focus can land here when the card has no button left
    card.querySelector(".room-body").append(message);
  }

  // After booking or cancelling room `id`, focus goes to what replaced the button pressed (gone, or
  // disabled while busy), unless the person has moved on meanwhile: focus is on something of another room.
  function moveFocus(id, ...targets) {
    const active = document.activeElement;
    if (active && active !== document.body && active.closest("[data-room-id]")?.dataset.roomId !== id) return;
    targets.find((e) => e?.isConnected && !e.disabled && !e.closest("[hidden]"))?.focus();
  }

  // --- Freshness ----------------------------------------------------------------------------------

  let freshAt = Math.min(Date.now(), Number(updatedLabel?.dataset.updatedAt) || Date.now());
  let streamOpen = false;
  let hadNews = false; // anything from the server since this page opened (it may be an offline copy)

  function markFresh() {
    freshAt = Date.now();
    hadNews = true;
    renderFreshness();
  }

  function renderFreshness() {
    if (!updatedLabel) return;
    if (streamOpen) freshAt = Date.now(); // an open stream is live news: nothing happened is news too
    const seconds = Math.max(0, Math.floor((Date.now() - freshAt) / 1000));
    updatedLabel.textContent =
      seconds < 5 ? t("time.justNow")
        : seconds < 60 ? tn("time.secondsAgo", seconds)
          : tn("time.minutesAgo", Math.floor(seconds / 60));
  }

  function showError(on) {
    if (errorBanner) errorBanner.hidden = !on;
  }

  // --- Refreshing: the rooms list (polling) and the page's lists (after rooms change) --------------

  let etag = null;
  let failures = 0;
  let pollTimer = 0;
  let refreshing = null;
  const jitter = (ms) => ms * (0.8 + Math.random() * 0.4); // ±20 %: many open pages do not poll in step

  /** Polls unless the stream is open (it tells us first), the tab is hidden or the device offline. */
  function schedule(ms) {
    stopPolling();
    if (streamOpen || document.hidden || offline) return;
    pollTimer = setTimeout(() => { pollTimer = 0; refresh(); }, ms);
  }

  function stopPolling() {
    clearTimeout(pollTimer);
    pollTimer = 0;
  }

  // How the page hears of changes, for tests and styles: "stream", "poll" or "offline".
  function showMode() {
    root.dataset.live = offline ? "offline" : streamOpen ? "stream" : "poll";
  }

  function retryAfter(response) {
    const value = response.headers.get("Retry-After");
    if (!value) return 0;
    const seconds = Number(value);
    if (Number.isFinite(seconds)) return seconds * 1000;
    const date = Date.parse(value);
    return Number.isNaN(date) ? 0 : date - Date.now();
  }

  /** GET /api/rooms now (one request at a time); resolves true when it worked. */
  function refresh() {
    refreshing ||= poll().finally(() => { refreshing = null; });
    return refreshing;
  }

  async function poll() {
    stopPolling();
    let next = jitter(refreshMs);
    let ok = false;
    try {
      const headers = { Accept: "application/json" };
      if (etag) headers["If-None-Match"] = etag;
      const response = await fetch("/api/rooms", { headers, credentials: "same-origin" });
      // The service worker's last copy, when the server cannot be reached: better than the page's own
      // data only if that came from a cache too (nothing heard since it opened); never news.
      if (response.headers.has("X-Quad-Offline-Copy")) {
        if (!hadNews && response.status === 200) await apply((await response.json()).rooms || [], false);
        throw new TypeError("offline copy");
      }
      if (response.status === 200) {
        const body = await response.json();
        etag = response.headers.get("ETag");
        await apply(body.rooms || [], true);
        ok = true;
      } else if (response.status === 304) {
        ok = true;
      } else {
        failures++;
        next = Math.min(300_000, jitter(refreshMs * 2 ** failures));
        if (response.status === 429 || response.status === 503) next = Math.max(next, retryAfter(response));
        showError(true);
      }
    } catch {
      // A network error (or an answer that made no sense): quiet when offline, which the banner says.
      failures++;
      next = Math.min(300_000, jitter(refreshMs * 2 ** failures));
      if (navigator.onLine) showError(true);
      else setOffline(true);
    }
    if (ok) {
      failures = 0;
      showError(false);
      markFresh();
      connect(); // a stream that gave up gets another chance, at most once a poll
    }
    schedule(next);
    return ok;
  }

  /** Spots onto the cards; anything else that changed (rooms added, removed, renamed) reloads the lists. */
  async function apply(rooms, canReload) {
    const current = new Map(cards().map((card) => [card.dataset.roomId, card]));
    const same = rooms.length === current.size && rooms.every((room) => {
      const card = current.get(room.id);
      return card && card.dataset.name === room.name && Number(card.dataset.capacity) === room.capacity;
    });
    if (!same) {
      if (canReload) await reloadLists();
      return;
    }
    for (const room of rooms) setSpots(current.get(room.id), room.spots);
  }

  let reloading = null;
  let reloadAgain = false;

  /** Fetches /rooms and takes its lists: the server's templates stay the one source of markup. */
  function reloadLists() {
    if (reloading) {
      reloadAgain = true; // a change arrived while fetching: fetch once more after
      return reloading;
    }
    reloading = (async () => {
      do {
        reloadAgain = false;
        const response = await fetch("/rooms", {
          credentials: "same-origin", cache: "no-store", headers: { Accept: "text/html" },
        });
        if (!response.ok) throw new Error(`GET /rooms: ${response.status}`);
        replaceLists(new DOMParser().parseFromString(await response.text(), "text/html"));
      } while (reloadAgain);
    })().finally(() => { reloading = null; });
    return reloading;
  }

  function replaceLists(page) {
    const available = page.getElementById("rooms-available");
    const full = page.getElementById("rooms-full");
    if (!available || !full) throw new Error("GET /rooms: not the rooms page");
    // Where focus is (a card, or a booking in the list), to put it back in the redrawn one.
    const active = document.activeElement;
    const holder = active?.closest?.("#rooms [data-room-id]");
    const where = holder && (holder.id ? `#${CSS.escape(holder.id)}`
      : `#my-bookings-list li[data-booking-id="${CSS.escape(holder.dataset.bookingId || "")}"]`);

    // Messages shown on cards stay with their rooms.
    const messages = new Map(cards().map((c) => [c.dataset.roomId, c.querySelector(".card-message")]));
    availableList.replaceChildren(...available.children);
    fullList.replaceChildren(...full.children);
    for (const card of cards()) {
      const message = messages.get(card.dataset.roomId);
      if (message) card.querySelector(".room-body")?.append(message);
    }
    // Parts that come and go with the server's page: "no rooms yet", the person's bookings (gone when
    // the session has ended).
    for (const id of ["rooms-empty", "my-bookings"]) {
      const theirs = page.getElementById(id);
      const ours = byId(id);
      if (theirs && ours) ours.replaceWith(theirs);
      else if (ours) ours.remove();
      else if (theirs) byId("rooms-available-section")?.before(theirs);
    }
    syncAll();

    const again = where && document.querySelector(where);
    if (again && document.activeElement !== active) {
      (again.contains(active) ? active : again.querySelector("button:not(:disabled), a[href]"))
        ?.focus({ preventScroll: true });
    }
    markFresh();
  }

  function reloadQuietly() {
    reloadLists().then(() => showError(false), () => { if (navigator.onLine) showError(true); });
  }

  // --- Live: Server-Sent Events -------------------------------------------------------------------

  let source = null;
  let lastEventId = "";
  let triedAtOnce = false;

  function connect() {
    if (source || !("EventSource" in window) || document.hidden || offline) return;
    // Reopened after a pause, the stream replays what was missed since the last event seen.
    const stream = new EventSource(
      "/api/events?types=room" + (lastEventId ? "&lastEventId=" + encodeURIComponent(lastEventId) : ""));
    source = stream;
    stream.onopen = () => {
      streamOpen = true;
      stopPolling();
      showMode();
      // Catches up with anything between the page being drawn (or the stream dropping) and now.
      refresh();
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
      // Polling meanwhile; the browser retries the stream every few seconds, which must not keep
      // pushing the next poll back. A stream that never opened: poll at once, for news or an error to show.
      if (!hadNews && !triedAtOnce) {
        triedAtOnce = true;
        refresh();
      } else if (!pollTimer && !refreshing) {
        schedule(jitter(refreshMs));
      }
    };
    stream.addEventListener("room", (event) => {
      lastEventId = event.lastEventId || lastEventId;
      markFresh();
      let change;
      try { change = JSON.parse(event.data); } catch { return; }
      const card = cardFor(change.id);
      if (change.change === "spots" && typeof change.spots === "number" && card) {
        if (setSpots(card, change.spots)) {
          announce(t("rooms.announce", { name: card.dataset.name, spots: tn("rooms.spotsRemaining", change.spots) }));
        }
      } else {
        reloadQuietly();
      }
    });
    // The server could not replay what this page missed: start again from its current state.
    stream.addEventListener("reset", (event) => {
      lastEventId = event.lastEventId || lastEventId;
      markFresh();
      reloadQuietly();
    });
  }

  function disconnect() {
    source?.close();
    source = null;
    streamOpen = false;
    showMode();
  }

  // --- Offline, hidden, back ----------------------------------------------------------------------

  function setOffline(value) {
    offline = value;
    if (offlineBanner) offlineBanner.hidden = !value;
    if (value) {
      showError(false);
      disconnect();
      stopPolling();
    }
    showMode();
    syncAll();
  }

  function wake() {
    if (offline || document.hidden) return;
    refresh();
    connect();
  }

  window.addEventListener("offline", () => setOffline(true));
  window.addEventListener("online", () => {
    setOffline(false);
    wake();
  });
  document.addEventListener("visibilitychange", () => {
    if (document.hidden) {
      // Nobody is looking: no stream held open, no polls.
      disconnect();
      stopPolling();
    } else {
      wake();
    }
  });
  window.addEventListener("pageshow", (event) => { if (event.persisted) wake(); });

  for (const button of [refreshButton, byId("rooms-retry")]) {
    button?.addEventListener("click", async () => {
      if (await refresh()) announce(t("time.justNow"));
      connect();
    });
  }

  // --- Booking and cancelling ---------------------------------------------------------------------

  // One Idempotency-Key per intent to book a room, reused when a retry follows a network error, so a
  // request that did reach the server is not made twice; dropped once the server has answered for sure.
  const intents = new Map();

  function uuid() {
    if (crypto.randomUUID) return crypto.randomUUID(); // secure contexts only (HTTPS, localhost)
    const bytes = crypto.getRandomValues(new Uint8Array(16));
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }

  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const problemOf = (response) => response.json().catch(() => ({}));
  // The server's words go into a localised sentence ("The booking failed: {reason}"), never alone.
  const reasonOf = (problem, response) => problem.detail || problem.title || response.statusText || response.status;

  function setBusy(id, what) {
    if (what) busy.set(id, what);
    else busy.delete(id);
    syncButtons(id);
  }

  async function book(card) {
    const id = card.dataset.roomId;
    if (busy.has(id) || offline || card.dataset.state === "full") return; // repeated clicks do nothing
    if (!intents.has(id)) intents.set(id, uuid());
    setBusy(id, "book");

    let response = null;
    try {
      for (let attempt = 0; ; attempt++) {
        response = await fetch(`/api/rooms/${encodeURIComponent(id)}/bookings`, {
          method: "POST",
          credentials: "same-origin",
          headers: {
            "Content-Type": "application/json", Accept: "application/json",
            "Idempotency-Key": intents.get(id), "X-CSRF-Token": csrf,
          },
          body: "{}", // the server knows who is signed in
        });
        // An earlier try with this key is still running on the server: wait for its answer.
        if (response.status !== 409 || attempt >= 5) break;
        const problem = await problemOf(response.clone());
        if (!String(problem.type || "").endsWith("idempotency-in-progress")) break;
        await sleep(Math.max(500, retryAfter(response)));
      }
    } catch {
      response = null; // network error: the key is kept for the retry
    }

    setBusy(id, null);
    card = cardFor(id); // the lists may have been redrawn meanwhile
    if (!card) return;

    if (!response) {
      say(card, t("rooms.errors.network"), "error");
      moveFocus(id, card.querySelector("button.book"), card.querySelector(".card-message"));
      return;
    }
    if (response.status === 201) {
      intents.delete(id);
      const { booking, spots } = await response.json();
      if (typeof spots === "number") setSpots(card, spots);
      showBooked(card, booking.id);
      say(card, t("rooms.bookedMessage", { name: card.dataset.name }), "success");
      moveFocus(id, card.querySelector(".cancel-form button"), card.querySelector(".card-message"));
      reloadQuietly(); // the list of the person's bookings, as the server draws it
      return;
    }

    const problem = await problemOf(response);
    const type = String(problem.type || "");
    if (response.status < 500 && response.status !== 429) intents.delete(id); // a definite no
    let message;
    if (response.status === 401) {
      message = t("rooms.signInToBook"); // the session has ended: the redrawn page offers to sign in
    } else if (response.status === 409 && type.endsWith("room-full")) {
      message = t("rooms.errors.full");
      setSpots(card, 0);
    } else if (response.status === 409 && type.endsWith("already-booked")) {
      message = t("rooms.errors.already"); // booked elsewhere: the redrawn card shows that booking
    } else {
      message = t("rooms.errors.failed", { reason: reasonOf(problem, response) });
    }
    say(card, message, "error");
    moveFocus(id, card.querySelector("button.book"), card.querySelector(".card-message"));
    if ([401, 404, 409].includes(response.status)) reloadQuietly(); // the server knows better now
  }

  /** Cancels a booking of room `id`; `from` is the card or the item of the list of bookings it was asked from. */
  async function cancel(id, bookingId, from) {
    if (!bookingId || busy.has(id) || offline) return;
    setBusy(id, "cancel");
    let response = null;
    try {
      response = await fetch(`/api/rooms/${encodeURIComponent(id)}/bookings/${encodeURIComponent(bookingId)}`, {
        method: "DELETE", credentials: "same-origin", headers: { Accept: "application/json", "X-CSRF-Token": csrf },
      });
    } catch {
      response = null;
    }
    setBusy(id, null);
    const card = cardFor(id);
    const name = card?.dataset.name ?? from.querySelector("span")?.textContent.trim();

    if (response && (response.ok || response.status === 404)) {
      // 404: the booking is gone already (cancelled elsewhere); the page forgets it too.
      listItemFor(bookingId)?.remove();
      if (card?.dataset.bookingId === bookingId) showBooked(card, null);
      say(card, t("rooms.cancelledMessage", { name }), "success");
      moveFocus(id, card?.querySelector("button.book"), card?.querySelector(".card-message"));
      reloadQuietly(); // the spot given back (a 204 says no number) and the list, as the server has them
      return;
    }
    const message = !response ? t("rooms.errors.cancelFailed", { reason: t("rooms.offline") })
      : response.status === 401 ? t("rooms.signInToBook")
        : t("rooms.errors.cancelFailed", { reason: reasonOf(await problemOf(response), response) });
    say(card, message, "error");
    moveFocus(id, from.querySelector("button"), card?.querySelector(".cancel-form button"),
      card?.querySelector(".card-message"));
    if (response?.status === 401) reloadQuietly();
  }

  // Book and Cancel forms post to the server without this script; with it, they work in place.
  root.addEventListener("submit", (event) => {
    const form = event.target;
    const holder = form.closest?.("[data-room-id]");
    if (!holder) return; // e.g. the notice's Cancel, after a booking made without this script
    if (justSwapped(holder.dataset.roomId)) {
      event.preventDefault();
      return;
    }
    if (form.matches(".book-form")) {
      event.preventDefault();
      book(holder);
    } else if (form.matches(".cancel-form") && holder.dataset.bookingId) {
      event.preventDefault();
      cancel(holder.dataset.roomId, holder.dataset.bookingId, holder);
    }
  });

  // --- Start --------------------------------------------------------------------------------------

  if (refreshButton) refreshButton.hidden = false;
  showMode();
  syncAll();
  if (!navigator.onLine) {
    setOffline(true);
    refresh(); // the service worker's last copy may be newer than this page
  }
  renderFreshness();
  setInterval(renderFreshness, 5000);
  if (!document.hidden && !offline) {
    connect();
    schedule(jitter(refreshMs)); // until the stream opens (it cancels this), or if it never does
  }
})();
