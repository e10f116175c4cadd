package loudness

import "math"

// The gating histograms replace the list of all blocks that a direct
// implementation of BS.1770 keeps: memory stays fixed however long the
// programme. Each bin keeps the count and the exact energy sum of its
// blocks, so a mean over whole bins is exact; only blocks in the one bin
// that straddles a relative threshold are apportioned, which bounds the
// error of the integrated loudness far below 0.01 LU.
const (
	histLow   = -150.0 // LUFS, lower edge of bin 0
	histHigh  = 50.0   // LUFS; louder blocks go to the top bin
	histWidth = 0.01   // LU per bin
	histBins  = int((histHigh - histLow) / histWidth)
	// silenceFloor separates digital silence (and dither-free fades) from
	// any real noise floor in the level statistics.
	silenceFloor = -120.0
	absoluteGate = -70.0
)

type histogram struct {
	count []int64
	sum   []float64
	// zero counts blocks of exactly zero energy, which have no bin.
	zero int64
	n    int64
}

func newHistogram() *histogram {
	return &histogram{count: make([]int64, histBins), sum: make([]float64, histBins)}
}

func (h *histogram) reset() {
	clear(h.count)
	clear(h.sum)
	h.zero, h.n = 0, 0
}

// merge adds the blocks of o.
func (h *histogram) merge(o *histogram) {
	for i := range h.count {
		h.count[i] += o.count[i]
		h.sum[i] += o.sum[i]
	}
	h.zero += o.zero
	h.n += o.n
}

// binOf returns the bin of loudness l.
func binOf(l float64) int {
	i := int(math.Floor((l - histLow) / histWidth))
	return min(max(i, 0), histBins-1)
}

// binLow returns the lower edge of bin i in LUFS.
func binLow(i int) float64 { return histLow + float64(i)*histWidth }

// add records a block of channel-weighted mean square e.
func (h *histogram) add(e float64) {
	h.n++
	if e <= 0 {
		h.zero++
		return
	}
	i := binOf(energyToLUFS(e))
	h.count[i]++
	h.sum[i] += e
}

// above returns the count and energy sum of the blocks louder than the
// threshold t (LUFS), apportioning the bin that contains t linearly.
func (h *histogram) above(t float64) (n, sum float64) {
	first := binOf(t)
	for i := first + 1; i < histBins; i++ {
		n += float64(h.count[i])
		sum += h.sum[i]
	}
	frac := (binLow(first) + histWidth - t) / histWidth
	frac = min(max(frac, 0), 1)
	return n + frac*float64(h.count[first]), sum + frac*h.sum[first]
}

// gated returns the BS.1770 two-stage gated loudness of the recorded blocks
// with the relative gate rel LU below the absolute-gated level, or -Inf when
// no block passes the absolute gate.
func (h *histogram) gated(rel float64) float64 {
	n, sum := h.above(absoluteGate)
	if n == 0 {
		return math.Inf(-1)
	}
	gate := energyToLUFS(sum/n) + rel
	if gate < absoluteGate {
		gate = absoluteGate
	}
	n, sum = h.above(gate)
	if n == 0 {
		return math.Inf(-1)
	}
	return energyToLUFS(sum / n)
}

// percentiles returns the loudness of the blocks at the given ranks
// (0..1) among the blocks at or above the bin of floor, using the
// index rule of the Tech 3342 MATLAB reference: round((n-1)*p). The value
// of a block is the power mean of its bin, within 0.01 LU of the block.
// ok is false when no block qualifies.
func (h *histogram) percentiles(floor float64, ranks []float64, out []float64) (ok bool) {
	first := binOf(floor)
	if binLow(first)+histWidth/2 < floor {
		first++
	}
	var n int64
	for i := first; i < histBins; i++ {
		n += h.count[i]
	}
	if n == 0 {
		return false
	}
	for r, p := range ranks {
		k := int64(math.Round(float64(n-1) * p)) // 0-based index
		var seen int64
		for i := first; i < histBins; i++ {
			seen += h.count[i]
			if seen > k {
				out[r] = energyToLUFS(h.sum[i] / float64(h.count[i]))
				break
			}
		}
	}
	return true
}
