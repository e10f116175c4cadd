package httpapi_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/transport/httpapi"
)

func TestProductionLifecycle(t *testing.T) {
	// Intros given by URL are fetched when saved: from this server.
	intro := makeWAV(t, 1, 44100, 0.5, audio.Tags{})
	media := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(intro) }))
	defer media.Close()
	e := newEnv(t, func(c *httpapi.Config) { c.Fetcher = loopbackFetcher(1 << 20) })
	id := e.create(e.keyA, map[string]any{
		"metadata":     map[string]any{"title": "Ep 1", "track": 3, "tags": []string{"a", "b"}},
		"output_files": []any{map[string]any{"format": "mp3"}},
		"algorithms":   map[string]any{"loudnesstarget": -16},
	})
	p := e.must(e.req("GET", "/api/production/"+id+".json", e.keyA, nil)).obj(t)
	if get(p, "metadata.title") != "Ep 1" || get(p, "metadata.track") != "3" || get(p, "output_files.0.bitrate") != 96.0 {
		t.Errorf("created production: %v", p)
	}
	if p["status"] != 9.0 || p["start_allowed"] != false || p["change_allowed"] != true {
		t.Errorf("status %v start_allowed %v change_allowed %v", p["status"], p["start_allowed"], p["change_allowed"])
	}
	if p["status_page"] != e.base+"/production/"+id+"/status/" || p["edit_page"] != e.base+"/production/"+id+"/edit/" {
		t.Errorf("pages %v %v", p["status_page"], p["edit_page"])
	}

	// Update appends output files and merges metadata.
	p = e.must(e.req("POST", "/api/production/"+id+".json", e.keyA, map[string]any{
		"output_files": []any{map[string]any{"format": "flac"}}, "metadata": map[string]any{"artist": "X"}, "webhook": "https://hook.example.org/x",
	})).obj(t)
	if n := len(p["output_files"].([]any)); n != 2 || get(p, "metadata.title") != "Ep 1" || get(p, "metadata.artist") != "X" || p["webhook"] != "https://hook.example.org/x" {
		t.Errorf("after update: %d outputs, %v", n, p)
	}

	// Every sub-command.
	svc := storage.Service{Owner: e.userA.ID, Type: "ftp", DisplayName: "My FTP", Incoming: true, Outgoing: true, Config: []byte(`{"host":"ftp.example.org","password":"secret"}`)}
	if err := e.store.CreateService(context.Background(), &svc); err != nil {
		t.Fatal(err)
	}
	asr := storage.Service{Owner: e.userA.ID, Type: "whisper", DisplayName: "Whisper", Config: []byte(`{"base_url":"https://asr.example.org/v1"}`)}
	if err := e.store.CreateService(context.Background(), &asr); err != nil {
		t.Fatal(err)
	}
	cmds := []struct {
		cmd   string
		body  any
		check func(map[string]any) bool
	}{
		{"metadata", map[string]any{"album": "Alb", "year": "2025"}, func(p map[string]any) bool {
			return get(p, "metadata.album") == "Alb" && get(p, "metadata.year") == "2025"
		}},
		{"output_files", []any{map[string]any{"format": "opus", "bitrate": 64}}, func(p map[string]any) bool { return get(p, "output_files.2.format") == "opus" }},
		{"outgoing_services", []any{map[string]any{"uuid": svc.UUID}}, func(p map[string]any) bool {
			return get(p, "outgoing_services.0.display_name") == "My FTP" && get(p, "outgoing_services.0.type") == "ftp"
		}},
		{"algorithms", map[string]any{"denoise": true, "leveler": false}, func(p map[string]any) bool {
			return get(p, "algorithms.denoise") == true && get(p, "algorithms.leveler") == false && get(p, "algorithms.loudnesstarget") == -16.0
		}},
		{"chapters", []any{map[string]any{"start": "00:01:00", "title": "Two"}, map[string]any{"start": "0", "title": "One"}}, func(p map[string]any) bool {
			return get(p, "chapters.0.title") == "One" && get(p, "chapters.1.start_sec") == 60.0
		}},
		{"multi_input_files", []any{map[string]any{"type": "intro", "id": "i1", "input_file": media.URL + "/jingle.wav"}}, func(p map[string]any) bool {
			return get(p, "multi_input_files.0.id") == "i1" && get(p, "multi_input_files.0.input_file") == "jingle.wav" &&
				get(p, "multi_input_files.0.input_channels") == 1.0 && get(p, "multi_input_files.0.input_length") == 0.5
		}},
		{"speech_recognition", map[string]any{"uuid": asr.UUID, "language": "en-US"}, func(p map[string]any) bool {
			return get(p, "speech_recognition.type") == "whisper" && slices.ContainsFunc(p["output_files"].([]any), func(o any) bool { return o.(map[string]any)["format"] == "subtitle" })
		}},
		{"webhook", `"https://hook.example.org/y"`, func(p map[string]any) bool { return p["webhook"] == "https://hook.example.org/y" }},
		{"webhook", map[string]any{"webhook": "https://hook.example.org/z"}, func(p map[string]any) bool { return p["webhook"] == "https://hook.example.org/z" }},
	}
	for _, c := range cmds {
		p := e.must(e.req("POST", "/api/production/"+id+"/"+c.cmd+".json", e.keyA, c.body)).obj(t)
		if !c.check(p) {
			t.Errorf("%s: unexpected result %v", c.cmd, p)
		}
	}
	// Deletes of lists.
	for _, l := range []string{"output_files", "chapters", "multi_input_files", "speech_recognition", "webhook"} {
		p := e.must(e.req("DELETE", "/api/production/"+id+"/"+l+".json", e.keyA, nil)).obj(t)
		switch v := p[l].(type) {
		case []any:
			if len(v) != 0 {
				t.Errorf("DELETE %s left %v", l, v)
			}
		case nil:
		default:
			t.Errorf("DELETE %s left %v", l, v)
		}
	}
	// Status.
	st := e.must(e.req("GET", "/api/production/"+id+"/status.json", e.keyA, nil)).obj(t)
	if st["status"] != 9.0 || st["status_string"] != "Incomplete" {
		t.Errorf("status %v", st)
	}
	// Delete.
	d := e.must(e.req("DELETE", "/api/production/"+id+".json", e.keyA, nil)).obj(t)
	if d["uuid"] != id {
		t.Errorf("delete answered %v", d)
	}
	e.wantErr(e.req("GET", "/api/production/"+id+".json", e.keyA, nil), 404, "not_found")
}

func TestValidationErrors(t *testing.T) {
	e := newEnv(t)
	r := e.wantErr(e.req("POST", "/api/productions.json", e.keyA, map[string]any{
		"output_files": []any{map[string]any{"format": "mp3", "bitrate": 100}},
		"algorithms":   map[string]any{"loudnesstarget": -17},
	}), 400, "validation_failed")
	if r.FormErrors["output_files.0.bitrate"] == "" || r.FormErrors["algorithms.loudnesstarget"] == "" {
		t.Errorf("form_errors %v", r.FormErrors)
	}
	// Type errors are form errors too.
	r = e.wantErr(e.req("POST", "/api/productions.json", e.keyA, `{"metadata": {"title": 5}}`), 400, "validation_failed")
	if r.FormErrors["metadata.title"] == "" {
		t.Errorf("form_errors %v", r.FormErrors)
	}
	e.wantErr(e.req("POST", "/api/productions.json", e.keyA, `{"metadata": `), 400, "malformed_json")
	e.wantErr(e.req("POST", "/api/productions.json", e.keyA, `[1,2]`), 400, "malformed_json")
	e.wantErr(e.req("POST", "/api/presets.json", e.keyA, map[string]any{}), 400, "validation_failed")
	e.wantErr(e.req("POST", "/api/productions.json", e.keyA, map[string]any{"preset": "nope"}), 400, "validation_failed")
	e.wantErr(e.req("POST", "/api/productions.json", e.keyA, map[string]any{"service": "nope", "input_file": "a.wav"}), 400, "validation_failed")
	e.wantErr(e.req("GET", "/api/productions.json?limit=x", e.keyA, nil), 400, "validation_failed")
}

func TestPresetsAndCreateFromPreset(t *testing.T) {
	e := newEnv(t)
	pr := e.must(e.req("POST", "/api/presets.json", e.keyA, map[string]any{
		"preset_name":  "Podcast",
		"metadata":     map[string]any{"artist": "Preset Artist", "album": "Preset Album"},
		"output_files": []any{map[string]any{"format": "aac"}},
		"algorithms":   map[string]any{"loudnesstarget": -23, "denoise": true},
		"webhook":      "https://hook.example.org/p",
	})).obj(t)
	pid := pr["uuid"].(string)
	if get(pr, "output_files.0.size") != nil || get(pr, "output_files.0.download_url") != "" || get(pr, "output_files.0.outgoing_service_urls") == nil {
		t.Errorf("preset output file shape: %v", pr["output_files"])
	}
	// Preset update, sub-command, delete list.
	pr = e.must(e.req("POST", "/api/preset/"+pid+".json", e.keyA, map[string]any{"preset_name": "Podcast 2"})).obj(t)
	if pr["preset_name"] != "Podcast 2" {
		t.Errorf("preset_name %v", pr["preset_name"])
	}
	pr = e.must(e.req("POST", "/api/preset/"+pid+"/algorithms.json", e.keyA, map[string]any{"maxpeak": -1})).obj(t)
	if get(pr, "algorithms.maxpeak") != -1.0 || get(pr, "algorithms.loudnesstarget") != -23.0 {
		t.Errorf("preset algorithms %v", pr["algorithms"])
	}
	e.wantErr(e.req("POST", "/api/preset/"+pid+"/chapters.json", e.keyA, []any{map[string]any{"start": "0", "title": "x"}}), 400, "validation_failed")

	// A production from the preset: preset values, request overrides.
	p := e.must(e.req("POST", "/api/productions.json", e.keyA, map[string]any{
		"preset": pid, "metadata": map[string]any{"album": "Mine"},
	})).obj(t)
	if get(p, "metadata.artist") != "Preset Artist" || get(p, "metadata.album") != "Mine" ||
		get(p, "algorithms.loudnesstarget") != -23.0 || get(p, "output_files.0.format") != "aac" || p["webhook"] != "https://hook.example.org/p" {
		t.Errorf("production from preset: %v", p)
	}
	// reset_data together with a preset is a form error.
	r := e.wantErr(e.req("POST", "/api/production/"+p["uuid"].(string)+".json", e.keyA, map[string]any{"preset": pid, "reset_data": true}), 400, "validation_failed")
	if r.FormErrors["preset"] == "" {
		t.Errorf("form_errors %v", r.FormErrors)
	}
	// reset_data alone gives a fresh production with the fields sent.
	p = e.must(e.req("POST", "/api/production/"+p["uuid"].(string)+".json", e.keyA, map[string]any{"reset_data": true, "metadata": map[string]any{"title": "T"}})).obj(t)
	if get(p, "metadata.artist") != "" || get(p, "metadata.title") != "T" || len(p["output_files"].([]any)) != 0 {
		t.Errorf("after reset_data: %v", p)
	}
	e.must(e.req("DELETE", "/api/preset/"+pid+"/output_files.json", e.keyA, nil))
	// The production path deletes presets too.
	e.must(e.req("DELETE", "/api/production/"+pid+".json", e.keyA, nil))
	e.wantErr(e.req("GET", "/api/preset/"+pid+".json", e.keyA, nil), 404, "not_found")
}

func TestList(t *testing.T) {
	e := newEnv(t)
	var ids []string
	for i := range 12 {
		ids = append(ids, e.create(e.keyA, map[string]any{
			"metadata":     map[string]any{"title": fmt.Sprintf("P%02d", i)},
			"output_files": []any{map[string]any{"format": "mp3"}},
		}))
	}
	slices.Reverse(ids) // newest first
	l := e.must(e.req("GET", "/api/productions.json", e.keyA, nil)).list(t)
	if len(l) != 10 || l[0].(map[string]any)["uuid"] != ids[0] {
		t.Fatalf("default list: %d entries", len(l))
	}
	if l := e.must(e.req("GET", "/api/productions.json?limit=50", e.keyA, nil)).list(t); len(l) != 10 {
		t.Errorf("limit=50 gave %d, want the cap 10", len(l))
	}
	l = e.must(e.req("GET", "/api/productions.json?limit=3&offset=2", e.keyA, nil)).list(t)
	if len(l) != 3 || l[0].(map[string]any)["uuid"] != ids[2] || l[2].(map[string]any)["uuid"] != ids[4] {
		t.Errorf("limit=3&offset=2: %v", l)
	}
	l = e.must(e.req("GET", "/api/productions.json?uuids_only=1&limit=50", e.keyA, nil)).list(t)
	if len(l) != 12 {
		t.Fatalf("uuids_only: %d", len(l))
	}
	for i, v := range l {
		if v != ids[i] {
			t.Errorf("uuids_only[%d] = %v, want %s", i, v, ids[i])
		}
	}
	l = e.must(e.req("GET", "/api/productions.json?minimal_data=1&limit=11", e.keyA, nil)).list(t)
	if len(l) != 11 {
		t.Errorf("minimal_data limit=11: %d", len(l))
	}
	m := l[0].(map[string]any)
	if keys := sortedKeys(m); !slices.Equal(keys, []string{"creation_time", "is_multitrack", "metadata", "output_files", "status", "uuid"}) {
		t.Errorf("minimal production keys %v", keys)
	}
	if keys := sortedKeys(m["metadata"].(map[string]any)); !slices.Equal(keys, []string{"title"}) {
		t.Errorf("minimal metadata keys %v", keys)
	}
	if keys := sortedKeys(get(m, "output_files.0").(map[string]any)); !slices.Equal(keys, []string{"bitrate", "download_url", "filename", "format"}) {
		t.Errorf("minimal output keys %v", keys)
	}
	if get(m, "metadata.title") != "P11" || get(m, "output_files.0.filename") != "output.mp3" {
		t.Errorf("minimal values %v", m)
	}
	// Presets.
	for i := range 2 {
		e.must(e.req("POST", "/api/presets.json", e.keyA, map[string]any{"preset_name": fmt.Sprint("pr", i), "metadata": map[string]any{"title": "t"}}))
	}
	l = e.must(e.req("GET", "/api/presets.json?minimal_data=1", e.keyA, nil)).list(t)
	if len(l) != 2 || l[0].(map[string]any)["preset_name"] != "pr1" {
		t.Fatalf("preset list %v", l)
	}
	if keys := sortedKeys(l[0].(map[string]any)); !slices.Equal(keys, []string{"creation_time", "is_multitrack", "metadata", "preset_name", "uuid"}) {
		t.Errorf("minimal preset keys %v", keys)
	}
	if l := e.must(e.req("GET", "/api/presets.json?uuids_only=1", e.keyA, nil)).list(t); len(l) != 2 {
		t.Errorf("preset uuids %v", l)
	}
	// B sees none of it.
	if l := e.must(e.req("GET", "/api/productions.json?uuids_only=1", e.keyB, nil)).list(t); len(l) != 0 {
		t.Errorf("B lists %v", l)
	}
}

func sortedKeys(m map[string]any) []string {
	var k []string
	for x := range m {
		k = append(k, x)
	}
	slices.Sort(k)
	return k
}

func TestUploadProbeAndDownload(t *testing.T) {
	e := newEnv(t)
	id := e.create(e.keyA, map[string]any{"metadata": map[string]any{"artist": "Set"}})
	data := makeWAV(t, 2, 44100, 1.5, audio.Tags{Title: "From Tag", Artist: "Tag Artist"})
	p := e.must(e.upload("/api/production/"+id+"/upload.json", e.keyA,
		part{field: "input_file", name: "My Ep.wav", data: data},
		part{field: "image", name: "cover.png", data: makePNG(t, 640, 480)},
	)).obj(t)
	if p["format"] != "wav" || p["channels"] != 2.0 || p["samplerate"] != 44100.0 || p["input_file"] != "My Ep.wav" {
		t.Errorf("probe fields: format %v channels %v samplerate %v input_file %v", p["format"], p["channels"], p["samplerate"], p["input_file"])
	}
	if l, _ := p["length"].(float64); l < 1.49 || l > 1.51 || p["length_timestring"] != "00:00:01.500" {
		t.Errorf("length %v %v", p["length"], p["length_timestring"])
	}
	if get(p, "metadata.title") != "From Tag" || get(p, "metadata.artist") != "Set" {
		t.Errorf("tags import: %v", p["metadata"])
	}
	if p["status"] != 10.0 || p["start_allowed"] != true {
		t.Errorf("after upload status %v start_allowed %v", p["status"], p["start_allowed"])
	}
	img, _ := p["image"].(string)
	thumb, _ := p["thumbnail"].(string)
	if img != e.base+"/api/download/audio-upload/"+id+"/cover.png" || !strings.HasSuffix(thumb, "/thumb-cover.png.png") {
		t.Fatalf("image %q thumbnail %q", img, thumb)
	}

	// The thumbnail is a 200x200 PNG.
	r := e.req("GET", strings.TrimPrefix(thumb, e.base), e.keyA, nil)
	if r.Status != 200 || r.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("thumbnail: %d %s", r.Status, r.Header.Get("Content-Type"))
	}
	if w, h := pngSize(t, r.Raw); w != 200 || h != 200 {
		t.Errorf("thumbnail %dx%d", w, h)
	}

	// Range download of the input, authenticated with ?bearer_token=.
	u := e.base + "/api/download/audio-upload/" + id + "/My%20Ep.wav?bearer_token=" + e.keyA
	req, _ := http.NewRequest("GET", u, nil)
	req.Header.Set("Range", "bytes=10-29")
	r = e.do(req)
	if r.Status != http.StatusPartialContent || r.Header.Get("Content-Range") != fmt.Sprintf("bytes 10-29/%d", len(data)) || string(r.Raw) != string(data[10:30]) {
		t.Errorf("range: %d %q %d bytes", r.Status, r.Header.Get("Content-Range"), len(r.Raw))
	}
	// Whole file.
	r = e.req("GET", "/api/download/audio-upload/"+id+"/My%20Ep.wav", e.keyA, nil)
	if r.Status != 200 || len(r.Raw) != len(data) {
		t.Errorf("full download %d, %d bytes", r.Status, len(r.Raw))
	}
	// An output the engine wrote (size set) gets its download_url.
	e.writeOutput(id, "out.mp3", []byte("ID3 fake mp3"))
	p = e.must(e.req("GET", "/api/production/"+id+".json", e.keyA, nil)).obj(t)
	if get(p, "output_files.0.download_url") != e.base+"/api/download/audio-result/"+id+"/out.mp3" || get(p, "output_files.0.size_string") != "12 B" {
		t.Errorf("output file %v", get(p, "output_files.0"))
	}
	if r := e.req("GET", "/api/download/audio-result/"+id+"/out.mp3", e.keyA, nil); r.Status != 200 || string(r.Raw) != "ID3 fake mp3" {
		t.Errorf("result download %d %q", r.Status, r.Raw)
	}
	e.wantErr(e.req("GET", "/api/download/audio-result/"+id+"/missing.mp3", e.keyA, nil), 404, "not_found")
	e.wantErr(e.req("GET", "/api/download/other/"+id+"/x", e.keyA, nil), 404, "not_found")

	// Upload errors.
	e.wantErr(e.upload("/api/production/"+id+"/upload.json", e.keyA, part{field: "input_file", name: "x.wav", data: []byte("not audio at all, just text")}), 400, "validation_failed")
	e.wantErr(e.upload("/api/production/"+id+"/upload.json", e.keyA, part{field: "image", name: "x.png", data: []byte("nope")}), 400, "validation_failed")
	e.wantErr(e.upload("/api/production/"+id+"/upload.json", e.keyA, part{field: "bogus", name: "x.wav", data: data}), 400, "validation_failed")
	e.wantErr(e.upload("/api/production/"+id+"/upload.json", e.keyA, field("input_file", "text")), 400, "validation_failed")
	e.wantErr(e.upload("/api/production/"+id+"/upload.json", e.keyA), 400, "bad_request")
	e.wantErr(e.req("POST", "/api/production/"+id+"/upload.json", e.keyA, `{}`), 415, "unsupported_media_type")
	// A failed upload leaves the stored files alone, also when it has the
	// same names and one of its two files is good.
	e.wantErr(e.upload("/api/production/"+id+"/upload.json", e.keyA,
		part{field: "image", name: "cover.png", data: makePNG(t, 50, 50)},
		part{field: "input_file", name: "My Ep.wav", data: []byte("RIFF broken")}), 400, "validation_failed")
	e.wantErr(e.upload("/api/production/"+id+"/upload.json", e.keyA, part{field: "image", name: "cover.png", data: []byte("nope")}), 400, "validation_failed")
	if r := e.req("GET", "/api/download/audio-upload/"+id+"/My%20Ep.wav", e.keyA, nil); r.Status != 200 || !bytes.Equal(r.Raw, data) {
		t.Errorf("input after failed uploads: %d, %d bytes", r.Status, len(r.Raw))
	}
	if r := e.req("GET", strings.TrimPrefix(img, e.base), e.keyA, nil); r.Status != 200 {
		t.Errorf("cover after failed uploads: %d", r.Status)
	} else if w, h := pngSize(t, r.Raw); w != 640 || h != 480 {
		t.Errorf("cover after failed uploads is %dx%d, want the 640x480 one", w, h)
	}
	if r := e.req("GET", strings.TrimPrefix(thumb, e.base), e.keyA, nil); r.Status != 200 {
		t.Errorf("thumbnail after failed uploads: %d", r.Status)
	}
	blobs, _ := e.blobs.List(context.Background(), production.ProductionPrefix(id))
	for _, b := range blobs {
		if strings.Contains(b.Key, "staged-") {
			t.Errorf("staging blob left: %s", b.Key)
		}
	}
	// The same name again with a good file replaces it.
	data2 := makeWAV(t, 1, 22050, 0.5, audio.Tags{})
	p = e.must(e.upload("/api/production/"+id+"/upload.json", e.keyA, part{field: "input_file", name: "My Ep.wav", data: data2})).obj(t)
	if p["channels"] != 1.0 || p["samplerate"] != 22050.0 {
		t.Errorf("replaced input probes as %v channels at %v Hz", p["channels"], p["samplerate"])
	}
	if r := e.req("GET", "/api/download/audio-upload/"+id+"/My%20Ep.wav", e.keyA, nil); !bytes.Equal(r.Raw, data2) {
		t.Errorf("replaced input: %d bytes, want %d", len(r.Raw), len(data2))
	}
}

// writeOutput stores an output file as the engine does: the blob and the
// output entry with its size.
func (e *env) writeOutput(id, name string, data []byte) {
	e.t.Helper()
	ctx := context.Background()
	w, err := e.blobs.Create(ctx, production.OutputKey(id, name))
	if err != nil {
		e.t.Fatal(err)
	}
	w.Write(data)
	if err := w.Close(); err != nil {
		e.t.Fatal(err)
	}
	e.must(e.req("POST", "/api/production/"+id+"/output_files.json", e.keyA, []any{map[string]any{"format": "mp3", "filename": name}}))
	res, err := e.store.GetResource(ctx, e.userA.ID, storage.KindProduction, id)
	if err != nil {
		e.t.Fatal(err)
	}
	doc := strings.Replace(string(res.Doc), `"size":null`, fmt.Sprintf(`"size":%d`, len(data)), 1)
	res.Doc = []byte(doc)
	if err := e.store.UpdateResource(ctx, &res); err != nil {
		e.t.Fatal(err)
	}
}

func TestMultitrackAndIntroUpload(t *testing.T) {
	e := newEnv(t)
	id := e.create(e.keyA, map[string]any{
		"is_multitrack":     true,
		"multi_input_files": []any{map[string]any{"type": "multitrack", "id": "host"}, map[string]any{"type": "multitrack", "id": "guest"}},
	})
	p := e.must(e.upload("/api/production/"+id+"/upload.json", e.keyA,
		part{field: "host", name: "host.wav", data: makeWAV(t, 1, 48000, 0.5, audio.Tags{})},
		part{field: "intro_file", name: "jingle.wav", data: makeWAV(t, 2, 48000, 2, audio.Tags{})},
	)).obj(t)
	if get(p, "multi_input_files.0.input_file") != "host.wav" || get(p, "multi_input_files.0.input_channels") != 1.0 || get(p, "multi_input_files.0.input_length") != 0.5 {
		t.Errorf("track: %v", get(p, "multi_input_files.0"))
	}
	if get(p, "multi_input_files.2.type") != "intro" || get(p, "multi_input_files.2.input_length") != 2.0 {
		t.Errorf("intro: %v", p["multi_input_files"])
	}
	if p["start_allowed"] != true {
		t.Errorf("multitrack with a track should be startable")
	}
	// A second intro upload replaces the first.
	p = e.must(e.upload("/api/production/"+id+"/upload.json", e.keyA, part{field: "intro_file", name: "jingle2.wav", data: makeWAV(t, 2, 48000, 1, audio.Tags{})})).obj(t)
	if n := len(p["multi_input_files"].([]any)); n != 3 || get(p, "multi_input_files.2.input_file") != "jingle2.wav" {
		t.Errorf("intro replace: %v", p["multi_input_files"])
	}
	if r := e.req("GET", "/api/download/audio-upload/"+id+"/intro/jingle2.wav", e.keyA, nil); r.Status != 200 {
		t.Errorf("intro download %d", r.Status)
	}
	if r := e.req("GET", "/api/download/audio-upload/"+id+"/intro/jingle.wav", e.keyA, nil); r.Status != 404 {
		t.Errorf("replaced intro still served: %d", r.Status)
	}
}

func TestPresetSubcommandsAndDeletes(t *testing.T) {
	e := newEnv(t)
	svc := storage.Service{Owner: e.userA.ID, Type: "s3", DisplayName: "Bucket", Outgoing: true}
	if err := e.store.CreateService(context.Background(), &svc); err != nil {
		t.Fatal(err)
	}
	asr := storage.Service{Owner: e.userA.ID, Type: "pocketsphinx", DisplayName: "PocketSphinx"}
	if err := e.store.CreateService(context.Background(), &asr); err != nil {
		t.Fatal(err)
	}
	pid := e.must(e.req("POST", "/api/presets.json", e.keyA, map[string]any{"preset_name": "P"})).obj(t)["uuid"].(string)
	for _, c := range []struct {
		cmd  string
		body any
		key  string
	}{
		{"metadata", map[string]any{"title": "x"}, "metadata"},
		{"output_files", []any{map[string]any{"format": "wav"}}, "output_files"},
		{"outgoing_services", []any{map[string]any{"uuid": svc.UUID}}, "outgoing_services"},
		{"multi_input_files", []any{map[string]any{"type": "intro", "id": "i", "input_file": "https://x.example.org/i.wav"}}, "multi_input_files"},
		{"speech_recognition", map[string]any{"uuid": asr.UUID}, "speech_recognition"},
		{"webhook", `{"url": "https://hook.example.org/p"}`, "webhook"},
	} {
		pr := e.must(e.req("POST", "/api/preset/"+pid+"/"+c.cmd+".json", e.keyA, c.body)).obj(t)
		if v := pr[c.key]; v == nil || fmt.Sprint(v) == "[]" {
			t.Errorf("%s not set: %v", c.cmd, pr)
		}
	}
	// Preset intros must come from a service or URL.
	r := e.wantErr(e.req("POST", "/api/preset/"+pid+"/multi_input_files.json", e.keyA, []any{map[string]any{"type": "outro", "id": "o"}}), 400, "validation_failed")
	if r.FormErrors["multi_input_files.1.input_file"] == "" {
		t.Errorf("form_errors %v", r.FormErrors)
	}
	e.wantErr(e.req("POST", "/api/preset/"+pid+"/outgoing_services.json", e.keyA, []any{map[string]any{"uuid": "nope"}}), 400, "validation_failed")
	for _, l := range []string{"output_files", "multi_input_files", "speech_recognition", "webhook"} {
		pr := e.must(e.req("DELETE", "/api/preset/"+pid+"/"+l+".json", e.keyA, nil)).obj(t)
		if v := pr[l]; v != nil && fmt.Sprint(v) != "[]" {
			t.Errorf("DELETE %s left %v", l, v)
		}
	}
	e.wantErr(e.req("DELETE", "/api/preset/"+pid+"/chapters.json", e.keyA, nil), 400, "validation_failed")
	e.wantErr(e.req("DELETE", "/api/preset/"+pid+"/nothing.json", e.keyA, nil), 404, "not_found")
	e.wantErr(e.req("POST", "/api/preset/"+pid+"/start.json", e.keyA, nil), 404, "not_found")
	e.wantErr(e.req("GET", "/api/preset/"+pid+"/status.json", e.keyA, nil), 405, "method_not_allowed")
}

func TestBasicAuth(t *testing.T) {
	e := newEnv(t)
	u := e.userA
	hash, err := storage.HashPasswordIterations("s3cret pass", 1000)
	if err != nil {
		t.Fatal(err)
	}
	u.PasswordHash = hash
	if err := e.store.UpdateUser(context.Background(), u); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("GET", e.base+"/api/user.json", nil)
	req.SetBasicAuth("alice", "s3cret pass")
	if r := e.do(req); r.Status != 200 || r.obj(t)["username"] != "alice" {
		t.Errorf("basic auth: %d %s", r.Status, r.Raw)
	}
	req, _ = http.NewRequest("GET", e.base+"/api/user.json", nil)
	req.SetBasicAuth("alice", "wrong")
	if r := e.do(req); r.Status != 401 {
		t.Errorf("wrong password: %d", r.Status)
	}
	if r := e.req("GET", "/api/user.json?bearer_token="+e.keyA, "", nil); r.Status != 200 {
		t.Errorf("bearer_token: %d", r.Status)
	}
}
