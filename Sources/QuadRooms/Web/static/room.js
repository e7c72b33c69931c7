// A room's day: its times kept live (live.js merges the server's own fragment of the page when a room
// changes). Everything here only adds: the page works with its links and forms alone.
import { startLive, announce } from "./live.js";
import { t } from "./i18n.js";

const root = document.getElementById("room-day");
if (root) {
  const liveRegion = document.getElementById("room-live");
  const url = new URL(location.href);
  url.searchParams.set("fragment", "live");
  url.hash = "";
  const live = startLive({
    root,
    region: document.getElementById("room-day-live"),
    url: url.pathname + url.search,
    events: ["room"],
    pollSeconds: Number(root.dataset.refreshSeconds) || 30,
    minIntervalMs: 1000,
    morphOptions: {
      // The booking form in use stays as the person left it.
      skip: (old) => old.id === "book" && old.contains(document.activeElement),
    },
    banners: { offline: document.getElementById("room-offline"), error: document.getElementById("room-error") },
    freshness: document.getElementById("room-updated"),
    onApplied(changes, { changed }) {
      if (changed) announce(liveRegion, t("rooms.day.live"));
    },
  });
  document.getElementById("room-retry").addEventListener("click", () => live.refresh());
}
