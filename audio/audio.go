// Package audio defines the streaming model every other audiopost package
// builds on: a planar float64 Buffer, the pull-based Source, the push-based
// Sink, the Info a probe returns, sample conversion between integer PCM and
// float, and a registry through which codecs join by import (like
// image.RegisterFormat), picking a decoder by the content of a stream, never
// by its file name.
package audio

import (
	"errors"
	"fmt"
)

// Format is the shape of a stream: frames per second and channels per frame.
type Format struct {
	SampleRate int
	Channels   int
}

// Validate reports whether f describes a stream audiopost can process.
func (f Format) Validate() error {
	if f.SampleRate < MinSampleRate || f.SampleRate > MaxSampleRate {
		return fmt.Errorf("%w: sample rate %d Hz outside %d-%d", ErrUnsupported, f.SampleRate, MinSampleRate, MaxSampleRate)
	}
	if f.Channels < 1 || f.Channels > MaxChannels {
		return fmt.Errorf("%w: %d channels outside 1-%d", ErrUnsupported, f.Channels, MaxChannels)
	}
	return nil
}

// Limits on formats, chosen so that a hostile header cannot ask for absurd
// buffers while every real recording fits.
const (
	MinSampleRate = 1000
	MaxSampleRate = 768000
	MaxChannels   = 8
)

// Source is the one node type of the streaming graph. Filters wrap Sources.
//
// Read fills dst (len(dst) == Format().Channels, every channel the same
// length) and returns the number of frames written. It returns a non-nil
// error if and only if it returns 0 frames: io.EOF at the end of the stream,
// and then (0, io.EOF) on every later call. A short read (0 < n < len) may
// happen only before the end. A Read with zero-length channels returns
// (0, nil) unless the stream has ended.
type Source interface {
	Format() Format
	Read(dst Buffer) (n int, err error)
}

// Sink consumes audio: encoders, meters and taps. Write must not keep src.
type Sink interface {
	Write(src Buffer) error
}

// Errors that callers can test with errors.Is. Codec packages wrap them with
// a message that says what exactly was wrong.
var (
	// ErrUnknownFormat means no registered codec recognised the content.
	ErrUnknownFormat = errors.New("audio: unknown format")
	// ErrUnsupported means the format was recognised but this variant of it
	// (codec, bit depth, channel count) cannot be decoded or encoded.
	ErrUnsupported = errors.New("audio: unsupported format")
	// ErrMalformed means the data is damaged or inconsistent.
	ErrMalformed = errors.New("audio: malformed data")
	// ErrCodecUnavailable means the codec needs a tool (ffmpeg) that is not
	// installed; the wrapping message names the format.
	ErrCodecUnavailable = errors.New("audio: codec unavailable")
	// ErrTooLong means a decode exceeded the configured duration cap.
	ErrTooLong = errors.New("audio: input longer than allowed")
	// ErrFormatMismatch means a Buffer's shape does not fit the stream.
	ErrFormatMismatch = errors.New("audio: buffer does not match format")
	// ErrTempLimit means a file an encoder or renderer writes for a
	// while reached the limit set for it (EncodeOptions.TempLimit).
	ErrTempLimit = errors.New("audio: temporary file over its limit")
)
