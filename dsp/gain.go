package dsp

import (
	"fmt"
	"math"

	"github.com/audiopost/audiopost/audio"
)

// Gain multiplies its source by a gain in dB. Changes made with SetGain are
// smoothed by a one-pole ramp (time constant GainSmoothing) so that they do
// not click; the gain given to NewGain applies from the first frame.
type Gain struct {
	src    audio.Source
	ch     int
	cur    float64 // linear gain now
	target float64 // linear gain the ramp converges to
	coef   float64 // per-frame smoothing coefficient
}

// GainSmoothing is the time constant of gain changes, in seconds: short
// enough to follow a fade, long enough not to modulate low frequencies.
const GainSmoothing = 0.02

// NewGain returns src scaled by db decibels.
func NewGain(src audio.Source, db float64) (*Gain, error) {
	if math.IsNaN(db) || math.IsInf(db, 1) {
		return nil, fmt.Errorf("%w: gain %v dB", ErrInvalidParameter, db)
	}
	g := DBToGain(db)
	fs := float64(src.Format().SampleRate)
	return &Gain{src: src, ch: src.Format().Channels, cur: g, target: g,
		coef: 1 - math.Exp(-1/(GainSmoothing*fs))}, nil
}

// SetGain changes the gain; the change is ramped in over about
// 5*GainSmoothing seconds from the next frame read.
func (g *Gain) SetGain(db float64) { g.target = DBToGain(db) }

// GainDB reports the gain in effect at the next frame.
func (g *Gain) GainDB() float64 { return GainToDB(g.cur) }

// Format implements audio.Source.
func (g *Gain) Format() audio.Format { return g.src.Format() }

// Read implements audio.Source.
func (g *Gain) Read(dst audio.Buffer) (int, error) {
	if err := checkShape(dst, g.ch); err != nil {
		return 0, err
	}
	n, err := g.src.Read(dst)
	if n == 0 {
		return n, err
	}
	if g.cur == g.target {
		if g.cur != 1 {
			for c := range dst {
				x := dst[c][:n]
				for i := range x {
					x[i] *= g.cur
				}
			}
		}
		return n, err
	}
	// Ramp frame by frame, identical on every channel, so the result does
	// not depend on where blocks end.
	cur := g.cur
	for i := 0; i < n; i++ {
		cur += (g.target - cur) * g.coef
		if math.Abs(cur-g.target) < 1e-9*g.target {
			cur = g.target
		}
		for c := range dst {
			dst[c][i] *= cur
		}
	}
	g.cur = cur
	return n, err
}
