package dsp

import (
	"fmt"

	"github.com/audiopost/audiopost/audio"
)

// GainPlan is a gain curve decided ahead of time: one value in dB per
// analysis block of BlockLen frames, applied at the block's centre and
// interpolated linearly (in amplitude) between centres. Leveling, loudness
// range control and short-term/momentary limits are all GainPlans computed
// from a previous pass, which is what lets them look ahead without delaying
// the signal.
type GainPlan struct {
	BlockLen int
	DB       []float64
}

// PlanGain applies a GainPlan to its source.
type PlanGain struct {
	src   audio.Source
	ch    int
	half  int
	block int
	// db is the plan's curve; gains are converted per block as the
	// render reaches it (two per block of 10-100 ms cost nothing), so a
	// node holds no copy of an hour-long plan.
	db  []float64
	pos int64 // absolute frame index of the next frame
}

// NewPlanGain returns src with plan applied. Frames past the end of the
// plan keep its last gain; an empty plan is unity gain.
func NewPlanGain(src audio.Source, plan GainPlan) (*PlanGain, error) {
	if plan.BlockLen < 1 && len(plan.DB) > 0 {
		return nil, fmt.Errorf("%w: gain plan block length %d", ErrInvalidParameter, plan.BlockLen)
	}
	db := plan.DB
	if len(db) == 0 {
		db = []float64{0}
		plan.BlockLen = 1
	}
	return &PlanGain{src: src, ch: src.Format().Channels, half: plan.BlockLen / 2, block: plan.BlockLen, db: db}, nil
}

// StartAt places the source's first frame at frame of the plan, for a
// render that starts part way into the programme. Call it before the
// first Read.
func (p *PlanGain) StartAt(frame int64) { p.pos = frame }

// Format implements audio.Source.
func (p *PlanGain) Format() audio.Format { return p.src.Format() }

// Read implements audio.Source.
func (p *PlanGain) Read(dst audio.Buffer) (int, error) {
	if err := checkShape(dst, p.ch); err != nil {
		return 0, err
	}
	n, err := p.src.Read(dst)
	i := 0
	for i < n {
		// Segment between the centres of blocks k and k+1.
		rel := p.pos + int64(i) - int64(p.half)
		var k int64
		if rel >= 0 {
			k = rel / int64(p.block)
		} else {
			k = -1
		}
		segStart := k*int64(p.block) + int64(p.half)
		g0 := p.at(k)
		g1 := p.at(k + 1)
		end := min(n, int(segStart+int64(p.block)-p.pos))
		if k < 0 {
			end = min(n, int(int64(p.half)-p.pos))
		}
		if g0 == g1 {
			if g0 != 1 {
				for c := range dst {
					scaleBy(dst[c][i:end], g0)
				}
			}
		} else {
			step := (g1 - g0) / float64(p.block)
			off := p.pos + int64(i) - segStart
			for c := range dst {
				ramp(dst[c][i:end], g0, step, off)
			}
		}
		i = end
	}
	p.pos += int64(n)
	return n, err
}

// rampGo multiplies x[j] by g0 + step*(off+j): the gain between two
// block centres, off frames past the first. ramp is rampGo, or a kernel
// that computes the same values.
func rampGo(x []float64, g0, step float64, off int64) {
	for j := range x {
		x[j] *= g0 + step*float64(off+int64(j))
	}
}

// scaleByGo multiplies x by g. scaleBy is scaleByGo, or a kernel that
// computes the same values.
func scaleByGo(x []float64, g float64) {
	for j := range x {
		x[j] *= g
	}
}

func (p *PlanGain) at(k int64) float64 {
	k = min(max(k, 0), int64(len(p.db)-1))
	return DBToGain(p.db[k])
}
