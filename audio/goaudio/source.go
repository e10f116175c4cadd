package goaudio

import (
	"fmt"
	"io"

	gaudio "github.com/go-audio/audio"

	"github.com/audiopost/audiopost/audio"
)

// Source is an audio.Source over a go-audio Buffer held in memory. It
// converts the frames a Read asks for, and nothing else, so the buffer is
// not copied.
type Source struct {
	format audio.Format
	frames int
	pos    int

	kind   int // kindInt, kindF64 or kindF32
	ints   []int
	bits   int
	f64    []float64
	f32    []float32
	offset int32 // subtracted from integer samples: 128 for unsigned 8-bit
}

const (
	kindInt = iota
	kindF64
	kindF32
)

// NewSource returns a Source that plays b from its first frame. b must be
// a *audio.IntBuffer with SourceBitDepth 8, 16, 24 or 32 (8-bit samples
// unsigned, the others signed, as go-audio's WAV decoder produces them), a
// *audio.FloatBuffer or a *audio.Float32Buffer holding nominal [-1, 1]
// samples, with a Format within audiopost's limits (audio.Format.Validate).
// Samples after the last whole frame are ignored. b must not change while
// the Source is read.
func NewSource(b gaudio.Buffer) (*Source, error) {
	if b == nil || b.PCMFormat() == nil {
		return nil, fmt.Errorf("%w: go-audio buffer without a Format", audio.ErrUnsupported)
	}
	pf := b.PCMFormat()
	f := audio.Format{SampleRate: pf.SampleRate, Channels: pf.NumChannels}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	s := &Source{format: f}
	var samples int
	switch b := b.(type) {
	case *gaudio.IntBuffer:
		switch b.SourceBitDepth {
		case 8:
			s.offset = 128
		case 16, 24, 32:
		default:
			return nil, fmt.Errorf("%w: IntBuffer.SourceBitDepth %d (want 8, 16, 24 or 32)", audio.ErrUnsupported, b.SourceBitDepth)
		}
		s.kind, s.ints, s.bits, samples = kindInt, b.Data, b.SourceBitDepth, len(b.Data)
	case *gaudio.FloatBuffer:
		s.kind, s.f64, samples = kindF64, b.Data, len(b.Data)
	case *gaudio.Float32Buffer:
		s.kind, s.f32, samples = kindF32, b.Data, len(b.Data)
	default:
		return nil, fmt.Errorf("%w: go-audio buffer of type %T", audio.ErrUnsupported, b)
	}
	s.frames = samples / f.Channels
	return s, nil
}

// Format implements audio.Source.
func (s *Source) Format() audio.Format { return s.format }

// Read implements audio.Source.
func (s *Source) Read(dst audio.Buffer) (int, error) {
	if len(dst) != s.format.Channels {
		return 0, fmt.Errorf("%w: %d channels for a %d-channel stream", audio.ErrFormatMismatch, len(dst), s.format.Channels)
	}
	if s.pos >= s.frames {
		return 0, io.EOF
	}
	n := min(dst.Frames(), s.frames-s.pos)
	ch := s.format.Channels
	for c := range dst {
		out := dst[c][:n]
		p := s.pos*ch + c
		switch s.kind {
		case kindInt:
			for i := range out {
				out[i] = audio.IntToFloat(int32(s.ints[p])-s.offset, s.bits)
				p += ch
			}
		case kindF64:
			for i := range out {
				out[i] = s.f64[p]
				p += ch
			}
		default:
			for i := range out {
				out[i] = float64(s.f32[p])
				p += ch
			}
		}
	}
	s.pos += n
	return n, nil
}
