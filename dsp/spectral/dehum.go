package spectral

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/audiopost/audiopost/audio"
)

// dehumAlwaysHz is the range in which every harmonic of a detected hum is
// removed, detected or not.
const dehumAlwaysHz = 400

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
	// Profile, from the Analyzer's first pass, gives the detected hum and
	// its exact frequency for the whole file.
	Profile *Profile
	// DetectSeconds is how much of the stream the node reads ahead to
	// detect hum when no Profile is given; 0 means 3.
	DetectSeconds float64
}

// Dehum removes mains hum: every detected harmonic is estimated as a
// sinusoid whose complex amplitude is measured over four seconds centred
// on each instant (demodulation in 100 ms blocks that hold whole periods,
// each block weighted by the inverse square of its low-band power so the
// pauses count and the voice does not, and a zero-phase triangular
// smoother, so the estimate follows slow drift of frequency and level),
// and subtracted. That is a linear-phase notch only a few hertz wide at
// each harmonic, so speech between and around the harmonics passes
// untouched, and it has no start-up transient because the smoother only
// averages the part of the window that lies inside the stream. The
// two seconds of look-ahead are compensated inside.
type Dehum struct {
	src  audio.Source
	pre  *prefetch
	run  *hopRunner
	opts DehumOptions
	hum  Hum
	fs   int
	g    float64 // fraction of the estimate subtracted

	bsz, mh, dfac int // block, half-span in blocks, decimation
	freqs         []float64
	boxG          []float64 // moving-average gain at each frequency
	// Per channel, per harmonic complex state: rings of M raw and first-
	// stage sums, running sums and the three latest smoothed values.
	dRing, s1Ring [][]complex128 // [c*K+k][M]
	s1, s2        []complex128   // [c*K+k]
	tri           [][3]complex128
	vRing, v1Ring [][]float64 // per channel
	v1, v2        []float64
	ringPos       int
	blocks        int64
	delay         [][]float64 // per channel, (M+1)*B ring of raw input
	dpos          int
	dec           []float64   // decimated block
	tabR, tabI    [][]float64 // per harmonic, its phasor over a block from phase 0
	active        bool
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
	// Blocks of 100 ms hold whole periods of both 50 and 60 Hz, so within
	// a block every harmonic (and its mirror image) is orthogonal to the
	// others, and blocks can be weighted independently without one
	// harmonic leaking into another.
	h.bsz = h.dfac * max(1, int(math.Round(0.1*float64(f.SampleRate)/float64(h.dfac))))
	h.mh = max(2, int(math.Round(dehumHalfSpan*float64(f.SampleRate)/float64(h.bsz))))
	h.g = 1
	if opts.ReductionDB > 0 {
		h.g = 1 - math.Pow(10, -opts.ReductionDB/20)
	}
	// The largest harmonic set: every multiple of 50 Hz up to humMaxHz.
	K := int(humMaxHz / 50)
	C := f.Channels
	h.dRing = make([][]complex128, C*K)
	h.s1Ring = make([][]complex128, C*K)
	for i := range h.dRing {
		h.dRing[i] = make([]complex128, h.mh)
		h.s1Ring[i] = make([]complex128, h.mh)
	}
	h.s1 = make([]complex128, C*K)
	h.s2 = make([]complex128, C*K)
	h.tri = make([][3]complex128, C*K)
	h.freqs = make([]float64, 0, K)
	h.boxG = make([]float64, 0, K)
	h.vRing = make([][]float64, C)
	h.v1Ring = make([][]float64, C)
	for c := range h.vRing {
		h.vRing[c] = make([]float64, h.mh)
		h.v1Ring[c] = make([]float64, h.mh)
	}
	h.v1 = make([]float64, C)
	h.v2 = make([]float64, C)
	h.delay = make([][]float64, C)
	for c := range h.delay {
		h.delay[c] = make([]float64, (h.mh+1)*h.bsz)
	}
	h.dec = make([]float64, h.bsz/h.dfac)
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
	h.run = newHopRunner(up, h.bsz, h.mh*h.bsz, h.process)
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

// setHum chooses the harmonics to remove from a detection.
func (h *Dehum) setHum(hum Hum, det *humDetector) {
	base := h.opts.Base
	if base != 0 && hum.Base != base {
		// A forced base the detection did not confirm: take what was
		// measured of it, else its first harmonics at the nominal frequency.
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
	// Every harmonic up to dehumAlwaysHz is removed once hum is found:
	// harmonics of a few hertz' width are cheap to remove, and the weaker
	// ones hide under the voice, where detection cannot vouch for them.
	// Above that, only the detected ones.
	h.hum = hum
	h.freqs = h.freqs[:0]
	h.boxG = h.boxG[:0]
	if hum.Base == 0 {
		h.active = false
		return
	}
	detected := map[int]bool{}
	top := 0
	for _, x := range hum.Harmonics {
		detected[x.Number] = true
		top = max(top, x.Number)
	}
	for k := 1; float64(k)*hum.Freq <= humMaxHz+1 && len(h.freqs) < cap(h.freqs); k++ {
		f := hum.Freq * float64(k)
		if f >= 0.45*float64(h.fs)/float64(h.dfac) {
			break
		}
		if f > dehumAlwaysHz+1 && !detected[k] {
			continue
		}
		h.freqs = append(h.freqs, f)
		h.boxG = append(h.boxG, boxGain(f, h.dfac, h.fs))
	}
	// A block's phasor is the same from block to block but for a constant
	// factor (the phase at the block's start), which the amplitudes take
	// in: each harmonic's phasor over a block is tabulated once.
	h.tabR, h.tabI = h.tabR[:0], h.tabI[:0]
	for _, f := range h.freqs {
		zr, zi := make([]float64, h.bsz), make([]float64, h.bsz)
		for i := range zr {
			z := phasor(f, float64(i), h.fs)
			zr[i], zi[i] = real(z), imag(z)
		}
		h.tabR, h.tabI = append(h.tabR, zr), append(h.tabI, zi)
	}
	h.active = len(h.freqs) > 0
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

// process handles one block of B frames: it measures the block, advances
// the smoothers, and writes the block M blocks back with its hum removed.
func (h *Dehum) process(in, out audio.Buffer) {
	B, M, D := h.bsz, h.mh, h.dfac
	j := h.blocks
	h.blocks++
	// Delay line.
	for c := range in {
		copy(h.delay[c][h.dpos:h.dpos+B], in[c])
	}
	valid := 1.0
	if h.run.eof {
		// Zero padding after the end counts as missing, not as silence.
		real := h.run.inTotal - j*int64(B)
		valid = float64(max(0, min(int64(B), real))) / float64(B)
	}
	K := len(h.freqs)
	if !h.active {
		K = 0
	}
	pos := h.ringPos
	nd := B / D
	// Decimated samples that hold real input (fewer in the last block).
	nv := max(1, min(nd, int(math.Ceil(valid*float64(nd)))))
	t0 := float64(j*int64(B)) + float64(D-1)/2 // centre of the first moving average
	Kmax := len(h.s1) / len(in)
	for c := range in {
		// Decimate by a moving average.
		x := in[c]
		var e float64
		for q := 0; q < nd; q++ {
			var s float64
			for _, v := range x[q*D : (q+1)*D] {
				s += v
			}
			s /= float64(D)
			h.dec[q] = s
			e += s * s
		}
		// Weighted least squares: the hum is the same in every block, the
		// voice is not, so blocks weigh the inverse of their low-band power
		// and the estimate comes mostly from the pauses.
		e /= float64(nv)
		w := 1 / (e*e + 1e-18)
		if valid < 1 {
			// The last, partial block holds no whole periods: its harmonics
			// leak into each other, so it only counts when nothing else does.
			w *= 1e-6 * valid
		}
		h.v1[c] += w - h.vRing[c][pos]
		h.vRing[c][pos] = w
		h.v2[c] += h.v1[c] - h.v1Ring[c][pos]
		h.v1Ring[c][pos] = h.v1[c]
		v2 := h.v2[c]
		for k := 0; k < K; k++ {
			f := h.freqs[k]
			p := phasor(-f, t0, h.fs)
			rot := phasor(-f, float64(D), h.fs)
			var acc complex128
			for _, v := range h.dec[:nd] {
				acc += complex(v*real(p), v*imag(p))
				p *= rot
			}
			acc *= complex(w/(float64(nv)*h.boxG[k]), 0)
			i := c*Kmax + k
			h.s1[i] += acc - h.dRing[i][pos]
			h.dRing[i][pos] = acc
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
		if pos == M-1 {
			// Re-add the running sums from their rings once per cycle so
			// rounding cannot build up over hours.
			h.v1[c], h.v2[c] = sum(h.vRing[c]), sum(h.v1Ring[c])
			for k := 0; k < K; k++ {
				i := c*Kmax + k
				h.s1[i], h.s2[i] = csum(h.dRing[i]), csum(h.s1Ring[i])
			}
		}
	}
	h.ringPos = (pos + 1) % M
	h.dpos = (h.dpos + B) % len(h.delay[0])
	// Output block b = j-M, whose raw samples sit M blocks back in the ring
	// (the slot just freed by advancing dpos is the oldest).
	b := j - int64(M)
	src := h.dpos
	for c := range out {
		copy(out[c], h.delay[c][src:src+B])
	}
	if b < 0 || K == 0 {
		return
	}
	// tri[0], tri[1], tri[2] are centred on blocks b-1, b, b+1. The
	// harmonic's phasor over the block is its table times the phasor at
	// the block's start, which multiplies the amplitudes; each channel
	// then only interpolates its amplitude: y = Re(a z).
	half := float64(B-1) / 2
	mid := int(half) + 1
	g := complex(2*h.g, 0)
	// Components 60 dB under the strongest are left alone: what is left
	// of them is inaudible, and they cost as much as the rest.
	Kmax = len(h.s1) / len(out)
	var strongest float64
	for i := range h.tri[:len(out)*Kmax] {
		strongest = max(strongest, triMag(&h.tri[i]))
	}
	for k := 0; k < K; k++ {
		weak := true
		for c := range out {
			weak = weak && triMag(&h.tri[c*Kmax+k]) < 1e-3*strongest
		}
		if weak {
			continue
		}
		zr, zi := h.tabR[k], h.tabI[k]
		gz := g * phasor(h.freqs[k], float64(b*int64(B)), h.fs)
		for c := range out {
			tr := h.tri[c*Kmax+k]
			o := out[c]
			// First half: from the centre of block b-1 toward b; second
			// half: from b toward b+1.
			for _, seg := range [2]struct {
				lo, hi int
				a, d   complex128
			}{
				{0, mid, tr[1] + (tr[1]-tr[0])*complex(-half/float64(B), 0), (tr[1] - tr[0]) / complex(float64(B), 0)},
				{mid, B, tr[1] + (tr[2]-tr[1])*complex((float64(mid)-half)/float64(B), 0), (tr[2] - tr[1]) / complex(float64(B), 0)},
			} {
				subRamp(o[seg.lo:seg.hi], zr[seg.lo:seg.hi], zi[seg.lo:seg.hi], gz*seg.a, gz*seg.d)
			}
		}
	}
}

// subRamp subtracts Re((a + i d) z[i]) from o[i]: a sinusoid whose complex
// amplitude moves linearly. Four lanes, each stepping its amplitude by 4d,
// so that no addition waits on the previous sample's.
func subRamp(o, zr, zi []float64, a, d complex128) {
	n := len(o)
	zr, zi = zr[:n], zi[:n]
	ar, ai, dr, di := real(a), imag(a), real(d), imag(d)
	a0r, a0i := ar, ai
	a1r, a1i := ar+dr, ai+di
	a2r, a2i := ar+2*dr, ai+2*di
	a3r, a3i := ar+3*dr, ai+3*di
	d4r, d4i := 4*dr, 4*di
	i := 0
	for ; i+4 <= n; i += 4 {
		p, r, m := o[i:i+4:i+4], zr[i:i+4:i+4], zi[i:i+4:i+4]
		p[0] -= a0r*r[0] - a0i*m[0]
		p[1] -= a1r*r[1] - a1i*m[1]
		p[2] -= a2r*r[2] - a2i*m[2]
		p[3] -= a3r*r[3] - a3i*m[3]
		a0r, a0i = a0r+d4r, a0i+d4i
		a1r, a1i = a1r+d4r, a1i+d4i
		a2r, a2i = a2r+d4r, a2i+d4i
		a3r, a3i = a3r+d4r, a3i+d4i
	}
	for ; i < n; i++ {
		o[i] -= a0r*zr[i] - a0i*zi[i]
		a0r, a0i = a0r+dr, a0i+di
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

// dehumHalfSpan is half the span, in seconds, over which the amplitude of
// each harmonic is averaged: long enough to reach into the pauses of the
// speech, short enough to follow the drift of mains hum.
const dehumHalfSpan = 2.0

// triMag is the largest magnitude of the three smoothed amplitudes.
func triMag(t *[3]complex128) float64 {
	m := 0.0
	for _, z := range t {
		m = max(m, real(z)*real(z)+imag(z)*imag(z))
	}
	return math.Sqrt(m)
}
