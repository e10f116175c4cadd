package flac

import (
	"bytes"
	"fmt"
	"image"
	_ "image/jpeg" // cover dimensions for the PICTURE block
	_ "image/png"
	"net/http"
	"strings"

	"github.com/audiopost/audiopost/audio"
	"github.com/mewkiz/flac/meta"
)

// vorbisFields maps Vorbis comment names to the Tags field they fill, in
// order of preference: the first name present wins.
var vorbisFields = []struct {
	names []string
	field func(*audio.Tags) *string
}{
	{[]string{"TITLE"}, func(t *audio.Tags) *string { return &t.Title }},
	{[]string{"ARTIST", "ALBUMARTIST", "ALBUM ARTIST", "PERFORMER"}, func(t *audio.Tags) *string { return &t.Artist }},
	{[]string{"ALBUM"}, func(t *audio.Tags) *string { return &t.Album }},
	{[]string{"SUBTITLE", "VERSION"}, func(t *audio.Tags) *string { return &t.Subtitle }},
	{[]string{"SUMMARY"}, func(t *audio.Tags) *string { return &t.Summary }},
	{[]string{"GENRE"}, func(t *audio.Tags) *string { return &t.Genre }},
	{[]string{"ORGANIZATION", "PUBLISHER", "LABEL"}, func(t *audio.Tags) *string { return &t.Publisher }},
	{[]string{"URL", "WWW", "WEBSITE", "CONTACT"}, func(t *audio.Tags) *string { return &t.URL }},
	{[]string{"LICENSE", "COPYRIGHT"}, func(t *audio.Tags) *string { return &t.License }},
	{[]string{"TRACKNUMBER", "TRACK"}, func(t *audio.Tags) *string { return &t.Track }},
	{[]string{"DATE", "YEAR"}, func(t *audio.Tags) *string { return &t.Year }},
	{[]string{"COMMENT", "DESCRIPTION"}, func(t *audio.Tags) *string { return &t.Comment }},
	{[]string{"LICENSE_URL", "LICENSEURL"}, func(t *audio.Tags) *string { return &t.LicenseURL }},
	{[]string{"KEYWORDS"}, func(t *audio.Tags) *string { return &t.Keywords }},
	{[]string{"LOCATION"}, func(t *audio.Tags) *string { return &t.Location }},
}

// coverFrontType is the ID3/FLAC picture type of a front cover.
const coverFrontType = 3

// tagsFromBlocks reads Tags from the VORBIS_COMMENT and PICTURE blocks.
func tagsFromBlocks(blocks []*meta.Block) audio.Tags {
	var t audio.Tags
	var best *meta.Picture
	for _, b := range blocks {
		switch body := b.Body.(type) {
		case *meta.VorbisComment:
			fillVorbis(&t, body.Tags)
		case *meta.Picture:
			if len(body.Data) == 0 || body.MIME == "-->" { // "-->" marks a URL, not an image
				continue
			}
			if best == nil || (body.Type == coverFrontType && best.Type != coverFrontType) {
				best = body
			}
		}
	}
	if best != nil {
		mime := best.MIME
		if mime == "" || mime == "image/" {
			mime = http.DetectContentType(best.Data)
		}
		t.Cover = &audio.Picture{MIMEType: mime, Data: best.Data, Size: len(best.Data)}
	}
	return t
}

func fillVorbis(t *audio.Tags, comments [][2]string) {
	for _, f := range vorbisFields {
		dst := f.field(t)
		if *dst != "" {
			continue
		}
	names:
		for _, name := range f.names {
			for _, kv := range comments {
				if strings.EqualFold(kv[0], name) && strings.TrimSpace(kv[1]) != "" {
					*dst = kv[1]
					break names
				}
			}
		}
	}
}

// blocksFromTags returns the VORBIS_COMMENT and PICTURE blocks that carry t
// and the chapters (as the Vorbis chapter comments Ogg outputs have too).
// The vendor string is always written, so even an untagged file has the
// comment block that players expect.
func blocksFromTags(t audio.Tags, chapters []audio.Chapter) ([]*meta.Block, error) {
	vc := &meta.VorbisComment{Vendor: "audiopost", Tags: append(audio.VorbisComments(t), audio.VorbisChapters(chapters)...)}
	if n := vorbisLength(vc); n > maxBlockLength {
		return nil, fmt.Errorf("%w: %d bytes of tags exceed the FLAC metadata block limit", audio.ErrUnsupported, n)
	}
	blocks := []*meta.Block{{Header: meta.Header{Type: meta.TypeVorbisComment, Length: vorbisLength(vc)}, Body: vc}}
	if c := t.Cover; c != nil && len(c.Data) > 0 {
		pic := &meta.Picture{Type: coverFrontType, MIME: c.MIMEType, Data: c.Data}
		if pic.MIME == "" {
			pic.MIME = http.DetectContentType(c.Data)
		}
		if cfg, _, err := image.DecodeConfig(bytes.NewReader(c.Data)); err == nil {
			pic.Width, pic.Height, pic.Depth = uint32(cfg.Width), uint32(cfg.Height), 24
		}
		n := int64(32 + len(pic.MIME) + len(pic.Desc) + len(pic.Data))
		if n > maxBlockLength {
			return nil, fmt.Errorf("%w: %d-byte cover exceeds the FLAC metadata block limit", audio.ErrUnsupported, len(c.Data))
		}
		blocks = append(blocks, &meta.Block{
			Header: meta.Header{Type: meta.TypePicture, Length: n},
			Body:   pic,
		})
	}
	return blocks, nil
}

// maxBlockLength is the largest metadata block body: its length is 24 bits.
const maxBlockLength = 1<<24 - 1

// vorbisLength is the body size of a VORBIS_COMMENT block. The library
// computes it again when writing; it is set here because a zero Length makes
// the library write an empty block.
func vorbisLength(vc *meta.VorbisComment) int64 {
	n := int64(4 + len(vc.Vendor) + 4)
	for _, kv := range vc.Tags {
		n += int64(4 + len(kv[0]) + 1 + len(kv[1]))
	}
	return n
}
