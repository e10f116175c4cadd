//go:build !(wasm && wasmsimd) || purego

package artwork

func bounds(x []float64, lo, hi float64) (float64, float64) { return boundsGo(x, lo, hi) }
