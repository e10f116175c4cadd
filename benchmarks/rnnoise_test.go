package benchmarks

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// rnnoisePackage is the RNNoise build the report runs: the library
// compiled to WebAssembly, from npm, run by node.
const rnnoisePackage = "@jitsi/rnnoise-wasm@0.2.1"

// rnnoiseScript reads a mono 48 kHz WAV file of 32-bit floats (its path
// the first argument), runs RNNoise over it in its 480-sample frames and
// writes the result to stdout as raw 32-bit floats.
const rnnoiseScript = `import createRNNWasmModuleSync from "@jitsi/rnnoise-wasm/dist/rnnoise-sync.js";
import { readFileSync, writeSync } from "node:fs";

const m = createRNNWasmModuleSync();
const wav = readFileSync(process.argv[2]);
let p = 12, data = null;
while (p + 8 <= wav.length) {
  const id = wav.toString("ascii", p, p + 4), size = wav.readUInt32LE(p + 4);
  if (id === "data") { data = wav.subarray(p + 8, p + 8 + size); break; }
  p += 8 + size + (size & 1);
}
const x = new Float32Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.length));
const N = 480;
const st = m._rnnoise_create(0);
const pin = m._malloc(N * 4), pout = m._malloc(N * 4);
const y = new Float32Array(x.length);
const f = new Float32Array(N);
for (let i = 0; i < x.length; i += N) {
  f.fill(0);
  for (let j = 0; j < N && i + j < x.length; j++) f[j] = x[i + j] * 32768;
  m.HEAPF32.set(f, pin >> 2);
  m._rnnoise_process_frame(st, pout, pin);
  const o = m.HEAPF32.subarray(pout >> 2, (pout >> 2) + N);
  for (let j = 0; j < N && i + j < x.length; j++) y[i + j] = o[j] / 32768;
}
m._rnnoise_destroy(st);
const b = Buffer.from(y.buffer);
let off = 0;
while (off < b.length) off += writeSync(1, b, off);
`

var (
	rnnoiseOnce sync.Once
	rnnoisePath string
	rnnoiseErr  error
)

// rnnoise returns the path of the script that runs RNNoise, installing
// the npm package into the test cache on first use. Without node and npm
// the test is skipped (failed under CI, which installs them).
func rnnoise(t testing.TB) string {
	t.Helper()
	need.Program(t, "node")
	npm := need.Program(t, "npm")
	rnnoiseOnce.Do(func() {
		dir := filepath.Join(testaudio.CacheDir(), "..", "rnnoise")
		script := filepath.Join(dir, "rnnoise.mjs")
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "@jitsi", "rnnoise-wasm", "dist", "rnnoise-sync.js")); err != nil {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				rnnoiseErr = err
				return
			}
			cmd := exec.Command(npm, "install", "--no-audit", "--no-fund", "--prefix", dir, rnnoisePackage)
			if out, err := cmd.CombinedOutput(); err != nil {
				rnnoiseErr = &installError{string(out), err}
				return
			}
		}
		rnnoiseErr = os.WriteFile(script, []byte(rnnoiseScript), 0o644)
		rnnoisePath = script
	})
	if rnnoiseErr != nil {
		need.Unavailable(t, "installing %s: %v", rnnoisePackage, rnnoiseErr)
	}
	return rnnoisePath
}

type installError struct {
	out string
	err error
}

func (e *installError) Error() string { return e.err.Error() + ": " + e.out }

func rnnoiseDenoise(t testing.TB, x, _ []float64) []float64 {
	script := rnnoise(t)
	return peer(t, x, "node", func(in string) []string { return []string{script, in} })
}
