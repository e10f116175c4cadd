package mp3

import (
	"bytes"
	"fmt"
	"io"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/id3"
)

// MaxTagSize is the largest ID3v2 tag the parser reads into memory; larger
// tags are skipped without parsing, so a header cannot make the decoder
// allocate more than this.
const MaxTagSize = 32 << 20

// mergeTags fills the empty fields of t from fallback.
func mergeTags(t, fallback audio.Tags) audio.Tags {
	for _, f := range []struct{ dst, src *string }{
		{&t.Title, &fallback.Title}, {&t.Artist, &fallback.Artist}, {&t.Album, &fallback.Album},
		{&t.Year, &fallback.Year}, {&t.Comment, &fallback.Comment}, {&t.Track, &fallback.Track},
		{&t.Genre, &fallback.Genre},
	} {
		if *f.dst == "" {
			*f.dst = *f.src
		}
	}
	return t
}

// readID3v2 reads the tag of total size n (header included) from r into
// memory, unless it exceeds MaxTagSize, in which case it is skipped. The
// buffer grows with the data that actually arrives, so a lying size costs
// no more memory than the input holds. Only a truncated tag is an error; a
// damaged one yields the tags before the damage.
func readID3v2(r io.Reader, n int) (audio.Tags, error) {
	if n > MaxTagSize {
		if _, err := io.CopyN(io.Discard, r, int64(n)); err != nil {
			return audio.Tags{}, fmt.Errorf("%w: truncated ID3v2 tag", audio.ErrMalformed)
		}
		return audio.Tags{}, nil
	}
	var buf bytes.Buffer
	if _, err := io.CopyN(&buf, r, int64(n)); err != nil {
		return audio.Tags{}, fmt.Errorf("%w: truncated ID3v2 tag", audio.ErrMalformed)
	}
	t, _ := id3.ParseTags(buf.Bytes())
	return t, nil
}
