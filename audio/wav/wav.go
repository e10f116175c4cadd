// Package wav decodes and encodes RIFF/WAVE audio in pure Go, streaming, in
// bounded memory. Importing it registers the "wav" decoder (matched by
// content: RIFF, RF64 or BW64 followed by WAVE) and the "wav" and
// "wav-24bit" encoders with package audio.
//
// The decoder reads from any io.Reader: it never trusts a size field for an
// allocation, skips unknown chunks by discarding them (or seeking when the
// reader can), and reads a data chunk whose size is unknown (0xFFFFFFFF as
// ffmpeg writes on pipes, 0x7FFFF000 rounded down to whole frames as sox
// does, or 0) to the end of the stream. It handles PCM 8 (unsigned), 16, 24 and 32 bit, IEEE float 32 and
// 64 bit and WAVE_FORMAT_EXTENSIBLE, 1-8 channels.
//
// Integer samples scale by 2^(bits-1) both ways (audio.DecodePCM and
// audio.EncodePCM), so WAV -> Buffer -> WAV at the same bit depth is
// bit-exact.
package wav

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/audiopost/audiopost/audio"
)

func init() {
	audio.RegisterCodec(audio.Codec{
		Name:  "wav",
		Match: Match,
		Decode: func(ctx context.Context, r io.Reader) (audio.Decoder, error) {
			return NewDecoder(ctx, r)
		},
	})
	audio.RegisterEncoder("wav", func(ctx context.Context, w io.Writer, f audio.Format, opts audio.EncodeOptions) (audio.Encoder, error) {
		return NewEncoder(ctx, w, f, opts)
	})
	audio.RegisterEncoder("wav-24bit", func(ctx context.Context, w io.Writer, f audio.Format, opts audio.EncodeOptions) (audio.Encoder, error) {
		opts.BitDepth = 24
		return NewEncoder(ctx, w, f, opts)
	})
}

// Errors of this package; each wraps the audio sentinel that fits, so callers
// can test either with errors.Is.
var (
	// ErrNotWAV means the stream does not start with a RIFF/RF64/BW64 WAVE header.
	ErrNotWAV = fmt.Errorf("%w: not a RIFF/WAVE stream", audio.ErrUnknownFormat)
	// ErrTruncated means the data chunk ended before the size its header
	// states. Every complete frame before the cut has been delivered.
	ErrTruncated = fmt.Errorf("%w: truncated data chunk", audio.ErrMalformed)
	// ErrLengthExceeded means more frames were written to a non-seekable
	// encoder than the EncodeOptions.Length it announced in the header.
	ErrLengthExceeded = fmt.Errorf("%w: more frames than EncodeOptions.Length announced", audio.ErrFormatMismatch)
)

// Format tags of the fmt chunk.
const (
	formatPCM        = 0x0001
	formatFloat      = 0x0003
	formatExtensible = 0xFFFE
)

// guidTail is the part shared by the KSDATAFORMAT_SUBTYPE GUIDs
// (xxxxxxxx-0000-0010-8000-00aa00389b71); the first four bytes hold the
// format tag of the subformat.
var guidTail = []byte{0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xaa, 0x00, 0x38, 0x9b, 0x71}

// Placeholder sizes that mean "unknown, read to the end".
const (
	sizeUnknown    = 0xFFFFFFFF // ffmpeg and most tools on non-seekable output
	sizeSoxUnknown = 0x7FFFF000 // sox on non-seekable output, rounded down to whole frames
)

// Match reports whether head starts a WAVE file: "RIFF", "RF64" or "BW64",
// four size bytes, then "WAVE".
func Match(head []byte) bool {
	if len(head) < 12 || !bytes.Equal(head[8:12], []byte("WAVE")) {
		return false
	}
	switch string(head[:4]) {
	case "RIFF", "RF64", "BW64":
		return true
	}
	return false
}

// Speaker positions of the WAVE_FORMAT_EXTENSIBLE channel mask.
const (
	SpeakerFrontLeft     = 0x1
	SpeakerFrontRight    = 0x2
	SpeakerFrontCenter   = 0x4
	SpeakerLowFrequency  = 0x8
	SpeakerBackLeft      = 0x10
	SpeakerBackRight     = 0x20
	SpeakerBackCenter    = 0x100
	SpeakerSideLeft      = 0x200
	SpeakerSideRight     = 0x400
	speakerLayoutUnknown = 0
)

// DefaultChannelMask returns the speaker layout the encoder declares for a
// channel count: the layouts ffmpeg assumes (mono, stereo, 3.0, quad, 5.0,
// 5.1, 6.1, 7.1), or 0 (no positions) for other counts.
func DefaultChannelMask(channels int) uint32 {
	const fl, fr, fc, lfe = SpeakerFrontLeft, SpeakerFrontRight, SpeakerFrontCenter, SpeakerLowFrequency
	const bl, br, bc, sl, sr = SpeakerBackLeft, SpeakerBackRight, SpeakerBackCenter, SpeakerSideLeft, SpeakerSideRight
	switch channels {
	case 1:
		return fc
	case 2:
		return fl | fr
	case 3:
		return fl | fr | fc
	case 4:
		return fl | fr | bl | br
	case 5:
		return fl | fr | fc | bl | br
	case 6:
		return fl | fr | fc | lfe | bl | br
	case 7:
		return fl | fr | fc | lfe | bc | sl | sr
	case 8:
		return fl | fr | fc | lfe | bl | br | sl | sr
	}
	return speakerLayoutUnknown
}
