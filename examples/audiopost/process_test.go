package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/loudness"
)

// writeTestWAV writes 12 s of a quiet, dynamic tone-and-noise programme.
func writeTestWAV(t *testing.T, path string) {
	t.Helper()
	const fs = 48000
	b := audio.NewBuffer(2, 12*fs)
	s := uint64(7)
	for i := range b[0] {
		s ^= s << 13
		s ^= s >> 7
		s ^= s << 17
		nz := float64(s>>11)/float64(1<<53)*2 - 1
		tt := float64(i) / fs
		env := 0.5 + 0.5*math.Sin(2*math.Pi*3*tt)
		if int(tt)%4 == 3 {
			env *= 0.1
		}
		v := env * (0.05*math.Sin(2*math.Pi*220*tt) + 0.02*math.Sin(2*math.Pi*660*tt) + 0.01*nz)
		b[0][i], b[1][i] = v, v
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	enc, err := audio.NewEncoder(context.Background(), "wav", f, audio.Format{SampleRate: fs, Channels: 2}, audio.EncodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := audio.Copy(context.Background(), enc, audio.NewBufferSource(b, fs)); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestProcessWAVToFLAC(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.wav"), filepath.Join(dir, "out.flac")
	writeTestWAV(t, in)
	preset := filepath.Join(dir, "preset.json")
	os.WriteFile(preset, []byte(`{"preset_name": "x", "algorithms": {"loudnesstarget": -23, "maxpeak": -2}}`), 0o644)
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"process", "-preset", preset, "-algorithms", `{"loudnesstarget": -20}`, "-o", out, in}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var st struct {
		Levels struct {
			Output map[string][2]any `json:"output"`
			Input  map[string][2]any `json:"input"`
		} `json:"levels"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &st); err != nil {
		t.Fatalf("stdout is not the statistics JSON: %v\n%s", err, stdout.String())
	}
	for _, k := range []string{"lra", "max_shortterm", "max_momentary", "gain_min", "peak", "gain_mean", "loudness", "gain_max"} {
		if _, ok := st.Levels.Output[k]; !ok {
			t.Errorf("levels.output.%s missing", k)
		}
	}
	for _, k := range []string{"lra", "noise_level", "max_momentary", "signal_level", "snr", "max_shortterm", "loudness"} {
		if _, ok := st.Levels.Input[k]; !ok {
			t.Errorf("levels.input.%s missing", k)
		}
	}
	d, err := audio.Open(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	r, err := loudness.Measure(context.Background(), d, loudness.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The flag's target (-20) overrides the preset's (-23); the preset's
	// maxpeak (-2) still applies.
	if math.Abs(r.Integrated+20) > 0.3 || r.TruePeak > -2+0.1 {
		t.Errorf("output %.2f LUFS, %.2f dBTP; want -20 LUFS, <= -2 dBTP", r.Integrated, r.TruePeak)
	}
	if stderr.Len() != 0 {
		t.Errorf("progress written to a non-terminal stderr: %q", stderr.String())
	}
}

func TestProcessRejectsBadInput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.wav")
	writeTestWAV(t, in)
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"process", "-algorithms", `{"loudnesstarget": -17}`, "-o", filepath.Join(dir, "o.wav"), in}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "loudnesstarget") {
		t.Errorf("bad target: err = %v, want it to name loudnesstarget", err)
	}
	err = run(context.Background(), []string{"process", "-o", filepath.Join(dir, "o.xyz"), in}, &stdout, &stderr)
	if err == nil {
		t.Error("unknown output extension accepted")
	}
	err = run(context.Background(), []string{"process", in}, &stdout, &stderr)
	if err == nil {
		t.Error("missing -o accepted")
	}
}
