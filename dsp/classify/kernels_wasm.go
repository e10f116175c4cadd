//go:build wasmsimd && !purego

package classify

import "unsafe"

//go:wasmimport audiopost_simd mono2
//go:noescape
func mono2Kernel(l, r, mono *float64, n int32)

// mono2 is mono2Go, the leading even number of frames by
// internal/wasmsimd's mono2 kernel, the loop's sums and product lane by
// lane (unless the kernel test switches useKernel off).
func mono2(mono, l, r []float64) {
	m := len(mono) &^ 1
	if useKernel && m > 0 {
		_, _ = l[m-1], r[m-1]
		mono2Kernel(&l[0], &r[0], &mono[0], int32(m))
	} else {
		m = 0
	}
	mono2Go(mono[m:], l[m:], r[m:])
}

// lowPass2Kernel is internal/wasmsimd's antiAlias, the browser build's
// kernel of lowPass2Go: the same recursion in scalar WebAssembly with
// its states in locals, reading and writing the biquads' fields (b0, b1,
// b2, a1, a2, x1, x2, y1, y2, in that order).
//
//go:wasmimport audiopost_simd antiAlias
//go:noescape
func lowPass2Kernel(x *float64, n int32, p, q unsafe.Pointer)

func lowPass2(p, q *biquad, x []float64) {
	if !useKernel || len(x) == 0 {
		lowPass2Go(p, q, x)
		return
	}
	lowPass2Kernel(&x[0], int32(len(x)), unsafe.Pointer(p), unsafe.Pointer(q))
}

// The kernel reads the nine fields in order, y2 the last at 64 bytes.
var _ = [1]struct{}{}[unsafe.Offsetof(biquad{}.y2)-64]

//go:wasmimport audiopost_simd power
//go:noescape
func powerKernel(coef *float64, pow, prefix *float64, half, n int32)

// powerSpectrum is powerSpectrumGo by internal/wasmsimd's power kernel:
// the products in two lanes, their sum and the running sums scalar, in
// order.
func powerSpectrum(pow, prefix []float64, coef []complex128, half int) {
	if !useKernel || len(coef) == 0 {
		powerSpectrumGo(pow, prefix, coef, half)
		return
	}
	_, _ = pow[len(coef)-1], prefix[half+1]
	powerKernel(&(*[2]float64)(unsafe.Pointer(&coef[0]))[0], &pow[0], &prefix[0], int32(half), int32(len(coef)))
}

//go:wasmimport audiopost_simd winSq
//go:noescape
func winSqKernel(x, win, in *float64, n int32, out *float64)

// windowSquares is windowSquaresGo, the leading multiple of four values
// by internal/wasmsimd's winSq kernel (the four sums in the lanes of two
// f64x2), the rest added to the first sum by the loop.
func windowSquares(in, x, win []float64) (e0, e1, e2, e3 float64) {
	m := len(x) &^ 3
	if !useKernel || m == 0 {
		return windowSquaresGo(in, x, win)
	}
	_, _ = in[m-1], win[m-1]
	var out [4]float64
	winSqKernel(&x[0], &win[0], &in[0], int32(m), &out[0])
	e0, e1, e2, e3 = out[0], out[1], out[2], out[3]
	in, win = in[:len(x)], win[:len(x)]
	for i := m; i < len(x); i++ {
		a := x[i] * win[i]
		in[i] = a
		e0 += a * a
	}
	return e0, e1, e2, e3
}
