// The Rooms page, made live. The server renders a page that works on its own (forms post, the page
// reloads); this script only adds: the lists follow what people book (live.js merges the server's own
// fragment of the page), and booking and cancelling happen in place, with their outcome said on the card.
// Availability, order and every text come from the server (QuadCore's rules, its translations).
import { startLive, announce } from "./live.js";
import { t } from "./i18n.js";

const byId = (id) => document.getElementById(id);
const page = byId("rooms");
if (page) rooms(page);

function rooms(root) {
  const liveRegion = byId("rooms-live");
  const csrf = root.dataset.csrf || "";
  const cardFor = (id) => byId(`room-${id}`);
  const offline = () => root.dataset.live === "offline";
  const busy = new Map(); // room id -> "book" or "cancel", while that request is under way

  // The button that replaces the one just pressed (Cancel after Book) ignores presses for a moment,
  // so a double tap or a held Enter never books and then cancels at once.
  const swappedAt = new Map();
  const justSwapped = (id, ms = 800) => Date.now() - (swappedAt.get(id) ?? 0) < ms;

  // What each card last said (data-announce, by card id), to say only what changed.
  const heard = new Map(Array.from(root.querySelectorAll(".room-card"), (card) => [card.id, card.dataset.announce]));
  const live = startLive({
    root,
    region: byId("rooms-lists"),
    url: "/rooms?fragment=live",
    events: ["room"],
    pollSeconds: Number(root.dataset.refreshSeconds) || 30,
    minIntervalMs: 500,
    morphOptions: { key: "data-booking-id", keep: [".card-message"] },
    banners: { offline: byId("rooms-offline"), error: byId("rooms-error") },
    freshness: byId("rooms-updated"),
    onApplied(changes) {
      // Spots that changed under the reader's eyes are said ("Mina: 3 spots remaining"), also when the
      // room moved to the other list (a new card there). Not for a room this page has just booked or
      // cancelled: its card says that already.
      const said = changes.filter((change) => heard.get(change.key) !== change.after &&
        !justSwapped(change.element.dataset.roomId, 5000));
      for (const change of changes) heard.set(change.key, change.after);
      if (said.length) announce(liveRegion, said.map((change) => change.after).join(". "));
      syncAll();
    },
  });

  /** The room's Book and Cancel buttons (on its card and in the list of bookings) as things stand. */
  function syncButtons(id) {
    for (const button of root.querySelectorAll(`[data-room-id="${CSS.escape(id)}"] form button`)) {
      const isBook = button.matches(".book");
      const full = isBook && cardFor(id)?.dataset.state === "full";
      button.disabled = offline() || busy.has(id) || full;
      // Offline, the buttons stay announced, as unavailable: the banner says why.
      if (offline()) button.setAttribute("aria-disabled", "true");
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
  }

  /** A message on the card (seen) and in the live region (heard). */
  function say(card, text, kind) {
    announce(liveRegion, text);
    if (!card) return;
    card.querySelector(".card-message")?.remove();
    const message = document.createElement("p");
    message.className = `card-message card-message-${kind}`;
    message.setAttribute("role", "status");
    message.tabIndex = -1; // focus can land here when the card has no button left
    message.textContent = text;
    card.querySelector(".room-body").append(message);
  }

  // After booking or cancelling room `id`, focus goes to what replaced the button pressed (gone, or
  // disabled while busy), unless the person has moved on meanwhile: focus is on something of another room.
  function moveFocus(id, ...targets) {
    const active = document.activeElement;
    if (active && active !== document.body && active.closest("[data-room-id]")?.dataset.roomId !== id) return;
    targets.find((e) => e?.isConnected && !e.disabled && !e.closest("[hidden]"))?.focus();
  }

  /** The server's lists now, whole (not a 304: what this page did changed them). */
  async function redraw(id) {
    swappedAt.set(id, Date.now());
    await live.refresh({ revalidate: false });
  }

  for (const button of [byId("rooms-refresh"), byId("rooms-retry")]) {
    button?.addEventListener("click", async () => {
      if (await live.refresh()) announce(liveRegion, t("time.justNow"));
    });
  }
  window.addEventListener("offline", syncAll);
  window.addEventListener("online", syncAll);

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
  const retryAfter = (response) => 1000 * (Number(response.headers.get("Retry-After")) || 0);

  function setBusy(id, what) {
    if (what) busy.set(id, what);
    else busy.delete(id);
    syncButtons(id);
  }

  /** A booking until the building closes (`{}`, the original apps' booking), or from now for the length chosen. */
  function bodyOf(card) {
    const length = card.querySelector(".book-length");
    const minutes = Number(length?.value);
    return minutes && length.dataset.start ? { start: length.dataset.start, minutes } : {};
  }

  async function book(card) {
    const id = card.dataset.roomId;
    if (busy.has(id) || offline() || card.dataset.state === "full") return; // repeated clicks do nothing
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
          body: JSON.stringify(bodyOf(card)), // the server knows who is signed in
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

    if (!response) {
      say(cardFor(id), t("rooms.errors.network"), "error");
      moveFocus(id, cardFor(id)?.querySelector("button.book"), cardFor(id)?.querySelector(".card-message"));
      return;
    }
    if (response.status === 201) {
      intents.delete(id);
      say(cardFor(id), t("rooms.bookedMessage", { name: card.dataset.name }), "success");
      await redraw(id);
      moveFocus(id, cardFor(id)?.querySelector(".cancel-one summary"), cardFor(id)?.querySelector(".card-message"));
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
    } else if (response.status === 409 && type.endsWith("already-booked")) {
      message = t("rooms.errors.already"); // booked elsewhere: the redrawn card shows that booking
    } else {
      message = t("rooms.errors.failed", { reason: reasonOf(problem, response) });
    }
    say(cardFor(id), message, "error");
    if ([401, 404, 409].includes(response.status)) await redraw(id); // the server knows better now
    moveFocus(id, cardFor(id)?.querySelector("button.book"), cardFor(id)?.querySelector(".card-message"));
  }

  /** Cancels a booking of room `id`; `from` is the card or the item of the list of bookings it was asked from. */
  async function cancel(id, bookingId, from) {
    if (!bookingId || busy.has(id) || offline()) return;
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
    const name = cardFor(id)?.dataset.name ?? from.querySelector("span")?.textContent.trim();

    if (response && (response.ok || response.status === 404)) {
      // 404: the booking is gone already (cancelled elsewhere); the page forgets it too.
      say(cardFor(id), t("rooms.cancelledMessage", { name }), "success");
      await redraw(id);
      moveFocus(id, cardFor(id)?.querySelector("button.book"), cardFor(id)?.querySelector(".card-message"));
      return;
    }
    const message = !response ? t("rooms.errors.cancelFailed", { reason: t("rooms.offline") })
      : response.status === 401 ? t("rooms.signInToBook")
        : t("rooms.errors.cancelFailed", { reason: reasonOf(await problemOf(response), response) });
    say(cardFor(id), message, "error");
    if (response?.status === 401) await redraw(id);
    moveFocus(id, from.isConnected ? from.querySelector("button") : null,
      cardFor(id)?.querySelector(".cancel-one summary"), cardFor(id)?.querySelector(".card-message"));
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

  finder(byId("finder-form"), byId("rooms-found"), liveRegion);

  const refreshButton = byId("rooms-refresh");
  if (refreshButton) refreshButton.hidden = false;
  syncAll();
}

/**
 * The finder answers as its fields change (Find is for pages without this script): the server's own answer, as
 * the fragment it draws into the page. While a new answer is on its way the old one's Book buttons wait, so a tap
 * never books what was asked before.
 */
function finder(form, results, liveRegion) {
  if (!form || !results) return;
  let asking = null;
  let typing = 0;
  const queryOf = () => new URLSearchParams(new FormData(form)).toString();
  // What the answer shown was asked with: asking again for the same (a field left after typing) would only make
  // its Book buttons wait, and lose the tap that left the field.
  let answered = results.querySelector("#found-heading") ? queryOf() : null;

  async function ask() {
    if (!form.checkValidity()) return true; // the browser's own messages, on Find
    const query = queryOf();
    if (query === answered && !asking) return true;
    asking?.abort();
    const controller = new AbortController();
    asking = controller;
    results.setAttribute("aria-busy", "true");
    for (const button of results.querySelectorAll("button")) button.disabled = true;
    try {
      const response = await fetch(`/rooms?${query}&fragment=found`, {
        credentials: "same-origin", headers: { Accept: "text/html" }, signal: controller.signal,
      });
      if (!response.ok) throw new Error(String(response.status));
      const html = await response.text();
      if (asking !== controller) return true;
      results.innerHTML = html;
      answered = query;
      history.replaceState(history.state, "", `/rooms?${query}`);
      const heading = results.querySelector("#found-heading, #finder-error");
      if (heading) announce(liveRegion, heading.textContent.trim());
      return true;
    } catch (error) {
      if (error.name === "AbortError") return true;
      return false;
    } finally {
      if (asking === controller) {
        asking = null;
        results.removeAttribute("aria-busy");
        for (const button of results.querySelectorAll("button")) button.disabled = false;
      }
    }
  }

  // Answered as it changes: Find is for pages without this script (Enter in a field still asks).
  const find = form.querySelector(".finder-submit");
  if (find) find.hidden = true;
  form.addEventListener("change", () => ask());
  // A number typed is asked for once the typing pauses, not on every key.
  form.addEventListener("input", (event) => {
    if (!event.target.matches?.("input[type=number]")) return;
    clearTimeout(typing);
    typing = setTimeout(ask, 400);
  });
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearTimeout(typing);
    // Not answered in place (offline, a server fault): the form goes as it would without this script.
    if (!(await ask())) form.submit();
  });
}
