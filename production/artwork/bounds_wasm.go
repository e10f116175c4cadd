//go:build wasmsimd && !purego

package artwork

// boundsKernel is internal/wasmsimd's bounds, the browser build's SIMD
// kernel: boundsGo over the even and the odd samples of x (n even) in
// two lanes, from lohi[0:2] = (lo, hi), returning lane 0's (lo, hi) in
// lohi[0:2] and lane 1's in lohi[2:4].
//
//go:wasmimport audiopost_simd bounds
//go:noescape
func boundsKernel(x *float64, n int32, lohi *float64)

// useKernel selects the kernel; the kernel test switches it off.
var useKernel = true

// bounds is boundsGo by the kernel. The lanes' results merge as the
// loop would take them, but for which of -0 and +0 came first, which
// the lanes cannot tell: a bound that is a zero is found again in Go.
func bounds(x []float64, lo, hi float64) (float64, float64) {
	m := len(x) &^ 1
	if !useKernel || m == 0 {
		return boundsGo(x, lo, hi)
	}
	r := [4]float64{lo, hi}
	boundsKernel(&x[0], int32(m), &r[0])
	l, h := r[0], r[1]
	if r[2] < l {
		l = r[2]
	}
	if r[3] > h {
		h = r[3]
	}
	l, h = boundsGo(x[m:], l, h)
	if l == 0 || h == 0 {
		return boundsGo(x, lo, hi)
	}
	return l, h
}
