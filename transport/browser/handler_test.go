package browser_test

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	pages "github.com/audiopost/audiopost/transport/browser"
)

// TestHandler serves a folder as Build leaves it (with stand-in files):
// the pages with their Content Security Policy, the engine compressed to
// browsers that accept gzip and as it is to others, nothing below the
// folder, no listing, GET and HEAD only, and without a build a 404 that
// says how to make one.
func TestHandler(t *testing.T) {
	dir := t.TempDir()
	srv := httptest.NewServer(http.StripPrefix("/browser/", pages.Handler(dir)))
	defer srv.Close()
	get := func(path string, header ...string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		tr := &http.Transport{DisableCompression: true}
		res, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}
	if res, body := get("/browser/"); res.StatusCode != 404 || !strings.Contains(body, "go run ./transport/browser/build -o "+dir) {
		t.Errorf("without a build: %s %q", res.Status, body)
	}

	wasm := "\x00asm" + strings.Repeat("engine ", 1000)
	os.WriteFile(filepath.Join(dir, pages.WasmFile), []byte(wasm), 0o644)
	f, _ := os.Create(filepath.Join(dir, pages.WasmFile+".gz"))
	zw := gzip.NewWriter(f)
	io.WriteString(zw, wasm)
	zw.Close()
	f.Close()
	os.WriteFile(filepath.Join(dir, "index.html"), []byte("<!doctype html><title>p</title>"), 0o644)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "x.js"), []byte("x"), 0o644)

	res, body := get("/browser/")
	if res.StatusCode != 200 || !strings.Contains(body, "<title>p</title>") {
		t.Fatalf("index: %s %q", res.Status, body)
	}
	for _, h := range []struct{ name, want string }{
		{"Content-Security-Policy", "connect-src 'self'"}, {"Content-Security-Policy", "frame-ancestors 'none'"},
		{"X-Content-Type-Options", "nosniff"}, {"Referrer-Policy", "no-referrer"}, {"Cache-Control", "no-cache"},
	} {
		if !strings.Contains(res.Header.Get(h.name), h.want) {
			t.Errorf("%s: %q, want %q in it", h.name, res.Header.Get(h.name), h.want)
		}
	}
	res, body = get("/browser/"+pages.WasmFile, "Accept-Encoding", "gzip, br")
	if res.Header.Get("Content-Encoding") != "gzip" || res.Header.Get("Content-Type") != "application/wasm" {
		t.Errorf("gzip: encoding %q, type %q", res.Header.Get("Content-Encoding"), res.Header.Get("Content-Type"))
	} else if zr, err := gzip.NewReader(strings.NewReader(body)); err != nil {
		t.Error(err)
	} else if b, _ := io.ReadAll(zr); string(b) != wasm {
		t.Error("the compressed engine is not the engine")
	}
	res, body = get("/browser/" + pages.WasmFile)
	if res.Header.Get("Content-Encoding") != "" || body != wasm || res.Header.Get("Content-Type") != "application/wasm" {
		t.Errorf("plain: encoding %q, type %q, %d bytes", res.Header.Get("Content-Encoding"), res.Header.Get("Content-Type"), len(body))
	}
	for _, path := range []string{"/browser/sub/", "/browser/sub/x.js", "/browser/missing.js", "/browser/../" + filepath.Base(dir)} {
		if res, _ := get(path); res.StatusCode != 404 {
			t.Errorf("%s: %s, want 404", path, res.Status)
		}
	}
	req, _ := http.NewRequest("POST", srv.URL+"/browser/", strings.NewReader("audio"))
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %v %v", res.Status, err)
	}
}
