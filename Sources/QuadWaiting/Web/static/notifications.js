// A person's notifications, kept live: their own `waiting` and `notice` events (an offer made, a place moved up, a
// room removed) and books changing bring the server's fragment of the page at once (live.js). The page works with its forms alone.
import { startLive, announce } from "./live.js";
import { t } from "./i18n.js";

const root = document.getElementById("notifications");
if (root) {
  const url = new URL(location.href);
  url.search = "?fragment=live";
  url.hash = "";
  const said = document.getElementById("notifications-announce");
  startLive({
    root,
    region: document.getElementById("notifications-live"),
    url: url.pathname + url.search,
    events: ["waiting", "notice", "book"],
    pollSeconds: Number(root.dataset.refreshSeconds) || 30,
    banners: {
      offline: document.getElementById("notifications-offline"),
      error: document.getElementById("notifications-error"),
    },
    freshness: document.getElementById("notifications-updated"),
    onEvent(type, data) {
      if (type === "waiting" && data?.change === "offered") announce(said, t("notifications.live"));
    },
  });
}
