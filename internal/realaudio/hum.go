package realaudio

import "math"

// Hum is mains hum whose frequency wanders during the file.
type Hum struct {
	// Base is the nominal mains frequency (50 or 60 Hz).
	Base float64
	// Drift is how far the frequency wanders, peak to peak, in Hz.
	Drift float64
	// Freq is the instantaneous fundamental, one value per sample.
	Freq []float64
	// Harmonics is the number of harmonics, every multiple of the
	// fundamental up to 1 kHz.
	Harmonics int
	Samples   []float64
}

// HumMaxHz is the highest harmonic of the hum.
const HumMaxHz = 1000.0

// makeHum returns n samples of hum: a fundamental that wanders smoothly
// (a sum of three sinusoids of a quarter to one cycle over the file,
// scaled so that it spans base ± drift/2 exactly) and every harmonic to 1 kHz, the odd ones (a transformer's
// buzz) falling 1.5 dB per harmonic and the even ones 8 dB under them,
// each with its own phase; RMS 1.
func makeHum(n int, base, drift float64, seed uint64) Hum {
	r := newRand(seed)
	secs := float64(n) / Rate
	var w [3]float64
	var ph [3]float64
	for k := range w {
		// a quarter to one cycle over the file: the slow wander of a mains
		// frequency, not vibrato
		w[k] = 2 * math.Pi * 0.25 * (1 + float64(k) + r.float()) / secs
		ph[k] = 2 * math.Pi * r.float()
	}
	f := make([]float64, n)
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range f {
		t := float64(i) / Rate
		v := math.Sin(w[0]*t+ph[0]) + 0.5*math.Sin(w[1]*t+ph[1]) + 0.25*math.Sin(w[2]*t+ph[2])
		f[i] = v
		lo, hi = min(lo, v), max(hi, v)
	}
	for i := range f {
		f[i] = base + drift*((f[i]-lo)/(hi-lo)-0.5)
	}
	nh := int(HumMaxHz / base)
	amp := make([]float64, nh+1)
	phase := make([]float64, nh+1)
	for h := 1; h <= nh; h++ {
		db := -1.5 * float64(h-1)
		if h%2 == 0 {
			db -= 8
		}
		amp[h] = math.Pow(10, db/20)
		phase[h] = 2 * math.Pi * r.float()
	}
	x := make([]float64, n)
	var theta float64 // the fundamental's phase, the integral of f
	for i := range x {
		var v float64
		for h := 1; h <= nh; h++ {
			v += amp[h] * math.Sin(float64(h)*theta+phase[h])
		}
		x[i] = v
		theta += 2 * math.Pi * f[i] / Rate
		if theta > 2*math.Pi*1e6 {
			theta = math.Mod(theta, 2*math.Pi)
		}
	}
	g := 1 / rms(x)
	for i := range x {
		x[i] *= g
	}
	return Hum{Base: base, Drift: drift, Freq: f, Harmonics: nh, Samples: x}
}

// ToneFreq measures the frequency of the strongest sinusoid of x within
// ±span Hz of near: the peak of the Hann-windowed DTFT, searched in
// 0.01 Hz steps. It is how tests check the hum's drift.
func ToneFreq(x []float64, near, span float64) float64 {
	n := len(x)
	win := make([]float64, n)
	for i := range win {
		win[i] = x[i] * (0.5 - 0.5*math.Cos(2*math.Pi*float64(i)/float64(n)))
	}
	best, bestP := near, -1.0
	for f := near - span; f <= near+span; f += 0.01 {
		wr := 2 * math.Pi * f / Rate
		c, s := math.Cos(wr), math.Sin(wr)
		var re, im float64
		cr, ci := 1.0, 0.0
		for _, v := range win {
			re += v * cr
			im -= v * ci
			cr, ci = cr*c-ci*s, cr*s+ci*c
		}
		if p := re*re + im*im; p > bestP {
			best, bestP = f, p
		}
	}
	return best
}
