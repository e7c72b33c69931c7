// Timetable: keeps the page live. The server draws the day, the car parks and the shuttles (QuadCore's
// rules: which day to show, which readings are live, which buses are still to come); live.js merges that
// fragment again when the feeds change and at the moments the server marked (a class starts or ends, a bus
// leaves, the day is over). What is left here is what changes with every second: the countdowns.
import { startLive } from "./live.js";
import { plural } from "./i18n.js";

const page = document.getElementById("timetable");
if (page) timetable(page);

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

  // "in 4 minutes" and 4:05, on the server's clock: a device clock set wrong must not move the buses.
  function countDown() {
    for (const stop of region.querySelectorAll("li.stop")) {
      const seconds = Math.max(0, Math.floor((Number(stop.dataset.leavesAt) - live.serverNow()) / 1000));
      const minutes = Math.floor(seconds / 60);
      const text = plural("timetable.minutes", minutes);
      const strong = stop.querySelector(".stop-minutes");
      if (strong.textContent !== text) strong.textContent = text;
      stop.querySelector(".stop-clock").textContent =
        minutes < 60 ? `${minutes}:${String(seconds % 60).padStart(2, "0")}` : "";
    }
  }
  countDown();
  setInterval(countDown, 1000);
}
