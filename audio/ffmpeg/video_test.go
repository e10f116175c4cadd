package ffmpeg

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	"github.com/audiopost/audiopost/internal/need"
)

func TestRemuxVideo(t *testing.T) {
	need.Programs(t, "ffmpeg", "ffprobe")
	t.Parallel()
	cases := []struct{ name, file, vcodec, container, acodec string }{
		{"mp4", "in.mp4", "libx264", "mp4", "aac"},
		{"webm", "in.webm", "libvpx-vp9", "matroska", "opus"},
	}
	if testing.Short() {
		// The quick check and the race run: one container takes the
		// remux's goroutines (the processed audio fed to ffmpeg while it
		// reads the video) through; the plain run checks both.
		cases = cases[:1]
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			acodec := map[string]string{"aac": "aac", "opus": "libopus"}[tc.acodec]
			in := makeFile(t, tc.file, "-f", "lavfi", "-i", "testsrc=size=64x48:rate=10:duration=2",
				"-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=2",
				"-map", "0:v", "-map", "1:a", "-c:v", tc.vcodec, "-c:a", acodec, "-metadata", "title=Original")
			orig, err := ProbeDetails(context.Background(), openFile(t, in))
			if err != nil {
				t.Fatal(err)
			}
			// The processed audio: a 1 kHz tone, stereo, where the input had 440 Hz mono.
			const rate = 48000
			proc := audiotest.Sine(2, rate, 1000, 0.5, 2*rate)
			out := filepath.Join(t.TempDir(), "out"+filepath.Ext(tc.file))
			f, err := os.Create(out)
			if err != nil {
				t.Fatal(err)
			}
			opts := audio.EncodeOptions{Tags: audio.Tags{Title: "Processed"}, Chapters: testChapters[:2], Length: 2 * time.Second}
			if err := RemuxVideo(context.Background(), f, in, audio.NewBufferSource(proc, rate), opts); err != nil {
				t.Fatal(err)
			}
			f.Close()
			d, err := ProbeDetails(context.Background(), openFile(t, out))
			if err != nil {
				t.Fatal(err)
			}
			if !d.HasVideo || d.VideoCodec != orig.VideoCodec || d.Container != tc.container || d.Format != tc.acodec || d.Channels != 2 {
				t.Errorf("remuxed: %+v video %q, want %s video in %s with %s audio", d.Info, d.VideoCodec, orig.VideoCodec, tc.container, tc.acodec)
			}
			if math.Abs(d.Length-2) > 0.1 || d.Tags.Title != "Processed" || len(d.Chapters) != 2 {
				t.Errorf("remuxed: length %.3f, title %q, %d chapters", d.Length, d.Tags.Title, len(d.Chapters))
			}
			got, dec := decodeAll(t, openFile(t, out))
			gr := dec.Format().SampleRate
			mid := got.Frames() / 4
			if l1k, l440 := toneDB(got[0][mid:3*mid], 1000, gr), toneDB(got[0][mid:3*mid], 440, gr); math.Abs(l1k-(-9.03)) > 0.5 || l440 > -50 {
				t.Errorf("audio track: 1 kHz at %.1f dBFS (want -9.0), 440 Hz at %.1f dBFS (want gone)", l1k, l440)
			}
		})
	}
}

func TestRemuxVideoNeedsVideo(t *testing.T) {
	need.Programs(t, "ffmpeg", "ffprobe")
	t.Parallel()
	in := makeFile(t, "a.m4a", "-f", "lavfi", "-i", "sine=duration=1", "-c:a", "aac")
	_, err := NewVideoEncoder(context.Background(), os.Stdout, in, audio.Format{SampleRate: 44100, Channels: 1}, audio.EncodeOptions{})
	if !errors.Is(err, audio.ErrUnsupported) {
		t.Errorf("remux into an audio-only file: %v, want ErrUnsupported", err)
	}
}
