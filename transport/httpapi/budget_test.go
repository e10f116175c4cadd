package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/testsize"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/runner"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/transport/httpapi"
)

// The work budget of issue 31 through the API: every hostile request of
// the issue ends in a form error, a warning or Done.

// chapterList returns n chapters every step seconds from 0.
func chapterList(n int, step float64) []map[string]any {
	out := make([]map[string]any, n)
	for i := range out {
		out[i] = map[string]any{"start": float64(i) * step, "title": fmt.Sprintf("Chapter %d", i+1)}
	}
	return out
}

// wantForm asserts a 400 with a form error at path containing msg.
func (e *env) wantForm(r *resp, path, msg string) {
	e.t.Helper()
	e.wantErr(r, 400, httpapi.CodeValidation)
	if got, ok := r.FormErrors[path]; !ok || !strings.Contains(got, msg) {
		e.t.Fatalf("form_errors[%q] = %q, want it to contain %q; all: %v", path, got, msg, r.FormErrors)
	}
}

// TestBudgetTenThousandChapters: the request of issue 31 that took the
// host down (10,000 chapters 0.5 s apart, a split Opus output) is a form
// error, whether or not the input is known.
// formErrorsOnly skips a test of the budget's form errors and warnings
// under the race detector: one goroutine's requests, whose answers the
// plain run checks (together 4.2 s of the race run's CPU); the other
// tests create, upload and start productions through the same handlers
// under the detector.
func formErrorsOnly(t *testing.T) {
	t.Helper()
	testsize.SkipRace(t, "form errors and warnings, checked by the plain run; the race run is for goroutines")
}

func TestBudgetTenThousandChapters(t *testing.T) {
	formErrorsOnly(t)
	e := newEnv(t)
	body := map[string]any{"chapters": chapterList(10000, 0.5), "output_files": []map[string]any{{"format": "opus", "split_on_chapters": true}}}
	e.wantForm(e.req("POST", "/api/productions.json", e.keyA, body), "chapters", "has 10000 entries; at most 1000 are allowed")
	id := e.create(e.keyA, map[string]any{"output_files": []map[string]any{{"format": "opus", "split_on_chapters": true}}})
	e.must(e.upload("/api/production/"+id+"/upload.json", e.keyA, part{field: "input_file", name: "in.wav", data: makeWAV(t, 1, 16000, 10, audio.Tags{})}))
	e.wantForm(e.req("POST", "/api/production/"+id+"/chapters.json", e.keyA, chapterList(10000, 0.5)), "chapters", "at most 1000")
	// A thousand, 0.5 s apart: those past the 10 s are dropped, and the
	// twenty left are more parts than 10 s allow.
	e.wantForm(e.req("POST", "/api/production/"+id+"/chapters.json", e.keyA, chapterList(1000, 0.5)),
		"output_files.0.split_on_chapters", "would split into 20 parts, one per chapter; 10 s of input allow at most 11")
	p := e.must(e.req("GET", "/api/production/"+id+".json", e.keyA, nil)).obj(t)
	if n := len(p["chapters"].([]any)); n != 0 || p["warning_message"] != "" {
		t.Errorf("a refused update changed the production: %d chapters, warning %q", n, p["warning_message"])
	}
}

// TestBudgetDropsChaptersPastTheInput: chapters past the input's end are
// dropped with a warning naming them, when the chapters come after the
// input and when the input comes after them; the rest is processed.
func TestBudgetDropsChaptersPastTheInput(t *testing.T) {
	formErrorsOnly(t)
	e := newEnv(t)
	wav := makeWAV(t, 1, 16000, 10, audio.Tags{})
	const warning = `990 chapters at or after the end of the input (00:00:10.000) dropped: 00:00:10.000 "Chapter 11", ` +
		`00:00:11.000 "Chapter 12", 00:00:12.000 "Chapter 13", 00:00:13.000 "Chapter 14", 00:00:14.000 "Chapter 15" and 985 more`
	check := func(p map[string]any) {
		t.Helper()
		if n := len(p["chapters"].([]any)); n != 10 {
			t.Errorf("%d chapters kept, want 10", n)
		}
		if p["warning_message"] != warning {
			t.Errorf("warning_message %q\nwant            %q", p["warning_message"], warning)
		}
	}
	outputs := []map[string]any{{"format": "wav", "split_on_chapters": true}}
	// Chapters after the input.
	id := e.create(e.keyA, map[string]any{"output_files": outputs})
	e.must(e.upload("/api/production/"+id+"/upload.json", e.keyA, part{field: "input_file", name: "in.wav", data: wav}))
	check(e.must(e.req("POST", "/api/production/"+id+"/chapters.json", e.keyA, chapterList(1000, 1))).obj(t))
	// The input after the chapters: the upload drops them.
	id2 := e.create(e.keyA, map[string]any{"output_files": outputs, "chapters": chapterList(1000, 1)})
	check(e.must(e.upload("/api/production/"+id2+"/upload.json", e.keyA, part{field: "input_file", name: "in.wav", data: wav})).obj(t))
	// The input after the chapters, with more parts than it allows: the
	// upload is refused and nothing of it kept.
	id3 := e.create(e.keyA, map[string]any{"output_files": outputs, "chapters": chapterList(1000, 0.5)})
	e.wantForm(e.upload("/api/production/"+id3+"/upload.json", e.keyA, part{field: "input_file", name: "in.wav", data: wav}),
		"output_files.0.split_on_chapters", "at most 11")
	p := e.must(e.req("GET", "/api/production/"+id3+".json", e.keyA, nil)).obj(t)
	if p["input_file"] != "" || p["status"] != float64(production.StatusIncomplete) {
		t.Errorf("refused upload left input_file %q, status %v", p["input_file"], p["status"])
	}

	if testing.Short() {
		return
	}
	need.Program(t, "ffmpeg")
	e.must(e.req("POST", "/api/production/"+id+"/start.json", e.keyA, nil))
	p = e.runOne(id)
	if p["status"] != float64(production.StatusDone) {
		t.Fatalf("status %v: %v", p["status"], p["error_message"])
	}
	if n := len(p["output_files"].([]any)); n != 10 {
		t.Errorf("%d files listed, want the 10 parts", n)
	}
}

// runOne processes the waiting production id with a real runner and
// returns it as the API shows it then.
func (e *env) runOne(id string) map[string]any {
	e.t.Helper()
	r, err := runner.New(runner.Config{Store: e.store, Blobs: e.blobs, NoCharge: true, BaseURL: e.base, TempDir: e.t.TempDir()})
	if err != nil {
		e.t.Fatal(err)
	}
	if ran, err := r.RunOnce(context.Background(), "w1"); !ran || err != nil {
		e.t.Fatalf("RunOnce: %v %v", ran, err)
	}
	return e.must(e.req("GET", "/api/production/"+id+".json", e.keyA, nil)).obj(e.t)
}

// TestBudgetChapterFarPastTheEnd: a chapter at 999999 s with a split AAC
// output is dropped with a warning when saved, and the production is Done
// (it ended in Error in the worker, with "monitoring the encoded aac:
// malformed data").
func TestBudgetChapterFarPastTheEnd(t *testing.T) {
	formErrorsOnly(t)
	e := newEnv(t)
	id := e.create(e.keyA, map[string]any{"output_basename": "show",
		"chapters":     []map[string]any{{"start": 0, "title": "One"}, {"start": 2, "title": "Two"}, {"start": 999999, "title": "Far"}},
		"output_files": []map[string]any{{"format": "aac", "split_on_chapters": true}}})
	p := e.must(e.upload("/api/production/"+id+"/upload.json", e.keyA, part{field: "input_file", name: "in.wav", data: makeWAV(t, 2, 44100, 4, audio.Tags{})})).obj(t)
	if want := `1 chapter at or after the end of the input (00:00:04.000) dropped: 277:46:39.000 "Far"`; p["warning_message"] != want {
		t.Errorf("warning_message %q, want %q", p["warning_message"], want)
	}
	if testing.Short() {
		return
	}
	need.Program(t, "ffmpeg")
	e.must(e.req("POST", "/api/production/"+id+"/start.json", e.keyA, nil))
	p = e.runOne(id)
	if p["status"] != float64(production.StatusDone) {
		t.Fatalf("status %v: %v", p["status"], p["error_message"])
	}
	var names []string
	for _, o := range p["output_files"].([]any) {
		names = append(names, o.(map[string]any)["filename"].(string))
	}
	if !slices.Equal(names, []string{"show-01.m4a", "show-02.m4a"}) {
		t.Errorf("files %q", names)
	}
}

// TestBudgetOffsets: a multitrack offset that would overflow a duration,
// or turn 10 s of input into hours of work, is a form error.
func TestBudgetOffsets(t *testing.T) {
	formErrorsOnly(t)
	e := newEnv(t)
	track := func(id string, offset float64) map[string]any {
		return map[string]any{"type": "multitrack", "id": id, "offset": offset}
	}
	for _, off := range []float64{1e12, 1e6, -1} {
		body := map[string]any{"is_multitrack": true, "multi_input_files": []any{track("a", 0), track("b", off)}}
		e.wantForm(e.req("POST", "/api/productions.json", e.keyA, body), "multi_input_files.1.offset", "from 0 to 86400")
	}
	// 700 s after two 10 s tracks: more than the 600 s of silence allowed,
	// known once the tracks are uploaded.
	id := e.create(e.keyA, map[string]any{"is_multitrack": true, "output_files": []map[string]any{{"format": "wav"}},
		"multi_input_files": []any{track("a", 0), track("b", 700)}})
	wav := makeWAV(t, 1, 16000, 10, audio.Tags{})
	e.wantForm(e.upload("/api/production/"+id+"/upload.json", e.keyA, part{field: "a", name: "a.wav", data: wav}, part{field: "b", name: "b.wav", data: wav}),
		"multi_input_files.1.offset", "places the track's end at 11 min 50 s; the inputs together are 20 s long, and offsets may add at most 10 min 0 s of silence")
	// Configured: an hour of silence allowed.
	e2 := newEnv(t, func(c *httpapi.Config) { c.Limits = production.Limits{Silence: 3600} })
	id = e2.create(e2.keyA, map[string]any{"is_multitrack": true, "output_files": []map[string]any{{"format": "wav"}},
		"multi_input_files": []any{track("a", 0), track("b", 700)}})
	e2.must(e2.upload("/api/production/"+id+"/upload.json", e2.keyA, part{field: "a", name: "a.wav", data: wav}, part{field: "b", name: "b.wav", data: wav}))
}

// TestMultitrackReportsEveryBadTrack: every bad track of a request is in
// form_errors, those that fail when applied, validated, and fetched or
// uploaded alike.
func TestMultitrackReportsEveryBadTrack(t *testing.T) {
	formErrorsOnly(t)
	e := newEnv(t)
	body := map[string]any{"is_multitrack": true, "multi_input_files": []any{
		map[string]any{"type": "multitrack", "id": "a", "offset": -1},
		map[string]any{"type": "multitrack", "id": "b", "algorithms": map[string]any{"gain": 7}},
		map[string]any{"type": "multitrack", "id": "c", "input_file": "c.wav"},
		map[string]any{"type": "multitrack", "id": "d", "algorithms": map[string]any{"pan": "somewhere"}},
		map[string]any{"type": "multitrack", "id": "ok"},
	}}
	r := e.wantErr(e.req("POST", "/api/productions.json", e.keyA, body), 400, httpapi.CodeValidation)
	want := []string{"multi_input_files.0.offset", "multi_input_files.1.algorithms.gain", "multi_input_files.2.input_file", "multi_input_files.3.algorithms.pan"}
	for _, path := range want {
		if r.FormErrors[path] == "" {
			t.Errorf("no form error at %s; got %v", path, r.FormErrors)
		}
	}
	if len(r.FormErrors) != len(want) {
		t.Errorf("form errors %v, want exactly %q", r.FormErrors, want)
	}
	// Two tracks uploaded that are no audio: both named.
	id := e.create(e.keyA, map[string]any{"is_multitrack": true, "multi_input_files": []any{
		map[string]any{"type": "multitrack", "id": "a"}, map[string]any{"type": "multitrack", "id": "b"}, map[string]any{"type": "multitrack", "id": "c"}}})
	r = e.wantErr(e.upload("/api/production/"+id+"/upload.json", e.keyA,
		part{field: "a", name: "a.mp3", data: []byte("not audio at all")},
		part{field: "b", name: "b.wav", data: makeWAV(t, 1, 16000, 1, audio.Tags{})},
		part{field: "c", name: "c.mp3", data: []byte("nor is this")}), 400, httpapi.CodeValidation)
	if r.FormErrors["a"] == "" || r.FormErrors["c"] == "" || len(r.FormErrors) != 2 {
		t.Errorf("upload of two bad tracks: %v", r.FormErrors)
	}
}

// TestBudgetCheckedAtStart: a production stored before its input's length
// was known is checked when it is started.
func TestBudgetCheckedAtStart(t *testing.T) {
	formErrorsOnly(t)
	e := newEnv(t, func(c *httpapi.Config) { c.Limits = production.Limits{Parts: 3} })
	id := e.create(e.keyA, map[string]any{"chapters": chapterList(5, 1), "output_files": []map[string]any{{"format": "wav", "split_on_chapters": true}}})
	e.wantForm(e.upload("/api/production/"+id+"/upload.json", e.keyA, part{field: "input_file", name: "in.wav", data: makeWAV(t, 1, 16000, 10, audio.Tags{})}),
		"output_files.0.split_on_chapters", "would split into 5 parts, one per chapter; 10 s of input allow at most 3 (one per 1 s of input, at most 3)")
	// As an older server stored it: input and length, the parts unchecked.
	ctx := context.Background()
	res, err := e.store.GetResource(ctx, e.userA.ID, storage.KindProduction, id)
	if err != nil {
		t.Fatal(err)
	}
	p, err := production.DecodeDocument(res)
	if err != nil {
		t.Fatal(err)
	}
	p.InputFile, p.InputLength, p.Format, p.Status = "in.wav", 10, "wav", production.StatusNotStarted
	if res.Doc, err = production.EncodeDocument(p); err != nil {
		t.Fatal(err)
	}
	res.Status = int(p.Status)
	if err := e.store.UpdateResource(ctx, &res); err != nil {
		t.Fatal(err)
	}
	e.wantForm(e.req("POST", "/api/production/"+id+"/start.json", e.keyA, nil), "output_files.0.split_on_chapters", "at most 3")
}

// TestBudgetTemporaryDisk: an input only ffmpeg decodes is kept as 32-bit
// floats for the run; beyond the server's disk limit its upload is a form
// error on input_file with the figures (3 s of 48 kHz stereo Opus: 2.1 MB
// with the file's allowance, over a 2 MB limit), while the same audio as
// WAV, which the engine reads as it is, is accepted; as PCM in Matroska or
// A-law in WAV, which ffmpeg reads, it is not.
func TestBudgetTemporaryDisk(t *testing.T) {
	formErrorsOnly(t)
	ffmpeg := need.Program(t, "ffmpeg")
	e := newEnv(t, func(c *httpapi.Config) { c.Limits = production.Limits{Disk: 2 << 20} })
	wav := makeWAV(t, 2, 48000, 3, audio.Tags{})
	id := e.create(e.keyA, map[string]any{"output_files": []map[string]any{{"format": "flac"}}})
	e.wantForm(e.upload("/api/production/"+id+"/upload.json", e.keyA, part{field: "input_file", name: "in.opus", data: encodeWith(t, ffmpeg, wav, "libopus", "ogg")}),
		"input_file", "processing would need up to 2.1 MB of temporary disk (2.1 MB for inputs only ffmpeg decodes, kept as 32-bit floats; 0.0 MB for the encoders' temporary files); at most 2.0 MB")
	e.must(e.upload("/api/production/"+id+"/upload.json", e.keyA, part{field: "input_file", name: "in.wav", data: wav}))
	// PCM that only ffmpeg reads, whose format is "wav" all the same: in
	// Matroska, and a WAV in A-law, which the probe hands to ffmpeg as
	// the engine's decode does. Planned as ffmpeg's decode.
	for _, c := range []struct{ name, codec, muxer string }{{"in.mkv", "pcm_s16le", "matroska"}, {"alaw.wav", "pcm_alaw", "wav"}} {
		e.wantForm(e.upload("/api/production/"+id+"/upload.json", e.keyA, part{field: "input_file", name: c.name, data: encodeWith(t, ffmpeg, wav, c.codec, c.muxer)}),
			"input_file", "processing would need up to 2.1 MB of temporary disk (2.1 MB for inputs only ffmpeg decodes")
	}
}

// TestBudgetInputSize: the main input's size in bytes is kept where the
// input is probed, uploaded or fetched from a URL (the disk plan bounds a
// copied video stream by it), and stays out of responses.
func TestBudgetInputSize(t *testing.T) {
	formErrorsOnly(t)
	uploaded, fetched := makeWAV(t, 1, 16000, 1, audio.Tags{}), makeWAV(t, 2, 16000, 1.5, audio.Tags{})
	src := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(fetched) }))
	defer src.Close()
	e := newEnv(t, func(c *httpapi.Config) { c.Fetcher = loopbackFetcher(1 << 20) })
	stored := func(id string) int64 {
		t.Helper()
		res, err := e.store.GetResource(context.Background(), e.userA.ID, storage.KindProduction, id)
		if err != nil {
			t.Fatal(err)
		}
		p, err := production.DecodeDocument(res)
		if err != nil {
			t.Fatal(err)
		}
		return p.InputSize
	}
	id := e.create(e.keyA, map[string]any{"output_files": []map[string]any{{"format": "flac"}}})
	r := e.must(e.upload("/api/production/"+id+"/upload.json", e.keyA, part{field: "input_file", name: "in.wav", data: uploaded}))
	if got := stored(id); got != int64(len(uploaded)) {
		t.Errorf("uploaded input of %d bytes: stored size %d", len(uploaded), got)
	}
	if strings.Contains(string(r.Raw), "input_size") {
		t.Errorf("the size is in the response: %s", r.Raw)
	}
	id = e.create(e.keyA, map[string]any{"input_file": src.URL + "/ep.wav"})
	if got := stored(id); got != int64(len(fetched)) {
		t.Errorf("fetched input of %d bytes: stored size %d", len(fetched), got)
	}
}

// TestBudgetPlansEveryProcess processes a production with a real runner
// and counts the ffmpeg and ffprobe processes it starts (a wrapper on
// PATH logs each, then runs the real program): no more than PlanWork
// planned, and no more at once.
func TestBudgetPlansEveryProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("processes a production")
	}
	realFFmpeg, realFFprobe := need.Program(t, "ffmpeg"), need.Program(t, "ffprobe")
	for _, c := range []struct {
		name, input string
		outputs     []map[string]any
	}{
		{"wav input", "in.wav", []map[string]any{{"format": "mp3"}, {"format": "opus", "split_on_chapters": true}, {"format": "aac", "mono_mixdown": true}, {"format": "flac"}, {"format": "alac", "suffix": "-alac"}}},
		{"opus input", "in.opus", []map[string]any{{"format": "mp3", "split_on_chapters": true}, {"format": "wav"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			data := makeWAV(t, 2, 48000, 3, audio.Tags{})
			if strings.HasSuffix(c.input, ".opus") {
				data = encodeWith(t, realFFmpeg, data, "libopus", "ogg")
			}
			id := e.create(e.keyA, map[string]any{"chapters": chapterList(3, 1), "output_files": c.outputs})
			e.must(e.upload("/api/production/"+id+"/upload.json", e.keyA, part{field: "input_file", name: c.input, data: data}))
			e.must(e.req("POST", "/api/production/"+id+"/start.json", e.keyA, nil))
			res, err := e.store.GetResource(context.Background(), e.userA.ID, storage.KindProduction, id)
			if err != nil {
				t.Fatal(err)
			}
			planned, err := production.DecodeDocument(res)
			if err != nil {
				t.Fatal(err)
			}
			work := production.PlanWork(planned)

			// The wrapper logs its pid, counts the logged processes still
			// running (zombies aside) and becomes the real program, so the
			// engine's signals reach it.
			bin, log := t.TempDir(), filepath.Join(t.TempDir(), "procs.log")
			for name, real := range map[string]string{"ffmpeg": realFFmpeg, "ffprobe": realFFprobe} {
				script := fmt.Sprintf(`#!/bin/sh
echo $$ >> %[1]q
n=0
for p in $(cat %[1]q); do
	if [ -r /proc/$p/status ] && ! grep -q '^State:[[:space:]]*Z' /proc/$p/status; then n=$((n+1)); fi
done
echo $n >> %[1]q.running
exec %[2]q "$@"
`, log, real)
				if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			p := e.runOne(id)
			if p["status"] != float64(production.StatusDone) {
				t.Fatalf("status %v: %v", p["status"], p["error_message"])
			}
			started, peak := len(numbers(t, log)), slices.Max(numbers(t, log+".running"))
			t.Logf("%s: %d external processes, %d at once; planned %d, %d at once", c.name, started, peak, work.Processes, work.Concurrent)
			if started == 0 || started > work.Processes {
				t.Errorf("%d processes started, planned %d", started, work.Processes)
			}
			if peak > work.Concurrent {
				t.Errorf("%d processes at once, planned %d", peak, work.Concurrent)
			}
		})
	}
}

// numbers reads a file of one number per line.
func numbers(t *testing.T, path string) []int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		n, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, n)
	}
	return out
}

// encodeWith encodes a WAV file with ffmpeg's codec into muxer.
func encodeWith(t *testing.T, ffmpeg string, wav []byte, codec, muxer string) []byte {
	t.Helper()
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.wav"), filepath.Join(dir, "out")
	if err := os.WriteFile(in, wav, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(ffmpeg, "-nostdin", "-v", "error", "-i", in, "-c:a", codec, "-f", muxer, "-y", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
