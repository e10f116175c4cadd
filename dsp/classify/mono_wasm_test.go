//go:build wasmsimd && !purego

package classify

import (
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
