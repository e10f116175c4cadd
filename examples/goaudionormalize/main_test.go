package main

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gwav "github.com/go-audio/wav"

	"github.com/audiopost/audiopost/audio/audiotest"
	"github.com/audiopost/audiopost/audio/wav"
	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/loudness"
)

func TestNormalize(t *testing.T) {
	dir := t.TempDir()
	quiet := filepath.Join(dir, "quiet.wav") // mono 16-bit, far below the target
	testaudio.WriteWAVBits(t, quiet, testaudio.SpeechLike(44100, 6, 0.03)[:1], 44100, 16)
	hot := filepath.Join(dir, "hot.wav") // stereo 24-bit noise with a spike the gain pushes over the ceiling
	b := audiotest.Noise(2, 6*48000, 0.08, 4)
	b[0][100000], b[1][100001] = 0.95, -0.9
	testaudio.WriteWAVBits(t, hot, b, 48000, 24)
	hostile := filepath.Join(dir, "hostile.wav") // a LIST/INFO entry that claims 4 GiB
	os.WriteFile(hostile, []byte("RIFF\x30\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x40\x1f\x00\x00\x80\x3e\x00\x00\x02\x00\x10\x00LIST\x0c\x00\x00\x00INFOINAM\xf0\xff\xff\xff"), 0o644)

	const target, ceiling = -16.0, -1.0
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"-target", "-16", "-ceiling", "-1", quiet, hostile, hot}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "1 of 3 files failed") {
		t.Errorf("run: %v, want one failure", err)
	}
	if !strings.Contains(stderr.String(), "hostile.wav: audio: malformed data") {
		t.Errorf("stderr %q does not report the hostile file", stderr.String())
	}
	t.Log(stdout.String())

	for _, tc := range []struct {
		path           string
		rate, channels int
		bits           int
	}{{quiet, 44100, 1, 16}, {hot, 48000, 2, 24}} {
		out := strings.TrimSuffix(tc.path, ".wav") + ".normalized.wav"
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		// Read back with audiopost's decoder, an independent reader.
		d, err := wav.NewDecoder(context.Background(), bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if f := d.Format(); f.SampleRate != tc.rate || f.Channels != tc.channels || d.Info().BitDepth != tc.bits {
			t.Errorf("%s: %+v, %d bits; want %d Hz, %d channels, %d bits", out, f, d.Info().BitDepth, tc.rate, tc.channels, tc.bits)
		}
		res, err := loudness.Measure(context.Background(), d, loudness.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(res.Integrated-target) > 0.5 {
			t.Errorf("%s: %.2f LUFS, want %.0f ± 0.5", out, res.Integrated, target)
		}
		if res.TruePeak > ceiling {
			t.Errorf("%s: true peak %.2f dBTP above the %.0f dBTP ceiling", out, res.TruePeak, ceiling)
		}
		if res.Frames == 0 {
			t.Errorf("%s: empty", out)
		}
		// go-audio reads its own output too.
		if !gwav.NewDecoder(bytes.NewReader(data)).IsValidFile() {
			t.Errorf("%s: go-audio does not accept the file", out)
		}
	}
	if _, err := os.Stat(strings.TrimSuffix(hostile, ".wav") + ".normalized.wav"); !os.IsNotExist(err) {
		t.Errorf("an output was written for the hostile file: %v", err)
	}
	if tmps, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(tmps) > 0 {
		t.Errorf("temporary files left: %v", tmps)
	}
}

func TestUsage(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := run(context.Background(), nil, &out, &errOut); err == nil || !strings.Contains(errOut.String(), "usage") {
		t.Errorf("no files: %v, %q", err, errOut.String())
	}
	if err := run(context.Background(), []string{"-suffix", "", "a.wav"}, &out, &errOut); err == nil {
		t.Error("empty suffix accepted")
	}
}
