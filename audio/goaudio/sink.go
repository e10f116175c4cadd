package goaudio

import (
	"fmt"
	"io"

	gaudio "github.com/go-audio/audio"
	gwav "github.com/go-audio/wav"

	"github.com/audiopost/audiopost/audio"
)

// IntBufferWriter is what go-audio's encoders (wav.Encoder, aiff.Encoder)
// have in common: they take interleaved integer samples.
type IntBufferWriter interface {
	Write(buf *gaudio.IntBuffer) error
}

// sinkBlock is the most frames a Sink hands to its writer at once.
const sinkBlock = 4096

// Sink is an audio.Sink that converts audiopost's planar float blocks to
// go-audio IntBuffers and writes them to an IntBufferWriter. It reuses one
// IntBuffer of at most 4096 frames, so Write allocates nothing itself; the
// writer sees the IntBuffer only during its Write call.
type Sink struct {
	w       IntBufferWriter
	format  audio.Format
	bits    int
	offset  int32
	data    []int
	ib      gaudio.IntBuffer
	clipped int64
	err     error
}

// NewSink returns a Sink that writes blocks of format f to w as integer
// samples of the given bit depth (8, 16, 24 or 32; 8-bit samples unsigned,
// as go-audio's WAV encoder expects them). Samples are rounded to nearest
// and saturated (audio.FloatToInt); Clipped counts those outside [-1, 1].
func NewSink(w IntBufferWriter, f audio.Format, bitDepth int) (*Sink, error) {
	if err := checkSinkFormat(f, bitDepth); err != nil {
		return nil, err
	}
	s := &Sink{w: w, format: f, bits: bitDepth}
	if bitDepth == 8 {
		s.offset = 128
	}
	s.data = make([]int, sinkBlock*f.Channels)
	s.ib = gaudio.IntBuffer{
		Format:         &gaudio.Format{NumChannels: f.Channels, SampleRate: f.SampleRate},
		SourceBitDepth: bitDepth,
	}
	return s, nil
}

func checkSinkFormat(f audio.Format, bitDepth int) error {
	if err := f.Validate(); err != nil {
		return err
	}
	switch bitDepth {
	case 8, 16, 24, 32:
		return nil
	}
	return fmt.Errorf("%w: bit depth %d (want 8, 16, 24 or 32)", audio.ErrUnsupported, bitDepth)
}

// Write implements audio.Sink. After the writer fails, every Write returns
// that error.
func (s *Sink) Write(b audio.Buffer) error {
	if s.err != nil {
		return s.err
	}
	if len(b) != s.format.Channels {
		return fmt.Errorf("%w: %d channels for a %d-channel stream", audio.ErrFormatMismatch, len(b), s.format.Channels)
	}
	ch := s.format.Channels
	for from, n := 0, b.Frames(); from < n; {
		m := min(n-from, sinkBlock)
		data := s.data[:m*ch]
		for c := range b {
			p := c
			for _, x := range b[c][from : from+m] {
				v, clip := audio.FloatToInt(x, s.bits)
				if clip {
					s.clipped++
				}
				data[p] = int(v + s.offset)
				p += ch
			}
		}
		s.ib.Data = data
		if err := s.w.Write(&s.ib); err != nil {
			s.err = err
			return err
		}
		from += m
	}
	return nil
}

// Clipped returns how many samples were outside [-1, 1] (or NaN) and were
// saturated.
func (s *Sink) Clipped() int64 { return s.clipped }

// WAVSink is a Sink into a go-audio wav.Encoder.
type WAVSink struct {
	*Sink
	enc *gwav.Encoder
}

// NewWAVSink returns a Sink that writes a WAV file of format f with integer
// PCM samples of the given bit depth (8, 16, 24 or 32) through go-audio's
// wav.Encoder, which needs w to seek back and patch the sizes. Close
// finishes the file; it does not close w. go-audio's encoder holds a
// buffer of one minute of audio (17 MB at 48 kHz, 24-bit stereo).
//
// go-audio's Encoder.Write encodes sample by sample through
// encoding/binary and allocates about two objects per sample; the
// conversion in front of it allocates nothing. For a fast, allocation-free
// WAV encoder use audiopost's audio/wav.
func NewWAVSink(w io.WriteSeeker, f audio.Format, bitDepth int) (*WAVSink, error) {
	// Check first: go-audio's NewEncoder allocates a minute of samples.
	if err := checkSinkFormat(f, bitDepth); err != nil {
		return nil, err
	}
	enc := gwav.NewEncoder(w, f.SampleRate, bitDepth, f.Channels, formatPCM)
	s, err := NewSink(enc, f, bitDepth)
	if err != nil {
		return nil, err
	}
	return &WAVSink{Sink: s, enc: enc}, nil
}

// Encoder returns the go-audio encoder, for example to set its Metadata
// before Close.
func (s *WAVSink) Encoder() *gwav.Encoder { return s.enc }

// Close writes the final sizes into the header (and the metadata, if any).
func (s *WAVSink) Close() error {
	if s.err != nil {
		return s.err
	}
	if !s.wroteAny() {
		// go-audio writes the header with the first block; make sure an
		// empty stream still becomes a valid (empty) WAV file.
		s.ib.Data = s.data[:0]
		if err := s.enc.Write(&s.ib); err != nil {
			return err
		}
	}
	return s.enc.Close()
}

func (s *WAVSink) wroteAny() bool { return s.enc.WrittenBytes > 0 }
