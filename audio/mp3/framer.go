package mp3

import (
	"bufio"
	"bytes"
	"fmt"
	"io"

	"github.com/audiopost/audiopost/audio"
)

// maxLeadingJunk bounds the search for the first frame after the tags, so
// that non-MP3 data is rejected without reading it all.
const maxLeadingJunk = 256 << 10

// maxFrameSize is the largest Layer III frame: 320 kbps at 32 kHz, padded.
const maxFrameSize = 1441

// framer splits the byte stream into Layer III frames. It keeps to the
// format set by the first frame, resynchronises after damage (a candidate
// counts only if the next frame header follows where it should), stops at
// trailing ID3v1/APE tags, and conceals frames whose side information would
// crash the decoder. As an io.Reader it serves go-mp3 nothing but checked
// frames.
type framer struct {
	br        *bufio.Reader
	ref       header
	haveRef   bool
	cur       []byte // frame being served
	off       int
	buf       [maxFrameSize]byte
	frames    int64 // frames delivered
	bytes     int64 // bytes of delivered frames
	concealed int64
	junk      int64 // bytes skipped while resynchronising
	err       error
}

func newFramer(r io.Reader) *framer {
	if br, ok := r.(*bufio.Reader); ok && br.Size() >= 4096 {
		return &framer{br: br}
	}
	return &framer{br: bufio.NewReaderSize(r, 16<<10)}
}

// candidate reports whether a frame with a consistent header starts at the
// current position and the next one follows it (or the data ends right
// after it).
func (f *framer) candidate() (header, bool) {
	p, _ := f.br.Peek(4)
	h, ok := parseHeader(p)
	if !ok || (f.haveRef && !h.sameStream(f.ref)) {
		return h, false
	}
	q, _ := f.br.Peek(h.size + 4)
	if len(q) == h.size {
		return h, true // last frame of the stream
	}
	if len(q) < h.size+4 {
		return h, false
	}
	h2, ok := parseHeader(q[h.size:])
	return h, ok && h2.sameStream(h)
}

// sync skips bytes up to the next candidate frame, at most limit bytes
// (limit < 0: no limit). It returns io.EOF when the data ends first.
func (f *framer) sync(limit int64) error {
	var skipped int64
	for {
		if _, ok := f.candidate(); ok {
			f.junk += skipped
			return nil
		}
		win, _ := f.br.Peek(4096)
		if len(win) < 4 {
			return io.EOF
		}
		// Next possible sync byte after the current position.
		step := len(win) - 3
		if i := bytes.IndexByte(win[1:], 0xFF); i >= 0 {
			step = i + 1
		}
		f.br.Discard(step)
		skipped += int64(step)
		if limit >= 0 && skipped > limit {
			return fmt.Errorf("%w: no MPEG audio frame in the first %d bytes", audio.ErrMalformed, limit)
		}
	}
}

// next reads the next frame into f.buf and returns its header. At the end
// of the audio it returns io.EOF.
func (f *framer) next() (header, []byte, error) {
	for {
		p, _ := f.br.Peek(4)
		if len(p) < 4 {
			return header{}, nil, io.EOF
		}
		h, ok := parseHeader(p)
		if ok && (!f.haveRef || h.sameStream(f.ref)) {
			q, err := f.br.Peek(h.size)
			if len(q) < h.size {
				if err == nil || err == io.EOF || err == bufio.ErrBufferFull {
					return header{}, nil, io.EOF // truncated last frame: dropped
				}
				return header{}, nil, err
			}
			if !f.haveRef {
				f.ref, f.haveRef = h, true
			}
			fr := f.buf[:h.size]
			copy(fr, q)
			f.br.Discard(h.size)
			return h, fr, nil
		}
		if string(p[:3]) == "TAG" || string(p) == "APET" || string(p) == "LYRI" {
			return header{}, nil, io.EOF // trailing tags end the audio
		}
		f.br.Discard(1)
		f.junk++
		if err := f.sync(-1); err != nil {
			return header{}, nil, err
		}
	}
}

// Read implements io.Reader for go-mp3: the concatenation of checked
// frames, side information concealed where it is invalid.
func (f *framer) Read(p []byte) (int, error) {
	if f.off == len(f.cur) {
		if f.err != nil {
			return 0, f.err
		}
		h, fr, err := f.next()
		if err != nil {
			f.err = err
			return 0, err
		}
		if !sideInfoValid(h, fr) {
			concealSideInfo(h, fr)
			f.concealed++
		}
		f.cur, f.off = fr, 0
		f.frames++
		f.bytes += int64(len(fr))
	}
	n := copy(p, f.cur[f.off:])
	f.off += n
	return n, nil
}
