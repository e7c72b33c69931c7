// Timetable: keeps the page live. Shuttle countdowns tick every second; car parks and predictions
// arrive as server events (`parking`, `departure`) and a periodic refresh of /api/schedules (a student's
// page) or of the public /api/parkings and /api/departures (a visitor's page). A failed refresh keeps
// what is shown: a 500 says so with Retry, no connection shows the last timetable with a note.
(() => {
  "use strict";
  const root = document.getElementById("timetable");
  const dataNode = document.getElementById("timetable-data");
  if (!root || !dataNode) return;
  const config = JSON.parse(document.getElementById("timetable-strings").textContent);
  // A visitor's page only has what is public: it keeps its own copy, and drops a student's copy left
  // in this browser (someone signed out on a shared computer).
  const isPublic = root.dataset.source === "public";
  const studentKey = "quad.timetable.last";
  const storageKey = isPublic ? "quad.timetable.public" : studentKey;
  const publicStops = 6;
  const refreshMs = Math.max(5, Number(root.dataset.refreshSeconds) || 30) * 1000;
  const parkingList = document.getElementById("parking-list");
  const stopList = document.getElementById("stop-list");
  const errorBanner = document.getElementById("timetable-error");
  const offlineBanner = document.getElementById("timetable-offline");
  const STALE_READING_MS = 10 * 60 * 1000;

  // The server's clock, as its last answer's Date header gave it: a device clock set wrong must not make
  // every reading look stale or every bus late. (The header has whole seconds: smaller gaps are noise.)
  let clockOffset = 0;
  function serverNow() { return Date.now() + clockOffset; }
  function learnClock(response) {
    const date = Date.parse(response.headers.get("Date") || "");
    if (Number.isNaN(date)) return;
    const offset = date - Date.now();
    clockOffset = Math.abs(offset) > 2000 ? offset : 0;
  }

  function t(key, args) {
    let text = config.strings[key] || key;
    for (const [name, value] of Object.entries(args || {})) text = text.split("{" + name + "}").join(String(value));
    return text;
  }
  function plural(key, count) {
    const forms = config.plurals[key] || {};
    const category = config.lang === "fr" ? (count < 2 ? "one" : "other") : (count === 1 ? "one" : "other");
    const text = forms[String(count)] || forms[category] || forms.other || key;
    return text.split("{count}").join(String(count));
  }
  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // --- Car parks ---------------------------------------------------------------------------------

  function parkingItem(park) {
    const li = el("li", "parking");
    li.dataset.parkingId = park.id;
    li.dataset.capacity = park.capacity;
    li.append(el("span", "parking-name", park.name));
    const free = el("span", "parking-free");
    free.append(el("strong", "parking-count"), " ", el("span", "muted parking-of"));
    li.append(free, el("span", "badge parking-state"), el("span", "parking-live"));
    updateParking(li, park.slot, park.state, park.updatedAt);
    return li;
  }

  function updateParking(li, free, state, updatedAt) {
    li.dataset.state = state;
    li.dataset.free = free;
    if (updatedAt) li.dataset.updatedAt = updatedAt;
    li.querySelector(".parking-count").textContent = plural("timetable.freePlaces", free);
    li.querySelector(".parking-of").textContent = t("timetable.of", { capacity: li.dataset.capacity });
    const badge = li.querySelector(".parking-state");
    badge.className = "badge parking-state state-" + state;
    badge.textContent = t("timetable.state." + state);
    markLiveness(li);
  }

  function markLiveness(li) {
    const updated = Date.parse(li.dataset.updatedAt || "");
    const live = !Number.isNaN(updated) && serverNow() - updated <= STALE_READING_MS;
    const label = li.querySelector(".parking-live");
    label.classList.toggle("stale", !live);
    label.textContent = live ? t("timetable.live") : t("timetable.notLive");
  }

  // --- Shuttle -----------------------------------------------------------------------------------

  function stopItem(stop) {
    const li = el("li", "stop");
    li.dataset.stopId = stop.id;
    li.append(el("span", "stop-route", stop.departure + " → " + stop.arrival));
    li.append(el("time", "stop-time"));
    const countdown = el("span", "stop-countdown");
    const clock = el("span", "stop-clock muted");
    clock.setAttribute("aria-hidden", "true");
    countdown.append(el("strong", "stop-minutes"), " ", clock);
    li.append(countdown, el("span", "stop-mode"));
    updateStop(li, stop.expectedAt, stop.live, stop.predicted_arrival_date);
    return li;
  }

  function updateStop(li, expectedAt, live, wallClock) {
    li.dataset.expectedAt = expectedAt;
    li.dataset.live = String(live);
    if (wallClock) li.querySelector(".stop-time").textContent = wallClock.slice(11, 16);
    const mode = li.querySelector(".stop-mode");
    mode.classList.toggle("stale", !live);
    mode.textContent = live ? t("timetable.live") : t("timetable.scheduled");
    tickStop(li);
  }

  // "yyyy-mm-ddTHH:mm:ss" on the campus clock for an ISO instant (null when unreadable).
  function campusWallClock(instant) {
    const date = new Date(instant);
    if (Number.isNaN(date.getTime())) return null;
    let zone;
    try { zone = JSON.parse(dataNode.textContent).timeZone; } catch { zone = undefined; }
    try {
      const parts = {};
      const format = new Intl.DateTimeFormat("en-GB", {
        timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit",
        hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23",
      });
      for (const part of format.formatToParts(date)) parts[part.type] = part.value;
      return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}`;
    } catch {
      return null;
    }
  }

  function sortStops() {
    if (!stopList) return;
    const items = [...stopList.querySelectorAll("li.stop")];
    const sorted = items.slice().sort((a, b) => Date.parse(a.dataset.expectedAt) - Date.parse(b.dataset.expectedAt));
    if (sorted.some((li, index) => li !== items[index])) stopList.append(...sorted);
  }

  function tickStop(li) {
    const ms = Date.parse(li.dataset.expectedAt) - serverNow();
    if (ms < -30000) { li.remove(); return; }
    const seconds = Math.max(0, Math.floor(ms / 1000));
    const minutes = Math.floor(seconds / 60);
    const text = plural("timetable.minutes", minutes);
    const strong = li.querySelector(".stop-minutes");
    if (strong.textContent !== text) strong.textContent = text;
    li.querySelector(".stop-clock").textContent =
      minutes < 60 ? minutes + ":" + String(seconds % 60).padStart(2, "0") : "";
  }

  // --- The day ------------------------------------------------------------------------------------

  // After today's last class (or at the campus midnight) the page fetches itself again and swaps in the
  // heading, the date and week, and the classes: the next teaching day's, and why.
  let dayRefreshing = false;
  async function refreshDay() {
    if (dayRefreshing) return;
    dayRefreshing = true;
    let next = "";
    try {
      const response = await fetch(location.pathname, {
        headers: { Accept: "text/html" }, credentials: "same-origin", cache: "no-store",
      });
      if (!response.ok) throw new Error("HTTP " + response.status);
      const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
      const freshRoot = fresh.getElementById("timetable");
      // Signed out in another tab meanwhile: leave the page as it is.
      if (!freshRoot || freshRoot.dataset.source !== root.dataset.source) throw new Error("another page");
      for (const id of ["timetable-head", "timetable-classes"]) {
        const node = fresh.getElementById(id);
        const old = document.getElementById(id);
        if (node && old) old.replaceWith(document.adoptNode(node));
      }
      next = freshRoot.dataset.changesAt || "";
    } catch {
      // Offline or refused: try again in a minute.
    } finally {
      // Never sooner than a minute when the server does not agree yet (a clock running ahead).
      const at = Date.parse(next);
      root.dataset.changesAt = new Date(Number.isNaN(at) || at <= serverNow() ? serverNow() + 60000 : at).toISOString();
      dayRefreshing = false;
    }
  }

  function tick() {
    const changesAt = Date.parse(root.dataset.changesAt || "");
    if (!Number.isNaN(changesAt) && serverNow() >= changesAt) refreshDay();
    if (stopList) for (const li of stopList.querySelectorAll("li.stop")) tickStop(li);
    if (parkingList) for (const li of parkingList.querySelectorAll("li.parking")) markLiveness(li);
    const now = serverNow();
    for (const card of document.querySelectorAll(".class-card")) {
      const going = Date.parse(card.dataset.startAt) <= now && now < Date.parse(card.dataset.endAt);
      card.classList.toggle("in-progress", going);
      const badge = card.querySelector(".badge-progress");
      if (badge) badge.hidden = !going;
    }
  }

  // --- Refresh -----------------------------------------------------------------------------------

  function render(data) {
    if (parkingList && Array.isArray(data.parkings)) parkingList.replaceChildren(...data.parkings.map(parkingItem));
    if (stopList && Array.isArray(data.stops)) {
      const items = data.stops.map(stopItem);
      stopList.replaceChildren(...(items.length ? items : [el("li", "muted", t("timetable.noDepartures"))]));
    }
  }

  async function load(url) {
    const response = await fetch(url, {
      headers: { Accept: "application/json" }, credentials: "same-origin", cache: "no-store",
    });
    learnClock(response);
    if (!response.ok) throw Object.assign(new Error("HTTP " + response.status), { status: response.status });
    return response.json();
  }

  // The same shape as the page's data: car parks, the next departures and the campus time zone.
  async function loadPublic() {
    const [parkings, departures] = await Promise.all([load("/api/parkings"), load("/api/departures")]);
    let timeZone;
    try { timeZone = JSON.parse(dataNode.textContent).timeZone; } catch { timeZone = undefined; }
    return { parkings: parkings.parkings, stops: departures.departures.slice(0, publicStops), timeZone };
  }

  let refreshing = false;
  let shownSchedules = null;
  try { shownSchedules = JSON.stringify(JSON.parse(dataNode.textContent).schedules || null); } catch { /* none */ }
  let timer = null;
  async function refresh() {
    if (refreshing) return;
    refreshing = true;
    clearTimeout(timer);
    try {
      const data = isPublic ? await loadPublic() : await load("/api/schedules");
      render(data);
      // The week's classes changed (an admin moved a room, added an enrolment): redraw the day's cards.
      if (!isPublic && Array.isArray(data.schedules)) {
        const schedules = JSON.stringify(data.schedules);
        if (shownSchedules !== null && schedules !== shownSchedules) refreshDay();
        shownSchedules = schedules;
      }
      try { localStorage.setItem(storageKey, JSON.stringify(data)); } catch { /* private mode */ }
      errorBanner.hidden = true;
      offlineBanner.hidden = true;
    } catch (error) {
      // What is shown stays: a server error offers Retry; no connection says the timetable is the last one.
      if (error.status) {
        errorBanner.hidden = false;
      } else {
        offlineBanner.hidden = false;
      }
    } finally {
      refreshing = false;
      timer = setTimeout(refresh, refreshMs);
    }
  }

  document.getElementById("timetable-retry").addEventListener("click", () => {
    errorBanner.hidden = true;
    refresh();
  });
  window.addEventListener("offline", () => { offlineBanner.hidden = false; });
  window.addEventListener("online", () => refresh());

  // --- Live events -------------------------------------------------------------------------------

  function connect() {
    if (!("EventSource" in window)) return;
    const stream = new EventSource("/api/events?types=parking,departure");
    stream.addEventListener("parking", (event) => {
      const change = JSON.parse(event.data);
      // An admin added, changed or removed a car park: reload the list.
      if (change.refresh) {
        refresh();
        return;
      }
      const li = parkingList && parkingList.querySelector(`li[data-parking-id="${CSS.escape(change.id)}"]`);
      if (li) updateParking(li, change.free, change.state, change.updatedAt);
    });
    stream.addEventListener("departure", (event) => {
      const change = JSON.parse(event.data);
      if (change.refresh) {
        refresh();
        return;
      }
      const li = stopList && stopList.querySelector(`li[data-stop-id="${CSS.escape(change.id)}"]`);
      if (!li) return;
      // The shown time follows the prediction (the campus wall clock the server sends, or worked out
      // from the instant), and the list stays in the order the buses come.
      updateStop(li, change.expectedAt, change.live, change.predicted_arrival_date || campusWallClock(change.expectedAt));
      sortStops();
    });
    stream.addEventListener("reset", () => refresh());
  }

  // Offline on arrival (a cached page): the last timetable seen, with the note.
  try {
    const saved = JSON.parse(localStorage.getItem(storageKey) || "null");
    if (!navigator.onLine && saved) {
      render(saved);
      offlineBanner.hidden = false;
    } else {
      localStorage.setItem(storageKey, dataNode.textContent);
    }
    if (isPublic) localStorage.removeItem(studentKey);
  } catch { /* unreadable: keep the page as drawn */ }

  tick();
  setInterval(tick, 1000);
  connect();
  // A page drawn more than two minutes away from this device's clock (a clock set wrong, or a page kept from
  // earlier) refreshes at once, which also learns the server's clock.
  let drawnAt = NaN;
  try { drawnAt = Date.parse(JSON.parse(dataNode.textContent).generatedAt); } catch { /* none */ }
  const farOff = !Number.isNaN(drawnAt) && Math.abs(drawnAt - Date.now()) > 120000;
  timer = setTimeout(refresh, farOff ? 0 : refreshMs);
})();
