// The process page: a recording, a preset or settings, and the result,
// all in this tab through audiopost.js.
import { process, describe, prepare } from "./audiopost.js";
import * as words from "./words.js";

const $ = (id) => document.getElementById(id);
const form = $("form"), fileInput = $("file"), presetSel = $("preset"), formatSel = $("format");
const shown = ["loudnesstarget", "maxpeak"];
// The switches most people want, in plain words; the rest of the
// settings are under "All settings", as the API names them.
const switches = [
  ["hipfilter", "Filter out rumble and even out the tone",
    "Removes low rumble (traffic, air conditioning, handling noise) and balances bass and treble for speech."],
  ["leveler", "Even out the levels of voices and music",
    "Brings quiet and loud speakers, and speech and music, to one level, so listeners need not turn the volume up and down."],
  ["denoise", "Reduce background noise, hum and echo (takes longer)",
    "Learns the noise from the pauses of the recording and removes it, with mains hum; echo and breaths too with the dynamic method (under All settings)."],
  ["cutter", "Cut long silences and filler sounds (um, uh)",
    "Shortens long pauses and removes filled pauses; the result is shorter than the recording."]
];
let desc, presets = [], controls = {}, urls = [], running = null;

// What each loudness target is for, in plain words.
const targetWords = { "-13": "very loud", "-14": "music streaming", "-15": "loud podcasts", "-16": "podcasts",
  "-18": "quieter podcasts, audiobooks", "-19": "mobile video", "-20": "audiobooks", "-23": "radio and TV in Europe (EBU R128)",
  "-24": "TV in the USA (ATSC A/85)", "-26": "quiet", "-27": "cinema trailers", "-31": "very quiet, film" };

function option(value, label) {
  const o = document.createElement("option");
  o.value = value;
  o.textContent = label;
  return o;
}

function optionLabel(a, o) {
  if (a.key === "loudnesstarget" && targetWords[o.value]) { return o.display_name + " (" + targetWords[o.value] + ")"; }
  if (a.key === "maxpeak" && o.value === 0) { return "Automatic, suited to the loudness"; }
  return o.display_name;
}

function defaultLabel(a) {
  if (a.default_value === null || a.default_value === undefined) {
    const from = desc.algorithms.find((b) => b.key !== a.key && a.description.includes(b.key));
    return "Default" + (from ? " (follows " + from.display_name + ")" : "");
  }
  const o = (a.options || []).find((o) => o.value === a.default_value);
  return "Default (" + (o ? optionLabel(a, o) : String(a.default_value)) + ")";
}

// control makes the input of one algorithm key: a checkbox for a switch,
// a select for a choice whose first entry leaves the key to its default.
function control(a, label, hintText) {
  const id = "alg-" + a.key;
  const wrap = document.createElement("div");
  if (a.type === "checkbox") {
    const l = document.createElement("label");
    l.className = "check";
    const c = document.createElement("input");
    c.type = "checkbox";
    c.id = id;
    l.append(c, label || a.display_name);
    wrap.append(l);
    controls[a.key] = { a, el: c, get: () => c.checked, set: (v) => { c.checked = v === undefined ? a.default_value : v; } };
  } else {
    let s = $(a.key);
    if (!s) {
      const l = document.createElement("label");
      l.htmlFor = id;
      l.textContent = label || a.display_name;
      s = document.createElement("select");
      s.id = id;
      wrap.append(l, s);
    }
    s.append(option("", defaultLabel(a)));
    (a.options || []).forEach((o, i) => s.append(option(String(i), optionLabel(a, o))));
    controls[a.key] = { a, el: s, get: () => (s.value === "" ? undefined : a.options[+s.value].value),
      set: (v) => { const i = (a.options || []).findIndex((o) => o.value === v); s.value = i < 0 ? "" : String(i); } };
  }
  const hint = document.createElement("p");
  hint.className = "hint";
  hint.id = id + "-hint";
  hint.textContent = hintText || a.description;
  controls[a.key].el.setAttribute("aria-describedby", hint.id);
  const err = document.createElement("p");
  err.className = "field-error";
  err.id = id + "-error";
  err.hidden = true;
  wrap.append(hint, err);
  controls[a.key].error = err;
  return wrap;
}

function buildForm() {
  for (const key of shown) {
    const a = desc.algorithms.find((a) => a.key === key);
    const wrap = control(a, null, $(key + "-hint").textContent);
    $(key + "-hint").replaceWith(...wrap.childNodes);
  }
  for (const [key, label, hint] of switches) {
    const a = desc.algorithms.find((a) => a.key === key);
    $("switches").append(control(a, label, hint));
  }
  // The rest, each under the switch it refines, as the edit page groups
  // them.
  const all = $("all");
  for (const a of desc.algorithms) {
    if (controls[a.key] || a.type === "list") { continue; }
    all.append(control(a));
  }
  for (const f of desc.formats) {
    if (!f.unavailable && f.type === "lossless") { formatSel.append(option(f.name, f.display_name)); }
  }
}

function presetOptions(account) {
  presetSel.replaceChildren();
  presets = [];
  const group = (label, list) => {
    if (!list.length) { return; }
    const g = document.createElement("optgroup");
    g.label = label;
    for (const p of list) {
      g.append(option(String(presets.length), p.preset.preset_name));
      presets.push(p);
    }
    presetSel.append(g);
  };
  if (account) {
    group("Your presets", account.presets.filter((p) => !p.is_multitrack).map((p) => ({ preset: p, description: "Your preset from the server, without its outgoing services and webhook: nothing is sent anywhere from this page." })));
  }
  group("Built-in presets", desc.presets.map((p) => ({ preset: JSON.parse(JSON.stringify(p.preset)), description: p.description })));
  presetSel.append(option("", "No preset: the settings below"));
  presetSel.value = presets.length ? "0" : "";
  applyPreset();
}

// applyPreset shows the chosen preset's settings in the form: the form
// always holds what will be sent.
function applyPreset() {
  const p = presetSel.value === "" ? null : presets[+presetSel.value];
  $("preset-hint").textContent = p ? p.description : "The engine's defaults, changed where you change them below.";
  const algs = (p && p.preset.algorithms) || {};
  for (const key in controls) { controls[key].set(algs[key]); }
  const outs = (p && p.preset.output_files) || [];
  const offered = outs.map((o) => o.format).find((f) => [...formatSel.options].some((o) => o.value === f));
  formatSel.value = offered || "flac";
}

function settings() {
  const p = presetSel.value === "" ? null : presets[+presetSel.value];
  const presetAlgs = (p && p.preset.algorithms) || {};
  const algorithms = {};
  for (const key in controls) {
    const c = controls[key], v = c.get();
    if (v === undefined) { continue; }
    if (c.a.type === "checkbox" && v === c.a.default_value && !(key in presetAlgs)) { continue; }
    algorithms[key] = v;
  }
  const s = { algorithms, output_files: [{ format: formatSel.value }] };
  if (p) { s.preset = p.preset; }
  return s;
}

function clearErrors() {
  $("errors").hidden = true;
  $("errors").replaceChildren();
  $("file-error").hidden = true;
  for (const key in controls) { controls[key].error.hidden = true; controls[key].el.removeAttribute("aria-invalid"); }
}

function showError(e) {
  const list = document.createElement("ul");
  const fe = e.formErrors || {};
  let focus = null;
  for (const path of Object.keys(fe).sort()) {
    const key = path.replace(/^(preset\.)?algorithms\./, "");
    const c = path.includes("algorithms.") && controls[key.split(".")[0]];
    const li = document.createElement("li");
    li.textContent = (c ? c.a.display_name : path.replace(/^output_files\.\d+\.format$/, "Output file")) + ": " + fe[path];
    list.append(li);
    if (c) {
      c.error.textContent = fe[path];
      c.error.hidden = false;
      c.el.setAttribute("aria-invalid", "true");
      focus = focus || c.el;
    }
  }
  if (!list.children.length) {
    const li = document.createElement("li");
    li.textContent = e.message;
    list.append(li);
  }
  $("errors").replaceChildren(list);
  $("errors").hidden = false;
  (focus || $("errors")).focus();
}

function step(p) {
  if (p.status === 5) { return "Step " + p.pass + ": writing the result"; }
  if (p.pass <= 1) { return "Step 1: listening to the recording: its loudness, its noise, where there is speech and music"; }
  return "Step " + p.pass + ": evening out the levels and setting the loudness";
}

function onProgress(p) {
  if (!p.pass) { return; }
  const pct = Math.floor(100 * p.read);
  $("bar").value = pct;
  $("percent").textContent = pct + " %";
  const text = step(p);
  if ($("step").textContent !== text) { $("step").textContent = text; }
}

function link(blob, name, label) {
  const url = URL.createObjectURL(blob);
  urls.push(url);
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  a.textContent = label;
  return a;
}

function showResult(r) {
  const levels = r.statistics && r.statistics.levels;
  const out = levels && levels.output, inp = levels && levels.input;
  $("result-title").textContent = "Result: " + r.name;
  $("warning").hidden = !r.warning;
  $("warning").textContent = r.warning ? "Note: " + r.warning : "";
  const dl = $("downloads");
  dl.replaceChildren();
  r.files.forEach((f, i) => {
    if (i) { dl.append(" · "); }
    dl.append(link(f.blob, f.name, "Download " + f.name), " (" + words.size(f.size) + ")");
  });
  const stem = r.name.replace(/\.[^.]*$/, "");
  dl.append(" · ", link(new Blob([JSON.stringify(r.production, null, 2)], { type: "application/json" }), stem + ".figures.json",
    "Download the figures (JSON)"));
  $("player").src = URL.createObjectURL(r.blob);
  urls.push($("player").src);
  $("waveform").hidden = !r.waveform;
  if (r.waveform) { $("waveform").src = URL.createObjectURL(r.waveform); urls.push($("waveform").src); }
  $("chart").hidden = !r.chart;
  if (r.chart) {
    $("chart").src = URL.createObjectURL(r.chart);
    urls.push($("chart").src);
    const g = r.legend;
    $("chart").alt = "How loud your recording and the result are over time, against the target of " + g.target_lufs + " LUFS";
    const swatch = (c) => {
      const span = document.createElement("span");
      span.style.background = c;
      return span;
    };
    $("legend").replaceChildren("How loud it is over time (each point the last 3 seconds):", swatch(g.input), "your recording",
      swatch(g.output), "the result", swatch(g.target), "the target, " + g.target_lufs + " LUFS. From " + g.bottom +
      " (bottom) to " + g.top + " LUFS (top), a line every " + g.grid + ".");
  }
  const tbody = $("levels").querySelector("tbody");
  tbody.replaceChildren();
  const row = (label, a, b, meaning) => {
    if (!a && !b) { return; }
    const tr = document.createElement("tr");
    const th = document.createElement("th");
    th.textContent = label;
    tr.append(th);
    for (const v of [a, b]) {
      const td = document.createElement("td");
      td.className = "num";
      td.textContent = v || "";
      tr.append(td);
    }
    const td = document.createElement("td");
    td.textContent = meaning || "";
    tr.append(td);
    tbody.append(tr);
  };
  if (out) {
    const v = (l) => (Array.isArray(l) ? l[0] : null);
    row("Loudness", words.level(inp.loudness), words.level(out.loudness), "The result sounds " + words.loudnessWords(v(out.loudness)) + "; your recording " + words.loudnessWords(v(inp.loudness)) + ".");
    row("Loudness range", words.level(inp.lra), words.level(out.lra), "How much the loudness varies. The result: " + words.rangeWords(v(out.lra)) + ".");
    row("True peak", "", words.level(out.peak), "The loudest instant: " + words.peakWords(v(out.peak)) + ".");
    row("Loudest 3 seconds", words.level(inp.max_shortterm), words.level(out.max_shortterm), "");
    row("Loudest 0.4 seconds", words.level(inp.max_momentary), words.level(out.max_momentary), "");
    row("Background noise", words.level(inp.noise_level), out.noise_level ? words.level(out.noise_level) : "", "In the pauses between words: " + words.noiseWords(v(out.noise_level || inp.noise_level)) + ".");
    row("Voice above the noise", words.level(inp.snr), out.snr ? words.level(out.snr) : "", "Signal-to-noise ratio, higher is cleaner: " + words.snrWords(v(out.snr || inp.snr)) + ".");
    if (Array.isArray(out.gain_min)) {
      row("Gain applied", "", [out.gain_min, out.gain_mean, out.gain_max].map((l) => words.number(l[0])).join(" / ") + "\u00a0dB",
        "The least, the average and the most the levels were raised (or, below 0, lowered).");
    }
  }
  $("result").hidden = false;
  $("result-title").focus();
}

form.addEventListener("submit", (ev) => {
  ev.preventDefault();
  if (running) { return; }
  clearErrors();
  const file = fileInput.files[0];
  if (!file) {
    $("file-error").textContent = "Choose a recording first.";
    $("file-error").hidden = false;
    fileInput.focus();
    return;
  }
  urls.forEach((u) => URL.revokeObjectURL(u));
  urls = [];
  $("result").hidden = true;
  $("working").hidden = false;
  $("bar").value = 0;
  $("percent").textContent = "0 %";
  $("step").textContent = "Starting the audio engine";
  $("start").disabled = true;
  $("stop").hidden = false;
  running = new AbortController();
  const t0 = performance.now();
  process(file, settings(), onProgress, { signal: running.signal }).then((r) => {
    const secs = (performance.now() - t0) / 1000;
    $("step").textContent = "Done in " + words.duration(secs) + " (" + (r.production.length / secs).toFixed(1) + " times faster than playing it).";
    showResult(r);
  }, (e) => {
    $("working").hidden = true;
    if (running && running.signal.aborted) { $("step").textContent = "Stopped."; return; }
    showError(e);
  }).finally(() => {
    running = null;
    $("start").disabled = false;
    $("stop").hidden = true;
    $("bar").value = 100;
  });
});

$("stop").addEventListener("click", () => {
  if (running) { running.abort(new Error("stopped")); }
  $("working").hidden = true;
  $("start").focus();
});

words.drop($("drop"), (files) => {
  const dt = new DataTransfer();
  dt.items.add(files[0]);
  fileInput.files = dt.files;
  fileInput.dispatchEvent(new Event("change"));
});
fileInput.addEventListener("change", () => { $("file-error").hidden = true; });
presetSel.addEventListener("change", applyPreset);

prepare().catch(() => {});
Promise.all([describe(), words.account()]).then(([d, acc]) => {
  desc = d;
  buildForm();
  presetOptions(acc);
  if (acc) { words.navLinks(acc); }
  document.body.dataset.ready = "true";
}).catch((e) => {
  showError({ message: "The page could not load its settings: " + e.message });
});
