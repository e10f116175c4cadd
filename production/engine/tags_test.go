package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/audiopost/audiopost/audio/id3"
	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/production/engine"
)

// tagField is one metadata field of the spec: the value the production
// sets and the keys ffprobe may list it under.
type tagField struct {
	name, want string
	keys       []string
}

var tagFields = []tagField{
	{"title", "Round Trip", []string{"title"}},
	{"artist", "The Hosts", []string{"artist"}},
	{"album", "Tag Show", []string{"album"}},
	{"subtitle", "Every field, every format", []string{"subtitle", "TIT3", "ISBJ"}},
	{"summary", "We write every tag and read it back.", []string{"description", "summary", "comment"}},
	{"genre", "Podcast", []string{"genre"}},
	{"publisher", "Audiopost Media", []string{"publisher", "organization"}},
	{"url", "https://example.org/episodes/7", []string{"url"}},
	{"license", "CC BY 4.0", []string{"copyright", "license"}},
	{"license_url", "https://creativecommons.org/licenses/by/4.0/", []string{"license_url"}},
	{"track", "7", []string{"track", "tracknumber"}},
	{"year", "2026", []string{"date", "year"}},
	{"tags", "news, science", []string{"keywords", "IKEY"}},
	{"location", "+48.2082+016.3738/", []string{"location"}},
}

// noPlace lists, per output format, the fields the format has no place
// for (RIFF INFO has no publisher, URL or position), and the ones only
// package id3 reads back (ffprobe reads no ID3 URL frames).
var (
	noPlace = map[string][]string{"wav": {"publisher", "url", "license_url", "location"}, "wav-24bit": {"publisher", "url", "license_url", "location"}}
	id3Only = []string{"url", "license_url"}
)

// TestTagRoundTrip writes every metadata field of the spec, chapters and
// a cover into every audio and video output format and reads the files
// back with ffprobe (and package id3 for the ID3 URL frames).
func TestTagRoundTrip(t *testing.T) {
	if testing.Short() {
		t.Skip("encodes every output format")
	}
	// Self-contained (no Setenv): runs beside the other heavy engine tests.
	t.Parallel()
	need.Programs(t, "ffmpeg", "ffprobe")
	const rate = 44100
	dir, outDir := t.TempDir(), t.TempDir()
	input := filepath.Join(dir, "talk.wav")
	// 1 s: the tags, chapters and cover do not grow with the length,
	// and the three videos' frames are the cost (3 s took 12.8 s of CPU
	// on an earlier machine; 2 s took 3.4-3.6 s here, 1 s 2.9-3.0).
	testaudio.WriteWAV(t, input, testaudio.SpeechLike(rate, 1, 0.05), rate)
	cover := coverPNG(t, dir)
	p := newProduction(t, `{"input_file": "https://example.org/talk.wav", "output_basename": "ep",
		"metadata": {"title": "Round Trip", "artist": "The Hosts", "album": "Tag Show", "subtitle": "Every field, every format",
			"summary": "We write every tag and read it back.", "genre": "Podcast", "publisher": "Audiopost Media",
			"url": "https://example.org/episodes/7", "license": "CC BY 4.0", "license_url": "https://creativecommons.org/licenses/by/4.0/",
			"track": 7, "year": 2026, "tags": ["news", "science"], "location": {"latitude": "48.2082", "longitude": "16.3738"}},
		"chapters": [{"start": "0", "title": "Hello"}, {"start": "0.5", "title": "Goodbye"}],
		"output_files": [{"format": "mp3"}, {"format": "mp3-vbr", "suffix": "-vbr"}, {"format": "aac"}, {"format": "alac", "suffix": "-alac"},
			{"format": "vorbis"}, {"format": "opus"}, {"format": "flac"}, {"format": "wav"}, {"format": "wav-24bit", "suffix": "-24"},
			{"format": "video"}, {"format": "video", "ending": "mkv", "suffix": "-v"}, {"format": "audiogram", "suffix": "-gram"}]}`)
	if _, err := (&engine.Engine{}).Run(context.Background(), p, engine.Inputs{Main: input, Cover: cover}, engine.DirWriter{Dir: outDir}, nil); err != nil {
		t.Fatalf("Run: %v", err)
	}
	var table strings.Builder
	fmt.Fprintf(&table, "%-10s", "format")
	for _, f := range tagFields {
		fmt.Fprintf(&table, " %s", f.name)
	}
	fmt.Fprintf(&table, " chapters cover\n")
	for i, o := range p.OutputFiles {
		name := p.OutputFilename(i)
		path := filepath.Join(outDir, name)
		pr := probe(t, path)
		var frames *id3TagsRead
		if o.Format == "mp3" || o.Format == "mp3-vbr" {
			frames = readID3(t, path)
		}
		fmt.Fprintf(&table, "%-10s", o.Format+"/"+filepath.Ext(name)[1:])
		for _, f := range tagFields {
			var got string
			if frames != nil && slices.Contains(id3Only, f.name) {
				got = frames.get(f.name)
			} else {
				for _, k := range f.keys {
					if got = pr.tag(k); got != "" {
						break
					}
				}
			}
			got = strings.ReplaceAll(got, "; ", ", ") // RIFF INFO's keyword separator
			absent := slices.Contains(noPlace[o.Format], f.name)
			switch {
			case absent && got != "":
				t.Errorf("%s: %s = %q where the format has no place for it", name, f.name, got)
			case absent:
				fmt.Fprintf(&table, " %s", strings.Repeat("-", len(f.name)))
			case got != f.want:
				t.Errorf("%s: %s = %q, want %q", name, f.name, got, f.want)
				fmt.Fprintf(&table, " %s", strings.Repeat("X", len(f.name)))
			default:
				fmt.Fprintf(&table, " %s", strings.Repeat("+", len(f.name)))
			}
		}
		// Chapters: every container with a place for them (not WAV).
		wantChapters := 2
		if strings.HasPrefix(o.Format, "wav") {
			wantChapters = 0
		}
		if len(pr.Chapters) != wantChapters || (wantChapters > 0 && pr.Chapters[1].Tags["title"] != "Goodbye") {
			t.Errorf("%s: chapters %+v, want %d", name, pr.Chapters, wantChapters)
		}
		fmt.Fprintf(&table, " %8d", len(pr.Chapters))
		// The cover: an attached picture, except in WAV (no place) and
		// in videos (it is the picture).
		hasCover := slices.ContainsFunc(pr.Streams, func(s ffStream) bool {
			return s.CodecType == "video" && (s.CodecName == "png" || s.CodecName == "mjpeg")
		})
		wantCover := !strings.HasPrefix(o.Format, "wav") && o.Format != "video" && o.Format != "audiogram"
		if hasCover != wantCover {
			t.Errorf("%s: embedded cover %v, want %v", name, hasCover, wantCover)
		}
		fmt.Fprintf(&table, " %5v\n", hasCover)
	}
	t.Logf("tags read back (+ as written, - no place in the format, X wrong):\n%s", table.String())
}

// id3TagsRead are the URL frames package id3 reads from an MP3.
type id3TagsRead struct{ url, licenseURL string }

func (x *id3TagsRead) get(field string) string {
	if field == "url" {
		return x.url
	}
	return x.licenseURL
}

func readID3(t *testing.T, path string) *id3TagsRead {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tags, err := id3.ParseTags(data[:min(len(data), id3.TagSize(data))])
	if err != nil {
		t.Fatalf("%s: %v", filepath.Base(path), err)
	}
	return &id3TagsRead{url: tags.URL, licenseURL: tags.LicenseURL}
}
