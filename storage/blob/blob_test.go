package blob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/audiopost/audiopost/storage"
)

func openTest(t *testing.T) (*Dir, string) {
	t.Helper()
	dir := t.TempDir()
	d, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, dir
}

func put(t *testing.T, d *Dir, key, content string) {
	t.Helper()
	w, err := d.Create(t.Context(), key)
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

func read(t *testing.T, d *Dir, key string) string {
	t.Helper()
	r, _, err := d.Open(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// files lists every regular file in the folder, temporary ones included.
func files(t *testing.T, dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out
}

func TestCreateIsAtomic(t *testing.T) {
	ctx := t.Context()
	d, dir := openTest(t)
	w, err := d.Create(ctx, "p/1/out.mp3")
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("half a file"))
	// Not closed: nothing under the key.
	_, err = d.Stat(ctx, "p/1/out.mp3")
	if !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("unclosed blob visible: %v", err)
	}
	if l, _ := d.List(ctx, ""); len(l) != 0 {
		t.Fatalf("unclosed blob listed: %+v", l)
	}
	if f := files(t, dir); len(f) != 1 || !strings.HasPrefix(filepath.Base(f[0]), storage.TempPrefix) {
		t.Fatalf("on disk while writing: %v", f)
	}
	w.Write([]byte(", the rest"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := read(t, d, "p/1/out.mp3"); got != "half a file, the rest" {
		t.Errorf("content %q", got)
	}
	if f := files(t, dir); len(f) != 1 || f[0] != "p/1/out.mp3" {
		t.Errorf("on disk after Close: %v", f)
	}
	if _, err := w.Write([]byte("x")); err == nil {
		t.Error("write after Close succeeded")
	}
	if err := w.Close(); err == nil {
		t.Error("second Close succeeded")
	}

	// Replacing: readers see the old content until the new one commits.
	w, _ = d.Create(ctx, "p/1/out.mp3")
	w.Write([]byte("new"))
	if got := read(t, d, "p/1/out.mp3"); got != "half a file, the rest" {
		t.Errorf("old content replaced before Close: %q", got)
	}
	w.Close()
	if got := read(t, d, "p/1/out.mp3"); got != "new" {
		t.Errorf("content after replace %q", got)
	}

	// Abort leaves nothing, and the old content stays.
	w, _ = d.Create(ctx, "p/1/out.mp3")
	w.Write([]byte("discard me"))
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if err := w.Abort(); err != nil {
		t.Errorf("second Abort: %v", err)
	}
	if got := read(t, d, "p/1/out.mp3"); got != "new" || len(files(t, dir)) != 1 {
		t.Errorf("after abort: %q, files %v", got, files(t, dir))
	}

	// A canceled context discards at Close.
	cctx, cancel := context.WithCancel(ctx)
	w, _ = d.Create(cctx, "p/2/x")
	w.Write([]byte("abc"))
	cancel()
	if _, err := w.Write([]byte("d")); !errors.Is(err, context.Canceled) {
		t.Errorf("write after cancel: %v", err)
	}
	if err := w.Close(); !errors.Is(err, context.Canceled) {
		t.Errorf("close after cancel: %v", err)
	}
	if _, err := d.Stat(ctx, "p/2/x"); !errors.Is(err, storage.ErrNotFound) || len(files(t, dir)) != 1 {
		t.Errorf("canceled blob: %v, files %v", err, files(t, dir))
	}
}

func TestOpenSeekStat(t *testing.T) {
	ctx := t.Context()
	d, _ := openTest(t)
	content := strings.Repeat("0123456789", 1000)
	before := time.Now().Add(-time.Second)
	put(t, d, "a/b.wav", content)
	r, info, err := d.Open(ctx, "a/b.wav")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if info.Key != "a/b.wav" || info.Size != int64(len(content)) || info.ModTime.Before(before) {
		t.Errorf("info %+v", info)
	}
	// A Range request: bytes 5000-5009.
	if _, err := r.Seek(5003, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 10)
	if _, err := io.ReadFull(r, buf); err != nil || string(buf) != "3456789012" {
		t.Errorf("ranged read %q, %v", buf, err)
	}
	st, err := d.Stat(ctx, "a/b.wav")
	if err != nil || st != info {
		t.Errorf("Stat %+v, %v; want %+v", st, err, info)
	}
	for _, key := range []string{"a/c.wav", "a"} {
		if _, _, err := d.Open(ctx, key); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("Open(%q) = %v, want ErrNotFound", key, err)
		}
		if _, err := d.Stat(ctx, key); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("Stat(%q) = %v, want ErrNotFound", key, err)
		}
	}
}

func TestInvalidKeysAndEscapes(t *testing.T) {
	ctx := t.Context()
	d, dir := openTest(t)
	for _, key := range []string{"../x", "/etc/passwd", "a/../../x", "", "a/.tmp-1"} {
		if _, err := d.Create(ctx, key); !errors.Is(err, storage.ErrInvalidKey) {
			t.Errorf("Create(%q) = %v", key, err)
		}
		if _, _, err := d.Open(ctx, key); !errors.Is(err, storage.ErrInvalidKey) {
			t.Errorf("Open(%q) = %v", key, err)
		}
		if err := d.Delete(ctx, key); !errors.Is(err, storage.ErrInvalidKey) {
			t.Errorf("Delete(%q) = %v", key, err)
		}
	}
	if _, err := d.List(ctx, "../"); !errors.Is(err, storage.ErrInvalidKey) {
		t.Errorf("List(../) = %v", err)
	}
	// A symlink planted in the folder cannot lead outside it.
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o600)
	if err := os.Symlink(outside, filepath.Join(dir, "link")); err != nil {
		t.Skip(err)
	}
	if _, _, err := d.Open(ctx, "link/secret"); err == nil {
		t.Error("read through a symlink to outside the folder")
	}
	if _, err := d.Create(ctx, "link/new"); err == nil {
		t.Error("created through a symlink to outside the folder")
	}
}

func TestDeleteAndList(t *testing.T) {
	ctx := t.Context()
	d, dir := openTest(t)
	for _, k := range []string{"productions/abc/out.mp3", "productions/abc/out.flac", "productions/abd/x", "productions.txt", "presets/p/cover.jpg"} {
		put(t, d, k, k)
	}
	// A temp file of an interrupted write is never listed.
	os.WriteFile(filepath.Join(dir, "productions", "abc", storage.TempPrefix+"dead"), []byte("x"), 0o600)
	keys := func(prefix string) string {
		l, err := d.List(ctx, prefix)
		if err != nil {
			t.Fatal(err)
		}
		var s []string
		for _, b := range l {
			if b.Size != int64(len(b.Key)) {
				t.Errorf("%s: size %d", b.Key, b.Size)
			}
			s = append(s, b.Key)
		}
		return strings.Join(s, ",")
	}
	for prefix, want := range map[string]string{
		"":                  "presets/p/cover.jpg,productions.txt,productions/abc/out.flac,productions/abc/out.mp3,productions/abd/x",
		"productions/":      "productions/abc/out.flac,productions/abc/out.mp3,productions/abd/x",
		"productions/ab":    "productions/abc/out.flac,productions/abc/out.mp3,productions/abd/x",
		"productions/abc/":  "productions/abc/out.flac,productions/abc/out.mp3",
		"productions/abc/o": "productions/abc/out.flac,productions/abc/out.mp3",
		"production":        "productions.txt,productions/abc/out.flac,productions/abc/out.mp3,productions/abd/x",
		"nothing/":          "",
		"pre":               "presets/p/cover.jpg",
	} {
		if got := keys(prefix); got != want {
			t.Errorf("List(%q) = %s\nwant %s", prefix, got, want)
		}
	}
	if err := d.Delete(ctx, "productions/abd/x"); err != nil {
		t.Fatal(err)
	}
	if err := d.Delete(ctx, "productions/abd/x"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("second Delete: %v", err)
	}
	if err := d.Delete(ctx, "productions/abc"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Delete of a directory: %v", err)
	}
	// The emptied directory is gone, the others stay.
	if _, err := os.Stat(filepath.Join(dir, "productions", "abd")); !os.IsNotExist(err) {
		t.Errorf("empty directory left: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "productions", "abc")); err != nil {
		t.Errorf("non-empty directory removed: %v", err)
	}
}

func TestCleanTemp(t *testing.T) {
	dir := t.TempDir()
	d, err := OpenDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	put(t, d, "a/blob", "keep")
	// A crash mid-write leaves a temp file: simulate one old, one recent.
	w, _ := d.Create(t.Context(), "a/recent")
	w.Write([]byte("still being written"))
	old := filepath.Join(dir, "a", storage.TempPrefix+"crashed")
	os.WriteFile(old, []byte("x"), 0o600)
	long := time.Now().Add(-TempMaxAge - time.Hour)
	os.Chtimes(old, long, long)
	d.Close()

	d, err = OpenDir(dir) // reopening cleans
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Error("old temp file survived OpenDir")
	}
	f := files(t, dir)
	if len(f) != 2 {
		t.Errorf("files after clean: %v (want the blob and the recent temp file)", f)
	}
	if n, err := d.CleanTemp(t.Context(), 0); err != nil || n != 1 {
		t.Errorf("CleanTemp(0) = %d, %v", n, err)
	}
	if f := files(t, dir); len(f) != 1 || f[0] != "a/blob" {
		t.Errorf("files: %v", f)
	}
}

func TestConcurrentWritersAndDeletes(t *testing.T) {
	ctx := t.Context()
	d, dir := openTest(t)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 30 {
				key := fmt.Sprintf("p/%d/f", i%3)
				w, err := d.Create(ctx, key)
				if err != nil {
					t.Error(err)
					return
				}
				content := bytes.Repeat([]byte{byte('a' + g)}, 1000)
				w.Write(content)
				if err := w.Close(); err != nil {
					t.Error(err)
					return
				}
				if g%2 == 0 {
					d.Delete(ctx, key) // may race with another writer's commit: fine
				}
				// Whatever is visible is one writer's whole content.
				if r, info, err := d.Open(ctx, key); err == nil {
					b, _ := io.ReadAll(r)
					r.Close()
					if info.Size != 1000 || len(b) != 1000 || bytes.Count(b, b[:1]) != 1000 {
						t.Errorf("torn blob: %d bytes", len(b))
					}
				}
			}
		})
	}
	wg.Wait()
	for _, f := range files(t, dir) {
		if strings.Contains(f, storage.TempPrefix) {
			t.Errorf("temp file left: %s", f)
		}
	}
}
