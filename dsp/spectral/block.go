package spectral

import (
	"errors"
	"fmt"
	"io"

	"github.com/audiopost/audiopost/audio"
)

// ErrInvalidParameter means a node was configured with a value outside its
// domain; the wrapping message names the option.
var ErrInvalidParameter = errors.New("spectral: invalid parameter")

// hopRunner drives a processing function that works on fixed chunks of hop
// frames and delays its output by a fixed latency. It turns that into an
// audio.Source that honours the streaming contract: the output is cut so
// that output frame i lines up with input frame i, the stream is padded
// with zeros after the end of the input until every real frame has come
// out, and because the chunks sit at fixed positions of the stream, the
// result does not depend on the block sizes callers read with.
type hopRunner struct {
	src     audio.Source
	format  audio.Format
	hop     int
	process func(in, out audio.Buffer)

	in, out audio.Buffer // hop frames each
	view    audio.Buffer // header for slicing in
	inN     int
	outPos  int
	outN    int
	skip    int // output frames still to drop (the latency)
	latency int
	inTotal int64 // real input frames
	emitted int64 // real output frames delivered
	eof     bool
	err     error
}

func newHopRunner(src audio.Source, hop, latency int, process func(in, out audio.Buffer)) *hopRunner {
	f := src.Format()
	return &hopRunner{
		src: src, format: f, hop: hop, process: process, skip: latency, latency: latency,
		in: audio.NewBuffer(f.Channels, hop), out: audio.NewBuffer(f.Channels, hop),
		view: make(audio.Buffer, f.Channels),
	}
}

// Format implements audio.Source.
func (r *hopRunner) Format() audio.Format { return r.format }

func (r *hopRunner) skipTotal() int { return r.latency }

func (r *hopRunner) done() bool { return r.eof && r.emitted >= r.inTotal }

// Read implements audio.Source.
func (r *hopRunner) Read(dst audio.Buffer) (int, error) {
	if len(dst) != r.format.Channels {
		return 0, fmt.Errorf("%w: %d channels for a %d-channel stream", audio.ErrFormatMismatch, len(dst), r.format.Channels)
	}
	want := dst.Frames()
	n := 0
	for n < want && !r.done() {
		if r.outPos < r.outN {
			c := min(r.outN-r.outPos, want-n)
			if r.eof {
				c = int(min(int64(c), r.inTotal-r.emitted))
			}
			for ch := range dst {
				copy(dst[ch][n:n+c], r.out[ch][r.outPos:r.outPos+c])
			}
			r.outPos += c
			r.emitted += int64(c)
			n += c
			continue
		}
		if r.err != nil {
			break
		}
		if !r.eof && r.inN < r.hop {
			m, err := r.src.Read(r.in.SliceInto(r.view, r.inN, r.hop))
			r.inN += m
			r.inTotal += int64(m)
			switch {
			case errors.Is(err, io.EOF):
				r.eof = true
			case err != nil:
				r.err = err
			case m == 0:
				r.err = fmt.Errorf("%w: upstream returned no frames and no error", audio.ErrMalformed)
			}
			if r.inN < r.hop && !r.eof {
				continue
			}
		}
		if r.eof {
			for ch := range r.in {
				clear(r.in[ch][r.inN:])
			}
		}
		r.process(r.in, r.out)
		r.inN = 0
		r.outPos, r.outN = 0, r.hop
		if r.skip > 0 {
			d := min(r.skip, r.hop)
			r.outPos = d
			r.skip -= d
		}
	}
	if n > 0 {
		return n, nil
	}
	if r.err != nil && !r.done() {
		return 0, r.err
	}
	if want == 0 && !r.done() {
		return 0, nil
	}
	return 0, io.EOF
}

// closeSource closes src when it is an io.Closer: a graph owns its inputs,
// so closing the output of a chain closes every decoder in it.
func closeSource(src audio.Source) error {
	if c, ok := src.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
