// Package mp4tag adds iTunes metadata items to an MP4 (or QuickTime) file:
// text atoms ffmpeg's muxer writes in some modes only (desc, ldes, keyw
// are left out of QuickTime files) and the freeform items ("----", mean
// "com.apple.iTunes") that hold the tags ffmpeg has no atom for, such as
// a subtitle, a publisher or URLs. Items go into moov/udta/meta/ilst,
// which is created when missing;
// when the moov box precedes the media data (a "faststart" file), every
// chunk offset (stco, co64) is moved by the growth of moov, so the file
// stays playable.
//
// The files it rewrites are the engine's own, but the parser still checks
// every size before it uses it: a damaged file is an error wrapping
// ErrMalformed, never a panic.
package mp4tag

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// Errors, for errors.Is.
var (
	// ErrMalformed means the file is not an MP4 file this package can
	// follow: a box size that does not fit, no moov box, or two.
	ErrMalformed = errors.New("mp4tag: malformed MP4 file")
	// ErrTooLarge means a moov box larger than MaxMoovSize, or chunk
	// offsets that no longer fit in 32 bits after the move.
	ErrTooLarge = errors.New("mp4tag: file too large to rewrite")
)

// MaxMoovSize bounds the moov box read into memory: an hour of AAC needs
// about 1 MB of sample tables.
const MaxMoovSize = 256 << 20

// Mean is the namespace of the freeform items Add writes.
const Mean = "com.apple.iTunes"

// Item is one metadata item holding Value as UTF-8 text: the ilst atom
// Atom (four characters, for example "desc"), or, when Atom is empty, the
// freeform item Name (for example "SUBTITLE"), which ffprobe lists under
// Name.
type Item struct {
	Atom, Name, Value string
}

// Add copies the MP4 file src of size bytes to dst with items added to
// its iTunes metadata, replacing items of the same atom, or freeform items
// of the same name in the same namespace. Items with an empty value are
// left out; without any, the file is copied unchanged.
func Add(dst io.Writer, src io.ReaderAt, size int64, items []Item) error {
	var keep []Item
	for _, it := range items {
		if it.Value != "" {
			keep = append(keep, it)
		}
	}
	if len(keep) == 0 {
		_, err := io.Copy(dst, io.NewSectionReader(src, 0, size))
		return err
	}
	top, err := topLevel(src, size)
	if err != nil {
		return err
	}
	var moov *span
	for i := range top {
		if top[i].typ == "moov" {
			if moov != nil {
				return fmt.Errorf("%w: two moov boxes", ErrMalformed)
			}
			moov = &top[i]
		}
	}
	if moov == nil {
		return fmt.Errorf("%w: no moov box", ErrMalformed)
	}
	if moov.size > MaxMoovSize {
		return fmt.Errorf("%w: moov box of %d bytes", ErrTooLarge, moov.size)
	}
	raw := make([]byte, moov.size)
	if _, err := src.ReadAt(raw, moov.off); err != nil {
		return fmt.Errorf("mp4tag: reading moov: %w", err)
	}
	root, err := parseBox(raw, 0)
	if err != nil {
		return err
	}
	ilst, err := root.ilst()
	if err != nil {
		return err
	}
	for _, it := range keep {
		if it.Atom != "" && len(it.Atom) != 4 {
			return fmt.Errorf("mp4tag: atom %q is not four bytes", it.Atom)
		}
		ilst.set(it)
	}
	out := root.bytes()
	if delta := int64(len(out)) - moov.size; delta != 0 {
		// Media after moov moves by delta; media before it stays.
		if err := root.moveOffsets(moov.off, delta); err != nil {
			return err
		}
		out = root.bytes()
	}
	if _, err := io.Copy(dst, io.NewSectionReader(src, 0, moov.off)); err != nil {
		return err
	}
	if _, err := dst.Write(out); err != nil {
		return err
	}
	end := moov.off + moov.size
	_, err = io.Copy(dst, io.NewSectionReader(src, end, size-end))
	return err
}

// span is a top-level box: its type, offset and total size.
type span struct {
	typ       string
	off, size int64
}

// topLevel lists the top-level boxes of the file.
func topLevel(r io.ReaderAt, size int64) ([]span, error) {
	var out []span
	for off := int64(0); off < size; {
		var h [16]byte
		n := min(int64(len(h)), size-off)
		if n < 8 {
			return nil, fmt.Errorf("%w: %d stray bytes at the end", ErrMalformed, n)
		}
		if _, err := r.ReadAt(h[:n], off); err != nil {
			return nil, fmt.Errorf("mp4tag: reading box header: %w", err)
		}
		bs := int64(binary.BigEndian.Uint32(h[:4]))
		switch bs {
		case 0: // to the end of the file
			bs = size - off
		case 1:
			if n < 16 {
				return nil, fmt.Errorf("%w: truncated box header", ErrMalformed)
			}
			u := binary.BigEndian.Uint64(h[8:16])
			if u > math.MaxInt64 {
				return nil, fmt.Errorf("%w: box of %d bytes", ErrMalformed, u)
			}
			bs = int64(u)
		}
		if bs < 8 || bs > size-off {
			return nil, fmt.Errorf("%w: box %q of %d bytes at %d in a file of %d", ErrMalformed, h[4:8], bs, off, size)
		}
		out = append(out, span{typ: string(h[4:8]), off: off, size: bs})
		off += bs
	}
	return out, nil
}

// box is a parsed box. Containers have kids; other boxes keep their
// payload as is.
type box struct {
	typ string
	// full is the version and flags of a full-box container (meta).
	full []byte
	data []byte
	kids []*box
}

// containers are the boxes whose payload is only boxes and that this
// package descends into: to the chunk offsets and to the metadata.
var containers = map[string]bool{"moov": true, "trak": true, "mdia": true, "minf": true, "stbl": true,
	"udta": true, "ilst": true, "edts": true, "dinf": true}

// maxDepth bounds the nesting parseBox follows.
const maxDepth = 16

// parseBox parses the box that b holds exactly.
func parseBox(b []byte, depth int) (*box, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("%w: boxes nested deeper than %d", ErrMalformed, maxDepth)
	}
	hdr, typ, err := header(b)
	if err != nil {
		return nil, err
	}
	x := &box{typ: typ}
	payload := b[hdr:]
	switch {
	case typ == "meta":
		// ISO meta is a full box; QuickTime's is not. Which one this is
		// shows where its first child, the hdlr box, starts.
		if len(payload) >= 12 && string(payload[8:12]) == "hdlr" {
			x.full, payload = payload[:4], payload[4:]
		}
	case !containers[typ]:
		x.data = payload
		return x, nil
	}
	for len(payload) > 0 {
		n, err := boxLen(payload)
		if err != nil {
			return nil, fmt.Errorf("in %s: %w", typ, err)
		}
		kid, err := parseBox(payload[:n], depth+1)
		if err != nil {
			return nil, err
		}
		x.kids = append(x.kids, kid)
		payload = payload[n:]
	}
	return x, nil
}

// header returns the header length and type of the box starting b.
func header(b []byte) (int, string, error) {
	if len(b) < 8 {
		return 0, "", fmt.Errorf("%w: truncated box header", ErrMalformed)
	}
	if binary.BigEndian.Uint32(b) == 1 {
		if len(b) < 16 {
			return 0, "", fmt.Errorf("%w: truncated box header", ErrMalformed)
		}
		return 16, string(b[4:8]), nil
	}
	return 8, string(b[4:8]), nil
}

// boxLen is the length of the box starting b, checked against b.
func boxLen(b []byte) (int, error) {
	if len(b) < 8 {
		return 0, fmt.Errorf("%w: %d stray bytes", ErrMalformed, len(b))
	}
	n := uint64(binary.BigEndian.Uint32(b))
	switch n {
	case 0:
		n = uint64(len(b))
	case 1:
		if len(b) < 16 {
			return 0, fmt.Errorf("%w: truncated box header", ErrMalformed)
		}
		n = binary.BigEndian.Uint64(b[8:16])
	}
	if n < 8 || n > uint64(len(b)) {
		return 0, fmt.Errorf("%w: box %q of %d bytes with %d left", ErrMalformed, b[4:8], n, len(b))
	}
	return int(n), nil
}

// bytes serializes the box.
func (x *box) bytes() []byte {
	var body bytes.Buffer
	body.Write(x.full)
	if x.kids == nil {
		body.Write(x.data)
	}
	for _, k := range x.kids {
		body.Write(k.bytes())
	}
	return frame(x.typ, body.Bytes())
}

// frame wraps a payload in a box header.
func frame(typ string, payload []byte) []byte {
	n := 8 + len(payload)
	if n > math.MaxUint32 {
		out := make([]byte, 16, n+8)
		binary.BigEndian.PutUint32(out, 1)
		copy(out[4:8], typ)
		binary.BigEndian.PutUint64(out[8:], uint64(n+8))
		return append(out, payload...)
	}
	out := make([]byte, 8, n)
	binary.BigEndian.PutUint32(out, uint32(n))
	copy(out[4:8], typ)
	return append(out, payload...)
}

// child returns the first kid of type typ, creating it (a container, or
// made by mk) at the end when there is none.
func (x *box) child(typ string, mk func() *box) *box {
	for _, k := range x.kids {
		if k.typ == typ {
			return k
		}
	}
	var k *box
	if mk != nil {
		k = mk()
	} else {
		k = &box{typ: typ, kids: []*box{}}
	}
	x.kids = append(x.kids, k)
	return k
}

// ilst returns moov/udta/meta/ilst, creating what is missing.
func (x *box) ilst() (*box, error) {
	if x.typ != "moov" {
		return nil, fmt.Errorf("%w: %q where moov was expected", ErrMalformed, x.typ)
	}
	meta := x.child("udta", nil).child("meta", func() *box {
		// An iTunes metadata handler: pre_defined, handler "mdir",
		// manufacturer "appl", reserved, empty name.
		hdlr := make([]byte, 4+4+4+12+1)
		copy(hdlr[8:12], "mdir")
		copy(hdlr[12:16], "appl")
		return &box{typ: "meta", full: make([]byte, 4), kids: []*box{{typ: "hdlr", data: hdlr}}}
	})
	if meta.kids == nil {
		return nil, fmt.Errorf("%w: meta box is not a container", ErrMalformed)
	}
	return meta.child("ilst", nil), nil
}

// set puts a text item in the ilst box x, replacing one of the same atom
// or freeform name.
func (x *box) set(it Item) {
	typ := it.Atom
	if typ == "" {
		typ = "----"
	}
	kids := x.kids[:0]
	for _, k := range x.kids {
		if k.typ == typ && (typ != "----" || freeformName(k.data) == it.Name) {
			continue
		}
		kids = append(kids, k)
	}
	var body []byte
	if it.Atom == "" {
		body = append(body, frame("mean", append(make([]byte, 4), Mean...))...)
		body = append(body, frame("name", append(make([]byte, 4), it.Name...))...)
	}
	// Type 1 (UTF-8 text), locale 0.
	body = append(body, frame("data", append([]byte{0, 0, 0, 1, 0, 0, 0, 0}, it.Value...))...)
	x.kids = append(kids, &box{typ: typ, data: body})
}

// freeformName returns the name of a freeform item in our namespace, or
// "" for any other.
func freeformName(b []byte) string {
	var mean, name string
	for len(b) >= 8 {
		n, err := boxLen(b)
		if err != nil {
			return ""
		}
		if n >= 12 {
			switch string(b[4:8]) {
			case "mean":
				mean = string(b[12:n])
			case "name":
				name = string(b[12:n])
			}
		}
		b = b[n:]
	}
	if mean != Mean {
		return ""
	}
	return name
}

// moveOffsets adds delta to every chunk offset at or after from.
func (x *box) moveOffsets(from, delta int64) error {
	for _, k := range x.kids {
		if err := k.moveOffsets(from, delta); err != nil {
			return err
		}
	}
	switch x.typ {
	case "stco", "co64":
		wide := x.typ == "co64"
		width := 4
		if wide {
			width = 8
		}
		if len(x.data) < 8 {
			return fmt.Errorf("%w: truncated %s", ErrMalformed, x.typ)
		}
		n := int(binary.BigEndian.Uint32(x.data[4:8]))
		if n > (len(x.data)-8)/width {
			return fmt.Errorf("%w: %s with %d entries in %d bytes", ErrMalformed, x.typ, n, len(x.data))
		}
		data := bytes.Clone(x.data)
		for i := range n {
			p := data[8+i*width:]
			if wide {
				if v := int64(binary.BigEndian.Uint64(p)); v >= from {
					binary.BigEndian.PutUint64(p, uint64(v+delta))
				}
				continue
			}
			v := int64(binary.BigEndian.Uint32(p))
			if v < from {
				continue
			}
			if v+delta > math.MaxUint32 || v+delta < 0 {
				return fmt.Errorf("%w: chunk offset %d moved by %d", ErrTooLarge, v, delta)
			}
			binary.BigEndian.PutUint32(p, uint32(v+delta))
		}
		x.data = data
	}
	return nil
}
