package spectral

import (
	"math"
	"unsafe"
)

// The network's forward pass for Static's profile (staticnoise.go): all
// isoBands bands of a frame at once, band-minor, so that one vector
// instruction takes eight bands through the same weight. isoNet.band
// takes a band at a time through 2,300 scalar multiply-adds, which was a
// third of the profile's cost; here each layer is one kernel call
// (denseTanh48AVX2 in noisekern_amd64.s, 48 bands at a time, where the
// CPU has AVX2, else denseTanhGo), in float32 as the network is stored. Each unit's sum is
// made in band's order (bias, then the inputs in turn, a product rounded
// and then added, no fused multiply-add) and tanh32's and the sigmoid's
// operations are the same, so the gains are band's, bit for bit
// (TestIsoBatchIsBand).

// isoBatch holds the activations of the network for the bands of one
// frame, [unit][band].
type isoBatch struct {
	xt [isoIn][isoBands]float32
	h1 [isoH1][isoBands]float32
	h2 [isoH2][isoBands]float32
}

// isoTanhK holds the constants of tanh32 for denseTanh48AVX2, a row of
// eight copies each, in the order the kernel reads them.
var isoTanhK = func() (k [10][8]float32) {
	for i, c := range [10]float32{378, 17325, 135135, 28, 3150, 62370, 4.97, -4.97, 1, -1} {
		for j := range k[i] {
			k[i][j] = c
		}
	}
	return k
}()

// forwardBatch sets gain (isoBands) from the features of a frame
// (isoBands rows of isoIn), bit for bit as the band-at-a-time reference
// of the fitting program (isonet_ref_test.go) does.
func (m *isoNet) forwardBatch(in []float32, s *isoBatch, gain []float64) {
	in = in[:isoBands*isoIn]
	for b := range isoBands {
		row := in[b*isoIn : (b+1)*isoIn]
		for i, v := range row {
			s.xt[i][b] = (v - m.mean[i]) * m.scale[i]
		}
	}
	w1, b1 := unsafe.Slice(&m.w1[0][0], isoH1*isoIn), m.b1[:]
	w2, b2 := unsafe.Slice(&m.w2[0][0], isoH2*isoH1), m.b2[:]
	xt := unsafe.Slice(&s.xt[0][0], isoIn*isoBands)
	h1, h2 := unsafe.Slice(&s.h1[0][0], isoH1*isoBands), unsafe.Slice(&s.h2[0][0], isoH2*isoBands)
	b0 := 0
	if useAVX2 {
		// The kernel takes 48 bands at a time, the Go loop the rest.
		for ; b0+48 <= isoBands; b0 += 48 {
			denseTanh48AVX2(&w1[0], &b1[0], &xt[b0], &h1[b0], isoIn, isoH1, 4*isoBands, &isoTanhK)
		}
		for b := 0; b+48 <= isoBands; b += 48 {
			denseTanh48AVX2(&w2[0], &b2[0], &h1[b], &h2[b], isoH1, isoH2, 4*isoBands, &isoTanhK)
		}
	}
	if b0 < isoBands {
		denseTanhGo(w1, b1, xt, h1, isoBands, b0, isoBands)
		denseTanhGo(w2, b2, h1, h2, isoBands, b0, isoBands)
	}
	var a [isoBands]float32
	for b := range a {
		a[b] = m.b3[0]
	}
	for i := range s.h2 {
		w := m.w3[i]
		x := &s.h2[i]
		for b := range a {
			a[b] += w * x[b]
		}
	}
	for b, v := range a {
		gain[b] = float64(float32(1 / (1 + math.Exp(-float64(v)))))
	}
}

// denseTanhGo sets out[j][b] = tanh32(bias[j] + sum over i of
// w[j][i] x[i][b]) for the bands b from b0 to b1: w is len(bias) rows of
// nin weights, x nin rows of nb inputs, out len(bias) rows of nb.
func denseTanhGo(w, bias, x, out []float32, nb, b0, b1 int) {
	nin := len(x) / nb
	for j, c := range bias {
		h := out[j*nb+b0 : j*nb+b1]
		for b := range h {
			h[b] = c
		}
		for i, wi := range w[j*nin : (j+1)*nin] {
			xi := x[i*nb+b0 : i*nb+b1]
			for b := range h {
				h[b] += wi * xi[b]
			}
		}
		for b := range h {
			h[b] = tanh32(h[b])
		}
	}
}

// isoHarmonicity is isoFront.harmonicity at two thirds of its cost, for
// Static's profile: the autocorrelation of the spectrum under 4 kHz,
// which the front takes by an inverse transform of n, is taken by one of
// n/isoHarmStep (the same sums at the lags that are multiples of
// isoHarmStep, as the spectrum is empty above n/(2 isoHarmStep)), and the
// lags between the isoHarmPeaks best of its peaks and their neighbours
// are summed directly. The result is the front's (to rounding) unless
// the front's peak lies at another peak whose sampled value is lower:
// two peaks of about the same height. On a voice in noise and on noise
// alone (TestIsoHarmonicityNear) every frame's value is the front's to
// 1e-9 (with a step of 4: 1107 of 1122 frames, worst off by 0.034, for
// 4.0 against 5.6 us a frame; the front's 8.3).
type isoHarmonicity struct {
	f    *isoFront
	n    int
	r    rfft // of n/isoHarmStep
	spec []complex128
	acf  []float64
	unit []float64
	cos  []float64 // cos(2 pi i/n)
	lag  int       // the last frame's peak lag (0: none), as the front's
}

// isoHarmStep is the lag step of the coarse autocorrelation, and
// isoHarmPeaks how many of its peaks are refined.
const (
	isoHarmStep  = 2
	isoHarmPeaks = 2
)

// newIsoHarmonicity returns the fast harmonicity of front f's frames of
// n, nil when f's spectrum under 4 kHz reaches past the coarse
// transform's.
func newIsoHarmonicity(f *isoFront, n int) *isoHarmonicity {
	m := n / isoHarmStep
	if f.kHi >= m/2 || n%isoHarmStep != 0 {
		return nil
	}
	h := &isoHarmonicity{f: f, n: n, r: newRFFT(m), spec: make([]complex128, m/2+1),
		acf: make([]float64, m), unit: make([]float64, m), cos: make([]float64, n)}
	for i := range h.unit {
		h.unit[i] = 1
	}
	for i := range h.cos {
		h.cos[i] = math.Cos(2 * math.Pi * float64(i) / float64(n))
	}
	return h
}

// of returns the harmonicity of the frame of power spectrum pow.
func (h *isoHarmonicity) of(pow []float64) float64 {
	f := h.f
	h.lag = 0
	clear(h.spec)
	var e float64
	for k := f.kLo; k <= f.kHi; k++ {
		h.spec[k] = complex(pow[k], 0)
		e += pow[k]
	}
	if e <= 0 {
		return 0
	}
	clear(h.acf)
	h.r.inverseGain(h.acf, h.spec, nil, h.unit)
	r0 := h.acf[0]
	if r0 <= 0 {
		return 0
	}
	// The isoHarmPeaks highest local peaks of the coarse lags in range.
	qLo, qHi := (f.lagLo+isoHarmStep-1)/isoHarmStep, f.lagHi/isoHarmStep
	val := func(q int) float64 {
		if q < qLo || q > qHi {
			return math.Inf(-1)
		}
		return h.acf[q] / (r0 * f.wacf[q*isoHarmStep])
	}
	var at [isoHarmPeaks]int
	var v [isoHarmPeaks]float64
	for i := range at {
		at[i], v[i] = -1, math.Inf(-1)
	}
	prev, cur := math.Inf(-1), val(qLo)
	for q := qLo; q <= qHi; q++ {
		next := val(q + 1)
		if cur >= prev && cur >= next && cur > v[isoHarmPeaks-1] {
			i := isoHarmPeaks - 1
			for ; i > 0 && cur > v[i-1]; i-- {
				at[i], v[i] = at[i-1], v[i-1]
			}
			at[i], v[i] = q, cur
		}
		prev, cur = cur, next
	}
	// The coarse peaks, and the lags between them and their neighbours
	// summed directly (the front's r0 is e times the transform's scale,
	// which the ratio cancels).
	best := 0.0
	for i, q := range at {
		if q < 0 {
			continue
		}
		if v[i] > best {
			best, h.lag = v[i], q*isoHarmStep
		}
		for l := max(f.lagLo, q*isoHarmStep-isoHarmStep/2); l <= min(f.lagHi, q*isoHarmStep+isoHarmStep/2); l++ {
			if l == q*isoHarmStep {
				continue
			}
			var s float64
			j := f.kLo * l % h.n
			for k := f.kLo; k <= f.kHi; k++ {
				s += pow[k] * h.cos[j]
				if j += l; j >= h.n {
					j -= h.n
				}
			}
			if r := s / (e * f.wacf[l]); r > best {
				best, h.lag = r, l
			}
		}
	}
	return min(best, 1.5)
}
