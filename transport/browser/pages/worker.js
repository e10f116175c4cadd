// The Web Worker that runs audiopost's WebAssembly build for one call of
// audiopost.js: it reads the File in slices with FileReaderSync (the Go
// side asks for them synchronously), keeps every output file as Blob
// parts (the bytes leave this worker's memory as they are written), and
// posts progress and the result to the page. The page ends the worker
// when the call is done, which gives its memory back.
"use strict";
importScripts("wasm_exec.js");

var reader = new FileReaderSync();

// BlobFile is an output file as a list of Blobs: appended to as the
// encoder writes, patched where it seeks back to finish its header, read
// back for the checksum.
function BlobFile(name) {
  this.name = name;
  this.parts = [];
  this.size = 0;
  this.whole = null;
  this.done = false;
}

BlobFile.prototype.blob = function () {
  if (!this.whole) { this.whole = new Blob(this.parts); this.parts = [this.whole]; }
  return this.whole;
};

BlobFile.prototype.write = function (offset, bytes) {
  var part = new Blob([bytes]);
  if (offset > this.size) {
    this.parts.push(new Blob([new Uint8Array(offset - this.size)]));
    this.size = offset;
  }
  if (offset === this.size) {
    this.parts.push(part);
    this.size += part.size;
    this.whole = null;
    return;
  }
  var whole = this.blob(), end = offset + part.size;
  this.parts = [whole.slice(0, offset), part];
  if (end < this.size) { this.parts.push(whole.slice(end)); }
  this.size = Math.max(this.size, end);
  this.whole = null;
};

BlobFile.prototype.read = function (offset, length) {
  return new Uint8Array(reader.readAsArrayBuffer(this.blob().slice(offset, offset + length)));
};

BlobFile.prototype.close = function () { this.done = true; };
BlobFile.prototype.abort = function () { this.parts = []; this.whole = null; this.size = 0; this.aborted = true; };

var typeOf = { wav: "audio/wav", flac: "audio/flac", json: "application/json", txt: "text/plain", xml: "application/xml",
  yaml: "application/yaml", png: "image/png", psc: "application/xml" };

function mimeType(name) {
  var ext = name.slice(name.lastIndexOf(".") + 1).toLowerCase();
  return typeOf[ext] || "application/octet-stream";
}

// host is what the Go side calls back: the File's bytes, output files,
// progress.
function host(file, files) {
  return {
    read: function (offset, length) {
      return new Uint8Array(reader.readAsArrayBuffer(file.slice(offset, offset + length)));
    },
    create: function (name) {
      var f = new BlobFile(name);
      files.push(f);
      return f;
    },
    progress: function (p) { postMessage({ type: "progress", progress: p }); }
  };
}

function fail(e) {
  postMessage({ type: "error", error: { message: String(e && e.message || e), form_errors: e && e.form_errors || null } });
}

// The Go runtime writes a panic to the console before it exits: the last
// lines are kept for the error the page shows.
var lastLines = [];
var consoleLog = console.log.bind(console);
console.log = function () {
  var line = Array.prototype.join.call(arguments, " ");
  lastLines.push(line);
  if (lastLines.length > 8) { lastLines.shift(); }
  consoleLog(line);
};

var ready = new Promise(function (resolve) { self.audiopostReady = resolve; });

self.onmessage = function (ev) {
  var m = ev.data;
  var go = new Go();
  WebAssembly.instantiate(m.module, go.importObject).then(function (instance) {
    go.run(instance).then(function () {
      fail(new Error("the audio engine stopped unexpectedly: " + lastLines.join("\n")));
    });
    return ready;
  }).then(function () {
    var files = [];
    if (m.type === "measure") {
      return self.audiopost.measure(m.file, host(m.file, files)).then(function (json) {
        postMessage({ type: "done", result: JSON.parse(json) });
      });
    }
    return self.audiopost.process(m.file, m.settings, host(m.file, files)).then(function (r) {
      var byName = {};
      files.forEach(function (f) { if (f.done && !f.aborted) { byName[f.name] = f; } });
      var out = [];
      for (var i = 0; i < r.files.length; i++) {
        var w = r.files[i], f = byName[w.name];
        out.push({ name: w.name, output: w.output, size: w.size, md5: w.md5,
          blob: new Blob([f.blob()], { type: mimeType(w.name) }) });
      }
      postMessage({ type: "done", result: {
        files: out, production: JSON.parse(r.production), legend: JSON.parse(r.legend),
        chart: r.chart.length ? new Blob([r.chart], { type: "image/png" }) : null,
        waveform: r.waveform.length ? new Blob([r.waveform], { type: "image/png" }) : null
      } });
    });
  }).catch(fail);
};
