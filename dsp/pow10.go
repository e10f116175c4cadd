package dsp

import "math"

// ln10 is math.Log(10), the value math.Pow(10, y) computes on every call.
var ln10 = math.Log(10)

// pow10 is math.Pow(10, y) to the bit, in about half the time: Go's pow
// with x = 10 folded in (its logarithm and its Frexp, 0.625 * 2^4,
// computed once). DBToGain runs per gain-computer step of the
// compressor, hundreds of thousands of times a minute of audio.
// TestPow10IsPow holds it to math.Pow.
func pow10(y float64) float64 {
	if a := math.Abs(y); a < 1 && a != 0 && a != 0.5 {
		// Gains within 20 dB, the compressor's every 16 frames: what the
		// general path computes for them, without its Modf, its loop and
		// its Ldexp, whose scaling of such a result by 2^4 or 2^-4 is a
		// product by 16 or 1/16, exact.
		yf, ae := a, 0
		if yf > 0.5 {
			yf--
			ae = 4
		}
		a1 := math.Exp(yf * ln10)
		if ae != 0 {
			a1 *= 0.625 // Frexp(10)'s fraction
		}
		if y < 0 {
			a1 = 1 / a1
			ae = -ae
		}
		switch ae {
		case 4:
			return a1 * 16
		case -4:
			return a1 * (1.0 / 16)
		}
		return a1
	}
	switch {
	case y == 0:
		return 1
	case y == 1:
		return 10
	case math.IsNaN(y):
		return math.NaN()
	case math.IsInf(y, 1):
		return math.Inf(1)
	case math.IsInf(y, -1):
		return 0
	case y == 0.5:
		return math.Sqrt(10)
	case y == -0.5:
		return 1 / math.Sqrt(10)
	}
	yi, yf := math.Modf(math.Abs(y))
	if yi >= 1<<63 {
		if y > 0 {
			return math.Inf(1)
		}
		return 0
	}
	a1 := 1.0
	ae := 0
	if yf != 0 {
		if yf > 0.5 {
			yf--
			yi++
		}
		a1 = math.Exp(yf * ln10)
	}
	x1, xe := 0.625, 4 // math.Frexp(10)
	for i := int64(yi); i != 0; i >>= 1 {
		if xe < -1<<12 || 1<<12 < xe {
			ae += xe
			break
		}
		if i&1 == 1 {
			a1 *= x1
			ae += xe
		}
		x1 *= x1
		xe <<= 1
		if x1 < .5 {
			x1 += x1
			xe--
		}
	}
	if y < 0 {
		a1 = 1 / a1
		ae = -ae
	}
	return math.Ldexp(a1, ae)
}
