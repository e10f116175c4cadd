//go:build wasmsimd && !purego

package classify

import "unsafe"

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
