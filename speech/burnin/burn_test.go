package burnin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/testsize"
	"github.com/audiopost/audiopost/speech"
	"github.com/audiopost/audiopost/speech/burnin"
)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// testWords: cue 1 "Hello brave new world" 0.5-1.6 s, a pause, cue 2
// "Second {cue}" 2.8-3.4 s.
func testWords() []speech.Word {
	return []speech.Word{
		{Text: "Hello", Start: ms(500), End: ms(750)}, {Text: "brave", Start: ms(800), End: ms(1050)},
		{Text: "new", Start: ms(1100), End: ms(1300)}, {Text: "world", Start: ms(1350), End: ms(1600)},
		{Text: "Second", Start: ms(2800), End: ms(3100)}, {Text: "{cue}", Start: ms(3150), End: ms(3400)},
	}
}

func assFor(t *testing.T, s burnin.Style, width, height int) string {
	t.Helper()
	var b bytes.Buffer
	if _, err := burnin.WriteASS(&b, speech.Cues(testWords(), speech.CueOptions{}), s, width, height); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestWriteASS(t *testing.T) {
	s := burnin.DefaultStyle()
	a := assFor(t, s, 1920, 1080)
	for _, want := range []string{
		"PlayResX: 853\nPlayResY: 480\n",
		// white text, black box (BorderStyle 3), bottom centre (2)
		"Style: Default,DejaVu Sans,22,&H00FFFFFF,&H00FFFFFF,&H00000000,&H00000000,0,0,0,0,100,100,0,0,3,6,0,2,",
		// one event per word, the current word in #dc2626
		"Dialogue: 0,0:00:00.50,0:00:00.80,Default,,0,0,0,,{\\1c&H2626DC&}Hello{\\r} brave new world\n",
		"Dialogue: 0,0:00:00.80,0:00:01.10,Default,,0,0,0,,Hello {\\1c&H2626DC&}brave{\\r} new world\n",
		"Dialogue: 0,0:00:01.35,0:00:01.60,Default,,0,0,0,,Hello brave new {\\1c&H2626DC&}world{\\r}\n",
		"Second {\\1c&H2626DC&}(cue){\\r}\n", // braces cannot open override blocks
	} {
		if !strings.Contains(a, want) {
			t.Errorf("default style lacks %q:\n%s", want, a)
		}
	}
	if n := strings.Count(a, "Dialogue:"); n != 6 {
		t.Errorf("%d events for 6 words", n)
	}

	for _, c := range []struct {
		name   string
		change func(*burnin.Style)
		want   []string
		events int
		font   string // the family the case needs installed
	}{
		{"none", func(s *burnin.Style) { s.WordHighlight = "none" },
			[]string{"Dialogue: 0,0:00:00.50,0:00:01.60,Default,,0,0,0,,Hello brave new world\n"}, 2, ""},
		{"karaoke", func(s *burnin.Style) { s.WordHighlight = "karaoke" },
			[]string{"&H002626DC,&H00FFFFFF,", `{\kf30}Hello {\kf30}brave {\kf25}new {\kf25}world`}, 2, ""},
		{"highlight_bold", func(s *burnin.Style) { s.WordHighlight = "highlight_bold" },
			[]string{`{\1c&H2626DC&\b1}brave{\r}`}, 6, ""},
		{"border", func(s *burnin.Style) { s.StyleMode, s.WordHighlight = "plain", "border" },
			[]string{`{\3c&H2626DC&\bord4}new{\r}`, ",1,0,0,2,"}, 6, ""},
		{"glow", func(s *burnin.Style) { s.StyleMode, s.WordHighlight = "white_outline", "glow" },
			[]string{`{\3c&H2626DC&\bord6\blur5}world{\r}`, "&H00000000,&H00000000,&H00FFFFFF,&H00FFFFFF,0,0,0,0,100,100,0,0,1,2.5,"}, 6, ""},
		{"reveal", func(s *burnin.Style) { s.StyleMode, s.WordHighlight = "color_outline", "reveal" },
			[]string{"Hello {\\alpha&HFF&}brave new world\n", "Hello brave new world\n", "&H00FFFFFF,&H00FFFFFF,&H00000000,&H00000000,0,0,0,0,100,100,0,0,1,2.5,"}, 6, ""},
		{"white_bg", func(s *burnin.Style) { s.StyleMode, s.Color = "white_bg", "#112233" },
			[]string{"&H00332211,&H00332211,&H00FFFFFF,&H00FFFFFF,0,0,0,0,100,100,0,0,3,6,"}, 6, ""},
		{"light color_bg", func(s *burnin.Style) { s.Color = "#ffee00" }, // black text on yellow
			[]string{"&H00000000,&H00000000,&H0000EEFF,&H0000EEFF,"}, 6, ""},
		{"flags", func(s *burnin.Style) {
			s.Bold, s.Italic, s.Underline, s.Uppercase, s.FontSize = true, true, true, true, 40
		},
			[]string{",40,", ",-1,-1,-1,0,100,100", "HELLO BRAVE NEW"}, 6, ""},
		{"font", func(s *burnin.Style) { s.Font = "alfa" }, []string{"Style: Default,Roboto Slab,22,", ",-1,0,0,0,100"}, 6, "Roboto Slab"},
		{"top left", func(s *burnin.Style) { s.HAlign, s.VAlign = "left", "top" }, []string{",0,7,24,24,24,1\n"}, 6, ""},
		{"middle right", func(s *burnin.Style) { s.HAlign, s.VAlign = "right", "middle" }, []string{",0,6,24,24,24,1\n"}, 6, ""},
		{"bottom left", func(s *burnin.Style) { s.HAlign = "left" }, []string{",0,1,24,24,24,1\n"}, 6, ""},
		{"top center", func(s *burnin.Style) { s.VAlign = "top" }, []string{",0,8,24,24,24,1\n"}, 6, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.font != "" {
				need.Font(t, c.font)
			}
			s := burnin.DefaultStyle()
			c.change(&s)
			if errs := s.Validate(); errs != nil {
				t.Fatalf("%s: %v", c.name, errs)
			}
			a := assFor(t, s, 640, 480)
			if !strings.Contains(a, "PlayResX: 640\n") {
				t.Errorf("%s: 4:3 canvas:\n%s", c.name, a)
			}
			for _, w := range c.want {
				if !strings.Contains(a, w) {
					t.Errorf("%s: lacks %q:\n%s", c.name, w, a)
				}
			}
			if n := strings.Count(a, "Dialogue:"); n != c.events {
				t.Errorf("%s: %d events, want %d", c.name, n, c.events)
			}
		})
	}

	// Line breaks of long cues carry over.
	var long []speech.Word
	for i := range 12 {
		long = append(long, speech.Word{Text: fmt.Sprintf("word%d", i), Start: ms(300 * i), End: ms(300*i + 250)})
	}
	var b bytes.Buffer
	burnin.WriteASS(&b, speech.Cues(long, speech.CueOptions{}), burnin.DefaultStyle(), 0, 0)
	if !strings.Contains(b.String(), `\N`) {
		t.Errorf("no line break in a two-line cue:\n%s", b.String())
	}
}

// grey is the background of the test videos: neither black, white nor red.
const grey = "0x808080"

// makeVideo writes a seconds-long 320x240 H.264 video of a grey frame with
// a sine tone as AAC audio.
func makeVideo(t *testing.T, seconds float64) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "in.mp4")
	d := fmt.Sprint(seconds)
	cmd := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-y",
		"-f", "lavfi", "-i", "color=c="+grey+":s=320x240:r=25:d="+d,
		"-f", "lavfi", "-i", "sine=f=440:sample_rate=48000:d="+d,
		"-c:v", "libx264", "-preset", "ultrafast", "-crf", "18", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("making the test video: %v\n%s", err, msg)
	}
	return out
}

// frames returns the frames of a video at the times at as RGB bytes,
// from one ffmpeg run: the video once an input for each time, seeked to
// it (-ss before -i) as a run for each time would, and an output for
// each (a start of ffmpeg and its decoder costs more CPU than a frame).
func frames(t *testing.T, path string, at ...time.Duration) [][]byte {
	t.Helper()
	dir := t.TempDir()
	args := []string{"-nostdin", "-v", "error"}
	for _, a := range at {
		args = append(args, "-ss", fmt.Sprintf("%.3f", a.Seconds()), "-i", path)
	}
	for i := range at {
		args = append(args, "-map", fmt.Sprintf("%d:v", i), "-frames:v", "1", "-f", "rawvideo", "-pix_fmt", "rgb24",
			filepath.Join(dir, fmt.Sprintf("%d.rgb", i)))
	}
	if out, err := exec.Command("ffmpeg", args...).CombinedOutput(); err != nil {
		t.Fatalf("frames at %v of %s: %v %s", at, path, err, out)
	}
	f := make([][]byte, len(at))
	for i := range at {
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%d.rgb", i)))
		if err != nil || len(b) == 0 {
			t.Fatalf("frame at %v of %s: %v (%d bytes)", at[i], path, err, len(b))
		}
		f[i] = b
	}
	return f
}

// diff is the mean absolute difference of two frames, per channel value.
func diff(a, b []byte) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	var s float64
	for i := range a {
		s += math.Abs(float64(a[i]) - float64(b[i]))
	}
	return s / float64(len(a))
}

// count returns how many pixels of an RGB frame are within tol of c.
func count(f []byte, r, g, b, tol int) int {
	n := 0
	abs := func(x int) int { return max(x, -x) }
	for i := 0; i+2 < len(f); i += 3 {
		if abs(int(f[i])-r) <= tol && abs(int(f[i+1])-g) <= tol && abs(int(f[i+2])-b) <= tol {
			n++
		}
	}
	return n
}

// TestBurn is the acceptance test: a video with burned-in subtitles that
// ffprobe sees as a video of the same size with the audio kept, whose
// frames at cue times differ from the frames without burn-in while frames
// between cues do not, and whose highlight follows the words.
func TestBurn(t *testing.T) {
	need.Programs(t, "ffmpeg", "ffprobe")
	need.Font(t, burnin.FallbackFamily)
	in := makeVideo(t, 4)
	out := filepath.Join(t.TempDir(), "out.mp4")
	began := time.Now()
	res, err := burnin.Burn(context.Background(), out, in, testWords(), burnin.DefaultStyle(), burnin.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("burned %d cues in %v (font %s)", res.Cues, time.Since(began).Round(time.Millisecond), res.Font.Family)
	if res.Cues != 2 || res.Width != 320 || res.Height != 240 {
		t.Errorf("result %+v", res)
	}
	probe, err := exec.Command("ffprobe", "-v", "error", "-show_entries", "stream=codec_type,codec_name,width,height:format=duration", "-of", "json", out).Output()
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Streams []struct {
			CodecType string `json:"codec_type"`
			CodecName string `json:"codec_name"`
			Width     int    `json:"width"`
			Height    int    `json:"height"`
		} `json:"streams"`
		Format struct {
			Duration string `json:"duration"`
		} `json:"format"`
	}
	json.Unmarshal(probe, &p)
	if len(p.Streams) != 2 || p.Streams[0].CodecType != "video" || p.Streams[0].CodecName != "h264" || p.Streams[0].Width != 320 ||
		p.Streams[1].CodecType != "audio" || p.Streams[1].CodecName != "aac" {
		t.Errorf("ffprobe: %s", probe)
	}
	t.Logf("ffprobe: %s, %s %dx%d + %s, %s s", filepath.Base(out), p.Streams[0].CodecName, p.Streams[0].Width, p.Streams[0].Height, p.Streams[1].CodecName, p.Format.Duration)

	cases := []struct {
		at   time.Duration
		cue  bool
		what string
	}{
		{ms(200), false, "before the first cue"},
		{ms(600), true, "cue 1, word 1"},
		{ms(1200), true, "cue 1, word 3"},
		{ms(2200), false, "between the cues"},
		{ms(3200), true, "cue 2"},
		{ms(3700), false, "after the last cue"},
	}
	var at []time.Duration
	for _, c := range cases {
		at = append(at, c.at)
	}
	inFrames, outFrames := frames(t, in, at...), frames(t, out, at...)
	for i, c := range cases {
		d := diff(inFrames[i], outFrames[i])
		t.Logf("%v (%s): mean difference %.2f", c.at, c.what, d)
		if c.cue && d < 1 {
			t.Errorf("%v (%s): burned-in frame differs by %.2f only", c.at, c.what, d)
		}
		if !c.cue && d > 0.5 {
			t.Errorf("%v (%s): frame without a cue differs by %.2f", c.at, c.what, d)
		}
	}
	// The highlight moves with the words: two words of one cue look different.
	if d := diff(outFrames[1], outFrames[2]); d < 0.05 { // 600 and 1200 ms
		t.Errorf("highlight on word 1 and word 3 look the same (difference %.3f)", d)
	}
	// A black box around the text.
	if k := count(outFrames[1], 0, 0, 0, 40); k < 500 {
		t.Errorf("default style: %d black pixels", k)
	}
}

// renderJob is a style to render and the times of the frames wanted
// (multiples of 0.1 s).
type renderJob struct {
	style burnin.Style
	at    []time.Duration
}

// renderBatch renders the ASS script of each job's style over a grey
// 320x180 video at its times, without encoding, all in one ffmpeg run:
// each run starts ffmpeg and libass's fonts again (about 0.1 s of CPU),
// what rendering a frame costs many times over. It returns each job's
// frames, rgb24.
func renderBatch(t *testing.T, jobs []renderJob) [][][]byte {
	t.Helper()
	dir := t.TempDir()
	args := []string{"-nostdin", "-v", "error"}
	var graph []string
	var outs []string
	for i, j := range jobs {
		var b bytes.Buffer
		if _, err := burnin.WriteASS(&b, speech.Cues(testWords(), speech.CueOptions{}), j.style, 320, 180); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("s%d.ass", i)), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		var sel []string
		last := time.Duration(0)
		for _, a := range j.at {
			sel = append(sel, fmt.Sprintf("eq(n\\,%d)", a/(100*time.Millisecond)))
			last = max(last, a)
		}
		args = append(args, "-f", "lavfi", "-i", fmt.Sprintf("color=c=%s:s=320x180:r=10:d=%.1f", grey, last.Seconds()+0.2))
		graph = append(graph, fmt.Sprintf("[%d:v]ass=s%d.ass,select=%s[o%d]", i, i, strings.Join(sel, "+"), i))
		outs = append(outs, "-map", fmt.Sprintf("[o%d]", i), "-fps_mode", "passthrough", "-f", "rawvideo", "-pix_fmt", "rgb24", fmt.Sprintf("o%d.rgb", i))
	}
	args = append(args, "-filter_complex", strings.Join(graph, ";"))
	cmd := exec.Command("ffmpeg", append(args, outs...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("render: %v: %s", err, out)
	}
	const size = 320 * 180 * 3
	frames := make([][][]byte, len(jobs))
	for i, j := range jobs {
		raw, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("o%d.rgb", i)))
		if err != nil || len(raw) != len(j.at)*size {
			t.Fatalf("render of style %d: %v, %d bytes, want %d frames", i, err, len(raw), len(j.at))
		}
		for k := range j.at {
			frames[i] = append(frames[i], raw[k*size:(k+1)*size])
		}
	}
	return frames
}

// TestRenderStyles renders every style mode, word highlight, alignment,
// flag and font with libass and checks what shows: the colours each mode
// promises, that highlights move with the words, and that fonts and
// positions change the picture.
func TestRenderStyles(t *testing.T) {
	need.Programs(t, "ffmpeg", "ffprobe")
	need.Font(t, burnin.FallbackFamily)
	base := burnin.DefaultStyle()
	base.FontSize = 60 // 22 px on the 180-line test frame: colours survive chroma subsampling
	at1, at3 := ms(600), ms(1200)

	type colours struct{ r, g, b, min int }
	// -short renders six of the seventeen styles and three of the nine
	// alignments, the plain run all of them and the fonts; every frame in
	// one ffmpeg run (renderBatch).
	cases := []struct {
		name   string
		change func(*burnin.Style)
		want   []colours
		moves  bool // the picture changes between word 1 and word 3
	}{
		{"plain yellow", func(s *burnin.Style) { s.StyleMode, s.Color, s.WordHighlight = "plain", "#ffff00", "none" }, []colours{{255, 255, 0, 100}}, false},
		{"color_outline blue", func(s *burnin.Style) { s.StyleMode, s.Color, s.WordHighlight = "color_outline", "#0000ff", "none" }, []colours{{0, 0, 255, 50}, {255, 255, 255, 50}}, false},
		{"white_outline", func(s *burnin.Style) { s.StyleMode, s.Color, s.WordHighlight = "white_outline", "#000000", "none" }, []colours{{255, 255, 255, 100}, {0, 0, 0, 50}}, false},
		// Green is light: black text reads better on it than white.
		{"color_bg green", func(s *burnin.Style) { s.Color, s.WordHighlight = "#00aa00", "none" }, []colours{{0, 0xaa, 0, 1000}, {0, 0, 0, 50}}, false},
		{"white_bg", func(s *burnin.Style) { s.StyleMode, s.WordHighlight = "white_bg", "none" }, []colours{{255, 255, 255, 1000}, {0, 0, 0, 50}}, false},
		{"karaoke", func(s *burnin.Style) { s.WordHighlight = "karaoke" }, []colours{{0xdc, 0x26, 0x26, 20}, {255, 255, 255, 50}}, true},
		{"highlight", func(s *burnin.Style) {}, []colours{{0xdc, 0x26, 0x26, 20}}, true},
		{"highlight_bold", func(s *burnin.Style) { s.WordHighlight, s.HighlightColor = "highlight_bold", "#00ff00" }, []colours{{0, 255, 0, 20}}, true},
		{"border", func(s *burnin.Style) { s.StyleMode, s.WordHighlight = "plain", "border" }, []colours{{0xdc, 0x26, 0x26, 20}}, true},
		{"glow", func(s *burnin.Style) { s.StyleMode, s.WordHighlight = "color_outline", "glow" }, []colours{{0xdc, 0x26, 0x26, 5}}, true},
		{"reveal", func(s *burnin.Style) { s.StyleMode, s.WordHighlight = "white_outline", "reveal" }, nil, true},
		{"bold", func(s *burnin.Style) { s.Bold = true }, nil, true},
		{"italic", func(s *burnin.Style) { s.Italic = true }, nil, true},
		{"underline", func(s *burnin.Style) { s.Underline = true }, nil, true},
		{"uppercase", func(s *burnin.Style) { s.Uppercase = true }, nil, true},
		{"size 8", func(s *burnin.Style) { s.FontSize = 8 }, nil, true},
		{"size 200", func(s *burnin.Style) { s.FontSize = 200 }, nil, true},
	}
	if testing.Short() {
		cases = testsize.Pick(cases, 6)
	}
	type position struct{ h, v string }
	var positions []position
	for i, h := range burnin.HAligns {
		for j, v := range burnin.VAligns {
			if testing.Short() && i != j {
				continue // left/top, center/middle, right/bottom
			}
			positions = append(positions, position{h, v})
		}
	}
	// Fonts: the plain run's (one not installed renders in the fallback
	// face; its subtest below skips, or fails under CI).
	var fonts []string
	if !testing.Short() {
		fonts = burnin.FontNames
	}

	// Every frame the checks below read, rendered at once: the default
	// style at word 1 and between the cues, then each case at words 1
	// and 3, each position, each font.
	jobs := []renderJob{{base, []time.Duration{at1}}, {base, []time.Duration{ms(2200)}}}
	for _, c := range cases {
		s := base
		c.change(&s)
		if errs := s.Validate(); errs != nil {
			t.Fatalf("%s: %v", c.name, errs)
		}
		jobs = append(jobs, renderJob{s, []time.Duration{at1, at3}})
	}
	for _, p := range positions {
		s := base
		s.HAlign, s.VAlign, s.WordHighlight = p.h, p.v, "none"
		s.FontSize = 30
		jobs = append(jobs, renderJob{s, []time.Duration{at1}})
	}
	for _, name := range fonts {
		s := base
		s.Font, s.WordHighlight = name, "none"
		jobs = append(jobs, renderJob{s, []time.Duration{at1}})
	}
	rendered := renderBatch(t, jobs)
	next := func() [][]byte { f := rendered[0]; rendered = rendered[1:]; return f }

	ref, blank := next()[0], next()[0]
	if count(blank, 0x80, 0x80, 0x80, 3) != 320*180 {
		t.Fatal("frame between cues is not plain grey")
	}
	for _, c := range cases {
		fs := next()
		f1, f3 := fs[0], fs[1]
		if d := diff(f1, blank); d < 0.5 {
			t.Errorf("%s: nothing drawn (difference %.2f)", c.name, d)
		}
		for _, col := range c.want {
			if n := count(f1, col.r, col.g, col.b, 60); n < col.min {
				t.Errorf("%s: %d pixels of #%02x%02x%02x, want at least %d", c.name, n, col.r, col.g, col.b, col.min)
			}
		}
		if d := diff(f1, f3); c.moves != (d > 0.01) {
			t.Errorf("%s: word 1 and word 3 frames differ by %.3f (moving highlight expected: %v)", c.name, d, c.moves)
		}
	}

	// Positions: each alignment puts the text somewhere else.
	seen := map[string]string{}
	for _, p := range positions {
		h, v := p.h, p.v
		f := next()[0]
		// Where the box is: its bounding box of black pixels.
		x0, y0, x1, y1 := 320, 180, 0, 0
		for i := 0; i < 320*180; i++ {
			if f[3*i] < 20 && f[3*i+1] < 20 && f[3*i+2] < 20 {
				x, y := i%320, i/320
				x0, y0, x1, y1 = min(x0, x), min(y0, y), max(x1, x), max(y1, y)
			}
		}
		key := fmt.Sprint(x0, y0, x1, y1)
		if other, dup := seen[key]; dup {
			t.Errorf("%s/%s is drawn where %s is (%s)", h, v, other, key)
		}
		seen[key] = h + "/" + v
		cx, cy := (x0+x1)/2, (y0+y1)/2
		wantX := map[string]func(int) bool{"left": func(x int) bool { return x < 130 }, "center": func(x int) bool { return x > 130 && x < 190 }, "right": func(x int) bool { return x > 190 }}
		wantY := map[string]func(int) bool{"top": func(y int) bool { return y < 60 }, "middle": func(y int) bool { return y > 60 && y < 120 }, "bottom": func(y int) bool { return y > 120 }}
		if !wantX[h](cx) || !wantY[v](cy) {
			t.Errorf("%s/%s: box centred at %d,%d", h, v, cx, cy)
		}
	}

	// Fonts: each renders, and differs from the default face.
	if testing.Short() {
		return
	}
	byFont := map[string][]byte{}
	for _, name := range fonts {
		byFont[name] = next()[0]
	}
	for _, name := range burnin.FontNames {
		t.Run("font "+name, func(t *testing.T) {
			need.Font(t, burnin.Fonts[name].Family)
			f := byFont[name]
			res := burnin.ResolveFont(name)
			if res.Fallback {
				t.Fatalf("%s is installed, yet font %s falls back to %s", burnin.Fonts[name].Family, name, res.Family)
			}
			d := diff(f, ref)
			if name != "default" && d < 0.1 {
				t.Errorf("font %s (%s) looks like the default (difference %.3f)", name, res.Family, d)
			}
		})
	}
}

func TestBurnErrors(t *testing.T) {
	need.Programs(t, "ffmpeg", "ffprobe")
	dir := t.TempDir()
	s := burnin.DefaultStyle()
	s.WordHighlight = "glow"
	if _, err := burnin.Burn(context.Background(), filepath.Join(dir, "o.mp4"), "in.mp4", testWords(), s, burnin.Options{}); err == nil || !strings.Contains(err.Error(), "subtitle_word_highlight") {
		t.Errorf("invalid style: %v", err)
	}
	in := filepath.Join(dir, "same.mp4")
	if _, err := burnin.Burn(context.Background(), in, in, testWords(), burnin.DefaultStyle(), burnin.Options{}); err == nil || !strings.Contains(err.Error(), "overwrite") {
		t.Errorf("output over input: %v", err)
	}
	var b bytes.Buffer
	if _, err := burnin.WriteASS(&b, []speech.Cue{{Start: 0, End: time.Second}}, burnin.DefaultStyle(), 0, 0); err != nil || strings.Contains(b.String(), "Dialogue") {
		t.Errorf("cue without words: %v\n%s", err, b.String())
	}
	// Audio only: no video to burn into.
	wav := filepath.Join(dir, "a.wav")
	if msg, err := exec.Command("ffmpeg", "-v", "error", "-f", "lavfi", "-i", "sine=d=0.5", wav).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, msg)
	}
	if _, err := burnin.Burn(context.Background(), filepath.Join(dir, "o.mp4"), wav, testWords(), burnin.DefaultStyle(), burnin.Options{}); !errors.Is(err, burnin.ErrNoVideo) {
		t.Errorf("audio input: %v", err)
	}
	t.Setenv("PATH", dir)
	if _, err := burnin.Burn(context.Background(), filepath.Join(dir, "o.mp4"), wav, testWords(), burnin.DefaultStyle(), burnin.Options{}); !errors.Is(err, audio.ErrCodecUnavailable) {
		t.Errorf("no ffmpeg: %v", err)
	}
}

// TestBurnMaxBytes: a render that reaches Options.MaxBytes fails with
// audio.ErrTempLimit and leaves no file.
func TestBurnMaxBytes(t *testing.T) {
	need.Programs(t, "ffmpeg", "ffprobe")
	need.Font(t, burnin.FallbackFamily)
	out := filepath.Join(t.TempDir(), "big.mp4")
	if _, err := burnin.Burn(context.Background(), out, makeVideo(t, 2), testWords(), burnin.DefaultStyle(), burnin.Options{MaxBytes: 2 << 10}); !errors.Is(err, audio.ErrTempLimit) {
		t.Errorf("a video over 2 KB: %v, want audio.ErrTempLimit", err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the video over its limit was left: %v", err)
	}
}
