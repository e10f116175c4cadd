package mixdown

import (
	"fmt"
	"math"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp"
)

// DuckOptions configure how a background track sits under the speakers.
// What happens depends on the track's Role in the analysis: RoleDucking
// ducks under foreground speech, RoleBackground is a constant gain, any
// other role is left alone.
type DuckOptions struct {
	// BackgroundGainDB is the API's backgroundgain (-3 to -26 dB): how
	// far a ducking track goes down under speech, and where a background
	// track sits below the speakers' level. 0 means -18.
	BackgroundGainDB float64
	// FadeTime is the API's ducking_fadetime (125 ms to 2 s): the fade
	// down, which ends as the speech starts, and the fade back up, which
	// starts as the speech ends. 0 means 500 ms.
	FadeTime time.Duration
	// MinPause is the shortest pause in the foreground speech that lets
	// the track come back up; shorter ones keep it down, so that the bed
	// does not pump between sentences. 0 means FadeTime, at least 250 ms.
	MinPause time.Duration
	// Length is the track's length in frames where it is mixed, after
	// NewLoopTrim; 0 means its analysed length.
	Length int64
}

// DuckingPlan returns the ducking of track as a gain plan on the analysis
// frame grid of the track's timeline (from its offset in the production).
//
// For a RoleDucking track the gain is 0 dB wherever no foreground track
// speaks and BackgroundGainDB under the speech of any RoleForeground or
// RoleUnchanged track (its Voice frames: bleed does not duck), moving
// linearly in dB over FadeTime: down before the speech starts (the plan
// looks ahead), up after it ends. For a RoleBackground track it is the
// constant gain that puts the track's loudness BackgroundGainDB below the
// speakers' common level (Analysis.SpeechLUFS). For other roles it is
// unity.
func DuckingPlan(an *Analysis, track int, o DuckOptions) (dsp.GainPlan, error) {
	if an == nil || track < 0 || track >= len(an.Tracks) {
		return dsp.GainPlan{}, fmt.Errorf("%w: track %d", dsp.ErrInvalidParameter, track)
	}
	bg := o.BackgroundGainDB
	if bg == 0 {
		bg = -18
	}
	if !(bg < 0 && bg >= -100) {
		return dsp.GainPlan{}, fmt.Errorf("%w: background gain %v dB", dsp.ErrInvalidParameter, o.BackgroundGainDB)
	}
	fade := o.FadeTime
	if fade == 0 {
		fade = 500 * time.Millisecond
	}
	if fade < 0 || fade > time.Minute || o.MinPause < 0 || o.Length < 0 {
		return dsp.GainPlan{}, fmt.Errorf("%w: ducking fade %v, minimum pause %v, length %d", dsp.ErrInvalidParameter, o.FadeTime, o.MinPause, o.Length)
	}
	t := an.Tracks[track]
	plan := dsp.GainPlan{BlockLen: an.FrameLen}
	switch t.Role {
	case RoleBackground:
		speech, bed := an.SpeechLUFS(), t.Block.Loudness.Integrated
		if loudnessDefined(speech) && loudnessDefined(bed) {
			plan.DB = []float64{speech + bg - bed}
		}
		return plan, nil
	case RoleDucking:
	default:
		return plan, nil
	}
	length := o.Length
	if length == 0 {
		length = t.Frames
	}
	fl := int64(an.FrameLen)
	n := int((length + fl - 1) / fl)
	// Foreground speech on this track's timeline.
	fg := an.speaking(track, n)
	minPause := o.MinPause
	if minPause == 0 {
		minPause = max(fade, 250*time.Millisecond)
	}
	fillGaps(fg, frames(minPause, 0, 0))
	db := make([]float64, n)
	for i, v := range fg {
		if v {
			db[i] = bg
		}
	}
	step := -bg / math.Max(1, fade.Seconds()/FrameSeconds)
	for i := n - 2; i >= 0; i-- { // down before the speech
		db[i] = math.Min(db[i], db[i+1]+step)
	}
	for i := 1; i < n; i++ { // up after it
		db[i] = math.Min(db[i], db[i-1]+step)
	}
	plan.DB = db
	return plan, nil
}

func loudnessDefined(v float64) bool { return !math.IsInf(v, 0) && !math.IsNaN(v) }

// fillGaps sets the runs of false shorter than maxGap between two trues.
func fillGaps(v []bool, maxGap int) {
	last := -1
	for i, x := range v {
		if !x {
			continue
		}
		if last >= 0 && i-last-1 < maxGap {
			for j := last + 1; j < i; j++ {
				v[j] = true
			}
		}
		last = i
	}
}

// Ducker applies a track's DuckingPlan: a music bed under the speakers.
type Ducker struct {
	*dsp.PlanGain
	plan dsp.GainPlan
}

// NewDucker returns src, the track of the analysis after any filtering
// and NewLoopTrim (its timeline starting at the track's offset), ducked
// as o and the track's role say.
func NewDucker(src audio.Source, an *Analysis, track int, o DuckOptions) (*Ducker, error) {
	if err := checkTrack(src, an, track); err != nil {
		return nil, err
	}
	plan, err := DuckingPlan(an, track, o)
	if err != nil {
		return nil, err
	}
	pg, err := dsp.NewPlanGain(src, plan)
	if err != nil {
		return nil, err
	}
	return &Ducker{PlanGain: pg, plan: plan}, nil
}

// Plan returns the gain curve in use.
func (d *Ducker) Plan() dsp.GainPlan { return d.plan }
