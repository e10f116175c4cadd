//go:build !(wasm && wasmsimd) || purego

package dsp

func peakFrames(in, ext, need []float64, sp, ceiling float64, noSkip, merge bool) {
	peakFramesGo(in, ext, need, sp, ceiling, noSkip, merge)
}

func scale(d, x, g []float64) { scaleGo(d, x, g) }

func needGain(need []float64, ceiling float64) { needGainGo(need, ceiling) }

func spanMax(x []float64, out []uint64) { spanMaxGo(x, out) }
