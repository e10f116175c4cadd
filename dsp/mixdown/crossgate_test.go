package mixdown_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp"
	"github.com/audiopost/audiopost/dsp/mixdown"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// planned returns x through a plan (the same gain the node applies to the
// whole microphone, applied to one of its components).
func planned(t testing.TB, x []float64, plan dsp.GainPlan) []float64 {
	t.Helper()
	return applyGain(t, x, func(s audio.Source) audio.Source {
		pg, err := dsp.NewPlanGain(s, plan)
		if err != nil {
			t.Fatal(err)
		}
		return pg
	})
}

// The crossgate acceptance: a guest microphone carrying the host's voice
// 20 dB down through a room, and its own low noise floor. During the
// host's speech the bleed on the processed guest track must drop by at
// least 15 dB, and the guest's speech must come through with an SI-SDR
// of at least 15 dB against the guest's clean speech as its microphone
// recorded it. Both directions are checked (the host microphone carries
// the guest's bleed too), in several conversations.
func TestCrossgate(t *testing.T) {
	cases := []struct {
		name     string
		gap      float64 // pause between turns, s
		gainDB   []float64
		coupling float64
		noise    float64
		gate     bool // the noise gate too
	}{
		{"turns 0.8 s", 0.8, []float64{0, 0}, -20, -65, false},
		{"turns 0.8 s with noise gate", 0.8, []float64{0, 0}, -20, -65, true},
		{"quick turns 0.25 s", 0.25, []float64{0, 0}, -20, -65, false},
		{"guest 15 dB quieter", 0.6, []float64{0, -15}, -20, -65, false},
		{"guest 15 dB louder", 0.6, []float64{0, 15}, -20, -65, false},
		{"bleed -12 dB", 0.6, []float64{0, 0}, -12, -65, false},
		{"noise -50 dBFS", 0.6, []float64{0, 0}, -20, -50, true},
	}
	if testing.Short() {
		cases = cases[1:2]
	}
	texts := [][]string{testaudio.Sentences[0:3], testaudio.Sentences[3:6]}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// The recording and its analysis do not depend on the noise
			// gate: the two cases of turns 0.8 s apart share them.
			type scene struct {
				clean, mics, bleed [][]float64
				spans              [][]span
				an                 *mixdown.Analysis
			}
			sc := cached(fmt.Sprint("crossgate ", c.gap, c.gainDB, c.coupling, c.noise), func() scene {
				clean, spans := conversation(t, texts, testaudio.Voices[:2], 1, c.gap, 1)
				mics, bleed := microphones(clean, c.gainDB, c.coupling, c.noise)
				return scene{clean, mics, bleed, spans, analyse(t, mics, nil, nil)}
			})
			clean, mics, bleed, spans, an := sc.clean, sc.mics, sc.bleed, sc.spans, sc.an
			for g := range mics {
				h := 1 - g
				gate, err := mixdown.NewGate(monoSource(mics[g]), an, g, mixdown.GateOptions{Crossgate: true, Noise: c.gate})
				if err != nil {
					t.Fatal(err)
				}
				out := testaudio.ReadAll(t, gate)[0]
				own := testaudio.Scale(append([]float64(nil), clean[g]...), dsp.DBToGain(c.gainDB[g]))
				other := minus(spans[h], spans[g], fs/10)
				drop := spansDB(bleed[g], other) - spansDB(planned(t, bleed[g], gate.Plan()), other)
				sdrIn, sdrOut := testaudio.SISDR(own, mics[g]), testaudio.SISDR(own, out)
				keep := spansDB(out, spans[g]) - spansDB(mics[g], spans[g])
				// Onsets: the first 20 ms of every phrase, through the gain.
				through := planned(t, own, gate.Plan())
				onset := 0.0
				for _, s := range spans[g] {
					on := []span{{Start: s.Start, End: s.Start + fs/50}}
					onset = min(onset, spansDB(through, on)-spansDB(own, on))
				}
				if onset < -1 {
					t.Errorf("track %d: a phrase's first 20 ms at %+.2f dB, want within 1 dB", g, onset)
				}
				t.Logf("track %d: bleed during the other's speech -%.1f dB; SI-SDR %.1f dB (unprocessed %.1f); own speech %+.2f dB, worst onset %+.2f dB; coupling measured %.1f dB",
					g, drop, sdrOut, sdrIn, keep, onset, an.Tracks[g].Coupling[h])
				if drop < 15 {
					t.Errorf("track %d: bleed down %.1f dB, want >= 15", g, drop)
				}
				if sdrOut < 15 {
					t.Errorf("track %d: SI-SDR %.1f dB, want >= 15", g, sdrOut)
				}
				if keep < -1 {
					t.Errorf("track %d: own speech %.2f dB, want within 1 dB", g, keep)
				}
			}
		})
	}
}

// Speech over the other speaker is kept: the guest interrupts the host
// in the middle of a phrase, and that phrase passes the crossgate within
// 1 dB while the bleed around it is removed.
func TestCrossgateKeepsOverlap(t *testing.T) {
	v := testaudio.Voices[:2]
	clean, spans := place(t, v, 16, []phrase{
		{0, testaudio.Sentences[4], 0.5},
		{1, "Yes, exactly.", 1.5}, // over the host
		{1, testaudio.Sentences[1], 6},
		{0, testaudio.Sentences[7], 10},
		{1, "Right, right.", 11.5}, // over the host
	})
	mics, _ := microphones(clean, []float64{0, -6}, -20, -65)
	an := analyse(t, mics, nil, nil)
	for g := range mics {
		gate, err := mixdown.NewGate(monoSource(mics[g]), an, g, mixdown.GateOptions{Crossgate: true, Noise: true})
		if err != nil {
			t.Fatal(err)
		}
		out := testaudio.ReadAll(t, gate)[0]
		for k, s := range spans[g] {
			d := spansDB(out, []span{s}) - spansDB(mics[g], []span{s})
			t.Logf("track %d phrase %d: %+.2f dB", g, k, d)
			if d < -1 {
				t.Errorf("track %d phrase %d (%.2f-%.2f s) lost %.2f dB", g, k, float64(s.Start)/fs, float64(s.End)/fs, -d)
			}
		}
	}
}

// Three speakers, each microphone carrying both others' bleed: the same
// acceptance for every microphone.
func TestCrossgateThreeSpeakers(t *testing.T) {
	if testing.Short() {
		t.Skip("a robustness case of TestCrossgate")
	}
	texts := [][]string{testaudio.Sentences[0:2], testaudio.Sentences[2:4], testaudio.Sentences[4:6]}
	clean, spans := conversation(t, texts, testaudio.Voices[:3], 1, 0.6, 1)
	gains := []float64{0, -8, 5}
	mics, bleed := microphones(clean, gains, -20, -62)
	an := analyse(t, mics, nil, nil)
	for g := range mics {
		gate, err := mixdown.NewGate(monoSource(mics[g]), an, g, mixdown.GateOptions{Crossgate: true, Noise: true})
		if err != nil {
			t.Fatal(err)
		}
		out := testaudio.ReadAll(t, gate)[0]
		var others []span
		for h := range mics {
			if h != g {
				others = append(others, minus(spans[h], spans[g], fs/10)...)
			}
		}
		own := testaudio.Scale(append([]float64(nil), clean[g]...), dsp.DBToGain(gains[g]))
		drop := spansDB(bleed[g], others) - spansDB(planned(t, bleed[g], gate.Plan()), others)
		sdr := testaudio.SISDR(own, out)
		t.Logf("track %d: bleed -%.1f dB, SI-SDR %.1f dB (unprocessed %.1f), couplings %.1f", g, drop, sdr, testaudio.SISDR(own, mics[g]), an.Tracks[g].Coupling)
		if drop < 15 || sdr < 15 {
			t.Errorf("track %d: bleed down %.1f dB, SI-SDR %.1f dB; want >= 15 and >= 15", g, drop, sdr)
		}
	}
}

// The couplings are measured whatever the talk time and the microphone
// gains: the host says one phrase, the guest six, and the guest's whole
// microphone (voice, bleed and noise) is 15 dB hotter or colder, so the
// host reaches it at -5 or -35 dB relative to the host's own track.
func TestCrossgateLopsided(t *testing.T) {
	texts := [][]string{{testaudio.Sentences[0]}, testaudio.Sentences[1:7]}
	clean, spans := conversation(t, texts, testaudio.Voices[:2], 1, 0.5, 1)
	for k, micGain := range []float64{15, -15} {
		if testing.Short() && k > 0 {
			break
		}
		mics, bleed := microphones(clean, []float64{0, 0}, -20, -65)
		testaudio.Scale(mics[1], dsp.DBToGain(micGain))
		testaudio.Scale(bleed[1], dsp.DBToGain(micGain))
		an := analyse(t, mics, nil, nil)
		for g := range mics {
			h := 1 - g
			gate := must(mixdown.NewGate(monoSource(mics[g]), an, g, mixdown.GateOptions{Crossgate: true, Noise: true}))
			out := testaudio.ReadAll(t, gate)[0]
			other := minus(spans[h], spans[g], fs/10)
			drop := spansDB(bleed[g], other) - spansDB(planned(t, bleed[g], gate.Plan()), other)
			keep := spansDB(out, spans[g]) - spansDB(mics[g], spans[g])
			want := -20 + []float64{-micGain, micGain}[g]
			c := an.Tracks[g].Coupling[h]
			t.Logf("guest microphone %+.0f dB, track %d: coupling %.1f dB (true %.0f), bleed -%.1f dB, own speech %+.2f dB", micGain, g, c, want, drop, keep)
			if math.Abs(c-want) > 3 || drop < 15 || keep < -1 {
				t.Errorf("track %d: coupling %.1f dB, bleed down %.1f dB, own speech %+.2f dB; want %.0f +- 3, >= 15, within 1 dB", g, c, drop, keep, want)
			}
		}
	}
}
