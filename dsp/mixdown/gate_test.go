package mixdown_test

import (
	"testing"

	"github.com/audiopost/audiopost/dsp/mixdown"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// words are single words, many of them with soft onsets (fricatives,
// breathy h, weak stops) that rise out of the noise before they are loud.
var words = []string{"hello", "sea", "fish", "three", "shells", "very", "thank", "summer", "zero", "people", "kind", "after"}

// The gate acceptance: words separated by pauses longer than the hold, in
// white or pink noise; in the pauses the noise must drop by 20 dB or more,
// and the first 20 ms of every word must pass within 1 dB.
func TestGate(t *testing.T) {
	cases := []struct {
		name    string
		noiseDB float64
		pink    bool
	}{
		{"white noise -60 dBFS", -60, false},
		{"pink noise -50 dBFS", -50, true},
		{"white noise -45 dBFS", -45, false},
	}
	if testing.Short() {
		cases = cases[:1]
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var ps []phrase
			for i, w := range words {
				ps = append(ps, phrase{0, w, 0.8 + 1.6*float64(i)})
			}
			clean, spans := place(t, testaudio.Voices[:1], 0.8+1.6*float64(len(words))+0.5, ps)
			x := clean[0]
			var noise []float64
			if c.pink {
				noise = testaudio.PinkNoise(len(x), dbAmp(c.noiseDB), 7)
			} else {
				noise = testaudio.WhiteNoise(len(x), dbAmp(c.noiseDB), 7)
			}
			mic := testaudio.Add(x, noise)
			an := analyse(t, [][]float64{mic}, nil, nil)
			gate, err := mixdown.NewGate(monoSource(mic), an, 0, mixdown.GateOptions{Noise: true})
			if err != nil {
				t.Fatal(err)
			}
			plan := gate.Plan()
			pauses := testaudio.Complement(spans[0], len(x), fs*45/100)
			drop := spansDB(noise, pauses) - spansDB(planned(t, noise, plan), pauses)
			t.Logf("noise in the pauses down %.1f dB", drop)
			if drop < 20 {
				t.Errorf("noise in the pauses down %.1f dB, want >= 20", drop)
			}
			through := planned(t, x, plan)
			worst := 0.0
			for k, s := range spans[0] {
				on := []span{{Start: s.Start, End: s.Start + fs/50}}
				d := spansDB(through, on) - spansDB(x, on)
				worst = min(worst, d)
				if d < -1 {
					t.Errorf("word %q: first 20 ms at %+.2f dB, want within 1 dB", words[k], d)
				}
			}
			t.Logf("worst word onset (first 20 ms) %+.3f dB", worst)
		})
	}
}

func dbAmp(db float64) float64 { return testaudio.Scale([]float64{1}, pow10(db/20))[0] }
