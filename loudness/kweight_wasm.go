//go:build wasmsimd && !purego

package loudness

// The stereo K-weighting kernels of the browser build: internal/wasmsimd
// writes them as WebAssembly SIMD, the operations of kweight_amd64.s in
// their order, and the page gives them to the engine under this import
// module. Blocks are far below 2^31 frames.

//go:wasmimport audiopost_simd kstereo
//go:noescape
func kstereoWasm(l, r *float64, n int32, coef, state, sums *float64)

//go:wasmimport audiopost_simd kstereoSq
//go:noescape
func kstereoSqWasm(l, r *float64, n int32, coef, state, sums, sq *float64)

func kstereo(l, r *float64, n int, coef, state, sums *float64) {
	kstereoWasm(l, r, int32(n), coef, state, sums)
}

func kstereoSq(l, r *float64, n int, coef, state, sums, sq *float64) {
	kstereoSqWasm(l, r, int32(n), coef, state, sums, sq)
}
