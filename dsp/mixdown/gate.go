package mixdown

import (
	"fmt"
	"math"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp"
)

// GateOptions configure the adaptive noise gate and the crossgate of a
// track. Durations of zero take the defaults; a negative Hold or
// Lookahead means none.
type GateOptions struct {
	// Noise closes the gate while the track carries nothing but its
	// noise floor and room (the API's gate).
	Noise bool
	// Crossgate closes it while the track carries only other speakers'
	// bleed (the API's crossgate). Genuine speech over another speaker
	// stays open.
	Crossgate bool
	// RangeDB is how far a closed gate attenuates, in dB (positive);
	// 0 means 40.
	RangeDB float64
	// Hold keeps the gate open after the speaker stops, bridging the
	// pauses between words and keeping soft word endings; 0 means 250 ms.
	Hold time.Duration
	// Lookahead opens the gate this long before the first frame the
	// analysis finds active, so that soft onsets (a breathy h, an s)
	// that rise out of the noise before they are detected come through
	// whole; 0 means 50 ms. It costs nothing: the plan is known ahead.
	Lookahead time.Duration
	// Attack is the fade from closed to open, ending where Lookahead
	// begins; 0 means 20 ms.
	Attack time.Duration
	// Release is the fade from open to closed after Hold; 0 means 150 ms.
	Release time.Duration
	// BleedHold and BleedRelease replace Hold and Release when the gate
	// closes because another speaker starts: the bleed at the start of
	// a reply would otherwise pass for a whole hold. 0 means 60 and
	// 30 ms.
	BleedHold, BleedRelease time.Duration
}

// frames converts a duration to analysis frames: def when zero, 0 when
// negative, at least min otherwise.
func frames(d, def time.Duration, minFrames int) int {
	switch {
	case d == 0:
		d = def
	case d < 0:
		return 0
	}
	return max(minFrames, int(math.Round(d.Seconds()/FrameSeconds)))
}

// GatePlan returns the gate of track as a gain plan on the analysis frame
// grid: 0 dB while the gate is open, -RangeDB while it is closed, with
// the ramps of the options in dB. The noise gate (Noise) closes on the
// frames where the track is Silent, so that the gate stays open on
// anything above the floor, bleed included, unless the crossgate is on
// too. The crossgate closes on the other speakers' turns: the track's
// Bleed frames, and its Silent frames while another speech track has
// Voice (where the bleed of a reply is still below the floor), with the
// shorter BleedHold and BleedRelease. The track's Voice frames are always
// open, with Hold after them and Lookahead before them, so speech over
// another speaker stays. The crossgate applies to speech tracks only
// (RoleForeground and RoleUnchanged). With neither mode the plan is
// unity.
func GatePlan(an *Analysis, track int, o GateOptions) (dsp.GainPlan, error) {
	if an == nil || track < 0 || track >= len(an.Tracks) {
		return dsp.GainPlan{}, fmt.Errorf("%w: track %d", dsp.ErrInvalidParameter, track)
	}
	rng := o.RangeDB
	if rng == 0 {
		rng = 40
	}
	if !(rng > 0 && rng <= 200) {
		return dsp.GainPlan{}, fmt.Errorf("%w: gate range %v dB", dsp.ErrInvalidParameter, o.RangeDB)
	}
	plan := dsp.GainPlan{BlockLen: an.FrameLen}
	if !an.Tracks[track].Role.speech() {
		o.Crossgate = false // a bed carries no bleed, and is not to go quiet under the speakers
	}
	if !o.Noise && !o.Crossgate {
		return plan, nil
	}
	act := an.Tracks[track].Activity
	n := len(act)
	hold := frames(o.Hold, 250*time.Millisecond, 0)
	look := frames(o.Lookahead, 50*time.Millisecond, 0)
	attack := frames(o.Attack, 20*time.Millisecond, 1)
	release := frames(o.Release, 150*time.Millisecond, 1)
	bleedHold := frames(o.BleedHold, 60*time.Millisecond, 0)
	bleedRelease := frames(o.BleedRelease, 30*time.Millisecond, 1)
	// Another speaker talks: on this track's timeline, any other speech
	// track's Voice frames.
	var others []bool
	if o.Crossgate {
		others = an.speaking(track, n)
	}
	// kind: what each frame does without hold and lookahead.
	const (
		kOpen    = iota // open, but nothing to protect (no gate applies)
		kActive         // open, and protected by hold and lookahead
		kClosed         // closed by the noise gate
		kCrossed        // closed by the crossgate: another speaker's turn
	)
	kind := make([]uint8, n)
	for i, a := range act {
		switch {
		case a == Voice:
			kind[i] = kActive
		case o.Crossgate && (a == Bleed || others[i]):
			kind[i] = kCrossed
		case o.Noise && a == Bleed:
			kind[i] = kActive
		case o.Noise:
			kind[i] = kClosed
		}
	}
	db := make([]float64, n)
	// Hold: open for hold frames after the last active frame, or
	// bleedHold frames once another speaker's turn begins; a gate that
	// has closed stays closed until the next active frame.
	since := math.MaxInt32
	for i, k := range kind {
		switch k {
		case kActive:
			since = 0
			continue
		case kOpen:
			if since < math.MaxInt32 {
				since++
			}
			continue
		}
		if since < math.MaxInt32 {
			since++
		}
		lim := hold
		if k == kCrossed {
			lim = bleedHold
		}
		if since > lim {
			since = math.MaxInt32
			db[i] = -rng
		}
	}
	// Lookahead: open before every active frame.
	ahead := math.MaxInt32
	for i := n - 1; i >= 0; i-- {
		if kind[i] == kActive {
			ahead = 0
		} else if ahead < math.MaxInt32 {
			ahead++
		}
		if ahead <= look {
			db[i] = 0
		}
	}
	// Soft edges: the gain may rise by at most rng/attack per frame
	// (backwards, so the rise ends where the gate must be open) and fall
	// by at most rng/release per frame.
	up := rng / float64(attack)
	for i := n - 2; i >= 0; i-- {
		db[i] = math.Max(db[i], db[i+1]-up)
	}
	for i := 1; i < n; i++ {
		step := rng / float64(release)
		if kind[i] == kCrossed {
			step = rng / float64(bleedRelease)
		}
		db[i] = math.Max(db[i], db[i-1]-step)
	}
	plan.DB = db
	return plan, nil
}

// Gate applies a track's GatePlan: the adaptive noise gate and the
// crossgate.
type Gate struct {
	*dsp.PlanGain
	plan dsp.GainPlan
}

// NewGate returns src, the track of the analysis (or a filtered version
// of it, same timeline), gated as o says.
func NewGate(src audio.Source, an *Analysis, track int, o GateOptions) (*Gate, error) {
	if err := checkTrack(src, an, track); err != nil {
		return nil, err
	}
	plan, err := GatePlan(an, track, o)
	if err != nil {
		return nil, err
	}
	pg, err := dsp.NewPlanGain(src, plan)
	if err != nil {
		return nil, err
	}
	return &Gate{PlanGain: pg, plan: plan}, nil
}

// Plan returns the gain curve in use.
func (g *Gate) Plan() dsp.GainPlan { return g.plan }

// checkTrack validates the arguments every node built from an analysis
// shares.
func checkTrack(src audio.Source, an *Analysis, track int) error {
	if src == nil || an == nil {
		return fmt.Errorf("%w: nil source or analysis", dsp.ErrInvalidParameter)
	}
	if track < 0 || track >= len(an.Tracks) {
		return fmt.Errorf("%w: track %d of %d", dsp.ErrInvalidParameter, track, len(an.Tracks))
	}
	if r := src.Format().SampleRate; r != an.SampleRate {
		return fmt.Errorf("%w: source at %d Hz, analysis at %d Hz", dsp.ErrInvalidParameter, r, an.SampleRate)
	}
	return nil
}
