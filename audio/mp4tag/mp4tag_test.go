package mp4tag_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/audiopost/audiopost/audio/mp4tag"
	"github.com/audiopost/audiopost/internal/need"
)

func run(t *testing.T, name string, args ...string) []byte {
	t.Helper()
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
	}
	return out
}

// probeTags returns the format tags ffprobe reads.
func probeTags(t *testing.T, path string) map[string]string {
	t.Helper()
	var p struct {
		Format struct {
			Tags map[string]string `json:"tags"`
		} `json:"format"`
	}
	if err := json.Unmarshal(run(t, "ffprobe", "-v", "error", "-show_format", "-of", "json", path), &p); err != nil {
		t.Fatal(err)
	}
	return p.Format.Tags
}

// TestAdd tags MP4 files as ffmpeg writes them (moov first and last,
// with and without an existing ilst, with a chapter track, as a video)
// and reads them back with ffprobe: the items are there, the old tags
// kept, and the decoded streams are bit-identical.
func TestAdd(t *testing.T) {
	need.Programs(t, "ffmpeg", "ffprobe")
	dir := t.TempDir()
	cases := []struct {
		name string
		args []string
	}{
		{"faststart m4a", []string{"-c:a", "aac", "-metadata", "title=Old title", "-movflags", "+faststart", "-f", "ipod"}},
		{"moov last", []string{"-c:a", "aac", "-metadata", "title=Old title", "-f", "ipod"}},
		{"no tags", []string{"-c:a", "alac", "-fflags", "+bitexact", "-map_metadata", "-1", "-movflags", "+faststart", "-f", "ipod"}},
		{"chapters", []string{"-c:a", "aac", "-metadata", "title=Old title", "-movflags", "+faststart", "-f", "ipod"}},
		{"video", []string{"-c:a", "aac", "-c:v", "libx264", "-preset", "ultrafast", "-metadata", "title=Old title", "-movflags", "+faststart", "-f", "mp4"}},
		{"quicktime", []string{"-c:a", "aac", "-c:v", "libx264", "-preset", "ultrafast", "-metadata", "title=Old title", "-movflags", "+faststart", "-f", "mov"}},
	}
	items := []mp4tag.Item{{Name: "SUBTITLE", Value: "A subtitle"}, {Name: "PUBLISHER", Value: "Pub & Co"},
		{Name: "URL", Value: "https://example.org/ep?a=1"}, {Atom: "desc", Value: "About this"}, {Atom: "keyw", Value: "a, b"}, {Name: "EMPTY"}}
	want := map[string]string{"SUBTITLE": "A subtitle", "PUBLISHER": "Pub & Co", "URL": "https://example.org/ep?a=1",
		"description": "About this", "keywords": "a, b"}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".mp4")
			args := []string{"-nostdin", "-v", "error", "-f", "lavfi", "-i", "sine=f=440:d=3"}
			if c.name == "video" || c.name == "quicktime" {
				args = append(args, "-f", "lavfi", "-i", "testsrc2=s=64x48:r=10:d=3")
			}
			if c.name == "chapters" {
				meta := filepath.Join(dir, "chapters.txt")
				os.WriteFile(meta, []byte(";FFMETADATA1\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=1500\ntitle=One\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=1500\nEND=3000\ntitle=Two\n"), 0o644)
				args = append(args, "-f", "ffmetadata", "-i", meta, "-map", "0", "-map_chapters", "1")
			}
			args = append(args, c.args...)
			args = append(args, "-y", in)
			run(t, "ffmpeg", args...)
			out := filepath.Join(dir, "tagged-"+filepath.Base(in))
			src, err := os.Open(in)
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			st, _ := src.Stat()
			var b bytes.Buffer
			if err := mp4tag.Add(&b, src, st.Size(), items); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(out, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			// Again over the tagged file: the items are replaced, not doubled.
			again := bytes.Buffer{}
			if err := mp4tag.Add(&again, bytes.NewReader(b.Bytes()), int64(b.Len()), []mp4tag.Item{{Name: "SUBTITLE", Value: "Second"}, {Atom: "desc", Value: "Other"}}); err != nil {
				t.Fatal(err)
			}
			tags := probeTags(t, out)
			for k, v := range want {
				if tags[k] != v {
					t.Errorf("%s = %q, want %q (tags %v)", k, tags[k], v, tags)
				}
			}
			if _, ok := tags["EMPTY"]; ok {
				t.Error("an empty item was written")
			}
			if c.name != "no tags" && tags["title"] != "Old title" {
				t.Errorf("title %q lost", tags["title"])
			}
			for _, s := range []string{"SUBTITLE", "desc"} {
				if n := bytes.Count(again.Bytes(), []byte(s)); n != 1 {
					t.Errorf("retagged file holds %s %d times", s, n)
				}
			}
			for _, sel := range []string{"a", "v"} {
				if sel == "v" && c.name != "video" && c.name != "quicktime" {
					continue
				}
				md5 := func(p string) string {
					return string(run(t, "ffmpeg", "-nostdin", "-v", "error", "-i", p, "-map", "0:"+sel, "-f", "md5", "-"))
				}
				if a, b := md5(in), md5(out); a != b {
					t.Errorf("stream %s decodes differently after tagging: %s vs %s", sel, a, b)
				}
			}
			if c.name == "chapters" {
				var p struct {
					Chapters []struct{ Tags map[string]string }
				}
				json.Unmarshal(run(t, "ffprobe", "-v", "error", "-show_chapters", "-of", "json", out), &p)
				if len(p.Chapters) != 2 || p.Chapters[1].Tags["title"] != "Two" {
					t.Errorf("chapters after tagging: %+v", p.Chapters)
				}
			}
		})
	}
}

func TestAddRejects(t *testing.T) {
	items := []mp4tag.Item{{Name: "SUBTITLE", Value: "x"}}
	for name, data := range map[string][]byte{
		"empty":          {},
		"stray bytes":    {0, 0, 0},
		"no moov":        []byte("\x00\x00\x00\x10ftypM4A \x00\x00\x00\x00"),
		"oversized box":  []byte("\x00\x00\x01\x00moov"),
		"bad child size": []byte("\x00\x00\x00\x18moov\x00\x00\x00\xffudta\x00\x00\x00\x00\x00\x00\x00\x00"),
		"two moov":       []byte("\x00\x00\x00\x08moov\x00\x00\x00\x08moov"),
	} {
		err := mp4tag.Add(&bytes.Buffer{}, bytes.NewReader(data), int64(len(data)), items)
		if !errors.Is(err, mp4tag.ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
	}
}

func FuzzAdd(f *testing.F) {
	f.Add([]byte("\x00\x00\x00\x10moov\x00\x00\x00\x08udta"))
	f.Add([]byte("\x00\x00\x00\x24moov\x00\x00\x00\x1cudta\x00\x00\x00\x14meta\x00\x00\x00\x00\x00\x00\x00\x08ilst"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var b bytes.Buffer
		if err := mp4tag.Add(&b, bytes.NewReader(data), int64(len(data)), []mp4tag.Item{{Name: "URL", Value: "u"}, {Atom: "desc", Value: "d"}}); err != nil {
			return
		}
		// What was accepted is accepted again, with the item once.
		var c bytes.Buffer
		if err := mp4tag.Add(&c, bytes.NewReader(b.Bytes()), int64(b.Len()), []mp4tag.Item{{Name: "URL", Value: "u"}, {Atom: "desc", Value: "d"}}); err != nil {
			t.Fatalf("retagging our own output: %v", err)
		}
		if c.Len() != b.Len() {
			t.Fatalf("retagging changed the size from %d to %d", b.Len(), c.Len())
		}
	})
}
