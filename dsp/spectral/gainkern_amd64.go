//go:build !purego

package spectral

import "golang.org/x/sys/cpu"

// useAVX2 selects the AVX2 kernels of gainkern_amd64.s where the
// CPU and the operating system support AVX2.
var useAVX2 = cpu.X86.HasAVX2

//go:noescape
func lsaFirstAVX2(P, noise, prevA, r, gam *float64, n int, over float64, k *[gkCount][4]uint64)

//go:noescape
func lsaRefineAVX2(P, prevA, xi, r, gam *float64, n int, k *[gkCount][4]uint64, tab *float64)

//go:noescape
func presenceProbAVX2(pS, zw, xi, gam *float64, n int, pf float64, k *[gkCount][4]uint64)

//go:noescape
func omLSAAVX2(G, p, lsa *float64, n int, lf, fl float64, k *[gkCount][4]uint64)

//go:noescape
func minStatAVX2(P, cur, curMax, old, oldMax, floor *float64, n int, bias, steady float64)

//go:noescape
func maxOfAVX2(dst, a, b *float64, n int)

//go:noescape
func addRampAVX2(o *float64, n int, st *[4][4]float64, da4, r4 complex128)

//go:noescape
func dotTabsAVX2(x *float64, n int, t *float64, kp int, outR, outI *float64)

//go:noescape
func goertzelAVX2(coef, s1, s2 *float64, n int, ys *float64, ny int)
