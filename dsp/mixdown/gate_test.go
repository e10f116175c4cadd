package mixdown_test

import (
	"math"
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
		step    bool // 15 dB more noise from the middle on
	}{
		{"white noise -60 dBFS", -60, false, false},
		{"pink noise -50 dBFS", -50, true, false},
		{"white noise -45 dBFS", -45, false, false},
		{"white noise -60 then -45 dBFS", -60, false, true},
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
			if c.step {
				testaudio.Scale(noise[len(noise)/2:], dbAmp(15))
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

// A monologue: 20 s of speech with no pause longer than 50 ms, in noise.
// Minimum statistics must not take the quietest syllables for the floor
// (the gate would cut into quiet speech): the floor is measured within
// 3 dB of the noise, and every 100 ms of the speech that carries speech
// energy passes within 1 dB.
func TestGateMonologue(t *testing.T) {
	x, spans := testaudio.Phrases(t, fs, testaudio.Sentences[:7], 0.05, testaudio.Voices[0])
	x = append(append(make([]float64, fs), x...), make([]float64, fs)...)
	for i := range spans {
		spans[i].Start += fs
		spans[i].End += fs
	}
	mic := testaudio.Add(x, testaudio.WhiteNoise(len(x), dbAmp(-55), 9))
	an := analyse(t, [][]float64{mic}, nil, nil)
	gate := must(mixdown.NewGate(monoSource(mic), an, 0, mixdown.GateOptions{Noise: true}))
	through := planned(t, x, gate.Plan())
	speech := spans[len(spans)-1].End - spans[0].Start
	worst, cut := 0.0, 0
	for i := spans[0].Start; i+fs/10 <= spans[0].Start+speech; i += fs / 10 {
		w := []span{{Start: i, End: i + fs/10}}
		if spansDB(x, w) < -50 { // no speech to speak of in this 100 ms
			continue
		}
		d := spansDB(through, w) - spansDB(x, w)
		worst = min(worst, d)
		if d < -1 {
			cut++
		}
	}
	t.Logf("%.1f s of speech: %d stretches of 100 ms lost more than 1 dB, the worst %+.1f dB; floor %.1f dB", float64(speech)/fs, cut, worst, an.Tracks[0].NoiseDB())
	if cut > 0 {
		t.Errorf("%d stretches of 100 ms of the monologue lost more than 1 dB (worst %+.1f dB)", cut, worst)
	}
	if f := an.Tracks[0].NoiseDB(); math.Abs(f+55) > 3 {
		t.Errorf("noise floor %.1f dB, want -55 +- 3", f)
	}
}
