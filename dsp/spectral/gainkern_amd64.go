//go:build !purego

package spectral

import "golang.org/x/sys/cpu"

// useGainKernels selects the AVX2 kernels of gainkern_amd64.s where the
// CPU and the operating system support AVX2.
var useGainKernels = cpu.X86.HasAVX2

//go:noescape
func lsaFirstAVX2(P, noise, prevA, r, gam *float64, n int, over float64, k *[gkCount][4]uint64)

//go:noescape
func lsaRefineAVX2(P, prevA, xi, r, gam *float64, n int, k *[gkCount][4]uint64, tab *float64)

//go:noescape
func presenceProbAVX2(pS, zw, xi, gam *float64, n int, pf float64, k *[gkCount][4]uint64)

//go:noescape
func omLSAAVX2(G, p, lsa *float64, n int, lf, fl float64, k *[gkCount][4]uint64)
