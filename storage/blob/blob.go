// Package blob implements storage.Blobs on a local folder (Dir) and on an
// S3-compatible bucket (S3); OpenURL opens either from the -blobs value
// of audiopost serve.
//
// In a folder, a blob is a regular file at its key's path under the folder. Writers
// write to a temporary file (named storage.TempPrefix + random) in the
// blob's own directory, fsync it and rename it over the key on Close, so
// readers see either the old content or the new one, never a half-written
// file, even after a crash or kill -9. All file access goes through an
// os.Root, so neither a key nor a symlink planted in the folder can reach
// outside it.
//
// Temporary files that a crash left behind are invisible (List and Stat
// skip them, no key can name them) and are removed by OpenDir once they are
// older than TempMaxAge; CleanTemp removes them on demand, and
// CleanOrphans also removes at once those of dead processes of this host
// (their names carry the writer's host and pid) and empty folders.
package blob

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/audiopost/audiopost/storage"
)

// TempMaxAge is how old a temporary file must be before OpenDir removes it.
// It is long because another process sharing the folder (an API server
// next to a worker) may still be writing it: a temp file's modification
// time advances with every write, so only abandoned ones get this old.
const TempMaxAge = 24 * time.Hour

// Dir is a storage.Blobs on a local folder. It is safe for concurrent use.
type Dir struct {
	root   *os.Root
	path   string
	opened time.Time
	// dirs serializes making folders in Create with pruning empty ones in
	// Delete: otherwise a Delete can remove the folder a Create has just
	// made, between its MkdirAll and its OpenFile.
	dirs sync.Mutex
}

var _ storage.Blobs = (*Dir)(nil)

// OpenDir opens (creating if needed) the folder at path as a blob store and
// removes temporary files older than TempMaxAge.
func OpenDir(dir string) (*Dir, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("blob: %w", err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("blob: %w", err)
	}
	d := &Dir{root: root, path: dir, opened: time.Now()}
	if _, err := d.CleanTemp(context.Background(), TempMaxAge); err != nil {
		root.Close()
		return nil, err
	}
	return d, nil
}

// Close releases the folder. Open readers and writers stay usable.
func (d *Dir) Close() error { return d.root.Close() }

// LocalPath returns the file system path of a blob, for tools that need a
// file name (ffmpeg reading a seekable input). It is specific to the local
// folder; other Blobs implementations download to a temporary file instead.
func (d *Dir) LocalPath(key string) (string, error) {
	if err := storage.ValidKey(key); err != nil {
		return "", err
	}
	return filepath.Join(d.path, filepath.FromSlash(key)), nil
}

// CleanTemp removes temporary files not modified for olderThan and reports
// how many it removed.
func (d *Dir) CleanTemp(ctx context.Context, olderThan time.Duration) (int, error) {
	cutoff := time.Now().Add(-olderThan)
	n := 0
	err := fs.WalkDir(d.root.FS(), ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed concurrently
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if e.IsDir() || !strings.HasPrefix(e.Name(), storage.TempPrefix) {
			return nil
		}
		info, err := e.Info()
		if err != nil || !info.ModTime().Before(cutoff) {
			return nil
		}
		if err := d.root.Remove(filepath.FromSlash(p)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		n++
		return nil
	})
	if err != nil {
		return n, fmt.Errorf("blob: clean temporary files: %w", err)
	}
	return n, nil
}

// Create implements storage.Blobs.
func (d *Dir) Create(ctx context.Context, key string) (storage.BlobWriter, error) {
	if err := storage.ValidKey(key); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dir := path.Dir(key)
	var (
		f   *os.File
		tmp string
		err error
	)
	d.dirs.Lock()
	if dir != "." {
		err = d.root.MkdirAll(filepath.FromSlash(dir), 0o750)
	}
	if err == nil {
		tmp = path.Join(dir, storage.TempPrefix+tempOwner+randomHex())
		f, err = d.root.OpenFile(filepath.FromSlash(tmp), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o640)
		if errors.Is(err, fs.ErrNotExist) && dir != "." {
			// Another process removed the folder as empty between our
			// MkdirAll and OpenFile (CleanOrphans): make it again, once.
			if err = d.root.MkdirAll(filepath.FromSlash(dir), 0o750); err == nil {
				f, err = d.root.OpenFile(filepath.FromSlash(tmp), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o640)
			}
		}
	}
	d.dirs.Unlock()
	if err != nil {
		return nil, fmt.Errorf("blob: create %s: %w", key, err)
	}
	return &writer{ctx: ctx, d: d, f: f, tmp: tmp, key: key}, nil
}

func randomHex() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// writer writes a temporary file and renames it over the key on Close.
type writer struct {
	ctx  context.Context
	d    *Dir
	f    *os.File
	tmp  string
	key  string
	done bool
}

func (w *writer) Write(p []byte) (int, error) {
	if w.done {
		return 0, fmt.Errorf("blob: write %s: %w", w.key, os.ErrClosed)
	}
	if err := w.ctx.Err(); err != nil {
		return 0, fmt.Errorf("blob: write %s: %w", w.key, err)
	}
	return w.f.Write(p)
}

// Close makes the blob durable (file fsync), then visible (rename), then
// the rename durable (directory fsync).
func (w *writer) Close() error {
	if w.done {
		return fmt.Errorf("blob: close %s: %w", w.key, os.ErrClosed)
	}
	if err := w.ctx.Err(); err != nil {
		w.Abort()
		return fmt.Errorf("blob: close %s: %w", w.key, err)
	}
	w.done = true
	err := w.f.Sync()
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = w.d.root.Rename(filepath.FromSlash(w.tmp), filepath.FromSlash(w.key))
	}
	if err != nil {
		w.d.root.Remove(filepath.FromSlash(w.tmp))
		w.d.pruneDirs(path.Dir(w.key))
		return fmt.Errorf("blob: commit %s: %w", w.key, err)
	}
	if err := w.d.syncDir(path.Dir(w.key)); err != nil {
		return fmt.Errorf("blob: commit %s: %w", w.key, err)
	}
	return nil
}

func (w *writer) Abort() error {
	if w.done {
		return nil
	}
	w.done = true
	w.f.Close()
	if err := w.d.root.Remove(filepath.FromSlash(w.tmp)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("blob: abort %s: %w", w.key, err)
	}
	// A rejected upload leaves no empty folder behind.
	w.d.pruneDirs(path.Dir(w.key))
	return nil
}

func (d *Dir) syncDir(dir string) error {
	f, err := d.root.Open(filepath.FromSlash(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil // a concurrent Delete removed the blob and its directory
	}
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Open implements storage.Blobs. The returned reader is an *os.File.
func (d *Dir) Open(ctx context.Context, key string) (io.ReadSeekCloser, storage.BlobInfo, error) {
	if err := storage.ValidKey(key); err != nil {
		return nil, storage.BlobInfo{}, err
	}
	if err := ctx.Err(); err != nil {
		return nil, storage.BlobInfo{}, err
	}
	f, err := d.root.Open(filepath.FromSlash(key))
	if err != nil {
		return nil, storage.BlobInfo{}, notFound("open", key, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, storage.BlobInfo{}, fmt.Errorf("blob: open %s: %w", key, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, storage.BlobInfo{}, fmt.Errorf("blob: open %s: not a blob: %w", key, storage.ErrNotFound)
	}
	return f, storage.BlobInfo{Key: key, Size: fi.Size(), ModTime: fi.ModTime()}, nil
}

// Stat implements storage.Blobs.
func (d *Dir) Stat(ctx context.Context, key string) (storage.BlobInfo, error) {
	if err := storage.ValidKey(key); err != nil {
		return storage.BlobInfo{}, err
	}
	if err := ctx.Err(); err != nil {
		return storage.BlobInfo{}, err
	}
	fi, err := d.root.Stat(filepath.FromSlash(key))
	if err != nil {
		return storage.BlobInfo{}, notFound("stat", key, err)
	}
	if !fi.Mode().IsRegular() {
		return storage.BlobInfo{}, fmt.Errorf("blob: stat %s: not a blob: %w", key, storage.ErrNotFound)
	}
	return storage.BlobInfo{Key: key, Size: fi.Size(), ModTime: fi.ModTime()}, nil
}

// Delete implements storage.Blobs. Directories left empty are removed too,
// so that deleting a production's files leaves no trace.
func (d *Dir) Delete(ctx context.Context, key string) error {
	if err := storage.ValidKey(key); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	fi, err := d.root.Lstat(filepath.FromSlash(key))
	if err != nil {
		return notFound("delete", key, err)
	}
	if fi.IsDir() {
		return fmt.Errorf("blob: delete %s: not a blob: %w", key, storage.ErrNotFound)
	}
	if err := d.root.Remove(filepath.FromSlash(key)); err != nil {
		return notFound("delete", key, err)
	}
	d.pruneDirs(path.Dir(key))
	return nil
}

// pruneDirs removes dir and its parents while they are empty.
func (d *Dir) pruneDirs(dir string) {
	d.dirs.Lock()
	defer d.dirs.Unlock()
	for ; dir != "." && dir != "/"; dir = path.Dir(dir) {
		if d.root.Remove(filepath.FromSlash(dir)) != nil {
			break // not empty (or gone): stop climbing
		}
	}
}

// List implements storage.Blobs.
func (d *Dir) List(ctx context.Context, prefix string) ([]storage.BlobInfo, error) {
	start := "."
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		start = prefix[:i]
		if err := storage.ValidKey(start); err != nil {
			return nil, fmt.Errorf("blob: list prefix %q: %w", prefix, err)
		}
	}
	var out []storage.BlobInfo
	err := fs.WalkDir(d.root.FS(), start, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // nothing under the prefix, or removed concurrently
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		name := e.Name()
		switch {
		case e.IsDir():
			if p != start && !strings.HasPrefix(p+"/", prefix) && !strings.HasPrefix(prefix, p+"/") {
				return fs.SkipDir
			}
			return nil
		case !e.Type().IsRegular(), strings.HasPrefix(name, storage.TempPrefix), !strings.HasPrefix(p, prefix):
			return nil
		}
		info, err := e.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		out = append(out, storage.BlobInfo{Key: p, Size: info.Size(), ModTime: info.ModTime()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("blob: list %q: %w", prefix, err)
	}
	slices.SortFunc(out, func(a, b storage.BlobInfo) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

func notFound(op, key string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("blob: %s %s: %w", op, key, storage.ErrNotFound)
	}
	return fmt.Errorf("blob: %s %s: %w", op, key, err)
}
