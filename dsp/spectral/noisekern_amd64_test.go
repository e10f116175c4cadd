//go:build !purego

package spectral

import (
	"math"
	"testing"

	"github.com/audiopost/audiopost/audio/audiotest"
)

// binRowsOf gives the same rows with the AVX2 kernel as with the Go loop,
// on spectra with empty bins, bins at the histogram's ends and beyond, and
// lengths that leave bins to the Go loop.
func TestNoiseKernelsAreGo(t *testing.T) {
	if !useAVX2 {
		t.Skip("the CPU has no AVX2")
	}
	defer func(u bool) { useAVX2 = u }(useAVX2)
	r := audiotest.NewRand(5)
	n := FFTSize(fs)
	by3 := 4 / float64(n) / float64(n) / 3
	for _, bins := range []int{6, 7, 10, 513, n/2 + 1} {
		pow := make([]float64, bins)
		want, got := make([]int32, bins), make([]int32, bins)
		for trial := range 200 {
			for k := range pow {
				switch v := r.Uniform(); {
				case v < 0.1:
					pow[k] = 0
				case v < 0.2:
					pow[k] = math.Ldexp(r.Uniform(), -1000) // under the lowest row
				case v < 0.3:
					pow[k] = math.Ldexp(r.Uniform(), 40) // over the highest
				default:
					pow[k] = math.Exp(r.Uniform()*60-30) * float64(n) * float64(n)
				}
			}
			useAVX2 = false
			binRowsOf(pow, want, by3)
			useAVX2 = true
			binRowsOf(pow, got, by3)
			for k := 1; k < bins-1; k++ {
				if got[k] != want[k] {
					t.Fatalf("%d bins, trial %d, bin %d: row %d with the kernel, %d without", bins, trial, k, got[k], want[k])
				}
			}
		}
	}
}

// The Go loops of the batched forward pass give band's gains too.
func TestIsoBatchGoIsBand(t *testing.T) {
	defer func(u bool) { useAVX2 = u }(useAVX2)
	useAVX2 = false
	checkBatchIsBand(t)
}

// The layer kernel is the Go loop on rows wider than its 48 bands, as the
// network's would be with more bands.
func TestDenseTanhKernelStride(t *testing.T) {
	if !useAVX2 {
		t.Skip("the CPU has no AVX2")
	}
	const nb, nin, nout = 96, 13, 5
	r := audiotest.NewRand(7)
	rnd := func(n int, s float64) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.Float() * s)
		}
		return v
	}
	w, bias, x := rnd(nout*nin, 1), rnd(nout, 1), rnd(nin*nb, 3)
	want, got := make([]float32, nout*nb), make([]float32, nout*nb)
	denseTanhGo(w, bias, x, want, nb, 0, nb)
	for b0 := 0; b0 < nb; b0 += 48 {
		denseTanh48AVX2(&w[0], &bias[0], &x[b0], &got[b0], nin, nout, 4*nb, &isoTanhK)
	}
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("unit %d band %d: %v with the kernel, %v without", i/nb, i%nb, got[i], want[i])
		}
	}
}
