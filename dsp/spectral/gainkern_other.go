//go:build !amd64 || purego

package spectral

const useAVX2 = false

func lsaFirstAVX2(P, noise, prevA, r, gam *float64, n int, over float64, k *[gkCount][4]uint64) {
	panic("spectral: no AVX2 kernels")
}

func lsaRefineAVX2(P, prevA, xi, r, gam *float64, n int, k *[gkCount][4]uint64, tab *float64) {
	panic("spectral: no AVX2 kernels")
}

func presenceProbAVX2(pS, zw, xi, gam *float64, n int, pf float64, k *[gkCount][4]uint64) {
	panic("spectral: no AVX2 kernels")
}

func omLSAAVX2(G, p, lsa *float64, n int, lf, fl float64, k *[gkCount][4]uint64) {
	panic("spectral: no AVX2 kernels")
}

func minStatAVX2(P, cur, curMax, old, oldMax, floor *float64, n int, bias, steady float64) {
	panic("spectral: no AVX2 kernels")
}

func maxOfAVX2(dst, a, b *float64, n int) {
	panic("spectral: no AVX2 kernels")
}

func addRampAVX2(o *float64, n int, st *[4][4]float64, da4, r4 complex128) {
	panic("spectral: no AVX2 kernels")
}

func dotTabsAVX2(x *float64, n int, t *float64, kp int, outR, outI *float64) {
	panic("spectral: no AVX2 kernels")
}

func goertzelAVX2(coef, s1, s2 *float64, n int, ys *float64, ny int) {
	panic("spectral: no AVX2 kernels")
}
