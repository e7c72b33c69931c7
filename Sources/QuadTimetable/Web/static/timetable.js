// Timetable: keeps the page live. The server draws the day, the car parks and the shuttles (QuadCore's
// rules: which day to show, which readings are live, which buses are still to come); live.js merges that
// fragment again when the feeds change and at the moments the server marked (a class starts or ends, a bus
// leaves, the day is over). What is left here is what changes with every second: the countdowns.
import { startLive } from "./live.js";

const page = document.getElementById("timetable");
if (page) timetable(page);

// The week on a phone is a strip of days one day wide: it opens on today (or the day a link named).
const days = document.querySelector(".week-columns");
if (days) {
  const shown = (location.hash && document.getElementById(location.hash.slice(1))) || days.querySelector(".is-today");
  if (shown && days.contains(shown)) days.scrollLeft = shown.offsetLeft - days.offsetLeft;
}

function timetable(root) {
  const region = document.getElementById("timetable-live");
  const url = new URL(location.href);
  url.searchParams.set("fragment", "live");
  const live = startLive({
    root,
    region,
    url: url.pathname + url.search,
    events: ["parking", "departure"],
    pollSeconds: Number(root.dataset.refreshSeconds) || 30,
    // The simulator moves every car park at once: one redraw for the lot.
    minIntervalMs: 2000,
    banners: { offline: document.getElementById("timetable-offline"), error: document.getElementById("timetable-error") },
    freshness: document.getElementById("timetable-updated"),
    onApplied: countDown,
  });
  document.getElementById("timetable-retry").addEventListener("click", () => live.refresh());

  // The words ("in 4 min") are the server's, drawn again when they change (data-refresh-at); in a bus's last minutes
  // a clock ticks the seconds beside them, on the server's clock: a device clock set wrong must not move the buses.
  function countDown() {
    const now = live.serverNow();
    for (const stop of region.querySelectorAll("li.stop[data-ticks-from]")) {
      const seconds = Math.max(0, Math.floor((Number(stop.dataset.leavesAt) - now) / 1000));
      const text = now >= Number(stop.dataset.ticksFrom) ? `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}` : "";
      const clock = stop.querySelector(".stop-clock");
      if (clock.textContent !== text) clock.textContent = text;
    }
  }
  countDown();
  setInterval(countDown, 1000);
}
