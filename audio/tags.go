package audio

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// ISO6709 formats a position in decimal degrees as an ISO 6709 point
// string ("+48.2082+016.3738/"), the form MP4 location atoms and most tag
// editors use.
func ISO6709(latitude, longitude float64) string {
	return fmt.Sprintf("%+08.4f%+09.4f/", latitude, longitude)
}

// VorbisComments returns the tags as Vorbis comments (FLAC, Ogg Vorbis,
// Opus), in the order they are written. The names follow the Vorbis
// comment recommendations where there is one (ORGANIZATION for the
// publisher, LICENSE, LOCATION, TRACKNUMBER, DATE) and the common
// extensions elsewhere (SUBTITLE, SUMMARY, URL, LICENSE_URL, KEYWORDS).
// Empty tags are left out; the cover is not a comment.
func VorbisComments(t Tags) [][2]string {
	var out [][2]string
	for _, f := range vorbisNames {
		if v := f.get(&t); *v != "" {
			out = append(out, [2]string{f.name, *v})
		}
	}
	return out
}

// vorbisNames maps Vorbis comment names to tags.
var vorbisNames = []struct {
	name string
	get  func(*Tags) *string
}{
	{"TITLE", func(t *Tags) *string { return &t.Title }},
	{"SUBTITLE", func(t *Tags) *string { return &t.Subtitle }},
	{"ARTIST", func(t *Tags) *string { return &t.Artist }},
	{"ALBUM", func(t *Tags) *string { return &t.Album }},
	{"TRACKNUMBER", func(t *Tags) *string { return &t.Track }},
	{"DATE", func(t *Tags) *string { return &t.Year }},
	{"GENRE", func(t *Tags) *string { return &t.Genre }},
	{"COMMENT", func(t *Tags) *string { return &t.Comment }},
	{"SUMMARY", func(t *Tags) *string { return &t.Summary }},
	{"ORGANIZATION", func(t *Tags) *string { return &t.Publisher }},
	{"URL", func(t *Tags) *string { return &t.URL }},
	{"LICENSE", func(t *Tags) *string { return &t.License }},
	{"LICENSE_URL", func(t *Tags) *string { return &t.LicenseURL }},
	{"KEYWORDS", func(t *Tags) *string { return &t.Keywords }},
	{"LOCATION", func(t *Tags) *string { return &t.Location }},
}

// VorbisChapters returns chapters as Vorbis comments of the chapter
// extension that players and ffmpeg read (CHAPTER001=00:01:02.500,
// CHAPTER001NAME=title, CHAPTER001URL=url), numbered by start time.
// Chapter pictures have no place there.
func VorbisChapters(cs []Chapter) [][2]string {
	cs = slices.Clone(cs)
	slices.SortStableFunc(cs, func(a, b Chapter) int { return cmp.Compare(a.Start, b.Start) })
	var out [][2]string
	for i, c := range cs {
		key := fmt.Sprintf("CHAPTER%03d", i+1)
		out = append(out, [2]string{key, Clock(c.Start)}, [2]string{key + "NAME", c.Title})
		if c.URL != "" {
			out = append(out, [2]string{key + "URL", c.URL})
		}
	}
	return out
}

// Clock formats a non-negative duration as HH:MM:SS.mmm.
func Clock(d time.Duration) string {
	ms := d.Milliseconds()
	return fmt.Sprintf("%02d:%02d:%02d.%03d", ms/3600000, ms/60000%60, ms/1000%60, ms%1000)
}
