package benchmarks

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	_ "github.com/audiopost/audiopost/audio/wav"
	"github.com/audiopost/audiopost/internal/need"
)

// wavBenchSeconds is the length of the benchmark file: long enough that
// process start-up does not dominate ffmpeg's figure.
const wavBenchSeconds = 600

// makeWAVFile writes a 16-bit stereo 48 kHz WAV of wavBenchSeconds of noise
// and tone into dir.
func makeWAVFile(b *testing.B, dir string) string {
	b.Helper()
	const rate = 48000
	path := filepath.Join(dir, "bench-s16-stereo-48k.wav")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	ctx := context.Background()
	e, err := audio.NewEncoder(ctx, "wav", f, audio.Format{SampleRate: rate, Channels: 2}, audio.EncodeOptions{})
	if err != nil {
		b.Fatal(err)
	}
	block := audiotest.Noise(2, rate, 0.3, 9)
	tone := audiotest.Sine(2, rate, 440, 0.5, rate)
	for c := range block {
		for i := range block[c] {
			block[c][i] += tone[c][i]
		}
	}
	for range wavBenchSeconds {
		if err := e.Write(block); err != nil {
			b.Fatal(err)
		}
	}
	if err := e.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkWAVDecode decodes the same 10-minute 16-bit stereo 48 kHz WAV
// file to float64 with audiopost and with ffmpeg (`-f f64le` to a pipe that
// is discarded), each op one whole file. x-realtime is audio seconds per
// wall second; allocs/block is audiopost's heap allocations per 4096-frame
// Read, over the whole file including opening it.
func BenchmarkWAVDecode(b *testing.B) {
	path := makeWAVFile(b, b.TempDir())
	var ours, theirs float64
	b.Run("audiopost", func(b *testing.B) {
		ctx := context.Background()
		buf := audio.NewBuffer(2, audio.DefaultBlock)
		var blocks int64
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		b.ReportAllocs()
		for b.Loop() {
			d, err := audio.Open(ctx, path)
			if err != nil {
				b.Fatal(err)
			}
			frames := 0
			for {
				n, err := d.Read(buf)
				frames += n
				blocks++
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			d.Close()
			if frames != wavBenchSeconds*48000 {
				b.Fatalf("decoded %d frames", frames)
			}
		}
		runtime.ReadMemStats(&after)
		ours = float64(b.N) * wavBenchSeconds / b.Elapsed().Seconds()
		b.ReportMetric(ours, "x-realtime")
		b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(blocks), "allocs/block")
	})
	b.Run("ffmpeg", func(b *testing.B) {
		ffmpeg := need.Program(b, "ffmpeg")
		for b.Loop() {
			var stderr bytes.Buffer
			cmd := exec.Command(ffmpeg, "-v", "error", "-i", path, "-f", "f64le", "-")
			cmd.Stdout, cmd.Stderr = io.Discard, &stderr
			if err := cmd.Run(); err != nil {
				b.Fatalf("ffmpeg: %v: %s", err, stderr.Bytes())
			}
		}
		theirs = float64(b.N) * wavBenchSeconds / b.Elapsed().Seconds()
		b.ReportMetric(theirs, "x-realtime")
	})
	if ours > 0 && theirs > 0 {
		b.Logf("audiopost decodes WAV %.2fx as fast as ffmpeg (%.0f vs %.0f x-realtime)", ours/theirs, ours, theirs)
	}
}
