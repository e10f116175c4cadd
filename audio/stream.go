package audio

import (
	"context"
	"errors"
	"io"
)

// BufferSource is a Source that plays a Buffer from the start.
type BufferSource struct {
	buf    Buffer
	format Format
	pos    int
}

// NewBufferSource returns a Source over b at the given sample rate.
func NewBufferSource(b Buffer, sampleRate int) *BufferSource {
	return &BufferSource{buf: b, format: Format{SampleRate: sampleRate, Channels: len(b)}}
}

// Format implements Source.
func (s *BufferSource) Format() Format { return s.format }

// Read implements Source.
func (s *BufferSource) Read(dst Buffer) (int, error) {
	if s.pos >= s.buf.Frames() {
		return 0, io.EOF
	}
	n := 0
	for c := range dst {
		n = copy(dst[c], s.buf[c][s.pos:])
	}
	s.pos += n
	return n, nil
}

// SeekFrame implements FrameSeeker.
func (s *BufferSource) SeekFrame(frame int64) error {
	if frame < 0 {
		return errors.New("audio: seek to a negative frame")
	}
	s.pos = int(min(frame, int64(s.buf.Frames())))
	return nil
}

// DefaultBlock is the block size, in frames, that Copy and ReadAll use.
const DefaultBlock = 4096

// Copy pulls src to the end and writes every block to dst, checking ctx
// between blocks. It returns the number of frames copied.
func Copy(ctx context.Context, dst Sink, src Source) (int64, error) {
	buf := NewBuffer(src.Format().Channels, DefaultBlock)
	return CopyBuffer(ctx, dst, src, buf)
}

// CopyBuffer is Copy with a caller-supplied block buffer, so that repeated
// copies allocate nothing.
func CopyBuffer(ctx context.Context, dst Sink, src Source, buf Buffer) (int64, error) {
	var total int64
	view := make(Buffer, len(buf))
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		n, err := src.Read(buf)
		if n > 0 {
			if werr := dst.Write(buf.SliceInto(view, 0, n)); werr != nil {
				return total, werr
			}
			total += int64(n)
		}
		if errors.Is(err, io.EOF) {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// ReadAll decodes src to the end into memory. Use it for short material
// (tests, analysis of excerpts); production code streams.
func ReadAll(ctx context.Context, src Source) (Buffer, error) {
	f := src.Format()
	out := make(Buffer, f.Channels)
	buf := NewBuffer(f.Channels, DefaultBlock)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n, err := src.Read(buf)
		for c := range out {
			out[c] = append(out[c], buf[c][:n]...)
		}
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

// SinkFunc adapts a function to the Sink interface.
type SinkFunc func(Buffer) error

// Write implements Sink.
func (f SinkFunc) Write(b Buffer) error { return f(b) }

// MultiSink writes every block to each sink in turn: the tee that feeds
// several encoders and meters from one pass.
func MultiSink(sinks ...Sink) Sink {
	return SinkFunc(func(b Buffer) error {
		for _, s := range sinks {
			if err := s.Write(b); err != nil {
				return err
			}
		}
		return nil
	})
}

// Opener opens a stream at its start. Multi-pass processing (analyse,
// then render) calls it once per pass rather than storing the audio: a
// deterministic graph re-run costs less memory than a stored programme.
// The caller closes what it returns if it is an io.Closer.
type Opener func(ctx context.Context) (Source, error)
