package wav

import (
	"bytes"
	"encoding/binary"
	"strings"
	"unicode/utf8"

	"github.com/audiopost/audiopost/audio"
)

// maxListSize bounds a LIST chunk the decoder parses; larger ones are
// skipped rather than read into memory.
const maxListSize = 1 << 20

// infoFields maps RIFF INFO ids to tags. Decoding reads every id listed;
// encoding writes the first id of each tag. INFO has no place for a
// publisher, URLs or a position (IARL is where the file is archived, not
// where it was recorded); those tags are not written to WAV files.
var infoFields = []struct {
	id  string
	tag func(*audio.Tags) *string
}{
	{"INAM", func(t *audio.Tags) *string { return &t.Title }},
	{"ISBJ", func(t *audio.Tags) *string { return &t.Subtitle }},
	{"IART", func(t *audio.Tags) *string { return &t.Artist }},
	{"IPRD", func(t *audio.Tags) *string { return &t.Album }},
	{"ICRD", func(t *audio.Tags) *string { return &t.Year }},
	{"IGNR", func(t *audio.Tags) *string { return &t.Genre }},
	{"ICMT", func(t *audio.Tags) *string { return &t.Comment }},
	{"ICOP", func(t *audio.Tags) *string { return &t.License }},
	{"IKEY", func(t *audio.Tags) *string { return &t.Keywords }},
	{"ITRK", func(t *audio.Tags) *string { return &t.Track }},
	{"IPRT", func(t *audio.Tags) *string { return &t.Track }},
}

// INFO's IKEY separates keywords with "; ", Tags.Keywords with ", ".
var (
	keywordsToInfo   = strings.NewReplacer(", ", "; ", ",", "; ")
	keywordsFromInfo = strings.NewReplacer("; ", ", ", ";", ", ")
)

// parseInfo reads the sub-chunks of a LIST/INFO body (after "INFO") into t.
// The first non-empty value of a tag wins. Damaged sub-chunks end the parse:
// tags are a courtesy, not a reason to reject the audio.
func parseInfo(body []byte, t *audio.Tags) {
	for len(body) >= 8 {
		id := string(body[:4])
		size := int64(binary.LittleEndian.Uint32(body[4:8]))
		body = body[8:]
		if size > int64(len(body)) {
			return
		}
		val := body[:size]
		body = body[min(size+size&1, int64(len(body))):]
		for _, f := range infoFields {
			if f.id != id {
				continue
			}
			if p := f.tag(t); *p == "" {
				*p = infoText(val)
				if f.id == "IKEY" {
					*p = keywordsFromInfo.Replace(*p)
				}
			}
			break
		}
	}
}

// infoText trims the NUL terminator and padding. INFO strings have no
// declared encoding: UTF-8 is kept, anything else is read as Latin-1.
func infoText(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	b = bytes.TrimRight(b, " ")
	if utf8.Valid(b) {
		return string(b)
	}
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
	}
	return string(r)
}

// appendInfo appends a LIST/INFO chunk holding t to dst, or nothing when t
// has no tag a WAV file can carry. ICMT, the only free text, carries the
// summary, or the comment when there is no summary.
func appendInfo(dst []byte, t audio.Tags) []byte {
	if t.Summary != "" {
		t.Comment = t.Summary
	}
	t.Keywords = keywordsToInfo.Replace(t.Keywords)
	var body []byte
	seen := map[*string]bool{}
	for _, f := range infoFields {
		p := f.tag(&t)
		if *p == "" || seen[p] {
			continue
		}
		seen[p] = true
		v := []byte(*p)
		if i := bytes.IndexByte(v, 0); i >= 0 {
			v = v[:i] // a NUL would end the string for every reader
		}
		size := len(v) + 1
		body = append(body, f.id...)
		body = binary.LittleEndian.AppendUint32(body, uint32(size))
		body = append(body, v...)
		body = append(body, 0)
		if size&1 == 1 {
			body = append(body, 0)
		}
	}
	if body == nil {
		return dst
	}
	dst = append(dst, "LIST"...)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(4+len(body)))
	dst = append(dst, "INFO"...)
	return append(dst, body...)
}
