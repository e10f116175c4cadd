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
	_ "github.com/audiopost/audiopost/audio/flac"
	_ "github.com/audiopost/audiopost/audio/mp3"
	"github.com/audiopost/audiopost/internal/need"
)

// flacMP3BenchSeconds is the length of the FLAC and MP3 benchmark files.
const flacMP3BenchSeconds = 300

// makeFLACMP3Source writes the benchmark signal, 48 kHz stereo tone plus
// noise, as a 16-bit FLAC with audiopost's encoder into dir.
func makeFLACMP3Source(b *testing.B, dir string) string {
	b.Helper()
	const rate = 48000
	path := filepath.Join(dir, "bench-source.flac")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	e, err := audio.NewEncoder(context.Background(), "flac", f, audio.Format{SampleRate: rate, Channels: 2}, audio.EncodeOptions{})
	if err != nil {
		b.Fatal(err)
	}
	block := audiotest.Noise(2, rate, 0.1, 5)
	tone := audiotest.Sine(2, rate, 330, 0.5, rate)
	for c := range block {
		for i := range block[c] {
			block[c][i] += tone[c][i]
		}
	}
	for range flacMP3BenchSeconds {
		if err := e.Write(block); err != nil {
			b.Fatal(err)
		}
	}
	if err := e.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// compareDecode runs audiopost and ffmpeg over the same file, each op one
// whole file to float64. x-realtime is audio seconds per wall second;
// allocs/block is audiopost's heap allocations per 4096-frame Read, opening
// included.
func compareDecode(b *testing.B, name, path string, channels int) {
	var ours, theirs float64
	b.Run("audiopost", func(b *testing.B) {
		ctx := context.Background()
		buf := audio.NewBuffer(channels, audio.DefaultBlock)
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
			// MP3 adds up to a frame of encoder padding at most.
			if d := frames - flacMP3BenchSeconds*48000; d < 0 || d > 1152 {
				b.Fatalf("decoded %d frames", frames)
			}
		}
		runtime.ReadMemStats(&after)
		ours = float64(b.N) * flacMP3BenchSeconds / b.Elapsed().Seconds()
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
		theirs = float64(b.N) * flacMP3BenchSeconds / b.Elapsed().Seconds()
		b.ReportMetric(theirs, "x-realtime")
	})
	if ours > 0 && theirs > 0 {
		b.Logf("audiopost decodes %s %.2fx as fast as ffmpeg (%.0f vs %.0f x-realtime)", name, ours/theirs, ours, theirs)
	}
}

// BenchmarkFLACDecode decodes a 5-minute 16-bit stereo 48 kHz FLAC, encoded
// by ffmpeg (LPC, as files in the wild are) when it is installed and by
// audiopost's encoder otherwise.
func BenchmarkFLACDecode(b *testing.B) {
	dir := b.TempDir()
	path := makeFLACMP3Source(b, dir)
	if ffmpeg, ok := need.HasProgram(b, "ffmpeg"); ok {
		lpc := filepath.Join(dir, "bench-ffmpeg.flac")
		if out, err := exec.Command(ffmpeg, "-v", "error", "-i", path, "-c:a", "flac", lpc).CombinedOutput(); err != nil {
			b.Fatalf("ffmpeg: %v: %s", err, out)
		}
		path = lpc
	}
	compareDecode(b, "FLAC", path, 2)
}

// BenchmarkMP3Decode decodes a 5-minute 128 kbps CBR stereo 48 kHz MP3
// made by ffmpeg/libmp3lame.
func BenchmarkMP3Decode(b *testing.B) {
	ffmpeg := need.Program(b, "ffmpeg")
	dir := b.TempDir()
	src := makeFLACMP3Source(b, dir)
	path := filepath.Join(dir, "bench-128k.mp3")
	if out, err := exec.Command(ffmpeg, "-v", "error", "-i", src, "-c:a", "libmp3lame", "-b:a", "128k", path).CombinedOutput(); err != nil {
		b.Fatalf("ffmpeg: %v: %s", err, out)
	}
	compareDecode(b, "MP3", path, 2)
}

// BenchmarkFLACEncode encodes 5 minutes of 16-bit stereo 48 kHz audio with
// audiopost's FLAC encoder, to io.Discard.
func BenchmarkFLACEncode(b *testing.B) {
	const rate = 48000
	block := audiotest.Noise(2, audio.DefaultBlock, 0.1, 5)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		e, err := audio.NewEncoder(ctx, "flac", io.Discard, audio.Format{SampleRate: rate, Channels: 2}, audio.EncodeOptions{})
		if err != nil {
			b.Fatal(err)
		}
		for range flacMP3BenchSeconds * rate / audio.DefaultBlock {
			if err := e.Write(block); err != nil {
				b.Fatal(err)
			}
		}
		if err := e.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*flacMP3BenchSeconds/b.Elapsed().Seconds(), "x-realtime")
}
