package dsp

import (
	"math"
	"math/rand/v2"
	"testing"
)

// pow10 is math.Pow(10, y) to the bit: gains of every size, integers and
// halves, the special values, and exponents past overflow and underflow.
func TestPow10IsPow(t *testing.T) {
	ys := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, -0.5, 1.5, -1.5, 2, -2, 0.49999999999999994, 0.5000000000000001,
		-0.49999999999999994, -0.5000000000000001, 0.9999999999999999, -0.9999999999999999, 0.75, -0.75, 1e-300, -1e-300,
		math.NaN(), math.Inf(1), math.Inf(-1), 307, 308, 309, -307, -323, -324, -400, 1e300, -1e300, 1 << 62, 1 << 63, -(1 << 63), 5e-324, -5e-324}
	r := rand.New(rand.NewPCG(15, 16))
	for range 200000 {
		ys = append(ys, (r.Float64()-0.5)*8, (r.Float64()-0.5)*700, float64(r.IntN(80)-40)/20, r.NormFloat64()*1e-6)
	}
	for _, y := range ys {
		got, want := pow10(y), math.Pow(10, y)
		if math.Float64bits(got) != math.Float64bits(want) && !(math.IsNaN(got) && math.IsNaN(want)) {
			t.Fatalf("pow10(%v) = %v (%016x), math.Pow %v (%016x)", y, got, math.Float64bits(got), want, math.Float64bits(want))
		}
	}
}

func BenchmarkDBToGain(b *testing.B) {
	db, s := -7.3, 0.0
	for b.Loop() {
		s += DBToGain(db)
		db -= 1e-9
	}
	_ = s
}
