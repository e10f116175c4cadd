package mixdown

import (
	"fmt"
	"math"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp"
	"github.com/audiopost/audiopost/loudness"
)

// BalanceOptions configure the speaker balance of a track.
type BalanceOptions struct {
	// Strength is the leveling within the track, the API's
	// levelerstrength/100: 1 brings each of the speaker's phrases to the
	// speaker's level, 0 leaves them. The balance between the tracks is
	// applied whatever the strength.
	Strength float64
	// MaxGainDB bounds the leveler's boost and cut within the track;
	// 0 means 20 dB. The balance gain comes on top of it.
	MaxGainDB float64
}

// BalancePlan returns the gain plan that brings the speaker of track to
// the speakers' common level, Analysis.SpeechLUFS, on dsp's 100 ms grid.
//
// It is the leveler of package dsp run on the track alone (dsp.LevelerPlan
// with the track's own speech as its voice activity, so that bleed from
// the other microphones neither counts as this speaker's level nor gets
// boosted in the pauses), plus one constant gain: the common level minus
// the track's speech level after the leveler. Two speakers recorded 15 dB
// apart on their own microphones thus end at the same level, and each
// speaker's quiet and loud phrases are evened out as much as Strength
// says. A track without speech gets an empty (unity) plan.
func BalancePlan(an *Analysis, track int, o BalanceOptions) (dsp.GainPlan, error) {
	if an == nil || track < 0 || track >= len(an.Tracks) {
		return dsp.GainPlan{}, fmt.Errorf("%w: track %d", dsp.ErrInvalidParameter, track)
	}
	if !(o.Strength >= 0 && o.Strength <= 1.2) || !(o.MaxGainDB >= 0 && o.MaxGainDB <= 60) {
		return dsp.GainPlan{}, fmt.Errorf("%w: balance strength %v, maximum gain %v dB", dsp.ErrInvalidParameter, o.Strength, o.MaxGainDB)
	}
	t := an.Tracks[track]
	target := an.SpeechLUFS()
	if math.IsInf(t.SpeechLUFS, -1) || math.IsInf(target, -1) {
		return dsp.GainPlan{BlockLen: t.Block.BlockLen}, nil
	}
	lev := an.SpeechAnalysis(track)
	plan := dsp.LevelerPlan(lev, dsp.LevelerOptions{Strength: o.Strength, MusicStrength: o.Strength / 2, MaxGainDB: o.MaxGainDB})
	var s float64
	n := 0
	for b, v := range lev.Voiced {
		if v {
			s += t.Block.Energy[b] * math.Pow(10, plan.DB[b]/10)
			n++
		}
	}
	offset := target - loudness.EnergyLUFS(s/float64(n))
	for b := range plan.DB {
		plan.DB[b] += offset
	}
	return plan, nil
}

// Balance applies a track's BalancePlan.
type Balance struct {
	*dsp.PlanGain
	plan dsp.GainPlan
}

// NewBalance returns src, the track of the analysis (or a filtered or
// gated version of it, same timeline), brought to the speakers' common
// level.
func NewBalance(src audio.Source, an *Analysis, track int, o BalanceOptions) (*Balance, error) {
	if err := checkTrack(src, an, track); err != nil {
		return nil, err
	}
	plan, err := BalancePlan(an, track, o)
	if err != nil {
		return nil, err
	}
	pg, err := dsp.NewPlanGain(src, plan)
	if err != nil {
		return nil, err
	}
	return &Balance{PlanGain: pg, plan: plan}, nil
}

// Plan returns the gain curve in use.
func (b *Balance) Plan() dsp.GainPlan { return b.plan }
