package livestream

import (
	"context"
	"testing"
	"time"

	"github.com/audiopost/audiopost/audio"
)

// TestFeedAllocations: the feed hands the processor a source block per
// 10 ms without making garbage. It waited on a new stall timer from the
// clock for every block (clock.After: 3 allocations, 248 bytes a block,
// 300 blocks a second per stream); it now resets one.
func TestFeedAllocations(t *testing.T) {
	f := audio.Format{SampleRate: 48000, Channels: 2}
	s := &Stream{format: f, clock: realClock{}, opts: Options{Stall: 2 * time.Second}, data: make(chan srcBlock, 1), free: make(chan audio.Buffer, 2)}
	// Two buffers: the feed gives the one it read from back on its next
	// read.
	s.free <- audio.NewBuffer(f.Channels, blockFrames)
	s.free <- audio.NewBuffer(f.Channels, blockFrames)
	now := s.clock.Now()
	in := &feed{s: s, ctx: context.Background(), up: true, last: now, start: now, ahead: -1}
	dst := audio.NewBuffer(f.Channels, blockFrames)
	block := func() {
		s.data <- srcBlock{b: <-s.free, n: blockFrames}
		if n, err := in.Read(dst); n != blockFrames || err != nil {
			t.Fatalf("read %d frames, %v", n, err)
		}
	}
	block() // the timer is made once
	allocs := testing.AllocsPerRun(1000, block)
	t.Logf("%.1f allocations per 10 ms block", allocs)
	if allocs != 0 {
		t.Errorf("%.1f allocations per 10 ms block, want none", allocs)
	}
}
