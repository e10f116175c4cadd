//go:build wasmsimd && !purego

package dsp

// limPeaksKernel is internal/wasmsimd's limPeaks, the browser build's
// SIMD kernel: peakFramesGo's arithmetic on two frames at a time, for
// even n (flags: 1 noSkip, 2 merge; consts: tpCentre[0], tpCentre[1],
// sp, ceiling). The floats go through memory: passed as f64 parameters
// after the i32 ones, they arrived wrong from Go 1.26's wasmimport calls.
//
//go:wasmimport audiopost_simd limPeaks
//go:noescape
func limPeaksKernel(in, ext, need *float64, n int32, phases *float64, flags int32, consts *float64)

// peakFrames is peakFramesGo, the leading even number of frames by the
// kernel.
func peakFrames(in, ext, need []float64, sp, ceiling float64, noSkip, merge bool) {
	m := len(need) &^ 1
	if m > 0 {
		_, _ = in[m-1], ext[m-1+tpTaps-1]
		var flags int32
		if noSkip {
			flags |= 1
		}
		if merge {
			flags |= 2
		}
		consts := [4]float64{tpCentre[0], tpCentre[1], sp, ceiling}
		limPeaksKernel(&in[0], &ext[0], &need[0], int32(m), &tpPhases[0][0], flags, &consts[0])
	}
	if m < len(need) {
		peakFramesGo(in[m:], ext[m:], need[m:], sp, ceiling, noSkip, merge)
	}
}

// mulToKernel and needGainKernel are internal/wasmsimd's mulTo and
// needGain: scaleGo's products and needGainGo's quotients two at a time,
// for even n.
//
//go:wasmimport audiopost_simd mulTo
//go:noescape
func mulToKernel(d, x, g *float64, n int32)

//go:wasmimport audiopost_simd needGain
//go:noescape
func needGainKernel(need *float64, n int32, ceiling float64)

// scale is scaleGo, the leading even number of values by the kernel.
func scale(d, x, g []float64) {
	m := len(d) &^ 1
	if m > 0 {
		_, _ = x[m-1], g[m-1]
		mulToKernel(&d[0], &x[0], &g[0], int32(m))
	}
	scaleGo(d[m:], x[m:len(d)], g[m:len(d)])
}

// needGain is needGainGo, the leading even number of values by the
// kernel.
func needGain(need []float64, ceiling float64) {
	m := len(need) &^ 1
	if m > 0 {
		needGainKernel(&need[0], int32(m), ceiling)
	}
	needGainGo(need[m:], ceiling)
}

// spanMaxKernel is internal/wasmsimd's spanMax: spanMaxGo's maxima, two
// values at a time, for spans stretches of skipSpan (64) values.
//
//go:wasmimport audiopost_simd spanMax
//go:noescape
func spanMaxKernel(x *float64, spans int32, out *uint64)

// spanMax is spanMaxGo by the kernel, one call per block.
func spanMax(x []float64, out []uint64) {
	if len(out) == 0 {
		return
	}
	_ = x[len(out)*skipSpan-1]
	spanMaxKernel(&x[0], int32(len(out)), &out[0])
}
