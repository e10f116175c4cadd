package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/production/app"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/storage/sqlstore"
)

// servedInstance is `audiopost serve` running in this process.
type servedInstance struct {
	base   string
	dir    string
	stdout *syncBuffer
	cancel context.CancelFunc
	done   chan error
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startServe runs serve on a free loopback port and waits until it
// listens; the test's cleanup shuts it down gracefully and checks that
// run returned nil.
func startServe(t *testing.T, extra ...string) *servedInstance {
	t.Helper()
	dir := t.TempDir()
	addrFile := filepath.Join(dir, "addr")
	ctx, cancel := context.WithCancel(context.Background())
	s := &servedInstance{dir: filepath.Join(dir, "data"), stdout: &syncBuffer{}, cancel: cancel, done: make(chan error, 1)}
	args := append([]string{"serve", "-addr", "127.0.0.1:0", "-data", s.dir, "-addr-file", addrFile, "-log-level", "warn"}, extra...)
	stderr := &syncBuffer{}
	go func() { s.done <- run(ctx, args, s.stdout, stderr) }()
	// No bound of its own: serve either listens or returns, and a hang is
	// the test binary's -timeout to report. Starting took more than 20 s
	// on a two-core machine under a load of 40, and the tests failed.
	for {
		if b, err := os.ReadFile(addrFile); err == nil {
			s.base = "http://" + string(b)
			break
		}
		select {
		case err := <-s.done:
			t.Fatalf("serve exited: %v\n%s", err, stderr.String())
		default:
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-s.done:
			if err != nil {
				t.Errorf("serve returned %v", err)
			}
		case <-time.After(40 * time.Second):
			t.Error("serve did not shut down")
		}
		if t.Failed() {
			t.Logf("serve log:\n%s", stderr.String())
		}
	})
	return s
}

// withStore opens the running instance's store beside it (SQLite allows
// several openers) to make keys and clients as the CLI would.
func (s *servedInstance) withStore(t *testing.T, fn func(st *sqlstore.Store)) {
	t.Helper()
	st, err := sqlstore.Open(context.Background(), filepath.Join(s.dir, sqlstore.DataDirDB))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fn(st)
}

// apiClient calls the JSON API with one kind of credentials.
type apiClient struct {
	t     *testing.T
	base  string
	hc    *http.Client
	basic [2]string
	token string
}

func (c *apiClient) do(method, path, contentType string, body io.Reader) (int, []byte) {
	c.t.Helper()
	url := path
	if !strings.HasPrefix(path, "http") {
		url = c.base + path
	}
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		c.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if c.basic[0] != "" {
		req.SetBasicAuth(c.basic[0], c.basic[1])
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	res, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	return res.StatusCode, b
}

// call sends a JSON request and returns the envelope's data, failing on
// anything but success.
func (c *apiClient) call(method, path string, body any) map[string]any {
	c.t.Helper()
	var r io.Reader
	ct := ""
	if body != nil {
		b, _ := json.Marshal(body)
		r, ct = bytes.NewReader(b), "application/json"
	}
	code, b := c.do(method, path, ct, r)
	return c.envelope(method+" "+path, code, b)
}

func (c *apiClient) envelope(what string, code int, b []byte) map[string]any {
	c.t.Helper()
	var env struct {
		StatusCode int            `json:"status_code"`
		Data       map[string]any `json:"data"`
	}
	if err := json.Unmarshal(b, &env); err != nil || code/100 != 2 {
		c.t.Fatalf("%s: HTTP %d: %s", what, code, b)
	}
	return env.Data
}

func serveWAV(t *testing.T, seconds float64) []byte {
	t.Helper()
	const rate = 44100
	n := int(seconds * rate)
	b := audio.NewBuffer(2, n)
	for i := range n {
		tt := float64(i) / rate
		env := math.Max(0, math.Sin(2*math.Pi*3*tt))
		v := 0.05 * env * (math.Sin(2*math.Pi*220*tt) + 0.5*math.Sin(2*math.Pi*440*tt))
		b[0][i], b[1][i] = v, v
	}
	var buf bytes.Buffer
	enc, err := audio.NewEncoder(context.Background(), "wav", &buf, audio.Format{SampleRate: rate, Channels: 2}, audio.EncodeOptions{Length: time.Duration(seconds * float64(time.Second))})
	if err != nil {
		t.Fatal(err)
	}
	if err := enc.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// roundTrip runs a production through the API: preset, production from
// it, upload, start, status polling, download.
func (c *apiClient) roundTrip(name string, wav []byte) {
	t := c.t
	t.Helper()
	pr := c.call("POST", "/api/presets.json", map[string]any{"preset_name": "preset " + name,
		"algorithms": map[string]any{"loudnesstarget": -16}, "output_files": []any{map[string]any{"format": "wav"}}})
	prod := c.call("POST", "/api/productions.json", map[string]any{"preset": pr["uuid"], "metadata": map[string]any{"title": name}})
	uuid, _ := prod["uuid"].(string)
	if uuid == "" {
		t.Fatalf("no uuid in %v", prod)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("input_file", name+".wav")
	fw.Write(wav)
	mw.Close()
	code, b := c.do("POST", "/api/production/"+uuid+"/upload.json", mw.FormDataContentType(), &body)
	c.envelope("upload", code, b)
	c.call("POST", "/api/production/"+uuid+"/start.json", nil)
	deadline := time.Now().Add(60 * time.Second)
	for {
		st := c.call("GET", "/api/production/"+uuid+"/status.json", nil)
		s, _ := st["status"].(float64)
		if s == 3 {
			break
		}
		if s == 2 || time.Now().After(deadline) {
			t.Fatalf("%s: status %v: %v", name, st["status_string"], c.call("GET", "/api/production/"+uuid+".json", nil)["error_message"])
		}
		time.Sleep(50 * time.Millisecond)
	}
	p := c.call("GET", "/api/production/"+uuid+".json", nil)
	outs, _ := p["output_files"].([]any)
	if len(outs) != 1 {
		t.Fatalf("output_files %v", p["output_files"])
	}
	dl, _ := outs[0].(map[string]any)["download_url"].(string)
	if !strings.HasPrefix(dl, c.base+"/") {
		t.Fatalf("download_url %q is not under %s", dl, c.base)
	}
	code, data := c.do("GET", dl, "", nil)
	if code != 200 {
		t.Fatalf("download: HTTP %d", code)
	}
	d, err := audio.Decode(context.Background(), bytes.NewReader(data))
	if err != nil {
		t.Fatalf("downloaded output: %v", err)
	}
	defer d.Close()
	out, err := audio.ReadAll(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := out.Frames(), len(wav[44:])/4; got != want {
		t.Errorf("%s: output has %d frames, want %d", name, got, want)
	}
	if w, _ := p["waveform_image"].(string); !strings.HasPrefix(w, c.base+"/") {
		t.Errorf("%s: waveform_image %q", name, w)
	}
}

func TestServeRoundTrip(t *testing.T) {
	s := startServe(t, "-admin-user", "admin", "-admin-password", "correct horse battery")
	if !strings.Contains(s.stdout.String(), `created admin account "admin"`) || !strings.Contains(s.stdout.String(), s.base+"/account/") {
		t.Errorf("serve printed %q", s.stdout.String())
	}
	var key, clientID, clientSecret string
	s.withStore(t, func(st *sqlstore.Store) {
		u, err := st.GetUserByUsername(context.Background(), "admin")
		if err != nil {
			t.Fatal(err)
		}
		accounts, err := app.New(app.Config{Store: st})
		if err != nil {
			t.Fatal(err)
		}
		if _, key, err = accounts.CreateAPIKey(context.Background(), u, "test", time.Time{}); err != nil {
			t.Fatal(err)
		}
		c, secret, err := accounts.RegisterClient(context.Background(), storage.User{}, "test app", nil, false)
		if err != nil {
			t.Fatal(err)
		}
		clientID, clientSecret = c.ID, secret
	})
	wav := serveWAV(t, 2)

	t.Run("basic", func(t *testing.T) {
		(&apiClient{t: t, base: s.base, hc: http.DefaultClient, basic: [2]string{"admin", "correct horse battery"}}).roundTrip("basic", wav)
	})
	t.Run("apikey", func(t *testing.T) {
		(&apiClient{t: t, base: s.base, hc: http.DefaultClient, token: key}).roundTrip("apikey", wav)
	})
	t.Run("oauth2", func(t *testing.T) {
		conf := &oauth2.Config{ClientID: clientID, ClientSecret: clientSecret,
			Endpoint: oauth2.Endpoint{TokenURL: s.base + "/oauth2/token/"}}
		tok, err := conf.PasswordCredentialsToken(context.Background(), "admin", "correct horse battery")
		if err != nil {
			t.Fatal(err)
		}
		(&apiClient{t: t, base: s.base, hc: conf.Client(context.Background(), tok)}).roundTrip("oauth2", wav)
	})
	t.Run("unauthenticated", func(t *testing.T) {
		code, _ := (&apiClient{t: t, base: s.base, hc: http.DefaultClient}).do("GET", "/api/productions.json", "", nil)
		if code != http.StatusUnauthorized {
			t.Errorf("HTTP %d without credentials", code)
		}
	})
}

func TestServeGeneratesAdminPassword(t *testing.T) {
	if testing.Short() {
		t.Skip("a start-up message; the plain run checks it")
	}
	s := startServe(t)
	out := s.stdout.String()
	_, rest, ok := strings.Cut(out, `created admin account "admin" with password `)
	if !ok {
		t.Fatalf("no generated password in %q", out)
	}
	password, _, _ := strings.Cut(rest, " ")
	c := &apiClient{t: t, base: s.base, hc: http.DefaultClient, basic: [2]string{"admin", password}}
	u := c.call("GET", "/api/user.json", nil)
	if u["username"] != "admin" {
		t.Errorf("user.json: %v", u)
	}
}

// TestServeLoad sends 200 concurrent API requests (lists, status, info,
// creates) and wants every one answered with success. It measures the
// server, not the per-user rate limit, which it turns off.
func TestServeLoad(t *testing.T) {
	s := startServe(t, "-rate-limit", "0")
	var key string
	s.withStore(t, func(st *sqlstore.Store) {
		u, err := st.GetUserByUsername(context.Background(), "admin")
		if err != nil {
			t.Fatal(err)
		}
		accounts, err := app.New(app.Config{Store: st})
		if err != nil {
			t.Fatal(err)
		}
		if _, key, err = accounts.CreateAPIKey(context.Background(), u, "load", time.Time{}); err != nil {
			t.Fatal(err)
		}
	})
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 200}, Timeout: 60 * time.Second}
	c := &apiClient{t: t, base: s.base, hc: hc, token: key}
	first := c.call("POST", "/api/productions.json", map[string]any{"metadata": map[string]any{"title": "seed"}})
	uuid := first["uuid"].(string)

	n := 200
	if testing.Short() {
		n = 50 // under the race detector: the same mix, fewer of each
	}
	type result struct {
		what string
		code int
		body string
	}
	results := make(chan result, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			var method, path, body string
			switch i % 5 {
			case 0:
				method, path = "GET", "/api/productions.json"
			case 1:
				method, path = "GET", "/api/production/"+uuid+"/status.json"
			case 2:
				method, path = "GET", "/api/info.json"
			case 3:
				method, path, body = "POST", "/api/productions.json", fmt.Sprintf(`{"metadata": {"title": "load %d"}, "output_files": [{"format": "mp3"}]}`, i)
			case 4:
				method, path = "GET", "/api/production/"+uuid+".json"
			}
			req, _ := http.NewRequest(method, s.base+path, strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+key)
			if body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			res, err := hc.Do(req)
			if err != nil {
				results <- result{method + " " + path, 0, err.Error()}
				return
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			results <- result{method + " " + path, res.StatusCode, string(b)}
		})
	}
	began := time.Now()
	close(start)
	wg.Wait()
	close(results)
	failed := 0
	for r := range results {
		if r.code/100 != 2 {
			failed++
			if failed <= 5 {
				t.Errorf("%s: HTTP %d: %.200s", r.what, r.code, r.body)
			}
		}
	}
	t.Logf("%d concurrent requests in %v, %d failed", n, time.Since(began), failed)
}
