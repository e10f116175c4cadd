package engine_test

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/internal/testsize"
	"github.com/audiopost/audiopost/loudness"
	"github.com/audiopost/audiopost/production/engine"

	"github.com/audiopost/audiopost/audio"
)

// goertzelDB is the power in dB of x at frequency f (Hz) at rate fs.
func goertzelDB(x []float64, f, fs float64) float64 {
	w := 2 * math.Pi * f / fs
	c := 2 * math.Cos(w)
	var s1, s2 float64
	for _, v := range x {
		s1, s2 = v+c*s1-s2, s1
	}
	p := s1*s1 + s2*s2 - c*s1*s2
	return 10 * math.Log10(p/float64(len(x)*len(x))+1e-300)
}

// An outro recorded at 44.1 kHz under a 48 kHz main input is resampled,
// not played 9 % fast: its 1 kHz tone stays at 1 kHz and its length at
// one second of output; its level is brought to the loudness target.
func TestEngineOutroOtherSampleRate(t *testing.T) {
	need.Programs(t, "ffmpeg")
	// A tone's pitch, length and level (3.7 s of the race run's
	// CPU): the race run takes an intro's passes through the engine
	// in TestInputsDecodedOnce.
	testsize.SkipRace(t, "numbers only, checked by the plain run")
	const rate, outroRate = 48000, 44100
	dir, outDir := t.TempDir(), t.TempDir()
	main := filepath.Join(dir, "main.wav")
	testaudio.WriteWAV(t, main, testaudio.SpeechLike(rate, 6, 0.1), rate)
	tone := audio.NewBuffer(2, outroRate)
	for i := range tone[0] {
		v := 0.1 * math.Sin(2*math.Pi*1000*float64(i)/outroRate)
		tone[0][i], tone[1][i] = v, v
	}
	outro := filepath.Join(dir, "outro.wav")
	testaudio.WriteWAV(t, outro, tone, outroRate)

	p := newProduction(t, `{
		"input_file": "https://example.org/main.wav", "output_basename": "ep",
		"multi_input_files": [{"type": "outro", "id": "end", "input_file": "https://example.org/outro.wav"}],
		"output_files": [{"format": "flac"}]}`)
	_, err := (&engine.Engine{}).Run(context.Background(), p,
		engine.Inputs{Main: main, Multi: map[string]string{"end": outro}},
		engine.DirWriter{Dir: outDir}, nil)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	out, outRate := testaudio.ReadFile(t, filepath.Join(outDir, "ep.flac"))
	if outRate != rate {
		t.Fatalf("output at %d Hz", outRate)
	}
	if d := out.Frames() - 7*rate; d < -64 || d > 64 {
		t.Errorf("output has %d frames, want 7 s = %d (within 64)", out.Frames(), 7*rate)
	}
	// The middle half of the outro: the tone at 1 kHz, nothing at the
	// pitch an unresampled outro would have (1000*48000/44100 Hz).
	seg := out[0][6*rate+rate/4 : 6*rate+3*rate/4]
	at, fast := goertzelDB(seg, 1000, rate), goertzelDB(seg, 1000*float64(rate)/outroRate, rate)
	t.Logf("outro: 1000 Hz %.1f dB, 1088 Hz %.1f dB", at, fast)
	if at-fast < 40 {
		t.Errorf("1 kHz tone only %.1f dB above 1088 Hz: not resampled", at-fast)
	}
	// The production normalises its loudness, so the outro is brought
	// to the target (-16 LUFS) too, by one gain.
	res, err := loudness.MeasureBuffer(audio.Buffer{out[0][6*rate+rate/10 : 7*rate], out[1][6*rate+rate/10 : 7*rate]}, rate, loudness.Options{Mode: loudness.ModeI})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(res.Integrated+16) > 0.5 {
		t.Errorf("outro at %.2f LUFS, want the target -16", res.Integrated)
	}
}
