//go:build !purego

package loudness

import "golang.org/x/sys/cpu"

// useAVX selects the AVX kernel of truepeak_amd64.s for the 4x
// interpolator, useAVX2 absMax's, where the CPU and the operating system
// support them.
var (
	useAVX  = cpu.X86.HasAVX
	useAVX2 = cpu.X86.HasAVX2
)

//go:noescape
func absMaxAVX2(x *float64, n int) uint64

// absMaxBits is absMaxGo's integer maximum, the leading multiple of eight
// values by the AVX2 kernel.
func absMaxBits(x []float64) uint64 {
	m := 0
	var k uint64
	if useAVX2 && len(x) >= 16 {
		m = len(x) &^ 7
		k = absMaxAVX2(&x[0], m)
	}
	return max(k, absMaxGoBits(x[m:]))
}

//go:noescape
func peaks3AVX(taps *[3][tpTaps][8]float32, buf *float32, n int, hilo *[16]float32)

// peaks3 returns the largest of branchPeak over the three branches of
// taps (wide: the same taps, each eight times) for the n outputs whose
// windows end at buf[tpHist..tpHist+n): the AVX kernel for whole groups
// of eight, branchPeak for the rest. Every output is branchPeak's to the
// bit and the extremes are the same values (+0 or beyond, no NaN), so
// the result is too.
func peaks3(t *[3][tpTaps]float32, wide *[3][tpTaps][8]float32, buf []float32, n int) float32 {
	var peak float32
	m := 0
	if useAVX && n >= 8 {
		m = n &^ 7
		_ = buf[m-1+tpTaps-1]
		var hilo [16]float32 // +0: branchPeak's starting extremes
		peaks3AVX(wide, &buf[0], m, &hilo)
		var hi, lo float32
		for i := range 8 {
			if hilo[i] > hi {
				hi = hilo[i]
			}
			if hilo[8+i] < lo {
				lo = hilo[8+i]
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
