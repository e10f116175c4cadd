package mixdown_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	"github.com/audiopost/audiopost/dsp"
	"github.com/audiopost/audiopost/dsp/mixdown"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// countingOpener opens b and counts opens and closes.
type countingOpener struct {
	b             audio.Buffer
	opens, closes int
	short         int // frames the source holds less than b
	fail          error
}

type closer struct {
	audio.Source
	c *countingOpener
}

func (c closer) Close() error { c.c.closes++; return nil }

func (c *countingOpener) open(context.Context) (audio.Source, error) {
	if c.fail != nil && c.opens > 0 {
		return nil, c.fail
	}
	c.opens++
	b := c.b
	if c.short > 0 {
		b = b.Slice(0, b.Frames()-c.short)
	}
	return closer{audio.NewBufferSource(b, fs), c}, nil
}

func stereoMusic(seconds float64, seed uint64) audio.Buffer {
	return audio.Buffer{testaudio.Music(fs, seconds, seed), testaudio.Music(fs, seconds, seed+1)}
}

// A loop is the source repeated with an equal-power crossfade of
// Crossfade at each seam: every frame outside the seams is a frame of the
// source, each seam is the sum of the crossfaded tail and head, the
// output has exactly Length frames and every pass is closed.
func TestLoop(t *testing.T) {
	src := stereoMusic(1, 3)
	ls := int64(src.Frames())
	const xf = 4800 // 100 ms
	length := int64(3.7 * fs)
	co := &countingOpener{b: src}
	l, err := mixdown.NewLoopTrim(context.Background(), co.open, mixdown.LoopTrimOptions{Length: length, SourceFrames: ls, FadeOut: -1})
	if err != nil {
		t.Fatal(err)
	}
	out := testaudio.ReadAll(t, l)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if int64(out.Frames()) != length {
		t.Fatalf("%d frames, want %d", out.Frames(), length)
	}
	period := ls - xf
	passes := int((length + period - 1) / period) // pass p starts at p*period
	if co.opens != passes || co.closes != passes {
		t.Errorf("%d opens, %d closes, want %d each", co.opens, co.closes, passes)
	}
	worst := 0.0
	for c := range out {
		for i := int64(0); i < length; i++ {
			p := i / period
			j := i - p*period // position in pass p
			var want float64
			switch {
			case p > 0 && j < xf: // seam between pass p-1 and p
				th := math.Pi / 2 * (float64(j) + 0.5) / xf
				want = math.Cos(th)*src[c][j+period] + math.Sin(th)*src[c][j]
			default:
				want = src[c][j]
			}
			worst = math.Max(worst, math.Abs(out[c][i]-want))
		}
	}
	if worst > 1e-12 {
		t.Errorf("output differs from the crossfaded loop by %g", worst)
	}
}

// A trim is the source's first Length frames with a cosine fade-out.
func TestTrim(t *testing.T) {
	src := stereoMusic(3, 5)
	co := &countingOpener{b: src}
	length := int64(2 * fs)
	l, err := mixdown.NewLoopTrim(context.Background(), co.open, mixdown.LoopTrimOptions{Length: length, SourceFrames: int64(src.Frames()), FadeOut: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	out := testaudio.ReadAll(t, l)
	l.Close()
	if int64(out.Frames()) != length || co.opens != 1 || co.closes != 1 {
		t.Fatalf("%d frames, %d opens, %d closes; want %d, 1, 1", out.Frames(), co.opens, co.closes, length)
	}
	fade := int64(fs / 2)
	for c := range out {
		for i := int64(0); i < length; i++ {
			g := 1.0
			if i >= length-fade {
				g = math.Cos(math.Pi / 2 * (float64(i-(length-fade)) + 0.5) / float64(fade))
			}
			if d := math.Abs(out[c][i] - g*src[c][i]); d > 1e-12 {
				t.Fatalf("frame %d channel %d: %g, want %g", i, c, out[c][i], g*src[c][i])
			}
		}
	}
}

// Exactly the source's length is the source; a source shorter than
// declared is padded with silence, a longer one cut; an empty one is
// silence of the length asked for.
func TestLoopTrimEdges(t *testing.T) {
	src := stereoMusic(1, 7)
	ls := int64(src.Frames())
	read := func(co *countingOpener, o mixdown.LoopTrimOptions) audio.Buffer {
		l, err := mixdown.NewLoopTrim(context.Background(), co.open, o)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return testaudio.ReadAll(t, l)
	}
	out := read(&countingOpener{b: src}, mixdown.LoopTrimOptions{Length: ls, SourceFrames: ls})
	if out.Frames() != src.Frames() || out[0][1234] != src[0][1234] || out[1][int(ls-1)] != src[1][int(ls-1)] {
		t.Error("a loop/trim to the source's own length changed it")
	}
	out = read(&countingOpener{b: src, short: 1000}, mixdown.LoopTrimOptions{Length: ls, SourceFrames: ls})
	if out.Frames() != int(ls) || out[0][ls-1] != 0 || out[0][ls-1001] != src[0][ls-1001] {
		t.Error("a short source is not padded with silence")
	}
	out = read(&countingOpener{b: src}, mixdown.LoopTrimOptions{Length: 2 * ls, SourceFrames: ls - 1000, Crossfade: -1, FadeOut: -1})
	if out.Frames() != int(2*ls) || out[0][ls-1000] != src[0][0] || out[0][ls-1001] != src[0][ls-1001] {
		t.Error("a long source is not cut at SourceFrames")
	}
	out = read(&countingOpener{b: src.Slice(0, 0)}, mixdown.LoopTrimOptions{Length: 1000, SourceFrames: 0})
	if out.Frames() != 1000 || testaudio.RMS(out[0]) != 0 {
		t.Error("an empty source does not give silence")
	}
	out = read(&countingOpener{b: src}, mixdown.LoopTrimOptions{Length: 0, SourceFrames: ls})
	if out.Frames() != 0 {
		t.Error("length 0 is not empty")
	}
	if _, err := mixdown.NewLoopTrim(context.Background(), (&countingOpener{b: src}).open, mixdown.LoopTrimOptions{Length: -1}); !errors.Is(err, dsp.ErrInvalidParameter) {
		t.Errorf("negative length: %v", err)
	}
	// A failing re-open is reported, once the first pass is played.
	boom := errors.New("boom")
	l, err := mixdown.NewLoopTrim(context.Background(), (&countingOpener{b: src, fail: boom}).open, mixdown.LoopTrimOptions{Length: 3 * ls, SourceFrames: ls})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := audio.ReadAll(context.Background(), l); !errors.Is(err, boom) {
		t.Errorf("failing re-open: %v", err)
	}
	// Another format on re-open is an error.
	n := 0
	l, err = mixdown.NewLoopTrim(context.Background(), func(context.Context) (audio.Source, error) {
		n++
		if n > 1 {
			return audio.NewBufferSource(src[:1], fs), nil
		}
		return audio.NewBufferSource(src, fs), nil
	}, mixdown.LoopTrimOptions{Length: 3 * ls, SourceFrames: ls})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := audio.ReadAll(context.Background(), l); !errors.Is(err, audio.ErrFormatMismatch) {
		t.Errorf("format change on re-open: %v", err)
	}
	_ = audiotest.BlockSizes
}
