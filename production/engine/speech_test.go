package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/audiopost/audiopost/dsp/classify"
	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/engine"
	"github.com/audiopost/audiopost/speech"
	"github.com/audiopost/audiopost/speech/pocketsphinx"
)

// cueRE reads the times of an SRT or WebVTT cue.
var cueRE = regexp.MustCompile(`(\d\d):(\d\d):(\d\d)[,.](\d\d\d) --> (\d\d):(\d\d):(\d\d)[,.](\d\d\d)`)

// cues returns every cue's [start, end] in seconds.
func cues(t *testing.T, path string) [][2]float64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out [][2]float64
	for _, m := range cueRE.FindAllStringSubmatch(string(data), -1) {
		var v [8]float64
		for i := range v {
			v[i], _ = strconv.ParseFloat(m[i+1], 64)
		}
		out = append(out, [2]float64{v[0]*3600 + v[1]*60 + v[2] + v[3]/1000, v[4]*3600 + v[5]*60 + v[6] + v[7]/1000})
	}
	return out
}

// Speech recognition through the engine, with PocketSphinx: the status
// passes through 14, the silence cutter shortens the 3 s pauses, a 2 s
// intro comes first, and the subtitles (SRT and WebVTT) follow the
// output: every cue lies within 0.5 s of the phrase it shows, at the
// phrase's place after the cuts and the intro. The speech data and the
// transcript hold the words.
func TestEngineSpeechRecognition(t *testing.T) {
	if testing.Short() {
		t.Skip("a numeric end-to-end check of the plain run")
	}
	need.Programs(t, "ffmpeg", "espeak-ng", pocketsphinx.Program)
	need.Path(t, pocketsphinx.DefaultModelDir)
	const rate = 48000
	sentences := testaudio.Sentences[:3]
	x, spans := testaudio.Phrases(t, rate, sentences, 3)
	dir, outDir := t.TempDir(), t.TempDir()
	in := filepath.Join(dir, "talk.wav")
	testaudio.WriteWAVBits(t, in, [][]float64{x}, rate, 24)
	intro := filepath.Join(dir, "intro.wav")
	testaudio.WriteWAV(t, intro, [][]float64{testaudio.Music(rate, 2, 1)}, rate)

	p := newProduction(t, `{"input_file": "https://example.org/talk.wav", "output_basename": "ep",
		"algorithms": {"cutter": true, "silence_cutter": true},
		"speech_recognition": {"uuid": "asr", "language": "en-US"},
		"multi_input_files": [{"type": "intro", "id": "jingle", "input_file": "https://example.org/intro.wav"}],
		"output_files": [{"format": "flac"}, {"format": "subtitle", "ending": "webvtt"}, {"format": "speech", "ending": "json"}, {"format": "transcript", "ending": "txt"}]}`)
	var statuses []production.Status
	progress := func(s production.Status, _ float64) {
		if len(statuses) == 0 || statuses[len(statuses)-1] != s {
			statuses = append(statuses, s)
		}
	}
	rec, err := pocketsphinx.New(speech.Config{Type: pocketsphinx.Type})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&engine.Engine{}).Run(context.Background(), p, engine.Inputs{Main: in, Multi: map[string]string{"jingle": intro}, Recognizer: rec},
		engine.DirWriter{Dir: outDir}, progress); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if p.WarningMessage != "" {
		t.Errorf("warning %q", p.WarningMessage)
	}
	if i := slices.Index(statuses, production.StatusSpeechRecognition); i < 0 || i+2 >= len(statuses) ||
		statuses[i+1] != production.StatusAudioProcessing || statuses[i+2] != production.StatusAudioEncoding {
		t.Errorf("statuses %v, want 14, then 4 and 5", statuses)
	}
	if len(p.Cuts) == 0 {
		t.Fatal("the silence cutter cut nothing")
	}
	// Where each phrase is in the output: through the cuts, after the
	// intro.
	var cutFrames []classify.Cut
	for _, c := range p.Cuts {
		cutFrames = append(cutFrames, classify.Cut{Start: int64(c.Start * rate), End: int64(c.Stop * rate)})
	}
	tm, err := classify.NewTimeMap(classify.Normalize(cutFrames, 0), rate)
	if err != nil {
		t.Fatal(err)
	}
	var phrases [][2]float64
	for _, s := range spans {
		phrases = append(phrases, [2]float64{2 + float64(tm.Frame(int64(s.Start)))/rate, 2 + float64(tm.Frame(int64(s.End)))/rate})
	}
	cs := cues(t, filepath.Join(outDir, "ep.webvtt"))
	if len(cs) == 0 {
		t.Error("no cues")
	}
	// A cue may show several phrases when the pause between them is
	// short; it starts and ends within 0.5 s of the phrases it shows.
	worst := 0.0
	for _, c := range cs {
		first, last := -1, -1
		for k, ph := range phrases {
			if math.Min(c[1], ph[1]) > math.Max(c[0], ph[0]) {
				if first < 0 {
					first = k
				}
				last = k
			}
		}
		if first < 0 {
			t.Errorf("cue %.2f-%.2f s lies on no phrase (phrases %v)", c[0], c[1], phrases)
			continue
		}
		off := math.Max(phrases[first][0]-c[0], c[1]-phrases[last][1])
		worst = math.Max(worst, off)
		if off > 0.5 {
			t.Errorf("cue %.2f-%.2f s sticks out of its phrases %.2f-%.2f s by %.2f s", c[0], c[1], phrases[first][0], phrases[last][1], off)
		}
	}
	t.Logf("%d cues; phrases in the output %v; the most a cue sticks out: %.3f s", len(cs), phrases, worst)

	words := speechWords(t, filepath.Join(outDir, "ep.json"))
	if len(words) < 5 || words[0].Start < 2 {
		t.Errorf("speech data: %d words, the first %+v (after the 2 s intro?)", len(words), words)
	}
	txt, err := os.ReadFile(filepath.Join(outDir, "ep.txt"))
	if err != nil {
		t.Fatal(err)
	}
	wer, _, _ := speech.WordErrorRate(strings.Join(sentences, " "), string(txt))
	t.Logf("transcript (word error rate %.0f%%): %s", 100*wer, strings.TrimSpace(string(txt)))
	if wer > 0.9 {
		t.Errorf("transcript word error rate %.2f", wer)
	}
}

// speechWord is a word of a speech data (JSON) output.
type speechWord struct {
	Speaker    string
	Word       string
	Start, End float64
}

// speechWords reads the words of a speech data (JSON) output.
func speechWords(t *testing.T, path string) []speechWord {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Segments []struct {
			Speaker string `json:"speaker"`
			Words   []struct {
				Word  string  `json:"word"`
				Start float64 `json:"start"`
				End   float64 `json:"end"`
			} `json:"words"`
		} `json:"segments"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("speech data: %v\n%s", err, raw)
	}
	var out []speechWord
	for _, sg := range doc.Segments {
		for _, w := range sg.Words {
			out = append(out, speechWord{Speaker: sg.Speaker, Word: w.Word, Start: w.Start, End: w.End})
		}
	}
	return out
}

// A multitrack production is recognised track by track: the transcript
// names each track's speaker.
func TestEngineSpeechMultitrack(t *testing.T) {
	if testing.Short() {
		t.Skip("a numeric end-to-end check of the plain run")
	}
	need.Programs(t, "ffmpeg", "espeak-ng", pocketsphinx.Program)
	need.Path(t, pocketsphinx.DefaultModelDir)
	const rate = 48000
	host, _ := testaudio.Phrases(t, rate, testaudio.Sentences[0:1], 1, testaudio.Voices[0])
	guest, _ := testaudio.Phrases(t, rate, testaudio.Sentences[1:2], 1, testaudio.Voices[1])
	dir, outDir := t.TempDir(), t.TempDir()
	paths := map[string]string{"host": filepath.Join(dir, "host.wav"), "guest": filepath.Join(dir, "guest.wav")}
	testaudio.WriteWAV(t, paths["host"], [][]float64{host}, rate)
	testaudio.WriteWAV(t, paths["guest"], [][]float64{guest}, rate)
	offset := float64(len(host)) / rate
	p := newProduction(t, fmt.Sprintf(`{"is_multitrack": true, "output_basename": "show",
		"speech_recognition": {"uuid": "asr"},
		"multi_input_files": [
			{"type": "multitrack", "id": "host", "input_file": "https://example.org/host.wav"},
			{"type": "multitrack", "id": "guest", "input_file": "https://example.org/guest.wav", "offset": %g}],
		"output_files": [{"format": "wav"}, {"format": "transcript", "ending": "txt"}, {"format": "speech", "ending": "json"}]}`, offset))
	rec, _ := pocketsphinx.New(speech.Config{Type: pocketsphinx.Type})
	if _, err := (&engine.Engine{}).Run(context.Background(), p, engine.Inputs{Multi: paths, Recognizer: rec}, engine.DirWriter{Dir: outDir}, nil); err != nil {
		t.Fatalf("Run: %v", err)
	}
	txt, err := os.ReadFile(filepath.Join(outDir, "show.txt"))
	if err != nil {
		t.Fatal(err)
	}
	host1, guest1 := strings.Index(string(txt), "host"), strings.Index(string(txt), "guest")
	if host1 < 0 || guest1 < host1 {
		t.Errorf("transcript does not give the host, then the guest:\n%s", txt)
	}
	speakers := map[string]int{}
	for _, w := range speechWords(t, filepath.Join(outDir, "show.json")) {
		speakers[w.Speaker]++
		if w.Speaker == "guest" && w.Start < offset-0.1 {
			t.Errorf("a guest word at %.2f s, before the guest's offset %.2f s", w.Start, offset)
		}
	}
	if speakers["host"] == 0 || speakers["guest"] == 0 {
		t.Errorf("words by speaker %v", speakers)
	}
}

// Subtitles burned into a video output of a video input: the frames at a
// cue differ from the input's, the frames where nobody speaks do not.
func TestEngineBurnIn(t *testing.T) {
	if testing.Short() {
		t.Skip("a numeric end-to-end check of the plain run")
	}
	need.Programs(t, "ffmpeg", "ffprobe", "espeak-ng", pocketsphinx.Program)
	need.Path(t, pocketsphinx.DefaultModelDir)
	const rate = 48000
	x, spans := testaudio.Phrases(t, rate, testaudio.Sentences[:1], 2)
	dir, outDir := t.TempDir(), t.TempDir()
	wav := filepath.Join(dir, "voice.wav")
	testaudio.WriteWAV(t, wav, [][]float64{x}, rate)
	video := filepath.Join(dir, "clip.mp4")
	secs := float64(len(x)) / rate
	run(t, "ffmpeg", "-v", "error", "-f", "lavfi", "-i", fmt.Sprintf("testsrc=size=320x240:rate=25:duration=%.3f", secs), "-i", wav,
		"-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", video)
	p := newProduction(t, `{"input_file": "https://example.org/clip.mp4", "output_basename": "clip",
		"speech_recognition": {"uuid": "asr"},
		"output_files": [{"format": "video", "subtitles": true, "subtitle_style_mode": "white_bg"}]}`)
	rec, _ := pocketsphinx.New(speech.Config{Type: pocketsphinx.Type})
	if _, err := (&engine.Engine{}).Run(context.Background(), p, engine.Inputs{Main: video, Recognizer: rec}, engine.DirWriter{Dir: outDir}, nil); err != nil {
		t.Fatalf("Run: %v", err)
	}
	out := filepath.Join(outDir, p.OutputFilename(0))
	frame := func(path string, at float64) []byte {
		b, err := exec.Command("ffmpeg", "-v", "error", "-ss", fmt.Sprintf("%.3f", at), "-i", path, "-frames:v", "1",
			"-f", "rawvideo", "-pix_fmt", "gray", "-").Output()
		if err != nil || len(b) != 320*240 {
			t.Fatalf("frame of %s at %.2f s: %d bytes, %v", path, at, len(b), err)
		}
		return b
	}
	diff := func(at float64) float64 {
		a, b := frame(video, at), frame(out, at)
		var s float64
		for i := range a {
			s += math.Abs(float64(a[i]) - float64(b[i]))
		}
		return s / float64(len(a))
	}
	mid := (float64(spans[0].Start+spans[0].End) / 2) / rate
	quiet := float64(spans[0].Start)/rate/2 - 0.2
	during, before := diff(mid), diff(quiet)
	t.Logf("mean difference from the input's frame: %.2f during the phrase, %.2f before it", during, before)
	if during < 1 || during < 3*before {
		t.Errorf("the subtitles are not burned in: frame difference %.2f at the phrase, %.2f before", during, before)
	}
}
