//go:build !purego

package classify

import "golang.org/x/sys/cpu"

// useKernel selects the kernels of whiten_amd64.s where the CPU and the
// operating system support AVX.
var useKernel = cpu.X86.HasAVX

//go:noescape
func whitenAVX(hiP, loP, pow, taper *float64, w float64, out *complex128, n int)

//go:noescape
func normaliseAVX(ac, rw, nac *float64, r0 float64, n int)

// whitenInterior runs the whitening of bins [k0, k1), all with the full
// window of half-width wk, by the AVX kernel in groups of four, and
// returns the first bin it left to the caller.
func (s *spectral) whitenInterior(k0, k1, wk int) int {
	n := (k1 - k0) &^ 3
	if !useKernel || n == 0 {
		return k0
	}
	_ = s.prefix[k0+n-1+wk+1]
	_ = s.acCoef[k0+n-1]
	_ = s.pow[k0+n-1]
	_ = s.taper[k0+n-1]
	whitenAVX(&s.prefix[k0+wk+1], &s.prefix[k0-wk], &s.pow[k0], &s.taper[k0], float64(2*wk+1), &s.acCoef[k0], n)
	return k0 + n
}

// normalise sets nac[l] = ac[l] / (r0 * rw[l]) for l in [l0, l1): the
// AVX kernel in groups of four, then the rest in Go.
func normalise(nac, ac, rw []float64, r0 float64, l0, l1 int) {
	l := l0
	if n := (l1 - l0) &^ 3; useKernel && n > 0 {
		_, _, _ = nac[l0+n-1], ac[l0+n-1], rw[l0+n-1]
		normaliseAVX(&ac[l0], &rw[l0], &nac[l0], r0, n)
		l += n
	}
	for ; l < l1; l++ {
		nac[l] = ac[l] / (r0 * rw[l])
	}
}
