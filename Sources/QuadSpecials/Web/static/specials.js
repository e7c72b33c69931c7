// Specials: keeps the mosaic at /specials live, and shows the manager the tile their form will save.
// Both are the server's markup, laid out and priced by QuadCore: this script fetches and merges it.
import { startLive, morph } from "./live.js";
import { announce } from "./i18n.js";

const byId = (id) => document.getElementById(id);

const mosaicPage = byId("specials");
if (mosaicPage) {
  const announcer = byId("specials-live");
  const live = startLive({
    root: mosaicPage,
    region: byId("specials-mosaic"),
    url: "/specials?fragment=live",
    events: ["special"],
    pollSeconds: Number(mosaicPage.dataset.refreshSeconds) || 300,
    morphOptions: { key: "data-id" },
    banners: { offline: byId("specials-offline"), error: byId("specials-error") },
    freshness: byId("specials-updated"),
    onApplied: (changes, { changed }) => { if (changed) announce(announcer, announcer.dataset.updated); },
  });
  byId("specials-retry").addEventListener("click", () => live.refresh());
}

const specialForm = byId("special-form");
if (specialForm) preview(specialForm);

/** The manager's form: the server draws the tile from what is typed, as it will save it. */
function preview(form) {
  const row = byId("preview-row");
  let pending = 0;
  let inFlight = null;

  async function update() {
    inFlight?.abort();
    const controller = new AbortController();
    inFlight = controller;
    const fields = new URLSearchParams();
    for (const [name, value] of new FormData(form)) if (name !== "csrf" && typeof value === "string") fields.set(name, value);
    try {
      const response = await fetch(`${row.dataset.preview}?${fields}`, {
        credentials: "same-origin", headers: { Accept: "text/html" }, signal: controller.signal,
      });
      if (response.ok) morph(row, await response.text());
    } catch {
      // Aborted by the next keystroke, or offline: the preview keeps the last tile.
    }
  }

  // Every keystroke would be a request: wait until typing pauses.
  form.addEventListener("input", () => {
    clearTimeout(pending);
    pending = setTimeout(update, 150);
  });
  byId("special-preview").hidden = false;

  // Picking a product had before fills in its name, regular price, quantity and picture (each may be changed);
  // a new product starts blank.
  const product = byId("f-product");
  product?.addEventListener("change", () => {
    const chosen = product.selectedOptions[0]?.dataset ?? {};
    byId("f-name").value = chosen.name ?? "";
    byId("f-original").value = chosen.regular ?? "";
    byId("f-quantity").value = chosen.quantity ?? "";
    byId("f-image").value = chosen.image ?? "";
  });

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
      byId("f-image").value = (await response.json()).url;
      status.textContent = form.dataset.uploaded;
      update();
    } catch {
      status.textContent = form.dataset.uploadFailed;
    }
  });
  update();
}
