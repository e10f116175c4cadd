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
