//go:build wasmsimd && !purego

package dsp

import "math"

// levels2Kernel is internal/wasmsimd's levels2: levels2Go's sums and
// maxima with the two channels in the two lanes of a frame.
//
//go:wasmimport audiopost_simd levels2
//go:noescape
func levels2Kernel(l, r *float64, n int32, out *float64)

// levels2 is levels2Go by the kernel (the Analyzer's stretches run to
// the end of a hop, a few hundred frames a call).
func levels2(l, r []float64) (sl, sr, peak float64) {
	if len(l) < 16 {
		return levels2Go(l, r)
	}
	_ = r[len(l)-1]
	var out [4]float64
	levels2Kernel(&l[0], &r[0], int32(len(l)), &out[0])
	return out[0], out[1], math.Float64frombits(max(math.Float64bits(out[2]), math.Float64bits(out[3])))
}
