package ffmpeg

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	"github.com/audiopost/audiopost/internal/need"
)

// TestRenderVideo renders videos from audio in every container, with a
// background picture and with a plain color, and reads them back: a
// video stream of the scene's size and codec, the audio at its level and
// length, the tags and chapters.
func TestRenderVideo(t *testing.T) {
	need.Programs(t, "ffmpeg", "ffprobe")
	t.Parallel()
	const rate = 48000
	// 2 s, past the second chapter's start (1.2 s): the video frames are
	// what costs (3 s in four containers took 10.4 s of CPU).
	proc := audiotest.Sine(2, rate, 1000, 0.5, 2*rate)
	bg := testJPEG(t, 320, 180)
	cases := []struct {
		container, vcodec, acodec, probed string
		background                        []byte
	}{
		{"mp4", "h264", "aac", "mp4", bg},
		{"mov", "h264", "aac", "mov", nil},
		{"matroska", "h264", "aac", "matroska", bg},
		{"webm", "vp8", "opus", "matroska", nil},
	}
	if testing.Short() {
		cases = cases[:1]
	}
	for _, tc := range cases {
		t.Run(tc.container, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			f, err := os.Create(out)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			scene := Scene{Width: 320, Height: 180, Background: tc.background, Color: "0x1e293b", WaveHeight: 45, WaveBottom: 18, Container: tc.container}
			tags := audio.Tags{Title: "Rendered", Subtitle: "From audio", URL: "https://example.org/v", Keywords: "a, b"}
			opts := audio.EncodeOptions{Tags: tags, Chapters: testChapters[:2], Length: 2 * time.Second}
			enc, err := NewRenderEncoder(context.Background(), f, scene, audio.Format{SampleRate: rate, Channels: 2}, opts)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := audio.Copy(context.Background(), enc, audio.NewBufferSource(proc, rate)); err != nil {
				t.Fatal(err)
			}
			if err := enc.Close(); err != nil {
				t.Fatal(err)
			}
			d, err := ProbeDetails(context.Background(), openFile(t, out))
			if err != nil {
				t.Fatal(err)
			}
			if !d.HasVideo || d.VideoCodec != tc.vcodec || d.Container != tc.probed || d.Format != tc.acodec {
				t.Errorf("rendered: %+v video %q, want %s video in %s with %s audio", d.Info, d.VideoCodec, tc.vcodec, tc.probed, tc.acodec)
			}
			if math.Abs(d.Length-2) > 0.15 || d.Tags.Title != "Rendered" || d.Tags.Subtitle != "From audio" || d.Tags.URL != tags.URL ||
				d.Tags.Keywords != tags.Keywords || len(d.Chapters) != 2 {
				t.Errorf("rendered: length %.3f, tags %+v, %d chapters", d.Length, d.Tags, len(d.Chapters))
			}
			var pr struct {
				Streams []struct {
					CodecType     string `json:"codec_type"`
					Width, Height int
				} `json:"streams"`
			}
			js, err := exec.Command("ffprobe", "-v", "error", "-show_streams", "-of", "json", out).Output()
			if err != nil || json.Unmarshal(js, &pr) != nil {
				t.Fatal(err)
			}
			for _, s := range pr.Streams {
				if s.CodecType == "video" && (s.Width != 320 || s.Height != 180) {
					t.Errorf("video of %dx%d, want 320x180", s.Width, s.Height)
				}
			}
			got, dec := decodeAll(t, openFile(t, out))
			mid := got.Frames() / 4
			if l := toneDB(got[0][mid:3*mid], 1000, dec.Format().SampleRate); math.Abs(l-(-9.03)) > 0.5 {
				t.Errorf("audio: 1 kHz at %.1f dBFS, want -9.0", l)
			}
		})
	}
}

func TestRenderVideoRejects(t *testing.T) {
	need.Programs(t, "ffmpeg", "ffprobe")
	f := audio.Format{SampleRate: 44100, Channels: 1}
	for name, s := range map[string]Scene{
		"odd size":     {Width: 321, Height: 180, Color: "0x000000"},
		"no color":     {Width: 320, Height: 180},
		"bad color":    {Width: 320, Height: 180, Color: "red;x"},
		"wave too big": {Width: 320, Height: 180, Color: "0x000000", WaveHeight: 170, WaveBottom: 20},
		"container":    {Width: 320, Height: 180, Color: "0x000000", Container: "avi"},
	} {
		if _, err := NewRenderEncoder(context.Background(), &bytes.Buffer{}, s, f, audio.EncodeOptions{}); !errors.Is(err, audio.ErrUnsupported) {
			t.Errorf("%s: %v, want ErrUnsupported", name, err)
		}
	}
}

// TestRenderVP8OneThread: WebM's VP8 encoder runs one thread (see
// sceneArgs), H.264's as many as libx264 picks.
func TestRenderVP8OneThread(t *testing.T) {
	for container, want := range map[string]bool{"webm": true, "mp4": false, "matroska": false} {
		e := &Encoder{of: renderContainers[container], scene: &Scene{Width: 320, Height: 180, Color: "0x000000", FPS: 15, Container: container}}
		_, maps, err := e.sceneArgs()
		if err != nil {
			t.Fatal(err)
		}
		one := false
		for i := 0; i+1 < len(maps); i++ {
			if maps[i] == "-threads:v" && maps[i+1] == "1" {
				one = true
			}
		}
		if one != want {
			t.Errorf("%s: one video encoder thread %v, want %v (%q)", container, one, want, maps)
		}
	}
}
