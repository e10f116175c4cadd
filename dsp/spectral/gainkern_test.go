package spectral

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestGainKernelsAreGo holds the AVX2 kernels of the gain to the Go
// loops bit for bit, on values spread over the ranges the Denoiser sees
// and past its clamps (a posteriori SNR over 1e4, LSA arguments outside
// the table, likelihoods at and beyond their bounds, gains at 0 and 1).
func TestGainKernelsAreGo(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2 kernels on this platform")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	logU := func(lo, hi float64) float64 { return math.Pow(10, lo+(hi-lo)*rng.Float64()) }
	pick := func(special []float64, other func() float64) float64 {
		if rng.IntN(8) == 0 {
			return special[rng.IntN(len(special))]
		}
		return other()
	}
	vec := func(n int, f func() float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = f()
		}
		return v
	}
	same := func(name string, got, want []float64) {
		t.Helper()
		for i := range want {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("%s[%d] = %v (%#x), Go %v (%#x)", name, i, got[i], math.Float64bits(got[i]), want[i], math.Float64bits(want[i]))
			}
		}
	}
	cp := func(v []float64) []float64 { return append([]float64(nil), v...) }
	for _, n := range []int{4, 5, 7, 64, 1025, 4097} {
		for range 20 {
			P := vec(n, func() float64 { return pick([]float64{0, 1e-300, 1e30}, func() float64 { return logU(-14, 4) }) })
			noise := vec(n, func() float64 { return pick([]float64{0, 1e-40}, func() float64 { return logU(-12, 0) }) })
			prevA := vec(n, func() float64 { return pick([]float64{0}, func() float64 { return logU(-14, 2) }) })
			over := []float64{1, 1.5, 2}[rng.IntN(3)]
			r1, g1 := make([]float64, n), make([]float64, n)
			r2, g2 := make([]float64, n), make([]float64, n)
			lsaFirst(P, noise, prevA, r1, g1, over)
			lsaFirstGo(P, noise, prevA, r2, g2, over)
			same("lsaFirst r", r1, r2)
			same("lsaFirst gam", g1, g2)

			pa1, pa2 := cp(prevA), cp(prevA)
			xi1, xi2 := make([]float64, n), make([]float64, n)
			lsaRefine(P, pa1, xi1, r1, g1)
			lsaRefineGo(P, pa2, xi2, r2, g2)
			same("lsaRefine prevA", pa1, pa2)
			same("lsaRefine xi", xi1, xi2)
			same("lsaRefine r", r1, r2)
			same("lsaRefine gam", g1, g2)
			// Arguments straight at the table's ends and beyond.
			ra := vec(n, func() float64 { return rng.Float64() })
			ga := vec(n, func() float64 {
				return pick([]float64{0, 0x1p-40, 0x1p-24, 0x1p8, 0x1p9, 1e4}, func() float64 { return logU(-9, 4) })
			})
			ra2, ga2 := cp(ra), cp(ga)
			lsaRefine(P, pa1, xi1, ra, ga)
			lsaRefineGo(P, pa2, xi2, ra2, ga2)
			same("lsaRefine edges r", ra, ra2)
			same("lsaRefine edges gam", ga, ga2)

			zs := []float64{0, zetaMin, math.Nextafter(zetaMin, 1), zetaMax, math.Nextafter(zetaMax, 0), 1e-320}
			zl := vec(n, func() float64 { return pick(zs, func() float64 { return logU(-3, 1) }) })
			zw := vec(n, func() float64 { return pick(zs, func() float64 { return logU(-3, 1) }) })
			xi := vec(n, func() float64 { return pick([]float64{xiMin, 1e4}, func() float64 { return logU(-2.5, 4) }) })
			gam := vec(n, func() float64 { return pick([]float64{0, 700, 1e5}, func() float64 { return logU(-6, 3.5) }) })
			pf := []float64{0, 0.3, 1}[rng.IntN(3)]
			p1, p2 := cp(zl), cp(zl)
			presenceProb(p1, zw, xi, gam, pf)
			presenceProbGo(p2, zw, xi, gam, pf)
			same("presenceProb", p1, p2)

			inf := math.Inf(1)
			pw := func() float64 { return pick([]float64{0, inf}, func() float64 { return logU(-12, 2) }) }
			cur, curMax, old, oldMax := vec(n, pw), vec(n, pw), vec(n, pw), vec(n, pw)
			for i := range curMax {
				if rng.IntN(4) == 0 { // a steady tone: the extremes close
					curMax[i], oldMax[i] = cur[i]*3.999, old[i]*4
				}
			}
			c1, c2, m1, m2 := cp(cur), cp(cur), cp(curMax), cp(curMax)
			f1, f2 := make([]float64, n), make([]float64, n)
			minStat(P, c1, m1, old, oldMax, f1)
			minStatGo(P, c2, m2, old, oldMax, f2)
			same("minStat cur", c1, c2)
			same("minStat curMax", m1, m2)
			same("minStat floor", f1, f2)
			maxOf(f1, noise, P)
			maxOfGo(f2, noise, P)
			same("maxOf", f1, f2)

			gmin := []float64{1, 0.3, 0.01, 1e-5}[rng.IntN(4)]
			lf := fastLog2(gmin)
			p := vec(n, func() float64 { return pick([]float64{0, 1}, rng.Float64) })
			g := vec(n, func() float64 { return pick([]float64{0, 1e-7, 1e-6, 1}, func() float64 { return logU(-8, 0) }) })
			G1, G2 := make([]float64, n), make([]float64, n)
			omLSA(G1, p, g, lf, gmin)
			omLSAGo(G2, p, g, lf, gmin)
			same("omLSA", G1, G2)
		}
	}
}

// The gain's per-bin passes over one frame of 1025 bins (48 kHz), with
// the kernels where the platform has them:
//
//	go test -run '^$' -bench GainPasses ./dsp/spectral
func BenchmarkGainPasses(b *testing.B) {
	const n = 1025
	rng := rand.New(rand.NewPCG(3, 4))
	vec := func(lo, hi float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = math.Pow(10, lo+(hi-lo)*rng.Float64())
		}
		return v
	}
	P, noise, prevA := vec(-8, -2), vec(-7, -4), vec(-8, -2)
	r, gam, xi, zw, p := vec(-2, 0), vec(-2, 3), vec(-2, 3), vec(-2, 1), vec(-3, 0)
	cur, curMax, old, oldMax, floor := vec(-8, -2), vec(-8, -2), vec(-8, -2), vec(-8, -2), make([]float64, n)
	G := make([]float64, n)
	// cpu reports the CPU time per frame, the figure to compare on a
	// shared machine.
	cpu := func(b *testing.B, before time.Duration) {
		b.ReportMetric(float64(cpuTime()-before)/float64(b.N), "cpu-ns/op")
	}
	b.Run("lsaFirst", func(b *testing.B) {
		before := cpuTime()
		for b.Loop() {
			lsaFirst(P, noise, prevA, r, gam, 1)
		}
		cpu(b, before)
	})
	b.Run("lsaRefine", func(b *testing.B) {
		pa := append([]float64(nil), prevA...)
		r0, g0 := append([]float64(nil), r...), append([]float64(nil), gam...)
		before := cpuTime()
		for b.Loop() {
			copy(r, r0)
			copy(gam, g0)
			lsaRefine(P, pa, xi, r, gam)
		}
		cpu(b, before)
	})
	b.Run("presenceProb", func(b *testing.B) {
		pS := append([]float64(nil), zw...)
		before := cpuTime()
		for b.Loop() {
			copy(pS, zw)
			presenceProb(pS, zw, xi, gam, 0.7)
		}
		cpu(b, before)
	})
	b.Run("omLSA", func(b *testing.B) {
		before := cpuTime()
		for b.Loop() {
			omLSA(G, p, r, fastLog2(0.1), 0.1)
		}
		cpu(b, before)
	})
	b.Run("minStat", func(b *testing.B) {
		before := cpuTime()
		for b.Loop() {
			minStat(P, cur, curMax, old, oldMax, floor)
		}
		cpu(b, before)
	})
}
