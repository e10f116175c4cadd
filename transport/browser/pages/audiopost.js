// audiopost.js: audiopost's processing in the browser, as a module.
//
//   import { process, measure, describe } from "./audiopost.js";
//   const result = await process(file, { output_files: [{ format: "flac" }] }, p => console.log(p));
//   download(result.blob, result.name);
//
// The recording never leaves the browser: each call runs the WebAssembly
// build of audiopost's engine (audiopost.wasm) in a Web Worker of its
// own, which reads the File in slices and keeps the output as Blob parts,
// and ends with the call so that its memory is given back.

const base = new URL(".", import.meta.url);
let compiled;

// compile compiles the WebAssembly module in the file name.
function compile(name) {
  const url = new URL(name, base);
  return WebAssembly.compileStreaming(fetch(url))
    // A host that serves .wasm with another type than application/wasm.
    .catch(() => fetch(url).then((r) => {
      if (!r.ok) { throw new Error(name + ": " + r.status + " " + r.statusText); }
      return r.arrayBuffer();
    }).then((b) => WebAssembly.compile(b)));
}

// engine compiles audiopost.wasm and its SIMD kernels (kernels.wasm)
// once per page; each worker instantiates the compiled modules.
function engine() {
  if (!compiled) {
    compiled = Promise.all([compile("audiopost.wasm"), compile("kernels.wasm")]);
    compiled.catch(() => { compiled = undefined; });
  }
  return compiled;
}

// AudiopostError is a failed call: message says why; formErrors, for bad
// settings, maps each field (as the API names it, e.g.
// "output_files.0.format") to what is wrong with it.
export class AudiopostError extends Error {
  constructor(e) {
    super(e.message);
    this.name = "AudiopostError";
    this.formErrors = e.form_errors || null;
  }
}

function run(message, onProgress, signal) {
  return engine().then(([module, kernels]) => new Promise((resolve, reject) => {
    if (signal && signal.aborted) { reject(signal.reason); return; }
    const worker = new Worker(new URL("worker.js", base));
    const stop = () => { worker.terminate(); reject(signal.reason); };
    if (signal) { signal.addEventListener("abort", stop, { once: true }); }
    const end = () => { worker.terminate(); if (signal) { signal.removeEventListener("abort", stop); } };
    worker.onmessage = (ev) => {
      const m = ev.data;
      if (m.type === "progress") {
        if (onProgress) { onProgress(m.progress); }
      } else if (m.type === "done") {
        end();
        resolve(m.result);
      } else if (m.type === "error") {
        end();
        reject(new AudiopostError(m.error));
      }
    };
    worker.onerror = (ev) => { end(); reject(new AudiopostError({ message: ev.message || "the audio engine failed to start" })); };
    message.module = module;
    message.kernels = kernels;
    worker.postMessage(message);
  }));
}

// process runs audiopost's single-track production on file (a File or
// Blob: WAV, FLAC or MP3) with settings, the fields of the API's
// production request (algorithms, output_files, metadata, chapters,
// cut_start, cut_end, ...), where preset may be a preset object as
// GET /api/presets.json returns it. Only formats made without ffmpeg can
// be asked for (flac, wav, wav-24bit and the side files).
//
// onProgress(p), when given, is called with {status, status_string,
// fraction, pass, read, wasm_memory}: the production status (4 Audio
// Processing, 5 Audio Encoding, 3 Done), how many times the recording has
// been read so far (analysis, loudness passes, render), how far into it,
// and the bytes of memory the engine holds.
//
// It resolves to {blob, name, files, production, statistics, warning,
// chart, waveform, legend}: blob and name are the first output file's,
// files every file ({name, blob, size, md5, output}); production is the
// production as the API returns it, statistics its statistics (input and
// output loudness, true peak, loudness range, gain, noise); chart and
// waveform are PNG Blobs and legend the chart's colours and scale. It
// rejects with an AudiopostError. options.signal (an AbortSignal) stops
// the work.
export function process(file, settings, onProgress, options = {}) {
  const json = typeof settings === "string" ? settings : JSON.stringify(settings || {});
  return run({ type: "process", file, settings: json }, onProgress, options.signal).then((r) => {
    const first = r.files[0] || {};
    return {
      blob: first.blob, name: first.name, files: r.files, production: r.production,
      statistics: r.production.statistics, warning: r.production.warning_message || "",
      chart: r.chart, waveform: r.waveform, legend: r.legend
    };
  });
}

// measure resolves to the EBU R128 measurement of file: integrated_lufs,
// lra_lu, true_peak_dbtp, sample_peak_dbfs, max_momentary_lufs,
// max_shortterm_lufs (null where undefined, as for silence), seconds,
// format, samplerate and channels, the fields of `audiopost measure
// -json`. onProgress(p) hears {read} from 0 to 1 and wasm_memory.
export function measure(file, onProgress, options = {}) {
  return run({ type: "measure", file }, onProgress, options.signal);
}

// describe resolves to what can be chosen: the single-track algorithms
// as the API's info describes them (in order, with key), the output
// formats (unavailable ones say why), the built-in presets and the
// loudness chart's legend by target.
export function describe() {
  return fetch(new URL("settings.json", base)).then((r) => {
    if (!r.ok) { throw new Error("settings.json: " + r.status); }
    return r.json();
  });
}

// prepare starts compiling the engine before it is needed.
export function prepare() { return engine(); }
