package realaudio

import (
	"math"

	"github.com/audiopost/audiopost/audio"
)

// frameFeat are the features of a 10 ms frame that tell breaths from
// speech and silence.
type frameFeat struct {
	db       float64 // RMS level, dBFS
	voicing  float64 // the normalized autocorrelation's peak at 70-400 Hz lags
	centroid float64 // spectral centroid, Hz (from zero crossings and slope)
	zcr      float64 // zero crossings per second
}

const featFrame = Rate / 100 // 10 ms

// features computes each 10 ms frame's features, the voicing over a 40 ms
// window centred on the frame, on the signal decimated to 8 kHz (a
// six-sample average, enough for pitch up to 400 Hz) to keep it cheap.
func features(x []float64) []frameFeat {
	n := len(x) / featFrame
	out := make([]frameFeat, n)
	const dec = Rate / 8000
	d := make([]float64, len(x)/dec)
	for i := range d {
		var s float64
		for _, v := range x[i*dec : i*dec+dec] {
			s += v
		}
		d[i] = s
	}
	const df = featFrame / dec // 80 samples at 8 kHz
	win := 4 * df
	minLag, maxLag := 8000/400, 8000/70
	for f := range out {
		a := f * featFrame
		seg := x[a : a+featFrame]
		var e float64
		zc := 0
		for i, v := range seg {
			e += v * v
			if i > 0 && (v >= 0) != (seg[i-1] >= 0) {
				zc++
			}
		}
		out[f].db = 10 * math.Log10(e/featFrame+1e-20)
		out[f].zcr = float64(zc) * 100
		c := f*df + df/2 - win/2
		if c < 0 || c+win+maxLag > len(d) {
			continue
		}
		w := d[c : c+win+maxLag]
		var e0 float64
		for _, v := range w[:win] {
			e0 += v * v
		}
		el := 0.0
		for _, v := range w[minLag : minLag+win] {
			el += v * v
		}
		best := 0.0
		for lag := minLag; lag <= maxLag; lag++ {
			var s float64
			for i := 0; i < win; i++ {
				s += w[i] * w[i+lag]
			}
			if dd := math.Sqrt(e0 * el); dd > 0 {
				best = max(best, s/dd)
			}
			if lag < maxLag { // slide the lagged window's energy by one sample
				el += w[lag+win]*w[lag+win] - w[lag]*w[lag]
			}
		}
		out[f].voicing = best
	}
	return out
}

// Breath-finding thresholds ("listening by numbers"): an inhalation
// before a phrase is a run of 10 ms frames with no pitch (voicing under
// 0.45) lasting 200 to 800 ms, peaking 8 to 35 dB under the speech (the
// 90th percentile of frame levels) and 6 dB or more over the floor (the
// 10th), with fewer than 7000 zero crossings a second on average (an /s/
// or /sh/ has more: its energy lies above 4 kHz; a breath's is spread
// from 500 Hz up), and the phrase's first voiced frame 80 to 500 ms after
// it.
const (
	brVoicing   = 0.45
	brMinMs     = 200
	brMaxMs     = 800
	brUnderMax  = 35.0
	brUnderMin  = 8.0
	brOverFloor = 6.0
	brMaxZCR    = 7000.0
	brOnsetMin  = 8  // frames
	brOnsetMax  = 50 // frames
	brVoiced    = 0.7
)

// Breath is a breath found in a recording, with the numbers that made it
// one.
type Breath struct {
	audio.Span
	// Onset is the first voiced frame of the phrase after it.
	Onset int
	// UnderDB is how far its loudest frame lies under the speech level.
	UnderDB float64
	// ZCR is its mean rate of zero crossings per second.
	ZCR float64
}

// findBreaths returns the inhalations before phrases of a speech
// recording, by the thresholds above.
func findBreaths(x []float64) []Breath {
	fs := features(x)
	if len(fs) < 10 {
		return nil
	}
	lv := make([]float64, len(fs))
	for i := range fs {
		lv[i] = fs[i].db
	}
	sortFloats(lv)
	speech, floor := lv[len(lv)*9/10], lv[len(lv)/10]
	in := func(f frameFeat, slack float64) bool {
		return f.voicing < brVoicing && f.db > floor+brOverFloor-slack && f.db < speech-brUnderMin+slack
	}
	var out []Breath
	for i := 0; i < len(fs); {
		if !in(fs[i], 0) {
			i++
			continue
		}
		j := i
		for j < len(fs) && in(fs[j], 2) {
			j++
		}
		n := j - i
		var zc float64
		top := math.Inf(-1)
		for k := i; k < j; k++ {
			zc += fs[k].zcr
			top = max(top, fs[k].db)
		}
		zc /= float64(max(n, 1))
		onset := -1
		for k := j; k < min(len(fs), j+brOnsetMax); k++ {
			if fs[k].voicing > brVoiced && fs[k].db > speech-20 {
				onset = k
				break
			}
		}
		if n*10 >= brMinMs && n*10 <= brMaxMs && speech-top <= brUnderMax && speech-top >= brUnderMin && zc < brMaxZCR && onset-j >= brOnsetMin {
			out = append(out, Breath{Span: frames(i*featFrame, j*featFrame), Onset: onset * featFrame, UnderDB: speech - top, ZCR: zc})
		}
		i = j + 1
	}
	return out
}

// frames is the span [a, b) of sample indices.
func frames(a, b int) audio.Span { return audio.Span{Start: int64(a), End: int64(b)} }
