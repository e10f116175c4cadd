//go:build !amd64 || purego

package spectral

const useGainKernels = false

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
