package mp3

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/audiopost/audiopost/audio"
)

// MaxTagSize is the largest ID3v2 tag the parser reads into memory; larger
// tags are skipped without parsing, so a header cannot make the decoder
// allocate more than this.
const MaxTagSize = 32 << 20

// id3v2Size returns the total length of the ID3v2 tag starting at p
// (header, body and footer), or 0 if p does not start with a valid header.
func id3v2Size(p []byte) int {
	if len(p) < 10 || string(p[:3]) != "ID3" || p[3] < 2 || p[3] > 4 || p[4] == 0xFF {
		return 0
	}
	for _, b := range p[6:10] {
		if b&0x80 != 0 {
			return 0
		}
	}
	n := 10 + int(syncsafe(p[6:10]))
	if p[3] == 4 && p[5]&0x10 != 0 {
		n += 10 // footer
	}
	return n
}

func syncsafe(p []byte) uint32 {
	return uint32(p[0])<<21 | uint32(p[1])<<14 | uint32(p[2])<<7 | uint32(p[3])
}

// ParseID3v2 parses a complete ID3v2.2, 2.3 or 2.4 tag (header included)
// and returns the tags it knows: TIT2, TPE1, TALB, TRCK, TYER/TDRC, TCON,
// COMM, APIC (the front cover preferred) and a few more. Unknown,
// compressed or encrypted frames are skipped; a damaged frame ends the
// parse with the tags found so far and an error wrapping audio.ErrMalformed.
func ParseID3v2(tag []byte) (audio.Tags, error) {
	var t audio.Tags
	if id3v2Size(tag) == 0 {
		return t, fmt.Errorf("%w: not an ID3v2 tag", audio.ErrMalformed)
	}
	version, flags := tag[3], tag[5]
	end := min(len(tag), 10+int(syncsafe(tag[6:10])))
	body := tag[10:end]
	if flags&0x80 != 0 && version < 4 {
		body = unsync(body)
	}
	if flags&0x40 != 0 && version >= 3 { // extended header
		if len(body) < 4 {
			return t, fmt.Errorf("%w: truncated ID3v2 extended header", audio.ErrMalformed)
		}
		n := int(binary.BigEndian.Uint32(body))
		if version == 3 {
			n += 4
		} else {
			n = int(syncsafe(body))
		}
		if n < 0 || n > len(body) {
			return t, fmt.Errorf("%w: ID3v2 extended header longer than the tag", audio.ErrMalformed)
		}
		body = body[n:]
	}
	var p tagPicker
	idLen, hdrLen := 4, 10
	if version == 2 {
		idLen, hdrLen = 3, 6
	}
	for len(body) >= hdrLen && body[0] != 0 {
		id := string(body[:idLen])
		var size int
		var fflags uint16
		switch version {
		case 2:
			size = int(body[3])<<16 | int(body[4])<<8 | int(body[5])
		case 3:
			size = int(binary.BigEndian.Uint32(body[4:]))
			fflags = binary.BigEndian.Uint16(body[8:])
		case 4:
			size = int(syncsafe(body[4:8]))
			fflags = binary.BigEndian.Uint16(body[8:])
		}
		if size < 0 || size > len(body)-hdrLen {
			return p.tags(), fmt.Errorf("%w: ID3v2 frame %q longer than the tag", audio.ErrMalformed, id)
		}
		data := body[hdrLen : hdrLen+size]
		body = body[hdrLen+size:]
		switch version {
		case 3:
			if fflags&0x00C0 != 0 { // compressed or encrypted
				continue
			}
			if fflags&0x0020 != 0 && len(data) > 0 { // group byte
				data = data[1:]
			}
		case 4:
			if fflags&0x000C != 0 {
				continue
			}
			if fflags&0x0040 != 0 && len(data) > 0 {
				data = data[1:]
			}
			if fflags&0x0001 != 0 { // data length indicator
				if len(data) < 4 {
					continue
				}
				data = data[4:]
			}
			if fflags&0x0002 != 0 || flags&0x80 != 0 {
				data = unsync(data)
			}
		}
		p.frame(id, data)
	}
	return p.tags(), nil
}

// unsync undoes ID3 unsynchronisation: every 0xFF 0x00 becomes 0xFF.
func unsync(p []byte) []byte {
	if !bytes.Contains(p, []byte{0xFF, 0x00}) {
		return p
	}
	out := make([]byte, 0, len(p))
	for i := 0; i < len(p); i++ {
		out = append(out, p[i])
		if p[i] == 0xFF && i+1 < len(p) && p[i+1] == 0 {
			i++
		}
	}
	return out
}

// tagPicker collects frames, keeping the preferred one of each kind.
type tagPicker struct {
	t          audio.Tags
	year       string // TYER/TYE: TDRC wins
	comment    string // COMM with an empty description wins
	commentAny string
	cover      *audio.Picture
	coverFront bool
}

func (p *tagPicker) set(dst *string, v string) {
	if *dst == "" {
		*dst = v
	}
}

func (p *tagPicker) frame(id string, data []byte) {
	t := &p.t
	switch id {
	case "TIT2", "TT2":
		p.set(&t.Title, textFrame(data))
	case "TPE1", "TP1":
		p.set(&t.Artist, textFrame(data))
	case "TALB", "TAL":
		p.set(&t.Album, textFrame(data))
	case "TRCK", "TRK":
		p.set(&t.Track, textFrame(data))
	case "TDRC", "TDRL":
		p.set(&t.Year, textFrame(data))
	case "TYER", "TYE":
		p.set(&p.year, textFrame(data))
	case "TCON", "TCO":
		p.set(&t.Genre, genre(textFrame(data)))
	case "TIT3", "TT3":
		p.set(&t.Subtitle, textFrame(data))
	case "TPUB", "TPB":
		p.set(&t.Publisher, textFrame(data))
	case "TCOP", "TCR":
		p.set(&t.License, textFrame(data))
	case "TDES":
		p.set(&t.Summary, textFrame(data))
	case "TXXX", "TXX":
		desc, val := describedText(data)
		switch strings.ToLower(desc) {
		case "summary", "description":
			p.set(&t.Summary, val)
		case "url":
			p.set(&t.URL, val)
		case "license":
			p.set(&t.License, val)
		case "comment": // how ffmpeg writes a comment
			p.set(&p.commentAny, val)
		}
	case "WOAS", "WOAF", "WAS", "WAF":
		p.set(&t.URL, latin1(trimNul(data)))
	case "WXXX", "WXX":
		if len(data) > 1 {
			_, rest := splitText(data[0], data[1:])
			p.set(&t.URL, latin1(trimNul(rest)))
		}
	case "COMM", "COM":
		if len(data) < 4 {
			return
		}
		desc, text := splitText(data[0], data[4:])
		d, v := decodeText(data[0], desc), decodeText(data[0], text)
		switch {
		case d == "":
			p.set(&p.comment, v)
		case !strings.HasPrefix(d, "iTun"):
			p.set(&p.commentAny, v)
		}
	case "APIC":
		// encoding, MIME (Latin-1, NUL-terminated), type, description, data
		if len(data) < 2 {
			return
		}
		i := bytes.IndexByte(data[1:], 0)
		if i < 0 || 1+i+2 > len(data) {
			return
		}
		mime := latin1(data[1 : 1+i])
		ptype := data[1+i+1]
		_, img := splitText(data[0], data[1+i+2:])
		p.picture(mime, ptype, img)
	case "PIC":
		// encoding, 3-char format, type, description, data
		if len(data) < 5 {
			return
		}
		mime := "image/" + strings.ToLower(latin1(data[1:4]))
		if mime == "image/jpg" {
			mime = "image/jpeg"
		}
		_, img := splitText(data[0], data[5:])
		p.picture(mime, data[4], img)
	}
}

func (p *tagPicker) picture(mime string, ptype byte, img []byte) {
	if len(img) == 0 || mime == "-->" || (p.cover != nil && (p.coverFront || ptype != 3)) {
		return
	}
	if mime == "" || !strings.Contains(mime, "/") {
		mime = http.DetectContentType(img)
	}
	// Copy: the tag buffer is not kept.
	p.cover = &audio.Picture{MIMEType: mime, Data: bytes.Clone(img), Size: len(img)}
	p.coverFront = ptype == 3
}

func (p *tagPicker) tags() audio.Tags {
	t := p.t
	p.set(&t.Year, p.year)
	p.set(&t.Comment, p.comment)
	p.set(&t.Comment, p.commentAny)
	t.Cover = p.cover
	return t
}

// splitText splits p at the first terminator of text encoding enc (one NUL
// byte, or two aligned NUL bytes for UTF-16).
func splitText(enc byte, p []byte) (text, rest []byte) {
	if enc == 1 || enc == 2 {
		for i := 0; i+1 < len(p); i += 2 {
			if p[i] == 0 && p[i+1] == 0 {
				return p[:i], p[i+2:]
			}
		}
		return p, nil
	}
	if i := bytes.IndexByte(p, 0); i >= 0 {
		return p[:i], p[i+1:]
	}
	return p, nil
}

// textFrame decodes a text information frame; several NUL-separated values
// are joined with "/".
func textFrame(data []byte) string {
	if len(data) < 1 {
		return ""
	}
	enc, rest := data[0], data[1:]
	var vals []string
	for len(rest) > 0 {
		var v []byte
		v, rest = splitText(enc, rest)
		if s := strings.TrimSpace(decodeText(enc, v)); s != "" {
			vals = append(vals, s)
		}
	}
	return strings.Join(vals, "/")
}

func describedText(data []byte) (desc, val string) {
	if len(data) < 1 {
		return "", ""
	}
	d, v := splitText(data[0], data[1:])
	return decodeText(data[0], d), textFrame(append([]byte{data[0]}, v...))
}

func trimNul(p []byte) []byte {
	if i := bytes.IndexByte(p, 0); i >= 0 {
		return p[:i]
	}
	return p
}

// decodeText decodes one string in ID3 text encoding enc: 0 Latin-1,
// 1 UTF-16 with BOM, 2 UTF-16BE, 3 UTF-8.
func decodeText(enc byte, p []byte) string {
	switch enc {
	case 1, 2:
		be := enc == 2
		if len(p) >= 2 && p[0] == 0xFF && p[1] == 0xFE {
			be, p = false, p[2:]
		} else if len(p) >= 2 && p[0] == 0xFE && p[1] == 0xFF {
			be, p = true, p[2:]
		}
		u := make([]uint16, len(p)/2)
		for i := range u {
			if be {
				u[i] = binary.BigEndian.Uint16(p[2*i:])
			} else {
				u[i] = binary.LittleEndian.Uint16(p[2*i:])
			}
		}
		return strings.TrimRight(string(utf16.Decode(u)), "\x00")
	case 3:
		return strings.ToValidUTF8(strings.TrimRight(string(p), "\x00"), "\uFFFD")
	}
	return latin1(p)
}

func latin1(p []byte) string {
	r := make([]rune, 0, len(p))
	for _, b := range p {
		if b == 0 {
			break
		}
		r = append(r, rune(b))
	}
	return string(r)
}

// genre resolves ID3v1 genre numbers ("17", "(17)", "(17)Rock") to names.
func genre(s string) string {
	num := s
	if strings.HasPrefix(s, "(") {
		if i := strings.IndexByte(s, ')'); i > 0 {
			if rest := s[i+1:]; rest != "" {
				return rest // refinement text wins
			}
			num = s[1:i]
		}
	}
	if n, err := strconv.Atoi(num); err == nil {
		if n >= 0 && n < len(id3v1Genres) {
			return id3v1Genres[n]
		}
		if num == s { // a bare number that is no known genre: keep it
			return s
		}
	}
	return s
}

// ParseID3v1 parses a 128-byte ID3v1 or v1.1 tag ("TAG" ...).
func ParseID3v1(p []byte) (audio.Tags, bool) {
	var t audio.Tags
	if len(p) != 128 || string(p[:3]) != "TAG" {
		return t, false
	}
	field := func(b []byte) string { return strings.TrimSpace(latin1(b)) }
	t.Title, t.Artist, t.Album = field(p[3:33]), field(p[33:63]), field(p[63:93])
	t.Year = field(p[93:97])
	comment := p[97:127]
	if comment[28] == 0 && comment[29] != 0 {
		t.Track = strconv.Itoa(int(comment[29]))
		comment = comment[:28]
	}
	t.Comment = field(comment)
	if int(p[127]) < len(id3v1Genres) {
		t.Genre = id3v1Genres[p[127]]
	}
	return t, true
}

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
	t, _ := ParseID3v2(buf.Bytes())
	return t, nil
}

// id3v1Genres are the genre numbers of ID3v1 (0-79) and the Winamp
// extensions (80-125).
var id3v1Genres = []string{
	"Blues", "Classic Rock", "Country", "Dance", "Disco", "Funk", "Grunge", "Hip-Hop", "Jazz", "Metal",
	"New Age", "Oldies", "Other", "Pop", "R&B", "Rap", "Reggae", "Rock", "Techno", "Industrial",
	"Alternative", "Ska", "Death Metal", "Pranks", "Soundtrack", "Euro-Techno", "Ambient", "Trip-Hop", "Vocal", "Jazz+Funk",
	"Fusion", "Trance", "Classical", "Instrumental", "Acid", "House", "Game", "Sound Clip", "Gospel", "Noise",
	"AlternRock", "Bass", "Soul", "Punk", "Space", "Meditative", "Instrumental Pop", "Instrumental Rock", "Ethnic", "Gothic",
	"Darkwave", "Techno-Industrial", "Electronic", "Pop-Folk", "Eurodance", "Dream", "Southern Rock", "Comedy", "Cult", "Gangsta",
	"Top 40", "Christian Rap", "Pop/Funk", "Jungle", "Native American", "Cabaret", "New Wave", "Psychadelic", "Rave", "Showtunes",
	"Trailer", "Lo-Fi", "Tribal", "Acid Punk", "Acid Jazz", "Polka", "Retro", "Musical", "Rock & Roll", "Hard Rock",
	"Folk", "Folk-Rock", "National Folk", "Swing", "Fast Fusion", "Bebob", "Latin", "Revival", "Celtic", "Bluegrass",
	"Avantgarde", "Gothic Rock", "Progressive Rock", "Psychedelic Rock", "Symphonic Rock", "Slow Rock", "Big Band", "Chorus", "Easy Listening", "Acoustic",
	"Humour", "Speech", "Chanson", "Opera", "Chamber Music", "Sonata", "Symphony", "Booty Bass", "Primus", "Porn Groove",
	"Satire", "Slow Jam", "Club", "Tango", "Samba", "Folklore", "Ballad", "Power Ballad", "Rhythmic Soul", "Freestyle",
	"Duet", "Punk Rock", "Drum Solo", "A capella", "Euro-House", "Dance Hall",
}
