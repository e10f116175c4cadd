package spectral

import "math"

// rt60Estimator measures the reverberation time blindly from the free
// decays of a recording: on 10 ms frames of the mono mix it finds runs
// where the level falls steadily by 15 dB or more, starting well above
// the noise, and takes the decay rate of each. Speech itself can stop
// fast but a room cannot decay faster than its RT60, so the fastest
// decays (a low percentile of the per-run RT60s) measure the room. A dry
// recording has no such runs (its offsets fall 30 dB within a frame or
// two) and reports 0.
type rt60Estimator struct {
	frame  int
	acc    float64
	n      int
	noise  float64 // running floor, dB
	prev   float64
	p1, p2 float64 // the two previous frame powers
	inRun  bool
	run    []float64 // levels of the current run
	hist   [rtBins]int
	nRuns  int
	frames int
}

const (
	rtFrameSec = 0.01
	rtBinSec   = 0.05
	rtBins     = 60 // up to 3 s
	rtMinDrop  = 15.0
	rtMinLen   = 6
	rtAbove    = 25.0 // a run starts this far above the floor
	// Fewer runs than this say nothing. A room with more reverberation
	// than direct sound (DRR -5 dB) fills the pauses, so a dozen seconds
	// of speech hold only three or four free decays of 15 dB; they agree
	// within 50 ms, as the lowest percentile of them needs.
	rtMinRuns = 3
)

func newRT60Estimator(sampleRate int) *rt60Estimator {
	return &rt60Estimator{frame: max(1, int(math.Round(rtFrameSec*float64(sampleRate)))), noise: 0, prev: -200,
		run: make([]float64, 0, 512)}
}

func (r *rt60Estimator) write(mono []float64) {
	for len(mono) > 0 {
		m := min(len(mono), r.frame-r.n)
		r.acc += sumSquares(mono[:m])
		r.n += m
		mono = mono[m:]
		if r.n == r.frame {
			// Levels of a 30 ms moving average of the power: smooth enough
			// that the noise-like tail of a room falls steadily, short enough
			// that a dry offset is over within three frames.
			p := r.acc / float64(r.n)
			r.level(10 * math.Log10((p+r.p1+r.p2)/3+1e-20))
			r.p1, r.p2 = p, r.p1
			r.acc, r.n = 0, 0
		}
	}
}

func (r *rt60Estimator) level(l float64) {
	r.frames++
	if r.frames == 1 || l < r.noise {
		r.noise = l
	} else {
		r.noise += 0.5 * rtFrameSec // rises by 0.5 dB/s
	}
	falling := l < r.prev+0.3
	switch {
	case r.inRun && falling && l > r.noise+5:
		r.run = append(r.run, l)
		if len(r.run) == cap(r.run) {
			r.endRun()
		}
	case r.inRun:
		r.endRun()
	}
	if !r.inRun && l < r.prev-0.2 && r.prev > r.noise+rtAbove {
		r.inRun = true
		r.run = append(r.run[:0], r.prev, l)
	}
	r.prev = l
}

func (r *rt60Estimator) endRun() {
	r.inRun = false
	x := r.run
	if len(x) < rtMinLen || x[0]-x[len(x)-1] < rtMinDrop {
		return
	}
	// Least-squares slope in dB per frame.
	n := float64(len(x))
	var sx, sy, sxx, sxy float64
	for i, v := range x {
		fi := float64(i)
		sx += fi
		sy += v
		sxx += fi * fi
		sxy += fi * v
	}
	slope := (n*sxy - sx*sy) / (n*sxx - sx*sx)
	if slope >= 0 {
		return
	}
	rt := -60 / slope * rtFrameSec
	b := min(rtBins-1, int(rt/rtBinSec))
	r.hist[b]++
	r.nRuns++
}

// result returns the estimated RT60 in seconds, 0 when too few decays
// were found to say.
func (r *rt60Estimator) result() float64 {
	if r.inRun {
		r.endRun()
	}
	if r.nRuns < rtMinRuns {
		return 0
	}
	target := 0.1 * float64(r.nRuns)
	acc := 0
	for b, c := range r.hist {
		acc += c
		if float64(acc) >= target {
			return (float64(b) + 0.5) * rtBinSec
		}
	}
	return 0
}

// sumSquares returns the sum of the squares of x, in four lanes so that
// no addition waits on the one before.
func sumSquares(x []float64) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		v := x[i : i+4 : i+4]
		s0 += v[0] * v[0]
		s1 += v[1] * v[1]
		s2 += v[2] * v[2]
		s3 += v[3] * v[3]
	}
	for ; i < len(x); i++ {
		s0 += x[i] * x[i]
	}
	return (s0 + s1) + (s2 + s3)
}
