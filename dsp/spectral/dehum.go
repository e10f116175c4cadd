package spectral

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/audiopost/audiopost/audio"
)

// Dehum works in hops of dehumHop seconds (whole periods of both 50 and
// 60 Hz), each cut into blocks of about one period of the hum: the phase
// tracker measures every block, and the amplitudes are averaged block by
// block.
const (
	dehumHop = 0.1
	// dehumHalfSpan is half the span, in seconds, over which the amplitude
	// of each harmonic is averaged: long enough to reach into the pauses
	// of the speech, short enough to follow a level that changes.
	dehumHalfSpan = 3.0
	// dehumTrackDelay is how far, in seconds, the phase tracker looks
	// ahead of the block it smooths: the fixed lag of its smoother and the
	// start-up window.
	dehumTrackDelay = 1.5
	// dehumWeak: components under this fraction of the strongest (40 dB
	// under it) are left alone: what is left of them is inaudible beside
	// the rest, and they cost as much to remove.
	dehumWeak = 0.01
	// dehumTrackWin is the length, in blocks, of the tracker's window.
	dehumTrackWin = 3
	// dehumMeasWin is the length, in blocks, of the window each block's
	// amplitudes are measured over.
	dehumMeasWin = 3
)

// DehumOptions configure a Dehum node. The values follow the API: Base is
// dehum, ReductionDB dehumamount.
type DehumOptions struct {
	// Base is the mains frequency, 50 or 60 Hz; 0 detects it (from the
	// Profile when given, else from the first seconds of the stream).
	Base int
	// ReductionDB caps the hum reduction: 0 removes the detected
	// components fully (automatic), negative turns the node off, 3..100
	// removes that many dB of each component.
	ReductionDB float64
	// Profile, from the Profiler's first pass, gives the detected hum and
	// its mean frequency over the whole file.
	Profile *Profile
	// DetectSeconds is how much of the stream the node reads ahead to
	// detect hum when no Profile is given; 0 means 3.
	DetectSeconds float64
}

// Dehum removes mains hum, every harmonic up to 1 kHz, as sinusoids that
// follow the hum's wandering frequency. A tracker (humTracker) follows the
// phase of the fundamental from all harmonics at once, about one period
// at a time; each harmonic's complex amplitude is then measured along that
// phase over four seconds centred on each instant (blocks weighted by the
// inverse square of their low-band power, so the pauses count and the
// voice does not, and a zero-phase triangular smoother), and the hum so
// rebuilt is subtracted. That is a notch a fraction of a hertz wide at
// each harmonic that moves with it, so the speech between and around the
// harmonics passes untouched even when the mains drift by half a hertz
// (the twentieth harmonic by ten). It has no start-up transient: the
// smoother only averages the part of the window inside the stream, and the
// tracker starts with a pass back over its first second and a half. The
// 3.5 seconds of look-ahead are compensated inside.
type Dehum struct {
	src  audio.Source
	pre  *prefetch
	run  *hopRunner
	opts DehumOptions
	hum  Hum
	fs   int
	g    float64 // fraction of the estimate subtracted

	hop, dfac, nd int // frames and decimated samples per hop, decimation
	trackH, spanH int // the tracker's delay and the smoother's half-span, in hops
	delay         [][]float64
	hops          int64 // hops processed
	active        bool
	f0            float64
	k, nsub, msub int       // harmonics, blocks per hop, smoother half-span in blocks
	bnd           []int     // decimated sample bounds of a hop's blocks
	boxG          []float64 // moving-average gain at each harmonic
	tr            *humTracker
	ym            []complex128  // the tracker's measurement of a block
	monoR         [2][]float64  // the mono mix of this hop and the one before, decimated
	win           []float64     // the tracker's window
	dec           [][][]float64 // [c][hop ring][nd] decimated input
	psi, cen      []float64     // rings of the smoothed phase and block centres (frames)
	acc           []complex128  // [c*k+h] a block's demodulated sums
	en            []float64     // [c] a block's power
	dRing, s1Ring [][]complex128
	s1, s2        []complex128
	tri           [][3]complex128
	vRing, v1Ring [][]float64
	v1, v2        []float64
	ringPos       int
	up, upL       int             // synthesis grid step, interpolation taps per side
	upTaps        [][]float64     // [frame phase][tap]
	upG           []float64       // the interpolator's gain at each harmonic
	zs, rs        [2][]complex128 // each harmonic's phasor at a segment's start, and its step
	syn           []float64       // the hum of a block on the synthesis grid
	bp            [][]float64     // ring of the tracker's band powers, [block][harmonic]
	bpLast        int64
	mwin          [][]float64       // the measurement window of each channel
	hanns         map[int][]float64 // Hann windows by length, the sum last
	tabR, tabI    [][]float64       // each harmonic's phasor over a window, from phase 0
	// midR, midI are the phasors half way between the harmonics, (j+0.5)
	// times the fundamental for j = 0..k, over the tracker's window.
	midR, midI [][]float64
	mid        []float64 // the tracker's power at each of them in a block
	// The same tables sample-major (phasorTabs), and a block's
	// demodulated sums by them.
	harmT, midT phasorTabs
	dotR, dotI  []float64
	zk          []complex128 // each harmonic's phasor at a half block's start
}

// NewDehum returns src with mains hum removed as opts say.
func NewDehum(src audio.Source, opts DehumOptions) (*Dehum, error) {
	f := src.Format()
	if err := f.Validate(); err != nil {
		return nil, err
	}
	if opts.Base != 0 && opts.Base != 50 && opts.Base != 60 {
		return nil, fmt.Errorf("%w: dehum base %d Hz (0, 50 or 60)", ErrInvalidParameter, opts.Base)
	}
	if math.IsNaN(opts.ReductionDB) || opts.ReductionDB > 100 {
		return nil, fmt.Errorf("%w: dehum amount %g dB", ErrInvalidParameter, opts.ReductionDB)
	}
	if opts.Profile != nil && opts.Profile.SampleRate != f.SampleRate {
		return nil, fmt.Errorf("%w: profile for %d Hz used on a %d Hz stream", ErrInvalidParameter, opts.Profile.SampleRate, f.SampleRate)
	}
	h := &Dehum{src: src, opts: opts, fs: f.SampleRate}
	h.dfac = max(1, int(math.Round(float64(f.SampleRate)/humDecimRate)))
	// A hop holds whole periods of both 50 and 60 Hz, so that its blocks
	// hold about one period each whichever the hum is.
	h.nd = max(1, int(math.Round(dehumHop*float64(f.SampleRate)/float64(h.dfac))))
	h.hop = h.dfac * h.nd
	hopSec := float64(h.hop) / float64(f.SampleRate)
	h.trackH = max(2, int(math.Round(dehumTrackDelay/hopSec)))
	h.spanH = max(2, int(math.Round(dehumHalfSpan/hopSec)))
	h.g = 1
	if opts.ReductionDB > 0 {
		h.g = 1 - math.Pow(10, -opts.ReductionDB/20)
	}
	up := src
	if opts.ReductionDB >= 0 {
		if opts.Profile != nil {
			h.setHum(opts.Profile.Hum, nil)
		} else {
			sec := opts.DetectSeconds
			if sec == 0 {
				sec = 3
			}
			h.pre = newPrefetch(src, int(sec*float64(f.SampleRate)), h.detect)
			up = h.pre
		}
	}
	if opts.ReductionDB < 0 || (h.pre == nil && !h.active) {
		// Nothing to remove: pass through without delay.
		h.run = newHopRunner(up, 1024, 0, func(in, out audio.Buffer) { out.CopyFrom(in) })
		return h, nil
	}
	dh := h.trackH + h.spanH // output hops behind input
	h.delay = make([][]float64, f.Channels)
	for c := range h.delay {
		h.delay[c] = make([]float64, (dh+1)*h.hop)
	}
	h.run = newHopRunner(up, h.hop, dh*h.hop, h.process)
	return h, nil
}

// detect runs hum detection on the prefetched start of the stream.
func (h *Dehum) detect(b audio.Buffer) {
	det := newHumDetector(h.fs)
	mono := make([]float64, b.Frames())
	for c := range b {
		for i, v := range b[c] {
			mono[i] += v / float64(len(b))
		}
	}
	det.write(mono)
	h.setHum(det.result(), det)
}

// setHum takes the hum to remove from a detection.
func (h *Dehum) setHum(hum Hum, det *humDetector) {
	base := h.opts.Base
	if base != 0 && hum.Base != base {
		// A forced base the detection did not confirm: take what was
		// measured of it, else its nominal frequency.
		var hs []HumHarmonic
		if det != nil {
			hs = det.harmonics(base)
		}
		f := float64(base)
		if len(hs) > 0 {
			f = hs[0].Freq / float64(hs[0].Number)
		}
		hum = Hum{Base: base, Freq: f, Harmonics: hs}
	}
	h.hum = hum
	h.active = hum.Base != 0
	if !h.active {
		return
	}
	// Every harmonic under humMaxHz is removed, detected or not: when the
	// mains drift, the high harmonics wander too far within the detection
	// window to be found, the weaker ones hide under the voice, and an
	// absent one measures as nothing and is skipped as weak. The bound is
	// strict so that a 1 kHz line-up tone is no harmonic of 50 Hz hum.
	h.f0 = hum.Freq
	if h.f0 == 0 {
		h.f0 = float64(hum.Base)
	}
	fd := float64(h.fs) / float64(h.dfac)
	h.k = 0
	for k := 1; k*hum.Base < humMaxHz && float64(k)*h.f0 < 0.45*fd; k++ {
		h.k = k
	}
	if h.k == 0 {
		h.active = false
		return
	}
	h.allocate()
}

// allocate sizes the state for the hum found: blocks of about one period
// of its base, the tracker, the rings of the smoother.
func (h *Dehum) allocate() {
	C := h.src.Format().Channels
	K := h.k
	h.nsub = max(1, int(math.Round(float64(h.hop)/float64(h.fs)*float64(h.hum.Base))))
	h.nsub = min(h.nsub, h.nd)
	h.bnd = make([]int, h.nsub+1)
	for j := range h.bnd {
		h.bnd[j] = j * h.nd / h.nsub
	}
	h.msub = h.spanH * h.nsub
	blockSec := float64(h.hop) / float64(h.fs) / float64(h.nsub)
	// The tracker's phase for block s comes out with block s+1 of the
	// amplitude stage's delay: trackH hops after s entered, less one block.
	h.tr = newHumTracker(K, blockSec, h.trackH*h.nsub-1-dehumTrackWin/2-dehumMeasWin/2)
	h.ym = make([]complex128, K)
	for i := range h.monoR {
		h.monoR[i] = make([]float64, h.nd)
	}
	h.win = make([]float64, 0, dehumTrackWin*(h.nd/h.nsub+1))
	// Each harmonic's phasor from phase 0, one decimated sample apart,
	// over the longest window.
	tn := max(dehumTrackWin, dehumMeasWin) * (h.nd/h.nsub + 1)
	h.tabR, h.tabI = make([][]float64, K), make([][]float64, K)
	for k := range K {
		h.tabR[k], h.tabI[k] = make([]float64, tn), make([]float64, tn)
		for n := range tn {
			z := phasor(-float64(k+1)*h.f0, float64(n*h.dfac), h.fs)
			h.tabR[k][n], h.tabI[k][n] = real(z), imag(z)
		}
	}
	tm := dehumTrackWin * (h.nd/h.nsub + 1)
	h.midR, h.midI = make([][]float64, K+1), make([][]float64, K+1)
	for j := range K + 1 {
		h.midR[j], h.midI[j] = make([]float64, tm), make([]float64, tm)
		for n := range tm {
			z := phasor(-(float64(j)+0.5)*h.f0, float64(n*h.dfac), h.fs)
			h.midR[j][n], h.midI[j][n] = real(z), imag(z)
		}
	}
	h.mid = make([]float64, K+1)
	h.harmT, h.midT = newPhasorTabs(h.tabR, h.tabI), newPhasorTabs(h.midR, h.midI)
	h.dotR, h.dotI = make([]float64, h.midT.kp), make([]float64, h.midT.kp)
	h.zk = make([]complex128, K)
	h.boxG = make([]float64, K)
	for k := range K {
		f := float64(k+1) * h.f0
		h.boxG[k] = boxGain(f, h.dfac, h.fs)
	}
	h.dec = make([][][]float64, C)
	for c := range h.dec {
		h.dec[c] = make([][]float64, h.trackH+2)
		for i := range h.dec[c] {
			h.dec[c][i] = make([]float64, h.nd)
		}
	}
	h.psi = make([]float64, h.msub+h.nsub+4)
	h.cen = make([]float64, len(h.psi))
	h.acc = make([]complex128, C*K)
	h.mwin = make([][]float64, C)
	for c := range h.mwin {
		h.mwin[c] = make([]float64, 0, dehumMeasWin*(h.nd/h.nsub+1))
	}
	h.en = make([]float64, C)
	h.dRing = make([][]complex128, C*K)
	h.s1Ring = make([][]complex128, C*K)
	for i := range h.dRing {
		h.dRing[i] = make([]complex128, h.msub)
		h.s1Ring[i] = make([]complex128, h.msub)
	}
	h.s1 = make([]complex128, C*K)
	h.s2 = make([]complex128, C*K)
	h.tri = make([][3]complex128, C*K)
	h.vRing = make([][]float64, C*K)
	h.v1Ring = make([][]float64, C*K)
	for c := range h.vRing {
		h.vRing[c] = make([]float64, h.msub)
		h.v1Ring[c] = make([]float64, h.msub)
	}
	h.v1 = make([]float64, C*K)
	h.v2 = make([]float64, C*K)
	h.bp = make([][]float64, h.trackH*h.nsub+8)
	for i := range h.bp {
		h.bp[i] = make([]float64, K)
	}
	// The windows of every length a window of whole blocks can have, so
	// that none is made while streaming.
	h.hanns = map[int][]float64{}
	for _, wb := range []int{dehumTrackWin, dehumMeasWin} {
		for first := range h.nsub {
			n := 0
			for q := range wb {
				b := (first + q) % h.nsub
				n += h.bnd[b+1] - h.bnd[b]
				h.hann(n)
			}
		}
	}
	h.upsampler()
	for seg := range 2 {
		h.zs[seg] = make([]complex128, K)
		h.rs[seg] = make([]complex128, K)
	}
	h.syn = make([]float64, (h.hop/h.nsub+h.dfac)/h.up+2*h.upL+4)
}

// Hum returns the hum the node removes (Base 0 when none); with automatic
// detection and no Profile it is known after the first Read.
func (h *Dehum) Hum() Hum {
	if !h.active {
		return Hum{}
	}
	return h.hum
}

// Latency is the look-ahead compensated inside, in frames.
func (h *Dehum) Latency() int { return h.run.skipTotal() }

// Format implements audio.Source.
func (h *Dehum) Format() audio.Format { return h.src.Format() }

// Read implements audio.Source.
func (h *Dehum) Read(dst audio.Buffer) (int, error) { return h.run.Read(dst) }

// Close closes the upstream source.
func (h *Dehum) Close() error { return closeSource(h.src) }

// phasor returns exp(i*2*pi*f*t/fs) computed from the absolute frame t,
// so that no error builds up over hours.
func phasor(f, t float64, fs int) complex128 {
	cyc := f * t / float64(fs)
	cyc -= math.Floor(cyc)
	s, c := math.Sincos(2 * math.Pi * cyc)
	return complex(c, s)
}

// expi returns exp(i*x).
func expi(x float64) complex128 {
	s, c := math.Sincos(x)
	return complex(c, s)
}

// process handles one hop: it writes the input into the delay line,
// decimates it, feeds its blocks to the tracker, measures the blocks the
// tracker has placed, and writes the hop spanH+trackH hops back with its
// hum removed.
func (h *Dehum) process(in, out audio.Buffer) {
	j := h.hops
	h.hops++
	slot := int(j % int64(h.trackH+h.spanH+1))
	for c := range in {
		copy(h.delay[c][slot*h.hop:(slot+1)*h.hop], in[c])
	}
	// The output hop: the oldest in the ring, the slot after this one.
	o := j - int64(h.trackH+h.spanH)
	osl := int((j + 1) % int64(h.trackH+h.spanH+1))
	for c := range out {
		copy(out[c], h.delay[c][osl*h.hop:(osl+1)*h.hop])
	}
	if !h.active {
		return
	}
	// Decimate by a moving average into the hop's ring slot.
	ds := int(j % int64(len(h.dec[0])))
	D := h.dfac
	mono := h.monoR[j%2]
	clear(mono)
	for c := range in {
		d := h.dec[c][ds]
		for q := range d {
			d[q] = sum(in[c][q*D:(q+1)*D]) / float64(D)
			mono[q] += d[q] / float64(len(in))
		}
	}
	for b := range h.nsub {
		s := j*int64(h.nsub) + int64(b)
		h.track(s, j, b)
		// The block whose phase the tracker has now placed, and the one
		// the smoother has now centred, nsub*trackH and msub blocks back.
		if a := s - int64(h.nsub*h.trackH); a >= 0 {
			h.measure(a)
			if ob := a - int64(h.msub); o >= 0 && ob >= 0 {
				h.remove(ob, out, b)
			}
		}
	}
}

// blockFrames returns the first and end frames of block s.
func (h *Dehum) blockFrames(s int64) (int64, int64) {
	hop, b := s/int64(h.nsub), int(s%int64(h.nsub))
	f0 := hop*int64(h.hop) + int64(h.bnd[b]*h.dfac)
	return f0, f0 + int64((h.bnd[b+1]-h.bnd[b])*h.dfac)
}

// valid returns how many frames of [f0, f1) are inside the stream.
func (h *Dehum) valid(f0, f1 int64) int64 {
	if !h.run.eof {
		return f1 - f0
	}
	return max(0, min(f1, h.run.inTotal)-f0)
}

// track measures the mono mix at the harmonics of the reference
// frequency over a Hann window of dehumTrackWin blocks ending with block s
// (block b of hop j), centred on block s-dehumTrackWin/2, and hands that
// to the tracker, which gives back the smoothed phase of an earlier block.
// The window spans whole periods and its zeros fall on the other
// harmonics, so they do not leak into each other; its low side lobes keep
// a voice's low partials out of the fundamental's measurement.
func (h *Dehum) track(s, j int64, b int) {
	hw := int64(dehumTrackWin / 2)
	p := s - hw
	if p < 0 {
		return
	}

	// Gather the window's samples from this hop and the one before.
	x := h.win[:0]
	first := s - int64(dehumTrackWin) + 1
	var t0 float64
	for q := max(first, 0); q <= s; q++ {
		hp, qb := q/int64(h.nsub), int(q%int64(h.nsub))
		if len(x) == 0 {
			a, _ := h.blockFrames(q)
			t0 = float64(a) + float64(h.dfac-1)/2
		}
		x = append(x, h.monoR[hp%2][h.bnd[qb]:h.bnd[qb+1]]...)
	}
	n := len(x)
	// Blocks before the stream's start are missing: the window is the
	// part inside, still a Hann window over whole blocks.
	hann, wsum := h.hann(n)
	for i, w := range hann {
		x[i] *= w
	}
	g := complex(2/wsum, 0)
	// Harmonic k+1's phasor and step are the fundamental's to the power
	// k+1.
	z1 := phasor(-h.f0, t0, h.fs)
	zk := complex(1, 0)
	h.harmT.dots(x, h.dotR, h.dotI)
	for k := range h.k {
		zk *= z1
		h.ym[k] = complex(h.dotR[k], h.dotI[k]) * zk * g
	}
	// The power half way between the harmonics: the voice's near each
	// harmonic, with the hum itself 15 dB down (the window's response
	// half a harmonic off), so that the weights follow the voice and not
	// the hum plus the voice.
	h.midT.dots(x, h.dotR, h.dotI)
	for j := range h.mid {
		m := complex(h.dotR[j], h.dotI[j]) * g
		h.mid[j] = real(m)*real(m) + imag(m)*imag(m)
	}
	for k := range h.k {
		h.bp[int(p%int64(len(h.bp)))][k] = (h.mid[k] + h.mid[k+1]) / 2
	}
	h.bpLast = p
	_, end := h.blockFrames(s)
	a, _ := h.blockFrames(max(first, 0))
	psi, ok := h.tr.push(h.ym, h.valid(a, end) == end-a)
	h.place(p, psi, ok)
}

// place stores the smoothed phase the tracker gave back after block p.
func (h *Dehum) place(p int64, psi float64, ok bool) {
	if !ok {
		return
	}
	q := p - int64(h.tr.lag+humEBlk)
	i := int(q % int64(len(h.psi)))
	a, e := h.blockFrames(q)
	h.psi[i] = psi
	h.cen[i] = float64(a+e-1) / 2
}

// phaseAt returns the smoothed phase deviation and centre of block s,
// those of block 0 for s < 0 (a centre one block before).
func (h *Dehum) phaseAt(s int64) (psi, cen float64) {
	if s < 0 {
		a, e := h.blockFrames(0)
		return h.psi[0], float64(a+e-1)/2 + float64(s*(e-a))
	}
	i := int(s % int64(len(h.psi)))
	return h.psi[i], h.cen[i]
}

// measure demodulates every channel along the tracked phase over a Hann
// window of dehumMeasWin blocks centred on block s, and adds the result to
// the smoothers.
func (h *Dehum) measure(s int64) {
	hw := int64(dehumMeasWin / 2)
	first, last := max(s-hw, 0), s+hw
	C := len(h.dec)
	K := h.k
	D := float64(h.dfac)
	// Gather the window's decimated samples.
	for c := range C {
		h.mwin[c] = h.mwin[c][:0]
	}
	for q := first; q <= last; q++ {
		hp, qb := q/int64(h.nsub), int(q%int64(h.nsub))
		ds := int(hp % int64(len(h.dec[0])))
		for c := range C {
			h.mwin[c] = append(h.mwin[c], h.dec[c][ds][h.bnd[qb]:h.bnd[qb+1]]...)
		}
	}
	n := len(h.mwin[0])
	tStart, _ := h.blockFrames(first)
	_, tEnd := h.blockFrames(last)
	inside := h.valid(tStart, tEnd) == tEnd-tStart
	// The block's own power, for its weight.
	f0, f1 := h.blockFrames(s)
	nv := int((h.valid(f0, f1) + int64(h.dfac) - 1) / int64(h.dfac))
	off := int((f0 - tStart) / int64(h.dfac))
	for c := range C {
		var e float64
		for _, v := range h.mwin[c][off : off+nv] {
			e += v * v
		}
		h.en[c] = e / float64(max(nv, 1))
	}
	hann, wsum := h.hann(n)
	for c := range C {
		for i, w := range hann {
			h.mwin[c][i] *= w
		}
	}
	clear(h.acc)
	// Half a block at a time, the phase is the smoothed phase interpolated
	// to the half's centre: within it, it moves by under 0.1 radian at the
	// highest harmonic when the mains drift by 0.3 Hz.
	i0 := 0
	for q := first; q <= last; q++ {
		qb := int(q % int64(h.nsub))
		nq := h.bnd[qb+1] - h.bnd[qb]
		a, _ := h.blockFrames(q)
		pl, cl := h.phaseAt(q - 1)
		pq, cq := h.phaseAt(q)
		pr, cr := h.phaseAt(q + 1)
		for half := range 2 {
			lo, hi := 0, nq/2
			if half == 1 {
				lo, hi = nq/2, nq
			}
			t := float64(a) + (D-1)/2 + D*float64(lo+hi-1)/2 // the half's centre
			var ph float64
			if t < cq {
				ph = pq + (pq-pl)*(t-cq)/(cq-cl)
			} else {
				ph = pq + (pr-pq)*(t-cq)/(cr-cq)
			}
			z1 := phasor(-h.f0, float64(a)+(D-1)/2+D*float64(lo), h.fs) * expi(-ph)
			z := complex(1, 0)
			for k := range K {
				z *= z1
				h.zk[k] = z
			}
			for c := range C {
				h.harmT.dots(h.mwin[c][i0+lo:i0+hi], h.dotR, h.dotI)
				for k, z := range h.zk {
					h.acc[c*K+k] += complex(h.dotR[k], h.dotI[k]) * z
				}
			}
		}
		i0 += nq
	}
	for i := range h.acc {
		h.acc[i] *= complex(2/(wsum*h.boxG[i%K]), 0)
	}
	valid := float64(nv) / float64(f1-f0) * D
	if !inside {
		valid = min(valid, 0.999)
	}
	pos := h.ringPos
	for c := range C {
		// Weighted least squares: the hum is the same in every block, the
		// voice is not, so blocks weigh the inverse of their low-band power
		// and the estimate comes mostly from the pauses.
		w := 1 / (h.en[c]*h.en[c] + 1e-18)
		switch {
		case nv == 0:
			w = 0
		case valid < 1:
			// A partial last block counts only when nothing else does.
			w *= 1e-6 * valid
		}
		for k := range K {
			i := c*K + k
			// ... and within the block, each harmonic weighs the inverse of
			// the power half way to its neighbours too, so a harmonic next
			// to a partial of the voice counts for little while the others
			// still count. The power at the harmonic itself would hold the
			// hum as well: the weights would then depend on how the hum
			// adds to the voice, and the estimate lean toward the blocks
			// where they cancel.
			var ek float64
			cnt := 0
			for q := max(0, s-2); q <= min(h.bpLast, s+2); q++ {
				ek += h.bp[int(q%int64(len(h.bp)))][k]
				cnt++
			}
			ek /= float64(max(cnt, 1))
			wk := w / (ek + 1e-30)
			h.v1[i] += wk - h.vRing[i][pos]
			h.vRing[i][pos] = wk
			h.v2[i] += h.v1[i] - h.v1Ring[i][pos]
			h.v1Ring[i][pos] = h.v1[i]
			v2 := h.v2[i]
			a := h.acc[i] * complex(wk, 0)
			h.s1[i] += a - h.dRing[i][pos]
			h.dRing[i][pos] = a
			h.s2[i] += h.s1[i] - h.s1Ring[i][pos]
			h.s1Ring[i][pos] = h.s1[i]
			tr := &h.tri[i]
			tr[0], tr[1] = tr[1], tr[2]
			if v2 > 1e-300 {
				tr[2] = h.s2[i] / complex(v2, 0)
			} else {
				tr[2] = 0
			}
		}
		if pos == h.msub-1 {
			// Re-add the running sums from their rings once per cycle so
			// rounding cannot build up over hours.
			for k := range K {
				i := c*K + k
				h.v1[i], h.v2[i] = sum(h.vRing[i]), sum(h.v1Ring[i])
				h.s1[i], h.s2[i] = csum(h.dRing[i]), csum(h.s1Ring[i])
			}
		}
	}
	h.ringPos = (pos + 1) % h.msub
}

// remove subtracts the hum of block s, block b of the output hop out: the
// smoothers' amplitudes centred on blocks s-1, s and s+1 along the tracked
// phase, the amplitudes and the phase interpolated linearly between the
// block centres. The harmonics are summed at about 4.8 kHz and brought to
// the stream's rate by an interpolating filter, so the cost per frame does
// not grow with their number; each harmonic is divided by the filter's
// gain at its frequency.
func (h *Dehum) remove(s int64, out audio.Buffer, b int) {
	K := h.k
	var strongest float64
	for i := range h.tri {
		strongest = max(strongest, triMag(&h.tri[i]))
	}
	f0, f1 := h.blockFrames(s)
	lo := h.bnd[b] * h.dfac
	pa, ca := h.phaseAt(s - 1)
	pb, cb := h.phaseAt(s)
	pc, cc := h.phaseAt(s + 1)
	U, L := int64(h.up), int64(h.upL)
	m0 := floorDiv(f0, U) - L + 1
	m1 := floorDiv(f1-1, U) + L // inclusive
	// The grid points before the centre of block s follow the segment from
	// s-1, the others the one to s+1.
	mc := min(max(floorDiv(int64(math.Ceil(cb))+U-1, U), m0), m1+1)
	n := int(m1 - m0 + 1)
	uf := float64(U)
	// The phasors of every harmonic at each segment's first grid point and
	// their steps: powers of the fundamental's.
	for seg := range 2 {
		q0, pl, cl, pr, cr := m0, pa, ca, pb, cb
		if seg == 1 {
			q0, pl, cl, pr, cr = mc, pb, cb, pc, cc
		}
		t0 := float64(q0) * uf
		slope := (pr - pl) / (cr - cl)
		z1 := phasor(h.f0, t0, h.fs) * expi(pl+slope*(t0-cl))
		r1 := phasor(h.f0, uf, h.fs) * expi(slope*uf)
		z, r := complex(1, 0), complex(1, 0)
		for k := range K {
			z, r = z*z1, r*r1
			h.zs[seg][k], h.rs[seg][k] = z, r
		}
	}
	for c := range out {
		syn := h.syn[:n]
		clear(syn)
		for k := range K {
			weak := true
			for c := range out {
				weak = weak && triMag(&h.tri[c*K+k]) < dehumWeak*strongest
			}
			if weak {
				continue
			}
			tr := &h.tri[c*K+k]
			for seg := range 2 {
				q0, q1 := m0, mc
				cl, cr, al, ar := ca, cb, tr[0], tr[1]
				if seg == 1 {
					q0, q1 = mc, m1+1
					cl, cr, al, ar = cb, cc, tr[1], tr[2]
				}
				if q0 >= q1 {
					continue
				}
				span := cr - cl
				u := (float64(q0)*uf - cl) / span
				g := complex(h.g/h.upG[k], 0)
				addRamp(syn[q0-m0:q1-m0], g*(al+(ar-al)*complex(u, 0)), g*(ar-al)*complex(uf/span, 0), h.zs[seg][k], h.rs[seg][k])
			}
		}
		// Interpolate: frame t = m U + r takes grid points m-L+1 .. m+L.
		o := out[c][lo : lo+int(f1-f0)]
		m := floorDiv(f0, U)
		r := int(f0 - m*U)
		// 2L is dehumTaps2: arrays of that length need no bounds checks.
		for i := 0; i < len(o); m++ {
			x := (*[dehumTaps2]float64)(syn[m-m0-L+1:])
			for ; r < int(U) && i < len(o); r++ {
				t := (*[dehumTaps2]float64)(h.upTaps[r])
				o[i] -= (x[0]*t[0] + x[1]*t[1] + x[2]*t[2] + x[3]*t[3]) + (x[4]*t[4] + x[5]*t[5] + x[6]*t[6] + x[7]*t[7])
				i++
			}
			r = 0
		}
	}
}

// floorDiv is a/b rounded toward minus infinity (b > 0).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// addRamp adds Re((a + i da) z r^i) to o[i]: a sinusoid whose complex
// amplitude moves linearly. Four lanes, each stepping by 4 da and r^4, so
// that no multiplication waits on the previous sample's.
func addRamp(o []float64, a, da, z, r complex128) {
	r2 := r * r
	r4 := r2 * r2
	da4 := 4 * da
	a0, a1, a2, a3 := a, a+da, a+2*da, a+3*da
	z0, z1, z2, z3 := z, z*r, z*r2, z*r2*r
	i := 0
	if useAVX2 && len(o) >= 4 {
		// The same four lanes in one register each (gainkern_amd64.s).
		st := [4][4]float64{
			{real(a0), real(a1), real(a2), real(a3)}, {imag(a0), imag(a1), imag(a2), imag(a3)},
			{real(z0), real(z1), real(z2), real(z3)}, {imag(z0), imag(z1), imag(z2), imag(z3)},
		}
		i = len(o) &^ 3
		addRampAVX2(&o[0], i, &st, da4, r4)
		a0, z0 = complex(st[0][0], st[1][0]), complex(st[2][0], st[3][0])
	}
	for ; i+4 <= len(o); i += 4 {
		p := o[i : i+4 : i+4]
		p[0] += real(a0)*real(z0) - imag(a0)*imag(z0)
		p[1] += real(a1)*real(z1) - imag(a1)*imag(z1)
		p[2] += real(a2)*real(z2) - imag(a2)*imag(z2)
		p[3] += real(a3)*real(z3) - imag(a3)*imag(z3)
		a0, a1, a2, a3 = a0+da4, a1+da4, a2+da4, a3+da4
		z0, z1, z2, z3 = z0*r4, z1*r4, z2*r4, z3*r4
	}
	for ; i < len(o); i++ {
		o[i] += real(a0)*real(z0) - imag(a0)*imag(z0)
		a0 += da
		z0 *= r
	}
}

// dotTab returns the sum of x[i] (tr[i] + i ti[i]): a demodulation by a
// tabulated phasor.
func dotTab(x, tr, ti []float64) complex128 {
	tr, ti = tr[:len(x)], ti[:len(x)]
	var r0, r1, i0, i1 float64
	n := 0
	for ; n+2 <= len(x); n += 2 {
		r0 += x[n] * tr[n]
		i0 += x[n] * ti[n]
		r1 += x[n+1] * tr[n+1]
		i1 += x[n+1] * ti[n+1]
	}
	if n < len(x) {
		r0 += x[n] * tr[n]
		i0 += x[n] * ti[n]
	}
	return complex(r0+r1, i0+i1)
}

// hann returns the Hann window of n points (sin^2 over the half-open
// points) and its sum, made once per length.
func (h *Dehum) hann(n int) ([]float64, float64) {
	w, ok := h.hanns[n]
	if !ok {
		w = make([]float64, n+1)
		for i := range n {
			v := math.Sin(math.Pi * (float64(i) + 0.5) / float64(n))
			w[i] = v * v
			w[n] += w[i]
		}
		h.hanns[n] = w
	}
	return w[:n], w[n]
}

// The hum is summed at dehumSynHz, where its images, from
// dehumSynHz-humMaxHz up, lie well above it, and interpolated with
// 2*dehumSynTaps taps per frame: 70 dB clean to 500 Hz, 42 dB or more at
// 950 Hz whatever the rate (TestDehumUpsampler), where the harmonics are
// 25 dB under the fundamental and more.
const (
	dehumSynHz   = 4800.0
	dehumSynTaps = 4
	dehumTaps2   = 2 * dehumSynTaps // remove's unrolled sum has this many terms
)

// remove's interpolation sums exactly eight terms.
var _ [dehumTaps2 - 8]struct{}
var _ [8 - dehumTaps2]struct{}

// upsampler designs the interpolating filter from the synthesis grid (every
// up frames) to the stream's rate: a Blackman-windowed sinc cut off at the
// grid's Nyquist frequency, 2*upL taps per output frame (upTaps[r][j] weighs grid point m-L+1+j for frame m*up+r),
// and its gain at each harmonic.
func (h *Dehum) upsampler() {
	U := max(1, int(math.Round(float64(h.fs)/dehumSynHz)))
	syn := float64(h.fs) / float64(U)
	fc := syn / 2
	L := dehumSynTaps
	h.up, h.upL = U, L
	g := func(x float64) float64 {
		a := x / float64(L*U)
		if a <= -1 || a >= 1 {
			return 0
		}
		win := 0.42 + 0.5*math.Cos(math.Pi*a) + 0.08*math.Cos(2*math.Pi*a)
		arg := 2 * fc * x / float64(h.fs)
		sn := 1.0
		if arg != 0 {
			sn = math.Sin(math.Pi*arg) / (math.Pi * arg)
		}
		return win * sn
	}
	var dc float64
	for x := -L * U; x <= L*U; x++ {
		dc += g(float64(x))
	}
	scale := float64(U) / dc
	h.upTaps = make([][]float64, U)
	for r := range U {
		h.upTaps[r] = make([]float64, 2*L)
		for j := range 2 * L {
			// Grid point m-L+1+j lies (L-1-j)U + r frames before frame
			// m U + r.
			h.upTaps[r][j] = scale * g(float64((L-1-j)*U+r))
		}
	}
	h.upG = make([]float64, h.k)
	for k := range h.upG {
		f := float64(k+1) * h.f0
		var v float64
		for x := -L * U; x <= L*U; x++ {
			v += scale * g(float64(x)) * math.Cos(2*math.Pi*f*float64(x)/float64(h.fs))
		}
		h.upG[k] = v / float64(U)
	}
}

// prefetch reads the first frames of a stream ahead, hands them to a
// callback (hum detection) and then plays them followed by the rest.
type prefetch struct {
	src    audio.Source
	buf    audio.Buffer
	n, pos int
	done   bool
	fn     func(audio.Buffer)
	err    error
	eof    bool
	view   audio.Buffer
}

func newPrefetch(src audio.Source, frames int, fn func(audio.Buffer)) *prefetch {
	f := src.Format()
	return &prefetch{src: src, buf: audio.NewBuffer(f.Channels, max(1, frames)), fn: fn, view: make(audio.Buffer, f.Channels)}
}

func (p *prefetch) Format() audio.Format { return p.src.Format() }

func (p *prefetch) Read(dst audio.Buffer) (int, error) {
	if !p.done {
		p.done = true
		for p.n < p.buf.Frames() {
			m, err := p.src.Read(p.buf.SliceInto(p.view, p.n, p.buf.Frames()))
			p.n += m
			if errors.Is(err, io.EOF) {
				p.eof = true
				break
			}
			if err != nil {
				p.err = err
				break
			}
			if m == 0 {
				p.err = fmt.Errorf("%w: upstream returned no frames and no error", audio.ErrMalformed)
				break
			}
		}
		p.fn(p.buf.SliceInto(p.view, 0, p.n))
	}
	if p.pos < p.n {
		c := 0
		for ch := range dst {
			c = copy(dst[ch], p.buf[ch][p.pos:p.n])
		}
		p.pos += c
		if c > 0 || dst.Frames() == 0 {
			return c, nil
		}
	}
	if p.err != nil {
		return 0, p.err
	}
	if p.eof {
		return 0, io.EOF
	}
	return p.src.Read(dst)
}

func sum(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s
}

func csum(x []complex128) complex128 {
	var s complex128
	for _, v := range x {
		s += v
	}
	return s
}

// triMag is the largest magnitude of the three smoothed amplitudes.
func triMag(t *[3]complex128) float64 {
	m := 0.0
	for _, z := range t {
		m = max(m, real(z)*real(z)+imag(z)*imag(z))
	}
	return math.Sqrt(m)
}
