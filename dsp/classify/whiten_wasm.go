//go:build wasmsimd && !purego

package classify

import "unsafe"

// useKernel is true in the browser build, whose kernels (internal/wasmsimd's
// whiten and normalise) take the place of whiten_amd64.s's: the same
// operations per lane, two bins at a time. The kernel test switches it off
// to compare with the Go loops.
var useKernel = true

// out is the complex128 bins as (real, imaginary) pairs.
//
//go:wasmimport audiopost_simd whiten
//go:noescape
func whitenKernel(hiP, loP, pow, taper *float64, w int32, out *float64, n int32)

//go:wasmimport audiopost_simd normalise
//go:noescape
func normaliseKernel(ac, rw, nac, r0 *float64, n int32)

// whitenInterior runs the whitening of bins [k0, k1), all with the full
// window of half-width wk, by the kernel in pairs, and returns the first
// bin it left to the caller.
func (s *spectral) whitenInterior(k0, k1, wk int) int {
	n := (k1 - k0) &^ 1
	if !useKernel || n == 0 {
		return k0
	}
	_ = s.prefix[k0+n-1+wk+1]
	_ = s.acCoef[k0+n-1]
	_ = s.pow[k0+n-1]
	_ = s.taper[k0+n-1]
	whitenKernel(&s.prefix[k0+wk+1], &s.prefix[k0-wk], &s.pow[k0], &s.taper[k0], int32(2*wk+1), &(*[2]float64)(unsafe.Pointer(&s.acCoef[k0]))[0], int32(n))
	return k0 + n
}

// normalise sets nac[l] = ac[l] / (r0 * rw[l]) for l in [l0, l1): the
// kernel in pairs, then the rest in Go.
func normalise(nac, ac, rw []float64, r0 float64, l0, l1 int) {
	l := l0
	if n := (l1 - l0) &^ 1; useKernel && n > 0 {
		_, _, _ = nac[l0+n-1], ac[l0+n-1], rw[l0+n-1]
		normaliseKernel(&ac[l0], &rw[l0], &nac[l0], &r0, int32(n))
		l += n
	}
	for ; l < l1; l++ {
		nac[l] = ac[l] / (r0 * rw[l])
	}
}
