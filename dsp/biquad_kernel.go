//go:build !purego && (amd64 || (wasm && wasmsimd))

package dsp

// stereoWidth is the most sections one kernel call runs.
const stereoWidth = 4

// stereoKernel runs the kernel for k sections. Direct calls (not a table
// of func values) let escape analysis keep the caller's state on the
// stack.
func stereoKernel(k int, l, r *float64, n int, coef, z *float64) {
	switch k {
	case 1:
		stereo1(l, r, n, coef, z)
	case 2:
		stereo2(l, r, n, coef, z)
	case 3:
		stereo3(l, r, n, coef, z)
	default:
		stereo4(l, r, n, coef, z)
	}
}
