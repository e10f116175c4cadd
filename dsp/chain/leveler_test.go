package chain

import (
	"context"
	"fmt"
	"math"
	"os/exec"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/loudness"
)

var sentences = []string{
	"Welcome back to the show, today we talk about audio production.",
	"Thanks for having me, I am really glad to be here again.",
	"Let us start with the basics of recording a podcast at home.",
	"The most important thing is a quiet room and a decent microphone.",
	"What about the levels, should I worry about them while recording?",
	"Not too much, keep some headroom and let the software do the rest.",
	"That sounds easy enough, even for beginners like our listeners.",
	"Exactly, and afterwards everything should sound nice and even.",
}

// twoSpeakers synthesizes a dialogue with espeak-ng: alternating sentences
// by two voices, the second quietDB quieter, 0.6 s pauses, a -60 dBFS
// noise floor. It returns the mono programme, its rate and each
// sentence's speaker and frame range.
func twoSpeakers(t *testing.T, quietDB float64) (audio.Buffer, int, [][3]int) {
	espeak := need.Program(t, "espeak-ng")
	ctx := context.Background()
	var x []float64
	var segs [][3]int
	rate := 0
	voices := []string{"en-us", "en-gb+m3"}
	for i, s := range sentences {
		path := tmp(t, fmt.Sprintf("s%d.wav", i))
		if out, err := exec.Command(espeak, "-v", voices[i%2], "-s", "165", "-w", path, s).CombinedOutput(); err != nil {
			t.Fatalf("espeak-ng: %v\n%s", err, out)
		}
		d, err := audio.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := audio.ReadAll(ctx, d)
		d.Close()
		if err != nil {
			t.Fatal(err)
		}
		rate = d.Format().SampleRate
		g := 0.5
		if i%2 == 1 {
			g *= math.Pow(10, -quietDB/20)
		}
		start := len(x)
		for _, v := range b[0] {
			x = append(x, g*v)
		}
		segs = append(segs, [3]int{i % 2, start, len(x)})
		x = append(x, make([]float64, rate*6/10)...)
	}
	r := xorshift(3)
	for i := range x {
		x[i] += 0.001 * r.next() // -60 dBFS RMS noise floor (uniform)
	}
	return audio.Buffer{x}, rate, segs
}

// speakerDiff measures each speaker's sentences (concatenated) with the
// loudness meter and returns speaker 0 minus speaker 1 in LU.
func speakerDiff(t *testing.T, b audio.Buffer, rate int, segs [][3]int) float64 {
	var parts [2][]float64
	for _, s := range segs {
		parts[s[0]] = append(parts[s[0]], b[0][s[1]:s[2]]...)
	}
	var l [2]float64
	for k := range parts {
		r, err := loudness.MeasureBuffer(audio.Buffer{parts[k]}, rate, loudness.Options{Mode: loudness.ModeI})
		if err != nil {
			t.Fatal(err)
		}
		l[k] = r.Integrated
	}
	return l[0] - l[1]
}

func TestLevelerTwoSpeakersEspeak(t *testing.T) {
	if testing.Short() {
		t.Skip("numeric measurement; the plain run covers it")
	}
	in, rate, segs := twoSpeakers(t, 18)
	inDiff := speakerDiff(t, in, rate, segs)
	open := func(ctx context.Context) (audio.Source, error) { return audio.NewBufferSource(in, rate), nil }
	for _, tc := range []struct {
		strength int
		lo, hi   float64 // allowed |difference| after, in LU
	}{
		{100, 0, 1.5},
		{50, 0.35 * inDiff, 0.65 * inDiff},
		{0, inDiff - 1, inDiff + 1},
	} {
		cfg := DefaultConfig()
		cfg.SpeechStrength = float64(tc.strength) / 100
		if tc.strength < 100 {
			// Unleveled, the loud speaker's peaks would hit the limiter at
			// -16 LUFS and lose loudness to it; -23 isolates the leveler.
			cfg.TargetLUFS = -23
		}
		p, err := New(context.Background(), open, cfg)
		if err != nil {
			t.Fatal(err)
		}
		out, err := audio.ReadAll(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		d := speakerDiff(t, out, rate, segs)
		st := p.Stats()
		t.Logf("leveler strength %d%%: speakers differ by %.2f LU in, %.2f LU out (compressor %s, output %.1f LUFS, noise %.1f -> gain min %.1f dB)",
			tc.strength, inDiff, d, st.Settings.SpeechCompression, st.Output.Integrated, st.Input.NoiseLevel, st.GainMinDB)
		if math.Abs(d) < tc.lo || math.Abs(d) > tc.hi {
			t.Errorf("leveler strength %d%%: difference %.2f LU, want |d| in [%.1f, %.1f]", tc.strength, d, tc.lo, tc.hi)
		}
	}
}
