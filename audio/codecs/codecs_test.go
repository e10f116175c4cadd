package codecs_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	_ "github.com/audiopost/audiopost/audio/codecs"
)

func TestEveryOutputFormatRegistered(t *testing.T) {
	got := audio.Encoders()
	for _, name := range []string{"wav", "wav-24bit", "flac", "mp3", "mp3-vbr", "aac", "alac", "opus", "vorbis"} {
		if !slices.Contains(got, name) {
			t.Errorf("no encoder %q among %v", name, got)
		}
	}
}

// TestPureGoCodecsWin checks that content a pure-Go codec recognises is not
// sent to the ffmpeg fallback: with ffmpeg off PATH, WAV still decodes.
func TestPureGoCodecsWin(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	var b bytes.Buffer
	enc, err := audio.NewEncoder(context.Background(), "wav", &b, audio.Format{SampleRate: 8000, Channels: 1}, audio.EncodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := enc.Write(audiotest.Sine(1, 8000, 440, 0.5, 800)); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	info, err := audio.Probe(context.Background(), bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	d, err := audio.Decode(context.Background(), bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if c := audio.CodecOf(d); c != "wav" {
		t.Errorf("CodecOf = %q, want wav", c)
	}
	d.Close()
	if info.Format != "wav" || info.SampleRate != 8000 {
		t.Errorf("probe: %+v", info)
	}
}

func Example() {
	fmt.Println(slices.Contains(audio.Encoders(), "opus"), slices.Contains(audio.Encoders(), "flac"))
	// Output: true true
}
