// The measure page: the EBU R128 figures of any number of recordings,
// measured in this tab through audiopost.js, a few at a time.
import { measure, prepare } from "./audiopost.js";
import * as words from "./words.js";

const $ = (id) => document.getElementById(id);
const tbody = $("results").querySelector("tbody");
// At most this many recordings are measured at once, each in a worker
// (a core) of its own.
const parallel = Math.max(1, Math.min(4, (navigator.hardwareConcurrency || 2) - 1));
let queue = [], active = 0, done = 0, total = 0, rows = [];

function cell(tr, text, title) {
  const td = document.createElement("td");
  td.className = "num";
  td.textContent = text;
  if (title) { td.title = title; }
  tr.append(td);
  return td;
}

function add(file) {
  const tr = document.createElement("tr");
  const th = document.createElement("th");
  th.scope = "row";
  th.textContent = file.name;
  tr.append(th);
  const state = document.createElement("td");
  state.colSpan = 6;
  state.textContent = "waiting";
  tr.append(state);
  tbody.append(tr);
  queue.push({ file, tr, state });
  total++;
  $("results").hidden = false;
  next();
}

function next() {
  while (active < parallel && queue.length) {
    const job = queue.shift();
    active++;
    job.state.textContent = "measuring";
    measure(job.file, (p) => { job.state.textContent = "measuring: " + Math.floor(100 * p.read) + " % read"; })
      .then((m) => show(job, m), (e) => { job.state.textContent = "not measured: " + e.message; job.state.className = "field-error"; })
      .finally(() => { active--; done++; status(); next(); });
  }
  status();
}

function show(job, m) {
  job.state.remove();
  const tr = job.tr;
  const i = cell(tr, words.number(m.integrated_lufs, "LUFS"));
  const meaning = document.createElement("span");
  meaning.className = "hint";
  meaning.textContent = words.loudnessWords(m.integrated_lufs);
  i.append(document.createElement("br"), meaning);
  cell(tr, m.lra_lu === null ? "" : words.number(m.lra_lu, "LU"), words.rangeWords(m.lra_lu));
  const tp = cell(tr, words.number(m.true_peak_dbtp, "dBTP"));
  if (m.true_peak_dbtp !== null && m.true_peak_dbtp > -1) {
    const warn = document.createElement("span");
    warn.className = "hint";
    warn.textContent = words.peakWords(m.true_peak_dbtp);
    tp.append(document.createElement("br"), warn);
  }
  cell(tr, words.number(m.max_shortterm_lufs, "LUFS"));
  cell(tr, words.number(m.max_momentary_lufs, "LUFS"));
  cell(tr, words.duration(m.seconds), m.format + ", " + m.samplerate + " Hz, " + m.channels + (m.channels === 1 ? " channel" : " channels"));
  rows.push(m);
  $("save").hidden = false;
}

function status() {
  $("status").textContent = total === 0 ? "" : done === total ? "Measured " + total + (total === 1 ? " recording." : " recordings.") :
    "Measuring: " + done + " of " + total + " done.";
}

function csv() {
  const cols = ["file", "integrated_lufs", "lra_lu", "true_peak_dbtp", "sample_peak_dbfs", "max_momentary_lufs", "max_shortterm_lufs", "seconds"];
  const q = (v) => (v === null || v === undefined ? "" : typeof v === "string" ? '"' + v.replace(/"/g, '""') + '"' : String(v));
  return [cols.join(",")].concat(rows.map((m) => cols.map((c) => q(m[c])).join(","))).join("\n") + "\n";
}

$("save").addEventListener("click", () => {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(new Blob([csv()], { type: "text/csv" }));
  a.download = "loudness.csv";
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10000);
});

$("files").addEventListener("change", () => {
  for (const f of $("files").files) { add(f); }
  $("files").value = "";
});
words.drop($("drop"), (files) => { for (const f of files) { add(f); } });
prepare().catch((e) => { $("status").textContent = "The audio engine could not be loaded: " + e.message; });
words.account().then((acc) => { if (acc) { words.navLinks(acc); } });
document.body.dataset.ready = "true";
