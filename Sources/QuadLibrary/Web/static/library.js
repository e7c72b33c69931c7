// The Library page: sharing, the editor's unsaved-changes guard, the sort applied when chosen, and the
// list and the book shown kept live (live.js merges the server's own fragment of the page). Everything
// here only adds: the page works with its forms alone.
import { startLive, announce } from "./live.js";
import { t } from "./i18n.js";

const root = document.getElementById("library");
if (root) library();

function library() {
  const liveRegion = document.getElementById("library-live");

  // --- The sort applies as soon as it is chosen ----------------------------------------------------
  document.addEventListener("change", (event) => {
    if (event.target.id === "library-sort") event.target.form.submit();
  });

  // --- Share: the system sheet where there is one, else copy the link ------------------------------
  // Copying works without the Clipboard API too (plain http on a campus network); when nothing can copy,
  // the link is offered in a prompt, selected, to copy by hand.
  async function copy(text, button) {
    if (navigator.clipboard && navigator.clipboard.writeText) {
      try {
        await navigator.clipboard.writeText(text);
        return true;
      } catch { /* refused: copy the old way below */ }
    }
    const field = document.createElement("textarea");
    field.value = text;
    field.setAttribute("readonly", "");
    field.className = "visually-hidden";
    document.body.appendChild(field);
    field.select();
    let copied = false;
    try {
      copied = document.execCommand("copy");
    } catch { /* not copied: the caller offers the link to copy by hand */ }
    field.remove();
    button.focus();
    return copied;
  }

  // Shown once this script runs (the server draws it hidden), again after each redraw; wired once.
  const wired = new WeakSet();
  function wireShare() {
    const button = document.getElementById("book-share");
    if (!button) return;
    button.hidden = false;
    if (wired.has(button)) return;
    wired.add(button);
    button.addEventListener("click", async () => {
      const url = location.origin + location.pathname;
      const title = button.dataset.shareTitle;
      if (navigator.share) {
        try {
          await navigator.share({ title, url });
        } catch { /* closed or refused: nothing more to do */ }
        return;
      }
      if (await copy(url, button)) {
        announce(liveRegion, t("library.copied"));
        button.setAttribute("aria-describedby", "library-live");
      } else {
        window.prompt(t("library.copyPrompt"), url);
      }
    });
  }
  wireShare();

  // --- The editor asks before discarding what was typed --------------------------------------------
  const editor = document.getElementById("book-editor");
  let submitting = false;
  const snapshot = (form) => Array.from(new FormData(form).entries())
    .filter(([name]) => name !== "csrf" && name !== "etag")
    .map(([name, value]) => name + "=" + value).join("&");
  const initial = editor ? snapshot(editor) : "";
  const dirty = () => editor && !submitting && snapshot(editor) !== initial;
  if (editor) {
    editor.addEventListener("submit", () => { submitting = true; });
    const cancel = document.getElementById("book-cancel");
    cancel.addEventListener("click", (event) => {
      if (dirty() && !window.confirm(editor.dataset.guard)) {
        event.preventDefault();
        return;
      }
      submitting = true; // leaving on purpose: no second question
    });
    window.addEventListener("beforeunload", (event) => {
      if (!dirty()) return;
      event.preventDefault();
      event.returnValue = "";
    });
    const firstInvalid = editor.querySelector("[aria-invalid=true]");
    (firstInvalid || editor.querySelector("input[name=title]")).focus();
  }

  // --- Live: another person's change shows without reloading ---------------------------------------
  const url = new URL(location.href);
  url.searchParams.set("fragment", "live");
  url.hash = "";
  const live = startLive({
    root,
    region: document.getElementById("library-panes"),
    url: url.pathname + url.search,
    events: ["book"],
    pollSeconds: Number(root.dataset.refreshSeconds) || 30,
    minIntervalMs: 1000,
    morphOptions: {
      key: "data-book-id",
      // The editor is the person's own until they save or leave; a book's form in use stays as it is.
      skip: (old) => old.id === "book-editor" || (old.matches(".book-detail") && old.contains(document.activeElement)),
    },
    banners: { offline: document.getElementById("library-offline"), error: document.getElementById("library-error") },
    freshness: document.getElementById("library-updated"),
    onApplied(changes, { changed }) {
      wireShare();
      if (changed) announce(liveRegion, t("library.live"));
    },
  });
  document.getElementById("library-retry").addEventListener("click", () => live.refresh());
}
