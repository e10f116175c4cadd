//go:build !(wasm && wasmsimd) || purego

package dsp

func peakFrames(in, ext, need []float64, sp, ceiling float64, noSkip, merge bool) {
	peakFramesGo(in, ext, need, sp, ceiling, noSkip, merge)
}
