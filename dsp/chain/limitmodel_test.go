package chain

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp"
	"github.com/audiopost/audiopost/loudness"
)

// TestLimiterModel holds the limiter model to modelTrust's promise: where
// its gain correction is no larger than modelTrust, the limited output,
// rendered, lands within 0.05 LU of the target (dsp.FitGain's tolerance).
// The processed signals are the chain's for speech and music at targets
// where the limiter works little and where it works hard.
func TestLimiterModel(t *testing.T) {
	if testing.Short() {
		t.Skip("numeric sweep; the plain run covers it")
	}
	materials := map[string]audio.Buffer{
		"speech":  stereoOf(voice(30, 120, 1, []float64{0, -10, 4, -6})),
		"speech2": stereoOf(voice(20, 150, 3, []float64{0, 6})),
		"music":   stereoOf(music(30)),
	}
	trusted := 0
	for name, in := range materials {
		for _, target := range []float64{-13, -16} {
			cfg := DefaultConfig()
			cfg.TargetLUFS = target
			b := processedSignal(t, bufferOpener(in), cfg)
			an, hops := measureHops(t, b)
			loud := an.Loudness.Integrated
			m := newLimiterModel(hops, an.HopPeak, fs)
			for _, ceiling := range []float64{0, -1, -2, -3, -4.5} {
				g0 := target - loud
				g := m.fit(loud, target, ceiling)
				got := limitedLoudness(t, b, g, ceiling)
				msg := fmt.Sprintf("%s at %g LUFS under %g dBTP: correction %.3f dB (unlimited loss %.3f LU), rendered %.3f LUFS",
					name, target, ceiling, g-g0, target-limitedLoudness(t, b, g0, ceiling), got)
				if g-g0 > modelTrust {
					t.Log(msg + " (beyond modelTrust: checked by renders)")
					continue
				}
				trusted++
				t.Log(msg)
				if math.Abs(got-target) > 0.05 {
					t.Errorf("%s: %.3f LU off the target", msg, got-target)
				}
			}
		}
	}
	if trusted == 0 {
		t.Error("no correction within modelTrust")
	}
}

// processedSignal is the chain's processing of the input, before the
// normalization gain and the limiter.
func processedSignal(t *testing.T, open audio.Opener, cfg Config) audio.Buffer {
	t.Helper()
	p, err := New(context.Background(), open, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close() // which drops the plans build reads
	src, err := open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.pr.build(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := audio.ReadAll(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// measureHops measures b as the chain's loudness pass does: the analysis
// with its hop peaks, and the K-weighted hop sums.
func measureHops(t *testing.T, b audio.Buffer) (*dsp.Analysis, []float32) {
	t.Helper()
	var hops []float32
	a, err := dsp.NewAnalyzer(audio.Format{SampleRate: fs, Channels: len(b)}, dsp.AnalyzerOptions{NoClasses: true, HopPeaks: true,
		Loudness: loudness.Options{Mode: loudness.ModeI, OnHop: func(s float64) { hops = append(hops, float32(s)) }}})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Write(b); err != nil {
		t.Fatal(err)
	}
	return a.Finish(), hops
}

// limitedLoudness renders b through the normalization gain and the
// limiter and returns the integrated loudness.
func limitedLoudness(t *testing.T, b audio.Buffer, gainDB, ceiling float64) float64 {
	t.Helper()
	g, err := dsp.NewGain(audio.NewBufferSource(b, fs), gainDB)
	if err != nil {
		t.Fatal(err)
	}
	l, err := dsp.NewLimiter(g, ceiling)
	if err != nil {
		t.Fatal(err)
	}
	r, err := loudness.Measure(context.Background(), l, loudness.Options{Mode: loudness.ModeI})
	if err != nil {
		t.Fatal(err)
	}
	return r.Integrated
}
