package audiotest

import (
	"fmt"
	"io"
	"testing"

	"github.com/audiopost/audiopost/audio"
)

// recorder is a testing.TB that records a fatal failure instead of
// stopping the test, so CheckSource can be tested on broken sources.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	panic(r)
}
func (r *recorder) Errorf(format string, args ...any) { r.failed = fmt.Sprintf(format, args...) }

func check(t *testing.T, open func() audio.Source) string {
	r := &recorder{TB: t}
	func() {
		defer func() {
			if p := recover(); p != nil && p != r {
				panic(p)
			}
		}()
		CheckSource(r, open)
	}()
	return r.failed
}

// earlyEOF reports io.EOF on a zero-length read and then goes on.
type earlyEOF struct{ audio.BufferSource }

func (s *earlyEOF) Read(dst audio.Buffer) (int, error) {
	if dst.Frames() == 0 {
		return 0, io.EOF
	}
	return s.BufferSource.Read(dst)
}

// eofAfterEmptyAtEnd is correct: it reports the end to a zero-length read
// only once no frame is left.
type eofAtEnd struct {
	*audio.BufferSource
	left int
}

func (s *eofAtEnd) Read(dst audio.Buffer) (int, error) {
	if dst.Frames() == 0 {
		if s.left == 0 {
			return 0, io.EOF
		}
		return 0, nil
	}
	n, err := s.BufferSource.Read(dst)
	s.left -= n
	return n, err
}

// errWithFrames returns frames and an error together.
type errWithFrames struct{ *audio.BufferSource }

func (s errWithFrames) Read(dst audio.Buffer) (int, error) {
	n, err := s.BufferSource.Read(dst)
	if n > 0 && n < dst.Frames() {
		return n, io.EOF
	}
	return n, err
}

// notSticky returns io.EOF once and then frames again.
type notSticky struct {
	*audio.BufferSource
	once bool
}

func (s *notSticky) Read(dst audio.Buffer) (int, error) {
	n, err := s.BufferSource.Read(dst)
	if err == io.EOF && !s.once {
		s.once = true
		return 0, io.EOF
	}
	if err == io.EOF {
		return copy(dst[0], []float64{1}), nil
	}
	return n, err
}

func TestCheckSourceCatchesBrokenSources(t *testing.T) {
	buf := Sine(1, 8000, 440, 0.5, 100)
	fresh := func() *audio.BufferSource { return audio.NewBufferSource(buf, 8000) }
	if msg := check(t, func() audio.Source { return fresh() }); msg != "" {
		t.Fatalf("a correct source failed: %s", msg)
	}
	if msg := check(t, func() audio.Source { return &eofAtEnd{fresh(), 100} }); msg != "" {
		t.Fatalf("a source that reports its end to empty reads at the end failed: %s", msg)
	}
	for name, open := range map[string]func() audio.Source{
		"io.EOF on an empty read, then data": func() audio.Source { return &earlyEOF{*fresh()} },
		"frames with an error":               func() audio.Source { return errWithFrames{fresh()} },
		"data after io.EOF":                  func() audio.Source { return &notSticky{BufferSource: fresh()} },
	} {
		if msg := check(t, open); msg == "" {
			t.Errorf("%s: CheckSource passed it", name)
		} else {
			t.Logf("%s: %s", name, msg)
		}
	}
}
