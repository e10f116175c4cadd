package httpapi_test

import (
	"crypto/rand"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/transport/httpapi"
)

// TestUploadTruncatedRefused: a WAV cut short passes a header probe but
// not the full decode at upload; the message names the file, no path.
func TestUploadTruncatedRefused(t *testing.T) {
	e := newEnv(t)
	id := e.create(e.keyA, map[string]any{"metadata": map[string]any{"title": "t"}})
	// A WAV with its sizes in the header, as recorders write them.
	p := filepath.Join(t.TempDir(), "w.wav")
	testaudio.WriteWAV(t, p, testaudio.SpeechLike(8000, 2, 0.3), 8000)
	w, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	r := e.wantErr(e.upload("/api/production/"+id+"/upload.json", e.keyA, part{"input_file", "cut.wav", w[:len(w)/2]}),
		http.StatusBadRequest, httpapi.CodeValidation)
	msg := r.FormErrors["input_file"]
	if !strings.Contains(msg, "damaged or incomplete") {
		t.Errorf("truncated WAV: %q", msg)
	}
	// The whole file is accepted.
	e.must(e.upload("/api/production/"+id+"/upload.json", e.keyA, part{"input_file", "whole.wav", w}))
}

// TestUploadErrorsNameTheFile: random bytes are refused with a message
// that names the upload and shows no server path; nothing is left of the
// rejected upload in the blob folder, not even an empty folder.
func TestUploadErrorsNameTheFile(t *testing.T) {
	e := newEnv(t)
	id := e.create(e.keyA, map[string]any{"metadata": map[string]any{"title": "t"}})
	junk := make([]byte, 64<<10)
	rand.Read(junk)
	r := e.wantErr(e.upload("/api/production/"+id+"/upload.json", e.keyA, part{"input_file", "rand.bin", junk}),
		http.StatusBadRequest, httpapi.CodeValidation)
	msg := string(r.Raw)
	dir, _ := e.blobs.LocalPath("productions")
	if strings.Contains(msg, dir) || strings.Contains(msg, "file:/") || strings.Contains(msg, "/productions/") {
		t.Errorf("error shows a server path: %s", msg)
	}
	if _, err := os.Stat(filepath.Join(dir, id)); !os.IsNotExist(err) {
		entries, _ := os.ReadDir(filepath.Join(dir, id))
		t.Errorf("the rejected upload left its folder behind: %v %v", err, entries)
	}
}

func TestScrubPaths(t *testing.T) {
	for in, want := range map[string]string{
		"file:/srv/data/blobs/productions/u/input/rand.bin: Invalid data found": "rand.bin: Invalid data found",
		"open /tmp/x/staged-1: no such file":                                    "open rand.bin: no such file",
		"see https://example.org/a/b and (/etc/passwd)":                         "see https://example.org/a/b and (rand.bin)",
		"no path here": "no path here",
	} {
		if got := httpapi.ScrubPaths(in, "rand.bin"); got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}

// TestWebhookAddressChecked: a webhook to a loopback or private address
// is refused when saved, as input URLs are when fetched.
func TestWebhookAddressChecked(t *testing.T) {
	e := newEnv(t)
	for _, hook := range []string{"http://127.0.0.1:9/h", "http://localhost/h", "http://[::1]/h", "http://10.1.2.3/h", "http://169.254.169.254/latest"} {
		r := e.wantErr(e.req("POST", "/api/productions.json", e.keyA, map[string]any{"webhook": hook}), http.StatusBadRequest, httpapi.CodeValidation)
		if !strings.Contains(r.FormErrors["webhook"], "forbidden address") {
			t.Errorf("%s: %q", hook, r.FormErrors["webhook"])
		}
	}
	id := e.create(e.keyA, map[string]any{"webhook": "https://hook.example.org/ok"})
	e.wantErr(e.req("POST", "/api/production/"+id+"/webhook.json", e.keyA, map[string]any{"webhook": "http://127.0.0.1/x"}), http.StatusBadRequest, httpapi.CodeValidation)
	e.wantErr(e.req("POST", "/api/production/"+id+".json", e.keyA, map[string]any{"webhook": "ftp://x/y"}), http.StatusBadRequest, httpapi.CodeValidation)
}
