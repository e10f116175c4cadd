//go:build !(wasm && wasmsimd) || purego

package classify

func lowPass2(p, q *biquad, x []float64) { lowPass2Go(p, q, x) }
