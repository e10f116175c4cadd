package id3

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"time"
)

// Picture is an embedded image.
type Picture struct {
	MIMEType string
	Data     []byte
}

// ChapterExtra is what AddChapterExtras adds to one CHAP frame.
type ChapterExtra struct {
	// URL becomes a WXXX sub-frame with an empty description; "" adds none.
	URL string
	// Image becomes an APIC sub-frame of picture type "Other" with an
	// empty description; nil adds none.
	Image *Picture
}

// Chapter is a CHAP frame as read back.
type Chapter struct {
	ElementID  string
	Start, End time.Duration
	// Title is the TIT2 sub-frame's text.
	Title string
	// URL is the first WXXX sub-frame's URL.
	URL string
	// Image is the first APIC sub-frame.
	Image *Picture
}

// chapterHead is the element ID and the four times and offsets.
type chapterHead struct {
	id   string
	head []byte // element ID with its terminator and the 16 bytes after it
	subs []byte
}

func parseChapterHead(data []byte) (chapterHead, error) {
	i := bytes.IndexByte(data, 0)
	if i < 0 || len(data) < i+1+16 {
		return chapterHead{}, fmt.Errorf("%w: truncated CHAP frame", ErrMalformed)
	}
	n := i + 1 + 16
	return chapterHead{id: latin1(data[:i]), head: data[:n], subs: data[n:]}, nil
}

// ReadChapters parses the ID3v2 tag at the start of r and returns its
// CHAP frames in tag order. A compressed or encrypted CHAP frame is
// ErrUnsupported; sub-frames stored that way are skipped.
func ReadChapters(r io.Reader) ([]Chapter, error) {
	t, err := readTag(r)
	if err != nil {
		return nil, err
	}
	var out []Chapter
	for _, f := range t.frames {
		if f.id != "CHAP" {
			continue
		}
		if !f.plain(t.version) {
			return nil, fmt.Errorf("%w: compressed or encrypted CHAP frame", ErrUnsupported)
		}
		h, err := parseChapterHead(f.data)
		if err != nil {
			return nil, err
		}
		times := h.head[len(h.head)-16:]
		c := Chapter{
			ElementID: h.id,
			Start:     time.Duration(binary.BigEndian.Uint32(times[0:4])) * time.Millisecond,
			End:       time.Duration(binary.BigEndian.Uint32(times[4:8])) * time.Millisecond,
		}
		subs, _, err := parseFrames(h.subs, t.version)
		if err != nil {
			return nil, fmt.Errorf("in CHAP %q: %w", h.id, err)
		}
		for _, s := range subs {
			data, ok := s.payload(t.version, false)
			if !ok {
				continue
			}
			switch {
			case s.id == "TIT2" && c.Title == "":
				c.Title = textFrame(data)
			case s.id == "WXXX" && c.URL == "":
				c.URL = urlFrame(data)
			case s.id == "APIC" && c.Image == nil:
				c.Image = pictureFrame(data)
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// AddChapterExtras is AddExtras with chapter extras only.
func AddChapterExtras(dst io.Writer, src io.Reader, extras []ChapterExtra) error {
	return AddExtras(dst, src, Extras{Chapters: extras})
}

// Extras are what AddExtras adds to a tag: what ffmpeg's mp3 muxer
// cannot write, since it writes text frames only.
type Extras struct {
	// Chapters go to the CHAP frames: the i-th CHAP frame (in tag order)
	// gets Chapters[i]'s URL and picture as sub-frames, replacing any
	// WXXX or APIC it had. More extras than CHAP frames is an error.
	Chapters []ChapterExtra
	// URL becomes the WXXX frame with an empty description (the
	// episode's web page), replacing one; "" adds none.
	URL string
	// LicenseURL becomes the WCOP frame (copyright and legal
	// information), replacing one; "" adds none.
	LicenseURL string
}

// AddExtras copies src to dst with the ID3v2 tag at its start rewritten
// to hold e. Other frames and the padding are kept byte for byte, and
// everything after the tag (the audio) is copied unchanged, streaming.
func AddExtras(dst io.Writer, src io.Reader, e Extras) error {
	t, err := readTag(src)
	if err != nil {
		return err
	}
	if t.flags&flagExtended != 0 {
		return fmt.Errorf("%w: rewriting a tag with an extended header", ErrUnsupported)
	}
	body := make([]byte, 0, 4096)
	n := 0
	for _, f := range t.frames {
		switch {
		case f.id == "WXXX" && e.URL != "" && len(f.data) > 1 && f.plain(t.version) && emptyDescription(f.data):
			continue // replaced below
		case f.id == "WCOP" && e.LicenseURL != "":
			continue
		case f.id != "CHAP":
			body = append(body, f.raw...)
			continue
		}
		if !f.plain(t.version) {
			return fmt.Errorf("%w: compressed or encrypted CHAP frame", ErrUnsupported)
		}
		if n >= len(e.Chapters) {
			body = append(body, f.raw...)
			n++
			continue
		}
		data, err := extendChapter(f.data, t.version, e.Chapters[n])
		if err != nil {
			return err
		}
		if body, err = appendFrame(body, t.version, "CHAP", data); err != nil {
			return err
		}
		n++
	}
	if len(e.Chapters) > n {
		return fmt.Errorf("id3: %d chapter extras for %d CHAP frames", len(e.Chapters), n)
	}
	if e.URL != "" {
		// Encoding 0 (Latin-1), empty description, then the URL.
		if body, err = appendFrame(body, t.version, "WXXX", append([]byte{0, 0}, asciiURL(e.URL)...)); err != nil {
			return err
		}
	}
	if e.LicenseURL != "" {
		if body, err = appendFrame(body, t.version, "WCOP", []byte(asciiURL(e.LicenseURL))); err != nil {
			return err
		}
	}
	size := len(body) + t.padding
	if size > maxSyncsafe {
		return fmt.Errorf("%w: tag of %d bytes", ErrUnsupported, size)
	}
	var h [headerLen]byte
	copy(h[:], "ID3")
	h[3], h[5] = t.version, t.flags
	putSyncsafe(h[6:], size)
	if _, err := dst.Write(h[:]); err != nil {
		return err
	}
	if _, err := dst.Write(body); err != nil {
		return err
	}
	if _, err := dst.Write(make([]byte, t.padding)); err != nil {
		return err
	}
	_, err = io.Copy(dst, src)
	return err
}

// emptyDescription reports whether a WXXX frame's description is empty.
func emptyDescription(data []byte) bool {
	desc, _ := splitText(data[0], data[1:])
	return len(desc) == 0
}

// extendChapter returns a CHAP frame's data with e's sub-frames in place
// of its WXXX and APIC ones.
func extendChapter(data []byte, version byte, e ChapterExtra) ([]byte, error) {
	h, err := parseChapterHead(data)
	if err != nil {
		return nil, err
	}
	subs, _, err := parseFrames(h.subs, version)
	if err != nil {
		return nil, fmt.Errorf("in CHAP %q: %w", h.id, err)
	}
	out := append([]byte(nil), h.head...)
	for _, s := range subs {
		if (s.id == "WXXX" && e.URL != "") || (s.id == "APIC" && e.Image != nil) {
			continue
		}
		out = append(out, s.raw...)
	}
	if e.URL != "" {
		// Encoding 0 (Latin-1), empty description, then the URL.
		body := append([]byte{0, 0}, asciiURL(e.URL)...)
		if out, err = appendFrame(out, version, "WXXX", body); err != nil {
			return nil, err
		}
	}
	if e.Image != nil {
		// Encoding 0, MIME type, picture type 0 ("Other"), empty
		// description, then the picture.
		body := make([]byte, 0, len(e.Image.MIMEType)+4+len(e.Image.Data))
		body = append(body, 0)
		body = append(body, e.Image.MIMEType...)
		body = append(body, 0, 0, 0)
		body = append(body, e.Image.Data...)
		if out, err = appendFrame(out, version, "APIC", body); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// asciiURL percent-encodes what a Latin-1 URL field cannot hold as is.
func asciiURL(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// urlFrame is the URL of a WXXX frame.
func urlFrame(b []byte) string {
	if len(b) < 2 {
		return ""
	}
	_, rest := splitText(b[0], b[1:])
	return latin1(trimNul(rest))
}

// pictureFrame is the picture of an APIC frame.
func pictureFrame(b []byte) *Picture {
	mime, _, img, ok := apic(b)
	if !ok {
		return nil
	}
	return &Picture{MIMEType: mime, Data: bytes.Clone(img)}
}
