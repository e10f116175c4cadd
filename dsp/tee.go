package dsp

import (
	"fmt"

	"github.com/audiopost/audiopost/audio"
)

// Tee passes its source through unchanged and writes every block it
// passes to one or more sinks: a loudness meter or an encoder fed from the
// middle of a graph, in the same pass that renders its output.
//
// The sinks see exactly the frames Read returns, in order, each block
// once, as a view of the caller's buffer: they must neither keep nor
// modify it (audio.Sink's rule). They are written in the order given; the
// first error stops the others, is returned by that Read (the block is
// not passed on: the render is failing anyway) and by every later one.
//
// Tee does not own its sinks: Close closes the source only, and the
// caller finishes the sinks (reads the meter, closes the encoder) after
// the stream has ended, when it knows whether the render succeeded.
type Tee struct {
	src   audio.Source
	ch    int
	sinks []audio.Sink
	view  audio.Buffer
	err   error
}

// NewTee returns src teed into sinks. It fails with ErrInvalidParameter
// when a sink is nil, or when a sink that reports a format (a
// loudness.Meter does) was made for another one than src's: a meter
// built for 48 kHz and fed 44.1 kHz would count the frames right and
// weight them wrong.
func NewTee(src audio.Source, sinks ...audio.Sink) (*Tee, error) {
	f := src.Format()
	for i, s := range sinks {
		if s == nil {
			return nil, fmt.Errorf("%w: tee sink %d is nil", ErrInvalidParameter, i)
		}
		if fs, ok := s.(interface{ Format() audio.Format }); ok && fs.Format() != f {
			return nil, fmt.Errorf("%w: tee sink %d takes %+v, the stream is %+v", ErrInvalidParameter, i, fs.Format(), f)
		}
	}
	ch := f.Channels
	return &Tee{src: src, ch: ch, sinks: append([]audio.Sink(nil), sinks...), view: make(audio.Buffer, ch)}, nil
}

// Format implements audio.Source.
func (t *Tee) Format() audio.Format { return t.src.Format() }

// Close closes the source, not the sinks.
func (t *Tee) Close() error { return closeSources(t.src) }

// Read implements audio.Source.
func (t *Tee) Read(dst audio.Buffer) (int, error) {
	if err := checkShape(dst, t.ch); err != nil {
		return 0, err
	}
	if t.err != nil {
		return 0, t.err
	}
	n, err := t.src.Read(dst)
	if n == 0 {
		return n, err
	}
	block := dst.SliceInto(t.view, 0, n)
	for i, s := range t.sinks {
		if werr := s.Write(block); werr != nil {
			t.err = fmt.Errorf("tee sink %d: %w", i, werr)
			break
		}
	}
	clear(t.view) // keep no reference to the caller's buffer
	if t.err != nil {
		return 0, t.err
	}
	return n, err
}
