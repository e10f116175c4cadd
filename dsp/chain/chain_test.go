package chain

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
)

func TestParseAlgorithms(t *testing.T) {
	cfg, err := ParseAlgorithms([]byte(`{"filtering": false, "filtermethod": "autoeq", "levelerstrength": 50,
		"compressor": "hard", "loudnesstarget": -23, "maxpeak": -1.5, "dualmono": "true", "loudnessmethod": "dialog",
		"maxlra": 6, "maxs": "5", "maxm": 10, "levelerstrength_music": 30, "compressor_music": "off", "musicgain": -6,
		"denoise": true, "unknown_key": [1,2]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultConfig()
	want.Filtering, want.FilterMethod, want.LevelerStrength = false, FilterAutoEQ, 50
	want.Compressor, want.LoudnessTarget, want.MaxPeak, want.DualMono = "hard", -23, -1.5, true
	want.LoudnessMethod, want.MaxLRA, want.MaxS, want.MaxM = MethodDialog, 6, 5, 10
	want.LevelerStrengthMusic, want.CompressorMusic, want.MusicGain = 30, "off", -6
	if cfg != want {
		t.Errorf("got %+v\nwant %+v", cfg, want)
	}
	if d := DefaultConfig(); d.LoudnessTarget != -16 || !d.Filtering || d.FilterMethod != FilterHighPass || d.Compressor != "auto" || d.MaxPeak != 0 {
		t.Errorf("defaults %+v", d)
	}
	// hipfilter is the documented name and wins over filtering.
	if c, _ := ParseAlgorithms([]byte(`{"filtering": true, "hipfilter": false}`)); c.Filtering {
		t.Error("hipfilter=false ignored")
	}
	_, err = ParseAlgorithms([]byte(`{"loudnesstarget": -17, "maxpeak": -0.7, "levelerstrength": 55, "compressor": "extreme",
		"leveler": "maybe", "maxlra": 7, "filtermethod": 3, "loudnesstarget_ok": 1}`))
	var fe FieldErrors
	if !errors.As(err, &fe) || !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("error %v is not FieldErrors/ErrInvalidConfig", err)
	}
	for _, k := range []string{"loudnesstarget", "maxpeak", "levelerstrength", "compressor", "leveler", "maxlra", "filtermethod"} {
		if fe[k] == "" {
			t.Errorf("no error for %s (errors: %v)", k, fe)
		}
	}
	if len(fe) != 7 {
		t.Errorf("%d errors, want 7: %v", len(fe), fe)
	}
	if _, err := ParseAlgorithms([]byte(`[1]`)); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("non-object accepted: %v", err)
	}
}

// TestLoudnessEveryTarget measures the output of every allowed target with
// ffmpeg's ebur128 filter, for speech and for music, cycling the true-peak
// ceilings so every maxpeak is exercised too.
func TestLoudnessEveryTarget(t *testing.T) {
	needTool(t, "ffmpeg")
	materials := map[string]audio.Buffer{
		"speech": stereoOf(voice(30, 120, 1, []float64{0, -10, 4, -6})),
		"music":  stereoOf(music(30)),
	}
	peaks := MaxPeaks()
	k := 0
	for name, b := range materials {
		for _, target := range Targets() {
			cfg := DefaultConfig()
			cfg.LoudnessTarget = target
			cfg.MaxPeak = peaks[k%len(peaks)]
			k++
			t.Run(fmt.Sprintf("%s/%d/%g", name, target, cfg.MaxPeak), func(t *testing.T) {
				path := tmp(t, "out.wav")
				st := render(t, bufferOpener(b), cfg, "wav-24bit", path)
				m := measureFFmpeg(t, path)
				t.Logf("target %d, maxpeak %g: ffmpeg I %.1f LUFS, true peak %.1f dBTP; ours %v / %v; gain %.1f dB %v",
					target, cfg.MaxPeak, m.I, m.TruePeak, st.Levels.Output.Loudness.V, st.Levels.Output.Peak.V, st.Settings.NormalizationGain, st.Warnings)
				if math.Abs(m.I-float64(target)) > 0.3 {
					t.Errorf("integrated loudness %.1f LUFS, want %d +- 0.3", m.I, target)
				}
				if m.TruePeak > cfg.MaxPeak+0.1 {
					t.Errorf("true peak %.2f dBTP, want <= %g + 0.1", m.TruePeak, cfg.MaxPeak)
				}
			})
		}
	}
}

func TestLossyOutputsKeepTruePeak(t *testing.T) {
	needTool(t, "ffmpeg")
	b := stereoOf(voice(20, 150, 3, []float64{0, 6}))
	for _, format := range []string{"mp3", "aac"} {
		for _, maxPeak := range []float64{0, -1} {
			t.Run(fmt.Sprintf("%s/%g", format, maxPeak), func(t *testing.T) {
				cfg := DefaultConfig()
				cfg.MaxPeak, cfg.Lossy, cfg.LoudnessTarget = maxPeak, true, -14
				ext := map[string]string{"mp3": "mp3", "aac": "m4a"}[format]
				path := tmp(t, "out."+ext)
				st, err := EncodeFile(context.Background(), bufferOpener(b), cfg, format, path, audio.EncodeOptions{}, nil)
				if err != nil {
					t.Fatal(err)
				}
				m := measureFFmpeg(t, path)
				t.Logf("%s maxpeak %g: re-decoded true peak %.2f dBTP (ffmpeg), %.2f (ours), loudness %.1f LUFS; ceiling %.2f %v",
					format, maxPeak, m.TruePeak, st.Levels.Output.Peak.V, m.I, st.Settings.Ceiling, st.Warnings)
				if m.TruePeak > maxPeak+0.2 {
					t.Errorf("re-decoded %s true peak %.2f dBTP, want <= %g + 0.2", format, m.TruePeak, maxPeak)
				}
				if math.Abs(m.I+14) > 0.5 {
					t.Errorf("re-decoded %s loudness %.1f LUFS, want -14 +- 0.5", format, m.I)
				}
			})
		}
	}
}

func TestMaxLRAAndShortTermLimits(t *testing.T) {
	needTool(t, "ffmpeg")
	// A programme whose sections differ by up to 16 dB, with leveling and
	// compression off so only the loudness control can narrow the range.
	b := stereoOf(voice(64, 130, 4, []float64{0, -12, 4, -8, -2, -14, 2, -6}))
	for _, maxLRA := range []int{3, 6, 10} {
		cfg := DefaultConfig()
		cfg.Leveler, cfg.Compressor, cfg.MaxLRA = false, "off", maxLRA
		path := tmp(t, "lra.wav")
		st := render(t, bufferOpener(b), cfg, "wav", path)
		m := measureFFmpeg(t, path)
		t.Logf("maxlra %d: input LRA %.1f LU, output %.1f LU (ffmpeg), loudness %.1f; %v", maxLRA, st.Levels.Input.LRA.V, m.LRA, m.I, st.Warnings)
		if m.LRA > float64(maxLRA)+1 {
			t.Errorf("maxlra %d: output LRA %.1f LU", maxLRA, m.LRA)
		}
		if math.Abs(m.I+16) > 0.3 {
			t.Errorf("maxlra %d: loudness %.1f LUFS, want -16", maxLRA, m.I)
		}
	}
	cfg := DefaultConfig()
	cfg.Leveler, cfg.Compressor, cfg.MaxS, cfg.MaxM = false, "off", 3, 8
	p, err := New(context.Background(), bufferOpener(b), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := audio.ReadAll(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	o := p.Stats().Levels.Output
	t.Logf("maxs 3, maxm 8: max short-term %.1f, max momentary %.1f LUFS, loudness %.1f; %v", o.MaxShortTerm.V, o.MaxMomentary.V, o.Loudness.V, p.Stats().Warnings)
	if o.MaxShortTerm.V > -16+3+0.5 || o.MaxMomentary.V > -16+8+0.5 {
		t.Errorf("short-term %.1f / momentary %.1f LUFS above the limits -13 / -8", o.MaxShortTerm.V, o.MaxMomentary.V)
	}
}

func TestPipelineContract(t *testing.T) {
	b := stereoOf(voice(8, 140, 5, nil))
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
	// Steady-state render allocates nothing.
	long := stereoOf(voice(30, 140, 5, nil))
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

func TestPipelineCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := New(ctx, bufferOpener(stereoOf(voice(5, 140, 5, nil))), DefaultConfig())
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("New with a cancelled context: %v", err)
	}
}
