//go:build !(wasm && wasmsimd) || purego

package classify

func mono2(mono, l, r []float64) { mono2Go(mono, l, r) }
