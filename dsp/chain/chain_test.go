package chain

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	"github.com/audiopost/audiopost/dsp"
	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/testsize"
	"github.com/audiopost/audiopost/loudness"
)

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for name, mod := range map[string]func(*Config){
		"filter":      func(c *Config) { c.Filter = 9 },
		"compression": func(c *Config) { c.MusicCompression = -1 },
		"strength":    func(c *Config) { c.SpeechStrength = math.NaN() },
		"target":      func(c *Config) { c.TargetLUFS = 3 },
		"method":      func(c *Config) { c.Method = "loud" },
		"limits":      func(c *Config) { c.MaxLRA = -1 },
		"ceiling":     func(c *Config) { c.MaxTruePeak = 1 },
		"headroom":    func(c *Config) { c.Headroom = -2 },
		"music gain":  func(c *Config) { c.MusicGainDB = math.Inf(1) },
	} {
		c := DefaultConfig()
		mod(&c)
		if err := c.Validate(); !errors.Is(err, dsp.ErrInvalidParameter) {
			t.Errorf("%s: Validate() = %v, want ErrInvalidParameter", name, err)
		}
	}
	if _, err := New(context.Background(), bufferOpener(stereoOf(voice(1, 140, 1, nil))), Config{Filter: -3}); !errors.Is(err, dsp.ErrInvalidParameter) {
		t.Errorf("New with a bad config: %v", err)
	}
}

// TestLoudnessEveryTarget measures the output of the loudness targets of
// the API with ffmpeg's ebur128 filter, for speech and for music, cycling
// the true-peak ceilings so every one is exercised too: five targets from
// -13 to -31 LUFS in the plain run (ten renders: every one of the nine
// ceilings at least once), all twelve with AUDIOPOST_LONG=1.
func TestLoudnessEveryTarget(t *testing.T) {
	if testing.Short() {
		t.Skip("numeric sweep; the plain run covers it")
	}
	need.Program(t, "ffmpeg")
	targets := testsize.Spread([]float64{-13, -14, -15, -16, -18, -19, -20, -23, -24, -26, -27, -31}, 5)
	peaks := []float64{0, -0.5, -1, -1.5, -2, -3, -4, -5, -6}
	materials := map[string]audio.Buffer{
		"speech": stereoOf(voice(30, 120, 1, []float64{0, -10, 4, -6})),
		"music":  stereoOf(music(30)),
	}
	k := 0
	for name, b := range materials {
		for _, target := range targets {
			cfg := DefaultConfig()
			cfg.TargetLUFS = target
			cfg.MaxTruePeak = peaks[k%len(peaks)]
			k++
			t.Run(fmt.Sprintf("%s/%g/%g", name, target, cfg.MaxTruePeak), func(t *testing.T) {
				path := tmp(t, "out.wav")
				st := render(t, bufferOpener(b), cfg, "wav-24bit", path)
				m := measureFFmpeg(t, path)
				t.Logf("target %g, ceiling %g: ffmpeg I %.1f LUFS, true peak %.1f dBTP; ours %.2f / %.2f; gain %.1f dB %v",
					target, cfg.MaxTruePeak, m.I, m.TruePeak, st.Output.Integrated, st.Output.TruePeak, st.Settings.NormalizationGainDB, st.Warnings)
				if math.Abs(m.I-target) > 0.3 {
					t.Errorf("integrated loudness %.1f LUFS, want %g +- 0.3", m.I, target)
				}
				if m.TruePeak > cfg.MaxTruePeak+0.1 {
					t.Errorf("true peak %.2f dBTP, want <= %g + 0.1", m.TruePeak, cfg.MaxTruePeak)
				}
			})
		}
	}
}

// Headroom is what the engine asks for ahead of lossy encoders: the
// limiter's ceiling drops by it and the loudness stays on target.
func TestHeadroomLowersTheCeiling(t *testing.T) {
	if testing.Short() {
		t.Skip("numeric measurement; the plain run covers it")
	}
	b := stereoOf(voice(20, 150, 3, []float64{0, 6}))
	cfg := DefaultConfig()
	cfg.TargetLUFS, cfg.MaxTruePeak, cfg.Headroom = -14, -1, 1.5
	p, err := New(context.Background(), bufferOpener(b), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := audio.ReadAll(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	st := p.Stats()
	if st.Settings.CeilingDBTP != -2.5 || st.Output.TruePeak > -2.5+0.05 {
		t.Errorf("ceiling %.2f, true peak %.2f dBTP; want ceiling -2.5 and the peak under it", st.Settings.CeilingDBTP, st.Output.TruePeak)
	}
	if math.Abs(st.Output.Integrated+14) > 0.2 {
		t.Errorf("loudness %.2f LUFS, want -14", st.Output.Integrated)
	}
}

func TestMaxLRAAndShortTermLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("numeric sweep; the plain run covers it")
	}
	need.Program(t, "ffmpeg")
	// A programme whose sections differ by up to 16 dB, with leveling and
	// compression off so only the loudness control can narrow the range.
	b := stereoOf(voice(64, 130, 4, []float64{0, -12, 4, -8, -2, -14, 2, -6}))
	limits := []float64{3, 6, 10}
	for _, maxLRA := range limits {
		cfg := DefaultConfig()
		cfg.Leveler, cfg.SpeechCompression, cfg.MaxLRA = false, CompressionOff, maxLRA
		path := tmp(t, "lra.wav")
		st := render(t, bufferOpener(b), cfg, "wav", path)
		m := measureFFmpeg(t, path)
		t.Logf("max LRA %g: input LRA %.1f LU, output %.1f LU (ffmpeg), loudness %.1f; %v", maxLRA, st.Input.LRA, m.LRA, m.I, st.Warnings)
		if m.LRA > maxLRA+1 {
			t.Errorf("max LRA %g: output LRA %.1f LU", maxLRA, m.LRA)
		}
		if math.Abs(m.I+16) > 0.3 {
			t.Errorf("max LRA %g: loudness %.1f LUFS, want -16", maxLRA, m.I)
		}
	}
	cfg := DefaultConfig()
	cfg.Leveler, cfg.SpeechCompression, cfg.MaxShortTerm, cfg.MaxMomentary = false, CompressionOff, 3, 8
	p, err := New(context.Background(), bufferOpener(b), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := audio.ReadAll(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	o := p.Stats().Output
	t.Logf("max S 3, max M 8: max short-term %.1f, max momentary %.1f LUFS, loudness %.1f; %v", o.MaxShortTerm, o.MaxMomentary, o.Integrated, p.Stats().Warnings)
	if o.MaxShortTerm > -16+3+0.5 || o.MaxMomentary > -16+8+0.5 {
		t.Errorf("short-term %.1f / momentary %.1f LUFS above the limits -13 / -8", o.MaxShortTerm, o.MaxMomentary)
	}
}

func TestPipelineContract(t *testing.T) {
	secs := 8.0
	switch {
	case testsize.Race:
		secs = 2 // block size 1 under the race detector: 50 s for 3 s
	case testing.Short():
		secs = 3
	}
	b := stereoOf(voice(secs, 140, 5, nil))
	cfg := DefaultConfig()
	out := audiotest.CheckSource(t, func() audio.Source {
		p, err := New(context.Background(), bufferOpener(b), cfg)
		if err != nil {
			t.Fatal(err)
		}
		return p
	})
	if out.Frames() != b.Frames() {
		t.Fatalf("%d frames out, %d in", out.Frames(), b.Frames())
	}
	if testsize.Race {
		return // allocations are counted by the plain run
	}
	// Steady-state render allocates nothing: 55 reads of 4096 frames
	// (about 5 s) stay clear of the end.
	long := stereoOf(voice(3*secs+6, 140, 5, nil))
	p, err := New(context.Background(), bufferOpener(long), cfg)
	if err != nil {
		t.Fatal(err)
	}
	buf := audio.NewBuffer(2, 4096)
	for range 4 {
		p.Read(buf)
	}
	if a := testing.AllocsPerRun(50, func() { p.Read(buf) }); a != 0 {
		t.Errorf("%v allocs per Read of the render", a)
	}
}

// The statistics come from the one loudness meter: the input reading is
// what loudness.Measure says of the input, the output reading what it
// says of the rendered output.
func TestStatsAreTheMetersReadings(t *testing.T) {
	skipUnderRace(t)
	b := stereoOf(voice(12, 140, 7, []float64{0, -8}))
	p, err := New(context.Background(), bufferOpener(b), DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	out, err := audio.ReadAll(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	st := p.Stats()
	in, _ := loudness.MeasureBuffer(b, fs, loudness.Options{})
	o, _ := loudness.MeasureBuffer(out, fs, loudness.Options{})
	for name, pair := range map[string][2]float64{
		"input I": {st.Input.Integrated, in.Integrated}, "input LRA": {st.Input.LRA, in.LRA},
		"input noise": {st.Input.NoiseLevel, in.NoiseLevel}, "output I": {st.Output.Integrated, o.Integrated},
		"output true peak": {st.Output.TruePeak, o.TruePeak},
	} {
		if math.Abs(pair[0]-pair[1]) > 1e-9 {
			t.Errorf("%s: statistics %.4f, meter %.4f", name, pair[0], pair[1])
		}
	}
}

func TestPipelineCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := New(ctx, bufferOpener(stereoOf(voice(3, 140, 5, nil))), DefaultConfig())
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("New with a cancelled context: %v", err)
	}
}
