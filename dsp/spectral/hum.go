package spectral

import (
	"math"
	"math/cmplx"
)

// Hum describes mains hum found in a recording.
type Hum struct {
	// Base is the nominal mains frequency, 50 or 60 Hz; 0 when no hum was
	// found.
	Base int
	// Freq is the measured fundamental in Hz (mains and recorder clocks
	// drift by a fraction of a hertz, and the removal must follow it).
	Freq float64
	// LevelDB is the RMS level of all detected harmonics together, dBFS.
	LevelDB float64
	// Harmonics lists the detected components.
	Harmonics []HumHarmonic
}

// HumHarmonic is one tonal component of the hum.
type HumHarmonic struct {
	Number  int     // multiple of the fundamental
	Freq    float64 // measured frequency, Hz
	LevelDB float64 // RMS level, dBFS
	ToneDB  float64 // how far it stands above the spectrum between harmonics
}

// Detection works on the mono mix box-averaged down to about 2.4 kHz, in
// half-second chunks: per candidate harmonic of 50 and 60 Hz it measures
// the power at the harmonic and half-way to the next one, and the phase
// advance between chunks, which gives the exact frequency.
const (
	humMaxHz     = 1000.0
	humChunkSec  = 0.5
	humDecimRate = 2400.0
)

type humOsc struct {
	base, h int
	f       float64
	w       float64    // radians per decimated sample
	prev    complex128 // previous chunk sum
	ref     bool       // an inter-harmonic reference, not a harmonic
	// Accumulated over chunks.
	pow, refPow float64
	cross       complex128
	crossAbs    float64
}

type humDetector struct {
	fs, d, chunk int
	fd           float64
	acc          float64
	accN         int
	m            int // decimated samples in the current chunk
	chunks       int
	osc          []humOsc
	// Goertzel state per oscillator: 2cos(w), the last two outputs.
	coef, s1, s2 []float64
}

func newHumDetector(sampleRate int) *humDetector {
	d := max(1, int(math.Round(float64(sampleRate)/humDecimRate)))
	fd := float64(sampleRate) / float64(d)
	h := &humDetector{fs: sampleRate, d: d, fd: fd, chunk: max(1, int(math.Round(humChunkSec*fd)))}
	for _, base := range []int{50, 60} {
		for k := 1; float64(k)*float64(base) <= min(humMaxHz, 0.4*fd); k++ {
			for _, ref := range []bool{false, true} {
				f := float64(k) * float64(base)
				if ref {
					f += float64(base) / 2
				}
				w := 2 * math.Pi * f / fd
				h.osc = append(h.osc, humOsc{base: base, h: k, f: f, w: w, ref: ref})
				h.coef = append(h.coef, 2*math.Cos(w))
			}
		}
	}
	h.s1 = make([]float64, len(h.osc))
	h.s2 = make([]float64, len(h.osc))
	return h
}

func (h *humDetector) write(mono []float64) {
	for len(mono) > 0 {
		m := min(len(mono), h.d-h.accN)
		h.acc += sum(mono[:m])
		h.accN += m
		mono = mono[m:]
		if h.accN < h.d {
			continue
		}
		y := h.acc / float64(h.d)
		h.acc, h.accN = 0, 0
		// One Goertzel step per oscillator: s = y + 2cos(w) s1 - s2.
		s1, s2 := h.s1, h.s2[:len(h.s1)]
		for i, c := range h.coef[:len(s1)] {
			s0 := y + c*s1[i] - s2[i]
			s2[i] = s1[i]
			s1[i] = s0
		}
		h.m++
		if h.m == h.chunk {
			h.endChunk()
		}
	}
}

func (h *humDetector) endChunk() {
	norm := 1 / float64(h.chunk)
	M := float64(h.chunk)
	start := float64(h.chunks) * M // decimated samples before this chunk
	for i := range h.osc {
		o := &h.osc[i]
		// The chunk's demodulated sum, sum over n of y[n] exp(-iw(start+n)):
		// Goertzel gives sum y[n] exp(iw(M-1-n)) = s1 - exp(-iw) s2.
		sn, cs := math.Sincos(o.w)
		g := complex(h.s1[i]-cs*h.s2[i], sn*h.s2[i])
		ph := o.f * (start + M - 1) / h.fd
		ph -= math.Floor(ph)
		ps, pc := math.Sincos(-2 * math.Pi * ph)
		c := g * complex(pc*norm, ps*norm)
		h.s1[i], h.s2[i] = 0, 0
		o.pow += real(c)*real(c) + imag(c)*imag(c)
		if h.chunks > 0 {
			x := c * cmplx.Conj(o.prev)
			o.cross += x
			o.crossAbs += cmplx.Abs(x)
		}
		o.prev = c
	}
	h.chunks++
	h.m = 0
}

// boxGain is the amplitude response of a D-sample moving average at f.
func boxGain(f float64, d, fs int) float64 {
	if d == 1 {
		return 1
	}
	x := math.Pi * f / float64(fs)
	return math.Abs(math.Sin(x*float64(d)) / (float64(d) * math.Sin(x)))
}

// harmonics returns the measured harmonics of base: every candidate with
// its level, tonality and measured frequency, and whether it is a
// consistent tone.
func (h *humDetector) harmonics(base int) []HumHarmonic {
	var out []HumHarmonic
	if h.chunks < 2 {
		return nil
	}
	T := float64(h.chunk) / h.fd
	for i := 0; i+1 < len(h.osc); i += 2 {
		t, r := &h.osc[i], &h.osc[i+1]
		if t.base != base {
			continue
		}
		g := boxGain(t.f, h.d, h.fs)
		pt := t.pow / float64(h.chunks) / (g * g)
		pr := r.pow / float64(h.chunks) / (g * g)
		// A hum component keeps its phase from chunk to chunk; speech and
		// noise in the same band do not.
		coh := cmplx.Abs(t.cross) / max(t.crossAbs, 1e-300)
		tone := 10 * math.Log10(pt/max(pr, 1e-30))
		if coh < 0.7 || tone < 3 || pt < 1e-14 {
			continue
		}
		f := t.f + cmplx.Phase(t.cross)/(2*math.Pi*T)
		// Mean square of a sinusoid is twice the power of its analytic half.
		out = append(out, HumHarmonic{Number: t.h, Freq: f, LevelDB: 10 * math.Log10(2*max(pt-pr, 1e-30)), ToneDB: tone})
	}
	return out
}

func (h *humDetector) result() Hum {
	best := Hum{}
	bestScore := 0.0
	for _, base := range []int{50, 60} {
		hs := h.harmonics(base)
		score := 0.0
		for _, x := range hs {
			score += x.ToneDB
		}
		ok := len(hs) >= 2 || (len(hs) == 1 && hs[0].ToneDB >= 10)
		if ok && score > bestScore {
			bestScore = score
			best = Hum{Base: base, Harmonics: hs}
		}
	}
	if best.Base == 0 {
		return best
	}
	var pw, fw, w float64
	for _, x := range best.Harmonics {
		p := math.Pow(10, x.LevelDB/10)
		pw += p
		fw += p * x.Freq / float64(x.Number)
		w += p
	}
	best.Freq = fw / w
	best.LevelDB = 10 * math.Log10(pw)
	return best
}
