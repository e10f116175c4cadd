package blob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/storage/blob/s3test"
)

func TestMain(m *testing.M) { s3test.Main(m) }

// backend is a blob store implementation the contract tests run on.
type backend struct {
	name string
	open func(t *testing.T) storage.Blobs
}

var backends = []backend{
	{"dir", func(t *testing.T) storage.Blobs { d, _ := openTest(t); return d }},
	{"s3", func(t *testing.T) storage.Blobs { return openS3Test(t, "") }},
}

// openS3Test opens a store on a new bucket of the test server.
func openS3Test(t *testing.T, prefix string) *S3 {
	t.Helper()
	srv := s3test.Start(t)
	s, err := OpenS3(t.Context(), S3Config{Endpoint: srv.Endpoint, Insecure: true, Region: srv.Region,
		Bucket: srv.Bucket(t), Prefix: prefix, AccessKey: srv.AccessKey, SecretKey: srv.SecretKey})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func eachBackend(t *testing.T, test func(t *testing.T, b storage.Blobs)) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) { test(t, be.open(t)) })
	}
}

func putBlob(t *testing.T, b storage.Blobs, key, content string) {
	t.Helper()
	w, err := b.Create(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(w, content); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func readBlob(t *testing.T, b storage.Blobs, key string) string {
	t.Helper()
	r, _, err := b.Open(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(got)
}

func listKeys(t *testing.T, b storage.Blobs, prefix string) string {
	t.Helper()
	l, err := b.List(t.Context(), prefix)
	if err != nil {
		t.Fatal(err)
	}
	var s []string
	for _, i := range l {
		s = append(s, i.Key)
	}
	return strings.Join(s, ",")
}

func TestContractCommitOnClose(t *testing.T) { eachBackend(t, testContractCommitOnClose) }

func testContractCommitOnClose(t *testing.T, b storage.Blobs) {
	ctx := t.Context()
	w, err := b.Create(ctx, "p/1/out.mp3")
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("half a file"))
	if _, err := b.Stat(ctx, "p/1/out.mp3"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("unclosed blob visible: %v", err)
	}
	if l := listKeys(t, b, ""); l != "" {
		t.Fatalf("unclosed blob listed: %s", l)
	}
	w.Write([]byte(", the rest"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := readBlob(t, b, "p/1/out.mp3"); got != "half a file, the rest" {
		t.Errorf("content %q", got)
	}
	if _, err := w.Write([]byte("x")); err == nil {
		t.Error("write after Close succeeded")
	}
	if err := w.Close(); err == nil {
		t.Error("second Close succeeded")
	}
	if err := w.Abort(); err != nil {
		t.Errorf("Abort after Close: %v", err)
	}

	// Replacing: readers see the old content until the new one commits.
	w, _ = b.Create(ctx, "p/1/out.mp3")
	w.Write([]byte("new"))
	if got := readBlob(t, b, "p/1/out.mp3"); got != "half a file, the rest" {
		t.Errorf("old content replaced before Close: %q", got)
	}
	w.Close()
	if got := readBlob(t, b, "p/1/out.mp3"); got != "new" {
		t.Errorf("content after replace %q", got)
	}

	// Abort leaves nothing, and the old content stays.
	w, _ = b.Create(ctx, "p/1/out.mp3")
	w.Write([]byte("discard me"))
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if err := w.Abort(); err != nil {
		t.Errorf("second Abort: %v", err)
	}
	if got := readBlob(t, b, "p/1/out.mp3"); got != "new" {
		t.Errorf("after abort: %q", got)
	}

	// A canceled context discards at Close.
	cctx, cancel := context.WithCancel(ctx)
	w, _ = b.Create(cctx, "p/2/x")
	w.Write([]byte("abc"))
	cancel()
	if _, err := w.Write([]byte("d")); !errors.Is(err, context.Canceled) {
		t.Errorf("write after cancel: %v", err)
	}
	if err := w.Close(); !errors.Is(err, context.Canceled) {
		t.Errorf("close after cancel: %v", err)
	}
	if _, err := b.Stat(ctx, "p/2/x"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("canceled blob: %v", err)
	}

	// An empty blob is a blob.
	putBlob(t, b, "empty", "")
	if info, err := b.Stat(ctx, "empty"); err != nil || info.Size != 0 {
		t.Errorf("empty blob: %+v, %v", info, err)
	}
	if got := readBlob(t, b, "empty"); got != "" {
		t.Errorf("empty blob reads %q", got)
	}
	if l := listKeys(t, b, ""); l != "empty,p/1/out.mp3" {
		t.Errorf("List = %s", l)
	}
}

func TestContractOpenSeekStat(t *testing.T) { eachBackend(t, testContractOpenSeekStat) }

func testContractOpenSeekStat(t *testing.T, b storage.Blobs) {
	ctx := t.Context()
	content := strings.Repeat("0123456789", 1000)
	before := time.Now().Add(-2 * time.Second)
	putBlob(t, b, "a/b c.wav", content)
	r, info, err := b.Open(ctx, "a/b c.wav")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if info.Key != "a/b c.wav" || info.Size != int64(len(content)) || info.ModTime.Before(before) || info.ModTime.After(time.Now().Add(2*time.Second)) {
		t.Errorf("info %+v", info)
	}
	buf := make([]byte, 10)
	if _, err := io.ReadFull(r, buf); err != nil || string(buf) != "0123456789" {
		t.Errorf("first read %q, %v", buf, err)
	}
	if _, err := r.Seek(5003, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(r, buf); err != nil || string(buf) != "3456789012" {
		t.Errorf("ranged read %q, %v", buf, err)
	}
	if pos, err := r.Seek(-4, io.SeekEnd); err != nil || pos != int64(len(content))-4 {
		t.Fatalf("seek from end: %d, %v", pos, err)
	}
	if rest, err := io.ReadAll(r); err != nil || string(rest) != "6789" {
		t.Errorf("tail %q, %v", rest, err)
	}
	if pos, _ := r.Seek(-10, io.SeekCurrent); pos != int64(len(content))-10 {
		t.Errorf("seek back: %d", pos)
	}
	st, err := b.Stat(ctx, "a/b c.wav")
	if err != nil || st != info {
		t.Errorf("Stat %+v, %v; want %+v", st, err, info)
	}
	if l, _ := b.List(ctx, "a/"); len(l) != 1 || l[0] != info {
		t.Errorf("List %+v; want %+v", l, info)
	}
	for _, key := range []string{"a/c.wav", "a"} {
		if _, _, err := b.Open(ctx, key); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("Open(%q) = %v, want ErrNotFound", key, err)
		}
		if _, err := b.Stat(ctx, key); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("Stat(%q) = %v, want ErrNotFound", key, err)
		}
	}

	// What the HTTP download does: http.ServeContent with Range requests.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r, info, err := b.Open(req.Context(), "a/b c.wav")
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		defer r.Close()
		http.ServeContent(w, req, "b.wav", info.ModTime, r)
	}))
	defer srv.Close()
	for rng, want := range map[string]string{
		"":                "",
		"bytes=5000-5009": "0123456789",
		"bytes=9995-":     "56789",
		"bytes=-3":        "789",
	} {
		req, _ := http.NewRequest("GET", srv.URL, nil)
		if rng != "" {
			req.Header.Set("Range", rng)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		switch {
		case rng == "" && (res.StatusCode != 200 || string(body) != content):
			t.Errorf("whole download: HTTP %d, %d bytes", res.StatusCode, len(body))
		case rng != "" && (res.StatusCode != http.StatusPartialContent || string(body) != want):
			t.Errorf("Range %s: HTTP %d %q, want 206 %q", rng, res.StatusCode, body, want)
		}
	}
	// Two ranges: a multipart response, each part read after a seek.
	req, _ := http.NewRequest("GET", srv.URL, nil)
	req.Header.Set("Range", "bytes=0-1,9998-9999")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusPartialContent || !bytes.Contains(body, []byte("\r\n\r\n01\r\n")) || !bytes.Contains(body, []byte("\r\n\r\n89\r\n")) {
		t.Errorf("two ranges: HTTP %d\n%s", res.StatusCode, body)
	}
}

func TestContractInvalidKeys(t *testing.T) { eachBackend(t, testContractInvalidKeys) }

func testContractInvalidKeys(t *testing.T, b storage.Blobs) {
	ctx := t.Context()
	for _, key := range []string{"../x", "/etc/passwd", "a/../../x", "", "a/.tmp-1", "a//b"} {
		if _, err := b.Create(ctx, key); !errors.Is(err, storage.ErrInvalidKey) {
			t.Errorf("Create(%q) = %v", key, err)
		}
		if _, _, err := b.Open(ctx, key); !errors.Is(err, storage.ErrInvalidKey) {
			t.Errorf("Open(%q) = %v", key, err)
		}
		if _, err := b.Stat(ctx, key); !errors.Is(err, storage.ErrInvalidKey) {
			t.Errorf("Stat(%q) = %v", key, err)
		}
		if err := b.Delete(ctx, key); !errors.Is(err, storage.ErrInvalidKey) {
			t.Errorf("Delete(%q) = %v", key, err)
		}
	}
}

func TestContractDeleteAndList(t *testing.T) { eachBackend(t, testContractDeleteAndList) }

func testContractDeleteAndList(t *testing.T, b storage.Blobs) {
	ctx := t.Context()
	for _, k := range []string{"productions/abc/out.mp3", "productions/abc/out.flac", "productions/abd/x", "productions.txt", "presets/p/cover.jpg", "ü/ß ñ"} {
		putBlob(t, b, k, k)
	}
	for prefix, want := range map[string]string{
		"":                  "presets/p/cover.jpg,productions.txt,productions/abc/out.flac,productions/abc/out.mp3,productions/abd/x,ü/ß ñ",
		"productions/":      "productions/abc/out.flac,productions/abc/out.mp3,productions/abd/x",
		"productions/ab":    "productions/abc/out.flac,productions/abc/out.mp3,productions/abd/x",
		"productions/abc/":  "productions/abc/out.flac,productions/abc/out.mp3",
		"productions/abc/o": "productions/abc/out.flac,productions/abc/out.mp3",
		"production":        "productions.txt,productions/abc/out.flac,productions/abc/out.mp3,productions/abd/x",
		"nothing/":          "",
		"pre":               "presets/p/cover.jpg",
		"ü/":                "ü/ß ñ",
	} {
		if got := listKeys(t, b, prefix); got != want {
			t.Errorf("List(%q) = %s\nwant %s", prefix, got, want)
		}
	}
	l, _ := b.List(ctx, "productions/abc/")
	for _, i := range l {
		if i.Size != int64(len(i.Key)) || i.ModTime.IsZero() {
			t.Errorf("listed %+v", i)
		}
	}
	if err := b.Delete(ctx, "productions/abd/x"); err != nil {
		t.Fatal(err)
	}
	if err := b.Delete(ctx, "productions/abd/x"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("second Delete: %v", err)
	}
	if err := b.Delete(ctx, "productions/abc"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Delete of a prefix: %v", err)
	}
	if got := listKeys(t, b, "productions/"); got != "productions/abc/out.flac,productions/abc/out.mp3" {
		t.Errorf("after delete: %s", got)
	}
}

func TestContractConcurrentWriters(t *testing.T) { eachBackend(t, testContractConcurrentWriters) }

func testContractConcurrentWriters(t *testing.T, b storage.Blobs) {
	ctx := t.Context()
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Go(func() {
			for i := range 10 {
				// Keys without folders: versitygw's posix backend removes
				// the folder a delete leaves empty, racing with a PUT into
				// it ("Existing Object is a directory"), which S3 itself
				// cannot do; Dir's own test (TestConcurrentWritersAndDeletes)
				// covers folders.
				key := fmt.Sprintf("f%d", i%3)
				w, err := b.Create(ctx, key)
				if err != nil {
					t.Error(err)
					return
				}
				w.Write(bytes.Repeat([]byte{byte('a' + g)}, 1000))
				if err := w.Close(); err != nil {
					t.Error(err)
					return
				}
				if g%2 == 0 {
					b.Delete(ctx, key) // may race with another writer's commit: fine
				}
				// Whatever is visible is one writer's whole content.
				if r, info, err := b.Open(ctx, key); err == nil {
					got, err := io.ReadAll(r)
					r.Close()
					if err == nil && (info.Size != 1000 || len(got) != 1000 || bytes.Count(got, got[:1]) != 1000) {
						t.Errorf("torn blob: %d bytes", len(got))
					}
				}
			}
		})
	}
	wg.Wait()
}
