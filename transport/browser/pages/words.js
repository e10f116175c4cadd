// Plain words beside the figures, for readers who have never heard of
// LUFS: what a loudness, a range, a peak or a noise level means to a
// listener. Shared by the process and measure pages.

// number formats a reading with one decimal, a minus sign that reads as
// one, and "silent" for an undefined one (null: the loudness of silence).
export function number(v, unit) {
  if (v === null || v === undefined || !isFinite(v)) { return "silent"; }
  return v.toFixed(1).replace("-", "\u2212") + (unit ? "\u00a0" + unit : "");
}

// level formats a statistics level, a [value, unit] pair of the API.
export function level(l) {
  if (!Array.isArray(l)) { return ""; }
  return number(l[0], l[1]);
}

export function loudnessWords(lufs) {
  if (lufs === null || lufs === undefined) { return "silent: nothing loud enough to measure"; }
  if (lufs > -10) { return "very loud, louder than most music"; }
  if (lufs > -14.5) { return "loud, like music on streaming services"; }
  if (lufs > -18.5) { return "like most podcasts"; }
  if (lufs > -21) { return "a little quieter than most podcasts"; }
  if (lufs > -25) { return "like radio and television in Europe"; }
  if (lufs > -31) { return "quiet: listeners will turn it up"; }
  return "very quiet";
}

export function rangeWords(lu) {
  if (lu === null || lu === undefined) { return ""; }
  if (lu < 5) { return "even: the level hardly changes"; }
  if (lu < 10) { return "moderate: quieter and louder passages, easy to follow"; }
  if (lu < 15) { return "wide: listeners in a car or on a bus may miss the quiet parts"; }
  return "very wide, as in a film or a concert";
}

export function peakWords(dbtp) {
  if (dbtp === null || dbtp === undefined) { return ""; }
  if (dbtp > 0) { return "above the most a file can hold: it distorts"; }
  if (dbtp > -1) { return "close to the limit: an MP3 or AAC copy may distort"; }
  return "safely below the limit, also for MP3 and AAC copies";
}

export function noiseWords(db) {
  if (db === null || db === undefined) { return ""; }
  if (db < -65) { return "a very quiet background"; }
  if (db < -55) { return "a quiet background"; }
  if (db < -45) { return "background noise you can hear in the pauses"; }
  return "a noisy background";
}

export function snrWords(db) {
  if (db === null || db === undefined) { return ""; }
  if (db > 45) { return "clean"; }
  if (db > 30) { return "some noise under the voice"; }
  return "noisy: the noise competes with the voice";
}

export function duration(seconds) {
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60, r = s % 60;
  const two = (n) => String(n).padStart(2, "0");
  return (h > 0 ? h + ":" + two(m) : String(m)) + ":" + two(r);
}

export function size(bytes) {
  if (bytes >= 1 << 30) { return (bytes / (1 << 30)).toFixed(2) + " GB"; }
  if (bytes >= 1 << 20) { return (bytes / (1 << 20)).toFixed(1) + " MB"; }
  return Math.max(1, Math.round(bytes / 1024)) + " kB";
}

// drop makes an element a drop zone for files: dropped files go to
// onFiles, and dragging over it marks it. The file input inside stays
// the way to choose files with the keyboard.
export function drop(el, onFiles) {
  el.addEventListener("dragover", (ev) => { ev.preventDefault(); el.classList.add("over"); });
  el.addEventListener("dragleave", () => el.classList.remove("over"));
  el.addEventListener("drop", (ev) => {
    ev.preventDefault();
    el.classList.remove("over");
    if (ev.dataTransfer && ev.dataTransfer.files.length) { onFiles(ev.dataTransfer.files); }
  });
}

// account asks the audiopost server the page came from (if any) who is
// logged in and for their presets; null on a static host or without a
// session.
export function account() {
  return fetch(new URL("../presets.json", document.baseURI), { credentials: "same-origin", headers: { Accept: "application/json" } })
    .then((r) => (r.ok ? r.json() : null))
    .then((env) => (env && env.data && env.data.user ? env.data : null))
    .catch(() => null);
}

// navLinks adds the server's pages to the navigation bar of a logged-in
// user.
export function navLinks(acc) {
  const nav = document.getElementById("nav");
  for (const [label, href] of [["Productions", acc.links.productions], ["New production", acc.links.upload], ["Account (" + acc.user + ")", acc.links.account]]) {
    if (!href) { continue; }
    const a = document.createElement("a");
    a.href = href;
    a.textContent = label;
    nav.appendChild(a);
  }
}
