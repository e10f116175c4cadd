package mixdown_test

import (
	"math"
	"testing"

	"github.com/audiopost/audiopost/dsp/mixdown"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// lowpass is a one-pole low-pass at fc Hz.
func lowpass(x []float64, fc float64) []float64 {
	a := 1 - math.Exp(-2*math.Pi*fc/fs)
	y := make([]float64, len(x))
	var s float64
	for i, v := range x {
		s += a * (v - s)
		y[i] = s
	}
	return y
}

// A harder room: each microphone hears its own speaker with reverb, the
// other speaker low-passed (off axis, further away) through a longer
// reverb 16 dB down, and pink noise at -55 dBFS; turns are 0.4 s apart.
// The crossgate acceptance holds, and no phrase onset is clipped.
func TestCrossgateRoom(t *testing.T) {
	if testing.Short() {
		t.Skip("a robustness case of TestCrossgate")
	}
	texts := [][]string{testaudio.Sentences[0:4], testaudio.Sentences[4:8]}
	clean, spans := conversation(t, texts, testaudio.Voices[:2], 1, 0.4, 1)
	n := len(clean[0])
	var mics, bleeds [][]float64
	for g := range clean {
		h := 1 - g
		own := room(clean[g], 0, 0.3) // own mic: direct + reverb 10 dB down
		bl := testaudio.Scale(lowpass(room(clean[h], 144, 0.6), 2500), 0.15)
		noise := testaudio.PinkNoise(n, dbAmp(-55), uint64(g+5))
		mic := make([]float64, n)
		for i := range mic {
			mic[i] = own[i] + bl[i] + noise[i]
		}
		mics = append(mics, mic)
		bleeds = append(bleeds, bl)
	}
	an := analyse(t, mics, nil, nil)
	for g := range mics {
		h := 1 - g
		gate := must(mixdown.NewGate(monoSource(mics[g]), an, g, mixdown.GateOptions{Crossgate: true, Noise: true}))
		out := testaudio.ReadAll(t, gate)[0]
		own := room(clean[g], 0, 0.3)
		other := minus(spans[h], spans[g], fs/10)
		drop := spansDB(bleeds[g], other) - spansDB(planned(t, bleeds[g], gate.Plan()), other)
		through := planned(t, own, gate.Plan())
		onset := 0.0
		for _, s := range spans[g] {
			on := []span{{Start: s.Start, End: s.Start + fs/50}}
			onset = min(onset, spansDB(through, on)-spansDB(own, on))
		}
		sdr := testaudio.SISDR(own, out)
		t.Logf("track %d: bleed -%.1f dB, SI-SDR %.1f dB (unprocessed %.1f), worst onset %+.2f dB, coupling measured %.1f dB",
			g, drop, sdr, testaudio.SISDR(own, mics[g]), onset, an.Tracks[g].Coupling[h])
		if drop < 15 || sdr < 15 || onset < -1 {
			t.Errorf("track %d: bleed down %.1f dB, SI-SDR %.1f dB, onset %+.2f dB; want >= 15, >= 15, within 1 dB", g, drop, sdr, onset)
		}
	}
}
