package spectral

import "math"

// The log-spectral amplitude estimator of Ephraim and Malah (1985) needs
// exp(E1(v)/2) for every bin of every frame. E1 is costly, so it is
// tabulated once over u = v/(1+v), which maps [0, inf) onto [0, 1), as
// lsaT(u) = exp(E1(v)/2) * sqrt(u): smooth and bounded at both ends
// (exp(-Euler/2) at 0, 1 at 1), so linear interpolation is accurate.
const lsaTabSize = 2048

var lsaTab = func() []float64 {
	t := make([]float64, lsaTabSize+2)
	for i := range t {
		u := float64(i) / lsaTabSize
		switch {
		case i == 0:
			t[i] = math.Exp(-0.5772156649015329 / 2)
		case u >= 1:
			t[i] = 1
		default:
			v := u / (1 - u)
			t[i] = math.Exp(expint1(v)/2) * math.Sqrt(u)
		}
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
	v := r * gamma
	if v <= 0 {
		return 0
	}
	u := v / (1 + v)
	p := u * lsaTabSize
	i := int(p)
	fr := p - float64(i)
	t := lsaTab[i] + fr*(lsaTab[i+1]-lsaTab[i])
	g := r * t / math.Sqrt(u)
	return min(g, 1)
}

// fastExpNeg approximates exp(-x) for x >= 0 to about 1e-4 relative, enough
// for a probability; it avoids math.Exp in the per-bin loops.
func fastExpNeg(x float64) float64 {
	if x > 700 {
		return 0
	}
	// exp(-x) = 2^(-x*log2 e); split into integer and fraction.
	y := x * 1.4426950408889634
	k := math.Floor(y)
	f := y - k // in [0, 1)
	// 2^-f on [0,1) by a degree-5 minimax-like polynomial.
	p := 1 + f*(-0.6931471805599453+f*(0.2402265069591007+f*(-0.05550410866482158+f*(0.009618129107628477+f*-0.0013333558146428443))))
	return math.Ldexp(p, -int(k))
}

// fastLn approximates the natural logarithm of x > 0 to about 1e-6
// relative, a fraction of math.Log's cost in the per-bin loops.
func fastLn(x float64) float64 {
	bits := math.Float64bits(x)
	e := int((bits>>52)&0x7ff) - 1023
	m := math.Float64frombits(bits&^(0x7ff<<52) | 1023<<52) // in [1, 2)
	t := (m - 1) / (m + 1)                                  // |t| <= 1/3
	t2 := t * t
	return float64(e)*math.Ln2 + 2*t*(1+t2*(1.0/3+t2*(1.0/5+t2*(1.0/7+t2*(1.0/9+t2/11)))))
}
