//go:build !(wasm && wasmsimd) || purego

package dsp

func ramp(x []float64, g0, step float64, off int64) { rampGo(x, g0, step, off) }

func scaleBy(x []float64, g float64) { scaleByGo(x, g) }

func levels2(l, r []float64) (sl, sr, peak float64) { return levels2Go(l, r) }
