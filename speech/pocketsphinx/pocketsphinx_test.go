package pocketsphinx_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/procpool"
	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/internal/testsize"
	"github.com/audiopost/audiopost/speech"
	"github.com/audiopost/audiopost/speech/pocketsphinx"
)

func TestParseOutput(t *testing.T) {
	out := `hello world
<s> 0.000 0.210 0.999100
hello 0.220 0.410 0.697508
<sil> 0.420 0.500 0.931361
world(2) 0.510 0.830 0.062217
[NOISE] 0.840 0.900 0.5
</s> 0.910 1.000 1.000000
um 2.000 2.300 1.2
`
	got := pocketsphinx.ParseOutput([]byte(out))
	want := []speech.Word{
		{Text: "hello", Start: 220 * time.Millisecond, End: 420 * time.Millisecond, Confidence: 0.697508},
		{Text: "world", Start: 510 * time.Millisecond, End: 840 * time.Millisecond, Confidence: 0.062217},
		{Text: "um", Start: 2 * time.Second, End: 2310 * time.Millisecond, Confidence: 1},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v\nwant %v", got, want)
	}
}

func TestConfig(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		cfg   speech.Config
		field string
	}{
		{speech.Config{Type: "pocketsphinx"}, ""},
		{speech.Config{Type: "pocketsphinx", BaseURL: "http://x"}, "base_url"},
		{speech.Config{Type: "pocketsphinx", APIKey: "k"}, "api_key"},
		{speech.Config{Type: "pocketsphinx", Model: "relative/dir"}, "model"},
		{speech.Config{Type: "pocketsphinx", Model: dir}, "model"},
	} {
		errs := speech.ValidateConfig(tc.cfg)
		if tc.field == "" {
			if errs != nil {
				t.Errorf("%+v: %v", tc.cfg, errs)
			}
			continue
		}
		if _, ok := errs[tc.field]; !ok || len(errs) != 1 {
			t.Errorf("%+v: errors %v, want one on %s", tc.cfg, errs, tc.field)
		}
	}
	// A directory with a model of the expected shape is accepted.
	os.MkdirAll(filepath.Join(dir, "de", "x"), 0o755)
	os.WriteFile(filepath.Join(dir, "de", "mdef"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "de.lm.bin"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "de.dict"), nil, 0o644)
	if errs := speech.ValidateConfig(speech.Config{Type: "pocketsphinx", Model: dir}); errs != nil {
		t.Errorf("model dir: %v", errs)
	}
}

func tone(seconds float64) audio.Source {
	b := audio.NewBuffer(2, int(seconds*44100))
	return audio.NewBufferSource(b, 44100)
}

func TestNotInstalled(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := (&pocketsphinx.Recognizer{}).Recognize(context.Background(), tone(0.1), speech.Options{})
	if !errors.Is(err, speech.ErrUnavailable) || !strings.Contains(err.Error(), "pocketsphinx") {
		t.Fatalf("err = %v, want ErrUnavailable naming pocketsphinx", err)
	}
	t.Log(err)
	_, err = (&pocketsphinx.Recognizer{Program: filepath.Join(t.TempDir(), "missing")}).Recognize(context.Background(), tone(0.1), speech.Options{})
	if !errors.Is(err, speech.ErrUnavailable) {
		t.Fatalf("missing program: err = %v, want ErrUnavailable", err)
	}
}

func TestLanguage(t *testing.T) {
	_, err := (&pocketsphinx.Recognizer{}).Recognize(context.Background(), tone(0.1), speech.Options{Language: "de-DE"})
	if !errors.Is(err, speech.ErrLanguage) {
		t.Fatalf("err = %v, want ErrLanguage", err)
	}
}

// TestFailure: a failed run is one line for the user (PocketSphinx's
// first complaint, without its source location), and all it said is in
// the process pool's log.
func TestFailure(t *testing.T) {
	need.Program(t, pocketsphinx.Program)
	var log bytes.Buffer
	ctx := procpool.With(context.Background(), procpool.New(procpool.Config{Size: 1, Logger: slog.New(slog.NewTextHandler(&log, nil))}))
	r := &pocketsphinx.Recognizer{Args: []string{"-no_such_option", "1"}}
	_, err := r.Recognize(ctx, tone(0.5), speech.Options{})
	if !errors.Is(err, speech.ErrFailed) {
		t.Fatalf("err = %v, want ErrFailed", err)
	}
	t.Log(err)
	if msg := err.Error(); !strings.Contains(msg, "-no_such_option") || strings.Contains(msg, "cmd_ln.c") || strings.Contains(msg, " | ") {
		t.Errorf("message %q: want the unknown option, no source location, one line", msg)
	}
	if !strings.Contains(log.String(), "cmd_ln.c") {
		t.Errorf("the log lacks PocketSphinx's diagnostics:\n%s", log.String())
	}
}

func TestCancel(t *testing.T) {
	need.Program(t, pocketsphinx.Program)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := (&pocketsphinx.Recognizer{}).Recognize(ctx, tone(1), speech.Options{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestSilence(t *testing.T) {
	need.Program(t, pocketsphinx.Program)
	need.Path(t, pocketsphinx.DefaultModelDir)
	tr, err := (&pocketsphinx.Recognizer{}).Recognize(context.Background(), tone(2), speech.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Words) != 0 || tr.Duration != 2*time.Second || tr.Recognizer != "pocketsphinx" {
		t.Fatalf("silence: %+v", tr)
	}
}

// cueTime is a cue read back from a subtitle file.
type cueTime struct {
	start, end time.Duration
	text       string
}

// readCues parses the timing lines of SRT (sep ",") or WebVTT (sep ".").
func readCues(t *testing.T, data []byte, sep string) []cueTime {
	t.Helper()
	var out []cueTime
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		l := sc.Text()
		if !strings.Contains(l, " --> ") {
			if n := len(out); n > 0 && l != "" {
				out[n-1].text = strings.TrimSpace(out[n-1].text + " " + l)
			}
			continue
		}
		var c [2]time.Duration
		for i, s := range strings.SplitN(l, " --> ", 2) {
			var h, m, sec, ms int
			if _, err := fmt.Sscanf(s, "%d:%d:%d"+sep+"%d", &h, &m, &sec, &ms); err != nil {
				t.Fatalf("timing line %q: %v", l, err)
			}
			c[i] = time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(sec)*time.Second + time.Duration(ms)*time.Millisecond
		}
		out = append(out, cueTime{start: c[0], end: c[1]})
	}
	return out
}

// TestEspeakSubtitles is the acceptance test: espeak-ng speaks sentences of
// known text with pauses between them; PocketSphinx recognises them and
// every SRT and WebVTT cue must lie on the speech of its words (start and
// end within 0.5 s of the spoken phrase it belongs to). The word error
// rate is logged.
func TestEspeakSubtitles(t *testing.T) {
	need.Program(t, pocketsphinx.Program)
	need.Path(t, pocketsphinx.DefaultModelDir)
	const rate = 48000
	// The recognizer costs about 0.6 s of CPU per second of speech: the
	// plain run recognizes 3 of the 10 phrases (the first, a middle one and
	// the last: about 12 s of speech, two pauses to place cues across),
	// -short 2 (one pause between them), AUDIOPOST_LONG=1 all.
	sentences := testsize.Spread(testaudio.Sentences, 3)
	if testing.Short() {
		sentences = testaudio.Sentences[:2]
	}
	x, spans := testaudio.Phrases(t, rate, sentences, 1.5)
	src := audio.NewBufferSource(audio.Buffer{x}, rate)
	began := time.Now()
	tr, err := (&pocketsphinx.Recognizer{}).Recognize(context.Background(), src, speech.Options{Language: "en-US"})
	if err != nil {
		t.Fatal(err)
	}
	audioLen := float64(len(x)) / rate
	t.Logf("%.1f s of speech recognised in %v", audioLen, time.Since(began).Round(time.Millisecond))
	wer, edits, n := speech.WordErrorRate(strings.Join(sentences, " "), tr.Text())
	t.Logf("word error rate %.1f%% (%d edits / %d words)", 100*wer, edits, n)
	t.Logf("hypothesis: %s", tr.Text())
	if wer > 0.9 {
		t.Errorf("word error rate %.2f: recognition is not working", wer)
	}
	if got, want := tr.Duration, time.Duration(audioLen*float64(time.Second)); got < want-time.Millisecond || got > want+time.Millisecond {
		t.Errorf("duration %v, want %v", got, want)
	}

	var srt, vtt bytes.Buffer
	if err := speech.Write(&srt, "subtitle", "srt", tr, speech.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := speech.Write(&vtt, "subtitle", "webvtt", tr, speech.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	sec := func(f int64) time.Duration { return time.Duration(float64(f) / rate * float64(time.Second)) }
	const tol = 500 * time.Millisecond
	for _, f := range []struct {
		name string
		cues []cueTime
	}{{"srt", readCues(t, srt.Bytes(), ",")}, {"vtt", readCues(t, vtt.Bytes(), ".")}} {
		if len(f.cues) < len(sentences) {
			t.Errorf("%s: %d cues for %d phrases", f.name, len(f.cues), len(sentences))
		}
		// The cues of each phrase: the phrase each cue overlaps most.
		byPhrase := make([][]cueTime, len(spans))
		var worst time.Duration
		for i, c := range f.cues {
			best, bestOv := -1, time.Duration(0)
			for j, s := range spans {
				ov := min(c.end, sec(s.End)) - max(c.start, sec(s.Start))
				if ov > bestOv {
					best, bestOv = j, ov
				}
			}
			if best < 0 {
				t.Errorf("%s cue %d [%v, %v] is on no speech", f.name, i+1, c.start, c.end)
				continue
			}
			s := spans[best]
			early, late := sec(s.Start)-c.start, c.end-sec(s.End)
			worst = max(worst, early, late)
			if early > tol || late > tol {
				t.Errorf("%s cue %d [%v, %v] reaches out of phrase %d [%v, %v] by more than %v", f.name, i+1, c.start, c.end, best, sec(s.Start), sec(s.End), tol)
			}
			byPhrase[best] = append(byPhrase[best], c)
		}
		// Where the recognizer got a phrase's first (last) word right, the
		// cue edge is that word's edge, which is the phrase's edge.
		checked, edges := 0, 0
		var devs []time.Duration // every phrase edge, right word or not
		for j, cs := range byPhrase {
			if len(cs) == 0 {
				t.Errorf("%s: phrase %d (%q) has no cue", f.name, j, sentences[j])
				continue
			}
			ref := speech.NormalizeWords(sentences[j])
			first := speech.NormalizeWords(cs[0].text)
			last := speech.NormalizeWords(cs[len(cs)-1].text)
			edges += 2
			devs = append(devs, (cs[0].start - sec(spans[j].Start)).Abs(), (cs[len(cs)-1].end - sec(spans[j].End)).Abs())
			if first[0] == ref[0] {
				checked++
				d := (cs[0].start - sec(spans[j].Start)).Abs()
				worst = max(worst, d)
				if d > tol {
					t.Errorf("%s: phrase %d starts at %v, its first cue (%q) at %v", f.name, j, sec(spans[j].Start), cs[0].text, cs[0].start)
				}
			}
			if last[len(last)-1] == ref[len(ref)-1] {
				checked++
				d := (cs[len(cs)-1].end - sec(spans[j].End)).Abs()
				worst = max(worst, d)
				if d > tol {
					t.Errorf("%s: phrase %d ends at %v, its last cue (%q) at %v", f.name, j, sec(spans[j].End), cs[len(cs)-1].text, cs[len(cs)-1].end)
				}
			}
		}
		slices.Sort(devs)
		t.Logf("%s: %d cues on %d phrases; %d of %d phrase edges recognised right; largest distance of a cue edge from its speech %v; "+
			"all phrase edges (wrong words included): median %v, max %v",
			f.name, len(f.cues), len(spans), checked, edges, worst.Round(time.Millisecond),
			devs[len(devs)/2].Round(time.Millisecond), devs[len(devs)-1].Round(time.Millisecond))
	}
	t.Logf("SRT:\n%s", srt.String())
}
