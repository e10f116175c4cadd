package dsp

import (
	"fmt"
	"math"
	"math/cmplx"
	"unsafe"

	"github.com/audiopost/audiopost/audio"
)

// Coeffs are the normalized (a0 = 1) coefficients of one biquad section:
//
//	y[n] = B0 x[n] + B1 x[n-1] + B2 x[n-2] - A1 y[n-1] - A2 y[n-2]
type Coeffs struct {
	B0, B1, B2, A1, A2 float64
}

// The designs below follow Robert Bristow-Johnson's "Audio EQ cookbook":
// bilinear transforms of analog prototypes with pre-warped centre
// frequency, so they are valid at any sample rate.

func rbj(fs, f0 float64) (w0, cosw, sinw float64) {
	w0 = 2 * math.Pi * f0 / fs
	return w0, math.Cos(w0), math.Sin(w0)
}

func norm(b0, b1, b2, a0, a1, a2 float64) Coeffs {
	return Coeffs{B0: b0 / a0, B1: b1 / a0, B2: b2 / a0, A1: a1 / a0, A2: a2 / a0}
}

// LowPassCoeffs is a second-order low-pass at f0 Hz with quality q
// (0.7071 for Butterworth).
func LowPassCoeffs(fs, f0, q float64) Coeffs {
	_, c, s := rbj(fs, f0)
	alpha := s / (2 * q)
	return norm((1-c)/2, 1-c, (1-c)/2, 1+alpha, -2*c, 1-alpha)
}

// HighPassCoeffs is a second-order high-pass at f0 Hz with quality q.
func HighPassCoeffs(fs, f0, q float64) Coeffs {
	_, c, s := rbj(fs, f0)
	alpha := s / (2 * q)
	return norm((1+c)/2, -(1 + c), (1+c)/2, 1+alpha, -2*c, 1-alpha)
}

// BandPassCoeffs is a second-order band-pass with 0 dB peak gain at f0.
func BandPassCoeffs(fs, f0, q float64) Coeffs {
	_, c, s := rbj(fs, f0)
	alpha := s / (2 * q)
	return norm(alpha, 0, -alpha, 1+alpha, -2*c, 1-alpha)
}

// PeakingCoeffs is a peaking equalizer: gainDB at f0, bandwidth set by q.
func PeakingCoeffs(fs, f0, q, gainDB float64) Coeffs {
	_, c, s := rbj(fs, f0)
	a := math.Pow(10, gainDB/40)
	alpha := s / (2 * q)
	return norm(1+alpha*a, -2*c, 1-alpha*a, 1+alpha/a, -2*c, 1-alpha/a)
}

// LowShelfCoeffs boosts or cuts by gainDB below f0, with shelf slope 1.
func LowShelfCoeffs(fs, f0, gainDB float64) Coeffs {
	_, c, s := rbj(fs, f0)
	a := math.Pow(10, gainDB/40)
	alpha := s / 2 * math.Sqrt2 // slope S = 1
	sa := 2 * math.Sqrt(a) * alpha
	return norm(
		a*((a+1)-(a-1)*c+sa),
		2*a*((a-1)-(a+1)*c),
		a*((a+1)-(a-1)*c-sa),
		(a+1)+(a-1)*c+sa,
		-2*((a-1)+(a+1)*c),
		(a+1)+(a-1)*c-sa,
	)
}

// HighShelfCoeffs boosts or cuts by gainDB above f0, with shelf slope 1.
func HighShelfCoeffs(fs, f0, gainDB float64) Coeffs {
	_, c, s := rbj(fs, f0)
	a := math.Pow(10, gainDB/40)
	alpha := s / 2 * math.Sqrt2
	sa := 2 * math.Sqrt(a) * alpha
	return norm(
		a*((a+1)+(a-1)*c+sa),
		-2*a*((a-1)+(a+1)*c),
		a*((a+1)+(a-1)*c-sa),
		(a+1)-(a-1)*c+sa,
		2*((a-1)-(a+1)*c),
		(a+1)-(a-1)*c-sa,
	)
}

// ButterworthHighPass returns the sections of an order-n (even, 2-8)
// Butterworth high-pass at f0 Hz.
func ButterworthHighPass(fs, f0 float64, order int) []Coeffs {
	out := make([]Coeffs, 0, order/2)
	for k := 0; k < order/2; k++ {
		out = append(out, HighPassCoeffs(fs, f0, butterQ(order, k)))
	}
	return out
}

// ButterworthLowPass returns the sections of an order-n (even) Butterworth
// low-pass at f0 Hz.
func ButterworthLowPass(fs, f0 float64, order int) []Coeffs {
	out := make([]Coeffs, 0, order/2)
	for k := 0; k < order/2; k++ {
		out = append(out, LowPassCoeffs(fs, f0, butterQ(order, k)))
	}
	return out
}

// butterQ is the quality of the k-th pole pair of an order-n Butterworth.
func butterQ(n, k int) float64 {
	theta := math.Pi * float64(2*k+1) / float64(2*n)
	return 1 / (2 * math.Sin(theta))
}

// Response returns the magnitude response in dB of the section at f Hz.
func (c Coeffs) Response(fs, f float64) float64 {
	z := cmplx.Exp(complex(0, -2*math.Pi*f/fs))
	num := complex(c.B0, 0) + complex(c.B1, 0)*z + complex(c.B2, 0)*z*z
	den := 1 + complex(c.A1, 0)*z + complex(c.A2, 0)*z*z
	return 20 * math.Log10(cmplx.Abs(num/den))
}

// CascadeResponse returns the magnitude response in dB of sections in series.
func CascadeResponse(sections []Coeffs, fs, f float64) float64 {
	var db float64
	for _, s := range sections {
		db += s.Response(fs, f)
	}
	return db
}

func (c Coeffs) valid() bool {
	for _, v := range [...]float64{c.B0, c.B1, c.B2, c.A1, c.A2} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	// A stable second-order section has its poles inside the unit circle.
	return math.Abs(c.A2) < 1 && math.Abs(c.A1) < 1+c.A2
}

// antiDenormal is added to the input of every section: a constant -500 dB
// offset keeps decaying filter state out of the denormal range (where float
// arithmetic is two orders of magnitude slower) without a data-dependent
// flush that would make results depend on block boundaries.
const antiDenormal = 1e-25

// cascade is the per-channel state of a chain of biquad sections in
// transposed direct form II, which keeps the state small and well scaled.
type cascade struct {
	sec []Coeffs
	z   [][2]float64 // [channel*len(sec)+section]
	// groups are the sections laid out for the stereo kernels, when the
	// platform has them (see packStereo).
	groups []stereoGroup
	// scalar forces the Go loops (tests compare both).
	scalar bool
}

// stereoGroup is up to stereoWidth consecutive sections run by one
// kernel call.
type stereoGroup struct {
	first, n int
	coef     []float64
}

func newCascade(sections []Coeffs, channels int) (*cascade, error) {
	for i, s := range sections {
		if !s.valid() {
			return nil, fmt.Errorf("%w: biquad section %d is unstable or not finite: %+v", ErrInvalidParameter, i, s)
		}
	}
	f := &cascade{sec: append([]Coeffs(nil), sections...), z: make([][2]float64, channels*len(sections))}
	if channels == 2 && stereoWidth > 0 {
		for s := 0; s < len(sections); s += stereoWidth {
			n := min(len(sections)-s, stereoWidth)
			f.groups = append(f.groups, stereoGroup{first: s, n: n, coef: packStereo(sections[s : s+n])})
		}
	}
	return f, nil
}

// packStereo lays sections out for a stereo kernel: antiDenormal, then
// each section's b0, b1, b2, a1, a2, every value twice (one per channel),
// starting on a 16-byte boundary as the packed SSE2 operands require.
func packStereo(sec []Coeffs) []float64 {
	n := 2 + 10*len(sec)
	buf := make([]float64, n+1)
	off := 0
	if uintptr(unsafe.Pointer(&buf[0]))%16 != 0 {
		off = 1 // the heap does not move objects: the alignment holds
	}
	p := buf[off : off+n]
	p[0], p[1] = antiDenormal, antiDenormal
	for i, c := range sec {
		for j, v := range [...]float64{c.B0, c.B1, c.B2, c.A1, c.A2} {
			p[2+10*i+2*j], p[2+10*i+2*j+1] = v, v
		}
	}
	return p
}

// runKernels is run2 with the stereo kernels.
func (f *cascade) runKernels(l, r []float64) {
	ns := len(f.sec)
	zl, zr := f.z[:ns], f.z[ns:]
	for _, g := range f.groups {
		var z [16]float64
		for j := range g.n {
			s := g.first + j
			z[4*j], z[4*j+1], z[4*j+2], z[4*j+3] = zl[s][0], zr[s][0], zl[s][1], zr[s][1]
		}
		stereoKernel(g.n, &l[0], &r[0], len(l), &g.coef[0], &z[0])
		for j := range g.n {
			s := g.first + j
			zl[s] = [2]float64{z[4*j], z[4*j+2]}
			zr[s] = [2]float64{z[4*j+1], z[4*j+3]}
		}
	}
}

// run filters x of channel ch in place. Sections go in pairs through one
// loop: the second section's recurrence at sample i overlaps the first's
// at sample i+1 in the CPU pipeline, where one section after the other
// would wait on each recurrence in turn.
func (f *cascade) run(ch int, x []float64) {
	ns := len(f.sec)
	z := f.z[ch*ns : ch*ns+ns]
	s := 0
	for ; s+1 < ns; s += 2 {
		pair(x, f.sec[s], f.sec[s+1], &z[s], &z[s+1])
	}
	if s < ns {
		single(x, f.sec[s], &z[s])
	}
}

// The float64 conversions around products forbid fusing them into FMA
// instructions (which GOAMD64=v3 would otherwise do): every path, Go loops
// and SSE2 kernels alike, then rounds the same way and gives identical
// results.
//
// z1 is (b1*v + z2) - a1*y: the feedback product comes in last, so from
// one output to the next the recurrence waits on an add, a multiply and a
// subtract (9 cycles), not also on the add of z2 (12): a two-section
// stereo cascade, latency-bound, runs about a quarter faster.

func single(x []float64, c Coeffs, zc *[2]float64) {
	z1, z2 := zc[0], zc[1]
	for i, v := range x {
		v += antiDenormal
		y := float64(c.B0*v) + z1
		z1 = float64(c.B1*v) + z2 - float64(c.A1*y)
		z2 = float64(c.B2*v) - float64(c.A2*y)
		x[i] = y
	}
	*zc = [2]float64{z1, z2}
}

func pair(x []float64, c, d Coeffs, zc, zd *[2]float64) {
	z1, z2 := zc[0], zc[1]
	w1, w2 := zd[0], zd[1]
	for i, v := range x {
		v += antiDenormal
		y := float64(c.B0*v) + z1
		z1 = float64(c.B1*v) + z2 - float64(c.A1*y)
		z2 = float64(c.B2*v) - float64(c.A2*y)
		y += antiDenormal
		u := float64(d.B0*y) + w1
		w1 = float64(d.B1*y) + w2 - float64(d.A1*u)
		w2 = float64(d.B2*y) - float64(d.A2*u)
		x[i] = u
	}
	*zc = [2]float64{z1, z2}
	*zd = [2]float64{w1, w2}
}

// run2 filters the two channels of a stereo cascade together: with both
// channels and two sections in one loop, four independent recurrences
// keep the CPU busy, and a stereo pair costs little more than one
// channel. Results are identical to run on each channel.
func (f *cascade) run2(l, r []float64) bool {
	ns := len(f.sec)
	if len(f.z) != 2*ns || len(l) != len(r) {
		return false
	}
	if len(l) == 0 {
		return true
	}
	if f.groups != nil && !f.scalar {
		f.runKernels(l, r)
		return true
	}
	zl, zr := f.z[:ns], f.z[ns:]
	s := 0
	for ; s+1 < ns; s += 2 {
		pairStereo(l, r, f.sec[s], f.sec[s+1], &zl[s], &zl[s+1], &zr[s], &zr[s+1])
	}
	if s < ns {
		singleStereo(l, r, f.sec[s], &zl[s], &zr[s])
	}
	return true
}

func singleStereo(l, r []float64, c Coeffs, zl, zr *[2]float64) {
	a1, a2 := zl[0], zl[1]
	p1, p2 := zr[0], zr[1]
	r = r[:len(l)]
	for i := range l {
		v := l[i] + antiDenormal
		w := r[i] + antiDenormal
		y := float64(c.B0*v) + a1
		x := float64(c.B0*w) + p1
		a1 = float64(c.B1*v) + a2 - float64(c.A1*y)
		p1 = float64(c.B1*w) + p2 - float64(c.A1*x)
		a2 = float64(c.B2*v) - float64(c.A2*y)
		p2 = float64(c.B2*w) - float64(c.A2*x)
		l[i] = y
		r[i] = x
	}
	*zl = [2]float64{a1, a2}
	*zr = [2]float64{p1, p2}
}

func pairStereo(l, r []float64, c, d Coeffs, zlc, zld, zrc, zrd *[2]float64) {
	a1, a2 := zlc[0], zlc[1]
	b1, b2 := zld[0], zld[1]
	p1, p2 := zrc[0], zrc[1]
	q1, q2 := zrd[0], zrd[1]
	r = r[:len(l)]
	for i := range l {
		v := l[i] + antiDenormal
		w := r[i] + antiDenormal
		y := float64(c.B0*v) + a1
		x := float64(c.B0*w) + p1
		a1 = float64(c.B1*v) + a2 - float64(c.A1*y)
		p1 = float64(c.B1*w) + p2 - float64(c.A1*x)
		a2 = float64(c.B2*v) - float64(c.A2*y)
		p2 = float64(c.B2*w) - float64(c.A2*x)
		y += antiDenormal
		x += antiDenormal
		u := float64(d.B0*y) + b1
		t := float64(d.B0*x) + q1
		b1 = float64(d.B1*y) + b2 - float64(d.A1*u)
		q1 = float64(d.B1*x) + q2 - float64(d.A1*t)
		b2 = float64(d.B2*y) - float64(d.A2*u)
		q2 = float64(d.B2*x) - float64(d.A2*t)
		l[i] = u
		r[i] = t
	}
	*zlc = [2]float64{a1, a2}
	*zld = [2]float64{b1, b2}
	*zrc = [2]float64{p1, p2}
	*zrd = [2]float64{q1, q2}
}

// Biquad filters every channel of its source through a cascade of biquad
// sections with float64 state per channel.
type Biquad struct {
	src audio.Source
	f   *cascade
	ch  int
}

// NewBiquad returns a filter applying sections in series to src. It fails
// with ErrInvalidParameter if a section is unstable.
func NewBiquad(src audio.Source, sections ...Coeffs) (*Biquad, error) {
	ch := src.Format().Channels
	f, err := newCascade(sections, ch)
	if err != nil {
		return nil, err
	}
	return &Biquad{src: src, f: f, ch: ch}, nil
}

// Format implements audio.Source.
func (b *Biquad) Format() audio.Format { return b.src.Format() }

// Read implements audio.Source.
func (b *Biquad) Read(dst audio.Buffer) (int, error) {
	if err := checkShape(dst, b.ch); err != nil {
		return 0, err
	}
	n, err := b.src.Read(dst)
	if n > 0 && b.ch == 2 && b.f.run2(dst[0][:n], dst[1][:n]) {
		return n, err
	}
	for c := 0; c < b.ch && n > 0; c++ {
		b.f.run(c, dst[c][:n])
	}
	return n, err
}
