// The server's translations for page scripts, from <script type="application/json" id="quad-strings">:
// the same texts and the same plural choice as the server's Localizer, so what a script writes reads like
// what the server drew. A page without the block gets the keys back (better than nothing on screen).

// Read once, when the module first runs: module scripts run after the document is parsed.
function read() {
  try {
    return JSON.parse(document.getElementById("quad-strings")?.textContent || "{}") || {};
  } catch {
    return {}; // a broken block must not take the page's script down with it
  }
}

const data = read();
const strings = data.strings || {};
const plurals = data.plurals || {};
export const lang = data.lang || document.documentElement.lang || "en";
const rules = new Intl.PluralRules(lang);

// Placeholders the caller did not give stay as they are: a visible {name} is easier to spot than a gap.
const fill = (text, values) =>
  text.replace(/\{(\w+)\}/g, (whole, name) => (Object.hasOwn(values, name) ? String(values[name]) : whole));

export function t(key, values = {}) {
  return fill(strings[key] ?? key, values);
}

// An exact form ("0") wins over the language's category, as on the server: French puts 0 in "one",
// yet "Plus aucune place" reads better than "0 place restante".
export function plural(key, count, values = {}) {
  const forms = plurals[key] || {};
  return fill(forms[String(count)] ?? forms[rules.select(count)] ?? forms.other ?? key, { ...values, count });
}

/** How long ago, in words, for a gap of `ms` milliseconds. */
export function ago(ms) {
  if (!(ms >= 5000)) return t("time.justNow"); // NaN and a clock a little ahead read as "just now" too
  const seconds = Math.floor(ms / 1000);
  return seconds < 60 ? plural("time.secondsAgo", seconds) : plural("time.minutesAgo", Math.floor(seconds / 60));
}

const announceTimers = new WeakMap();

/** Says `text` through a polite live region. */
export function announce(region, text) {
  if (!region) return;
  // Emptied first and filled a moment later, so the same words twice are still read out.
  clearTimeout(announceTimers.get(region));
  region.textContent = "";
  announceTimers.set(region, setTimeout(() => { region.textContent = text; }, 100));
}
