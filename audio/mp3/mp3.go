// Package mp3 decodes MPEG-1 and MPEG-2 Layer III streams in pure Go on top
// of github.com/hajimehoshi/go-mp3. Importing it registers the "mp3"
// decoder with package audio.
//
// The package adds what go-mp3 lacks: mono streams come out as one channel;
// the Xing/Info and LAME tags give the exact length, and the encoder delay
// and padding are trimmed the way ffmpeg trims them, so decoded lengths and
// alignment match ffmpeg's; the duration is known without decoding (from
// the Xing/VBRI frame count, or by scanning frame headers of seekable
// inputs); tags come from ID3v2.2-2.4 with ID3v1 as fallback; and frames
// are checked before go-mp3 sees them, so that damaged data is resynchronised
// or concealed rather than crashing the decoder.
//
// MPEG-2.5 (8-12 kHz) is not claimed, since go-mp3 cannot decode it: such
// files fall through to the ffmpeg adapter when it is registered.
package mp3

import (
	"context"
	"fmt"
	"io"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/id3"
)

func init() {
	audio.RegisterCodec(audio.Codec{
		Name:  "mp3",
		Match: Match,
		Decode: func(ctx context.Context, r io.Reader) (audio.Decoder, error) {
			return NewDecoder(ctx, r)
		},
		Probe: Probe,
	})
}

// ErrMPEG25 means the stream is MPEG-2.5, which the pure-Go decoder cannot
// decode.
var ErrMPEG25 = fmt.Errorf("%w: MPEG-2.5 Layer III (8-12 kHz) is not supported by the pure-Go MP3 decoder", audio.ErrUnsupported)

// Match reports whether head (the first bytes of a stream) is an MP3 this
// package decodes: an ID3v2 tag followed by a Layer III frame header (or a
// tag too long to see past, as cover art makes it), or a Layer III frame
// header at offset 0 whose successor header is where its length says. Layer
// I/II, ADTS AAC, MPEG-2.5 and free-format streams are not claimed.
func Match(head []byte) bool {
	if n := id3.TagSize(head); n > 0 {
		if n+4 > len(head) {
			return true
		}
		h, ok := parseHeader(head[n:])
		return ok && h.version != 25
	}
	h, ok := parseHeader(head)
	if !ok || h.version == 25 {
		return false
	}
	if len(head) == h.size {
		return true // a one-frame stream
	}
	if len(head) < h.size+4 {
		return false
	}
	h2, ok := parseHeader(head[h.size:])
	return ok && h2.sameStream(h)
}
