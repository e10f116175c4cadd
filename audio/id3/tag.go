// Package id3 reads ID3 tags (ID3v2.2 to 2.4 and ID3v1) into audio.Tags,
// reads the chapter frames of an ID3v2 tag, and adds to them what ffmpeg's
// mp3 muxer cannot write: a URL (WXXX) and a picture (APIC) per chapter,
// the way podcast players show them (ID3v2 Chapter Frame Addendum, CHAP
// with embedded sub-frames).
//
// Chapters are rewritten in the tags ffmpeg writes: ID3v2.3 and ID3v2.4
// without unsynchronisation. The readers run on uploaded files, so every
// size is checked before it is used and a hostile tag is an error, never
// a panic or a large allocation.
package id3

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/audiopost/audiopost/audio"
)

// Errors, for errors.Is.
var (
	// ErrNoTag means the input does not start with an ID3v2 tag.
	ErrNoTag = errors.New("id3: no ID3v2 tag")
	// ErrMalformed means a size or field that does not fit the tag. It is
	// also audio.ErrMalformed for errors.Is, the class of every damaged
	// input.
	ErrMalformed error = malformed{}
	// ErrUnsupported means a tag this package does not rewrite or read:
	// versions other than 2.3 and 2.4, unsynchronisation, footers, and
	// compressed or encrypted chapter frames.
	ErrUnsupported = errors.New("id3: unsupported tag")
)

type malformed struct{}

func (malformed) Error() string        { return "id3: malformed tag" }
func (malformed) Is(target error) bool { return target == audio.ErrMalformed }

// MaxTagSize bounds the tags read: far above any real one (pictures
// included), far below what would hurt.
const MaxTagSize = 64 << 20

const headerLen = 10

// Tag header flags (both versions).
const (
	flagUnsync      = 0x80
	flagExtended    = 0x40
	flagFooter      = 0x10 // 2.4 only
	frameHeaderSize = 10
)

// tag is a parsed tag: its version, header flags and frames in order,
// followed by padding bytes.
type tag struct {
	version byte
	flags   byte
	frames  []frame
	padding int
}

// frame is one frame; raw is the whole frame, header included, as read.
type frame struct {
	id    string
	flags [2]byte
	data  []byte
	raw   []byte
}

// readTag reads the header and body of the tag at the start of r.
func readTag(r io.Reader) (*tag, error) {
	var h [headerLen]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, ErrNoTag
		}
		return nil, err
	}
	if string(h[:3]) != "ID3" {
		return nil, ErrNoTag
	}
	t := &tag{version: h[3], flags: h[5]}
	if t.version != 3 && t.version != 4 {
		return nil, fmt.Errorf("%w: ID3v2.%d (only 2.3 and 2.4)", ErrUnsupported, t.version)
	}
	if t.flags&flagUnsync != 0 {
		return nil, fmt.Errorf("%w: unsynchronised tag", ErrUnsupported)
	}
	if t.version == 4 && t.flags&flagFooter != 0 {
		return nil, fmt.Errorf("%w: tag with a footer", ErrUnsupported)
	}
	size, ok := syncsafe(h[6:10])
	if !ok {
		return nil, fmt.Errorf("%w: tag size is not syncsafe", ErrMalformed)
	}
	if size > MaxTagSize {
		return nil, fmt.Errorf("%w: tag of %d bytes (limit %d)", ErrMalformed, size, MaxTagSize)
	}
	// ReadAll grows with what arrives, so a short file claiming a large
	// tag costs only what it has.
	body, err := io.ReadAll(io.LimitReader(r, int64(size)))
	if err != nil {
		return nil, err
	}
	if len(body) < size {
		return nil, fmt.Errorf("%w: truncated tag (%d of %d bytes)", ErrMalformed, len(body), size)
	}
	if t.flags&flagExtended != 0 {
		if body, err = skipExtendedHeader(body, t.version); err != nil {
			return nil, err
		}
	}
	t.frames, t.padding, err = parseFrames(body, t.version)
	if err != nil {
		return nil, err
	}
	return t, nil
}

func skipExtendedHeader(body []byte, version byte) ([]byte, error) {
	if len(body) < 4 {
		return nil, fmt.Errorf("%w: truncated extended header", ErrMalformed)
	}
	var n int
	if version == 3 {
		// The size excludes its own four bytes.
		n = int(binary.BigEndian.Uint32(body)) + 4
	} else {
		s, ok := syncsafe(body[:4])
		if !ok {
			return nil, fmt.Errorf("%w: extended header size is not syncsafe", ErrMalformed)
		}
		n = s
	}
	if n < 4 || n > len(body) {
		return nil, fmt.Errorf("%w: extended header of %d bytes in a tag of %d", ErrMalformed, n, len(body))
	}
	return body[n:], nil
}

// parseFrames splits b into the frames of a tag of version (2, 3 or 4);
// what follows the last frame must be zero padding. On an error it
// returns the frames before the damage with it.
func parseFrames(b []byte, version byte) ([]frame, int, error) {
	idLen, hdrLen := 4, frameHeaderSize
	if version == 2 {
		idLen, hdrLen = 3, 6
	}
	var frames []frame
	for len(b) > 0 {
		if b[0] == 0 {
			if !allZero(b) {
				return frames, 0, fmt.Errorf("%w: data after the padding", ErrMalformed)
			}
			return frames, len(b), nil
		}
		if len(b) < hdrLen {
			return frames, 0, fmt.Errorf("%w: truncated frame header", ErrMalformed)
		}
		id := b[:idLen]
		for _, c := range id {
			if (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
				return frames, 0, fmt.Errorf("%w: frame id %q", ErrMalformed, id)
			}
		}
		var size int
		var flags [2]byte
		switch version {
		case 2:
			size = int(b[3])<<16 | int(b[4])<<8 | int(b[5])
		case 3:
			size = int(binary.BigEndian.Uint32(b[4:8]))
			flags = [2]byte{b[8], b[9]}
		default:
			s, ok := syncsafe(b[4:8])
			if !ok {
				return frames, 0, fmt.Errorf("%w: size of frame %s is not syncsafe", ErrMalformed, id)
			}
			size, flags = s, [2]byte{b[8], b[9]}
		}
		if size > len(b)-hdrLen {
			return frames, 0, fmt.Errorf("%w: frame %s of %d bytes with %d left", ErrMalformed, id, size, len(b)-hdrLen)
		}
		end := hdrLen + size
		frames = append(frames, frame{id: string(id), flags: flags, data: b[hdrLen:end], raw: b[:end]})
		b = b[end:]
	}
	return frames, 0, nil
}

// plain reports whether a frame's data is stored as is: not compressed,
// encrypted, unsynchronised, grouped or prefixed with a data length.
func (f frame) plain(version byte) bool {
	if version == 3 {
		return f.flags[1]&0xe0 == 0
	}
	return f.flags[1]&0x4f == 0
}

// payload returns a frame's data with its grouping byte and data length
// removed and unsynchronisation undone; false for compressed or encrypted
// frames, which are not read.
func (f frame) payload(version byte, tagUnsync bool) ([]byte, bool) {
	data := f.data
	switch version {
	case 3:
		if f.flags[1]&0xc0 != 0 {
			return nil, false
		}
		if f.flags[1]&0x20 != 0 && len(data) > 0 {
			data = data[1:]
		}
	case 4:
		if f.flags[1]&0x0c != 0 {
			return nil, false
		}
		if f.flags[1]&0x40 != 0 && len(data) > 0 {
			data = data[1:]
		}
		if f.flags[1]&0x01 != 0 {
			if len(data) < 4 {
				return nil, false
			}
			data = data[4:]
		}
		if f.flags[1]&0x02 != 0 || tagUnsync {
			data = unsync(data)
		}
	}
	return data, true
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

func syncsafe(b []byte) (int, bool) {
	n := 0
	for _, c := range b[:4] {
		if c&0x80 != 0 {
			return 0, false
		}
		n = n<<7 | int(c)
	}
	return n, true
}

func putSyncsafe(b []byte, n int) {
	for i := 3; i >= 0; i-- {
		b[i] = byte(n & 0x7f)
		n >>= 7
	}
}

// maxSyncsafe is the largest size a syncsafe field holds.
const maxSyncsafe = 1<<28 - 1

// appendFrame appends a frame with no flags in the layout of version.
func appendFrame(dst []byte, version byte, id string, data []byte) ([]byte, error) {
	if version == 4 && len(data) > maxSyncsafe || len(data) > MaxTagSize {
		return nil, fmt.Errorf("%w: frame %s of %d bytes", ErrUnsupported, id, len(data))
	}
	var h [frameHeaderSize]byte
	copy(h[:4], id)
	if version == 3 {
		binary.BigEndian.PutUint32(h[4:8], uint32(len(data)))
	} else {
		putSyncsafe(h[4:8], len(data))
	}
	dst = append(dst, h[:]...)
	return append(dst, data...), nil
}
