package dsp

import (
	"errors"
	"io"

	"github.com/audiopost/audiopost/audio"
)

// A graph owns its inputs: every node's Close closes the sources it
// reads, so closing the output of a graph closes every decoder in it, and
// a program that builds a graph needs one defer, not one per input.

// closeSources closes each source that is an io.Closer and returns the
// errors joined.
func closeSources(srcs ...audio.Source) error {
	var errs []error
	for _, s := range srcs {
		if c, ok := s.(io.Closer); ok {
			if err := c.Close(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// Close closes the upstream source (see closeSources).
func (b *Biquad) Close() error { return closeSources(b.src) }

// Close closes the upstream source.
func (b *BWE) Close() error { return closeSources(b.src) }

// Close closes the upstream source.
func (c *Compressor) Close() error { return closeSources(c.src) }

// Close closes the upstream source.
func (g *Gain) Close() error { return closeSources(g.src) }

// Close closes the upstream source.
func (l *Limiter) Close() error { return closeSources(l.src) }

// Close closes the upstream source.
func (p *PlanGain) Close() error { return closeSources(p.src) }

// Close closes the upstream source.
func (s *StudioVoice) Close() error { return closeSources(s.Source) }
