package classify

import (
	"math"

	"github.com/audiopost/audiopost/internal/quickselect"
)

// The speech/music features: what a stretch of a second or a few seconds
// looks like, summed up from its 10 ms sub-blocks into a few numbers that
// a small model (msmodel.go) weighs. Each says something a listener would
// name:
//
//   - dips, level spread: speech falls silent or nearly so between
//     syllables and words, music hardly ever does (drums excepted);
//   - voiced share, steady pitch, glide, voiced runs, pitch range: a note
//     holds its pitch for tenths of a second, a voice glides through
//     short voiced stretches, in a range of an octave or so;
//   - flux and its variation, flatness: formant transitions and stop
//     consonants against held chords, noisy drum hits;
//   - the same pitch and flux figures over the loud sub-blocks only (within
//     loudDB of the loudest tenth): over a music bed 15 dB under a voice,
//     the loud parts are the voice, and the bed shows only in the pauses.
//
// A sub-block takes part when there is sound at all (its speech-band level
// above absoluteGate), whether or not voice activity found foreground: a
// steady bed can lift the noise floor over a voice, and music is
// foreground of its own.

// Indices of the features.
const (
	fDips = iota
	fSteady
	fVoiced
	fGlide
	fVoicedRun
	fFlux
	fFluxCV
	fFlat
	fLevelSD
	fPresent
	fPitchIQR
	fPitchMed
	fHiVoiced
	fLoudSteady
	fLoudGlide
	fLoudFlux
	fLoudVoiced
	fSpread
	fRhythm
	nMSFeatures
)

// msFeatureNames name the features, for the model file and test logs.
var msFeatureNames = [nMSFeatures]string{
	"dips", "steady", "voiced", "glide", "voicedRun", "flux", "fluxCV", "flat", "levelSD", "present",
	"pitchIQR", "pitchMed", "hiVoiced", "loudSteady", "loudGlide", "loudFlux", "loudVoiced", "spread", "rhythm",
}

// Feature settings.
const (
	voicedAt   = 0.5   // voicing of a voiced sub-block
	hiVoicedAt = 0.8   // voicing of a strongly periodic one
	loudDB     = 10.0  // a loud sub-block is this close to the loudest tenth
	maxStep    = 200.0 // cents: pitch steps are capped here before the median
	// longGap is the shortest silence, in sub-blocks, that is no pause
	// of the sound around it but a gap: the share of sub-blocks with sound
	// leaves gaps out, so that music after a second of silence does not
	// look like speech with pauses.
	longGap = 100
)

// msWindow computes the features of windows of a Result's sub-blocks. Its
// scratch space is reused from one window to the next.
type msWindow struct {
	r                      *Result
	bands, steps, loud, lp []float64
	tmp                    []float64
	onset                  []float64
}

// features returns the features of sub-blocks [lo, hi), and false when
// fewer than minActive of them hold sound.
func (w *msWindow) features(lo, hi int) (out [nMSFeatures]float64, ok bool) {
	r := w.r
	bands, steps, lp := w.bands[:0], w.steps[:0], w.lp[:0]
	var voiced, hiV, runs, runLen, cur, gap, gaps int
	var fluxSum, fluxSq, flatSum, bandSum, bandSq float64
	prevVoiced := false
	var prevPitch float32
	for j := lo; j < hi; j++ {
		f := r.feat(j)
		if f.band <= absoluteGate {
			if cur > 0 {
				runs, runLen, cur = runs+1, runLen+cur, 0
			}
			prevVoiced = false
			if gap++; gap == longGap {
				gaps += longGap
			} else if gap > longGap {
				gaps++
			}
			continue
		}
		gap = 0
		b := float64(f.band)
		bands = append(bands, b)
		bandSum += b
		bandSq += b * b
		fl := float64(f.flux)
		fluxSum += fl
		fluxSq += fl * fl
		flatSum += float64(f.flat)
		if f.voicing > hiVoicedAt {
			hiV++
		}
		if f.voicing > voicedAt {
			voiced++
			cur++
			lp = append(lp, 12*math.Log2(float64(f.pitch)/100))
			if prevVoiced {
				steps = append(steps, min(maxStep, pitchStep(f.pitch, prevPitch)))
			} else {
				steps = append(steps, -1) // no pair: marks the start of a run
			}
			prevVoiced, prevPitch = true, f.pitch
		} else {
			if cur > 0 {
				runs, runLen, cur = runs+1, runLen+cur, 0
			}
			prevVoiced = false
		}
	}
	if cur > 0 {
		runs, runLen = runs+1, runLen+cur
	}
	w.bands, w.steps, w.lp = bands, steps, lp
	n := len(bands)
	if n < minActive {
		return out, false
	}
	fn := float64(n)
	tmp := append(w.tmp[:0], bands...)
	top := quickselect.Nth(tmp, int(0.9*float64(n-1)))
	bottom := quickselect.Nth(tmp, int(0.1*float64(n-1)))
	w.tmp = tmp
	dips := 0
	for _, v := range bands {
		if v < top-dipDB {
			dips++
		}
	}
	out[fDips] = float64(dips) / fn
	out[fSpread] = top - bottom
	out[fVoiced] = float64(voiced) / fn
	out[fHiVoiced] = float64(hiV) / fn
	if runs > 0 {
		out[fVoicedRun] = math.Log(float64(runLen) / float64(runs))
	}
	m := fluxSum / fn
	out[fFlux] = m
	out[fFluxCV] = math.Sqrt(max(0, fluxSq/fn-m*m)) / (m + 0.1)
	out[fFlat] = flatSum / fn
	mb := bandSum / fn
	out[fLevelSD] = math.Sqrt(max(0, bandSq/fn-mb*mb))
	out[fPresent] = fn / float64(hi-lo-gaps)
	if len(lp) > 4 {
		tmp = append(w.tmp[:0], lp...)
		q1 := quickselect.Nth(tmp, len(tmp)/4)
		q3 := quickselect.Nth(tmp, 3*len(tmp)/4)
		out[fPitchIQR] = q3 - q1
		out[fPitchMed] = quickselect.Nth(tmp, len(tmp)/2)
		w.tmp = tmp
	}
	out[fSteady], out[fGlide] = w.pitchSteps(steps)

	// The loud sub-blocks: the same walk again, now that the top is
	// known, keeping the voiced pairs whose both ends are loud.
	loud := w.loud[:0]
	var lflux float64
	nl, lv := 0, 0
	k := 0 // index into bands, steps follow the voiced ones
	vi := 0
	prevLoudVoiced := false
	for j := lo; j < hi; j++ {
		f := r.feat(j)
		if f.band <= absoluteGate {
			prevLoudVoiced = false
			continue
		}
		isLoud := bands[k] >= top-loudDB
		k++
		v := f.voicing > voicedAt
		if v {
			if isLoud && prevLoudVoiced && steps[vi] >= 0 {
				loud = append(loud, steps[vi])
			}
			vi++
		}
		if isLoud {
			nl++
			lflux += float64(f.flux)
			if v {
				lv++
			}
		}
		prevLoudVoiced = isLoud && v
	}
	w.loud = loud
	if nl > 0 {
		out[fLoudFlux] = lflux / float64(nl)
		out[fLoudVoiced] = float64(lv) / float64(nl)
	}
	out[fLoudSteady], out[fLoudGlide] = w.pitchSteps(loud)
	out[fRhythm] = w.rhythm(lo, hi)
	return out, true
}

// pitchSteps returns the share of the steps (cents per 10 ms; negative
// entries are no step) under steadyCents, and their median.
func (w *msWindow) pitchSteps(steps []float64) (steady, median float64) {
	tmp := w.tmp[:0]
	st := 0
	for _, s := range steps {
		if s < 0 {
			continue
		}
		tmp = append(tmp, s)
		if s < steadyCents {
			st++
		}
	}
	w.tmp = tmp
	if len(tmp) == 0 {
		return 0, 0
	}
	return float64(st) / float64(len(tmp)), quickselect.Nth(tmp, len(tmp)/2)
}

// rhythm returns how regularly the window's onsets repeat: the highest
// normalised autocorrelation of its onset strength (the flux, 20 ms
// steps) at lags of 0.25 to 1.5 s, the beats of 40 to 240 bpm.
func (w *msWindow) rhythm(lo, hi int) float64 {
	o := w.onset[:0]
	for j := lo; j+1 < hi; j += 2 {
		var v float64
		for _, k := range [2]int{j, j + 1} {
			if f := w.r.feat(k); f.band > absoluteGate {
				v += float64(f.flux)
			}
		}
		o = append(o, v)
	}
	w.onset = o
	n := len(o)
	var m float64
	for _, v := range o {
		m += v
	}
	m /= float64(max(1, n))
	var r0 float64
	for i := range o {
		o[i] -= m
		r0 += o[i] * o[i]
	}
	if r0 == 0 {
		return 0
	}
	best := 0.0
	for l := 12; l <= 75 && 2*l <= n; l++ {
		var s float64
		for i := 0; i+l < n; i++ {
			s += o[i] * o[i+l]
		}
		best = max(best, s*float64(n)/(r0*float64(n-l)))
	}
	return best
}
