// A room's photo, sent to the API as soon as it is chosen (as the specials' images are): the page then shows
// the room as saved. Without this script the field stays hidden and the page says a photo needs it.
const field = document.getElementById("r-photo-upload");
if (field) {
  field.hidden = false;
  const input = document.getElementById("r-photo");
  const status = document.getElementById("r-photo-status");
  input.addEventListener("change", async () => {
    const chosen = input.files?.[0];
    if (!chosen) return;
    status.textContent = field.dataset.uploading;
    let response = null;
    try {
      response = await fetch(`/api/rooms/${encodeURIComponent(field.dataset.roomId)}/photo`, {
        method: "PUT",
        credentials: "same-origin",
        headers: { "Content-Type": chosen.type || "application/octet-stream", "X-CSRF-Token": field.dataset.csrf },
        body: chosen,
      });
    } catch {
      response = null;
    }
    if (response?.ok) {
      status.textContent = field.dataset.uploaded;
      window.location.assign(`${window.location.pathname}?saved=1`);
    } else {
      const problem = response ? await response.json().catch(() => ({})) : {};
      status.textContent = `${field.dataset.uploadFailed} ${problem.detail || ""}`.trim();
    }
  });
}
