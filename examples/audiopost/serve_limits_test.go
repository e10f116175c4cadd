package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/audiopost/audiopost/production"
)

func TestLimitsFlags(t *testing.T) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	limits := limitsFlags(fs)
	if got := limits(); got != production.DefaultLimits() {
		t.Errorf("without flags: %+v", got)
	}
	if err := fs.Parse([]string{"-max-split-parts", "20", "-max-memory-mb", "512", "-max-temp-disk-mb", "3072", "-max-silence", "1h", "-split-part-seconds", "5"}); err != nil {
		t.Fatal(err)
	}
	want := production.DefaultLimits()
	want.Parts, want.Memory, want.Silence, want.PartSeconds, want.Disk = 20, 512<<20, 3600, 5, 3<<30
	if got := limits(); got != want {
		t.Errorf("limits %+v, want %+v", got, want)
	}
}

// TestServeLimits: the flags reach the API, which refuses a production
// beyond them when its input is uploaded.
func TestServeLimits(t *testing.T) {
	s := startServe(t, "-admin-user", "admin", "-admin-password", "correct horse battery", "-max-split-parts", "2")
	c := &apiClient{t: t, base: s.base, hc: http.DefaultClient, basic: [2]string{"admin", "correct horse battery"}}
	prod := c.call("POST", "/api/productions.json", map[string]any{
		"chapters":     []any{map[string]any{"start": 0, "title": "a"}, map[string]any{"start": 1, "title": "b"}, map[string]any{"start": 2, "title": "c"}},
		"output_files": []any{map[string]any{"format": "wav", "split_on_chapters": true}}})
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("input_file", "in.wav")
	fw.Write(serveWAV(t, 4))
	mw.Close()
	code, b := c.do("POST", "/api/production/"+prod["uuid"].(string)+"/upload.json", mw.FormDataContentType(), &body)
	var env struct {
		FormErrors map[string]string `json:"form_errors"`
	}
	if err := json.Unmarshal(b, &env); err != nil || code != http.StatusBadRequest {
		t.Fatalf("upload: HTTP %d: %s", code, b)
	}
	if msg := env.FormErrors["output_files.0.split_on_chapters"]; !strings.Contains(msg, "at most 2 (one per 1 s of input, at most 2)") {
		t.Errorf("form_errors %v", env.FormErrors)
	}
}
