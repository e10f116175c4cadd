//go:build wasmsimd && !purego

package dsp

// rampKernel is internal/wasmsimd's ramp, the browser build's SIMD
// kernel: rampGo's arithmetic on two values at a time, for even n.
//
//go:wasmimport audiopost_simd ramp
//go:noescape
func rampKernel(x *float64, n int32, g0, step, off float64)

// ramp is rampGo, the leading even number of values by the kernel
// (off+j is exact in a float64 below 2^53 frames).
func ramp(x []float64, g0, step float64, off int64) {
	m := len(x) &^ 1
	if m > 0 {
		rampKernel(&x[0], int32(m), g0, step, float64(off))
	}
	rampGo(x[m:], g0, step, off+int64(m))
}

// scaleByKernel is internal/wasmsimd's scaleBy: scaleByGo's products two
// at a time, for even n.
//
//go:wasmimport audiopost_simd scaleBy
//go:noescape
func scaleByKernel(x *float64, n int32, g float64)

// scaleBy is scaleByGo, the leading even number of values by the kernel.
func scaleBy(x []float64, g float64) {
	m := len(x) &^ 1
	if m > 0 {
		scaleByKernel(&x[0], int32(m), g)
	}
	scaleByGo(x[m:], g)
}
