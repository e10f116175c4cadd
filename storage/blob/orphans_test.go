package blob

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/audiopost/audiopost/storage"
)

func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func TestCleanOrphans(t *testing.T) {
	ctx := t.Context()
	root := t.TempDir()
	d, err := OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	_, host, _ := parseTempOwner(storage.TempPrefix + tempOwner)
	mk := func(rel string, age time.Duration) string {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("partial"), 0o640); err != nil {
			t.Fatal(err)
		}
		if age > 0 {
			old := time.Now().Add(-age)
			os.Chtimes(p, old, old)
			os.Chtimes(filepath.Dir(p), old, old)
		}
		return p
	}
	dead := mk("productions/a/input/"+storage.TempPrefix+strconv.Itoa(deadPID(t))+"@"+host+"~x", 0)              // killed upload: at once
	live := mk("productions/b/input/"+storage.TempPrefix+strconv.Itoa(os.Getppid())+"@"+host+"~x", 0)            // live writer: kept
	stale := mk("productions/c/input/"+storage.TempPrefix+strconv.Itoa(os.Getppid())+"@"+host+"~y", 2*time.Hour) // stale: grace over
	foreign := mk("productions/d/input/"+storage.TempPrefix+"1@otherhost~x", 0)                                  // another host, fresh: kept
	legacy := mk("productions/e/input/"+storage.TempPrefix+"0123abcd", 2*time.Hour)                              // old name, stale
	blobKept := mk("productions/f/input/in.wav", 2*time.Hour)
	freshEmpty := filepath.Join(root, "productions", "g", "input")
	os.MkdirAll(freshEmpty, 0o750)
	oldEmpty := filepath.Join(root, "productions", "h", "input")
	os.MkdirAll(oldEmpty, 0o750)
	old := time.Now().Add(-2 * time.Hour)
	os.Chtimes(oldEmpty, old, old)
	os.Chtimes(filepath.Dir(oldEmpty), old, old)

	// A write in progress in this process.
	w, err := d.Create(ctx, "productions/i/input/up.wav")
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("uploading"))

	o, err := d.CleanOrphans(ctx, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if o.TempFiles != 3 {
		t.Errorf("removed %d temporary files, want 3", o.TempFiles)
	}
	for p, want := range map[string]bool{dead: false, live: true, stale: false, foreign: true, legacy: false, blobKept: true,
		freshEmpty: true, oldEmpty: false, filepath.Dir(oldEmpty): false,
		filepath.Join(root, "productions", "a"): false, filepath.Join(root, "productions", "c"): false} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", p, err == nil, want)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatalf("the write in progress was broken: %v", err)
	}

	// An aborted write leaves no folder.
	w, _ = d.Create(ctx, "productions/j/input/x.wav")
	w.Write([]byte("x"))
	w.Abort()
	if _, err := os.Stat(filepath.Join(root, "productions", "j")); !os.IsNotExist(err) {
		t.Errorf("aborted write left its folder: %v", err)
	}
}
