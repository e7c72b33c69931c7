// The Library page: sharing, the editor's unsaved-changes guard, the sort applied when chosen, and live
// updates from `book` events. Everything here only adds: the page works with its forms alone.
"use strict";
(() => {
  const root = document.getElementById("library");
  if (!root) return;
  let strings = {};
  try {
    strings = JSON.parse(document.getElementById("library-strings").textContent);
  } catch { /* no strings: the keys stand in */ }
  const t = (key) => strings[key] || key;
  const live = document.getElementById("library-live");
  const announce = (text) => {
    live.textContent = "";
    window.setTimeout(() => { live.textContent = text; }, 50);
  };

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

  function wireShare() {
    const button = document.getElementById("book-share");
    if (!button) return;
    button.hidden = false;
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
        announce(t("library.copied"));
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
  let refreshing = false;
  let again = false;
  async function refresh() {
    if (refreshing) { again = true; return; }
    refreshing = true;
    try {
      const response = await fetch(location.pathname + location.search, {
        credentials: "same-origin", headers: { Accept: "text/html" },
      });
      if (!response.ok) return;
      const page = new DOMParser().parseFromString(await response.text(), "text/html");
      const list = page.getElementById("book-list");
      const count = page.getElementById("library-count");
      // Keep what the person ticked in select mode.
      const ticked = new Set(Array.from(document.querySelectorAll(".book-pick:checked")).map((box) => box.value));
      if (list) {
        document.getElementById("book-list").replaceWith(list);
        list.querySelectorAll(".book-pick").forEach((box) => { box.checked = box.checked || ticked.has(box.value); });
      }
      if (count) document.getElementById("library-count").replaceWith(count);
      // The book shown is replaced unless focus is inside it (a form being used) or the editor is open.
      const detail = document.querySelector(".book-detail");
      const fresh = page.querySelector(".book-detail");
      if (detail && !editor && !detail.contains(document.activeElement)) {
        if (fresh) {
          detail.replaceWith(fresh);
          wireShare();
        }
      }
      announce(t("library.live"));
    } catch {
      // Offline: the next event tries again.
    } finally {
      refreshing = false;
      if (again) { again = false; refresh(); }
    }
  }

  if ("EventSource" in window) {
    const stream = new EventSource("/api/events?types=book");
    stream.addEventListener("book", () => refresh());
    window.addEventListener("pagehide", () => stream.close());
  }
})();
