// Package peers runs the denoisers audiopost's noise reduction is measured
// against (ffmpeg's afftdn, anlmdn and afwtdn, sox's noisered, RNNoise),
// each configured as a user would configure it on one recording: what a
// peer is told about the noise it learns from the noisy recording itself
// (the pauses a voice activity mask finds in it), never from the clean
// noise track, which no user has. dsp/spectral's acceptance tests and the
// quality report (benchmarks) both run them from here, so the two report
// the same peers.
//
//	rec := peers.Recording{X: noisy, Rate: 48000, Pauses: peers.Pauses(noisy, vad, block)}
//	for _, p := range peers.Denoisers {
//		y := p.Run(t, rec) // lined up with rec.X
//	}
//
// The peers are programs: ffmpeg, sox, and node with npm (RNNoise is
// installed from npm into the test cache on first use). A test without
// them is skipped, naming the Debian package (internal/need), and fails
// under CI.
package peers

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

// Recording is one noisy recording and what a user can learn about its
// noise from it.
type Recording struct {
	// X is the recording, mono.
	X []float64
	// Rate is its sample rate in Hz (RNNoise needs 48000).
	Rate int
	// Pauses are the recording's noise-only stretches joined (Pauses):
	// the noise a user selects to learn a profile from or reads a noise
	// level off.
	Pauses []float64
}

// Denoiser is one peer with its configuration.
type Denoiser struct {
	// Name is how reports name it.
	Name string
	// Config says how the peer is configured, for reports.
	Config string
	// Slow marks a peer that takes about a minute per 10 s mix (anlmdn):
	// plain test runs leave it out.
	Slow bool
	run  func(tb testing.TB, r Recording) []float64
}

// Run denoises r.X and returns the result as long as r.X and lined up
// with it (the peers' own delays removed).
func (d Denoiser) Run(tb testing.TB, r Recording) []float64 {
	tb.Helper()
	return Align(r.X, d.run(tb, r), r.Rate)
}

// Denoisers are the peers, each set from the recording where a setting
// takes the noise's level.
//
//   - afftdn: ffmpeg's FFT denoiser at its defaults (a noise floor of
//     -50 dB, no tracking): what a user gets who tries it first.
//   - afftdn nf tn: its noise floor (nf) set from the pauses' level and
//     its noise tracking (tn) on. The floor is on a scale of its own: the
//     level in dBFS plus 25 dB (clamped to its range, -80 to -20) was the
//     best of +0 to +25 on the corpus's tuning half (+2.3 dB SI-SDR; at
//     +0, the level as it is, +0.7); its reduction (nr) at 12 or 24 dB
//     made no difference.
//   - anlmdn: ffmpeg's non-local-means denoiser at strength 10, the
//     smallest power of ten that takes pink noise at -34 dBFS down
//     audibly (2.6 dB; its default, 0.00001, and 1 take nothing; 100 takes
//     4.8 dB). Its strength has no unit a recording's level maps to.
//   - afwtdn: ffmpeg's wavelet denoiser with its noise sigma set in dB to
//     the pauses' level, as its manual suggests ("sigma=-45dB").
//   - sox noisered: a profile (noiseprof) learnt from the pauses, amount
//     0.3 (sox's manual suggests 0.2 to 0.3; on the tuning half 0.21
//     gained 1.8 dB SI-SDR, 0.3 3.0 and 0.4 2.9).
//   - RNNoise: the WebAssembly build of @shiguredo/rnnoise-wasm from npm,
//     run by node, at its one setting on 480-sample frames at 48 kHz.
var Denoisers = []Denoiser{
	{Name: "afftdn", Config: "`afftdn` at its defaults", run: func(tb testing.TB, r Recording) []float64 {
		return FFmpeg(tb, r.X, r.Rate, "afftdn")
	}},
	{Name: "afftdn nf tn", Config: "`afftdn=nf=L+25:tn=1`, L the pauses' level in dBFS", run: func(tb testing.TB, r Recording) []float64 {
		return FFmpeg(tb, r.X, r.Rate, fmt.Sprintf("afftdn=nf=%.0f:tn=1", AfftdnFloor(r.Pauses)))
	}},
	{Name: "anlmdn", Config: "`anlmdn=s=10`", Slow: true, run: func(tb testing.TB, r Recording) []float64 {
		return FFmpeg(tb, r.X, r.Rate, "anlmdn=s=10")
	}},
	{Name: "afwtdn", Config: "`afwtdn=sigma=LdB`, L the pauses' level", run: func(tb testing.TB, r Recording) []float64 {
		return FFmpeg(tb, r.X, r.Rate, fmt.Sprintf("afwtdn=sigma=%.0fdB", min(0, LevelDB(r.Pauses))))
	}},
	{Name: "sox noisered", Config: "sox `noisered` 0.3 with a profile learnt from the pauses", run: func(tb testing.TB, r Recording) []float64 {
		return Noisered(tb, r.X, r.Pauses, r.Rate, 0.3)
	}},
	{Name: "RNNoise", Config: rnnoisePackage + " run by node", run: func(tb testing.TB, r Recording) []float64 {
		return RNNoise(tb, r.X, r.Rate)
	}},
}

// Pauses returns the samples of x in the blocks (of block frames) that
// the voice activity mask vad marks free of voice, joined: the noise a
// user would select to learn a profile from. With under half a second of
// them (a mask that hears voice everywhere, as in loud noise), the
// quietest tenth of the blocks stands in, as a user would pick the
// quietest stretch.
func Pauses(x []float64, vad []bool, block, rate int) []float64 {
	var out []float64
	for i := 0; i*block+block <= len(x); i++ {
		if i < len(vad) && !vad[i] {
			out = append(out, x[i*block:i*block+block]...)
		}
	}
	if len(out) >= rate/2 {
		return out
	}
	type blk struct {
		at int
		e  float64
	}
	var bs []blk
	for i := 0; i+block <= len(x); i += block {
		var e float64
		for _, v := range x[i : i+block] {
			e += v * v
		}
		bs = append(bs, blk{i, e})
	}
	if len(bs) == 0 {
		return append(out[:0], x...)
	}
	sort.Slice(bs, func(i, j int) bool { return bs[i].e < bs[j].e })
	out = out[:0]
	for _, q := range bs[:max(1, len(bs)/10)] {
		out = append(out, x[q.at:q.at+block]...)
	}
	return out
}

// LevelDB is the RMS level of x in dBFS.
func LevelDB(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v * v
	}
	return 10 * math.Log10(s/float64(max(1, len(x)))+1e-20)
}

// AfftdnFloor is the afftdn noise floor (nf) for noise of the pauses'
// level: the level plus 25 dB within afftdn's range.
func AfftdnFloor(pauses []float64) float64 {
	return min(-20, max(-80, math.Round(LevelDB(pauses)+25)))
}

// FFmpeg runs an ffmpeg audio filter chain over mono x, on one thread,
// and returns its output lined up with x (ffmpeg's denoisers do not
// compensate their delay).
func FFmpeg(tb testing.TB, x []float64, rate int, af string) []float64 {
	tb.Helper()
	return Align(x, FFmpegRaw(tb, x, rate, af), rate)
}

// FFmpegRaw is FFmpeg without the alignment, for filters without delay (a
// chain of notches).
func FFmpegRaw(tb testing.TB, x []float64, rate int, af string) []float64 {
	tb.Helper()
	ff := need.Program(tb, "ffmpeg")
	cmd := exec.Command(ff, "-nostdin", "-hide_banner", "-loglevel", "error", "-threads", "1", "-filter_threads", "1",
		"-f", "f64le", "-ar", fmt.Sprint(rate), "-ac", "1", "-i", "pipe:0", "-af", af, "-f", "f64le", "pipe:1")
	cmd.Stdin = bytes.NewReader(f64le(x))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("ffmpeg -af %s: %v: %s", af, err, stderr.Bytes())
	}
	return fromF64le(out)
}

// Noisered runs sox's noisered over x at amount with a profile learnt
// (noiseprof) from noise.
func Noisered(tb testing.TB, x, noise []float64, rate int, amount float64) []float64 {
	tb.Helper()
	sox := need.Program(tb, "sox")
	prof := filepath.Join(tb.TempDir(), "noise.prof")
	raw := []string{"-t", "f64", "-r", fmt.Sprint(rate), "-c", "1"}
	cmd := exec.Command(sox, append(raw, "-", "-n", "noiseprof", prof)...)
	cmd.Stdin = bytes.NewReader(f64le(noise))
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("sox noiseprof: %v: %s", err, out)
	}
	args := append(append(raw, "-"), append(raw, "-", "noisered", prof, fmt.Sprint(amount))...)
	cmd = exec.Command(sox, args...)
	cmd.Stdin = bytes.NewReader(f64le(x))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("sox noisered: %v: %s", err, stderr.Bytes())
	}
	return fromF64le(out)
}

// rnnoisePackage is the RNNoise build the peers run: the library compiled
// to WebAssembly, from npm.
const rnnoisePackage = "@shiguredo/rnnoise-wasm@2025.1.5"

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
func rnnoiseInstall(tb testing.TB) string {
	tb.Helper()
	need.Program(tb, "node")
	npm := need.Program(tb, "npm")
	rnnoiseOnce.Do(func() {
		dir := filepath.Join(testaudio.CacheDir(), "rnnoise-wasm-2025.1.5")
		if _, err := os.Stat(filepath.Join(dir, "node_modules", "@shiguredo", "rnnoise-wasm", "dist", "rnnoise.js")); err != nil {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				rnnoiseErr = err
				return
			}
			cmd := exec.Command(npm, "install", "--no-audit", "--no-fund", "--prefix", dir, rnnoisePackage)
			if out, err := cmd.CombinedOutput(); err != nil {
				rnnoiseErr = fmt.Errorf("npm install %s: %v: %s", rnnoisePackage, err, out)
				return
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "denoise.mjs"), []byte(rnnoiseScript), 0o644); err != nil {
			rnnoiseErr = err
			return
		}
		rnnoiseDir = dir
	})
	if rnnoiseErr != nil {
		need.Unavailable(tb, "installing %s: %v", rnnoisePackage, rnnoiseErr)
	}
	return rnnoiseDir
}

// RNNoise runs RNNoise over mono x at 48 kHz.
func RNNoise(tb testing.TB, x []float64, rate int) []float64 {
	tb.Helper()
	if rate != 48000 {
		tb.Fatalf("RNNoise runs at 48 kHz, not %d", rate)
	}
	node := need.Program(tb, "node")
	dir := rnnoiseInstall(tb)
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
		tb.Fatalf("node rnnoise: %v: %s", err, stderr.Bytes())
	}
	y := make([]float64, len(out)/4)
	for i := range y {
		y[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(out[4*i:])))
	}
	return y
}

// Align returns y shifted to line up with x, as long as x: the lag (of up
// to 100 ms) at which y's most energetic second correlates best with
// x's.
func Align(x, y []float64, rate int) []float64 {
	best, at := -1.0, 0
	for i := 0; i+rate <= len(x); i += rate / 4 {
		var e float64
		for _, v := range x[i : i+rate] {
			e += v * v
		}
		if e > best {
			best, at = e, i
		}
	}
	end := min(at+rate, len(x), len(y))
	out := y
	if end > at {
		out = testaudio.Shift(y, testaudio.Lag(x[at:end], y[at:end], rate/10))
	}
	if len(out) < len(x) {
		out = append(out, make([]float64, len(x)-len(out))...)
	}
	return out[:len(x)]
}

func f64le(x []float64) []byte {
	b := make([]byte, 8*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
	}
	return b
}

func fromF64le(b []byte) []float64 {
	y := make([]float64, len(b)/8)
	for i := range y {
		y[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return y
}
