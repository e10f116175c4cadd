package loudness

import (
	"math"
	"math/rand/v2"
	"testing"
)

// peaks3 (the AVX kernel where there is one) is the largest branchPeak of
// the three branches to the bit, whatever the length, on noise, on
// silence (+0 and -0), on one-sided signals and with NaN among the
// samples.
func TestPeaks3IsBranchPeak(t *testing.T) {
	d := NewTruePeakDetector(48000, 1)
	if d.wide == nil {
		t.Fatal("no wide taps at 48 kHz")
	}
	r := rand.New(rand.NewPCG(3, 4))
	signals := map[string]func(i int) float32{
		"noise":    func(int) float32 { return float32(r.NormFloat64() * 0.3) },
		"zeros":    func(int) float32 { return 0 },
		"negzeros": func(int) float32 { return float32(math.Copysign(0, -1)) },
		"positive": func(int) float32 { return float32(r.Float64()) },
		"negative": func(int) float32 { return -float32(r.Float64()) },
		"nan": func(i int) float32 {
			if i%37 == 5 {
				return float32(math.NaN())
			}
			return float32(r.NormFloat64())
		},
	}
	for name, gen := range signals {
		buf := make([]float32, tpHist+tpChunk)
		for i := range buf {
			buf[i] = gen(i)
		}
		for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 100, 511, 512} {
			var want float32
			for p := range d.phases {
				want = max(want, branchPeak(&d.phases[p], buf, n))
			}
			got := peaks3(&d.phases, d.wide, buf, n)
			if math.Float32bits(got) != math.Float32bits(want) {
				t.Errorf("%s, %d outputs: %g (%08x), want %g (%08x)", name, n, got, math.Float32bits(got), want, math.Float32bits(want))
			}
		}
	}
}

// absMax (the AVX2 kernel where there is one) returns absMaxGoBits's bit
// pattern at every length, with NaN, infinities, signed zeros and the
// maximum in any lane.
func TestAbsMaxIsGo(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	special := []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 0, -math.MaxFloat64, 5e-324}
	for trial := range 2000 {
		x := make([]float64, r.IntN(100))
		for i := range x {
			x[i] = r.NormFloat64() * math.Pow(10, float64(r.IntN(10)-5))
			if trial%2 == 0 && r.IntN(25) == 0 {
				x[i] = special[r.IntN(len(special))]
			}
		}
		if got, want := math.Float64bits(absMax(x)), absMaxGoBits(x); got != want {
			t.Fatalf("trial %d, %d values: %016x, want %016x", trial, len(x), got, want)
		}
	}
}

// absMax32 finds what max(peak, abs32(f)) from +0 finds, bit for bit, at
// every length and with infinities, signed zeros and subnormals; with a
// NaN among the values, a NaN.
func TestAbsMax32IsMax(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	special := []float32{float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.Copysign(0, -1)), 0, -math.MaxFloat32, 1e-45, -1e-45}
	for trial := range 2000 {
		x := make([]float32, r.IntN(40))
		nan := false
		for i := range x {
			x[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(10)-5)))
			if trial%2 == 0 && r.IntN(10) == 0 {
				x[i] = special[r.IntN(len(special))]
			}
			if trial%5 == 1 && r.IntN(20) == 0 {
				x[i], nan = float32(math.NaN()), true
			}
		}
		var want float32
		for _, f := range x {
			want = max(want, abs32(f))
		}
		got := absMax32(x)
		if nan {
			if got == got {
				t.Fatalf("trial %d: %g with a NaN among the values", trial, got)
			}
			continue
		}
		if math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("trial %d, %d values: %g (%08x), want %g (%08x)", trial, len(x), got, math.Float32bits(got), want, math.Float32bits(want))
		}
	}
}
