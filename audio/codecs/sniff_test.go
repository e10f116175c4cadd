package codecs_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/need"
)

func ffmpeg(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.Command("ffmpeg", append([]string{"-nostdin", "-v", "error", "-y"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("ffmpeg %v: %v\n%s", args, err, out)
	}
}

// A FLAC file behind an ID3v2 tag larger than audio.SniffLen is still found
// by its content, from a file and from a stream that cannot seek.
func TestLargeID3TagInFrontOfFLAC(t *testing.T) {
	need.Program(t, "ffmpeg")
	dir := t.TempDir()
	flacPath := filepath.Join(dir, "a.flac")
	ffmpeg(t, "-f", "lavfi", "-i", "sine=frequency=440:duration=1", "-ar", "44100", flacPath)
	raw, err := os.ReadFile(flacPath)
	if err != nil {
		t.Fatal(err)
	}
	const pad = 50000
	tag := []byte{'I', 'D', '3', 3, 0, 0, byte(pad >> 21 & 0x7f), byte(pad >> 14 & 0x7f), byte(pad >> 7 & 0x7f), byte(pad & 0x7f)}
	tag = append(tag, make([]byte, pad)...)
	data := append(tag, raw...)
	for name, r := range map[string]func() any{
		"seekable":     func() any { return bytes.NewReader(data) },
		"non-seekable": func() any { return struct{ *bytes.Buffer }{bytes.NewBuffer(data)} },
	} {
		t.Run(name, func(t *testing.T) {
			info, err := audio.Probe(context.Background(), r().(interface{ Read([]byte) (int, error) }))
			if err != nil {
				t.Fatal(err)
			}
			if info.Format != "flac" || info.Frames != 44100 {
				t.Fatalf("probe = %+v, want flac with 44100 frames", info)
			}
		})
	}
}

// MPEG-2.5 (8 kHz MP3) is beyond the pure-Go MP3 decoder: ffmpeg takes it.
func TestUnsupportedVariantFallsBackToFFmpeg(t *testing.T) {
	need.Program(t, "ffmpeg")
	path := filepath.Join(t.TempDir(), "low.mp3")
	ffmpeg(t, "-f", "lavfi", "-i", "sine=frequency=300:duration=2", "-ar", "8000", "-c:a", "libmp3lame", "-b:a", "16k", path)
	d, err := audio.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if f := d.Format(); f.SampleRate != 8000 || f.Channels != 1 {
		t.Fatalf("format = %+v, want 8 kHz mono", f)
	}
	if c := audio.CodecOf(d); c != "ffmpeg" {
		t.Errorf("CodecOf = %q, want ffmpeg", c)
	}
	b, err := audio.ReadAll(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	if got := float64(b.Frames()) / 8000; got < 1.9 || got > 2.2 {
		t.Fatalf("decoded %.2f s, want about 2 s", got)
	}
}

// TestProbeFallsBackToFFmpeg: a probe picks its codec as a decode does,
// so a file whose format a pure-Go codec recognises but whose variant it
// cannot read (a WAV in A-law, MPEG-2.5) is probed by ffmpeg, not
// refused: an upload the engine can process is accepted.
func TestProbeFallsBackToFFmpeg(t *testing.T) {
	need.Program(t, "ffmpeg")
	dir := t.TempDir()
	for _, c := range []struct{ name, codec string }{{"alaw.wav", "pcm_alaw"}, {"low.mp3", "libmp3lame"}} {
		path := filepath.Join(dir, c.name)
		ffmpeg(t, "-f", "lavfi", "-i", "sine=frequency=300:duration=2", "-ar", "8000", "-c:a", c.codec, path)
		info, err := audio.ProbeFile(context.Background(), path)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if info.SampleRate != 8000 || info.Channels != 1 || info.Length < 1.9 || info.Length > 2.2 {
			t.Errorf("%s: probed %+v, want 2 s of 8 kHz mono", c.name, info)
		}
	}
}
