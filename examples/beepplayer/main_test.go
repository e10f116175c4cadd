package main

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/flac"
	"github.com/audiopost/audiopost/audio/wav"
	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/loudness"
)

// encode writes b to path with audiopost's WAV or FLAC encoder.
func encode(t *testing.T, path string, b audio.Buffer, rate, bits int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	format := audio.Format{SampleRate: rate, Channels: len(b)}
	opts := audio.EncodeOptions{BitDepth: bits}
	var e audio.Encoder
	if filepath.Ext(path) == ".flac" {
		e, err = flac.NewEncoder(context.Background(), f, format, opts)
	} else {
		e, err = wav.NewEncoder(context.Background(), f, format, opts)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
}

// quietThenLoud is 4 s of a quiet voice-like signal (testaudio.SpeechLike,
// which the classifier hears as speech), 1 s of silence and 4 s of it 26 dB
// louder, starting with a burst at -0.4 dBFS that the limiter must bring
// under -1 dBTP.
func quietThenLoud(channels, rate int) audio.Buffer {
	voice := func(amp float64) audio.Buffer {
		v := testaudio.SpeechLike(rate, 4, amp)
		b := make(audio.Buffer, channels)
		for c := range b {
			b[c] = append([]float64(nil), v[0]...)
		}
		return b
	}
	quiet, loud := voice(0.025), voice(0.5)
	b := make(audio.Buffer, channels)
	for c := range b {
		b[c] = append(append(quiet[c], make([]float64, rate)...), loud[c]...)
		for i := 5 * rate; i < 5*rate+rate/2; i++ {
			b[c][i] *= 1.9
		}
	}
	return b
}

// loudnessOf measures frames [from, to) of b.
func loudnessOf(t *testing.T, b audio.Buffer, rate, from, to int) float64 {
	t.Helper()
	res, err := loudness.MeasureBuffer(b.Slice(from, to), rate, loudness.Options{Mode: loudness.ModeI})
	if err != nil || res.Err != nil {
		t.Fatal(err, res.Err)
	}
	return res.Integrated
}

func TestPlayerWritesLeveledFile(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name           string
		channels, rate int
		inBits, bits   int
		strength       string
	}{
		{"stereo.wav", 2, 48000, 16, 16, "1"},
		{"mono.flac", 1, 44100, 24, 24, "1"},
		{"unleveled.wav", 2, 44100, 24, 16, "0"}, // the limiter alone catches the burst
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := filepath.Join(dir, tc.name)
			b := quietThenLoud(tc.channels, tc.rate)
			encode(t, in, b, tc.rate, tc.inBits)
			out := filepath.Join(dir, tc.name+".out.wav")
			var stdout, stderr bytes.Buffer
			args := []string{"-o", out, "-bits", map[int]string{16: "16", 24: "24"}[tc.bits], "-strength", tc.strength, in}
			if err := run(context.Background(), args, &stdout, &stderr); err != nil {
				t.Fatalf("run: %v\n%s", err, stderr.String())
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			d, err := wav.NewDecoder(context.Background(), bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			if d.Info().BitDepth != tc.bits || d.Format() != (audio.Format{SampleRate: tc.rate, Channels: tc.channels}) {
				t.Errorf("output %+v, %d bits", d.Format(), d.Info().BitDepth)
			}
			got, err := audio.ReadAll(context.Background(), d)
			if err != nil {
				t.Fatal(err)
			}
			if got.Frames() != b.Frames() {
				t.Fatalf("%d frames out, %d in", got.Frames(), b.Frames())
			}
			res, err := loudness.MeasureBuffer(got, tc.rate, loudness.Options{Mode: loudness.ModeTruePeak})
			if err != nil {
				t.Fatal(err)
			}
			if res.TruePeak > -1 {
				t.Errorf("true peak %.2f dBTP above the -1 dBTP ceiling", res.TruePeak)
			}
			if tc.strength == "0" {
				if res.TruePeak < -1.5 {
					t.Errorf("true peak %.2f dBTP: the limiter took more than the burst needed", res.TruePeak)
				}
				return
			}
			// The leveler brings the two passages together (26 LU apart
			// in the input).
			r := tc.rate
			qIn, lIn := loudnessOf(t, b, r, r/2, 4*r), loudnessOf(t, b, r, 6*r, 9*r)
			qOut, lOut := loudnessOf(t, got, r, r/2, 4*r), loudnessOf(t, got, r, 6*r, 9*r)
			t.Logf("quiet %.1f -> %.1f LUFS, loud %.1f -> %.1f LUFS, true peak %.2f dBTP", qIn, qOut, lIn, lOut, res.TruePeak)
			if math.Abs(lOut-qOut) > 3 {
				t.Errorf("passages %.1f LU apart after leveling (%.1f before), want within 3 LU", lOut-qOut, lIn-qIn)
			}
		})
	}
}

func TestPlayerFlags(t *testing.T) {
	var stdout, stderr bytes.Buffer
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "want one input file"},
		{[]string{"-bits", "20", "x.wav"}, "-bits 20"},
		{[]string{"x.ogg"}, "want a .wav, .mp3 or .flac file"},
		{[]string{filepath.Join(t.TempDir(), "missing.wav")}, "no such file"},
	} {
		err := run(context.Background(), tc.args, &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.args, err, tc.want)
		}
	}
	if play == nil {
		err := run(context.Background(), []string{"-play", "x.wav"}, &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), "-tags speaker") {
			t.Errorf("-play without the speaker tag: %v", err)
		}
	}
}
