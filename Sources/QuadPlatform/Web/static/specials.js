// Specials: keeps the mosaic at /specials live, and draws the manager's live preview.
// The mosaic is rendered by the server (one layout rule, in QuadCore); on a `special` event from
// /api/events, or on the polling fallback (every few minutes, jittered, paused while hidden), this
// fetches /specials/mosaic again (ETag: unchanged costs a 304) and swaps it in. Offline, the last
// mosaic stays with a note. No build step; every visible text comes from the server's templates.
(() => {
  "use strict";
  const byId = (id) => document.getElementById(id);

  const mosaicPage = byId("specials");
  if (mosaicPage) live(mosaicPage);
  const managerForm = byId("special-form");
  if (managerForm) preview(managerForm);

  function live(root) {
    const mosaic = byId("specials-mosaic");
    const offlineBanner = byId("specials-offline");
    const errorBanner = byId("specials-error");
    const announcer = byId("specials-live");
    const refreshMs = Math.max(5, Number(root.dataset.refreshSeconds) || 300) * 1000;
    const jitter = (ms) => ms * (0.8 + Math.random() * 0.4); // ±20 %: many open pages do not poll in step
    let offline = !navigator.onLine;
    let timer = null;
    let source = null;
    let loading = false;
    let again = false;

    const setState = () => {
      root.dataset.live = offline ? "offline" : source && source.readyState === EventSource.OPEN ? "stream" : "poll";
      if (offlineBanner) offlineBanner.hidden = !offline;
    };

    async function refresh() {
      if (loading) { again = true; return; }
      loading = true;
      try {
        const response = await fetch("/specials/mosaic", { headers: { Accept: "text/html" }, cache: "no-cache" });
        if (!response.ok) throw new Error(String(response.status));
        const html = await response.text();
        if (html.trim() !== mosaic.innerHTML.trim()) {
          // A keyboard or screen-reader user keeps their place: the tile they were on keeps the focus.
          const focused = document.activeElement && document.activeElement.closest(".special-cell");
          mosaic.innerHTML = html;
          const refocus = focused && mosaic.querySelector(`.special-cell[data-id="${CSS.escape(focused.dataset.id)}"] a`);
          if (refocus) refocus.focus();
          if (announcer) announcer.textContent = announcer.dataset.updated || "";
          root.dataset.version = String(Number(root.dataset.version || "0") + 1);
        }
        errorBanner.hidden = true;
        root.dataset.loaded = String(Date.now());
      } catch {
        // Offline: keep the last mosaic, which the banner explains. Online: say so, with Retry.
        if (!navigator.onLine) { offline = true; setState(); } else errorBanner.hidden = false;
      } finally {
        loading = false;
        if (again) { again = false; refresh(); }
      }
    }

    function schedule() {
      clearTimeout(timer);
      timer = null;
      if (document.hidden || offline) return;
      timer = setTimeout(async () => { await refresh(); schedule(); }, jitter(refreshMs));
    }

    function connect() {
      if (source || !("EventSource" in window) || document.hidden || offline) return;
      source = new EventSource("/api/events?types=special");
      source.addEventListener("open", setState);
      source.addEventListener("special", () => refresh());
      source.addEventListener("reset", () => refresh());
      source.addEventListener("error", () => {
        setState();
        if (source && source.readyState === EventSource.CLOSED) { source = null; setTimeout(connect, jitter(5000)); }
      });
    }

    function disconnect() {
      if (source) { source.close(); source = null; }
    }

    byId("specials-retry").addEventListener("click", () => refresh());
    window.addEventListener("offline", () => { offline = true; disconnect(); setState(); schedule(); });
    window.addEventListener("online", () => { offline = false; setState(); refresh(); connect(); schedule(); });
    document.addEventListener("visibilitychange", () => {
      if (document.hidden) { disconnect(); clearTimeout(timer); timer = null; return; }
      refresh(); connect(); schedule(); // back on the tab: catch up at once
    });
    setState();
    connect();
    schedule();
  }

  // The manager's form: a tile at phone size that follows what is typed.
  function preview(form) {
    const section = byId("special-preview");
    const cell = byId("preview-cell");
    const canvas = Number(form.dataset.canvasUnit) || 16;
    const currency = form.dataset.currency || "USD";
    const lang = document.documentElement.lang || "en";
    const field = (name) => form.elements.namedItem(name);
    const cents = (text) => {
      const match = /^(\d{1,7})(?:\.(\d{1,2}))?$/.exec((text || "").trim());
      return match ? Number(match[1]) * 100 + Number((match[2] || "0").padEnd(2, "0")) : null;
    };
    // As QuadCore's Currency.format writes amounts on the tiles: "$1,234.50"; "1 234,50 $".
    const symbol = form.dataset.currencySymbol || currency;
    const format = (value) => {
      const whole = String(Math.floor(value / 100));
      const fraction = String(value % 100).padStart(2, "0");
      const grouped = (separator) => whole.replace(/\B(?=(\d{3})+$)/g, separator);
      if (lang.startsWith("fr")) return `${grouped("\u202F")},${fraction}\u00A0${symbol}`;
      return (symbol.length === 1 ? symbol : symbol + "\u00A0") + `${grouped(",")}.${fraction}`;
    };
    const clamp = (value, max) => Math.min(max, Math.max(1, Number.parseInt(value, 10) || 1));

    function update() {
      cell.style.setProperty("--w", String(clamp(field("width").value, canvas)));
      cell.style.setProperty("--h", String(clamp(field("height").value, 2 * canvas)));
      byId("preview-name").textContent = field("display_name").value;
      byId("preview-promotion").textContent = field("promotion").value.trim();
      const price = cents(field("price").value);
      const original = cents(field("original_price").value);
      byId("preview-price").textContent = price === null ? field("price").value : format(price);
      const reduced = price !== null && original !== null && original > price;
      byId("preview-original").textContent = reduced ? format(original) : "";
      byId("preview-original").hidden = !reduced;
      // The saving as QuadCore's PriceComparison works it out: whole percent, rounded half up, none at 0 %.
      const savings = byId("preview-savings");
      const percent = reduced ? Math.floor(((original - price) * 200 + original) / (original * 2)) : 0;
      savings.textContent = percent > 0 ? savings.dataset.format.replace("{percent}", String(percent)) : "";
      savings.hidden = percent <= 0;
    }
    form.addEventListener("input", update);
    section.hidden = false;

    // An image is uploaded as soon as it is chosen; the form then sends its path.
    const upload = byId("f-image-upload");
    const file = byId("f-image-file");
    const status = byId("f-image-status");
    upload.hidden = false;
    file.addEventListener("change", async () => {
      const chosen = file.files && file.files[0];
      if (!chosen) return;
      status.textContent = form.dataset.uploading;
      try {
        const response = await fetch("/api/images", {
          method: "POST", credentials: "same-origin", body: chosen,
          headers: { "Content-Type": chosen.type || "application/octet-stream", "X-CSRF-Token": form.dataset.csrf },
        });
        if (!response.ok) throw new Error(String(response.status));
        const image = await response.json();
        byId("f-image").value = image.url;
        byId("preview-image").src = image.url;
        byId("preview-image").hidden = false;
        status.textContent = form.dataset.uploaded;
      } catch {
        status.textContent = form.dataset.uploadFailed;
      }
    });
    update();
  }
})();
