package mixdown

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp"
)

// LoopTrimOptions configure a LoopTrim.
type LoopTrimOptions struct {
	// Length is the length of the output in frames.
	Length int64
	// SourceFrames is the length of what the opener returns, in frames
	// (TrackAnalysis.Frames): knowing it, the node starts the crossfade
	// and the fade-out before it gets there, without buffering the input.
	// A source that turns out shorter is padded with silence, a longer
	// one is cut at SourceFrames, so the output is always as declared.
	SourceFrames int64
	// Crossfade is the equal-power crossfade at every loop seam, at most
	// half the source; 0 means 100 ms, negative none.
	Crossfade time.Duration
	// FadeOut is the fade at the end of an output that cuts the source
	// short (a trimmed track, or a looped one that ends within a pass);
	// 0 means 2 s, at most the output's length; negative none.
	FadeOut time.Duration
}

// LoopTrim brings a track to a given length, the API's loop_trim: a
// shorter track (a music bed) is repeated with a crossfade at each seam,
// a longer one is cut with a fade-out. It re-opens the track for every
// repetition, so a loop costs no memory however long the production.
type LoopTrim struct {
	ctx    context.Context
	open   audio.Opener
	format audio.Format

	length int64 // output frames
	srcLen int64 // frames per pass
	period int64 // output frames between pass starts (srcLen - xf)
	loop   bool
	xf     int64 // crossfade frames
	fade   int64 // fade-out frames, 0 when the output is not cut

	cur, next audio.Source
	pass      int64 // pass that cur plays
	pos       int64 // output frames produced
	curEnd    bool  // cur ended before srcLen: it plays silence
	nextEnd   bool
	scratch   audio.Buffer
	view      audio.Buffer
	err       error
}

// NewLoopTrim returns the track that open opens, looped or trimmed to
// o.Length frames. It opens the first pass at once (for the format) and
// the next ones as the output reaches them; ctx is passed to open.
func NewLoopTrim(ctx context.Context, open audio.Opener, o LoopTrimOptions) (*LoopTrim, error) {
	if open == nil || o.Length < 0 || o.SourceFrames < 0 {
		return nil, fmt.Errorf("%w: loop/trim to %d frames of a %d-frame source", dsp.ErrInvalidParameter, o.Length, o.SourceFrames)
	}
	src, err := open(ctx)
	if err != nil {
		return nil, err
	}
	f := src.Format()
	if err := f.Validate(); err != nil {
		closeAll(src)
		return nil, fmt.Errorf("%w: loop/trim source: %w", dsp.ErrInvalidParameter, err)
	}
	l := &LoopTrim{ctx: ctx, open: open, format: f, length: o.Length, srcLen: o.SourceFrames, cur: src,
		scratch: audio.NewBuffer(f.Channels, 1024), view: make(audio.Buffer, f.Channels)}
	rate := float64(f.SampleRate)
	l.loop = o.Length > o.SourceFrames && o.SourceFrames > 0
	l.period = l.srcLen
	if l.loop {
		xf := int64(0)
		if o.Crossfade >= 0 {
			d := o.Crossfade
			if d == 0 {
				d = 100 * time.Millisecond
			}
			xf = int64(math.Round(d.Seconds() * rate))
		}
		l.xf = min(xf, l.srcLen/2)
		l.period = l.srcLen - l.xf
	}
	cut := o.Length < o.SourceFrames || (l.loop && (o.Length-l.srcLen)%l.period != 0)
	if cut && o.FadeOut >= 0 {
		d := o.FadeOut
		if d == 0 {
			d = 2 * time.Second
		}
		l.fade = min(int64(math.Round(d.Seconds()*rate)), o.Length)
	}
	if l.srcLen == 0 { // nothing to play: silence
		l.curEnd = true
	}
	return l, nil
}

// Format implements audio.Source.
func (l *LoopTrim) Format() audio.Format { return l.format }

// Close closes the passes that are open; reading afterwards is an error.
func (l *LoopTrim) Close() error {
	err := closeAll(l.cur, l.next)
	l.cur, l.next = nil, nil
	if l.err == nil {
		l.err = errClosed
	}
	return err
}

var errClosed = errors.New("mixdown: loop/trim read after Close")

// Read implements audio.Source.
func (l *LoopTrim) Read(dst audio.Buffer) (int, error) {
	if len(dst) != l.format.Channels {
		return 0, fmt.Errorf("%w: %d channels for a %d-channel stream", audio.ErrFormatMismatch, len(dst), l.format.Channels)
	}
	want := dst.Frames()
	n := 0
	for n < want && l.pos < l.length && l.err == nil {
		start := l.pass * l.period // output frame of the current pass's start
		k := int(min(int64(want-n), l.length-l.pos))
		// Frames of cur alone, up to the next seam.
		seam := start + l.period
		if !l.loop {
			seam = l.length
		}
		if l.pos < seam {
			k = int(min(int64(k), seam-l.pos))
			l.readPass(&l.cur, &l.curEnd, dst, n, k)
		} else {
			// Crossfade of cur's tail with the next pass's head.
			if l.next == nil && !l.nextEnd {
				src, err := l.open(l.ctx)
				if err != nil {
					l.err = fmt.Errorf("loop/trim: opening pass %d: %w", l.pass+1, err)
					break
				}
				if src.Format() != l.format {
					closeAll(src)
					l.err = fmt.Errorf("%w: loop/trim pass %d is %+v, the first %+v", audio.ErrFormatMismatch, l.pass+1, src.Format(), l.format)
					break
				}
				l.next = src
			}
			j0 := l.pos - seam // frame within the crossfade
			k = int(min(int64(k), l.xf-j0, int64(l.scratch.Frames())))
			l.readPass(&l.cur, &l.curEnd, dst, n, k)
			if l.err != nil {
				break
			}
			l.readPass(&l.next, &l.nextEnd, l.scratch, 0, k)
			if l.err != nil {
				break
			}
			for j := 0; j < k; j++ {
				th := math.Pi / 2 * (float64(j0+int64(j)) + 0.5) / float64(l.xf)
				a, b := math.Cos(th), math.Sin(th)
				for c := range dst {
					dst[c][n+j] = a*dst[c][n+j] + b*l.scratch[c][j]
				}
			}
			if j0+int64(k) == l.xf { // the seam is done: next becomes cur
				closeAll(l.cur)
				l.cur, l.curEnd = l.next, l.nextEnd
				l.next, l.nextEnd = nil, false
				l.pass++
			}
		}
		if l.err != nil {
			break
		}
		l.fadeOut(dst, n, k)
		l.pos += int64(k)
		n += k
	}
	if n > 0 {
		return n, nil
	}
	if l.err != nil {
		return 0, l.err
	}
	if l.pos >= l.length {
		return 0, io.EOF
	}
	return 0, nil
}

// readPass fills b[.][at:at+k] from *src, which plays a pass; after the
// pass's end (or past SourceFrames, which the caller never asks for) it
// fills silence.
func (l *LoopTrim) readPass(src *audio.Source, ended *bool, b audio.Buffer, at, k int) {
	got := 0
	for got < k && !*ended {
		m, err := (*src).Read(b.SliceInto(l.view, at+got, at+k))
		got += m
		switch {
		case m > 0:
		case errors.Is(err, io.EOF):
			*ended = true
		case err != nil:
			l.err = fmt.Errorf("loop/trim pass: %w", err)
			clear(l.view)
			return
		default:
			l.err = fmt.Errorf("%w: loop/trim source returned no frames and no error", audio.ErrMalformed)
			clear(l.view)
			return
		}
	}
	clear(l.view)
	for c := range b {
		clear(b[c][at+got : at+k])
	}
}

// fadeOut applies the fade at the end of a cut output to the k frames
// at dst[.][n:], which are output frames pos...
func (l *LoopTrim) fadeOut(dst audio.Buffer, n, k int) {
	from := l.length - l.fade
	if l.fade == 0 || l.pos+int64(k) <= from {
		return
	}
	for j := max(0, int(from-l.pos)); j < k; j++ {
		u := (float64(l.pos+int64(j)-from) + 0.5) / float64(l.fade)
		g := math.Cos(math.Pi / 2 * u)
		for c := range dst {
			dst[c][n+j] *= g
		}
	}
}

// closeAll closes each source that is an io.Closer and joins the errors.
func closeAll(srcs ...audio.Source) error {
	var errs []error
	for _, s := range srcs {
		if c, ok := s.(io.Closer); ok && s != nil {
			if err := c.Close(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}
