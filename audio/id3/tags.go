package id3

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/audiopost/audiopost/audio"
)

// TagSize returns the total length of the ID3v2 tag starting at p (header,
// body and footer), or 0 if p does not start with a valid header. Ten bytes
// are enough to tell.
func TagSize(p []byte) int {
	if len(p) < headerLen || string(p[:3]) != "ID3" || p[3] < 2 || p[3] > 4 || p[4] == 0xFF {
		return 0
	}
	size, ok := syncsafe(p[6:10])
	if !ok {
		return 0
	}
	n := headerLen + size
	if p[3] == 4 && p[5]&flagFooter != 0 {
		n += headerLen
	}
	return n
}

// ParseTags parses a complete ID3v2.2, 2.3 or 2.4 tag (header included)
// and returns the tags it knows: TIT2, TPE1, TALB, TRCK, TYER/TDRC, TCON,
// COMM, APIC (the front cover preferred), TIT3, TPUB, TCOP, WXXX, WCOP,
// TXXX keywords and location, and a few more. Unknown,
// compressed or encrypted frames are skipped; a damaged frame ends the
// parse with the tags found so far and an error wrapping ErrMalformed.
func ParseTags(tag []byte) (audio.Tags, error) {
	var p tagPicker
	if TagSize(tag) == 0 {
		return p.tags(), fmt.Errorf("%w: not an ID3v2 tag", ErrMalformed)
	}
	version, flags := tag[3], tag[5]
	size, _ := syncsafe(tag[6:10])
	body := tag[headerLen:min(len(tag), headerLen+size)]
	tagUnsync := flags&flagUnsync != 0
	if tagUnsync && version < 4 {
		body = unsync(body)
	}
	if flags&flagExtended != 0 && version >= 3 {
		var err error
		if body, err = skipExtendedHeader(body, version); err != nil {
			return p.tags(), err
		}
	}
	frames, _, err := parseFrames(body, version)
	for _, f := range frames {
		if data, ok := f.payload(version, tagUnsync); ok {
			p.frame(f.id, data)
		}
	}
	return p.tags(), err
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
		case "license_url":
			p.set(&t.LicenseURL, val)
		case "keywords":
			p.set(&t.Keywords, val)
		case "location":
			p.set(&t.Location, val)
		case "subtitle":
			p.set(&t.Subtitle, val)
		case "comment": // how ffmpeg writes a comment
			p.set(&p.commentAny, val)
		}
	case "WOAS", "WOAF", "WAS", "WAF":
		p.set(&t.URL, latin1(trimNul(data)))
	case "WCOP", "WCP":
		p.set(&t.LicenseURL, latin1(trimNul(data)))
	case "TKWD": // iTunes podcast keywords
		p.set(&t.Keywords, textFrame(data))
	case "WXXX", "WXX":
		p.set(&t.URL, urlFrame(data))
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
		if mime, ptype, img, ok := apic(data); ok {
			p.picture(mime, ptype, img)
		}
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

// apic splits an APIC frame: encoding, MIME type (Latin-1,
// NUL-terminated), picture type, description, picture data.
func apic(data []byte) (mime string, ptype byte, img []byte, ok bool) {
	if len(data) < 2 {
		return "", 0, nil, false
	}
	i := bytes.IndexByte(data[1:], 0)
	if i < 0 || 1+i+2 > len(data) {
		return "", 0, nil, false
	}
	_, img = splitText(data[0], data[1+i+2:])
	return latin1(data[1 : 1+i]), data[1+i+1], img, true
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

// ParseV1 parses a 128-byte ID3v1 or v1.1 tag ("TAG" ...), the one at the
// end of an MP3 file.
func ParseV1(p []byte) (audio.Tags, bool) {
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
