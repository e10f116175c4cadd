//go:build wasmsimd && !purego

package loudness

// The true-peak kernels of the browser build: internal/wasmsimd writes
// them as WebAssembly SIMD (four lanes where truepeak_amd64.s has
// eight), each output the Go loop's sum in its order, and the page gives
// them to the engine under this import module.

//go:wasmimport audiopost_simd peaks3
//go:noescape
func peaks3Wasm(wide *float32, buf *float32, n int32, hilo *float32)

//go:wasmimport audiopost_simd absMax
//go:noescape
func absMaxWasm(x *float64, n int32, out *uint64)

// absMaxBits is absMaxGo's integer maximum, the leading even number of
// values by the kernel.
func absMaxBits(x []float64) uint64 {
	m := 0
	var k uint64
	if len(x) >= 8 {
		m = len(x) &^ 1
		var out [2]uint64
		absMaxWasm(&x[0], int32(m), &out[0])
		k = max(out[0], out[1])
	}
	return max(k, absMaxGoBits(x[m:]))
}

// peaks3 returns the largest of branchPeak over the three branches of
// taps for the n outputs whose windows end at buf[tpHist..tpHist+n): the
// kernel for whole groups of four, branchPeak for the rest. Every output
// is branchPeak's to the bit and the extremes are the same values (+0 or
// beyond, no NaN), so the result is too.
func peaks3(t *[3][tpTaps]float32, wide *[3][tpTaps][8]float32, buf []float32, n int) float32 {
	var peak float32
	m := 0
	if n >= 4 {
		m = n &^ 3
		_ = buf[m-1+tpTaps-1]
		var hilo [8]float32 // +0: branchPeak's starting extremes
		peaks3Wasm(&wide[0][0][0], &buf[0], int32(m), &hilo[0])
		var hi, lo float32
		for i := range 4 {
			if hilo[i] > hi {
				hi = hilo[i]
			}
			if hilo[4+i] < lo {
				lo = hilo[4+i]
			}
		}
		peak = max(hi, -lo)
	}
	if m < n {
		for p := range t {
			peak = max(peak, branchPeak(&t[p], buf[m:], n-m))
		}
	}
	return peak
}
