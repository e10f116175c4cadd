package id3_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/id3"
	"github.com/audiopost/audiopost/internal/need"
)

// ffmpegMP3 makes a 6 s MP3 with three chapters through ffmpeg's mp3
// muxer, as the encoder does, in ID3v2.version, with a cover when asked.
func ffmpegMP3(t testing.TB, version int, cover bool) []byte {
	t.Helper()
	need.Program(t, "ffmpeg")
	dir := t.TempDir()
	meta := filepath.Join(dir, "meta.txt")
	os.WriteFile(meta, []byte(";FFMETADATA1\ntitle=Show\n"+
		"[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=2000\ntitle=Intro\n"+
		"[CHAPTER]\nTIMEBASE=1/1000\nSTART=2000\nEND=4500\ntitle=Gespräch\n"+
		"[CHAPTER]\nTIMEBASE=1/1000\nSTART=4500\nEND=6000\ntitle=Outro\n"), 0o644)
	args := []string{"-v", "error", "-f", "lavfi", "-i", "sine=frequency=440:duration=6", "-i", meta}
	maps := []string{"-map", "0:a", "-map_metadata", "1"}
	if cover {
		img := filepath.Join(dir, "cover.png")
		os.WriteFile(img, pngOf(t, 300, 300, color.RGBA{200, 40, 40, 255}), 0o644)
		args = append(args, "-i", img)
		maps = append(maps, "-map", "2", "-c:v", "copy", "-disposition:v", "attached_pic")
	}
	out := filepath.Join(dir, "out.mp3")
	args = append(args, maps...)
	args = append(args, "-c:a", "libmp3lame", "-b:a", "64k", "-id3v2_version", strconv.Itoa(version), "-y", out)
	if b, err := exec.Command("ffmpeg", args...).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v\n%s", err, b)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func pngOf(t testing.TB, w, h int, c color.Color) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// tagLen is the length of the ID3v2 tag at the start of b.
func tagLen(b []byte) int {
	return 10 + (int(b[6])<<21 | int(b[7])<<14 | int(b[8])<<7 | int(b[9]))
}

func TestAddChapterExtrasFFmpeg(t *testing.T) {
	jb := new(bytes.Buffer)
	jpeg.Encode(jb, image.NewGray(image.Rect(0, 0, 64, 48)), nil)
	picPNG := &id3.Picture{MIMEType: "image/png", Data: pngOf(t, 40, 40, color.RGBA{0, 90, 200, 255})}
	picJPEG := &id3.Picture{MIMEType: "image/jpeg", Data: jb.Bytes()}
	extras := []id3.ChapterExtra{
		{URL: "https://example.org/intro", Image: picPNG},
		{}, // the second chapter gets nothing
		{URL: "https://example.org/outro?q=ü", Image: picJPEG},
	}
	for _, tc := range []struct {
		version int
		cover   bool
	}{{3, false}, {3, true}, {4, false}, {4, true}} {
		t.Run(fmt.Sprintf("v2.%d/cover=%v", tc.version, tc.cover), func(t *testing.T) {
			orig := ffmpegMP3(t, tc.version, tc.cover)
			before, err := id3.ReadChapters(bytes.NewReader(orig))
			if err != nil || len(before) != 3 {
				t.Fatalf("ffmpeg's chapters: %+v, %v", before, err)
			}
			var out bytes.Buffer
			if err := id3.AddChapterExtras(&out, bytes.NewReader(orig), extras); err != nil {
				t.Fatal(err)
			}
			got, err := id3.ReadChapters(bytes.NewReader(out.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			want := []id3.Chapter{
				{ElementID: before[0].ElementID, Start: 0, End: 2 * time.Second, Title: "Intro", URL: "https://example.org/intro", Image: picPNG},
				{ElementID: before[1].ElementID, Start: 2 * time.Second, End: 4500 * time.Millisecond, Title: "Gespräch"},
				// A Latin-1 URL field holds no UTF-8: percent-encoded.
				{ElementID: before[2].ElementID, Start: 4500 * time.Millisecond, End: 6 * time.Second, Title: "Outro", URL: "https://example.org/outro?q=%C3%BC", Image: picJPEG},
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("chapters read back (-want +got):\n%s", d)
			}
			// The audio after the tag is untouched.
			if !bytes.Equal(orig[tagLen(orig):], out.Bytes()[tagLen(out.Bytes()):]) {
				t.Error("the bytes after the tag changed")
			}
			path := filepath.Join(t.TempDir(), "x.mp3")
			os.WriteFile(path, out.Bytes(), 0o644)
			// ffmpeg reads the sub-frames of a CHAP frame with ID3v2.3
			// sizes whatever the tag's version, so in a 2.4 tag it loses
			// chapters whose sub-frames pass 127 bytes (where the two size
			// encodings differ). mutagen reads them right; the encoder
			// writes 2.3.
			checkFFprobe(t, path, tc.version == 3)
			checkMutagen(t, path, want)
		})
	}
}

// checkFFprobe: ffmpeg still reads the file, its length and, when
// chapters is set, its chapters.
func checkFFprobe(t *testing.T, path string, chapters bool) {
	t.Helper()
	b, err := exec.Command(need.Program(t, "ffprobe"), "-v", "error", "-show_chapters", "-show_format", "-of", "json", path).Output()
	if err != nil {
		t.Fatalf("ffprobe: %v", err)
	}
	var pr struct {
		Format struct {
			Duration string `json:"duration"`
		} `json:"format"`
		Chapters []struct {
			StartTime string            `json:"start_time"`
			Tags      map[string]string `json:"tags"`
		} `json:"chapters"`
	}
	if err := json.Unmarshal(b, &pr); err != nil {
		t.Fatal(err)
	}
	if d, _ := strconv.ParseFloat(pr.Format.Duration, 64); math.Abs(d-6) > 0.1 {
		t.Errorf("ffprobe duration %v", d)
	}
	if !chapters {
		return
	}
	titles := []string{"Intro", "Gespräch", "Outro"}
	starts := []float64{0, 2, 4.5}
	if len(pr.Chapters) != 3 {
		t.Fatalf("ffprobe reads %d chapters", len(pr.Chapters))
	}
	for i, c := range pr.Chapters {
		if s, _ := strconv.ParseFloat(c.StartTime, 64); math.Abs(s-starts[i]) > 0.001 || c.Tags["title"] != titles[i] {
			t.Errorf("ffprobe chapter %d: %v %q", i, c.StartTime, c.Tags["title"])
		}
	}
}

// checkMutagen reads the chapters with an independent implementation,
// Python's mutagen (Debian's python3-mutagen), when it is installed.
func checkMutagen(t *testing.T, path string, want []id3.Chapter) {
	t.Helper()
	py, ok := need.HasPython(t, "mutagen")
	if !ok {
		return
	}
	script := `
import sys, json, hashlib
from mutagen.id3 import ID3
out = []
for c in ID3(sys.argv[1]).getall('CHAP'):
    d = {'id': c.element_id, 'start': c.start_time, 'end': c.end_time, 'url': '', 'mime': '', 'sha': ''}
    for k, f in c.sub_frames.items():
        if k.startswith('WXXX'):
            d['url'] = f.url
        if k.startswith('APIC'):
            d['mime'] = f.mime
            d['sha'] = hashlib.sha256(f.data).hexdigest()
    out.append(d)
print(json.dumps(out))
`
	b, err := exec.Command(py, "-c", script, path).CombinedOutput()
	if err != nil {
		t.Fatalf("mutagen: %v\n%s", err, b)
	}
	var got []struct {
		ID         string
		Start, End int64
		URL, MIME  string
		SHA        string
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("mutagen output %s: %v", b, err)
	}
	if len(got) != len(want) {
		t.Fatalf("mutagen reads %d chapters, want %d", len(got), len(want))
	}
	for i, g := range got {
		w := want[i]
		mime, sha := "", ""
		if w.Image != nil {
			mime, sha = w.Image.MIMEType, sha256hex(w.Image.Data)
		}
		if g.ID != w.ElementID || g.Start != w.Start.Milliseconds() || g.End != w.End.Milliseconds() || g.URL != w.URL || g.MIME != mime || g.SHA != sha {
			t.Errorf("mutagen chapter %d: %+v; want %s %d-%d %q %q %s", i, g, w.ElementID, w.Start.Milliseconds(), w.End.Milliseconds(), w.URL, mime, sha)
		}
	}
}

func TestAddChapterExtrasReplaces(t *testing.T) {
	orig := ffmpegMP3(t, 3, false)
	var once, twice bytes.Buffer
	pic := &id3.Picture{MIMEType: "image/png", Data: pngOf(t, 8, 8, color.White)}
	if err := id3.AddChapterExtras(&once, bytes.NewReader(orig), []id3.ChapterExtra{{URL: "https://a.example", Image: pic}}); err != nil {
		t.Fatal(err)
	}
	if err := id3.AddChapterExtras(&twice, bytes.NewReader(once.Bytes()), []id3.ChapterExtra{{URL: "https://b.example"}}); err != nil {
		t.Fatal(err)
	}
	got, err := id3.ReadChapters(bytes.NewReader(twice.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	// The URL is replaced, not doubled; the picture stays.
	if got[0].URL != "https://b.example" || got[0].Image == nil || !bytes.Equal(got[0].Image.Data, pic.Data) {
		t.Errorf("after two rewrites: %+v", got[0])
	}
	if n := bytes.Count(twice.Bytes(), []byte("WXXX")); n != 1 {
		t.Errorf("%d WXXX frames, want 1", n)
	}
	// Fewer extras than chapters leave the rest alone; more is an error.
	if got[1].URL != "" || got[1].Image != nil {
		t.Errorf("chapter without extras: %+v", got[1])
	}
	if err := id3.AddChapterExtras(&bytes.Buffer{}, bytes.NewReader(orig), make([]id3.ChapterExtra, 4)); err == nil {
		t.Error("4 extras for 3 chapters: no error")
	}
}

// TestAddExtrasURLs adds the episode URL (WXXX) and the license URL
// (WCOP) to ffmpeg's tag, twice: ParseTags reads them back, the second
// rewrite replaces rather than doubles them, and the chapters and the
// audio are untouched.
func TestAddExtrasURLs(t *testing.T) {
	orig := ffmpegMP3(t, 3, false)
	var once, twice bytes.Buffer
	e := id3.Extras{URL: "https://example.org/ep1", LicenseURL: "https://creativecommons.org/licenses/by/4.0/",
		Chapters: []id3.ChapterExtra{{URL: "https://example.org/intro"}}}
	if err := id3.AddExtras(&once, bytes.NewReader(orig), e); err != nil {
		t.Fatal(err)
	}
	e.URL, e.Chapters = "https://example.org/ep2", nil
	if err := id3.AddExtras(&twice, bytes.NewReader(once.Bytes()), e); err != nil {
		t.Fatal(err)
	}
	out := twice.Bytes()
	tags, err := id3.ParseTags(out[:tagLen(out)])
	if err != nil {
		t.Fatal(err)
	}
	if tags.URL != "https://example.org/ep2" || tags.LicenseURL != e.LicenseURL || tags.Title != "Show" {
		t.Errorf("tags read back: %+v", tags)
	}
	// One WXXX in the first chapter, one for the episode.
	if n, m := bytes.Count(out, []byte("WXXX")), bytes.Count(out, []byte("WCOP")); n != 2 || m != 1 {
		t.Errorf("%d WXXX and %d WCOP frames, want 2 and 1", n, m)
	}
	chs, err := id3.ReadChapters(bytes.NewReader(out))
	if err != nil || len(chs) != 3 || chs[0].URL != "https://example.org/intro" {
		t.Errorf("chapters after the rewrites: %+v, %v", chs, err)
	}
	if !bytes.Equal(orig[tagLen(orig):], out[tagLen(out):]) {
		t.Error("the bytes after the tag changed")
	}
}

// v23 builds an ID3v2.3 tag of frames (id, data pairs) and padding.
func v23(padding int, frames ...string) []byte {
	var body []byte
	for i := 0; i+1 < len(frames); i += 2 {
		n := len(frames[i+1])
		body = append(body, frames[i]...)
		body = append(body, byte(n>>24), byte(n>>16), byte(n>>8), byte(n), 0, 0)
		body = append(body, frames[i+1]...)
	}
	body = append(body, make([]byte, padding)...)
	n := len(body)
	return append([]byte{'I', 'D', '3', 3, 0, 0, byte(n >> 21 & 0x7f), byte(n >> 14 & 0x7f), byte(n >> 7 & 0x7f), byte(n & 0x7f)}, body...)
}

// chap is the data of a CHAP frame from start to end ms with a title.
func chap(id string, start, end uint32, title string) string {
	var b []byte
	b = append(b, id...)
	b = append(b, 0)
	for _, v := range []uint32{start, end, 0xffffffff, 0xffffffff} {
		b = append(b, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	n := len(title) + 1
	b = append(b, "TIT2"...)
	b = append(b, byte(n>>24), byte(n>>16), byte(n>>8), byte(n), 0, 0, 0)
	b = append(b, title...)
	return string(b)
}

func TestErrors(t *testing.T) {
	good := v23(16, "TIT2", "\x00Show", "CHAP", chap("ch0", 0, 1000, "One"))
	if cs, err := id3.ReadChapters(bytes.NewReader(good)); err != nil || len(cs) != 1 || cs[0].Title != "One" {
		t.Fatalf("hand-made tag: %+v, %v", cs, err)
	}
	v22 := append([]byte(nil), good...)
	v22[3] = 2
	unsync := append([]byte(nil), good...)
	unsync[5] = 0x80
	bigFrame := v23(0, "CHAP", chap("ch0", 0, 1000, "One"))
	bigFrame[14] = 0x7f // CHAP size's high byte
	huge := []byte{'I', 'D', '3', 3, 0, 0, 0x7f, 0x7f, 0x7f, 0x7f}
	badID := v23(0, "ch@p", "x")
	trailing := v23(4, "TIT2", "\x00a")
	trailing[len(trailing)-1] = 1
	shortChap := v23(0, "CHAP", "ch0\x00\x00\x00")
	for name, tc := range map[string]struct {
		data []byte
		want error
	}{
		"empty":            {nil, id3.ErrNoTag},
		"not a tag":        {[]byte("RIFF....WAVE"), id3.ErrNoTag},
		"v2.2":             {v22, id3.ErrUnsupported},
		"unsynchronised":   {unsync, id3.ErrUnsupported},
		"truncated":        {good[:len(good)-5], id3.ErrMalformed},
		"frame too large":  {bigFrame, id3.ErrMalformed},
		"huge claimed":     {huge, id3.ErrMalformed},
		"bad frame id":     {badID, id3.ErrMalformed},
		"data in padding":  {trailing, id3.ErrMalformed},
		"short CHAP frame": {shortChap, id3.ErrMalformed},
	} {
		_, err := id3.ReadChapters(bytes.NewReader(tc.data))
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: ReadChapters error %v, want %v", name, err, tc.want)
		}
		if tc.want == id3.ErrMalformed && !errors.Is(err, audio.ErrMalformed) {
			t.Errorf("%s: %v is not audio.ErrMalformed", name, err)
		}
		if err := id3.AddChapterExtras(&bytes.Buffer{}, bytes.NewReader(tc.data), []id3.ChapterExtra{{URL: "https://x.example"}}); !errors.Is(err, tc.want) {
			t.Errorf("%s: AddChapterExtras error %v, want %v", name, err, tc.want)
		}
	}
}

func sha256hex(b []byte) string {
	return fmt.Sprintf("%x", sha256.Sum256(b))
}

func ExampleAddChapterExtras() {
	// A tag with one chapter, as ffmpeg writes it, then the audio.
	mp3 := append(v23(0, "CHAP", chap("ch0", 0, 90000, "Welcome")), "...MPEG frames..."...)
	var out bytes.Buffer
	err := id3.AddChapterExtras(&out, bytes.NewReader(mp3), []id3.ChapterExtra{
		{URL: "https://example.org/show-notes", Image: &id3.Picture{MIMEType: "image/jpeg", Data: []byte("JPEG data")}},
	})
	if err != nil {
		panic(err)
	}
	chapters, err := id3.ReadChapters(bytes.NewReader(out.Bytes()))
	if err != nil {
		panic(err)
	}
	for _, c := range chapters {
		fmt.Printf("%s %v-%v %q %s %s %d bytes\n", c.ElementID, c.Start, c.End, c.Title, c.URL, c.Image.MIMEType, len(c.Image.Data))
	}
	fmt.Println(strings.HasSuffix(out.String(), "...MPEG frames..."))
	// Output:
	// ch0 0s-1m30s "Welcome" https://example.org/show-notes image/jpeg 9 bytes
	// true
}
