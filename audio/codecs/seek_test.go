package codecs_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// A WAV file opened by audio.Open seeks to any frame: what follows is
// what reading from the start finds there, also after the end was read.
func TestOpenedWAVSeeksFrames(t *testing.T) {
	const n = 30000
	x := make([]float64, n)
	for i := range x {
		x[i] = float64(i%4096-2048) / 4096
	}
	path := filepath.Join(t.TempDir(), "ramp.wav")
	testaudio.WriteWAV(t, path, [][]float64{x, slices.Clone(x)}, 48000)
	ctx := context.Background()
	d, err := audio.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	whole, err := audio.ReadAll(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	s, ok := d.(audio.FrameSeeker)
	if !ok {
		t.Fatal("the decoder cannot seek")
	}
	for _, at := range []int64{17, 0, n - 3, 12345} {
		if err := s.SeekFrame(at); err != nil {
			t.Fatal(err)
		}
		rest, err := audio.ReadAll(ctx, d)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(rest[0], whole[0][at:]) || !slices.Equal(rest[1], whole[1][at:]) {
			t.Fatalf("from frame %d: %d frames that differ from the whole's", at, rest.Frames())
		}
	}
	if err := s.SeekFrame(n + 10); err != nil {
		t.Fatal(err)
	}
	if k, err := d.Read(audio.NewBuffer(2, 10)); k != 0 || err != io.EOF {
		t.Errorf("past the end: %d frames, %v", k, err)
	}
}

// A stream that cannot seek says so.
func TestStreamedWAVCannotSeek(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.wav")
	testaudio.WriteWAV(t, path, [][]float64{make([]float64, 100)}, 48000)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// A reader with no Seek, as a pipe is.
	d, err := audio.Decode(context.Background(), io.MultiReader(bytes.NewReader(b)))
	if err != nil {
		t.Fatal(err)
	}
	if err := d.(audio.FrameSeeker).SeekFrame(10); !errors.Is(err, audio.ErrUnsupported) {
		t.Errorf("seek in a pipe: %v", err)
	}
}
