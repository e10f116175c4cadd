//go:build wasmsimd && !purego

package artwork

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The browser build's waveform kernel gives boundsGo's bounds to the
// bit: noise, signed zeros first in either order, NaNs and infinities,
// odd and even lengths, from open and from earlier bounds.
func TestBoundsKernelIsGo(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	negZero := math.Copysign(0, -1)
	starts := [][2]float64{{math.Inf(1), math.Inf(-1)}, {0, 0}, {negZero, negZero}, {-0.1, 0.1}}
	for trial := range 400 {
		x := make([]float64, r.IntN(40))
		for i := range x {
			switch r.IntN(8) {
			case 0:
				x[i] = 0
			case 1:
				x[i] = negZero
			case 2:
				x[i] = math.NaN()
			case 3:
				x[i] = math.Inf(1 - 2*r.IntN(2))
			default:
				x[i] = r.NormFloat64() * 0.1
			}
		}
		if trial%3 == 0 {
			for i := range x {
				x[i] = []float64{0, negZero}[r.IntN(2)]
			}
		}
		for _, s := range starts {
			gl, gh := boundsGo(x, s[0], s[1])
			kl, kh := bounds(x, s[0], s[1])
			if math.Float64bits(gl) != math.Float64bits(kl) || math.Float64bits(gh) != math.Float64bits(kh) {
				t.Fatalf("trial %d from %v: %v by the kernel, %v in Go (x %v)", trial, s, [2]float64{kl, kh}, [2]float64{gl, gh}, x)
			}
		}
	}
	// The kernel ran: without the zero fallback its lanes differ here.
	x := []float64{negZero, 0, 0, 0}
	r2 := [4]float64{math.Inf(1), math.Inf(-1)}
	boundsKernel(&x[0], 4, &r2[0])
	if !math.Signbit(r2[0]) || math.Signbit(r2[2]) {
		t.Errorf("lanes' lows %v and %v, want -0 (even samples) and +0 (odd)", r2[0], r2[2])
	}
}
