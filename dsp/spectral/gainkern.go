package spectral

import "math"

// The per-bin passes of the Denoiser's gain (gain, presence) as functions
// over whole frames, so that amd64 can run them four bins at a time with
// AVX2 (gainkern_amd64.s). The kernels do the Go functions' operations in
// the same order, without fused multiply-adds, so their results are
// bit-identical to the Go loops here (TestGainKernelsAreGo); the Go
// functions run the frame's last bins and on every other platform.

// lsaFirst is the first step of the LSA gain of every bin against the
// noise times over (no reverberation, no fixed inverse): r gets
// xi/(1+xi) of the decision-directed a priori SNR, gam the a posteriori
// SNR.
func lsaFirst(P, noise, prevA, r, gam []float64, over float64) {
	m := 0
	if useAVX2 && len(P) >= 4 {
		m = len(P) &^ 3
		_, _, _, _ = noise[m-1], prevA[m-1], r[m-1], gam[m-1]
		lsaFirstAVX2(&P[0], &noise[0], &prevA[0], &r[0], &gam[0], m, over, &gainConsts)
	}
	lsaFirstGo(P[m:], noise[m:], prevA[m:], r[m:], gam[m:], over)
}

func lsaFirstGo(P, noise, prevA, r, gam []float64, over float64) {
	noise, prevA, r, gam = noise[:len(P)], prevA[:len(P)], r[:len(P)], gam[:len(P)]
	for k, v := range P {
		il := 1 / max(noise[k]*over, 1e-30)
		gamma := min(v*il, 1e4)
		xi := max(ddAlpha*prevA[k]*il+(1-ddAlpha)*max(gamma-1, 0), xiMin)
		r[k] = xi / (1 + xi)
		gam[k] = gamma
	}
}

// lsaRefine takes the first step's r = xi/(1+xi) and a posteriori SNR
// gam of every bin through the first LSA gain (stored as the
// decision-directed amplitude in prevA) to the refined a priori SNR (xi)
// and its LSA gain (r), and leaves v = xi gamma/(1+xi) of the refined xi
// in gam.
func lsaRefine(P, prevA, xi, r, gam []float64) {
	m := 0
	if useAVX2 && len(P) >= 4 {
		m = len(P) &^ 3
		_, _, _, _ = prevA[m-1], xi[m-1], r[m-1], gam[m-1]
		lsaRefineAVX2(&P[0], &prevA[0], &xi[0], &r[0], &gam[0], m, &gainConsts, &lsaTab[0])
	}
	lsaRefineGo(P[m:], prevA[m:], xi[m:], r[m:], gam[m:])
}

func lsaRefineGo(P, prevA, xiA, gA, vA []float64) {
	prevA, xiA, gA, vA = prevA[:len(P)], xiA[:len(P)], gA[:len(P)], vA[:len(P)]
	// Short passes over the bins, so that the processor overlaps many
	// bins' divisions and table lookups instead of waiting on one bin's
	// long chain of them.
	for k, v := range P {
		r1, gamma := gA[k], vA[k]
		g1 := lsaGainR(r1, r1*gamma)
		prevA[k] = g1 * g1 * v
		// Two-step refinement (Plapous et al., 2006): the a priori SNR
		// from this frame's first gain, which removes the one-frame lag
		// of the decision-directed estimate at speech onsets.
		xi := max(g1*g1*gamma, xiMin)
		xiA[k] = xi
		gA[k] = xi / (1 + xi)
	}
	for k, r2 := range gA {
		v := r2 * vA[k]
		vA[k] = v
		gA[k] = lsaGainR(r2, v)
	}
}

// presenceProb sets pS to the speech presence probability of every bin
// from its local (pS) and wide (zw) averages of the smoothed a priori SNR,
// the frame's likelihood pf, the a priori SNR xi and v (gam).
func presenceProb(pS, zw, xi, gam []float64, pf float64) {
	m := 0
	if useAVX2 && len(pS) >= 4 {
		m = len(pS) &^ 3
		_, _, _ = zw[m-1], xi[m-1], gam[m-1]
		presenceProbAVX2(&pS[0], &zw[0], &xi[0], &gam[0], m, pf, &gainConsts)
	}
	presenceProbGo(pS[m:], zw[m:], xi[m:], gam[m:], pf)
}

func presenceProbGo(pS, zw, xi, gam []float64, pf float64) {
	zw, xi, gam = zw[:len(pS)], xi[:len(pS)], gam[:len(pS)]
	for k, zl := range pS {
		q := 1 - zetaLikelihood(zl)*zetaLikelihood(zw[k])*pf
		q = min(q, qMax)
		// p = 1 / (1 + q/(1-q) (1+xi) exp(-v)), v = xi gamma/(1+xi).
		pS[k] = (1 - q) / (1 - q + q*(1+xi[k])*fastExpNeg(min(gam[k], 700)))
	}
}

// omLSA sets G to the OM-LSA gain of every bin (Cohen and Berdugo, 2001):
// the LSA gain g where speech is present (probability p), the floor fl
// (log2 lf) where it is absent, geometrically weighted, held within fl
// and 1.
func omLSA(G, p, g []float64, lf, fl float64) {
	m := 0
	if useAVX2 && len(G) >= 4 {
		m = len(G) &^ 3
		_, _ = p[m-1], g[m-1]
		omLSAAVX2(&G[0], &p[0], &g[0], m, lf, fl, &gainConsts)
	}
	omLSAGo(G[m:], p[m:], g[m:], lf, fl)
}

func omLSAGo(G, p, g []float64, lf, fl float64) {
	p, g = p[:len(G)], g[:len(G)]
	for k := range G {
		y := fastExp2Neg(-(p[k]*fastLog2(max(g[k], 1e-6)) + (1-p[k])*lf))
		G[k] = min(max(y, fl), 1)
	}
}

// minStat takes each bin's power P into the minimum and maximum of the
// sub-window being filled (cur, curMax), and sets floor to msBias times
// the minimum over the whole window (cur and old), or 0 where the maximum
// over it (curMax and oldMax) stays within msSteady of it: a steady tone,
// not noise.
func minStat(P, cur, curMax, old, oldMax, floor []float64) {
	m := 0
	if useAVX2 && len(P) >= 4 {
		m = len(P) &^ 3
		_, _, _, _, _ = cur[m-1], curMax[m-1], old[m-1], oldMax[m-1], floor[m-1]
		minStatAVX2(&P[0], &cur[0], &curMax[0], &old[0], &oldMax[0], &floor[0], m, msBias, msSteady)
	}
	minStatGo(P[m:], cur[m:], curMax[m:], old[m:], oldMax[m:], floor[m:])
}

func minStatGo(P, cur, curMax, old, oldMax, floor []float64) {
	cur, curMax, old, oldMax, floor = cur[:len(P)], curMax[:len(P)], old[:len(P)], oldMax[:len(P)], floor[:len(P)]
	for k, v := range P {
		c, cm := min(cur[k], v), max(curMax[k], v)
		cur[k], curMax[k] = c, cm
		m, M := min(c, old[k]), max(cm, oldMax[k])
		f := msBias * m
		if M < msSteady*m {
			f = 0 // a steady tone, not noise
		}
		floor[k] = f
	}
}

// maxOf sets dst to the larger of a and b in every bin.
func maxOf(dst, a, b []float64) {
	m := 0
	if useAVX2 && len(dst) >= 4 {
		m = len(dst) &^ 3
		_, _ = a[m-1], b[m-1]
		maxOfAVX2(&dst[0], &a[0], &b[0], m)
	}
	maxOfGo(dst[m:], a[m:], b[m:])
}

func maxOfGo(dst, a, b []float64) {
	a, b = a[:len(dst)], b[:len(dst)]
	for k, v := range a {
		dst[k] = max(v, b[k])
	}
}

// gainConsts are the kernels' constants, each four times (a 256-bit
// operand): the Go functions' constants as Go rounds them, and bit
// patterns. The indices are gainkern_amd64.s's.
var gainConsts = func() (c [gkCount][4]uint64) {
	f := func(i int, v float64) {
		for j := range c[i] {
			c[i][j] = math.Float64bits(v)
		}
	}
	u := func(i int, v uint64) {
		for j := range c[i] {
			c[i][j] = v
		}
	}
	f(gkOne, 1)
	f(gkTiny, 1e-30)
	f(gkGammaMax, 1e4)
	f(gkAlpha, ddAlpha)
	f(gkOneMinusAlpha, 1-ddAlpha)
	f(gkXiMin, xiMin)
	f(gkVLo, 0x1p-24)
	f(gkVHi, 0x1p8)
	f(gk64, 64)
	for i, v := range []float64{1.442534780438465, -0.7180336024961036, 0.4571581761265691, -0.27734175556445734, 0.12147304763729296, -0.025792378518728443} {
		f(gkLog2C1+i, v)
	}
	f(gkExpBias, 1<<52+1023)
	for i, v := range []float64{-0.6931471805599453, 0.2402265069591007, -0.05550410866482158, 0.009618129107628477, -0.0013333558146428443} {
		f(gkExp2C1+i, v)
	}
	f(gk1022, 1022)
	f(gkLog2E, 1.4426950408889634)
	f(gk700, 700)
	f(gkZetaMin, zetaMin)
	f(gkZetaMax, zetaMax)
	f(gkZetaLog2Min, zetaLog2Min)
	f(gkZetaInvSpan, zetaInvSpan)
	f(gkQMax, qMax)
	f(gkGFloor, 1e-6)
	u(gkMant46, 1<<lsaMantSh-1)
	u(gkLsaOff, (1023+lsaLo)*lsaPerOct)
	u(gkMant52, 1<<52-1)
	u(gkOneBits, 1023<<52)
	u(gkMagic52, 0x4330000000000000) // 2^52
	u(gk1023, 1023)
	u(gkSign, 1<<63)
	return c
}()

// Indices of gainConsts.
const (
	gkOne = iota
	gkTiny
	gkGammaMax
	gkAlpha
	gkOneMinusAlpha
	gkXiMin
	gkVLo
	gkVHi
	gk64
	gkLog2C1
	gkLog2C2
	gkLog2C3
	gkLog2C4
	gkLog2C5
	gkLog2C6
	gkExpBias
	gkExp2C1
	gkExp2C2
	gkExp2C3
	gkExp2C4
	gkExp2C5
	gk1022
	gkLog2E
	gk700
	gkZetaMin
	gkZetaMax
	gkZetaLog2Min
	gkZetaInvSpan
	gkQMax
	gkGFloor
	gkMant46
	gkLsaOff
	gkMant52
	gkOneBits
	gkMagic52
	gk1023
	gkSign
	gkCount
)
