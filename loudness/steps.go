package loudness

import "sync"

// Analyses and gain plans see a stream as the sequence of its 100 ms step
// energies (Options.OnStep). The functions here derive loudness from such a
// sequence with the meter's own definitions, so that a plan computed from
// steps and a meter reading the rendered stream agree.

// Momentary and short-term windows in steps.
const (
	MomentarySteps = stepsM
	ShortTermSteps = stepsS
)

// WindowLoudness returns the loudness in LUFS of every window of w
// consecutive steps: element j is the window of steps [j, j+w). With w =
// MomentarySteps it is the momentary loudness at a 100 ms hop, with
// ShortTermSteps the short-term loudness. Windows of silence are -Inf.
func WindowLoudness(steps []float64, w int) []float64 {
	if w < 1 || len(steps) < w {
		return nil
	}
	out := make([]float64, len(steps)-w+1)
	var s float64
	for i := 0; i < w; i++ {
		s += steps[i]
	}
	out[0] = energyToLUFS(max(s, 0) / float64(w))
	for i := w; i < len(steps); i++ {
		s += steps[i] - steps[i-w]
		if (i-w+1)%stepsS == 0 {
			// Re-sum now and then so rounding cannot accumulate.
			s = 0
			for _, v := range steps[i-w+1 : i+1] {
				s += v
			}
		}
		out[i-w+1] = energyToLUFS(max(s, 0) / float64(w))
	}
	return out
}

// IntegratedFromSteps returns the BS.1770 gated integrated loudness in
// LUFS of a stream given its step energies: 400 ms gating blocks every
// 100 ms, built from four steps each, gated as the Meter gates them. It is
// -Inf for silence or fewer than four steps.
func IntegratedFromSteps(steps []float64) float64 {
	h := stepHistograms.Get().(*histogram)
	defer stepHistograms.Put(h)
	h.reset()
	var s float64
	for i, v := range steps {
		s += v
		if i >= stepsM {
			s -= steps[i-stepsM]
		}
		if i >= stepsM-1 {
			h.add(max(s, 0) / stepsM)
		}
	}
	return h.gated(-10)
}

// stepHistograms are IntegratedFromSteps' histograms (320 KB each): the
// limiter model calls it twice at every step of its fit, which made
// megabytes of garbage on a long programme.
var stepHistograms = sync.Pool{New: func() any { return newHistogram() }}

// EnergyLUFS converts a channel-weighted K-weighted mean square (a step's
// energy) to LUFS; 0 is -Inf, the package's convention for silence.
func EnergyLUFS(meanSquare float64) float64 { return energyToLUFS(meanSquare) }
