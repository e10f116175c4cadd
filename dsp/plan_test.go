package dsp

import (
	"math"
	"math/rand/v2"
	"testing"
)

// ramp and scaleBy (the browser build's SIMD kernels where it has them)
// are rampGo and scaleByGo to the bit, at every length and offset, odd
// ones included.
func TestRampIsGo(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for trial := range 500 {
		x := make([]float64, r.IntN(40))
		for i := range x {
			x[i] = r.NormFloat64()
		}
		if trial%7 == 0 && len(x) > 0 {
			x[r.IntN(len(x))] = math.Copysign(0, -1)
		}
		g0, step := r.Float64()*2, (r.Float64()-0.5)/4800
		off := int64(r.IntN(1 << 20))
		y := append([]float64(nil), x...)
		want := append([]float64(nil), x...)
		rampGo(want, g0, step, off)
		ramp(x, g0, step, off)
		for i := range x {
			if math.Float64bits(x[i]) != math.Float64bits(want[i]) {
				t.Fatalf("%d values, offset %d: value %d is %v, want %v", len(x), off, i, x[i], want[i])
			}
		}
		// And the constant gain between two equal block gains.
		want = append(want[:0], y...)
		scaleByGo(want, g0)
		scaleBy(y, g0)
		for i := range y {
			if math.Float64bits(y[i]) != math.Float64bits(want[i]) {
				t.Fatalf("%d values scaled by %v: value %d is %v, want %v", len(y), g0, i, y[i], want[i])
			}
		}
	}
}
