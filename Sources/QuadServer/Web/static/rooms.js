// The Rooms page, made live. The server renders a page that works on its own (forms post, the page
// reloads); this script only adds: spots change as people book (Server-Sent Events, polling when those
// are unavailable), booking and cancelling happen in place, the page says how fresh it is and what
// works offline. No build step. Every text people see comes from #rooms-strings, the server's
// translations, and every card's markup from the server's templates.
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
  const nameForm = byId("name-form");
  const personInput = byId("person");
  const refreshMs = Math.max(5, Number(root.dataset.refreshSeconds) || 30) * 1000;
  const csrf = root.dataset.csrf || "";

  const cards = () => Array.from(root.querySelectorAll(".room-card"));
  const cardFor = (id) => cards().find((card) => card.dataset.roomId === id);

  // --- Who books, and which bookings are theirs ---------------------------------------------------
  // Two kinds of page: with a name form (#person), the name and the bookings are remembered on this device;
  // for a signed-in person, the server knows both and lists the bookings (#my-bookings-list).
  // Storage can be switched off or full: then the page still works, it just forgets on reload.

  const PERSON = "quad.person";
  const BOOKINGS = "quad.bookings";
  const storage = {
    get(key) { try { return localStorage.getItem(key); } catch { return null; } },
    set(key, value) { try { localStorage.setItem(key, value); } catch { /* not remembered */ } },
  };
  const loadBookings = () => { try { return JSON.parse(storage.get(BOOKINGS) || "{}") || {}; } catch { return {}; } };
  const saveBookings = (bookings) => storage.set(BOOKINGS, JSON.stringify(bookings));
  const serverKnowsBookings = () => Boolean(byId("my-bookings-list"));

  /** room id -> booking id of this person's bookings. */
  function knownBookings() {
    const list = byId("my-bookings-list");
    if (!list) return loadBookings();
    const bookings = {};
    for (const item of list.querySelectorAll("li[data-room-id][data-booking-id]")) {
      bookings[item.dataset.roomId] = item.dataset.bookingId;
    }
    return bookings;
  }

  function rememberBooking(roomId, bookingId) {
    if (serverKnowsBookings()) return; // the server's list is redrawn instead (see reloadLists)
    const bookings = loadBookings();
    if (bookingId) bookings[roomId] = bookingId;
    else delete bookings[roomId];
    saveBookings(bookings);
  }

  // --- Cards --------------------------------------------------------------------------------------

  // The server's rule, so a card looks the same whether the server or this script drew it last.
  const availability = (spots, capacity) =>
    spots <= 0 ? "full" : spots <= 3 || spots * 10 <= capacity ? "low" : "bookable";

  let offline = false;
  const busy = new Set(); // rooms with a booking or a cancellation under way

  /** Shows a room's spots; returns whether they changed. */
  function setSpots(card, spots) {
    const changed = Number(card.dataset.spots) !== spots;
    const state = availability(spots, Number(card.dataset.capacity));
    card.dataset.spots = String(spots);
    card.dataset.state = state;
    const badge = card.querySelector(".badge");
    if (badge) {
      badge.className = `badge badge-${state}`;
      badge.textContent = t(`rooms.state.${state}`);
    }
    const text = card.querySelector(".spots-text");
    if (text) text.textContent = tn("rooms.spotsRemaining", spots);
    place(card);
    syncButtons(card);
    return changed;
  }

  // Same order as the server: most spots first, ties by name.
  const compare = (a, b) =>
    Number(b.dataset.spots) - Number(a.dataset.spots) ||
    order(a.dataset.name.toLowerCase(), b.dataset.name.toLowerCase()) ||
    order(a.dataset.roomId, b.dataset.roomId);
  const order = (x, y) => (x < y ? -1 : x > y ? 1 : 0);

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

  function syncButtons(card) {
    const id = card.dataset.roomId;
    const book = card.querySelector("button.book");
    if (book) {
      book.disabled = offline || busy.has(id) || card.dataset.state === "full";
      if (offline) book.setAttribute("aria-disabled", "true");
      else book.removeAttribute("aria-disabled");
    }
    const cancel = card.querySelector("button.cancel");
    if (cancel) cancel.disabled = offline || busy.has(id);
  }

  // "Book" + the room's name for screen readers, whatever the visible words.
  function hiddenName(card) {
    const span = document.createElement("span");
    span.className = "visually-hidden";
    span.textContent = " " + card.dataset.name;
    return span;
  }

  function label(button, text, card) {
    button.replaceChildren(text, button.querySelector(".visually-hidden") || hiddenName(card));
  }

  /** Shows "Booked" and a Cancel button in place of the Book button, or (bookingId null) the other way. */
  function showBooked(card, bookingId) {
    const form = card.querySelector(".book-form");
    let area = card.querySelector(".booked");
    if (!bookingId) {
      area?.remove();
      if (form) form.hidden = false;
      return;
    }
    if (!area) {
      area = document.createElement("div");
      area.className = "booked";
      const status = document.createElement("p");
      status.className = "booked-status";
      status.textContent = t("rooms.booked");
      const cancel = document.createElement("button");
      cancel.type = "button";
      cancel.className = "secondary cancel";
      cancel.append(t("rooms.cancel"), hiddenName(card));
      area.append(status, cancel);
      if (form) form.after(area);
      else card.querySelector(".room-body")?.append(area);
    }
    if (form) form.hidden = true;
  }

  /** What the server's cards don't know: this device's bookings, requests under way, being offline. */
  function decorate() {
    const bookings = knownBookings();
    for (const card of cards()) {
      const id = card.dataset.roomId;
      showBooked(card, bookings[id] || null);
      const book = card.querySelector("button.book");
      if (book && busy.has(id)) label(book, t("rooms.booking"), card);
      syncButtons(card);
    }
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
    card.querySelector(".card-message")?.remove();
    const message = document.createElement("p");
    message.className = `card-message card-message-${kind}`;
    message.setAttribute("role", "status");
    message.tabIndex = -1; // focus can land here when the card's button goes away
    message.textContent = text;
    card.querySelector(".room-body").append(message);
    announce(text);
  }

  // After booking or cancelling, focus goes to what replaced the button pressed, unless the person has
  // moved on to something else meanwhile.
  function moveFocus(card, hadFocus, preferred) {
    const active = document.activeElement;
    if (!hadFocus && active && active !== document.body) return;
    const target = [preferred, card.querySelector(".card-message")]
      .find((element) => element && !element.disabled && !element.closest("[hidden]"));
    target?.focus();
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
      const copy = response.headers.has("X-Quad-Offline-Copy");
      if (copy) {
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
    } catch (error) {
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
    const active = document.activeElement;
    const focusedRoom = (active?.closest?.(".room-card, #my-bookings-list li"))?.dataset.roomId;

    // Messages shown on cards stay with their rooms.
    const messages = new Map(cards().map((c) => [c.dataset.roomId, c.querySelector(".card-message")]));
    availableList.replaceChildren(...available.children);
    fullList.replaceChildren(...full.children);
    for (const card of cards()) {
      const message = messages.get(card.dataset.roomId);
      if (message) card.querySelector(".room-body")?.append(message);
    }
    for (const id of ["rooms-available-section", "rooms-full-section"]) {
      if (byId(id)) byId(id).hidden = Boolean(page.getElementById(id)?.hidden);
    }
    const empty = page.getElementById("rooms-empty");
    const ownEmpty = byId("rooms-empty");
    if (empty && !ownEmpty) byId("rooms-available-section")?.before(empty);
    if (!empty && ownEmpty) ownEmpty.remove();
    const mine = page.getElementById("my-bookings");
    const ownMine = byId("my-bookings");
    if (mine && ownMine) ownMine.replaceWith(mine);

    if (!serverKnowsBookings()) {
      // Bookings of rooms that no longer exist are forgotten.
      const bookings = loadBookings();
      const ids = new Set(cards().map((card) => card.dataset.roomId));
      if (Object.keys(bookings).some((id) => !ids.has(id))) {
        saveBookings(Object.fromEntries(Object.entries(bookings).filter(([id]) => ids.has(id))));
      }
    }
    decorate();

    // Focus was on a card's button: put it on the same room's button again.
    const card = focusedRoom && cardFor(focusedRoom);
    if (card && !document.contains(active)) {
      Array.from(card.querySelectorAll("button")).find((b) => !b.disabled && !b.closest("[hidden]"))
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
          announce(`${card.dataset.name}: ${tn("rooms.spotsRemaining", change.spots)}`);
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
    cards().forEach(syncButtons);
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

  // --- The name -----------------------------------------------------------------------------------

  function showNameError() {
    const message = t("rooms.errors.name");
    let error = byId("person-error");
    if (!error) {
      error = document.createElement("p");
      error.className = "field-error";
      error.id = "person-error";
      nameForm.append(error);
    }
    error.textContent = message;
    personInput.setAttribute("aria-invalid", "true");
    const described = (personInput.getAttribute("aria-describedby") || "").split(/\s+/).filter(Boolean);
    if (!described.includes("person-error")) described.push("person-error");
    personInput.setAttribute("aria-describedby", described.join(" "));
    personInput.focus(); // its label, hint and this error are read out with it
  }

  function clearNameError() {
    byId("person-error")?.remove();
    personInput?.removeAttribute("aria-invalid");
    const described = (personInput?.getAttribute("aria-describedby") || "").split(/\s+/)
      .filter((id) => id && id !== "person-error");
    personInput?.setAttribute("aria-describedby", described.join(" "));
  }

  /** The name in the field, remembered; the field shows the remembered name when the page loads. */
  function currentPerson() {
    const person = personInput ? personInput.value.trim() : (storage.get(PERSON) || "").trim();
    if (person) storage.set(PERSON, person);
    return person;
  }

  if (personInput) {
    const remembered = storage.get(PERSON);
    if (remembered && !byId("person-error")) personInput.value = remembered;
    else if (!remembered && personInput.value.trim()) storage.set(PERSON, personInput.value.trim());
  }

  nameForm?.addEventListener("submit", (event) => {
    if (!currentPerson()) {
      event.preventDefault();
      showNameError();
      return;
    }
    clearNameError();
    // Still posted: the server's cookie is what the page books with when scripts are off. Offline
    // there is no server to post to, and remembering it here is enough for now.
    if (offline) event.preventDefault();
  });

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

  function setBusy(card, on, text) {
    const id = card.dataset.roomId;
    if (on) busy.add(id);
    else busy.delete(id);
    const target = cardFor(id);
    if (!target) return;
    const book = target.querySelector("button.book");
    if (book && text) label(book, text, target);
    for (const button of target.querySelectorAll("button.book, button.cancel")) {
      if (on) button.setAttribute("aria-busy", "true");
      else button.removeAttribute("aria-busy");
    }
    syncButtons(target);
  }

  async function book(card) {
    const id = card.dataset.roomId;
    if (busy.has(id) || offline || card.dataset.state === "full") return; // repeated clicks do nothing
    const person = personInput ? currentPerson() : ""; // signed in: the server knows who
    if (personInput && !person) {
      showNameError();
      return;
    }
    clearNameError();
    let intent = intents.get(id);
    if (!intent || intent.person !== person) {
      intent = { key: uuid(), person }; // the same key with another body would be refused
      intents.set(id, intent);
    }
    const hadFocus = card.contains(document.activeElement);
    setBusy(card, true, t("rooms.booking"));

    let response = null;
    try {
      for (let attempt = 0; ; attempt++) {
        response = await fetch(`/api/rooms/${encodeURIComponent(id)}/bookings`, {
          method: "POST",
          credentials: "same-origin",
          headers: {
            "Content-Type": "application/json", Accept: "application/json", "Idempotency-Key": intent.key,
            "X-CSRF-Token": csrf,
          },
          body: JSON.stringify(person ? { person } : {}),
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

    setBusy(card, false, t("rooms.book"));
    card = cardFor(id); // the lists may have been redrawn meanwhile
    if (!card) return;
    const name = card.dataset.name;

    if (!response) {
      say(card, t("rooms.errors.network"), "error");
      moveFocus(card, hadFocus, card.querySelector("button.book"));
      return;
    }
    if (response.status === 201) {
      intents.delete(id);
      const { booking, spots } = await response.json();
      rememberBooking(id, booking.id);
      if (typeof spots === "number") setSpots(card, spots);
      showBooked(card, booking.id);
      say(card, t("rooms.bookedMessage", { name }), "success");
      moveFocus(card, hadFocus, card.querySelector("button.cancel"));
      if (serverKnowsBookings()) reloadQuietly(); // the server's list of this person's bookings
      return;
    }

    const problem = await problemOf(response);
    const type = String(problem.type || "");
    if (response.status < 500 && response.status !== 429) intents.delete(id); // a definite no
    let message;
    if (response.status === 409 && type.endsWith("room-full")) {
      message = t("rooms.errors.full");
      setSpots(card, 0);
    } else if (response.status === 409 && type.endsWith("already-booked")) {
      message = t("rooms.errors.already");
    } else {
      const reason = problem.detail || problem.title || response.statusText || response.status;
      message = t("rooms.errors.failed", { reason });
      if (response.status === 404) reloadQuietly();
    }
    say(card, message, "error");
    moveFocus(card, hadFocus, card.querySelector("button.book"));
  }

  /** Cancels the room's booking: the card's own, or `bookingId` from the list of the person's bookings. */
  async function cancel(card, bookingId = null, fromList = false) {
    const id = card.dataset.roomId;
    bookingId ||= knownBookings()[id];
    if (!bookingId || busy.has(id) || offline) return;
    const hadFocus = fromList || card.contains(document.activeElement);
    setBusy(card, true);
    let response = null;
    try {
      response = await fetch(`/api/rooms/${encodeURIComponent(id)}/bookings/${encodeURIComponent(bookingId)}`, {
        method: "DELETE", credentials: "same-origin", headers: { Accept: "application/json", "X-CSRF-Token": csrf },
      });
    } catch {
      response = null;
    }
    setBusy(card, false);
    card = cardFor(id);
    if (!card) return;

    if (response && (response.ok || response.status === 404)) {
      // 404: the booking is gone already (cancelled elsewhere): this device forgets it too.
      rememberBooking(id, null);
      byId("my-bookings-list")?.querySelector(`li[data-booking-id="${CSS.escape(bookingId)}"]`)?.remove();
      showBooked(card, null);
      say(card, t("rooms.cancelledMessage", { name: card.dataset.name }), "success");
      moveFocus(card, hadFocus, card.querySelector("button.book"));
      if (serverKnowsBookings()) reloadQuietly(); // spots and the list, as the server has them
      else refresh(); // the spot given back, exactly (a 204 says no number)
      return;
    }
    // The server's reason, or (no answer) that the device seems offline.
    say(card, response ? (await problemOf(response)).detail || `${response.status}` : t("rooms.offline"), "error");
    moveFocus(card, hadFocus, card.querySelector("button.cancel"));
  }

  root.addEventListener("submit", (event) => {
    const form = event.target.closest?.(".book-form");
    if (form) {
      event.preventDefault();
      book(form.closest(".room-card"));
      return;
    }
    // A signed-in person's list of bookings: cancelled in place too.
    const item = event.target.closest?.("#my-bookings-list li[data-room-id][data-booking-id]");
    const card = item && cardFor(item.dataset.roomId);
    if (card) {
      event.preventDefault();
      cancel(card, item.dataset.bookingId, true);
    }
  });
  root.addEventListener("click", (event) => {
    const button = event.target.closest?.("button.cancel");
    if (button) cancel(button.closest(".room-card"));
  });

  // --- Start --------------------------------------------------------------------------------------

  if (refreshButton) refreshButton.hidden = false;
  showMode();
  decorate();
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
