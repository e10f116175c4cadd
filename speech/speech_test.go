package speech_test

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp/classify"
	"github.com/audiopost/audiopost/speech"
)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// words makes words from "text@start-end" items (milliseconds).
func words(items ...string) []speech.Word {
	var out []speech.Word
	for _, it := range items {
		var w speech.Word
		text, times, _ := strings.Cut(it, "@")
		a, b, _ := strings.Cut(times, "-")
		w.Text = text
		w.Start, w.End = ms(atoi(a)), ms(atoi(b))
		w.Confidence = 0.9
		out = append(out, w)
	}
	return out
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

func TestCuesBreaks(t *testing.T) {
	ws := words("Hello@0-300", "world.@350-700", // sentence end, but short: stays
		"This@800-1000", "is@1050-1200", "a@1250-1300", "test@1350-1700", // continues
		"After@3000-3300", "a@3350-3400", "pause.@3450-3800") // gap of 1.3 s: new cue
	cues := speech.Cues(ws, speech.CueOptions{})
	if len(cues) != 2 {
		t.Fatalf("%d cues: %+v", len(cues), cues)
	}
	if got := cues[0].Text(); got != "Hello world. This is a test" {
		t.Errorf("cue 0 %q", got)
	}
	if cues[0].Start != 0 || cues[0].End != ms(1700) || cues[1].Start != ms(3000) || cues[1].End != ms(3800) {
		t.Errorf("times %v-%v, %v-%v", cues[0].Start, cues[0].End, cues[1].Start, cues[1].End)
	}

	// Long text: two balanced lines of at most 42 characters, then a new cue.
	var long []speech.Word
	for i := range 30 {
		long = append(long, speech.Word{Text: "word" + string(rune('a'+i%26)), Start: ms(300 * i), End: ms(300*i + 250)})
	}
	cues = speech.Cues(long, speech.CueOptions{})
	for i, c := range cues {
		if len(c.Lines) > 2 {
			t.Errorf("cue %d has %d lines", i, len(c.Lines))
		}
		for _, l := range c.Lines {
			if len([]rune(l)) > 42 {
				t.Errorf("cue %d line %q longer than 42", i, l)
			}
		}
		if c.End-c.Start > 7*time.Second {
			t.Errorf("cue %d lasts %v", i, c.End-c.Start)
		}
	}
	if len(cues) < 3 || len(cues[0].Lines) != 2 {
		t.Errorf("long text: %d cues, first %q", len(cues), cues[0].Lines)
	}
	if a, b := len(cues[0].Lines[0]), len(cues[0].Lines[1]); math.Abs(float64(a-b)) > 6 {
		t.Errorf("unbalanced lines %q", cues[0].Lines)
	}

	// A short lone word is shown for the minimum duration, but not into
	// the next cue.
	cues = speech.Cues(words("Yes@0-200", "No@1300-1500"), speech.CueOptions{})
	if cues[0].End != ms(700) || cues[1].End != ms(2000) {
		t.Errorf("min duration: %v, %v", cues[0].End, cues[1].End)
	}
	cues = speech.Cues(words("Yes@0-200", "No@1300-1500"), speech.CueOptions{MaxGap: ms(1000), MinDuration: 2 * time.Second})
	if cues[0].End != ms(1300) {
		t.Errorf("min duration capped at next cue: %v", cues[0].End)
	}

	// A new speaker starts a new cue.
	ws = words("Hi@0-200", "there@250-400")
	ws[0].Speaker, ws[1].Speaker = "A", "B"
	if cues := speech.Cues(ws, speech.CueOptions{}); len(cues) != 2 || cues[1].Speaker != "B" {
		t.Errorf("speaker change: %+v", cues)
	}
}

func transcript() *speech.Transcript {
	ws := words("Hello@1000-1400", "<world>@1450-2000", "&more.@2100-2500", "Second@6000-6400", "paragraph@6450-7000")
	ws[3].Confidence = speech.NoConfidence
	return &speech.Transcript{Language: "en", Recognizer: "test", Duration: 8 * time.Second, Words: ws}
}

func TestWriteSRTVTT(t *testing.T) {
	var b bytes.Buffer
	if err := speech.Write(&b, "subtitle", "srt", transcript(), speech.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	want := "1\n00:00:01,000 --> 00:00:02,500\nHello <world> &more.\n\n2\n00:00:06,000 --> 00:00:07,000\nSecond paragraph\n\n"
	if b.String() != want {
		t.Errorf("srt:\n%q\nwant\n%q", b.String(), want)
	}
	b.Reset()
	if err := speech.Write(&b, "subtitle", "webvtt", transcript(), speech.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	want = "WEBVTT\n\n00:00:01.000 --> 00:00:02.500\nHello &lt;world&gt; &amp;more.\n\n00:00:06.000 --> 00:00:07.000\nSecond paragraph\n\n"
	if b.String() != want {
		t.Errorf("vtt:\n%q\nwant\n%q", b.String(), want)
	}
	if got := speech.Timestamp(ms(3723004), ","); got != "01:02:03,004" {
		t.Errorf("timestamp %s", got)
	}
}

func TestWriteSpeakers(t *testing.T) {
	host := &speech.Transcript{Language: "en", Recognizer: "x", Duration: 5 * time.Second, Words: words("Welcome@0-500", "back.@550-900", "Thanks.@3000-3500")}
	guest := &speech.Transcript{Duration: 6 * time.Second, Words: words("Glad@1500-1800", "to@1850-1900", "be@1950-2100", "here.@2150-2500")}
	m := speech.Merge(speech.Track{Speaker: "Host", Transcript: host}, speech.Track{Speaker: "Guest", Transcript: guest}, speech.Track{Speaker: "Empty"})
	if m.Duration != 6*time.Second || m.Recognizer != "x" || len(m.Words) != 7 {
		t.Fatalf("merge: %+v", m)
	}
	var b bytes.Buffer
	speech.Write(&b, "transcript", "txt", m, speech.WriteOptions{Timestamps: true})
	want := "[00:00:00] Host: Welcome back.\n\n[00:00:01] Guest: Glad to be here.\n\n[00:00:03] Host: Thanks.\n"
	if b.String() != want {
		t.Errorf("txt:\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	speech.Write(&b, "subtitle", "srt", m, speech.WriteOptions{})
	if !strings.Contains(b.String(), "\nGuest: Glad to be here.\n") {
		t.Errorf("srt speakers:\n%s", b.String())
	}
	b.Reset()
	speech.Write(&b, "subtitle", "vtt", m, speech.WriteOptions{})
	if !strings.Contains(b.String(), "\n<v Guest>Glad to be here.\n") {
		t.Errorf("vtt speakers:\n%s", b.String())
	}
	b.Reset()
	speech.Write(&b, "transcript", "html", m, speech.WriteOptions{Title: "Episode <1>"})
	for _, s := range []string{"<title>Episode &lt;1&gt;</title>", `<strong class="speaker">Guest:</strong>`, `<span data-start="1.500" data-end="1.800">Glad</span>`, `<span class="time">00:00:03</span>`} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("html lacks %s:\n%s", s, b.String())
		}
	}
	// One speaker: no names.
	b.Reset()
	speech.Write(&b, "transcript", "txt", host, speech.WriteOptions{})
	if b.String() != "Welcome back.\n\nThanks.\n" {
		t.Errorf("single speaker txt %q", b.String())
	}
}

func TestSpeechJSONXML(t *testing.T) {
	tr := transcript()
	var b bytes.Buffer
	if err := speech.Write(&b, "speech", "json", tr, speech.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`"language": "en"`, `"duration": 8`, `"word": "<world>"`, `"start": 1.45`, `"confidence": 0.9`, `"confidence": null`, `"text": "Hello <world> &more. Second paragraph"`} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("json lacks %s:\n%s", s, b.String())
		}
	}
	back, err := speech.ReadJSON(&b)
	if err != nil {
		t.Fatal(err)
	}
	if back.Text() != tr.Text() || back.Duration != tr.Duration || len(back.Words) != len(tr.Words) {
		t.Fatalf("round trip: %+v", back)
	}
	for i := range tr.Words {
		if back.Words[i] != tr.Words[i] {
			t.Errorf("word %d: %+v, want %+v", i, back.Words[i], tr.Words[i])
		}
	}

	b.Reset()
	if err := speech.Write(&b, "speech", "xml", tr, speech.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Language string `xml:"language,attr"`
		Segments []struct {
			Start string `xml:"start,attr"`
			Words []struct {
				Start      string `xml:"start,attr"`
				Confidence string `xml:"confidence,attr"`
				Text       string `xml:",chardata"`
			} `xml:"word"`
		} `xml:"segment"`
	}
	if err := xml.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("xml: %v\n%s", err, b.String())
	}
	if doc.Language != "en" || len(doc.Segments) != 2 || doc.Segments[0].Words[1].Text != "<world>" ||
		doc.Segments[0].Words[1].Start != "1.450" || doc.Segments[1].Words[0].Confidence != "" || doc.Segments[0].Words[0].Confidence != "0.900" {
		t.Errorf("xml content:\n%s", b.String())
	}

	if err := speech.Write(&b, "subtitle", "json", tr, speech.WriteOptions{}); !errors.Is(err, speech.ErrNoWriter) {
		t.Errorf("unknown ending: %v", err)
	}
}

func TestFillers(t *testing.T) {
	for w, want := range map[string]bool{"um": true, "Umm,": true, "uh": true, "UHH": true, "er": true, "erm": true, "hmm": true, "Hmmm...": true, "mm": true, "uhm": true,
		"umbrella": false, "her": false, "the": false, "ah": false, "": false, "mhm": false} {
		if speech.IsFiller(w) != want {
			t.Errorf("IsFiller(%q) = %v", w, !want)
		}
	}
	ws := words("So@0-200", "um@300-600", "uh@600-900", "well@1000-1300", "hmm@2000-2400", "yes@2450-2700")
	ws[4].Confidence = 0.2
	cuts := speech.FillerCuts(ws, 1000, speech.FillerOptions{})
	want := classify.Cuts{{Start: 300, End: 900, Reason: classify.CutFiller}, {Start: 2000, End: 2400, Reason: classify.CutFiller}}
	if len(cuts) != 2 || cuts[0] != want[0] || cuts[1] != want[1] {
		t.Errorf("cuts %v, want %v", cuts, want)
	}
	if err := cuts.Validate(); err != nil {
		t.Error(err)
	}
	// Padding stops at the neighbouring words; low confidence is skipped.
	cuts = speech.FillerCuts(ws, 1000, speech.FillerOptions{Pad: ms(150), MinConfidence: 0.5})
	if len(cuts) != 1 || cuts[0].Start != 200 || cuts[0].End != 1000 {
		t.Errorf("padded cuts %v", cuts)
	}
}

func TestWordErrorRate(t *testing.T) {
	rate, edits, n := speech.WordErrorRate("The quick brown fox.", "the quick fox jumps")
	if edits != 2 || n != 4 || rate != 0.5 {
		t.Errorf("wer %v %d %d", rate, edits, n)
	}
	if r, _, _ := speech.WordErrorRate("", ""); r != 0 {
		t.Error(r)
	}
}

func TestMono16k(t *testing.T) {
	const rate = 48000
	b := audio.NewBuffer(2, rate) // 1 s: left a 440 Hz sine, right silent
	for i := range b[0] {
		b[0][i] = 0.5 * math.Sin(2*math.Pi*440*float64(i)/rate)
	}
	pcm, err := speech.Mono16k(context.Background(), audio.NewBufferSource(b, rate))
	if err != nil {
		t.Fatal(err)
	}
	if len(pcm) != speech.SampleRate || speech.Duration(len(pcm)) != time.Second {
		t.Fatalf("%d samples", len(pcm))
	}
	// Average of the channels: amplitude 0.25, phase kept.
	var maxErr float64
	for i := 200; i < len(pcm)-200; i++ {
		want := 0.25 * math.Sin(2*math.Pi*440*float64(i)/speech.SampleRate)
		maxErr = max(maxErr, math.Abs(float64(pcm[i])/32768-want))
	}
	if maxErr > 1e-3 {
		t.Errorf("max error %g", maxErr)
	}
	var w bytes.Buffer
	if err := speech.WriteWAV(&w, pcm[:10]); err != nil || w.Len() != 64 || !bytes.HasPrefix(w.Bytes(), []byte("RIFF")) {
		t.Errorf("wav: %v, %d bytes", err, w.Len())
	}
}

func TestRegistry(t *testing.T) {
	errs := speech.ValidateConfig(speech.Config{Type: "nope"})
	if errs["type"] == "" {
		t.Errorf("unknown type: %v", errs)
	}
	_, err := speech.New(speech.Config{})
	var ce *speech.ConfigError
	if !errors.As(err, &ce) || ce.Field != "type" || !errors.Is(err, speech.ErrConfig) {
		t.Errorf("empty type: %v", err)
	}
	if speech.BaseLanguage("en_GB") != "en" || speech.BaseLanguage("") != "" {
		t.Error("BaseLanguage")
	}
}

func TestApplyCuts(t *testing.T) {
	tr := &speech.Transcript{Duration: 5 * time.Second, Words: words("So@0-200", "um@300-600", "well@1000-1300", "yes@2450-2700")}
	cuts := speech.FillerCuts(tr.Words, 1000, speech.FillerOptions{})
	cuts = append(cuts, classify.Cut{Start: 1500, End: 2000, Reason: classify.CutSilence})
	out, err := speech.ApplyCuts(tr, cuts, 1000)
	if err != nil {
		t.Fatal(err)
	}
	want := words("So@0-200", "well@700-1000", "yes@1650-1900")
	if len(out.Words) != 3 || out.Duration != 4200*time.Millisecond {
		t.Fatalf("%+v", out)
	}
	for i := range want {
		if out.Words[i].Text != want[i].Text || out.Words[i].Start != want[i].Start || out.Words[i].End != want[i].End {
			t.Errorf("word %d %+v, want %+v", i, out.Words[i], want[i])
		}
	}
	if len(tr.Words) != 4 {
		t.Error("input changed")
	}
	if _, err := speech.ApplyCuts(tr, classify.Cuts{{Start: 5, End: 1}}, 1000); err == nil {
		t.Error("invalid cuts accepted")
	}
}

func TestParseConfig(t *testing.T) {
	cfg, err := speech.ParseConfig("whisper", []byte(`{"base_url":"http://h:8000/v1","model":"base.en","api_key":"k","other":1,"type":"ignored"}`))
	if err != nil || cfg != (speech.Config{Type: "whisper", BaseURL: "http://h:8000/v1", Model: "base.en", APIKey: "k"}) {
		t.Errorf("%+v %v", cfg, err)
	}
	if cfg, err := speech.ParseConfig("pocketsphinx", nil); err != nil || cfg.Type != "pocketsphinx" {
		t.Errorf("empty: %+v %v", cfg, err)
	}
	if _, err := speech.ParseConfig("whisper", []byte(`{"model":1}`)); !errors.Is(err, speech.ErrConfig) {
		t.Errorf("bad json: %v", err)
	}
}
