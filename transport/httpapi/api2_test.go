package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/transport/httpapi"
	"github.com/audiopost/audiopost/transport/outbound"
)

func pngSize(t *testing.T, b []byte) (int, int) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return img.Bounds().Dx(), img.Bounds().Dy()
}

func liveJobs(t *testing.T, e *env, id string) (live, all int) {
	t.Helper()
	jobs, err := e.store.ListJobs(context.Background(), e.userA.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs {
		if j.Type != "process" || j.Production != id || j.Owner != e.userA.ID {
			t.Errorf("job %+v", j)
		}
		if j.State == storage.JobQueued || j.State == storage.JobRunning {
			live++
		}
	}
	return live, len(jobs)
}

func TestStartStop(t *testing.T) {
	e := newEnv(t)
	id := e.create(e.keyA, map[string]any{"metadata": map[string]any{"title": "x"}})
	e.wantErr(e.req("POST", "/api/production/"+id+"/start.json", e.keyA, nil), 409, "start_not_allowed")
	if _, n := liveJobs(t, e, id); n != 0 {
		t.Fatalf("refused start enqueued %d jobs", n)
	}
	e.must(e.upload("/api/production/"+id+"/upload.json", e.keyA, part{field: "input_file", name: "a.wav", data: makeWAV(t, 1, 8000, 0.2, audio.Tags{})}))
	// Without an output file, processing would produce nothing: refused.
	r := e.req("POST", "/api/production/"+id+"/start.json", e.keyA, nil)
	if env := e.wantErr(r, 400, "validation_failed"); env.FormErrors["output_files"] == "" {
		t.Errorf("start without outputs: form errors %v", env.FormErrors)
	}
	e.must(e.req("POST", "/api/production/"+id+"/output_files.json", e.keyA, []map[string]any{{"format": "wav"}}))
	p := e.must(e.req("POST", "/api/production/"+id+"/start.json", e.keyA, nil)).obj(t)
	if p["status"] != 1.0 || p["status_string"] != "Waiting" {
		t.Errorf("after start: %v %v", p["status"], p["status_string"])
	}
	if live, all := liveJobs(t, e, id); live != 1 || all != 1 {
		t.Errorf("after start: %d live of %d jobs", live, all)
	}
	// Restart of a waiting production: still exactly one live job.
	e.must(e.req("POST", "/api/production/"+id+"/start.json", e.keyA, nil))
	if live, all := liveJobs(t, e, id); live != 1 || all != 2 {
		t.Errorf("after restart: %d live of %d jobs", live, all)
	}
	p = e.must(e.req("POST", "/api/production/"+id+"/stop.json", e.keyA, nil)).obj(t)
	if p["status"] != 10.0 {
		t.Errorf("stop of waiting: status %v", p["status"])
	}
	if live, _ := liveJobs(t, e, id); live != 0 {
		t.Errorf("stop left %d live jobs", live)
	}
	e.wantErr(e.req("POST", "/api/production/"+id+"/stop.json", e.keyA, nil), 409, "not_running")

	// While a worker processes it: no changes, no start, no delete; stop
	// moves it to Stopping, for the worker to end.
	e.must(e.req("POST", "/api/production/"+id+"/start.json", e.keyA, nil))
	claimed, err := e.store.Claim(context.Background(), "worker", time.Minute)
	if err != nil || claimed.Production != id {
		t.Fatalf("claim: %+v, %v", claimed, err)
	}
	if err := e.store.SetStatus(context.Background(), e.userA.ID, storage.KindProduction, id, int(production.StatusAudioProcessing)); err != nil {
		t.Fatal(err)
	}
	p = e.must(e.req("GET", "/api/production/"+id+".json", e.keyA, nil)).obj(t)
	if p["change_allowed"] != false || p["start_allowed"] != false {
		t.Errorf("processing: change_allowed %v start_allowed %v", p["change_allowed"], p["start_allowed"])
	}
	e.wantErr(e.req("POST", "/api/production/"+id+".json", e.keyA, map[string]any{"metadata": map[string]any{"title": "y"}}), 409, "change_not_allowed")
	e.wantErr(e.req("POST", "/api/production/"+id+"/metadata.json", e.keyA, map[string]any{"title": "y"}), 409, "change_not_allowed")
	e.wantErr(e.req("DELETE", "/api/production/"+id+"/chapters.json", e.keyA, nil), 409, "change_not_allowed")
	e.wantErr(e.upload("/api/production/"+id+"/upload.json", e.keyA, part{field: "input_file", name: "b.wav", data: makeWAV(t, 1, 8000, 0.2, audio.Tags{})}), 409, "change_not_allowed")
	e.wantErr(e.req("POST", "/api/production/"+id+"/start.json", e.keyA, nil), 409, "start_not_allowed")
	e.wantErr(e.req("DELETE", "/api/production/"+id+".json", e.keyA, nil), 409, "change_not_allowed")
	p = e.must(e.req("POST", "/api/production/"+id+"/stop.json", e.keyA, nil)).obj(t)
	if p["status"] != 13.0 {
		t.Errorf("stop of processing: status %v", p["status"])
	}
	if live, _ := liveJobs(t, e, id); live != 0 {
		t.Errorf("stop left %d live jobs", live)
	}
	p = e.must(e.req("POST", "/api/production/"+id+"/stop.json", e.keyA, nil)).obj(t) // idempotent
	if p["status"] != 13.0 {
		t.Errorf("stopped again while the worker holds it: status %v", p["status"])
	}
	// The worker ends the stop; had it died, the next to take the job
	// over would (production/runner's TestRunnerStopWhileNoWorker).
	if err := e.store.Stopped(context.Background(), claimed.Lease()); err != nil {
		t.Fatal(err)
	}
	if err := e.store.SetStatus(context.Background(), e.userA.ID, storage.KindProduction, id, int(production.StatusNotStarted)); err != nil {
		t.Fatal(err)
	}

	// Processing by a worker that is gone (its lease ran out): the stop
	// lands at once.
	e.must(e.req("POST", "/api/production/"+id+"/start.json", e.keyA, nil))
	if err := e.store.SetStatus(context.Background(), e.userA.ID, storage.KindProduction, id, int(production.StatusAudioEncoding)); err != nil {
		t.Fatal(err)
	}
	p = e.must(e.req("POST", "/api/production/"+id+"/stop.json", e.keyA, nil)).obj(t)
	if p["status"] != 10.0 {
		t.Errorf("stop of a production no worker holds: status %v, want 10", p["status"])
	}
}

func TestSimpleAPI(t *testing.T) {
	e := newEnv(t)
	pid := e.must(e.req("POST", "/api/presets.json", e.keyA, map[string]any{
		"preset_name": "P", "metadata": map[string]any{"album": "Preset Album", "artist": "Preset"},
		"output_files": []any{map[string]any{"format": "mp3", "bitrate": 128}},
	})).obj(t)["uuid"].(string)
	wavData := makeWAV(t, 2, 44100, 1, audio.Tags{Title: "Tag Title", Genre: "Tag Genre"})
	send := func(action string, extra ...part) *resp {
		parts := append([]part{
			field("preset", pid), field("action", action), field("artist", "Form Artist"), field("tags", "go, audio ,go,"),
			field("chapters", "00:00:00 Intro\n00:00:00.500 Main <https://example.org/m>\n"),
			field("loudnesstarget", "-19"), field("hipfilter", "false"), field("denoise", "1"), field("track", "7"),
			field("silence_cutter", "true"), field("maxpeak", "-1"),
			field("output_basename", "episode"), field("webhook", "https://hook.example.org/s"),
			{field: "input_file", name: "rec.wav", data: wavData},
		}, extra...)
		return e.upload("/api/simple/productions.json", e.keyA, parts...)
	}
	p := e.must(send("save")).obj(t)
	id := p["uuid"].(string)
	for path, want := range map[string]any{
		"status": 10.0, "input_file": "rec.wav", "format": "wav", "channels": 2.0, "samplerate": 44100.0,
		"metadata.artist": "Form Artist", "metadata.album": "Preset Album", "metadata.title": "Tag Title", "metadata.genre": "Tag Genre",
		"metadata.track": "7", "metadata.tags.0": "go", "metadata.tags.1": "audio", "chapters.1.title": "Main", "chapters.1.url": "https://example.org/m",
		"chapters.1.start_sec": 0.5, "algorithms.loudnesstarget": -19.0, "algorithms.hipfilter": false, "algorithms.denoise": true,
		"algorithms.silence_cutter": true, "algorithms.maxpeak": -1.0,
		"output_files.0.filename": "episode.mp3", "output_files.0.bitrate": 128.0, "webhook": "https://hook.example.org/s",
	} {
		if got := get(p, path); got != want {
			t.Errorf("save: %s = %v, want %v", path, got, want)
		}
	}
	if len(p["metadata"].(map[string]any)["tags"].([]any)) != 2 {
		t.Errorf("tags %v", get(p, "metadata.tags"))
	}
	if _, n := liveJobs(t, e, id); n != 0 {
		t.Errorf("save enqueued %d jobs", n)
	}
	p = e.must(send("start", part{field: "image", name: "c.png", data: makePNG(t, 50, 80)})).obj(t)
	id = p["uuid"].(string)
	if p["status"] != 1.0 || p["thumbnail"] == nil {
		t.Errorf("start: status %v thumbnail %v", p["status"], p["thumbnail"])
	}
	if live, all := liveJobs(t, e, id); live != 1 || all != 1 {
		t.Errorf("simple start: %d live of %d jobs", live, all)
	}
	// Errors.
	r := e.wantErr(send("publish"), 400, "validation_failed")
	if r.FormErrors["action"] == "" {
		t.Errorf("form_errors %v", r.FormErrors)
	}
	r = e.wantErr(send("save", field("append_chapters", "maybe")), 400, "validation_failed")
	if r.FormErrors["metadata.append_chapters"] == "" {
		t.Errorf("form_errors %v", r.FormErrors)
	}
	// A field the simple API does not know is a form error, whether it
	// comes before the files or after them.
	r = e.wantErr(send("save", field("loudness_target", "-23"), field("silence_cuter", "1")), 400, "validation_failed")
	if r.FormErrors["loudness_target"] == "" || r.FormErrors["silence_cuter"] == "" || len(r.FormErrors) != 2 {
		t.Errorf("unknown fields: form_errors %v", r.FormErrors)
	}
	r = e.wantErr(e.upload("/api/simple/productions.json", e.keyA, field("nonsense", "1"), part{field: "input_file", name: "rec.wav", data: wavData}), 400, "validation_failed")
	if r.FormErrors["nonsense"] == "" {
		t.Errorf("unknown field before a file: form_errors %v", r.FormErrors)
	}
	e.wantErr(e.upload("/api/simple/productions.json", e.keyA, field("chapters", "xx nonsense")), 400, "validation_failed")
	e.wantErr(e.upload("/api/simple/productions.json", e.keyA, field("action", "start")), 409, "start_not_allowed")
	e.wantErr(e.req("POST", "/api/simple/productions.json", e.keyA, `{}`), 415, "unsupported_media_type")
	// None of the failed requests stored a production.
	if l := e.must(e.req("GET", "/api/productions.json?uuids_only=1", e.keyA, nil)).list(t); len(l) != 2 {
		t.Errorf("%d productions stored, want 2", len(l))
	}
}

// TestOwnerIsolation: B gets 404 for every resource and file of A.
func TestOwnerIsolation(t *testing.T) {
	e := newEnv(t)
	id := e.create(e.keyA, map[string]any{})
	e.must(e.upload("/api/production/"+id+"/upload.json", e.keyA, part{field: "input_file", name: "a.wav", data: makeWAV(t, 1, 8000, 0.1, audio.Tags{})}))
	e.writeOutput(id, "o.mp3", []byte("x"))
	pid := e.must(e.req("POST", "/api/presets.json", e.keyA, map[string]any{"preset_name": "A"})).obj(t)["uuid"].(string)
	e.must(e.upload("/api/preset/"+pid+"/upload.json", e.keyA, part{field: "image", name: "c.png", data: makePNG(t, 10, 10)}))
	svc := storage.Service{Owner: e.userA.ID, Type: "sftp", DisplayName: "A", Incoming: true}
	if err := e.store.CreateService(context.Background(), &svc); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		method, path string
		body         any
	}{
		{"GET", "/api/production/" + id + ".json", nil},
		{"POST", "/api/production/" + id + ".json", map[string]any{}},
		{"POST", "/api/production/" + id + "/metadata.json", map[string]any{"title": "x"}},
		{"DELETE", "/api/production/" + id + "/chapters.json", nil},
		{"GET", "/api/production/" + id + "/status.json", nil},
		{"POST", "/api/production/" + id + "/start.json", nil},
		{"POST", "/api/production/" + id + "/stop.json", nil},
		{"DELETE", "/api/production/" + id + ".json", nil},
		{"GET", "/api/preset/" + pid + ".json", nil},
		{"POST", "/api/preset/" + pid + ".json", map[string]any{}},
		{"DELETE", "/api/preset/" + pid + ".json", nil},
		{"DELETE", "/api/production/" + pid + ".json", nil},
		{"GET", "/api/download/audio-upload/" + id + "/a.wav", nil},
		{"GET", "/api/download/audio-result/" + id + "/o.mp3", nil},
		{"GET", "/api/download/preset/" + pid + "/c.png", nil},
		{"GET", "/api/service/" + svc.UUID + "/ls.json", nil},
	} {
		r := e.req(c.method, c.path, e.keyB, c.body)
		if r.Status != 404 || r.code() != "not_found" {
			t.Errorf("B %s %s: %d %s", c.method, c.path, r.Status, r.Raw)
		}
	}
	e.wantErr(e.upload("/api/production/"+id+"/upload.json", e.keyB, part{field: "input_file", name: "b.wav", data: makeWAV(t, 1, 8000, 0.1, audio.Tags{})}), 404, "not_found")
	// B cannot use A's preset or service either.
	e.wantErr(e.req("POST", "/api/productions.json", e.keyB, map[string]any{"preset": pid}), 400, "validation_failed")
	e.wantErr(e.req("POST", "/api/productions.json", e.keyB, map[string]any{"service": svc.UUID, "input_file": "x.wav"}), 400, "validation_failed")
	// Nor take A's files by pointing image at them.
	idB := e.create(e.keyB, map[string]any{})
	r := e.wantErr(e.req("POST", "/api/production/"+idB+".json", e.keyB, map[string]any{"image": e.base + "/api/download/preset/" + pid + "/c.png"}), 400, "validation_failed")
	if r.FormErrors["image"] == "" {
		t.Errorf("form_errors %v", r.FormErrors)
	}
	// A still has everything.
	e.must(e.req("GET", "/api/production/"+id+".json", e.keyA, nil))
	e.must(e.req("GET", "/api/preset/"+pid+".json", e.keyA, nil))
}

func TestPresetCoverImage(t *testing.T) {
	e := newEnv(t)
	pid := e.must(e.req("POST", "/api/presets.json", e.keyA, map[string]any{"preset_name": "A"})).obj(t)["uuid"].(string)
	pr := e.must(e.upload("/api/preset/"+pid+"/upload.json", e.keyA, part{field: "image", name: "c.png", data: makePNG(t, 300, 300)})).obj(t)
	if pr["image"] != e.base+"/api/download/preset/"+pid+"/c.png" {
		t.Fatalf("preset image %v", pr["image"])
	}
	e.wantErr(e.upload("/api/preset/"+pid+"/upload.json", e.keyA, part{field: "intro_file", name: "i.wav", data: makeWAV(t, 1, 8000, 0.1, audio.Tags{})}), 400, "validation_failed")
	// Covers the engine cannot embed are refused at upload, not dropped
	// with a warning at processing; the stored cover stays.
	for name, data := range map[string][]byte{"c.gif": []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"), "c.jpg": []byte("not an image"), "c.png": []byte("\x89PNG\r\n\x1a\n broken")} {
		r := e.wantErr(e.upload("/api/preset/"+pid+"/upload.json", e.keyA, part{field: "image", name: name, data: data}), 400, "validation_failed")
		if !strings.Contains(r.FormErrors["image"], "PNG or JPEG") {
			t.Errorf("%s: form_errors %v", name, r.FormErrors)
		}
	}
	if pr := e.must(e.req("GET", "/api/preset/"+pid+".json", e.keyA, nil)).obj(t); pr["image"] != e.base+"/api/download/preset/"+pid+"/c.png" {
		t.Errorf("after refused uploads the preset image is %v", pr["image"])
	}
	id := e.create(e.keyA, map[string]any{})
	p := e.must(e.req("POST", "/api/production/"+id+".json", e.keyA, map[string]any{"preset_cover_image": pid})).obj(t)
	if p["image"] != e.base+"/api/download/audio-upload/"+id+"/c.png" {
		t.Fatalf("cover from preset: %v", p["image"])
	}
	if r := e.req("GET", "/api/download/audio-upload/"+id+"/c.png", e.keyA, nil); r.Status != 200 || r.Header.Get("Content-Type") != "image/png" {
		t.Errorf("copied cover: %d", r.Status)
	}
	// Sending the same image again keeps it and its thumbnail.
	thumb := p["thumbnail"]
	p = e.must(e.req("POST", "/api/production/"+id+".json", e.keyA, map[string]any{"image": p["image"]})).obj(t)
	if thumb == nil || p["thumbnail"] != thumb {
		t.Errorf("thumbnail %v, want %v", p["thumbnail"], thumb)
	}
	p = e.must(e.req("POST", "/api/production/"+id+".json", e.keyA, map[string]any{"reset_cover_image": true})).obj(t)
	if p["image"] != nil || p["thumbnail"] != nil {
		t.Errorf("reset_cover_image left %v %v", p["image"], p["thumbnail"])
	}
	if r := e.req("GET", "/api/download/audio-upload/"+id+"/c.png", e.keyA, nil); r.Status != 404 {
		t.Errorf("removed cover still served: %d", r.Status)
	}
}

func TestInputURL(t *testing.T) {
	data := makeWAV(t, 1, 22050, 0.25, audio.Tags{Album: "Fetched Album"})
	pngData := makePNG(t, 64, 64)
	src := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/cover.png" {
			w.Write(pngData)
			return
		}
		if r.URL.Path == "/missing.wav" {
			http.NotFound(w, r)
			return
		}
		w.Write(data)
	}))
	defer src.Close()

	// The default fetcher refuses loopback addresses.
	e := newEnv(t)
	r := e.wantErr(e.req("POST", "/api/productions.json", e.keyA, map[string]any{"input_file": src.URL + "/ep.wav"}), 400, "validation_failed")
	if r.FormErrors["input_file"] == "" {
		t.Errorf("form_errors %v", r.FormErrors)
	}

	e = newEnv(t, func(c *httpapi.Config) { c.Fetcher = loopbackFetcher(1 << 20) })
	p := e.must(e.req("POST", "/api/productions.json", e.keyA, map[string]any{"input_file": src.URL + "/ep.wav"})).obj(t)
	if p["input_file"] != "ep.wav" || p["samplerate"] != 22050.0 || p["status"] != 10.0 || get(p, "metadata.album") != "Fetched Album" {
		t.Errorf("fetched input: %v", p)
	}
	if r := e.req("GET", "/api/download/audio-upload/"+p["uuid"].(string)+"/ep.wav", e.keyA, nil); r.Status != 200 || len(r.Raw) != len(data) {
		t.Errorf("fetched input download %d", r.Status)
	}
	// A cover image URL is fetched and thumbnailed; on a preset too.
	p = e.must(e.req("POST", "/api/production/"+p["uuid"].(string)+".json", e.keyA, map[string]any{"image": src.URL + "/cover.png"})).obj(t)
	if p["image"] != e.base+"/api/download/audio-upload/"+p["uuid"].(string)+"/cover.png" || p["thumbnail"] == nil {
		t.Errorf("fetched image %v thumbnail %v", p["image"], p["thumbnail"])
	}
	pr := e.must(e.req("POST", "/api/presets.json", e.keyA, map[string]any{"preset_name": "p", "image": src.URL + "/cover.png"})).obj(t)
	if r := e.req("GET", strings.TrimPrefix(pr["thumbnail"].(string), e.base), e.keyA, nil); r.Status != 200 {
		t.Errorf("preset thumbnail from URL: %d", r.Status)
	}
	r = e.wantErr(e.req("POST", "/api/productions.json", e.keyA, map[string]any{"input_file": src.URL + "/missing.wav"}), 400, "validation_failed")
	if r.FormErrors["input_file"] == "" {
		t.Errorf("form_errors %v", r.FormErrors)
	}
	e = newEnv(t, func(c *httpapi.Config) { c.Fetcher = loopbackFetcher(100) })
	e.wantErr(e.req("POST", "/api/productions.json", e.keyA, map[string]any{"input_file": src.URL + "/ep.wav"}), 413, "too_large")
}

func TestErrorPaths(t *testing.T) {
	var logs bytes.Buffer
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	e := newEnv(t, func(c *httpapi.Config) {
		c.MaxBodyBytes = 1000
		c.MaxUploadBytes = 5000
		c.RateLimit = 1
		c.RateBurst = 3
		c.Now = func() time.Time { return now }
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	e.wantErr(e.req("GET", "/api/productions.json", "", nil), 401, "unauthorized")
	r := e.wantErr(e.req("GET", "/api/user.json", "wrong-key", nil), 401, "unauthorized")
	if r.Header.Get("WWW-Authenticate") == "" {
		t.Error("401 without WWW-Authenticate")
	}
	e.wantErr(e.req("PUT", "/api/productions.json", e.keyB, nil), 405, "method_not_allowed")
	now = now.Add(time.Hour)
	r = e.wantErr(e.req("DELETE", "/api/productions.json", e.keyB, nil), 405, "method_not_allowed")
	if r.Header.Get("Allow") != "GET, POST" {
		t.Errorf("Allow %q", r.Header.Get("Allow"))
	}
	e.wantErr(e.req("GET", "/api/nothing.json", e.keyB, nil), 404, "not_found")
	now = now.Add(time.Hour)
	e.wantErr(e.req("POST", "/api/productions.json", e.keyB, strings.NewReader("title=x"), "application/x-www-form-urlencoded"), 415, "unsupported_media_type")
	e.wantErr(e.req("POST", "/api/productions.json", e.keyB, `{"metadata":{"summary":"`+strings.Repeat("x", 2000)+`"}}`), 413, "too_large")
	e.wantErr(e.upload("/api/simple/productions.json", e.keyB, part{field: "input_file", name: "a.wav", data: make([]byte, 6000)}), 413, "too_large")

	// Rate limit: burst 3, then 429 until a token refills.
	now = now.Add(time.Hour)
	for i := range 3 {
		if r := e.req("GET", "/api/user.json", e.keyA, nil); r.Status != 200 {
			t.Fatalf("request %d: %d", i, r.Status)
		}
	}
	r = e.wantErr(e.req("GET", "/api/user.json", e.keyA, nil), 429, "rate_limited")
	if r.Header.Get("Retry-After") != "1" {
		t.Errorf("Retry-After %q", r.Header.Get("Retry-After"))
	}
	if r := e.req("GET", "/api/user.json", e.keyB, nil); r.Status != 200 { // per user
		t.Errorf("B limited by A: %d", r.Status)
	}
	now = now.Add(time.Second)
	e.must(e.req("GET", "/api/user.json", e.keyA, nil))

	// 500: a broken stored document; generic message, logged.
	now = now.Add(time.Hour)
	res := storage.Resource{Owner: e.userA.ID, Kind: storage.KindProduction, Doc: []byte(`{"status":"bad"}`)}
	if err := e.store.CreateResource(context.Background(), &res); err != nil {
		t.Fatal(err)
	}
	r = e.wantErr(e.req("GET", "/api/production/"+res.UUID+".json", e.keyA, nil), 500, "internal_error")
	if r.ErrorMsg != "internal server error" || !strings.Contains(logs.String(), "internal error") {
		t.Errorf("500 message %q, log %q", r.ErrorMsg, logs.String())
	}
}

func TestInfoUserServices(t *testing.T) {
	e := newEnv(t)
	all := e.must(e.req("GET", "/api/info.json", e.keyA, nil)).obj(t)
	for _, k := range []string{"service_types", "algorithms", "output_files", "production_status"} {
		one := e.must(e.req("GET", "/api/info/"+k+".json", e.keyA, nil)).obj(t)
		if d := cmp.Diff(one, all[k]); d != "" || len(one) == 0 {
			t.Errorf("info/%s differs from info.json[%s]: %s", k, k, d)
		}
	}
	// The info calls answer without credentials too; other calls do not.
	if anon := e.must(e.req("GET", "/api/info/production_status.json", "", nil)).obj(t); cmp.Diff(anon, all["production_status"]) != "" {
		t.Errorf("anonymous info/production_status %v", anon)
	}
	e.wantErr(e.req("GET", "/api/user.json", "", nil), 401, "unauthorized")
	if get(all, "production_status.3") != "Done" || get(all, "production_status.2") != "Error" {
		t.Errorf("production_status %v", all["production_status"])
	}
	if get(all, "output_files.mp3.default_bitrate") != "96" || get(all, "algorithms.loudnesstarget.type") != "select" {
		t.Errorf("info tables wrong")
	}
	types := []string{"ftp", "sftp", "webdav", "s3", "pocketsphinx", "whisper", "openai"}
	for _, typ := range types {
		if get(all, "service_types."+typ+".display_name") == nil {
			t.Errorf("service type %s missing", typ)
		}
	}
	if st, _ := all["service_types"].(map[string]any); len(st) != len(types) {
		t.Errorf("service types %v: every listed type must transfer files or recognise speech", st)
	}
	e.wantErr(e.req("GET", "/api/info/nothing.json", e.keyA, nil), 404, "not_found")

	u := e.must(e.req("GET", "/api/user.json", e.keyA, nil)).obj(t)
	want := map[string]any{"username": "alice", "user_id": e.userA.ID, "email": "alice@example.org", "credits": 3.5,
		"onetime_credits": 2.0, "recurring_credits": 1.5, "recharge_recurring_credits": 3.0, "notification_email": false,
		"error_email": true, "warning_email": false, "low_credits_email": false, "low_credits_threshold": 0.0, "recharge_date": nil,
		"date_joined": production.Time{Time: e.userA.Joined}.String()}
	if d := cmp.Diff(want, u); d != "" {
		t.Errorf("user (-want +got):\n%s", d)
	}

	ctx := context.Background()
	svc := storage.Service{Owner: e.userA.ID, Type: "ftp", DisplayName: "FTP", Incoming: true, Outgoing: true,
		Config: []byte(`{"host":"ftp.example.org","port":21,"path":"/pod","password":"hunter2","base_url":"https://cdn.example.org/"}`)}
	out := storage.Service{Owner: e.userA.ID, Type: "s3", DisplayName: "Bucket", Outgoing: true, Config: []byte(`{"bucket":"b","secret_key":"k"}`)}
	for _, s := range []*storage.Service{&svc, &out} {
		if err := e.store.CreateService(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	l := e.must(e.req("GET", "/api/services.json", e.keyA, nil)).list(t)
	wantSvc := []any{
		map[string]any{"type": "ftp", "uuid": svc.UUID, "display_name": "FTP", "incoming": true, "outgoing": true,
			"host": "ftp.example.org", "port": 21.0, "path": "/pod", "base_url": "https://cdn.example.org/"},
		map[string]any{"type": "s3", "uuid": out.UUID, "display_name": "Bucket", "incoming": false, "outgoing": true, "bucket": "b"},
	}
	if d := cmp.Diff(wantSvc, l); d != "" {
		t.Errorf("services (-want +got):\n%s", d)
	}
	// ls of an unreachable host is the service's failure (502), naming it;
	// of an outgoing-only service a bad request; of a type without file
	// transfer 501 (the transfer tests list real servers).
	r := e.wantErr(e.req("GET", "/api/service/"+svc.UUID+"/ls.json", e.keyA, nil), 502, "service_failed")
	if !strings.Contains(r.ErrorMsg, svc.UUID) || !strings.Contains(r.ErrorMsg, "(ftp)") {
		t.Errorf("ls message %q", r.ErrorMsg)
	}
	e.wantErr(e.req("GET", "/api/service/"+out.UUID+"/ls.json", e.keyA, nil), 400, "bad_request")
	in := storage.Service{Owner: e.userA.ID, Type: "http", DisplayName: "In", Incoming: true, Config: []byte(`{}`)}
	if err := e.store.CreateService(ctx, &in); err != nil {
		t.Fatal(err)
	}
	r = e.wantErr(e.req("GET", "/api/service/"+in.UUID+"/ls.json", e.keyA, nil), 501, "service_type_not_supported")
	if !strings.Contains(r.ErrorMsg, `"http"`) {
		t.Errorf("ls message %q", r.ErrorMsg)
	}
	e.wantErr(e.req("GET", "/api/service/"+svc.UUID+"/ls.json", e.keyB, nil), 404, "not_found")
	// Services in productions: direction checked.
	r = e.wantErr(e.req("POST", "/api/productions.json", e.keyA, map[string]any{"service": out.UUID, "input_file": "a.wav"}), 400, "validation_failed")
	if r.FormErrors["service"] == "" {
		t.Errorf("form_errors %v", r.FormErrors)
	}
	// The input is fetched from the service when the production is
	// saved: an unreachable service fails the request.
	e.wantErr(e.req("POST", "/api/productions.json", e.keyA, map[string]any{"service": svc.UUID, "input_file": "a.wav"}), 502, "service_failed")
}

// TestGolden compares the complete JSON shape of a production and a preset
// response with testdata (uuids and times normalized). -update rewrites.
func TestGolden(t *testing.T) {
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	e := newEnv(t, func(c *httpapi.Config) { c.Now = func() time.Time { return now } })
	pid := e.must(e.req("POST", "/api/presets.json", e.keyA, map[string]any{
		"preset_name": "Golden", "metadata": map[string]any{"artist": "A", "tags": "x, y"},
		"output_files": []any{map[string]any{"format": "mp3", "bitrate": 128}, map[string]any{"format": "flac"}},
		"algorithms":   map[string]any{"loudnesstarget": -16, "denoise": true}, "webhook": "https://hook.example.org/g",
	})).obj(t)["uuid"].(string)
	id := e.create(e.keyA, map[string]any{
		"preset": pid, "metadata": map[string]any{"title": "T", "year": 2026},
		"chapters": []any{map[string]any{"start": "00:00:01.5", "title": "C1"}},
	})
	e.must(e.upload("/api/production/"+id+"/upload.json", e.keyA, part{field: "input_file", name: "in.wav", data: makeWAV(t, 2, 48000, 2, audio.Tags{})}))
	for _, c := range []struct{ path, golden, id string }{
		{"/api/production/" + id + ".json", "production.golden.json", id},
		{"/api/preset/" + pid + ".json", "preset.golden.json", pid},
	} {
		r := e.must(e.req("GET", c.path, e.keyA, nil))
		norm := strings.NewReplacer(c.id, "UUID", pid, "PRESET", e.base, "BASE").Replace(string(r.Raw))
		var got any
		if err := json.Unmarshal([]byte(norm), &got); err != nil {
			t.Fatal(err)
		}
		path := "testdata/" + c.golden
		if *update {
			b, _ := json.MarshalIndent(got, "", "  ")
			os.MkdirAll("testdata", 0o755)
			if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		wantRaw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var want any
		if err := json.Unmarshal(wantRaw, &want); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", c.golden, d)
		}
	}
}

// loopbackFetcher is the outbound client allowing loopback addresses, as
// an operator of a test server would configure it.
func loopbackFetcher(maxBytes int64) httpapi.Fetcher {
	return outbound.New(outbound.Config{AllowLoopback: true, MaxBytes: maxBytes, Timeout: 10 * time.Second})
}

func TestChapterImages(t *testing.T) {
	small := makePNG(t, 40, 30)
	other := makePNG(t, 20, 20)
	src := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/a.png":
			w.Write(small)
		case "/b.png":
			w.Write(other)
		case "/text.png":
			w.Write([]byte("not a picture"))
		case "/huge.png":
			w.Write(make([]byte, 9<<20))
		default:
			http.NotFound(w, r)
		}
	}))
	defer src.Close()
	e := newEnv(t, func(c *httpapi.Config) { c.Fetcher = loopbackFetcher(16 << 20) })
	chapter := func(start, title, image string) map[string]any {
		return map[string]any{"start": start, "title": title, "image": image}
	}
	p := e.must(e.req("POST", "/api/productions.json", e.keyA, map[string]any{"chapters": []any{
		chapter("00:00:00", "One", src.URL+"/a.png"),
		chapter("00:00:05", "Two", src.URL+"/a.png"),
		map[string]any{"start": "00:00:09", "title": "Three"},
	}})).obj(t)
	id := p["uuid"].(string)
	img1, _ := get(p, "chapters.0.image").(string)
	if !strings.HasPrefix(img1, e.base+"/api/download/audio-upload/"+id+"/chapter-") || get(p, "chapters.1.image") != img1 || get(p, "chapters.2.image") != nil {
		t.Fatalf("chapter images %v", p["chapters"])
	}
	if r := e.req("GET", strings.TrimPrefix(img1, e.base), e.keyA, nil); r.Status != 200 || !bytes.Equal(r.Raw, small) || r.Header.Get("Content-Type") != "image/png" {
		t.Errorf("chapter image download: %d %s, %d bytes", r.Status, r.Header.Get("Content-Type"), len(r.Raw))
	}
	e.wantErr(e.req("GET", strings.TrimPrefix(img1, e.base), e.keyB, nil), 404, "not_found")

	// Bad images are form errors of their chapter, and change nothing.
	for path, code := range map[string]string{"/text.png": "validation_failed", "/missing.png": "validation_failed", "/huge.png": "too_large"} {
		r := e.req("POST", "/api/production/"+id+".json", e.keyA, map[string]any{"chapters": []any{chapter("00:00:12", "Bad", src.URL+path)}})
		if r.ErrorCode == nil || *r.ErrorCode != code {
			t.Errorf("%s: %d %v %v", path, r.Status, r.ErrorCode, r.FormErrors)
		}
		if code == "validation_failed" && r.FormErrors["chapters.3.image"] == "" {
			t.Errorf("%s: form_errors %v", path, r.FormErrors)
		}
	}
	// Chapters sent on update are added; stored images stay, and another
	// production's image URL is copied, not shared.
	p = e.must(e.req("POST", "/api/production/"+id+".json", e.keyA, map[string]any{"chapters": []any{chapter("00:00:12", "Four", src.URL+"/b.png")}})).obj(t)
	if get(p, "chapters.0.image") != img1 || len(p["chapters"].([]any)) != 4 {
		t.Fatalf("after adding a chapter: %v", p["chapters"])
	}
	img4, _ := get(p, "chapters.3.image").(string)
	if img4 == img1 || !strings.HasPrefix(img4, e.base+"/api/download/audio-upload/"+id+"/chapter-") {
		t.Errorf("fourth chapter image %q", img4)
	}
	q := e.must(e.req("POST", "/api/productions.json", e.keyA, map[string]any{"chapters": []any{chapter("00:00:01", "Copied", img4)}})).obj(t)
	qid := q["uuid"].(string)
	if c := get(q, "chapters.0.image"); c != strings.Replace(img4, id, qid, 1) {
		t.Errorf("copied chapter image %v", c)
	}
	// B cannot take A's chapter image.
	r := e.wantErr(e.req("POST", "/api/productions.json", e.keyB, map[string]any{"chapters": []any{chapter("00:00:01", "Theft", img1)}}), 400, "validation_failed")
	if r.FormErrors["chapters.0.image"] == "" {
		t.Errorf("form_errors %v", r.FormErrors)
	}
	// Removing the chapters removes the stored images.
	e.must(e.req("POST", "/api/production/"+id+".json", e.keyA, map[string]any{"reset_data": true}))
	if list, _ := e.blobs.List(context.Background(), production.ChapterImagePrefix(id)); len(list) != 0 {
		t.Errorf("chapter images left after reset_data: %v", list)
	}
}
