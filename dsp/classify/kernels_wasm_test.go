//go:build wasmsimd && !purego

package classify

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// The browser build's downmix kernel is mono2Go to the bit: noise,
// signed zeros, NaNs and infinities, odd and even lengths.
func TestMono2KernelIsGo(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	special := []float64{0, math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1), math.MaxFloat64, 5e-324}
	for trial := range 200 {
		n := r.IntN(50)
		l, rr := make([]float64, n), make([]float64, n)
		for i := range n {
			l[i], rr[i] = r.NormFloat64(), r.NormFloat64()
			if r.IntN(4) == 0 {
				l[i] = special[r.IntN(len(special))]
			}
			if r.IntN(4) == 0 {
				rr[i] = special[r.IntN(len(special))]
			}
		}
		got, want := make([]float64, n), make([]float64, n)
		mono2(got, l, rr)
		mono2Go(want, l, rr)
		for i := range want {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
				t.Fatalf("trial %d frame %d: %v by the kernel, %v in Go (%v, %v)", trial, i, got[i], want[i], l[i], rr[i])
			}
		}
	}
}

// The browser build's decimation filter kernel is lowPass2Go to the
// bit, output and states, over blocks of every length in turn, on
// noise, silence with signed zeros, and a NaN.
func TestLowPass2KernelIsGo(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, fs := range []float64{44100, 48000, 96000} {
		mk := func() [2]biquad { return [2]biquad{lowPass(fs, 0.45*8000, 0.5412), lowPass(fs, 0.45*8000, 1.3066)} }
		kp, gp := mk(), mk()
		for trial := range 60 {
			x := make([]float64, r.IntN(300))
			for i := range x {
				switch {
				case trial%10 == 3:
					x[i] = []float64{0, math.Copysign(0, -1)}[r.IntN(2)]
				default:
					x[i] = r.NormFloat64()
				}
			}
			if trial == 57 && len(x) > 0 {
				x[len(x)/2] = math.NaN()
			}
			got, want := append([]float64(nil), x...), append([]float64(nil), x...)
			lowPass2(&kp[0], &kp[1], got)
			lowPass2Go(&gp[0], &gp[1], want)
			for i := range want {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
					t.Fatalf("fs %v trial %d sample %d: %v by the kernel, %v in Go", fs, trial, i, got[i], want[i])
				}
			}
			if fmt.Sprint(kp) != fmt.Sprint(gp) {
				t.Fatalf("fs %v trial %d: states %v by the kernel, %v in Go", fs, trial, kp, gp)
			}
		}
	}
}

// The browser build's power spectrum kernel is powerSpectrumGo to the
// bit, the spectrum and the running sums, signed zeros and a NaN
// included.
func TestPowerSpectrumKernelIsGo(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for trial := range 100 {
		n := 1 + r.IntN(600)
		half := r.IntN(n)
		coef := make([]complex128, n)
		for i := range coef {
			coef[i] = complex(r.NormFloat64(), r.NormFloat64())
			if trial%5 == 1 {
				coef[i] = complex(math.Copysign(0, -1), 0)
			}
		}
		if trial == 77 {
			coef[n/2] = complex(math.NaN(), 1)
		}
		gp, gpre := make([]float64, n), make([]float64, half+2)
		kp, kpre := make([]float64, n), make([]float64, half+2)
		powerSpectrumGo(gp, gpre, coef, half)
		powerSpectrum(kp, kpre, coef, half)
		for _, c := range [][2][]float64{{kp, gp}, {kpre, gpre}} {
			for i := range c[1] {
				if math.Float64bits(c[0][i]) != math.Float64bits(c[1][i]) && !(c[0][i] != c[0][i] && c[1][i] != c[1][i]) {
					t.Fatalf("trial %d (%d bins, half %d): value %d is %v by the kernel, %v in Go", trial, n, half, i, c[0][i], c[1][i])
				}
			}
		}
	}
}

// The browser build's windowing kernel is windowSquaresGo to the bit:
// the windowed values and the four sums, on noise at every length (the
// tail of fewer than four added to the first sum), with signed zeros,
// infinities and NaNs among the samples.
func TestWindowSquaresKernelIsGo(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	special := []float64{0, math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1), math.MaxFloat64, 5e-324}
	same := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) || (a != a && b != b) }
	for trial := range 300 {
		n := r.IntN(70)
		x, win := make([]float64, n), make([]float64, n)
		for i := range n {
			x[i], win[i] = r.NormFloat64()*math.Pow(10, float64(r.IntN(6)-3)), r.Float64()
			if trial%3 == 0 && r.IntN(20) == 0 {
				x[i] = special[r.IntN(len(special))]
			}
		}
		got, want := make([]float64, n), make([]float64, n)
		g0, g1, g2, g3 := windowSquares(got, x, win)
		w0, w1, w2, w3 := windowSquaresGo(want, x, win)
		for i, p := range [][2]float64{{g0, w0}, {g1, w1}, {g2, w2}, {g3, w3}} {
			if !same(p[0], p[1]) {
				t.Fatalf("trial %d, %d values: sum %d is %v by the kernel, %v in Go", trial, n, i, p[0], p[1])
			}
		}
		for i := range want {
			if !same(got[i], want[i]) {
				t.Fatalf("trial %d value %d: %v by the kernel, %v in Go", trial, i, got[i], want[i])
			}
		}
	}
}
