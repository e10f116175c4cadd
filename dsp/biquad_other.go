//go:build (!amd64 && !(wasm && wasmsimd)) || purego

package dsp

// Without the SSE2 kernels, run2 uses the Go loops: no section is
// grouped for a kernel, so stereoKernel is never called.
const stereoWidth = 0

func stereoKernel(k int, l, r *float64, n int, coef, z *float64) {
	panic("dsp: no stereo biquad kernel on this platform")
}
