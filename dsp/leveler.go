package dsp

import (
	"math"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/loudness"
)

// LevelerOptions configure the leveler.
type LevelerOptions struct {
	// Strength scales the correction of speech: 1 brings every phrase to
	// the common level, 0.5 halves the differences, 0 leaves them, up to
	// 1.2 over-corrects slightly (the API's levelerstrength/100).
	Strength float64
	// MusicStrength scales the correction of music segments, which should
	// keep more of their dynamics.
	MusicStrength float64
	// MusicGainDB is added to music segments (music under speech is often
	// wanted a little lower than the voices).
	MusicGainDB float64
	// MaxGainDB bounds boost and cut; 0 means 20 dB.
	MaxGainDB float64
}

// Leveler constants, in analysis blocks (100 ms).
const (
	levChunk      = 30 // longest stretch measured as one level (3 s)
	levShortPause = 3  // pauses up to this keep the gain (no pumping)
	levRelease    = 2  // gain falls back over 200 ms after a phrase
	levShrink     = 1.0
)

// LevelerPlan computes the leveler's gain curve from an analysis. It
// tracks the K-weighted level of every phrase (a run of voice activity
// between pauses, split into 3 s chunks when longer) and moves each toward
// the programme's common level, the duration-weighted mean of the phrase
// levels. The gain changes only in pauses and glides between chunk centres
// in long phrases, so it never follows syllables (no pumping). In pauses
// longer than 300 ms the gain never boosts, so the noise floor stays
// where it was; shorter pauses hold the gain. Music segments are leveled
// with MusicStrength and offset by MusicGainDB.
func LevelerPlan(an *Analysis, o LevelerOptions) GainPlan {
	n := len(an.Energy)
	plan := GainPlan{BlockLen: an.BlockLen, DB: make([]float64, n)}
	if n == 0 {
		return plan
	}
	maxG := o.MaxGainDB
	if maxG <= 0 {
		maxG = 20
	}
	type seg struct {
		start, end int // blocks [start, end)
		level      float64
		music      bool
		gain       float64
	}
	var segs []seg
	for i := 0; i < n; {
		if !an.Voiced[i] {
			i++
			continue
		}
		j := i
		for j < n && an.Voiced[j] && an.Music[j] == an.Music[i] {
			j++
		}
		// Split long runs into equal chunks of at most levChunk blocks.
		parts := (j - i + levChunk - 1) / levChunk
		for p := 0; p < parts; p++ {
			a := i + (j-i)*p/parts
			b := i + (j-i)*(p+1)/parts
			var e float64
			for k := a; k < b; k++ {
				e += an.Energy[k]
			}
			segs = append(segs, seg{start: a, end: b, level: loudness.EnergyLUFS(e / float64(b-a)), music: an.Music[i]})
		}
		i = j
	}
	if len(segs) == 0 {
		return plan
	}
	// Common level: duration-weighted mean (in dB) of the speech phrases,
	// or of everything when there is no speech.
	var sum, dur float64
	for _, s := range segs {
		if !s.music {
			sum += s.level * float64(s.end-s.start)
			dur += float64(s.end - s.start)
		}
	}
	if dur == 0 {
		for _, s := range segs {
			sum += s.level * float64(s.end-s.start)
			dur += float64(s.end - s.start)
		}
	}
	target := sum / dur
	for k := range segs {
		s := &segs[k]
		// Very short phrases (a word or two) measure their level poorly:
		// pull them toward their neighbours' level, strongly for 100 ms,
		// hardly at all from half a second on.
		lvl := s.level
		d := float64(s.end - s.start)
		if ctx, ok := neighbourLevel(segs, k, func(i int) (float64, int, int) { return segs[i].level, segs[i].start, segs[i].end }); ok {
			w := d * d / (d*d + levShrink)
			lvl = w*lvl + (1-w)*ctx
		}
		str := o.Strength
		if s.music {
			str = o.MusicStrength
		}
		g := str * (target - lvl)
		if s.music {
			g += o.MusicGainDB
		}
		s.gain = math.Max(-maxG, math.Min(maxG, g))
	}
	// Lay the gains out per block.
	db := plan.DB
	for k, s := range segs {
		if s.end-s.start <= 1 {
			db[s.start] = s.gain
			continue
		}
		// Interpolate between the centres of adjacent chunks of the same
		// run so a long phrase glides instead of stepping.
		cen := (s.start + s.end - 1) / 2
		for i := s.start; i < s.end; i++ {
			db[i] = s.gain
			if i > cen && k+1 < len(segs) && segs[k+1].start == s.end {
				nx := segs[k+1]
				nc := (nx.start + nx.end - 1) / 2
				t := float64(i-cen) / float64(nc-cen)
				db[i] = s.gain + t*(nx.gain-s.gain)
			} else if i < cen && k > 0 && segs[k-1].end == s.start {
				pv := segs[k-1]
				pc := (pv.start + pv.end - 1) / 2
				t := float64(cen-i) / float64(cen-pc)
				db[i] = s.gain + t*(pv.gain-s.gain)
			}
		}
	}
	// Pauses.
	for k := 0; k <= len(segs); k++ {
		a, b := 0, n // pause [a, b)
		prev, next := math.NaN(), math.NaN()
		if k > 0 {
			a = segs[k-1].end
			prev = segs[k-1].gain
		}
		if k < len(segs) {
			b = segs[k].start
			next = segs[k].gain
		}
		if b <= a {
			continue
		}
		switch {
		case math.IsNaN(prev):
			fillConst(db[a:b], math.Min(0, next))
		case math.IsNaN(next):
			release(db[a:b], prev, math.Min(0, prev))
		case b-a <= levShortPause:
			for i := a; i < b; i++ {
				t := float64(i-a+1) / float64(b-a+1)
				db[i] = prev + t*(next-prev)
			}
		default:
			floor := math.Min(0, math.Min(prev, next))
			release(db[a:b-1], prev, floor)
			db[b-1] = (floor + next) / 2 // one block of attack before speech
		}
	}
	return plan
}

func fillConst(x []float64, v float64) {
	for i := range x {
		x[i] = v
	}
}

// release glides from g toward floor over levRelease blocks, then holds.
func release(x []float64, g, floor float64) {
	for i := range x {
		t := math.Min(1, float64(i+1)/float64(levRelease+1))
		x[i] = g + t*(floor-g)
	}
}

// neighbourLevel returns the duration-weighted mean level of the segments
// within 10 s around segment k (excluding k).
func neighbourLevel[T any](segs []T, k int, get func(int) (float64, int, int)) (float64, bool) {
	_, s0, e0 := get(k)
	var sum, dur float64
	for i := range segs {
		if i == k {
			continue
		}
		l, s, e := get(i)
		if e < s0-100 || s > e0+100 {
			continue
		}
		sum += l * float64(e-s)
		dur += float64(e - s)
	}
	if dur == 0 {
		return 0, false
	}
	return sum / dur, true
}

// Leveler is the adaptive leveler node: it applies LevelerPlan.
type Leveler struct {
	*PlanGain
	plan GainPlan
}

// NewLeveler returns src leveled according to an analysis of the same
// stream (or of its unfiltered input: the filters ahead of the leveler
// change speech levels by well under a dB).
func NewLeveler(src audio.Source, an *Analysis, o LevelerOptions) (*Leveler, error) {
	plan := LevelerPlan(an, o)
	pg, err := NewPlanGain(src, plan)
	if err != nil {
		return nil, err
	}
	return &Leveler{PlanGain: pg, plan: plan}, nil
}

// Plan returns the gain curve in use.
func (l *Leveler) Plan() GainPlan { return l.plan }
