package engine

import (
	"context"
	"crypto/md5"
	"testing"

	"github.com/audiopost/audiopost/production/artwork"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
)

// collectEncoder records what it is given.
type collectEncoder struct {
	got    audio.Buffer
	closed bool
}

func (c *collectEncoder) Write(b audio.Buffer) error {
	for ch := range b {
		c.got[ch] = append(c.got[ch], b[ch]...)
	}
	return nil
}

func (c *collectEncoder) Close() error { c.closed = true; return nil }

// TestSplitSinkBoundaries cuts a stream at chapter bounds, two of them
// past its end: every part gets its range, at most one part's encoder is
// open at any moment (the ones the stream never reached too, opened as
// empty), and finish closes them all.
func TestSplitSinkBoundaries(t *testing.T) {
	sig := audiotest.Noise(2, 1000, 0.5, 7)
	bounds := []int64{0, 333, 333, 334, 900, 1200, 1300}
	for _, block := range audiotest.BlockSizes {
		var encs []*collectEncoder
		s := &splitSink{ctx: context.Background(), bounds: bounds, files: make([]*encodedFile, len(bounds)), view: make(audio.Buffer, 2)}
		s.open = func(k int, empty bool) (*encodedFile, error) {
			if k != len(encs) {
				t.Fatalf("part %d opened after %d parts", k, len(encs))
			}
			// One encoder of the output at a time, also for the parts
			// the stream never reaches.
			for j, e := range encs {
				if !e.closed {
					t.Fatalf("part %d opened while part %d is open", k, j)
				}
			}
			if reached := bounds[k] < int64(sig.Frames()); empty == reached {
				t.Errorf("part %d opened as empty=%v", k, empty)
			}
			e := &collectEncoder{got: make(audio.Buffer, 2)}
			encs = append(encs, e)
			return &encodedFile{fh: &fileHandle{h: md5.New()}, enc: e}, nil
		}
		view := make(audio.Buffer, 2)
		for i := 0; i < sig.Frames(); i += block {
			if err := s.Write(sig.SliceInto(view, i, min(i+block, sig.Frames()))); err != nil {
				t.Fatal(err)
			}
		}
		for k, e := range encs {
			if closed := k < 4; e.closed != closed {
				t.Errorf("block %d: part %d closed=%v during the pass, want %v", block, k, e.closed, closed)
			}
		}
		if err := s.finish(); err != nil {
			t.Fatal(err)
		}
		if len(encs) != len(bounds) {
			t.Fatalf("block %d: %d parts, want %d", block, len(encs), len(bounds))
		}
		for k, e := range encs {
			end := int64(sig.Frames())
			if k+1 < len(bounds) {
				end = min(bounds[k+1], end)
			}
			start := min(bounds[k], int64(sig.Frames()))
			if int64(e.got.Frames()) != end-start {
				t.Fatalf("block %d: part %d has %d frames, want %d", block, k, e.got.Frames(), end-start)
			}
			for c := range e.got {
				for i, v := range e.got[c] {
					if v != sig[c][bounds[k]+int64(i)] {
						t.Fatalf("block %d: part %d frame %d differs", block, k, i)
					}
				}
			}
			if !e.closed {
				t.Errorf("block %d: part %d open after finish", block, k)
			}
		}
	}
}

func TestTeeSinksAllocs(t *testing.T) {
	b := audiotest.Noise(2, audio.DefaultBlock, 0.5, 3)
	wave := artwork.NewWaveform(48000, artwork.WaveformWidth)
	mono := &monoSink{buf: audio.NewBuffer(1, audio.DefaultBlock), sinks: []audio.Sink{artwork.NewWaveform(48000, 100)}}
	s := &splitSink{ctx: context.Background(), bounds: []int64{0}, files: []*encodedFile{{enc: nopEncoder{}}}, view: make(audio.Buffer, 2)}
	tee := audio.MultiSink(wave, mono, s)
	if allocs := testing.AllocsPerRun(500, func() { tee.Write(b) }); allocs != 0 {
		t.Errorf("the tee's own sinks allocate %.1f times per block", allocs)
	}
}

type nopEncoder struct{}

func (nopEncoder) Write(audio.Buffer) error { return nil }
func (nopEncoder) Close() error             { return nil }
