package goaudio

import (
	"errors"
	"fmt"
	"io"

	gwav "github.com/go-audio/wav"

	"github.com/audiopost/audiopost/audio"
)

// ErrTruncated means the data chunk ended before the size its header
// states. Every whole frame before the cut has been delivered.
var ErrTruncated = fmt.Errorf("%w: truncated data chunk", audio.ErrMalformed)

// readBufSize is the WAVSource's read buffer, rounded down to whole frames.
const readBufSize = 32 << 10

// WAVSource is an audio.Source over a WAV file whose chunks go-audio's
// wav.Decoder has walked.
//
// go-audio finds the data chunk and reads the metadata (Decoder().Metadata
// holds LIST/INFO tags found before the samples); the samples are then read
// from the data chunk in blocks into a buffer allocated once and converted
// with audio.DecodePCM. Decoder.PCMBuffer is not used: it allocates three
// buffers per call, and it reads a data chunk of unknown size (0xFFFFFFFF,
// as ffmpeg writes to a pipe) as empty, where WAVSource reads it to the end
// of the file.
type WAVSource struct {
	r          io.Reader
	dec        *gwav.Decoder
	h          header
	blockAlign int

	remaining int64 // bytes of the data chunk not yet read, -1 when unknown
	buf       []byte
	lo, hi    int // buf[lo:hi] is read but not yet decoded
	done      bool
	srcEOF    bool
	readErr   error
	err       error // sticky: io.EOF or the failure
	stalls    int
}

// NewWAVSource checks r with CheckWAV, then reads its header with go-audio's
// wav.NewDecoder and returns a Source positioned at the first frame. It
// handles what CheckWAV accepts: RIFF/WAVE with 8-bit unsigned, 16, 24 and
// 32-bit signed integer or 32/64-bit float samples (also in
// WAVE_FORMAT_EXTENSIBLE), 1-8 channels. r must stay positioned where the
// Source leaves it between Reads.
func NewWAVSource(r io.ReadSeeker) (*WAVSource, error) {
	start, err := r.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil, err
	}
	h, err := checkWAV(r)
	if err != nil {
		return nil, err
	}
	dec := gwav.NewDecoder(r)
	if err := dec.FwdToPCM(); err != nil {
		return nil, fmt.Errorf("%w: go-audio: %v", audio.ErrMalformed, err)
	}
	if err := dec.Err(); err != nil {
		return nil, fmt.Errorf("%w: go-audio: %v", audio.ErrMalformed, err)
	}
	// go-audio and CheckWAV must agree on the format and on where the
	// samples start, or one of them misread the file.
	pos, err := r.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil, err
	}
	if int(dec.NumChans) != h.format.Channels || int(dec.SampleRate) != h.format.SampleRate ||
		int(dec.BitDepth) != h.bits || pos-start != h.dataStart {
		return nil, fmt.Errorf("%w: go-audio reads %d channels, %d Hz, %d bits, samples at %d; the header says %d, %d, %d, %d",
			audio.ErrMalformed, dec.NumChans, dec.SampleRate, dec.BitDepth, pos-start,
			h.format.Channels, h.format.SampleRate, h.bits, h.dataStart)
	}
	s := &WAVSource{r: r, dec: dec, h: h, blockAlign: h.format.Channels * h.enc.Bytes(), remaining: h.dataSize}
	s.buf = make([]byte, readBufSize/s.blockAlign*s.blockAlign)
	return s, nil
}

// Format implements audio.Source.
func (s *WAVSource) Format() audio.Format { return s.h.format }

// BitDepth returns the bits per sample of the file (8, 16, 24, 32 or 64),
// as go-audio's Decoder.BitDepth.
func (s *WAVSource) BitDepth() int { return s.h.bits }

// Encoding returns the sample layout of the data chunk.
func (s *WAVSource) Encoding() audio.SampleEncoding { return s.h.enc }

// Frames returns the number of frames the data chunk states, or -1 when its
// size is unknown. The frames actually read may be fewer (ErrTruncated).
func (s *WAVSource) Frames() int64 {
	if s.h.dataSize < 0 {
		return -1
	}
	return s.h.dataSize / int64(s.blockAlign)
}

// Decoder returns the go-audio decoder that read the header, for its fields
// (NumChans, SampleRate, BitDepth, WavAudioFormat, Metadata). Do not call
// its reading methods: the Source reads the samples.
func (s *WAVSource) Decoder() *gwav.Decoder { return s.dec }

// Read implements audio.Source. After the last frame it returns io.EOF, or
// ErrTruncated when the data chunk ended before its stated size.
func (s *WAVSource) Read(dst audio.Buffer) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	if len(dst) != s.h.format.Channels {
		return 0, fmt.Errorf("%w: %d channels for a %d-channel stream", audio.ErrFormatMismatch, len(dst), s.h.format.Channels)
	}
	want := dst.Frames()
	if want == 0 {
		return 0, nil
	}
	n := 0
	for n < want {
		if s.hi-s.lo >= s.blockAlign {
			k := audio.DecodePCM(dst, n, s.buf[s.lo:s.hi], s.h.enc)
			s.lo += k * s.blockAlign
			n += k
			continue
		}
		if s.done {
			break
		}
		s.fill()
	}
	if n > 0 {
		return n, nil
	}
	s.err = s.end()
	return 0, s.err
}

// fill reads once into the free end of buf, never past the data chunk.
func (s *WAVSource) fill() {
	if s.lo > 0 {
		s.hi = copy(s.buf, s.buf[s.lo:s.hi])
		s.lo = 0
	}
	space := int64(len(s.buf) - s.hi)
	if s.remaining >= 0 && space > s.remaining {
		space = s.remaining
	}
	if space == 0 {
		s.done = true
		return
	}
	m, err := s.r.Read(s.buf[s.hi : s.hi+int(space)])
	s.hi += m
	if s.remaining >= 0 {
		s.remaining -= int64(m)
	}
	switch {
	case err == io.EOF:
		s.srcEOF, s.done = true, true
	case err != nil:
		s.readErr, s.done = err, true
	case m == 0:
		if s.stalls++; s.stalls > 100 {
			s.readErr, s.done = io.ErrNoProgress, true
		}
	default:
		s.stalls = 0
	}
}

// end returns the error that follows the last whole frame.
func (s *WAVSource) end() error {
	partial := s.hi - s.lo
	s.lo = s.hi
	switch {
	case s.readErr != nil:
		if errors.Is(s.readErr, io.ErrUnexpectedEOF) {
			return fmt.Errorf("%w: %v", ErrTruncated, s.readErr)
		}
		return s.readErr
	case s.srcEOF && s.remaining > 0:
		return fmt.Errorf("%w: %d bytes missing, %d bytes of a partial frame dropped", ErrTruncated, s.remaining, partial)
	}
	return io.EOF
}
