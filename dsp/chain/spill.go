package chain

import (
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"

	"github.com/audiopost/audiopost/audio"
)

// DefaultSpillBytes is Config.SpillBytes when it is zero: 2 GiB, about
// 100 minutes of 48 kHz stereo.
const DefaultSpillBytes = 2 << 30

// spill keeps the output of processing.core, the processed signal before
// the loudness control, in a temporary file: the first pass that renders
// it writes it, and every later pass of the pipeline (more loudness
// measurements, the limiter checks, the final render) reads it back
// instead of decoding, filtering, denoising and compressing the input
// again. That is sound because nothing the loudness passes change lies
// upstream of it: they change the control plan, the normalization gain
// and the ceiling only.
//
// The signal is kept as 32-bit floats in the machine's byte order (the
// file never leaves the process): the rounding lies about 145 dB below
// each sample, far under any output's resolution, and the pass that
// writes the file passes on the same rounded values, so that every pass
// sees the same signal. The file is
// unlinked as soon as it is made where the system allows it, so nothing
// is left behind even by a crash.
type spill struct {
	dir   string
	limit int64
	f     *os.File
	name  string // the file's name while it could not be unlinked
	state spillState
	// format and frames describe what a complete spill holds.
	format audio.Format
	frames int64
}

type spillState uint8

const (
	spillEmpty     spillState = iota
	spillWriting              // a pass is writing it
	spillComplete             // holds the whole signal
	spillAbandoned            // too large, or the file failed: never again
)

// newSpill returns the spill of a pipeline of cfg, or nil when cfg keeps
// none. Only the restoration stage makes the processing before the
// loudness control costly enough to pay for the file: filter, leveler and
// compressor alone cost about what writing and reading it back does (on
// five minutes of speech, 50 ms more in the first loudness pass and 60 ms
// less in the render on one core; on two cores the render, paced by the
// limiter, gained 10 ms), where with the classic denoiser the chain runs
// 1.25x as fast and with the dynamic one 1.5x (BenchmarkChainSpill).
func newSpill(cfg Config) *spill {
	limit := cfg.SpillBytes
	if limit == 0 {
		limit = DefaultSpillBytes
	}
	if limit < 0 || cfg.Restoration == nil {
		return nil
	}
	return &spill{dir: cfg.TempDir, limit: limit}
}

// ready reports whether s holds the whole signal.
func (s *spill) ready() bool { return s != nil && s.state == spillComplete }

// open returns a Source reading the whole spilled signal from its start.
func (s *spill) open() audio.Source {
	return &spillReader{s: s}
}

// tee returns src with what it yields written to the spill, or src itself
// when the spill is taken, abandoned or would grow beyond its limit.
// frames is the input's length, -1 if unknown.
func (s *spill) tee(src audio.Source, frames int64) audio.Source {
	if s == nil || s.state != spillEmpty {
		return src
	}
	f := src.Format()
	if frames > 0 && frames*int64(f.Channels)*4 > s.limit {
		s.state = spillAbandoned
		return src
	}
	if s.f == nil {
		t, err := os.CreateTemp(s.dir, "audiopost-spill-*")
		if err != nil {
			s.state = spillAbandoned
			return src
		}
		s.f = t
		if os.Remove(t.Name()) != nil {
			s.name = t.Name() // removed by close
		}
	}
	s.state, s.format, s.frames = spillWriting, f, 0
	return &spillWriter{s: s, src: src, buf: make([]byte, 0, spillChunk)}
}

// reset forgets a write that did not reach the end, so that the next pass
// writes the spill again.
func (s *spill) reset() {
	if s != nil && s.state == spillWriting {
		s.state = spillEmpty
	}
}

// close removes the file.
func (s *spill) close() {
	if s == nil || s.f == nil {
		return
	}
	s.f.Close()
	if s.name != "" {
		os.Remove(s.name)
	}
	s.f, s.name = nil, ""
	if s.state != spillAbandoned {
		s.state = spillEmpty
	}
}

// abandon gives the spill up for good and frees its disk space at once.
func (s *spill) abandon() {
	s.state = spillAbandoned
	s.close()
}

// spillChunk is how many bytes the writer gathers before each write and
// the reader reads at once.
const spillChunk = 1 << 16

// spillWriter is the tee of spill.tee.
type spillWriter struct {
	s   *spill
	src audio.Source
	buf []byte
	off int64
}

func (w *spillWriter) Format() audio.Format { return w.src.Format() }

func (w *spillWriter) Read(dst audio.Buffer) (int, error) {
	n, err := w.src.Read(dst)
	if w.s.state != spillWriting {
		return n, err
	}
	if n > 0 {
		ch := len(dst)
		if w.off+int64(len(w.buf)+n*ch*4) > w.s.limit {
			w.s.abandon()
			return n, err
		}
		for i := 0; i < n; {
			// Frames up to the end of the chunk, interleaved.
			m := min(n-i, (cap(w.buf)-len(w.buf))/(4*ch))
			if m == 0 {
				if !w.flush() {
					return n, err
				}
				continue
			}
			k := len(w.buf)
			w.buf = w.buf[:k+m*ch*4]
			for c := range dst {
				x := dst[c][i : i+m]
				b := w.buf[k+4*c:]
				for j, v := range x {
					r := float32(v)
					x[j] = float64(r)
					binary.NativeEndian.PutUint32(b[j*4*ch:], math.Float32bits(r))
				}
			}
			i += m
		}
		w.s.frames += int64(n)
	}
	if errors.Is(err, io.EOF) && w.flush() {
		w.s.state = spillComplete
	}
	return n, err
}

// flush writes the gathered bytes; a failure abandons the spill.
func (w *spillWriter) flush() bool {
	if len(w.buf) == 0 {
		return true
	}
	if _, err := w.s.f.WriteAt(w.buf, w.off); err != nil {
		w.s.abandon()
		return false
	}
	w.off += int64(len(w.buf))
	w.buf = w.buf[:0]
	return true
}

// spillReader reads a complete spill.
type spillReader struct {
	s   *spill
	pos int64 // frames read
	buf []byte
}

func (r *spillReader) Format() audio.Format { return r.s.format }

// Info states the length, which the passes size their analyses by.
func (r *spillReader) Info() audio.Info {
	f := r.s.format
	return audio.Info{Channels: f.Channels, SampleRate: f.SampleRate, Frames: r.s.frames}
}

func (r *spillReader) Read(dst audio.Buffer) (int, error) {
	ch := len(dst)
	n := min(int64(dst.Frames()), r.s.frames-r.pos)
	if n <= 0 {
		return 0, io.EOF
	}
	n = min(n, int64(spillChunk/(4*ch)))
	size := int(n) * ch * 4
	if cap(r.buf) < size {
		r.buf = make([]byte, spillChunk)
	}
	b := r.buf[:size]
	if _, err := r.s.f.ReadAt(b, r.pos*int64(ch)*4); err != nil {
		return 0, err
	}
	for c := range dst {
		x := dst[c][:n]
		b := b[4*c:]
		for j := range x {
			x[j] = float64(math.Float32frombits(binary.NativeEndian.Uint32(b[j*4*ch:])))
		}
	}
	r.pos += n
	return int(n), nil
}
