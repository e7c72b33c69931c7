// A person's day, kept live: their own `waiting` and `notice` events (an offer made, a room removed), bookings
// and books changing and the specials bring the server's fragment of the page at once (live.js); deadlines drawn by
// the server (an offer's end) bring it too. Between fetches, what is held for them counts down here. The page works
// without it.
import { startLive, announce } from "./live.js";
import { t, plural } from "./i18n.js";

const root = document.getElementById("today");
if (root) {
  const region = document.getElementById("today-live");
  const said = document.getElementById("today-announce");

  // "12 minutes left", from the deadline the server drew, on the server's clock (live.js learns it); hidden once it
  // passed (the item goes stale then).
  let now = () => Date.now();
  const countDown = () => {
    const at = now();
    for (const el of region.querySelectorAll("[data-countdown-until]")) {
      const left = Number(el.dataset.countdownUntil) - at;
      el.hidden = !(left > 0);
      if (left > 0) el.textContent = plural("today.minutesLeft", Math.ceil(left / 60000));
    }
  };
  const live = startLive({
    root,
    region,
    url: "/?fragment=live",
    events: ["waiting", "notice", "room", "book", "special"],
    pollSeconds: Number(root.dataset.refreshSeconds) || 30,
    banners: {
      offline: document.getElementById("today-offline"),
      error: document.getElementById("today-error"),
    },
    freshness: document.getElementById("today-updated"),
    onApplied: countDown,
    onEvent(type, data) {
      if (type === "waiting" && data?.change === "offered") announce(said, t("today.live"));
    },
  });
  now = live.serverNow;
  countDown();
  setInterval(countDown, 15000);
}
