package spectral

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"testing"

	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// The peers our denoiser is measured against, each run as a user would run
// it on the noisy recording alone: what a tool learns about the noise it
// learns from the same recording, never from the clean noise track.
//
//   - afftdn: ffmpeg's FFT denoiser at its defaults (noise floor -50 dB).
//   - afftdn nf tn: its noise floor set from the recording's noise level
//     (noiseLevelDB: the RMS of the pauses the voice activity mask finds)
//     and its noise tracking on. afftdn's floor is on a scale of its own:
//     the level in dBFS plus 25 dB (within its range, -80 to -20) was the
//     best of +0 to +25 on the tuning half (+2.3 dB SI-SDR; at +0, the
//     level as it is, +0.7); its reduction (nr) at 12 dB or 24 dB made no
//     difference.
//   - anlmdn, afwtdn: ffmpeg's non-local-means and wavelet denoisers at
//     their defaults.
//   - noisered: sox's noisered with a profile (noiseprof) learnt from the
//     pauses of the recording the voice activity mask finds (pausesOf),
//     the stretch a user would select, at amount 0.3 (sox's manual
//     suggests 0.2 to 0.3; on the tuning half 0.21 gained 1.8 dB SI-SDR,
//     0.3 3.0 and 0.4 2.9).
//   - rnnoise: RNNoise (the WebAssembly build of @shiguredo/rnnoise-wasm from
//     npm, run by node) at its one setting, on 480-sample frames at 48 kHz.
var peers = []struct {
	name string
	run  func(t testing.TB, x []float64, pauses []float64) []float64
}{
	{"afftdn", func(t testing.TB, x, _ []float64) []float64 { return ffFilter(t, x, "afftdn") }},
	{"afftdn nf tn", func(t testing.TB, x, pauses []float64) []float64 {
		nf := min(-20, max(-80, math.Round(noiseLevelDB(pauses)+25)))
		return ffFilter(t, x, fmt.Sprintf("afftdn=nf=%.0f:tn=1", nf))
	}},
	{"anlmdn", func(t testing.TB, x, _ []float64) []float64 { return ffFilter(t, x, "anlmdn") }},
	{"afwtdn", func(t testing.TB, x, _ []float64) []float64 { return ffFilter(t, x, "afwtdn") }},
	{"noisered", func(t testing.TB, x, pauses []float64) []float64 { return noisered(t, x, pauses, 0.3) }},
	{"rnnoise", func(t testing.TB, x, _ []float64) []float64 { return rnnoise(t, x) }},
}

// pausesOf returns the samples of x in the blocks the voice activity mask
// marks free of voice, joined: the noise a user would select to learn a
// profile from. With under half a second of them, the quietest tenth of
// the blocks stands in.
func pausesOf(x []float64, vad []bool) []float64 {
	b := BlockFrames(fs)
	var out []float64
	for i := 0; i*b+b <= len(x); i++ {
		if i < len(vad) && !vad[i] {
			out = append(out, x[i*b:i*b+b]...)
		}
	}
	if len(out) >= fs/2 {
		return out
	}
	type blk struct {
		at int
		e  float64
	}
	var bs []blk
	for i := 0; i+b <= len(x); i += b {
		bs = append(bs, blk{i, sumSquares(x[i : i+b])})
	}
	sort.Slice(bs, func(i, j int) bool { return bs[i].e < bs[j].e })
	out = out[:0]
	for _, q := range bs[:max(1, len(bs)/10)] {
		out = append(out, x[q.at:q.at+b]...)
	}
	return out
}

// noiseLevelDB is the RMS level of the pauses in dBFS.
func noiseLevelDB(pauses []float64) float64 {
	return 10 * math.Log10(sumSquares(pauses)/float64(max(1, len(pauses)))+1e-20)
}

// ffFilter runs an ffmpeg audio filter chain over mono x at fs and returns
// its output aligned to x (ffmpeg's denoisers do not compensate their
// delay: it is measured against the input over its loudest second).
func ffFilter(t testing.TB, x []float64, af string) []float64 {
	t.Helper()
	return align(x, ffRun(t, x, af))
}

// ffRun runs an ffmpeg audio filter chain over mono x at fs and returns
// its output as it comes, for filters without delay (a chain of notches).
func ffRun(t testing.TB, x []float64, af string) []float64 {
	t.Helper()
	ff := need.Program(t, "ffmpeg")
	cmd := exec.Command(ff, "-nostdin", "-hide_banner", "-loglevel", "error", "-f", "f64le", "-ar", fmt.Sprint(fs), "-ac", "1", "-i", "pipe:0",
		"-af", af, "-f", "f64le", "pipe:1")
	cmd.Stdin = bytes.NewReader(f64le(x))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ffmpeg -af %s: %v: %s", af, err, stderr.Bytes())
	}
	return fromF64le(out)
}

// noisered runs sox's noisered over x with a profile learnt (noiseprof)
// from noise.
func noisered(t testing.TB, x, noise []float64, amount float64) []float64 {
	t.Helper()
	sox := need.Program(t, "sox")
	dir := t.TempDir()
	prof := filepath.Join(dir, "noise.prof")
	raw := []string{"-t", "f64", "-r", fmt.Sprint(fs), "-c", "1"}
	cmd := exec.Command(sox, append(raw, "-", "-n", "noiseprof", prof)...)
	cmd.Stdin = bytes.NewReader(f64le(noise))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sox noiseprof: %v: %s", err, out)
	}
	args := append(append(raw, "-"), append(raw, "-", "noisered", prof, fmt.Sprint(amount))...)
	cmd = exec.Command(sox, args...)
	cmd.Stdin = bytes.NewReader(f64le(x))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sox noisered: %v: %s", err, stderr.Bytes())
	}
	return align(x, fromF64le(out))
}

// rnnoiseVersion is the npm package RNNoise is run from.
const rnnoiseVersion = "@shiguredo/rnnoise-wasm@2025.1.5"

// rnnoiseScript denoises 48 kHz mono float32 samples from stdin to stdout,
// 480 at a time, in the 16-bit scale RNNoise expects. The build checks for
// a browser, so window is defined first.
const rnnoiseScript = `globalThis.window = globalThis;
const { Rnnoise } = await import('@shiguredo/rnnoise-wasm');
const r = await Rnnoise.load();
const st = r.createDenoiseState();
const chunks = [];
for await (const c of process.stdin) chunks.push(c);
const buf = Buffer.concat(chunks);
const x = new Float32Array(buf.buffer, buf.byteOffset, buf.length / 4);
const n = r.frameSize;
const out = new Float32Array(Math.ceil(x.length / n) * n);
const f = new Float32Array(n);
for (let i = 0; i < x.length; i += n) {
  f.fill(0);
  for (let j = 0; j < n && i + j < x.length; j++) f[j] = x[i + j] * 32768;
  st.processFrame(f);
  for (let j = 0; j < n; j++) out[i + j] = f[j] / 32768;
}
st.destroy();
process.stdout.write(Buffer.from(out.buffer));
`

var (
	rnnoiseOnce sync.Once
	rnnoiseDir  string
	rnnoiseErr  error
)

// rnnoiseInstall installs the npm package into the test cache once per
// machine (npm reaches the registry the first time) and writes the
// script beside it.
func rnnoiseInstall(t testing.TB) string {
	t.Helper()
	npm := need.Program(t, "npm")
	rnnoiseOnce.Do(func() {
		dir := filepath.Join(testaudio.CacheDir(), "rnnoise-wasm-2025.1.5")
		script := filepath.Join(dir, "denoise.mjs")
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "@shiguredo", "rnnoise-wasm", "dist", "rnnoise.js")); err != nil {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				rnnoiseErr = err
				return
			}
			cmd := exec.Command(npm, "install", "--no-audit", "--no-fund", "--prefix", dir, rnnoiseVersion)
			if out, err := cmd.CombinedOutput(); err != nil {
				rnnoiseErr = fmt.Errorf("npm install %s: %v: %s", rnnoiseVersion, err, out)
				return
			}
		}
		if err := os.WriteFile(script, []byte(rnnoiseScript), 0o644); err != nil {
			rnnoiseErr = err
			return
		}
		rnnoiseDir = dir
	})
	if rnnoiseErr != nil {
		t.Fatal(rnnoiseErr)
	}
	return rnnoiseDir
}

// rnnoise runs RNNoise over mono x at 48 kHz, aligned to x.
func rnnoise(t testing.TB, x []float64) []float64 {
	t.Helper()
	if fs != 48000 {
		t.Fatalf("RNNoise runs at 48 kHz, not %d", fs)
	}
	node := need.Program(t, "node")
	dir := rnnoiseInstall(t)
	in := make([]byte, 4*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint32(in[4*i:], math.Float32bits(float32(v)))
	}
	cmd := exec.Command(node, filepath.Join(dir, "denoise.mjs"))
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node rnnoise: %v: %s", err, stderr.Bytes())
	}
	y := make([]float64, len(out)/4)
	for i := range y {
		y[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(out[4*i:])))
	}
	return align(x, y)
}
