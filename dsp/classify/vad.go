package classify

import (
	"math"
	"slices"
)

// Voice activity. The detector compares the speech-band level of every
// sub-block with a noise floor found by minimum statistics, and lets
// tonal sound that changes (vowels, notes) count at a smaller margin than
// other sound, because in noise a vowel is recognisable by its harmonics
// long before it is loud.

// Thresholds of the activity decision, dB over the noise floor.
const (
	// activeDB: any sound this far above the floor is foreground.
	activeDB = 8.0
	// tonalDB: tonal, changing sound this far above the floor is
	// foreground (a vowel in noise).
	tonalDB = 3.0
	// holdDB: once active, a sub-block stays active down to this margin
	// (hysteresis: word endings fade into the floor).
	holdDB = 4.0
	// absoluteGate: nothing quieter than this (dBFS, speech band) is ever
	// foreground: dither, fades of digital silence.
	absoluteGate = -65.0
)

// floorHorizon is the half width of the minimum-statistics window, in
// blocks: the noise floor at a block is the quietest 300 ms within +-10 s.
// Long enough that a loud passage of music without pauses still sees the
// pauses around it, short enough to follow noise that changes between
// parts of a recording.
const floorHorizon = 100

// noiseFloor returns the noise floor per block in dB (speech band): the
// minimum over +-floorHorizon blocks of the level averaged over three
// blocks, raised by 1.5 dB because the minimum of a fluctuating level lies
// below its mean. Only blocks that sound like background take part:
// noise-like (a flat spectrum, little periodicity). Music without pauses
// has no such blocks, so its own quiet passages are never taken for the
// floor; where no background block lies within the horizon the floor of
// the nearest one holds, and a recording without any is taken to have a
// floor below the absolute gate.
func noiseFloor(blockDB []float64, background []bool) []float64 {
	sm := make([]float64, len(blockDB))
	for i := range blockDB {
		if !background[i] {
			sm[i] = math.Inf(1)
			continue
		}
		var s float64
		n := 0
		for j := max(0, i-1); j <= min(len(blockDB)-1, i+1); j++ {
			s += math.Pow(10, blockDB[j]/10)
			n++
		}
		sm[i] = toDB(s / float64(n))
	}
	fl := slidingMin(sm, floorHorizon)
	// Hold the nearest finite floor across stretches without background.
	last := math.Inf(1)
	for i := range fl {
		if !math.IsInf(fl[i], 1) {
			last = fl[i]
		} else {
			fl[i] = last
		}
	}
	last = math.Inf(1)
	for i := len(fl) - 1; i >= 0; i-- {
		if !math.IsInf(fl[i], 1) {
			last = fl[i]
		} else {
			fl[i] = last
		}
	}
	for i := range fl {
		if math.IsInf(fl[i], 1) {
			fl[i] = noFloor
		} else {
			fl[i] += 1.5
		}
	}
	return fl
}

// noFloor is the floor of a recording without background blocks.
const noFloor = -200.0

// slidingMin returns the minimum of x over [i-half, i+half] for every i,
// in O(n) with a monotonic deque.
func slidingMin(x []float64, half int) []float64 {
	n := len(x)
	out := make([]float64, n)
	dq := make([]int, 0, 2*half+2)
	head := 0
	next := 0
	for i := 0; i < n; i++ {
		for ; next < n && next <= i+half; next++ {
			for len(dq) > head && x[dq[len(dq)-1]] >= x[next] {
				dq = dq[:len(dq)-1]
			}
			dq = append(dq, next)
		}
		for dq[head] < i-half {
			head++
		}
		out[i] = x[dq[head]]
		if head > 2*half+2 { // keep the deque compact
			dq = append(dq[:0], dq[head:]...)
			head = 0
		}
	}
	return out
}

// fillGaps sets runs of false no longer than maxGap between two trues.
func fillGaps(v []bool, maxGap int) {
	last := -1
	for i := range v {
		if !v[i] {
			continue
		}
		if last >= 0 && i-last-1 <= maxGap {
			for j := last + 1; j < i; j++ {
				v[j] = true
			}
		}
		last = i
	}
}

// dropShort clears runs of true shorter than minRun.
func dropShort(v []bool, minRun int) {
	for i := 0; i < len(v); {
		if !v[i] {
			i++
			continue
		}
		j := i
		for j < len(v) && v[j] {
			j++
		}
		if j-i < minRun {
			clear(v[i:j])
		}
		i = j
	}
}

// dilate extends every run of true by n on both sides.
func dilate(v []bool, n int) {
	src := slices.Clone(v)
	for i, on := range src {
		if on {
			for j := max(0, i-n); j <= min(len(v)-1, i+n); j++ {
				v[j] = true
			}
		}
	}
}
