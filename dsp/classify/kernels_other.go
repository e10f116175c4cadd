//go:build !(wasm && wasmsimd) || purego

package classify

func mono2(mono, l, r []float64) { mono2Go(mono, l, r) }

func lowPass2(p, q *biquad, x []float64) { lowPass2Go(p, q, x) }

func powerSpectrum(pow, prefix []float64, coef []complex128, half int) {
	powerSpectrumGo(pow, prefix, coef, half)
}

func windowSquares(in, x, win []float64) (e0, e1, e2, e3 float64) { return windowSquaresGo(in, x, win) }
