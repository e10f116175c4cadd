package chain

import (
	"math"

	"github.com/audiopost/audiopost/dsp"
	"github.com/audiopost/audiopost/loudness"
)

// modelTrust is the largest gain correction, in dB, that the limiter model
// (limiterModel) may make without a render to check it. Swept over four
// synthetic voices, synthetic music and the five-minute espeak speech of
// the benchmarks, at targets -13 to -18 LUFS and ceilings 0 to -6 dBTP,
// corrections up to 1 dB landed within 0.045 LU of the target (inside
// dsp.FitGain's 0.05), those of 1 to 1.5 dB within 0.054, of 2 to 2.5 dB
// within 0.1; beyond that the limiter works hard and the model drifts by
// tenths. Larger corrections are checked by passes that render.
const modelTrust = 1.0

// limiterModel predicts what the true-peak limiter takes off the
// integrated loudness from the measurement of the processed signal before
// normalization: the K-weighted energies of its 10 ms hops and their sample
// peaks. It runs the limiter's gain curve at hop resolution: a hop whose
// peak, with the gain, would cross the ceiling needs the gain that brings
// it down to the ceiling; the gain follows the lower of that and the
// limiter's release from the hop before (dsp.LimiterRelease); and each
// hop's energy is scaled by the mean square of the gain across it, taken
// as halfway between the gains at its start and its end (three quarters at
// the end where the hop's own peak sets the gain: the peak sits inside the
// hop). The gated integration of the resulting 100 ms steps against that of
// the unlimited ones gives the loss. The sample peak stands in for the true
// peak the limiter sees, and the energy is taken as even within a hop;
// against renders the loss comes out within a few percent, slightly high.
type limiterModel struct {
	hops  []hopLevel // K-weighted sums of the hops (loudness.Options.OnHop)
	peaks []hopLevel // squared sample peaks of the hops
	beta  float64    // the limiter's release per hop: what is left of a reduction
	steps []float64  // scratch: 100 ms step energies
}

func newLimiterModel(hops, peaks []hopLevel, sampleRate int) *limiterModel {
	hopSec := float64(loudness.StepFrames(sampleRate)) / loudness.StepHops / float64(sampleRate)
	n := min(len(hops), len(peaks))
	return &limiterModel{hops: hops[:n], peaks: peaks[:n], beta: math.Exp(-hopSec / dsp.LimiterRelease),
		steps: make([]float64, 0, 2*(n/loudness.StepHops+1))}
}

// loss returns the loudness, in LU (>= 0), that a limiter at ceilingDB
// dBTP takes off the integrated loudness of the signal at gainDB.
func (m *limiterModel) loss(gainDB, ceilingDB float64) float64 {
	a := dsp.DBToGain(gainDB)
	c := dsp.DBToGain(ceilingDB - dsp.LimiterMargin)
	c2a := c * c / (a * a) // a hop is limited where its squared peak exceeds this
	pw := hopPowers()
	n := len(m.hops) / loudness.StepHops
	before, after := m.steps[:n], m.steps[n:2*n]
	g := 1.0
	limited := false
	for s := range n {
		var eb, ea float64
		for h := s * loudness.StepHops; h < (s+1)*loudness.StepHops; h++ {
			e := float64(pw[m.hops[h]])
			eb += e
			need := 1.0
			if pk2 := float64(pw[m.peaks[h]]); pk2 > c2a {
				need = c / (math.Sqrt(pk2) * a)
			}
			rel := 1 - (1-g)*m.beta
			next := min(need, rel)
			ms := 0.5*g*g + 0.5*next*next
			if need < rel {
				ms = 0.25*g*g + 0.75*next*next
				limited = true
			}
			g = next
			ea += e * ms
		}
		before[s] = eb * a * a
		after[s] = ea * a * a
	}
	if !limited {
		return 0
	}
	return max(0, loudness.IntegratedFromSteps(before)-loudness.IntegratedFromSteps(after))
}

// fit returns the gain that brings a signal measured at loud LUFS to
// target after the limiter, by the model: secant steps on the predicted
// loudness, which grows monotonically with the gain.
func (m *limiterModel) fit(loud, target, ceilingDB float64) float64 {
	g := target - loud
	f := func(g float64) float64 { return loud + g - m.loss(g, ceilingDB) - target }
	y := f(g)
	prevG, prevY := math.NaN(), math.NaN()
	for range 30 {
		if math.Abs(y) < 0.001 {
			break
		}
		step := -y
		if !math.IsNaN(prevG) && g != prevG {
			step = -y / math.Max((y-prevY)/(g-prevG), 0.05)
		}
		prevG, prevY = g, y
		g += math.Max(-20, math.Min(20, step))
		y = f(g)
	}
	return g
}
