// Package testaudio makes test material whose truth is known and measures
// processing results against it: speech from espeak-ng, synthetic voices,
// noise, hum, a synthetic room, music; the figures quality tests compare
// (level, SI-SDR, correlation, alignment); and the WAV files and whole
// reads tests make. It is the one home of the module's test material: the
// plain signals that examples and codec tests use (a sine, uniform noise,
// the generator every signal draws from) are in audio/audiotest, which
// this package builds on and whose importers may not import this one (the
// WAV helpers here import audio/wav).
package testaudio

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"math/cmplx"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	"github.com/audiopost/audiopost/audio/wav"
	"github.com/audiopost/audiopost/internal/fft"
	"github.com/audiopost/audiopost/internal/need"
)

// Voice selects an espeak-ng voice and speaking style.
type Voice struct {
	// Name is the espeak-ng voice ("en-us", "en-gb", "en-us+f3", ...);
	// empty means "en-us".
	Name string
	// WPM is the speaking rate in words per minute; 0 means 160.
	WPM int
	// Pitch is espeak-ng's pitch, 0 to 99; 0 means 50.
	Pitch int
}

// Voices are distinct voices for multi-speaker material.
var Voices = []Voice{
	{Name: "en-us", Pitch: 40},
	{Name: "en-gb+f3", Pitch: 65},
	{Name: "en-us+m3", Pitch: 30, WPM: 150},
	{Name: "en-gb-scotland+f2", Pitch: 70, WPM: 170},
	{Name: "en-029+m2", Pitch: 45, WPM: 145},
	{Name: "en-us+f4", Pitch: 80, WPM: 175},
}

// Sentences is a fixed corpus of test phrases.
var Sentences = []string{
	"The quick brown fox jumps over the lazy dog.",
	"Welcome back to the show, today we talk about audio.",
	"Every recording has a little noise in the background.",
	"She sells sea shells by the sea shore in the summer.",
	"Podcasts are often recorded in rooms that were never built for sound.",
	"A good microphone close to the mouth makes the biggest difference.",
	"Please remember to subscribe and tell your friends about us.",
	"The weather tomorrow will be cloudy with a chance of rain.",
	"Loudness normalization keeps every episode at the same level.",
	"Thank you for listening, and see you next week.",
}

var speechCache sync.Map // key -> []float64

// CacheDir is the directory synthesized test audio is kept in between
// runs, so that only the first run on a machine pays for espeak-ng and
// sox: audiopost/testaudio in the user's cache directory (where the Go
// build cache lives), or in the temporary directory without one. It is
// fixed by the first call.
var CacheDir = sync.OnceValue(func() string {
	if dir, err := os.UserCacheDir(); err == nil {
		return filepath.Join(dir, "audiopost", "testaudio")
	}
	return filepath.Join(os.TempDir(), "audiopost-testaudio")
})

// Speech synthesizes text with espeak-ng at sampleRate (resampled by sox),
// mono, with the level espeak-ng gives (peaks near full scale). Results are
// cached for the life of the test binary.
func Speech(t testing.TB, sampleRate int, text string, v Voice) []float64 {
	t.Helper()
	if v.Name == "" {
		v.Name = "en-us"
	}
	if v.WPM == 0 {
		v.WPM = 160
	}
	if v.Pitch == 0 {
		v.Pitch = 50
	}
	key := fmt.Sprintf("%d|%s|%d|%d|%s", sampleRate, v.Name, v.WPM, v.Pitch, text)
	if x, ok := speechCache.Load(key); ok {
		return append([]float64(nil), x.([]float64)...)
	}
	espeak := need.Program(t, "espeak-ng")
	sox := need.Program(t, "sox")
	sum := sha256.Sum256([]byte(key))
	dir := CacheDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	raw := filepath.Join(dir, hex.EncodeToString(sum[:8])+".f64")
	if data, err := os.ReadFile(raw); err == nil && len(data)%8 == 0 && len(data) > 0 {
		x := decodeF64(data)
		speechCache.Store(key, x)
		return append([]float64(nil), x...)
	}
	wav := raw + ".wav"
	cmd := exec.Command(espeak, "-v", v.Name, "-s", strconv.Itoa(v.WPM), "-p", strconv.Itoa(v.Pitch), "-w", wav, text)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("espeak-ng: %v: %s", err, out)
	}
	defer os.Remove(wav)
	cmd = exec.Command(sox, wav, "-t", "f64", "-c", "1", "-r", strconv.Itoa(sampleRate), "-", "rate", "-v")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("sox: %v: %s", err, stderr.Bytes())
	}
	x := decodeF64(stdout.Bytes())
	tmp := raw + fmt.Sprintf(".%d.tmp", os.Getpid())
	if os.WriteFile(tmp, stdout.Bytes(), 0o644) == nil {
		os.Rename(tmp, raw)
	}
	speechCache.Store(key, x)
	return append([]float64(nil), x...)
}

func decodeF64(b []byte) []float64 {
	x := make([]float64, len(b)/8)
	for i := range x {
		x[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return x
}

// Phrases joins spoken phrases with pause seconds of digital silence
// between them (and half a pause before the first and after the last), and
// returns the signal and where each phrase is. Phrases rotate through
// voices when several are given.
func Phrases(t testing.TB, sampleRate int, texts []string, pause float64, voices ...Voice) ([]float64, []audio.Span) {
	t.Helper()
	if len(voices) == 0 {
		voices = []Voice{{}}
	}
	gap := int(pause * float64(sampleRate))
	out := make([]float64, gap/2)
	var spans []audio.Span
	for i, text := range texts {
		s := TrimSilence(Speech(t, sampleRate, text, voices[i%len(voices)]), 1e-4)
		spans = append(spans, frames(len(out), len(out)+len(s)))
		out = append(out, s...)
		if i < len(texts)-1 {
			out = append(out, make([]float64, gap)...)
		}
	}
	out = append(out, make([]float64, gap/2)...)
	return out, spans
}

// TrimSilence removes leading and trailing samples below thresh.
func TrimSilence(x []float64, thresh float64) []float64 {
	a, b := 0, len(x)
	for a < b && math.Abs(x[a]) < thresh {
		a++
	}
	for b > a && math.Abs(x[b-1]) < thresh {
		b--
	}
	return x[a:b]
}

// WhiteNoise returns n samples of Gaussian white noise with the given RMS.
func WhiteNoise(n int, rms float64, seed uint64) []float64 {
	r := audiotest.NewRand(seed)
	x := make([]float64, n)
	for i := range x {
		x[i] = rms * r.Gauss()
	}
	return x
}

// PinkNoise returns n samples of 1/f noise (Paul Kellet's filter over white
// noise) scaled to the given RMS.
func PinkNoise(n int, rms float64, seed uint64) []float64 {
	r := audiotest.NewRand(seed)
	x := make([]float64, n)
	var b0, b1, b2, b3, b4, b5, b6 float64
	for i := range x {
		w := r.Gauss()
		b0 = 0.99886*b0 + w*0.0555179
		b1 = 0.99332*b1 + w*0.0750759
		b2 = 0.96900*b2 + w*0.1538520
		b3 = 0.86650*b3 + w*0.3104856
		b4 = 0.55000*b4 + w*0.5329522
		b5 = -0.7616*b5 - w*0.0168980
		x[i] = b0 + b1 + b2 + b3 + b4 + b5 + b6 + w*0.5362
		b6 = w * 0.115926
	}
	return Scale(x, rms/RMS(x))
}

// Hum returns n samples of power-line hum at base Hz with every harmonic up
// to maxHz, harmonics falling 3 dB each, scaled to the given RMS.
func Hum(n, sampleRate int, base, maxHz, rms float64) []float64 {
	x := make([]float64, n)
	for h := 1; float64(h)*base <= maxHz; h++ {
		a := math.Pow(10, -3*float64(h-1)/20)
		w := 2 * math.Pi * base * float64(h) / float64(sampleRate)
		ph := 0.7 * float64(h)
		for i := range x {
			x[i] += a * math.Sin(w*float64(i)+ph)
		}
	}
	return Scale(x, rms/RMS(x))
}

// RoomImpulse returns the impulse response of a synthetic room: a direct
// path of 1, then after 5 ms exponentially decaying noise with the given
// RT60 (the time the energy takes to fall 60 dB), scaled so that the
// energy of the direct path over that of the reverberation is drrDB (the
// direct-to-reverberant ratio: about +5 dB for a close microphone, 0 dB a
// metre or two away in a lively room, below -10 dB across a hall).
func RoomImpulse(sampleRate int, rt60, drrDB float64, seed uint64) []float64 {
	n := int(rt60 * 1.2 * float64(sampleRate))
	h := make([]float64, n)
	r := audiotest.NewRand(seed)
	decay := 6.91 / (rt60 * float64(sampleRate)) // ln(1000) per RT60 in amplitude
	pre := int(0.005 * float64(sampleRate))      // first reflections after 5 ms
	var tail float64
	for i := pre; i < n; i++ {
		h[i] = r.Gauss() * math.Exp(-decay*float64(i-pre))
		tail += h[i] * h[i]
	}
	g := math.Sqrt(math.Pow(10, -drrDB/10) / tail)
	for i := pre; i < n; i++ {
		h[i] *= g
	}
	h[0] = 1
	return h
}

// Convolve returns x convolved with h, as long as x.
func Convolve(x, h []float64) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		if v == 0 {
			continue
		}
		for j := 0; j < len(h) && i+j < len(y); j++ {
			y[i+j] += v * h[j]
		}
	}
	return y
}

// Music returns seconds of synthetic music at sampleRate: sustained,
// harmonically rich chords that change every half second, a bass line and
// a soft percussive tick on every beat, at an RMS of about -20 dBFS.
func Music(sampleRate int, seconds float64, seed uint64) []float64 {
	n := int(seconds * float64(sampleRate))
	x := make([]float64, n)
	fs := float64(sampleRate)
	chords := [][3]float64{{220, 277.2, 329.6}, {196, 246.9, 293.7}, {174.6, 220, 261.6}, {246.9, 311.1, 370}}
	r := audiotest.NewRand(seed)
	for i := range x {
		t := float64(i) / fs
		k := (int(t/0.5) + int(seed)) % len(chords)
		for _, f := range chords[k] {
			for h := 1.0; h <= 6; h++ {
				x[i] += 0.03 * math.Sin(2*math.Pi*f*h*t) / h
			}
		}
		x[i] += 0.05 * math.Sin(2*math.Pi*chords[k][0]/4*t)
		beat := math.Mod(t, 0.5)
		x[i] += 0.04 * r.Gauss() * math.Exp(-beat*60)
		x[i] *= 1 + 0.3*math.Sin(2*math.Pi*0.2*t)
	}
	return Scale(x, 0.1/RMS(x))
}

// Scale multiplies x by g in place and returns it.
func Scale(x []float64, g float64) []float64 {
	for i := range x {
		x[i] *= g
	}
	return x
}

// Add returns a + b over the length of a (b is zero beyond its end).
func Add(a, b []float64) []float64 {
	y := append([]float64(nil), a...)
	for i := range y {
		if i < len(b) {
			y[i] += b[i]
		}
	}
	return y
}

// RMS returns the root mean square of x (0 for an empty slice).
func RMS(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	var s float64
	for _, v := range x {
		s += v * v
	}
	return math.Sqrt(s / float64(len(x)))
}

// DB returns the RMS level of x in dBFS (a full-scale square wave is 0).
func DB(x []float64) float64 { return 20 * math.Log10(RMS(x)) }

// SpanDB returns the RMS level in dBFS of the frames of x inside spans.
func SpanDB(x []float64, spans []audio.Span) float64 {
	var s float64
	n := 0
	for _, sp := range spans {
		for i := max(int(sp.Start), 0); i < min(int(sp.End), len(x)); i++ {
			s += x[i] * x[i]
			n++
		}
	}
	return 10 * math.Log10(s/float64(max(n, 1)))
}

// frames is the span [a, b) of slice indices.
func frames(a, b int) audio.Span { return audio.Span{Start: int64(a), End: int64(b)} }

// Complement returns the ranges of [0, n) that no span covers, each shrunk
// by margin frames at both ends (so transitions do not count).
func Complement(spans []audio.Span, n, margin int) []audio.Span {
	var out []audio.Span
	at := 0
	for _, sp := range spans {
		if int(sp.Start)-margin > at+margin {
			out = append(out, frames(at+margin, int(sp.Start)-margin))
		}
		at = max(at, int(sp.End))
	}
	if n-margin > at+margin {
		out = append(out, frames(at+margin, n-margin))
	}
	return out
}

// MixAtSNR returns clean plus noise scaled so that the ratio of clean's
// power over the active (non-silent) part of clean to noise's power is
// snrDB, and the scaled noise.
func MixAtSNR(clean, noise []float64, snrDB float64) (mix, scaled []float64) {
	var s float64
	n := 0
	for _, v := range clean {
		if math.Abs(v) > 1e-4 {
			s += v * v
			n++
		}
	}
	sig := math.Sqrt(s / float64(max(n, 1)))
	g := sig / RMS(noise[:min(len(noise), len(clean))]) * math.Pow(10, -snrDB/20)
	scaled = Scale(append([]float64(nil), noise[:min(len(noise), len(clean))]...), g)
	return Add(clean, scaled), scaled
}

// Correlation returns the Pearson correlation of x and y over their common
// length.
func Correlation(x, y []float64) float64 {
	n := min(len(x), len(y))
	var sx, sy, sxx, syy, sxy float64
	for i := 0; i < n; i++ {
		sx += x[i]
		sy += y[i]
		sxx += x[i] * x[i]
		syy += y[i] * y[i]
		sxy += x[i] * y[i]
	}
	fn := float64(n)
	cov := sxy - sx*sy/fn
	return cov / math.Sqrt((sxx-sx*sx/fn)*(syy-sy*sy/fn))
}

// SISDR returns the scale-invariant signal-to-distortion ratio in dB of
// est against ref over their common length (Le Roux et al., 2019).
func SISDR(ref, est []float64) float64 {
	n := min(len(ref), len(est))
	var rr, re float64
	for i := 0; i < n; i++ {
		rr += ref[i] * ref[i]
		re += ref[i] * est[i]
	}
	if rr == 0 {
		return math.Inf(-1)
	}
	a := re / rr
	var st, se float64
	for i := 0; i < n; i++ {
		t := a * ref[i]
		e := est[i] - t
		st += t * t
		se += e * e
	}
	return 10 * math.Log10(st/se)
}

// Lag returns the shift d in [-maxLag, maxLag] that maximises the
// correlation of ref[i] with est[i+d]: how late est is.
//
// Past a few hundred shifts the correlation at every shift costs
// maxLag times the length (a peer's alignment, 9601 shifts of a second at
// 48 kHz, took 0.4 s of CPU): there every shift's correlation comes from
// one FFT first, and only the shifts within a billionth of the norms'
// product of its largest, far more than the FFT's rounding, are summed
// again as below, so that the result is the direct search's exactly.
func Lag(ref, est []float64, maxLag int) int {
	n := min(len(ref), len(est))
	if maxLag > 256 && n > 0 {
		return lagFFT(ref[:n], est, maxLag)
	}
	return lagAt(ref, est, -maxLag, maxLag, nil)
}

// lagAt is Lag's direct search over the shifts from lo to hi, or over
// those of only where only is not nil.
func lagAt(ref, est []float64, lo, hi int, only []bool) int {
	best, bestC := 0, math.Inf(-1)
	n := min(len(ref), len(est))
	for d := lo; d <= hi; d++ {
		if only != nil && !only[d-lo] {
			continue
		}
		var c float64
		for i := max(0, -d); i < n && i+d < len(est); i++ {
			c += ref[i] * est[i+d]
		}
		if c > bestC {
			best, bestC = d, c
		}
	}
	return best
}

// lagFFT is Lag by the circular correlation of ref and est zero-padded
// to a power of two past both lengths (no wrap-around), checked as Lag's
// comment says.
func lagFFT(ref, est []float64, maxLag int) int {
	size := 2
	for size < len(ref)+len(est) {
		size *= 2
	}
	plan := fft.NewReal(size)
	pad := make([]float64, size)
	spec := func(x []float64) []complex128 {
		clear(pad)
		copy(pad, x)
		c := make([]complex128, size/2+1)
		plan.Coefficients(c, pad)
		return c
	}
	r, e := spec(ref), spec(est)
	for k := range r {
		r[k] = cmplx.Conj(r[k]) * e[k]
	}
	corr := make([]float64, size)
	plan.Sequence(corr, r) // size times the correlation at shift k (mod size)
	at := func(d int) float64 {
		if d <= -len(ref) || d >= len(est) {
			return 0 // no overlap: Lag's sum is empty
		}
		return corr[(d+size)%size] / float64(size)
	}
	top := math.Inf(-1)
	for d := -maxLag; d <= maxLag; d++ {
		top = max(top, at(d))
	}
	var er, ee float64
	for _, v := range ref {
		er += v * v
	}
	for _, v := range est {
		ee += v * v
	}
	tol := 1e-9 * math.Sqrt(er*ee)
	near := make([]bool, 2*maxLag+1)
	for d := -maxLag; d <= maxLag; d++ {
		near[d+maxLag] = at(d) >= top-tol
	}
	return lagAt(ref, est, -maxLag, maxLag, near)
}

// Shift returns est moved earlier by d frames (later for negative d),
// padded with zeros, as long as est.
func Shift(est []float64, d int) []float64 {
	out := make([]float64, len(est))
	for i := range out {
		if j := i + d; j >= 0 && j < len(est) {
			out[i] = est[j]
		}
	}
	return out
}

// SpeechLike synthesizes seconds of a voiced, syllabic stereo signal
// without external tools: a 130 Hz harmonic series (falling 1/k) under a
// 4 Hz syllable envelope with a pause every 2 s, the right channel 6 dB
// below the left so that a mono mixdown differs from either. For a voice
// with formants and fricatives, see SynthVoice.
func SpeechLike(rate int, seconds float64, amp float64) audio.Buffer {
	n := int(seconds * float64(rate))
	l, r := make([]float64, n), make([]float64, n)
	for i := 0; i < n; i++ {
		t := float64(i) / float64(rate)
		f0 := 130 * (1 + 0.1*math.Sin(2*math.Pi*0.7*t))
		var v float64
		for k := 1; k <= 12; k++ {
			v += math.Sin(2*math.Pi*f0*float64(k)*t) / float64(k)
		}
		env := math.Max(0, math.Sin(2*math.Pi*4*t))
		if math.Mod(t, 2) > 1.6 {
			env = 0
		}
		l[i] = amp * env * v
		r[i] = amp * env * v * 0.5
	}
	return audio.Buffer{l, r}
}

// SynthVoice synthesizes seconds of a mono voice without external tools:
// a glottal pulse train with a gliding fundamental near f0 through three
// formant resonators (600, 1400 and 2600 Hz), syllables at about 4 Hz,
// unvoiced fricative bursts (a 5 kHz band of noise) and a pause of 0.6 s
// every 2.6 s. Its level is -20 dBFS RMS over the active samples; it is
// full band up to about 10 kHz. The seed varies the syllables, the
// fricatives and the phase of the glide.
func SynthVoice(fs int, seconds float64, f0 float64, seed uint64) []float64 {
	n := int(seconds * float64(fs))
	out := make([]float64, n)
	r := audiotest.Rand(seed*7919 + 17)
	fsf := float64(fs)
	formants := []biquad{bandPass(fsf, 600, 4), bandPass(fsf, 1400, 5), bandPass(fsf, 2600, 6)}
	gains := []float64{1, 0.6, 0.35}
	fz := make([][2]float64, 3)
	fric := bandPass(fsf, 5000, 1.5)
	var frz [2]float64
	glot := struct{ v, a float64 }{a: 1 - math.Exp(-2*math.Pi*300/fsf)}
	phase := 0.0
	syl := 0.0
	sylRate := 4.0 + r.Uniform()
	fricOn := false
	for i := 0; i < n; i++ {
		t := float64(i) / fsf
		f := f0 * (1 + 0.15*math.Sin(2*math.Pi*0.7*t+float64(seed)))
		phase += f / fsf
		pulse := 0.0
		if phase >= 1 {
			phase -= 1
			pulse = 1
		}
		// Pulse train through formants. The glottal source itself
		// carries the fundamental and the low harmonics, as a real voice
		// does.
		glot.v += (pulse*40 - glot.v) * glot.a
		v := glot.v * 0.05
		for k, c := range formants {
			y := c.b0*pulse + fz[k][0]
			fz[k][0] = c.b1*pulse - c.a1*y + fz[k][1]
			fz[k][1] = c.b2*pulse - c.a2*y
			v += gains[k] * y
		}
		syl += sylRate / fsf
		if syl >= 1 {
			syl -= 1
			sylRate = 3 + 2*r.Uniform()
			fricOn = r.Uniform() < 0.3
		}
		env := math.Pow(math.Sin(math.Pi*syl), 2)
		if math.Mod(t, 2.6) > 2.0 {
			env = 0
		}
		nz := 0.0
		if fricOn && syl > 0.6 && env > 0 {
			x := r.Float()
			y := fric.b0*x + frz[0]
			frz[0] = fric.b1*x - fric.a1*y + frz[1]
			frz[1] = fric.b2*x - fric.a2*y
			nz = 0.15 * y
		}
		out[i] = 0.9*env*v + nz
	}
	return ScaleTo(out, -20)
}

// biquad holds normalized biquad coefficients (a0 = 1). The test material
// has its own: the tests of package dsp use this package, so it cannot
// import dsp.
type biquad struct{ b0, b1, b2, a1, a2 float64 }

// bandPass is the band-pass of the Audio EQ Cookbook (constant 0 dB peak
// gain) at f0 Hz with quality q, computed as dsp.BandPassCoeffs does.
func bandPass(fs, f0, q float64) biquad {
	w0 := 2 * math.Pi * f0 / fs
	c, s := math.Cos(w0), math.Sin(w0)
	alpha := s / (2 * q)
	a0 := 1 + alpha
	return biquad{b0: alpha / a0, b1: 0 / a0, b2: -alpha / a0, a1: -2 * c / a0, a2: (1 - alpha) / a0}
}

// ScaleTo scales x in place so that its RMS over the non-zero samples is
// db dBFS, and returns it.
func ScaleTo(x []float64, db float64) []float64 {
	var s float64
	n := 0
	for _, v := range x {
		if v != 0 {
			s += v * v
			n++
		}
	}
	if n == 0 {
		return x
	}
	g := math.Pow(10, db/20) / math.Sqrt(s/float64(n))
	for i := range x {
		x[i] *= g
	}
	return x
}

// WriteWAV writes planar audio as a 16-bit WAV file.
func WriteWAV(t testing.TB, path string, b [][]float64, rate int) {
	t.Helper()
	WriteWAVBits(t, path, b, rate, 16)
}

// WriteWAVBits writes planar audio as a WAV file of the bit depth (16, 24,
// or 32 for float).
func WriteWAVBits(t testing.TB, path string, b [][]float64, rate, bits int) {
	t.Helper()
	if err := os.WriteFile(path, EncodeWAV(t, b, rate, bits), 0o644); err != nil {
		t.Fatal(err)
	}
}

// MemFile is an in-memory io.ReadWriteSeeker and io.ReaderAt: the
// seekable file that encoders patching their header on Close write to in
// tests.
type MemFile struct {
	B   []byte
	off int64
}

// Write implements io.Writer.
func (m *MemFile) Write(p []byte) (int, error) {
	end := int(m.off) + len(p)
	if end > len(m.B) {
		m.B = append(m.B, make([]byte, end-len(m.B))...)
	}
	copy(m.B[m.off:], p)
	m.off = int64(end)
	return len(p), nil
}

// Read implements io.Reader.
func (m *MemFile) Read(p []byte) (int, error) {
	if m.off >= int64(len(m.B)) {
		return 0, io.EOF
	}
	n := copy(p, m.B[m.off:])
	m.off += int64(n)
	return n, nil
}

// Seek implements io.Seeker.
func (m *MemFile) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		off += m.off
	case io.SeekEnd:
		off += int64(len(m.B))
	}
	if off < 0 {
		return 0, errors.New("MemFile: negative offset")
	}
	m.off = off
	return off, nil
}

// ReadAt implements io.ReaderAt, so that a MemFile can stand for a file
// that is read back after it was written.
func (m *MemFile) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("MemFile: negative offset")
	}
	if off >= int64(len(m.B)) {
		return 0, io.EOF
	}
	n := copy(p, m.B[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// EncodeWAV returns b as a WAV file written by audiopost's encoder at the
// bit depth (16, 24, or 32 for float) to a seekable buffer.
func EncodeWAV(t testing.TB, b audio.Buffer, rate, bits int) []byte {
	t.Helper()
	m := &MemFile{}
	e, err := wav.NewEncoder(context.Background(), m, audio.Format{SampleRate: rate, Channels: len(b)}, audio.EncodeOptions{BitDepth: bits})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	return m.B
}

// ReadFile decodes the audio file at path whole with the decoders the
// test binary registers (audio.Open) and returns it with its sample rate.
func ReadFile(tb testing.TB, path string) (audio.Buffer, int) {
	tb.Helper()
	d, err := audio.Open(context.Background(), path)
	if err != nil {
		tb.Fatalf("decoding %s: %v", filepath.Base(path), err)
	}
	defer d.Close()
	b, err := audio.ReadAll(context.Background(), d)
	if err != nil {
		tb.Fatalf("decoding %s: %v", filepath.Base(path), err)
	}
	return b, d.Format().SampleRate
}

// ReadAll reads src to its end and returns what it read, failing tb on an
// error.
func ReadAll(tb testing.TB, src audio.Source) audio.Buffer {
	tb.Helper()
	b, err := audio.ReadAll(context.Background(), src)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// DecodeWAV decodes a WAV file with audiopost's decoder.
func DecodeWAV(t testing.TB, file []byte) audio.Buffer {
	t.Helper()
	d, err := wav.NewDecoder(context.Background(), bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	b, err := audio.ReadAll(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Reset empties the file, keeping its memory.
func (m *MemFile) Reset() { m.B, m.off = m.B[:0], 0 }

// Turn is one speaker's turn in a Conversation: where it starts and the
// level, in dB, its speech (and its microphone's noise) was scaled by.
type Turn struct {
	Start  int
	GainDB float64
}

// Conversation makes seconds of speakers taking turns: each turn is
// phrasesPerTurn phrases of one voice separated by pause seconds, scaled
// by the next of gainsDB (cycling), with pink noise noiseDB below the
// speech under everything, scaled with its turn as a microphone's own
// noise is. The unscaled speech sits near -26 dBFS RMS. It returns the
// mono signal, the phrases and the turns.
func Conversation(t testing.TB, sampleRate int, seconds float64, phrasesPerTurn int, pause float64, gainsDB []float64, noiseDB float64) ([]float64, []audio.Span, []Turn) {
	t.Helper()
	n := int(seconds * float64(sampleRate))
	x := make([]float64, 0, n)
	var spans []audio.Span
	var turns []Turn
	gap := int(pause * float64(sampleRate))
	for k := 0; len(x) < n; k++ {
		v := Voices[k%len(Voices)]
		g := math.Pow(10, gainsDB[k%len(gainsDB)]/20)
		start := len(x)
		turns = append(turns, Turn{Start: start, GainDB: gainsDB[k%len(gainsDB)]})
		for p := 0; p < phrasesPerTurn && len(x) < n; p++ {
			s := TrimSilence(Speech(t, sampleRate, Sentences[(k*phrasesPerTurn+p)%len(Sentences)], v), 1e-4)
			s = Scale(s, 0.05/RMS(s)*g)
			spans = append(spans, frames(len(x), min(n, len(x)+len(s))))
			x = append(x, s...)
			x = append(x, make([]float64, gap)...)
		}
		noise := PinkNoise(len(x)-start, 0.05*g*math.Pow(10, noiseDB/20), uint64(k+1))
		for i, v := range noise {
			x[start+i] += v
		}
	}
	return x[:n], spans, turns
}
