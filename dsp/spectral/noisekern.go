package spectral

// The noise estimates' per-bin and per-unit loops as kernels (the
// Profiler's bin histograms, the network's layers for Static's profile),
// so that amd64 runs them eight floats or four doubles at a time with AVX2
// (noisekern_amd64.s). As the gain's kernels (gainkern.go), each does the
// Go function's operations in the same order without fused multiply-adds,
// so the results are bit-identical (TestNoiseKernelsAreGo).

// binRowsOf sets rows[k], for the bins k of pow from 1 to len(pow)-2, to the
// row of binHist the mean of pow[k-1..k+1] times by3 falls in (see
// countBins); the ends are the caller's.
func binRowsOf(pow []float64, rows []int32, by3 float64) {
	last := len(pow) - 1
	k := 1
	if useAVX2 && last-1 >= 4 {
		g := (last - 1) / 4
		binRowsAVX2(&pow[0], &rows[0], g, by3, binLowLog2, binRowsPerOctave, binRows-1, &gainConsts)
		k += 4 * g
	}
	for ; k < last; k++ {
		rows[k] = int32(binRow((pow[k-1] + pow[k] + pow[k+1]) * by3))
	}
}

// binRow is the row of binHist of a bin's power s (full scale).
func binRow(s float64) int {
	if s > 0 {
		return min(binRows-1, max(0, int((fastLog2(s)-binLowLog2)*binRowsPerOctave)))
	}
	return 0
}
