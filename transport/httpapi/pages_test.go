package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"io"
	"math"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/transport/webhook"
)

const testPassword = "correct horse battery staple"

// browser is an HTTP client with cookies that does not follow redirects,
// so tests see where a page sends the user.
type browser struct {
	e *env
	c *http.Client
}

func (e *env) browser() *browser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		e.t.Fatal(err)
	}
	return &browser{e: e, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}}
}

// page is a fetched page.
type page struct {
	status int
	header http.Header
	body   string
}

func (b *browser) do(req *http.Request) page {
	b.e.t.Helper()
	res, err := b.c.Do(req)
	if err != nil {
		b.e.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		b.e.t.Fatal(err)
	}
	return page{res.StatusCode, res.Header, string(raw)}
}

func (b *browser) get(path string) page {
	b.e.t.Helper()
	req, err := http.NewRequest("GET", b.e.base+path, nil)
	if err != nil {
		b.e.t.Fatal(err)
	}
	return b.do(req)
}

func (b *browser) postForm(path string, form url.Values) page {
	b.e.t.Helper()
	req, err := http.NewRequest("POST", b.e.base+path, strings.NewReader(form.Encode()))
	if err != nil {
		b.e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req)
}

func (b *browser) postMultipart(path string, parts ...part) page {
	b.e.t.Helper()
	body, ct := multipartBody(b.e.t, parts...)
	req, err := http.NewRequest("POST", b.e.base+path, body)
	if err != nil {
		b.e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", ct)
	return b.do(req)
}

var csrfRE = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

func csrfOf(t *testing.T, p page) string {
	t.Helper()
	m := csrfRE.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no csrf_token in the page:\n%s", p.body)
	}
	return html.UnescapeString(m[1])
}

// login logs u in through the real login form of package auth.
func (b *browser) login(u storage.User) {
	t := b.e.t
	t.Helper()
	// A cheap hash: the real cost makes every login a second of work
	// under the race detector.
	hash, err := storage.HashPasswordIterations(testPassword, 1000)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := b.e.store.GetUserByUsername(context.Background(), u.Username)
	if err != nil {
		t.Fatal(err)
	}
	stored.PasswordHash = hash
	if err := b.e.store.UpdateUser(context.Background(), stored); err != nil {
		t.Fatal(err)
	}
	lp := b.get("/account/login/?next=/upload/")
	if lp.status != 200 {
		t.Fatalf("login page: %d", lp.status)
	}
	res := b.postForm("/account/login/", url.Values{"csrf_token": {csrfOf(t, lp)}, "next": {"/upload/"},
		"username": {u.Username}, "password": {testPassword}})
	if res.status != http.StatusSeeOther || res.header.Get("Location") != "/upload/" {
		t.Fatalf("login: %d %s\n%s", res.status, res.header.Get("Location"), res.body)
	}
}

// finished stores a production of owner as the engine leaves it: Done,
// with metadata, chapters, a WAV output in the blobs and its size. It
// returns the uuid and the output's bytes.
func (e *env) finished(key string) (string, []byte) {
	t := e.t
	t.Helper()
	ctx := context.Background()
	id := e.create(key, map[string]any{
		"metadata":     map[string]any{"title": "Episode 42 <Live>", "artist": "The Hosts", "album": "Season 3", "year": 2026, "tags": "news, tech"},
		"chapters":     []map[string]any{{"start": "00:00:00", "title": "Intro"}, {"start": "00:01:30.500", "title": "Main topic"}},
		"output_files": []map[string]any{{"format": "wav"}, {"format": "mp3", "bitrate": 128}},
	})
	cover := e.must(e.upload("/api/production/"+id+"/upload.json", key, part{field: "image", name: "cover.png", data: makePNG(t, 64, 64)})).obj(t)
	// The cover doubles as the picture of a third chapter.
	e.must(e.req("POST", "/api/production/"+id+".json", key, map[string]any{
		"chapters": []map[string]any{{"start": "00:02:00", "title": "Pictured", "image": cover["image"]}}}))
	out := makeWAV(t, 1, 8000, 0.5, audio.Tags{})
	owner := e.userA.ID
	if key == e.keyB {
		owner = e.userB.ID
	}
	res, err := e.store.GetResource(ctx, owner, storage.KindProduction, id)
	if err != nil {
		t.Fatal(err)
	}
	p, err := production.DecodeDocument(res)
	if err != nil {
		t.Fatal(err)
	}
	// The output names derive from the input's name.
	p.InputFile = "talk.wav"
	w, err := e.blobs.Create(ctx, production.OutputKey(id, p.OutputFilename(0)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(out); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	wf, err := e.blobs.Create(ctx, production.OutputKey(id, "waveform.png"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wf.Write(makePNG(t, 300, 60)); err != nil {
		t.Fatal(err)
	}
	if err := wf.Close(); err != nil {
		t.Fatal(err)
	}
	p.WaveformImage = "waveform.png"
	size := int64(len(out))
	p.OutputFiles[0].Size = &size
	p.Status = production.StatusDone
	p.Length = 0.5
	p.SetWarning(production.StatusAudioProcessing, "the input is very short")
	if res.Doc, err = production.EncodeDocument(p); err != nil {
		t.Fatal(err)
	}
	res.Status = int(p.Status)
	if err := e.store.UpdateResource(ctx, &res); err != nil {
		t.Fatal(err)
	}
	return id, out
}

func wantContains(t *testing.T, p page, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(p.body, s) {
			t.Errorf("page (HTTP %d) lacks %q:\n%s", p.status, s, p.body)
		}
	}
}

func TestPagesRedirectToLogin(t *testing.T) {
	e := newEnv(t)
	id := e.create(e.keyA, map[string]any{})
	b := e.browser()
	for _, path := range []string{"/production/" + id + "/status/", "/production/" + id + "/edit/", "/upload/",
		"/files/audio-result/" + id + "/x.wav"} {
		p := b.get(path)
		loc := p.header.Get("Location")
		if p.status != http.StatusSeeOther || !strings.HasPrefix(loc, e.base+"/account/login/?") {
			t.Errorf("GET %s: %d %q, want 303 to the login page", path, p.status, loc)
			continue
		}
		u, _ := url.Parse(loc)
		if got := u.Query().Get("next"); got != path {
			t.Errorf("GET %s: next=%q", path, got)
		}
	}
	for _, path := range []string{"/productions/"} {
		if p := b.get(path); p.status != http.StatusSeeOther || !strings.HasPrefix(p.header.Get("Location"), e.base+"/account/login/?") {
			t.Errorf("GET %s: %d %q, want 303 to the login page", path, p.status, p.header.Get("Location"))
		}
	}
	// The home page says what the service is and where to log in; a
	// logged-in browser goes on to its productions.
	home := b.get("/")
	wantContains(t, home, "post-produces", "/account/login/?next=%2Fproductions%2F", "audiopost user add")
	b.login(e.userA)
	if p := b.get("/"); p.status != http.StatusSeeOther || p.header.Get("Location") != "/productions/" {
		t.Errorf("GET / logged in: %d %q, want 303 to /productions/", p.status, p.header.Get("Location"))
	}
	b = e.browser()
	// The page's JSON call answers in the API envelope.
	r := e.req("GET", "/production/"+id+"/status.json", "", nil)
	e.wantErr(r, http.StatusUnauthorized, "unauthorized")
	// A form sent without a session is refused, never applied.
	p := b.postForm("/production/"+id+"/edit/", url.Values{"edit": {"1"}, "title": {"hijacked"}})
	if p.status != http.StatusForbidden {
		t.Errorf("POST edit without session: %d", p.status)
	}
	// A wrong bearer token is 401, not a redirect.
	if p := b.get("/production/" + id + "/status/?bearer_token=nope"); p.status != http.StatusUnauthorized {
		t.Errorf("bad bearer_token: %d", p.status)
	}
	m := e.must(e.req("GET", "/api/production/"+id+".json", e.keyA, nil)).obj(t)
	if get(m, "metadata.title") != "" {
		t.Errorf("title changed to %v", get(m, "metadata.title"))
	}
}

func TestPagesStatus(t *testing.T) {
	e := newEnv(t)
	id, wavData := e.finished(e.keyA)
	b := e.browser()
	b.login(e.userA)
	p := b.get("/production/" + id + "/status/")
	if p.status != 200 {
		t.Fatalf("status page: %d\n%s", p.status, p.body)
	}
	if csp := p.header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("CSP %q", csp)
	}
	fileURL := "/files/audio-result/" + id + "/"
	wantContains(t, p, "Episode 42 &lt;Live&gt;", "The Hosts", "Season 3", "2026", "news, tech",
		">Done<", "00:01:30.500", "Main topic", "the input is very short",
		fileURL, "WAV 16-bit PCM", production.FormatSize(int64(len(wavData))),
		`<audio controls`, `type="audio/wav"`, "/production/"+id+"/edit/",
		`id="waveform"`, `src="/files/audio-result/`+id+`/waveform.png"`, `src="/files/audio-upload/`+id+`/thumb-cover.png.png"`,
		"Pictured", `<img class="chapter-image" src="/files/audio-upload/`+id+`/chapter-`)
	// The mp3 output has no file yet: listed without a link.
	wantContains(t, p, "(not produced yet)")
	if strings.Contains(p.body, "<script") {
		t.Error("the finished page still polls")
	}
	// Every file link serves the stored bytes to the session.
	links := regexp.MustCompile(`href="(/files/audio-result/[^"]+)"`).FindAllStringSubmatch(p.body, -1)
	if len(links) != 1 {
		t.Fatalf("want one download link, got %v", links)
	}
	dl := b.get(html.UnescapeString(links[0][1]))
	if dl.status != 200 || dl.body != string(wavData) {
		t.Fatalf("download %s: %d, %d bytes, want %d\n%s", links[0][1], dl.status, len(dl.body), len(wavData), dl.body)
	}
	// The JSON status call for the page's script.
	sj := b.get("/production/" + id + "/status.json")
	var env struct {
		Data struct {
			Status       int    `json:"status"`
			StatusString string `json:"status_string"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(sj.body), &env); err != nil || sj.status != 200 || env.Data.Status != 3 || env.Data.StatusString != "Done" {
		t.Errorf("status.json: %d %s", sj.status, sj.body)
	}

	// Another user sees nothing: 404 for the page, the file and the poll.
	other := e.browser()
	other.login(e.userB)
	for _, path := range []string{"/production/" + id + "/status/", "/production/" + id + "/edit/",
		html.UnescapeString(links[0][1]), "/production/" + id + "/status.json"} {
		if p := other.get(path); p.status != http.StatusNotFound || strings.Contains(p.body, "Episode 42") {
			t.Errorf("other user GET %s: %d", path, p.status)
		}
	}
	if p := b.get("/production/" + storage.NewUUID() + "/status/"); p.status != http.StatusNotFound {
		t.Errorf("unknown uuid: %d", p.status)
	}
}

func TestPagesBearerToken(t *testing.T) {
	e := newEnv(t)
	id, wavData := e.finished(e.keyA)
	b := e.browser()
	q := "?bearer_token=" + url.QueryEscape(e.keyA)
	p := b.get("/production/" + id + "/status/" + q)
	if p.status != 200 {
		t.Fatalf("status page with bearer_token: %d", p.status)
	}
	if rp := p.header.Get("Referrer-Policy"); rp != "no-referrer" {
		t.Errorf("Referrer-Policy %q", rp)
	}
	links := regexp.MustCompile(`href="(/files/audio-result/[^"]+)"`).FindAllStringSubmatch(p.body, -1)
	if len(links) != 1 || !strings.Contains(links[0][1], "bearer_token=") {
		t.Fatalf("links do not carry the token: %v", links)
	}
	if dl := b.get(html.UnescapeString(links[0][1])); dl.status != 200 || dl.body != string(wavData) {
		t.Fatalf("download with bearer_token: %d", dl.status)
	}
	if p := b.get("/production/" + id + "/status/?bearer_token=" + url.QueryEscape(e.keyB)); p.status != http.StatusNotFound {
		t.Errorf("other user's token: %d", p.status)
	}
	// Forms work with the token too, and the session's CSRF token is not
	// valid for them.
	ep := b.get("/production/" + id + "/edit/" + q)
	tok := csrfOf(t, ep)
	r := b.postForm("/production/"+id+"/edit/"+q, url.Values{"csrf_token": {tok}, "edit": {"1"}, "title": {"Via token"}})
	if r.status != http.StatusSeeOther || !strings.Contains(r.header.Get("Location"), "bearer_token=") {
		t.Fatalf("edit with bearer_token: %d %q\n%s", r.status, r.header.Get("Location"), r.body)
	}
	sb := e.browser()
	sb.login(e.userA)
	r = sb.postForm("/production/"+id+"/edit/", url.Values{"csrf_token": {tok}, "edit": {"1"}, "title": {"Cross"}})
	if r.status != http.StatusForbidden {
		t.Errorf("a token-bound CSRF token accepted for the session: %d", r.status)
	}
}

func TestPagesEdit(t *testing.T) {
	e := newEnv(t)
	wavData := makeWAV(t, 1, 8000, 1, audio.Tags{})
	id := e.create(e.keyA, map[string]any{"metadata": map[string]any{"title": "Before", "artist": "Ann"}, "output_files": []map[string]any{{"format": "mp3"}},
		"algorithms": map[string]any{"denoise": true}})
	e.must(e.upload("/api/production/"+id+"/upload.json", e.keyA, part{field: "input_file", name: "in.wav", data: wavData}))
	b := e.browser()
	b.login(e.userA)
	ep := b.get("/production/" + id + "/edit/")
	if ep.status != 200 {
		t.Fatalf("edit page: %d", ep.status)
	}
	// Rendered from the algorithm table: switches, selects, options.
	wantContains(t, ep, `value="Before"`, `name="alg.leveler"`, `name="alg.loudnesstarget"`, `<option value="-23">-23 LUFS</option>`,
		`<option value="-16" selected>`, `name="alg.denoise" value="on" id="alg-denoise" checked`, "Same as Leveler Strength", `id="start"`)
	tok := csrfOf(t, ep)
	apiGet := func() map[string]any {
		return e.must(e.req("GET", "/api/production/"+id+".json", e.keyA, nil)).obj(t)
	}
	form := func(extra url.Values) url.Values {
		f := url.Values{"csrf_token": {tok}, "edit": {"1"}, "title": {"After"}, "artist": {"Ann"}, "year": {"2025"},
			"alg.hipfilter": {"on"}, "alg.normloudness": {"on"}, "alg.denoise": {"on"}, "alg.loudnesstarget": {"-23"}}
		for k, v := range extra {
			f[k] = v
		}
		return f
	}

	// CSRF: missing or wrong tokens change nothing.
	for _, bad := range []string{"", "x" + tok} {
		r := b.postForm("/production/"+id+"/edit/", form(url.Values{"csrf_token": {bad}}))
		if r.status != http.StatusForbidden || !strings.Contains(r.body, "CSRF") {
			t.Errorf("csrf %q: %d", bad, r.status)
		}
	}
	if got := get(apiGet(), "metadata.title"); got != "Before" {
		t.Fatalf("a rejected form changed the title to %v", got)
	}

	// Validation errors are shown on the page, with the user's input kept.
	r := b.postForm("/production/"+id+"/edit/", form(url.Values{"year": {"next year"}, "url": {"not a url"}}))
	if r.status != http.StatusBadRequest {
		t.Fatalf("invalid year: %d\n%s", r.status, r.body)
	}
	wantContains(t, r, `id="err-year"`, `value="next year"`, `value="After"`)
	r = b.postForm("/production/"+id+"/edit/", form(url.Values{"alg.loudnesstarget": {"-99"}}))
	if r.status != http.StatusBadRequest || !strings.Contains(r.body, `id="err-alg-loudnesstarget"`) {
		t.Fatalf("invalid option: %d\n%s", r.status, r.body)
	}
	if got := get(apiGet(), "metadata.title"); got != "Before" {
		t.Fatalf("an invalid form changed the title to %v", got)
	}

	// A valid form is stored and redirects to the status page. Unchecked
	// switches go off; untouched selects stay unset.
	r = b.postForm("/production/"+id+"/edit/", form(nil))
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/production/"+id+"/status/" {
		t.Fatalf("save: %d %q\n%s", r.status, r.header.Get("Location"), r.body)
	}
	m := apiGet()
	if get(m, "metadata.title") != "After" || get(m, "metadata.year") != "2025" {
		t.Errorf("metadata not saved: %v", m["metadata"])
	}
	alg := m["algorithms"].(map[string]any)
	if alg["loudnesstarget"] != float64(-23) || alg["leveler"] != false || alg["denoise"] != true {
		t.Errorf("algorithms not saved: %v", alg)
	}
	for _, k := range []string{"levelerstrength", "compressor", "maxpeak", "levelerstrength_speech"} {
		if _, set := alg[k]; set {
			t.Errorf("untouched %s was set: %v", k, alg)
		}
	}
	if m["status"] != float64(production.StatusNotStarted) {
		t.Fatalf("status %v", m["status"])
	}

	// Start: the production waits for a worker, with its job queued.
	r = b.postForm("/production/"+id+"/edit/", url.Values{"csrf_token": {tok}, "action": {"start"}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("start: %d\n%s", r.status, r.body)
	}
	if m := apiGet(); m["status"] != float64(production.StatusWaiting) || get(m, "metadata.title") != "After" {
		t.Errorf("after start: status %v title %v", m["status"], get(m, "metadata.title"))
	}
	job, err := e.store.Claim(context.Background(), "test-worker", time.Minute)
	if err != nil || job.Production != id {
		t.Errorf("no process job queued: %v %+v", err, job)
	}

	// While a worker processes it, the form is refused with the reason.
	if err := e.store.SetStatus(context.Background(), e.userA.ID, storage.KindProduction, id, int(production.StatusAudioProcessing)); err != nil {
		t.Fatal(err)
	}
	ep = b.get("/production/" + id + "/edit/")
	wantContains(t, ep, "being processed")
	if strings.Contains(ep.body, `id="start"`) || strings.Contains(ep.body, `id="save"`) {
		t.Error("save or start offered while processing")
	}
	r = b.postForm("/production/"+id+"/edit/", form(url.Values{"title": {"Too late"}}))
	if r.status != http.StatusConflict || !strings.Contains(r.body, "change_allowed is false") {
		t.Errorf("edit while processing: %d\n%s", r.status, r.body)
	}
	if got := get(apiGet(), "metadata.title"); got != "After" {
		t.Errorf("title changed while processing: %v", got)
	}
}

func TestPagesUpload(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	pr := e.must(e.req("POST", "/api/presets.json", e.keyA, map[string]any{"preset_name": "Weekly show",
		"metadata": map[string]any{"artist": "Preset Artist"}, "output_files": []map[string]any{{"format": "mp3", "bitrate": 128}}})).obj(t)
	b := e.browser()
	b.login(e.userA)
	up := b.get("/upload/")
	if up.status != 200 {
		t.Fatalf("upload page: %d", up.status)
	}
	wantContains(t, up, `<option value="`+pr["uuid"].(string)+`">Weekly show</option>`, `<option value="mp3" selected>MP3</option>`,
		`type="file"`, `enctype="multipart/form-data"`)
	tok := csrfOf(t, up)
	wavData := makeWAV(t, 1, 8000, 1, audio.Tags{})
	count := func() int {
		rs, err := e.store.ListResources(ctx, e.userA.ID, storage.KindProduction, 100, 0)
		if err != nil {
			t.Fatal(err)
		}
		return len(rs)
	}

	// Without a CSRF token (or with it after the file) nothing is stored.
	r := b.postMultipart("/upload/", field("title", "Forged"), part{field: "input_file", name: "a.wav", data: wavData})
	if r.status != http.StatusForbidden || count() != 0 {
		t.Fatalf("no csrf: %d, %d productions", r.status, count())
	}
	r = b.postMultipart("/upload/", part{field: "input_file", name: "a.wav", data: wavData}, field("csrf_token", tok))
	if r.status != http.StatusForbidden || count() != 0 {
		t.Fatalf("csrf after the file: %d, %d productions", r.status, count())
	}
	// Validation errors come back on the form.
	r = b.postMultipart("/upload/", field("csrf_token", tok), field("title", "Kept title"), field("output_format", "tracks"),
		part{field: "input_file", name: "a.wav", data: wavData})
	if r.status != http.StatusBadRequest || count() != 0 {
		t.Fatalf("bad format: %d, %d productions", r.status, count())
	}
	wantContains(t, r, "output_format: is not an offered output format", `value="Kept title"`)
	r = b.postMultipart("/upload/", field("csrf_token", tok), field("title", "Not audio"),
		part{field: "input_file", name: "a.wav", data: []byte("this is text, not audio")})
	if r.status != http.StatusBadRequest || count() != 0 {
		t.Fatalf("not audio: %d, %d productions\n%s", r.status, count(), r.body)
	}

	r = b.postMultipart("/upload/", field("csrf_token", tok), field("title", "Uploaded"), field("preset", pr["uuid"].(string)),
		field("output_format", "flac"), field("action", "start"), part{field: "input_file", name: "talk.wav", data: wavData})
	loc := r.header.Get("Location")
	m := regexp.MustCompile(`^/production/([0-9a-f-]+)/status/$`).FindStringSubmatch(loc)
	if r.status != http.StatusSeeOther || m == nil {
		t.Fatalf("upload: %d %q\n%s", r.status, loc, r.body)
	}
	p := e.must(e.req("GET", "/api/production/"+m[1]+".json", e.keyA, nil)).obj(t)
	// The chosen format is added to the preset's outputs, which keep
	// their settings.
	if p["input_file"] != "talk.wav" || get(p, "metadata.title") != "Uploaded" || get(p, "metadata.artist") != "Preset Artist" ||
		get(p, "output_files.0.format") != "mp3" || get(p, "output_files.0.bitrate") != 128.0 ||
		get(p, "output_files.1.format") != "flac" || p["status"] != float64(production.StatusWaiting) {
		t.Errorf("uploaded production: %v", p)
	}
	outputsOf := func(fields ...part) []any {
		t.Helper()
		r := b.postMultipart("/upload/", append([]part{field("csrf_token", tok), field("preset", pr["uuid"].(string))},
			append(fields, part{field: "input_file", name: "talk.wav", data: wavData})...)...)
		m := regexp.MustCompile(`^/production/([0-9a-f-]+)/status/$`).FindStringSubmatch(r.header.Get("Location"))
		if m == nil {
			t.Fatalf("upload: %d\n%s", r.status, r.body)
		}
		return e.must(e.req("GET", "/api/production/"+m[1]+".json", e.keyA, nil)).obj(t)["output_files"].([]any)
	}
	// The preset's own format is not added twice; "replace" replaces.
	if o := outputsOf(field("output_format", "mp3")); len(o) != 1 || get(o[0].(map[string]any), "bitrate") != 128.0 {
		t.Errorf("mp3 over an mp3 preset: %v", o)
	}
	if o := outputsOf(field("output_format", "flac"), field("replace_outputs", "1")); len(o) != 1 || get(o[0].(map[string]any), "format") != "flac" {
		t.Errorf("replace with flac: %v", o)
	}
	// No preset and no format: a production that could produce nothing
	// is refused at start, on the form.
	r = b.postMultipart("/upload/", field("csrf_token", tok), field("output_format", ""), field("action", "start"),
		part{field: "input_file", name: "talk.wav", data: wavData})
	if r.status != http.StatusBadRequest {
		t.Errorf("start without outputs: %d", r.status)
	}
	wantContains(t, r, "output_files: add at least one output file")

	// The list page shows the uploads, newest first, with links.
	lp := b.get("/productions/")
	wantContains(t, lp, `id="productions"`, ">Uploaded<", "/production/"+m[1]+"/status/", ">Waiting<")
	sp := b.get(loc)
	wantContains(t, sp, "Uploaded", "Waiting", "<script nonce=")
	if !bytes.Contains([]byte(sp.header.Get("Content-Security-Policy")), []byte("'nonce-")) {
		t.Errorf("CSP without a nonce: %q", sp.header.Get("Content-Security-Policy"))
	}
}

// TestPagesStatusError: errors read in plain words, with what to do, and
// no "Start again" where starting again would fail the same way.
func TestPagesStatusError(t *testing.T) {
	e := newEnv(t)
	b := e.browser()
	b.login(e.userA)
	fail := func(title string, f func(p *production.Production)) string {
		t.Helper()
		id := e.create(e.keyA, map[string]any{"metadata": map[string]any{"title": title}})
		e.modify(e.userA.ID, id, f)
		return id
	}

	id := fail("Broken", func(p *production.Production) {
		p.SetError(production.StatusAudioEncoding, "production: storage: the encoder ran out of disk space")
	})
	sp := b.get("/production/" + id + "/status/")
	wantContains(t, sp, `class="status error"`, ">Error<", `id="error-message"`, "<strong>Error:</strong> The encoder ran out of disk space", "No output files are requested.")
	if strings.Contains(sp.body, "<script") || strings.Contains(sp.body, "production: storage:") {
		t.Error("a finished production's page still polls, or shows Go's prefixes")
	}

	// An unreadable input: replacing it is the way out, not a restart.
	id = fail("Unreadable", func(p *production.Production) {
		p.InputFile, p.OutputFiles = "talk.wav", []production.OutputFile{{Format: "mp3"}}
		p.Fail(production.StatusAudioProcessing, production.ErrorInput, "input file: audio: malformed data")
	})
	sp = b.get("/production/" + id + "/status/")
	wantContains(t, sp, "Input file: malformed data", `id="error-hint"`, "replace it with another recording")
	if strings.Contains(sp.body, "Start again") {
		t.Error("an input error offers Start again")
	}
	ep := b.get("/production/" + id + "/edit/")
	if strings.Contains(ep.body, `id="start"`) || strings.Contains(ep.body, `id="save-start"`) {
		t.Error("the edit page of an input error offers a start")
	}

	// A settings error: the edit page may save and start, not start as is.
	id = fail("Bad settings", func(p *production.Production) {
		p.InputFile, p.OutputFiles = "talk.wav", []production.OutputFile{{Format: "mp3"}}
		p.Fail(production.StatusAudioEncoding, production.ErrorSettings, "production: invalid request: output name")
	})
	ep = b.get("/production/" + id + "/edit/")
	if strings.Contains(ep.body, `id="start"`) || !strings.Contains(ep.body, `id="save-start"`) {
		t.Error("a settings error: want Save and start only")
	}

	// The service failed: starting again may well succeed.
	id = fail("Internal", func(p *production.Production) {
		p.InputFile, p.OutputFiles = "talk.wav", []production.OutputFile{{Format: "mp3"}}
		p.Fail(production.StatusAudioEncoding, production.ErrorInternal, "the service failed (its storage): sqlstore: database is locked")
	})
	sp = b.get("/production/" + id + "/status/")
	wantContains(t, sp, "The service failed (its storage): database is locked", "The server failed, not the recording", "Start again")
}

// modify changes a stored production as a worker would.
func (e *env) modify(owner, id string, f func(p *production.Production)) {
	t := e.t
	t.Helper()
	ctx := context.Background()
	res, err := e.store.GetResource(ctx, owner, storage.KindProduction, id)
	if err != nil {
		t.Fatal(err)
	}
	p, err := production.DecodeDocument(res)
	if err != nil {
		t.Fatal(err)
	}
	f(p)
	if res.Doc, err = production.EncodeDocument(p); err != nil {
		t.Fatal(err)
	}
	res.Status = int(p.Status)
	if err := e.store.UpdateResource(ctx, &res); err != nil {
		t.Fatal(err)
	}
}

// TestPagesStatusLevels: the status page shows the progress while a
// worker processes, and afterwards the levels: input beside output for a
// single track, per track and for the mixdown for a multitrack
// production, and the loudness chart.
func TestPagesStatusLevels(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	b := e.browser()
	b.login(e.userA)
	id := e.create(e.keyA, map[string]any{"metadata": map[string]any{"title": "Levels"}})
	if err := e.store.SetStatus(ctx, e.userA.ID, storage.KindProduction, id, int(production.StatusAudioEncoding)); err != nil {
		t.Fatal(err)
	}
	if err := e.store.SetProgress(ctx, e.userA.ID, id, 42); err != nil {
		t.Fatal(err)
	}
	sp := b.get("/production/" + id + "/status/")
	wantContains(t, sp, `<progress id="progress-bar" max="100" value="42"`, `<span id="progress-text">42 %</span>`, "<script nonce=")
	wantContains(t, b.get("/productions/"), "Audio Encoding</span> <span class=\"hint\">42 %</span>")

	lv := func(v float64, u string) production.Level { return production.Level{Value: v, Unit: u} }
	snr := lv(52.5, "dB")
	e.modify(e.userA.ID, id, func(p *production.Production) {
		p.Status = production.StatusDone
		p.LoudnessImage = "_loudness.png"
		p.Statistics.Levels = &production.Levels{
			Input: production.InputLevels{Loudness: lv(-25.7, "LUFS"), LRA: lv(14.2, "LU"), NoiseLevel: lv(-62.1, "dB"), SNR: lv(37.8, "dB"),
				MaxShortterm: lv(-13.4, "LUFS"), MaxMomentary: lv(-9.8, "LUFS")},
			Output: production.OutputLevels{Loudness: lv(-16, "LUFS"), LRA: lv(5.1, "LU"), Peak: lv(-1, "dBTP"), SNR: &snr,
				GainMin: lv(-3.2, "dB"), GainMean: lv(9.4, "dB"), GainMax: lv(18.7, "dB")},
		}
	})
	sp = b.get("/production/" + id + "/status/")
	wantContains(t, sp, `id="levels"`, `id="loudness-chart"`, "/files/audio-result/"+id+"/_loudness.png",
		`Loudness <span class="hint">integrated over the whole file</span></th><td class="num">-25.7 LUFS</td><td class="num">-16.0 LUFS</td>`,
		`<td class="num"></td><td class="num">-1.0 dBTP</td>`, `<td class="num">37.8 dB</td><td class="num">52.5 dB</td>`,
		"-3.2 / 9.4 / 18.7 dB")
	if strings.Contains(sp.body, "progress-bar") || strings.Contains(sp.body, "Max. momentary loudness <span class=\"hint\">loudest 0.4 s</span></th><td class=\"num\"></td><td class=\"num\"></td>") {
		t.Error("a Done production shows a progress bar or an empty row")
	}

	mt := e.create(e.keyA, map[string]any{"metadata": map[string]any{"title": "Multitrack"}})
	e.modify(e.userA.ID, mt, func(p *production.Production) {
		p.Status, p.IsMultitrack = production.StatusDone, true
		p.Statistics.Tracks = []production.TrackStatistics{
			{Identifier: "host", Levels: production.TrackLevels{Loudness: lv(-23, "LUFS"), LRA: lv(8, "LU"), NoiseLevel: lv(-70, "dB"), SNR: lv(48, "dB"),
				GainMin: lv(-2, "dB"), GainMean: lv(6, "dB"), GainMax: lv(12, "dB")}},
			{Identifier: "music", Levels: production.TrackLevels{Loudness: lv(math.Inf(-1), "LUFS")}},
		}
		p.Statistics.Master = &production.MasterStatistics{Levels: production.MasterLevels{Loudness: lv(-16, "LUFS"), LRA: lv(4.5, "LU"), Peak: lv(-1, "dBTP")}}
	})
	sp = b.get("/production/" + mt + "/status/")
	wantContains(t, sp, `id="tracks"`, `<td>host</td><td class="num">-23.0 LUFS</td><td class="num">8.0 LU</td><td class="num">-70.0 dB</td><td class="num">48.0 dB</td><td class="num">-2.0 / 6.0 / 12.0 dB</td>`,
		`<td>music</td><td class="num">silent</td>`, `id="master"`, `<th>True peak</th><td class="num">-1.0 dBTP</td>`)
	wantContains(t, b.get("/productions/"), "-16.0 LUFS", "-1.0 dBTP")

	// The webhook calls, and why one failed.
	wh := e.create(e.keyA, map[string]any{"metadata": map[string]any{"title": "Hooked"}, "webhook": "https://hook.example.org/x"})
	err := e.store.WithTx(ctx, func(tx storage.Tx) error {
		if err := tx.SetStatus(ctx, e.userA.ID, storage.KindProduction, wh, int(production.StatusDone)); err != nil {
			return err
		}
		return webhook.Enqueue(ctx, tx, e.userA.ID, wh, "https://hook.example.org/x", 3, "Done")
	})
	if err != nil {
		t.Fatal(err)
	}
	d, err := e.store.ClaimDelivery(ctx, "sender", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.store.DeliveryFailed(ctx, d, "form request: refusing to connect to 10.0.0.1", time.Time{}); err != nil {
		t.Fatal(err)
	}
	wantContains(t, b.get("/production/"+wh+"/status/"), `id="webhooks"`, "<td>Done</td><td>failed</td><td class=\"num\">1</td>",
		"form request: refusing to connect to 10.0.0.1")
}
