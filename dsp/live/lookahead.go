package live

import (
	"errors"
	"fmt"
	"io"

	"github.com/audiopost/audiopost/audio"
)

// lookahead is the read position of a stage that holds la frames of its
// input back before they may go out (Leveler, PeakStage): both fill a
// delay line from upstream and emit what the look-ahead allows, and both
// must end a stream the same way, so the rules live here once.
type lookahead struct {
	la      int   // frames held back
	in, out int64 // frames read from upstream, frames emitted
	eof     bool  // upstream ended; every frame read may go out
	err     error // upstream failed; frames held back are lost
}

// ready fills the delay line (fill reads upstream once and records its
// end through ended) until a frame may go out, and returns how many of
// want frames the stage may emit now. With none it returns the read's
// end: upstream's error, io.EOF, or nothing (a live source that has no
// frames yet).
//
// A zero-length read reports what a read of one frame would, without
// reading upstream: io.EOF only once every frame has gone out, and an
// upstream error only once no frame before it is left, so that a caller
// probing with an empty buffer loses neither the tail nor the frames
// ahead of a failure.
func (q *lookahead) ready(want int, fill func()) (int, error) {
	if want > 0 {
		for !q.eof && q.err == nil && q.in-int64(q.la)-q.out < 1 {
			fill()
		}
	}
	avail := q.in - int64(q.la) - q.out
	if q.eof {
		avail = q.in - q.out
	}
	if avail > 0 {
		return int(min(int64(want), avail)), nil
	}
	switch {
	case q.eof:
		return 0, io.EOF
	case q.err != nil:
		return 0, q.err
	}
	return 0, nil
}

// ended records why upstream's read returned no frames.
func (q *lookahead) ended(err error) {
	switch {
	case errors.Is(err, io.EOF):
		q.eof = true
	case err != nil:
		q.err = err
	default:
		q.err = fmt.Errorf("%w: upstream returned no frames and no error", audio.ErrMalformed)
	}
}
