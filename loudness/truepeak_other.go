//go:build (!amd64 && !(wasm && wasmsimd)) || purego

package loudness

// peaks3 returns the largest of branchPeak over the three branches of t
// for the n outputs whose windows end at buf[tpHist..tpHist+n).
func peaks3(t *[3][tpTaps]float32, _ *[3][tpTaps][8]float32, buf []float32, n int) float32 {
	var peak float32
	for p := range t {
		peak = max(peak, branchPeak(&t[p], buf, n))
	}
	return peak
}

// absMaxBits is absMaxGoBits.
func absMaxBits(x []float64) uint64 { return absMaxGoBits(x) }
