//go:build !purego

package dsp

// The SSE2 stereo kernels of biquad_amd64.s. SSE2 is part of the amd64
// baseline, so they need no feature check.

//go:noescape
func stereo1(l, r *float64, n int, coef, z *float64)

//go:noescape
func stereo2(l, r *float64, n int, coef, z *float64)

//go:noescape
func stereo3(l, r *float64, n int, coef, z *float64)

//go:noescape
func stereo4(l, r *float64, n int, coef, z *float64)

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
