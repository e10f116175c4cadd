package loudness

import (
	"math"
	"unsafe"
)

// biquad holds normalised second-order section coefficients (a0 == 1).
type biquad struct {
	b0, b1, b2, a1, a2 float64
}

// The K-weighting curve is defined in BS.1770 only by its 48 kHz
// coefficients. The analog prototypes below (a high shelf and a high-pass)
// reproduce that table through the bilinear transform with the frequency
// prewarped at f0, so the same curve can be realised at any sample rate.
// The prototype parameters are the least-squares fit that libebur128 and
// pyloudnorm also use; at 48 kHz they give the table to ~1e-8.
const (
	shelfF0   = 1681.974450955533
	shelfGain = 3.999843853973347 // dB
	shelfQ    = 0.7071752369554196
	// shelfVbExp places the shelf's mid-band gain: Vb = Vh^shelfVbExp.
	shelfVbExp = 0.4996667741545416

	rlbF0 = 38.13547087602444
	rlbQ  = 0.5003270373238773
)

// shelfFilter returns stage 1 of the K-weighting pre-filter (the spherical
// head model, a +4 dB high shelf) for the sample rate.
func shelfFilter(sampleRate float64) biquad {
	k := math.Tan(math.Pi * shelfF0 / sampleRate)
	vh := math.Pow(10, shelfGain/20)
	vb := math.Pow(vh, shelfVbExp)
	a0 := 1 + k/shelfQ + k*k
	return biquad{
		b0: (vh + vb*k/shelfQ + k*k) / a0,
		b1: 2 * (k*k - vh) / a0,
		b2: (vh - vb*k/shelfQ + k*k) / a0,
		a1: 2 * (k*k - 1) / a0,
		a2: (1 - k/shelfQ + k*k) / a0,
	}
}

// rlbFilter returns stage 2 of the K-weighting pre-filter, the revised
// low-frequency B-curve (RLB) high-pass, for the sample rate. The BS.1770
// table keeps the numerator at 1, -2, 1, which gives the filter a passband
// gain of 1/b0 of the normalised high-pass (+0.043 dB at 48 kHz) that the
// -0.691 dB constant absorbs. Scaling the numerator by the 48 kHz
// normaliser over this rate's keeps that gain, and so the calibration, the
// same at every rate; a fixed 1, -2, 1 would drift by 0.2 dB at 8 kHz.
func rlbFilter(sampleRate float64) biquad {
	a0 := func(rate float64) float64 {
		k := math.Tan(math.Pi * rlbF0 / rate)
		return 1 + k/rlbQ + k*k
	}
	k := math.Tan(math.Pi * rlbF0 / sampleRate)
	g := a0(48000) / a0(sampleRate)
	n := a0(sampleRate)
	return biquad{
		b0: g, b1: -2 * g, b2: g,
		a1: 2 * (k*k - 1) / n,
		a2: (1 - k/rlbQ + k*k) / n,
	}
}

// kfilter is the two-stage K-weighting filter of one channel in direct
// form I, float64 throughout (the RLB poles sit within 0.01 of z = 1). Direct
// form I lets the feed-forward terms and the y[n-2] term run off the
// recursion's critical path, which is then one multiply and one subtract
// per stage: the filter is latency-bound, so that matters more than the
// operation count.
type kfilter struct {
	s, r   biquad
	x1, x2 float64 // input history
	y1, y2 float64 // shelf output history
	z1, z2 float64 // RLB output history
}

func newKFilter(sampleRate int) kfilter {
	return kfilter{s: shelfFilter(float64(sampleRate)), r: rlbFilter(float64(sampleRate))}
}

// energy filters x and returns the sum of the squared output samples.
func (f *kfilter) energy(x []float64) float64 {
	// Coefficients are read through a pointer rather than copied to
	// locals: with 14 live values the loop already fills the 16 SSE
	// registers, and a spilled accumulator would put a store-to-load
	// round trip on the critical path. Loads of constants are not on it.
	c := &[8]float64{f.s.b0, f.s.b1, f.s.b2, f.s.a1, f.s.a2, f.r.b0, f.r.a1, f.r.a2}
	x1, x2, y1, y2, z1, z2 := f.x1, f.x2, f.y1, f.y2, f.z1, f.z2
	var sum float64
	for _, v := range x {
		// RLB numerator: b1 == -2*b0, b2 == b0.
		y := (c[0]*v + c[1]*x1 + c[2]*x2 - c[4]*y2) - c[3]*y1
		z := (c[5]*((y+y2)-2*y1) - c[7]*z2) - c[6]*z1
		x2, x1 = x1, v
		y2, y1 = y1, y
		z2, z1 = z1, z
		sum += z * z
	}
	f.x1, f.x2, f.y1, f.y2, f.z1, f.z2 = x1, x2, y1, y2, z1, z2
	f.flushTiny()
	return sum
}

// flushTiny clears a state that only decays: outputs decaying after the
// signal stops would sink into subnormal numbers, which cost x86 CPUs
// ~100 cycles per operation; anything this small is 600 dB below full
// scale.
func (f *kfilter) flushTiny() {
	const tiny = 1e-30
	if math.Abs(f.y1) < tiny && math.Abs(f.y2) < tiny && math.Abs(f.z1) < tiny && math.Abs(f.z2) < tiny && f.x1 == 0 && f.x2 == 0 {
		f.y1, f.y2, f.z1, f.z2 = 0, 0, 0, 0
	}
}

// packStereo lays out the filter's coefficients for the stereo kernel:
// shelf b0, b1, b2, a1, a2, then RLB b0, a1, a2, every value twice (one
// per channel), starting on a 16-byte boundary as the packed SSE2
// operands require (the heap does not move objects: the alignment holds).
func (f *kfilter) packStereo() []float64 {
	buf := make([]float64, 17)
	if uintptr(unsafe.Pointer(&buf[0]))%16 != 0 {
		buf = buf[1:]
	}
	buf = buf[:16]
	for i, v := range [8]float64{f.s.b0, f.s.b1, f.s.b2, f.s.a1, f.s.a2, f.r.b0, f.r.a1, f.r.a2} {
		buf[2*i], buf[2*i+1] = v, v
	}
	return buf
}

func (f *kfilter) reset() { f.x1, f.x2, f.y1, f.y2, f.z1, f.z2 = 0, 0, 0, 0, 0, 0 }
