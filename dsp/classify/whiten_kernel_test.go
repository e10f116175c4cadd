//go:build (amd64 || (wasm && wasmsimd)) && !purego

package classify

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The kernels' whitening and normalisation (whiten_amd64.s's AVX, or in
// the browser build internal/wasmsimd's) are the Go loops to the last bit:
// the whitened spectrum, the normalised autocorrelation and the features
// of noise, harmonic combs, near-silence and frames with a NaN.
func TestWhitenKernelIsGo(t *testing.T) {
	if !useKernel {
		t.Skip("no AVX")
	}
	r := rand.New(rand.NewPCG(13, 14))
	for _, fsd := range []float64{8000, 12000, 16000, 23999} {
		run := func(avx bool, x []float64) (feature, []complex128, []float64) {
			defer func(v bool) { useKernel = v }(useKernel)
			useKernel = avx
			s := newSpectral(fsd)
			var f feature
			s.analyse(x, &f)
			return f, slices.Clone(s.acCoef), slices.Clone(s.nac)
		}
		s := newSpectral(fsd)
		for trial := range 200 {
			x := make([]float64, s.nw)
			f0 := 80 + r.Float64()*300
			for i := range x {
				switch trial % 4 {
				case 0:
					x[i] = r.NormFloat64()
				case 1:
					for h := 1.0; h < 12; h++ {
						x[i] += math.Sin(2*math.Pi*f0*h*float64(i)/fsd) / h
					}
				case 2:
					x[i] = r.NormFloat64() * 1e-5
				case 3:
					x[i] = math.Sin(2*math.Pi*f0*float64(i)/fsd) + 0.1*r.NormFloat64()
				}
			}
			if trial%50 == 7 {
				x[r.IntN(len(x))] = math.NaN()
			}
			fa, ca, na := run(true, x)
			fg, cg, ng := run(false, x)
			if fmt.Sprint(fa) != fmt.Sprint(fg) { // NaN features print alike
				t.Fatalf("fsd %v trial %d: features %+v with the kernel, %+v in Go", fsd, trial, fa, fg)
			}
			for k := range cg {
				if math.Float64bits(real(ca[k])) != math.Float64bits(real(cg[k])) || math.Float64bits(imag(ca[k])) != math.Float64bits(imag(cg[k])) {
					t.Fatalf("fsd %v trial %d: bin %d %v with the kernel, %v in Go", fsd, trial, k, ca[k], cg[k])
				}
			}
			for l := range ng {
				if math.Float64bits(na[l]) != math.Float64bits(ng[l]) {
					t.Fatalf("fsd %v trial %d: lag %d %v with the kernel, %v in Go", fsd, trial, l, na[l], ng[l])
				}
			}
		}
	}
}
