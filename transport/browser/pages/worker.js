// The Web Worker that runs audiopost's WebAssembly build for one call of
// audiopost.js. It reads the File in slices, keeps every output file as
// Blob parts (the bytes leave this worker's memory as they are written),
// and posts progress and the result to the page. The page ends the
// worker when the call is done, which gives its memory back.
"use strict";
importScripts("wasm_exec.js", "simd.js");

var memory = null;

// Bytes pass between Go and JavaScript through one buffer, shared, of
// chunk bytes. A JavaScript value Go holds stays alive until Go's
// garbage collector lets it go, which with Go's small heap comes so
// rarely that a fresh array for every slice kept them all (as much
// memory as the recording); and a fresh ArrayBuffer for every slice read,
// as FileReaderSync makes, is garbage V8 collects late (measuring two
// hours of WAV held 400 MB). So slices are read with a stream's BYOB
// reader into shared, which moves to a new ArrayBuffer object over the
// same memory at each read.
var chunk = 1 << 20;
var shared = new Uint8Array(chunk);

// Streams reads a Blob at any offset through BYOB readers, keeping a few
// open where the last reads ended: the engine reads its input once per
// pass from the start, sometimes two passes interleaved.
function Streams(blob) {
  this.blob = blob;
  this.open = [];
}

// read puts up to length bytes from offset into shared and resolves to
// how many (0 at the end).
Streams.prototype.read = function (offset, length) {
  var i = this.open.findIndex(function (s) { return s.pos === offset; });
  var s;
  if (i >= 0) {
    s = this.open.splice(i, 1)[0];
  } else {
    s = { pos: offset, reader: this.blob.slice(offset).stream().getReader({ mode: "byob" }) };
    if (this.open.length >= 4) { this.open.shift().reader.cancel(); }
  }
  this.open.push(s);
  return s.reader.read(new Uint8Array(shared.buffer, 0, Math.min(length, chunk))).then(function (r) {
    if (r.done) { return 0; }
    shared = new Uint8Array(r.value.buffer);
    s.pos += r.value.byteLength;
    return r.value.byteLength;
  });
};

// BlobFile is an output file as a list of Blobs: appended to as the
// encoder writes, patched where it seeks back to finish its header, read
// back for the checksum.
function BlobFile(name) {
  this.name = name;
  this.parts = [];
  this.size = 0;
  this.whole = null;
  this.streams = null;
  this.done = false;
}

BlobFile.prototype.blob = function () {
  if (!this.whole) { this.whole = new Blob(this.parts); this.parts = [this.whole]; this.streams = null; }
  return this.whole;
};

// write takes length bytes from shared (the Blob copies them).
BlobFile.prototype.write = function (offset, length) {
  var part = new Blob([shared.subarray(0, length)]);
  this.streams = null;
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

// read is Streams.read over what was written.
BlobFile.prototype.read = function (offset, length) {
  if (!this.streams) { this.streams = new Streams(this.blob()); }
  return this.streams.read(offset, length);
};

BlobFile.prototype.close = function () { this.done = true; this.streams = null; };
BlobFile.prototype.abort = function () { this.parts = []; this.whole = null; this.streams = null; this.size = 0; this.aborted = true; };

var typeOf = { wav: "audio/wav", flac: "audio/flac", json: "application/json", txt: "text/plain", xml: "application/xml",
  yaml: "application/yaml", png: "image/png", psc: "application/xml" };

function mimeType(name) {
  var ext = name.slice(name.lastIndexOf(".") + 1).toLowerCase();
  return typeOf[ext] || "application/octet-stream";
}

// host is what the Go side calls back: the File's bytes, output files,
// progress, and the shared buffer.
function host(file, files) {
  var input = new Streams(file);
  return {
    get buffer() { return shared; },
    read: function (offset, length) { return input.read(offset, length); },
    create: function (name) {
      var f = new BlobFile(name);
      files.push(f);
      return f;
    },
    progress: function (p) {
      // The engine's memory, which only grows: the page can show it,
      // and the tests hold it to its bound.
      p.wasm_memory = memory ? memory.buffer.byteLength : 0;
      postMessage({ type: "progress", progress: p });
    }
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
  var link = audiopostSIMD(go.importObject, m.kernels);
  WebAssembly.instantiate(m.module, go.importObject).then(function (instance) {
    memory = instance.exports.mem;
    link(instance);
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
