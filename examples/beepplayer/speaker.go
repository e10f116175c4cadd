//go:build speaker

package main

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/gopxl/beep/v2"
	"github.com/gopxl/beep/v2/speaker"
)

// stallTimeout is how long playback may make no progress before -play
// gives up: without a sound card oto neither fails nor plays.
const stallTimeout = 3 * time.Second

var errNoDevice = errors.New("the speaker does not play: no audio device?")

// With the speaker tag, -play plays through beep's speaker package.
func init() {
	play = func(ctx context.Context, s beep.Streamer, f beep.Format) error {
		initErr := make(chan error, 1)
		go func() { initErr <- speaker.Init(f.SampleRate, f.SampleRate.N(100*time.Millisecond)) }()
		select {
		case err := <-initErr:
			if err != nil {
				return err
			}
		case <-time.After(stallTimeout):
			return errNoDevice
		case <-ctx.Done():
			return ctx.Err()
		}
		defer speaker.Close()
		c := &counting{Streamer: s}
		done := make(chan struct{})
		speaker.Play(beep.Seq(c, beep.Callback(func() { close(done) })))
		tick := time.NewTicker(stallTimeout)
		defer tick.Stop()
		last := int64(-1)
		for {
			select {
			case <-done:
				return s.Err()
			case <-ctx.Done():
				speaker.Clear()
				return ctx.Err()
			case <-tick.C:
				n := c.frames.Load()
				if n == last {
					speaker.Clear()
					return errNoDevice
				}
				last = n
			}
		}
	}
}

// counting counts the frames the speaker pulls.
type counting struct {
	beep.Streamer
	frames atomic.Int64
}

func (c *counting) Stream(samples [][2]float64) (int, bool) {
	n, ok := c.Streamer.Stream(samples)
	c.frames.Add(int64(n))
	return n, ok
}
