// The timeline opens at now: its table scrolls inside itself so that the quarter hour now falls in is in view,
// just after the rooms' names. Without this script it opens at the day's first opening.
const scroller = document.querySelector(".timeline-scroll");
const now = scroller?.querySelector(".cell-now");
if (scroller && now) {
  const names = scroller.querySelector("th[scope=row]")?.offsetWidth ?? 0;
  scroller.scrollLeft = Math.max(0, now.offsetLeft - names - now.offsetWidth * 2);
}
