package dsp_test

import (
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	"github.com/audiopost/audiopost/dsp"
	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/loudness"
)

// gtBenchRead runs b.N Reads of 4096 frames from src and reports the
// speed as multiples of real time at the output rate.
func gtBenchRead(b *testing.B, src audio.Source) {
	f := src.Format()
	buf := audio.NewBuffer(f.Channels, 4096)
	b.ReportAllocs()
	b.SetBytes(int64(4096 * f.Channels * 8))
	b.ResetTimer()
	for range b.N {
		if _, err := src.Read(buf); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(4096/float64(f.SampleRate)/(b.Elapsed().Seconds()/float64(b.N)), "x-realtime")
}

// BenchmarkResample converts 44.1 kHz stereo noise to 48 kHz: this
// package's qualities read by read (0 allocs/op is the steady state), and
// sox and ffmpeg converting 10 s per op in the same run, which includes
// starting the process and piping the samples (ffmpeg also decodes and
// encodes raw float64).
//
//	go test ./dsp/ -run '^$' -bench 'Resample' -benchtime 20x
func BenchmarkResample(b *testing.B) {
	const in, out = 44100, 48000
	noise := audiotest.Noise(2, 10*in, 0.5, 1)
	for _, q := range []dsp.ResampleQuality{dsp.ResampleHigh, dsp.ResampleMedium} {
		b.Run("audiopost-"+gtQName[q], func(b *testing.B) {
			gtBenchRead(b, gtResample(b, &gtLoop{buf: noise, fs: in}, out, q))
		})
	}
	b.Run("audiopost-interpolated-44100-44101", func(b *testing.B) {
		gtBenchRead(b, gtResample(b, &gtLoop{buf: noise, fs: in}, 44101, dsp.ResampleHigh))
	})
	raw := filepath.Join(b.TempDir(), "in.f64")
	interleaved := make([]byte, 16*noise.Frames())
	for i := range noise.Frames() {
		binary.LittleEndian.PutUint64(interleaved[16*i:], math.Float64bits(noise[0][i]))
		binary.LittleEndian.PutUint64(interleaved[16*i+8:], math.Float64bits(noise[1][i]))
	}
	if err := os.WriteFile(raw, interleaved, 0o644); err != nil {
		b.Fatal(err)
	}
	tools := []struct {
		name string
		tool string
		args []string
	}{
		{"sox-rate-v", "sox", []string{"-D", "-t", "f64", "-r", "44100", "-c", "2", raw, "-t", "f64", "-", "rate", "-v", "48000"}},
		{"sox-rate-h", "sox", []string{"-D", "-t", "f64", "-r", "44100", "-c", "2", raw, "-t", "f64", "-", "rate", "-h", "48000"}},
		{"ffmpeg-aresample", "ffmpeg", []string{"-v", "error", "-f", "f64le", "-ar", "44100", "-ac", "2", "-i", raw, "-af", "aresample=48000", "-f", "f64le", "-"}},
		{"ffmpeg-aresample-soxr", "ffmpeg", []string{"-v", "error", "-f", "f64le", "-ar", "44100", "-ac", "2", "-i", raw, "-af", "aresample=48000:resampler=soxr:precision=28", "-f", "f64le", "-"}},
		{"sox-no-rate-baseline", "sox", []string{"-D", "-t", "f64", "-r", "44100", "-c", "2", raw, "-t", "f64", "-"}},
	}
	for _, tl := range tools {
		b.Run(tl.name, func(b *testing.B) {
			path := need.Program(b, tl.tool)
			for range b.N {
				cmd := exec.Command(path, tl.args...)
				var stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = io.Discard, &stderr
				if err := cmd.Run(); err != nil {
					b.Fatalf("%v: %s", err, stderr.Bytes())
				}
			}
			b.ReportMetric(10/(b.Elapsed().Seconds()/float64(b.N)), "x-realtime")
		})
	}
}

func BenchmarkMix(b *testing.B) {
	m := gtMix(b, dsp.MixOptions{},
		dsp.MixInput{Source: &gtLoop{buf: audiotest.Noise(1, 30000, 0.5, 1), fs: 48000}, Pan: -0.3},
		dsp.MixInput{Source: &gtLoop{buf: audiotest.Noise(2, 50000, 0.5, 2), fs: 48000}, GainDB: -18, Offset: 777},
		dsp.MixInput{Source: &gtLoop{buf: audiotest.Noise(1, 70000, 0.5, 3), fs: 48000}, Pan: 0.5, Offset: 10000})
	gtBenchRead(b, m)
}

func BenchmarkTee(b *testing.B) {
	meter, err := loudness.NewMeter(audio.Format{SampleRate: 48000, Channels: 2}, loudness.Options{Mode: loudness.ModeEBU})
	if err != nil {
		b.Fatal(err)
	}
	gtBenchRead(b, gtTee(b, &gtLoop{buf: audiotest.Noise(2, 50000, 0.5, 1), fs: 48000}, meter))
}

func BenchmarkNormalize(b *testing.B) {
	gtBenchRead(b, gtNormalize(b, &gtLoop{buf: audiotest.Noise(2, 50000, 0.1, 1), fs: 48000},
		dsp.NormalizeOptions{TargetLUFS: -16, MeasuredLUFS: -24, CeilingDBTP: -1}))
}
