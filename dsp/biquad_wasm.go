//go:build wasmsimd && !purego

package dsp

// The stereo kernels of the browser build: internal/wasmsimd writes them
// as WebAssembly SIMD, the operations of biquad_amd64.s in their order,
// and the page gives them to the engine under this import module. Blocks
// are far below 2^31 frames (the engine reads a few thousand at a time).

//go:wasmimport audiopost_simd stereo1
//go:noescape
func stereo1Wasm(l, r *float64, n int32, coef, z *float64)

//go:wasmimport audiopost_simd stereo2
//go:noescape
func stereo2Wasm(l, r *float64, n int32, coef, z *float64)

//go:wasmimport audiopost_simd stereo3
//go:noescape
func stereo3Wasm(l, r *float64, n int32, coef, z *float64)

//go:wasmimport audiopost_simd stereo4
//go:noescape
func stereo4Wasm(l, r *float64, n int32, coef, z *float64)

func stereo1(l, r *float64, n int, coef, z *float64) { stereo1Wasm(l, r, int32(n), coef, z) }
func stereo2(l, r *float64, n int, coef, z *float64) { stereo2Wasm(l, r, int32(n), coef, z) }
func stereo3(l, r *float64, n int, coef, z *float64) { stereo3Wasm(l, r, int32(n), coef, z) }
func stereo4(l, r *float64, n int, coef, z *float64) { stereo4Wasm(l, r, int32(n), coef, z) }
