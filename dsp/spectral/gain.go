package spectral

import "math"

// The log-spectral amplitude estimator of Ephraim and Malah (1985) needs
// exp(E1(v)/2) for every bin of every frame. E1 is costly, so it is
// tabulated once on a grid of v with 64 points per octave from
// 2^lsaLo to 2^lsaHi; the index comes straight from the bits of v (its
// exponent and leading mantissa bits), so a lookup needs no division, no
// logarithm and no square root.
const (
	lsaLo      = -24
	lsaHi      = 8
	lsaPerOct  = 64
	lsaMantSh  = 52 - 6 // mantissa bits below the 6 that pick the point
	lsaTabSize = (lsaHi - lsaLo) * lsaPerOct
)

var lsaTab = func() []float64 {
	// One point past 2^lsaHi, so that v = 2^lsaHi interpolates too.
	t := make([]float64, lsaTabSize+2)
	for i := range t {
		// Point i: octave i/64, mantissa 1 + (i%64)/64, as the bits of v index it.
		v := math.Ldexp(1+float64(i%lsaPerOct)/lsaPerOct, lsaLo+i/lsaPerOct)
		t[i] = math.Exp(expint1(v) / 2)
	}
	return t
}()

// expint1 is the exponential integral E1(x) for x > 0.
func expint1(x float64) float64 {
	if x < 1 {
		// Power series: E1 = -gamma - ln x - sum (-x)^k / (k k!).
		s, term := 0.0, 1.0
		for k := 1; k < 60; k++ {
			term *= -x / float64(k)
			s += term / float64(k)
			if math.Abs(term) < 1e-18 {
				break
			}
		}
		return -0.5772156649015329 - math.Log(x) - s
	}
	// Continued fraction (modified Lentz).
	b := x + 1
	c := 1 / 1e-300
	d := 1 / b
	h := d
	for i := 1; i < 200; i++ {
		an := -float64(i * i)
		b += 2
		d = 1 / (an*d + b)
		c = b + an/c
		del := c * d
		h *= del
		if math.Abs(del-1) < 1e-15 {
			break
		}
	}
	return h * math.Exp(-x)
}

// lsaGain is the MMSE log-spectral amplitude gain for a priori SNR xi and
// posterior SNR gamma, clamped to 1.
func lsaGain(xi, gamma float64) float64 {
	r := xi / (1 + xi)
	return lsaGainR(r, r*gamma)
}

// lsaGainR is lsaGain from r = xi/(1+xi) and v = r*gamma, which the
// callers also need.
func lsaGainR(r, v float64) float64 { return min(r*lsaFactor(v), 1) }

// lsaFactor is exp(E1(v)/2) from the table, for v clamped to the table's
// range.
func lsaFactor(v float64) float64 {
	v = min(max(v, 0x1p-24), 0x1p8)
	bits := math.Float64bits(v)
	// The exponent and the 6 leading mantissa bits, v being positive.
	i := int(bits>>lsaMantSh) - (1023+lsaLo)*lsaPerOct
	// Linear interpolation on the mantissa bits below the index (a chord
	// of the mantissa, which is linear in v within the octave).
	f := float64(bits&(1<<lsaMantSh-1)) * (1.0 / (1 << lsaMantSh))
	tab := lsaTab[i : i+2]
	return tab[0] + f*(tab[1]-tab[0])
}

// fastExpNeg approximates exp(-x) for x >= 0 to about 3e-4 relative,
// enough for a probability or a gain; it avoids math.Exp in the per-bin
// loops.
func fastExpNeg(x float64) float64 { return fastExp2Neg(x * 1.4426950408889634) }

// fastExp2Neg approximates 2^-y for y >= 0 to about 3e-4 relative.
func fastExp2Neg(y float64) float64 {
	if y > 1022 {
		return 0
	}
	// y = k + f with f in [0, 1).
	k := int(y)
	f := y - float64(k)
	// 2^-f on [0,1) by a degree-5 polynomial.
	p := 1 + f*(-0.6931471805599453+f*(0.2402265069591007+f*(-0.05550410866482158+f*(0.009618129107628477+f*-0.0013333558146428443))))
	return p * math.Float64frombits(uint64(1023-k)<<52)
}

// fastLog2 approximates the base-2 logarithm of a normal x > 0 to about
// 3e-6 absolute, with no division: the exponent from the bits, the
// mantissa by a degree-6 polynomial (least squares on Chebyshev nodes).
func fastLog2(x float64) float64 {
	bits := math.Float64bits(x)
	e := float64(int((bits>>52)&0x7ff) - 1023)
	t := math.Float64frombits(bits&(1<<52-1)|1023<<52) - 1 // in [0, 1)
	return e + t*(1.442534780438465+t*(-0.7180336024961036+t*(0.4571581761265691+
		t*(-0.27734175556445734+t*(0.12147304763729296+t*-0.025792378518728443)))))
}

// fastLn approximates the natural logarithm of a normal x > 0 to about
// 2e-6 absolute, a fraction of math.Log's cost in the per-bin loops.
func fastLn(x float64) float64 { return fastLog2(x) * math.Ln2 }
