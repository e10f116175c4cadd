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
	ys           []float64 // decimated samples awaiting the oscillators
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
	// The decimated samples of the write, up to each chunk's end, then
	// the oscillators over them (goertzel).
	ys := h.ys[:0]
	for len(mono) > 0 {
		m := min(len(mono), h.d-h.accN)
		h.acc += sum(mono[:m])
		h.accN += m
		mono = mono[m:]
		if h.accN < h.d {
			continue
		}
		ys = append(ys, h.acc/float64(h.d))
		h.acc, h.accN = 0, 0
		h.m++
		if h.m == h.chunk {
			goertzel(h.coef, h.s1, h.s2, ys)
			ys = ys[:0]
			h.endChunk()
		}
	}
	goertzel(h.coef, h.s1, h.s2, ys)
	h.ys = ys[:0]
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

// Mains hum wanders: the grid's frequency moves by a few tenths of a hertz
// over minutes, and a recorder's clock adds its own offset. A hum removal
// that assumes one frequency for the whole file leaves the twentieth
// harmonic several hertz off after a 0.25 Hz drift. All harmonics of mains
// hum share one phase, so humTracker follows the phase of the fundamental
// jointly from every harmonic: a Kalman filter on the phase and frequency
// deviation from a reference frequency, one step per block of about one
// period, smoothed by a fixed-lag Rauch-Tung-Striebel pass.
//
// Each harmonic h measures the phase through its block's complex sum y_h,
// modelled as A_h exp(i h psi) plus whatever else sounds in its band: the
// measurement variance is that band's power beyond the hum's (never under
// humFloor of the hum's), so a harmonic buried under a vowel counts for
// little and the low ones, under the voice, carry the phase through
// speech; one that disagrees with the prediction by more than humGate
// standard deviations (a click, a plosive) does not count at all. The
// amplitudes A_h follow the phase-aligned sums slowly (humAmpTau), each
// block weighted by the inverse of its band power. Because the phase
// reference is only defined together with the amplitudes, the tracker
// starts with a forward, a backward and a forward run over its first
// blocks, so that the first block already has amplitudes measured over
// more than its own noise.
const (
	humTrackQ = 0.375 // frequency random walk, rad^2/s^3
	humFloor  = 0.3   // least measurement noise, relative to the harmonic's power
	// humLeak is the least measurement noise relative to the strongest
	// harmonic's power: what leaks into a weak harmonic's band from the
	// strong ones.
	humLeak   = 1e-3
	humGate   = 2.0 // standard deviations
	humAmpTau = 2.0 // seconds
)

const (
	humEBlk = 2 // blocks either side for a band's power
	// humDevHz is the initial uncertainty of the frequency: how far the
	// hum may lie from the reference (detected or nominal) frequency.
	humDevHz = 0.5
)

// humTracker follows the phase deviation psi of a hum's fundamental from
// 2 pi f0 t, block by block.
type humTracker struct {
	h     int        // harmonics measured
	q     [3]float64 // process noise: q00, q01, q11 per block
	p0w   float64    // initial variance of the frequency, (rad/block)^2
	alpha float64    // amplitude update rate per block
	lag   int        // blocks of the fixed-lag smoother
	ninit int        // blocks of the start-up runs
	n     int64      // blocks pushed
	start bool
	y     [][]complex128 // ring of measurements, [block % len][h]
	pw    [][]float64    // their powers
	ok    []bool         // block measured (inside the stream)
	a     []complex128   // amplitudes, [h]
	aw    []float64      // running mean of the amplitude weights
	e     []float64      // scratch: band powers of the block being filtered
	x, xp [][2]float64   // ring (lag+1): filtered and predicted state
	p, pp [][3]float64   // their covariances (p00, p01, p11)
	cx    [2]float64     // the latest filtered state
	cp    [3]float64
	cj    int64 // its block
	// The prediction step made last, stored with the filtered state.
	lastXP [2]float64
	lastPP [3]float64
}

// newHumTracker returns a tracker for h harmonics measured in blocks of
// blockSec seconds, whose smoothed phase comes out delay blocks after the
// block is pushed (delay > humEBlk).
func newHumTracker(h int, blockSec float64, delay int) *humTracker {
	t := &humTracker{h: h, lag: delay - humEBlk, ninit: delay + 1}
	qc := humTrackQ * blockSec * blockSec * blockSec
	t.q = [3]float64{qc / 3, qc / 2, qc}
	w := 2 * math.Pi * humDevHz * blockSec
	t.p0w = w * w
	t.alpha = blockSec / humAmpTau
	t.y = make([][]complex128, t.ninit+1)
	t.pw = make([][]float64, len(t.y))
	for i := range t.y {
		t.y[i] = make([]complex128, h)
		t.pw[i] = make([]float64, h)
	}
	t.ok = make([]bool, len(t.y))
	t.a = make([]complex128, h)
	t.aw = make([]float64, h)
	t.e = make([]float64, h)
	t.x = make([][2]float64, t.lag+1)
	t.xp = make([][2]float64, t.lag+1)
	t.p = make([][3]float64, t.lag+1)
	t.pp = make([][3]float64, t.lag+1)
	return t
}

// push adds the harmonics' complex amplitudes of the next block (measured
// false for a block past the end of the stream) and returns the smoothed
// phase deviation of the block delay blocks back, once there is one.
func (t *humTracker) push(y []complex128, measured bool) (float64, bool) {
	k := t.n
	t.n++
	slot := int(k % int64(len(t.y)))
	copy(t.y[slot], y)
	for i, v := range y {
		t.pw[slot][i] = real(v)*real(v) + imag(v)*imag(v)
	}
	t.ok[slot] = measured
	if !t.start {
		if k+1 < int64(t.ninit) && measured {
			return 0, false
		}
		t.startup(k)
		t.start = true
	} else if j := k - humEBlk; j >= 0 {
		t.cx, t.cp = t.step(j, t.cx, t.cp, false)
		t.keep(j)
	}
	s := k - humEBlk - int64(t.lag)
	if s < 0 {
		return 0, false
	}
	return t.smooth(s), true
}

// startup runs the start-up passes over blocks 0..k-humEBlk: forward from
// no knowledge, backward to the first block, and forward again from there
// with the amplitudes the backward run ended with, keeping this last run's
// states.
func (t *humTracker) startup(k int64) {
	last := k - humEBlk
	if last < 0 {
		t.cj = -1
		t.cx, t.cp = [2]float64{}, [3]float64{1e-4, 0, t.p0w}
		return
	}
	for j := int64(0); j <= k; j++ { // amplitudes from the first measured block
		if s := int(j % int64(len(t.y))); t.ok[s] {
			copy(t.a, t.y[s])
			break
		}
	}
	x, p := [2]float64{}, [3]float64{1e-4, 0, t.p0w}
	for j := int64(0); j <= last; j++ {
		x, p = t.step(j, x, p, j == 0)
	}
	x, p = [2]float64{x[0], -x[1]}, [3]float64{1e-4, 0, 1e-5}
	for j := last; j >= 0; j-- {
		x, p = t.step(j, x, p, j == last)
	}
	x, p = [2]float64{x[0], -x[1]}, [3]float64{1e-4, 0, 1e-5}
	for j := int64(0); j <= last; j++ {
		x, p = t.step(j, x, p, j == 0)
		t.cx, t.cp = x, p
		t.keep(j)
	}
}

// keep stores the current filtered state as block j's.
func (t *humTracker) keep(j int64) {
	s := int(j % int64(len(t.x)))
	t.x[s], t.p[s] = t.cx, t.cp
	t.xp[s], t.pp[s] = t.lastXP, t.lastPP
	t.cj = j
}

// step filters block j from the state x, p of the block before it in the
// run's direction (first: x, p are block j's prediction already), updates
// the amplitudes, and returns block j's filtered state.
func (t *humTracker) step(j int64, x [2]float64, p [3]float64, first bool) ([2]float64, [3]float64) {
	if !first {
		// x' = F x, P' = F P F^T + Q with F = [[1, 1], [0, 1]].
		x = [2]float64{x[0] + x[1], x[1]}
		p = [3]float64{p[0] + 2*p[1] + p[2] + t.q[0], p[1] + p[2] + t.q[1], p[2] + t.q[2]}
	}
	t.lastXP, t.lastPP = x, p
	slot := int(j % int64(len(t.y)))
	if !t.ok[slot] {
		return x, p
	}
	// Each band's power around block j, over the measured blocks at hand.
	clear(t.e)
	cnt := 0
	for i := max(0, j-humEBlk); i <= min(t.n-1, j+humEBlk); i++ {
		s := int(i % int64(len(t.y)))
		if !t.ok[s] {
			continue
		}
		for h, v := range t.pw[s] {
			t.e[h] += v
		}
		cnt++
	}
	for h := range t.e {
		t.e[h] /= float64(cnt)
	}
	y := t.y[slot]
	var num, den float64
	var top float64
	for _, a := range t.a {
		top = max(top, real(a)*real(a)+imag(a)*imag(a))
	}
	for h := range t.h {
		a := t.a[h]
		a2 := real(a)*real(a) + imag(a)*imag(a)
		if a2 == 0 {
			continue
		}
		hf := float64(h + 1)
		r := (max(t.e[h]-a2, humFloor*a2, humLeak*top) + 1e-30) / (2 * hf * hf * a2)
		v := p[0] + r
		if hf*hf*v > 1 {
			continue // too uncertain to tell one turn of this harmonic from the next
		}
		sn, cs := math.Sincos(hf * x[0])
		m := a * complex(cs, sn)
		phi := cmplx.Phase(y[h]*cmplx.Conj(m)) / hf
		if phi*phi > humGate*humGate*v {
			continue
		}
		num += phi / r
		den += 1 / r
	}
	if den > 0 {
		r := 1 / den
		phi := num / den
		s := p[0] + r
		k0, k1 := p[0]/s, p[1]/s
		x = [2]float64{x[0] + k0*phi, x[1] + k1*phi}
		p = [3]float64{(1 - k0) * p[0], (1 - k0) * p[1], p[2] - k1*p[1]}
	}
	for h := range t.h {
		sn, cs := math.Sincos(float64(h+1) * x[0])
		v := y[h] * complex(cs, -sn)
		w := 1 / max(t.e[h], 1e-30)
		t.aw[h] += t.alpha * (w - t.aw[h])
		t.a[h] += complex(t.alpha*w/t.aw[h], 0) * (v - t.a[h])
	}
	return x, p
}

// smooth returns the phase deviation of block s, smoothed over the blocks
// filtered since (Rauch-Tung-Striebel, backward from the latest).
func (t *humTracker) smooth(s int64) float64 {
	if t.cj < s {
		// Nothing filtered yet that far (a stream shorter than the start-up
		// window): the latest state, predicted.
		return t.cx[0] + float64(s-t.cj)*t.cx[1]
	}
	n := int64(len(t.x))
	cur := t.x[t.cj%n]
	for i := t.cj - 1; i >= s; i-- {
		xf, pf := t.x[i%n], t.p[i%n]
		xp, pp := t.xp[(i+1)%n], t.pp[(i+1)%n]
		// C = P F^T Pp^-1, F^T = [[1, 0], [1, 1]].
		a00, a01 := pf[0]+pf[1], pf[1]
		a10, a11 := pf[1]+pf[2], pf[2]
		det := pp[0]*pp[2] - pp[1]*pp[1]
		i00, i01, i11 := pp[2]/det, -pp[1]/det, pp[0]/det
		c00, c01 := a00*i00+a01*i01, a00*i01+a01*i11
		c10, c11 := a10*i00+a11*i01, a10*i01+a11*i11
		d0, d1 := cur[0]-xp[0], cur[1]-xp[1]
		cur = [2]float64{xf[0] + c00*d0 + c01*d1, xf[1] + c10*d0 + c11*d1}
	}
	return cur[0]
}
