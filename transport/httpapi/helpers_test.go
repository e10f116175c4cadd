package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	"github.com/audiopost/audiopost/audio/wav"
	"github.com/audiopost/audiopost/internal/testdb"
	"github.com/audiopost/audiopost/production/app"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/storage/blob"
	"github.com/audiopost/audiopost/storage/sqlstore"
	"github.com/audiopost/audiopost/transport/httpapi"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// env is a running handler over a real SQLite store and folder blobs,
// with two users A and B, each with an API key.
type env struct {
	t            *testing.T
	srv          *httptest.Server
	base         string
	store        *sqlstore.Store
	blobs        *blob.Dir
	userA, userB storage.User
	keyA, keyB   string
}

func newEnv(t *testing.T, mod ...func(*httpapi.Config)) *env {
	t.Helper()
	dir := t.TempDir()
	st := testdb.SQLite(t, dir+"/db.sqlite")
	key, err := storage.ParseSecretKey(storage.NewSecretKeyText())
	if err != nil {
		t.Fatal(err)
	}
	st.SetSecretKey(key)
	bl, err := blob.OpenDir(dir + "/blobs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bl.Close() })
	e := &env{t: t, store: st, blobs: bl}
	e.userA, e.keyA = e.newUser("alice")
	e.userB, e.keyB = e.newUser("bob")
	e.srv = httptest.NewUnstartedServer(nil)
	e.base = "http://" + e.srv.Listener.Addr().String()
	cfg := httpapi.Config{Store: st, Blobs: bl, BaseURL: e.base, PasswordIterations: 1000} // see accountsOf
	for _, m := range mod {
		m(&cfg)
	}
	h, err := httpapi.NewHandler(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.srv.Config.Handler = h
	e.srv.Start()
	t.Cleanup(e.srv.Close)
	return e
}

func (e *env) newUser(name string) (storage.User, string) {
	ctx := context.Background()
	u := storage.User{Username: name, Email: name + "@example.org", OnetimeCredits: 2 * time.Hour,
		RecurringCredits: 90 * time.Minute, RechargeCredits: 3 * time.Hour, ErrorEmail: true}
	if err := e.store.CreateUser(ctx, &u); err != nil {
		e.t.Fatal(err)
	}
	tok := storage.NewToken()
	if err := e.store.CreateAPIKey(ctx, &storage.APIKey{User: u.ID, Name: "test", Hash: storage.HashToken(tok)}); err != nil {
		e.t.Fatal(err)
	}
	u, err := e.store.GetUser(ctx, u.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	return u, tok
}

// resp is a decoded envelope.
type resp struct {
	Status     int
	Header     http.Header
	Raw        []byte
	StatusCode float64           `json:"status_code"`
	FormErrors map[string]string `json:"form_errors"`
	ErrorCode  *string           `json:"error_code"`
	ErrorMsg   string            `json:"error_message"`
	Data       json.RawMessage   `json:"data"`
}

// obj decodes data as an object.
func (r *resp) obj(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Data, &m); err != nil {
		t.Fatalf("data is not an object: %v\n%s", err, r.Raw)
	}
	return m
}

func (r *resp) list(t *testing.T) []any {
	t.Helper()
	var l []any
	if err := json.Unmarshal(r.Data, &l); err != nil {
		t.Fatalf("data is not an array: %v\n%s", err, r.Raw)
	}
	return l
}

func (r *resp) code() string {
	if r.ErrorCode == nil {
		return ""
	}
	return *r.ErrorCode
}

// req sends a request; body is marshaled as JSON unless it is an
// io.Reader (sent as is with contentType).
func (e *env) req(method, path, key string, body any, contentType ...string) *resp {
	e.t.Helper()
	var rd io.Reader
	ct := ""
	switch b := body.(type) {
	case nil:
	case io.Reader:
		rd = b
	case string:
		rd, ct = strings.NewReader(b), "application/json"
	default:
		j, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd, ct = bytes.NewReader(j), "application/json"
	}
	if len(contentType) > 0 {
		ct = contentType[0]
	}
	r, err := http.NewRequest(method, e.base+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if ct != "" {
		r.Header.Set("Content-Type", ct)
	}
	if key != "" {
		r.Header.Set("Authorization", "Bearer "+key)
	}
	return e.do(r)
}

func (e *env) do(r *http.Request) *resp {
	e.t.Helper()
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	out := &resp{Status: res.StatusCode, Header: res.Header, Raw: raw}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(raw, out); err != nil {
			e.t.Fatalf("%s %s: response is not JSON: %v\n%s", r.Method, r.URL, err, raw)
		}
		if int(out.StatusCode) != res.StatusCode {
			e.t.Errorf("%s %s: status_code %v in the envelope, HTTP %d", r.Method, r.URL, out.StatusCode, res.StatusCode)
		}
		if out.FormErrors == nil {
			e.t.Errorf("%s %s: form_errors is not an object: %s", r.Method, r.URL, raw)
		}
	}
	return out
}

// must asserts a 200 with error_code null.
func (e *env) must(r *resp) *resp {
	e.t.Helper()
	if r.Status != 200 || r.ErrorCode != nil || r.ErrorMsg != "" {
		e.t.Fatalf("want 200, got %d: %s", r.Status, r.Raw)
	}
	return r
}

// wantErr asserts an error status and code.
func (e *env) wantErr(r *resp, status int, code string) *resp {
	e.t.Helper()
	if r.Status != status || r.code() != code {
		e.t.Fatalf("want %d %s, got %d %q: %s", status, code, r.Status, r.code(), r.Raw)
	}
	if r.ErrorMsg == "" {
		e.t.Errorf("error %s without error_message", code)
	}
	return r
}

// create makes a production and returns its uuid.
func (e *env) create(key string, body any) string {
	e.t.Helper()
	m := e.must(e.req("POST", "/api/productions.json", key, body)).obj(e.t)
	return m["uuid"].(string)
}

// makeWAV returns a WAV file of a 440 Hz sine.
func makeWAV(t *testing.T, channels, rate int, seconds float64, tags audio.Tags) []byte {
	t.Helper()
	var b bytes.Buffer
	enc, err := wav.NewEncoder(context.Background(), &b, audio.Format{SampleRate: rate, Channels: channels}, audio.EncodeOptions{Tags: tags})
	if err != nil {
		t.Fatal(err)
	}
	if err := enc.Write(audiotest.Sine(channels, rate, 440, 0.5, int(seconds*float64(rate)))); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func makePNG(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), 128, 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// part is one multipart field: a file when name is set.
type part struct {
	field, name string
	data        []byte
}

func multipartBody(t *testing.T, parts ...part) (io.Reader, string) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for _, p := range parts {
		var w io.Writer
		var err error
		if p.name != "" {
			w, err = mw.CreateFormFile(p.field, p.name)
		} else {
			w, err = mw.CreateFormField(p.field)
		}
		if err != nil {
			t.Fatal(err)
		}
		w.Write(p.data)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return &b, mw.FormDataContentType()
}

func (e *env) upload(path, key string, parts ...part) *resp {
	e.t.Helper()
	body, ct := multipartBody(e.t, parts...)
	return e.req("POST", path, key, body, ct)
}

func field(name, value string) part { return part{field: name, data: []byte(value)} }

func get(m map[string]any, path string) any {
	var cur any = m
	for _, k := range strings.Split(path, ".") {
		switch c := cur.(type) {
		case map[string]any:
			cur = c[k]
		case []any:
			var i int
			fmt.Sscan(k, &i)
			if i >= len(c) {
				return nil
			}
			cur = c[i]
		default:
			return nil
		}
	}
	return cur
}

// accountsOf are the account operations over st. They hash passwords at
// 1000 iterations: the default count costs seconds a hash under the race
// detector (production/app's own tests hash at the default).
func accountsOf(t testing.TB, st storage.Store) *app.App {
	t.Helper()
	a, err := app.New(app.Config{Store: st, PasswordIterations: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return a
}
