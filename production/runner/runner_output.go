package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/audiopost/audiopost/production/engine"

	"github.com/audiopost/audiopost/production"

	"github.com/audiopost/audiopost/storage"
)

// blobOutput is the Runner's OutputWriter: each file is written to a local
// temporary file (encoders seek to patch headers, and the engine reads
// lossy files back to verify them) and copied into its blob on Close. The
// blob store's own Close is atomic, so a crash or an Abort never leaves a
// half file under an output key, and a re-run replaces each file whole.
type blobOutput struct {
	ctx   context.Context
	blobs storage.Blobs
	uuid  string
	dir   string

	mu sync.Mutex
	// failed is the first blob store error: the run failed for an
	// infrastructure reason and is retried.
	failed error
}

func (o *blobOutput) fail(err error) error {
	o.mu.Lock()
	if o.failed == nil {
		o.failed = err
	}
	o.mu.Unlock()
	return err
}

// Create implements OutputWriter.
func (o *blobOutput) Create(name string) (engine.PendingFile, error) {
	if name == "" || strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
		return nil, fmt.Errorf("%w: output file name %q is not a plain file name", production.ErrInvalid, name)
	}
	f, err := os.CreateTemp(o.dir, "audiopost-out-*")
	if err != nil {
		return nil, o.fail(fmt.Errorf("creating output %s: %w", name, err))
	}
	return &blobFile{o: o, f: f, key: production.OutputKey(o.uuid, name)}, nil
}

type blobFile struct {
	o    *blobOutput
	f    *os.File
	key  string
	done bool
}

// File hands encoders the local file.
func (b *blobFile) File() *os.File { return b.f }

func (b *blobFile) Write(p []byte) (int, error) { return b.f.Write(p) }

// Close copies the file into its blob and commits it.
func (b *blobFile) Close() error {
	if b.done {
		return nil
	}
	b.done = true
	defer b.remove()
	if _, err := b.f.Seek(0, io.SeekStart); err != nil {
		return b.o.fail(fmt.Errorf("publishing %s: %w", b.key, err))
	}
	w, err := b.o.blobs.Create(b.o.ctx, b.key)
	if err != nil {
		return b.o.fail(fmt.Errorf("publishing %s: %w", b.key, err))
	}
	if _, err := io.Copy(w, b.f); err != nil {
		w.Abort()
		return b.o.fail(fmt.Errorf("publishing %s: %w", b.key, err))
	}
	if err := w.Close(); err != nil {
		return b.o.fail(fmt.Errorf("publishing %s: %w", b.key, err))
	}
	return nil
}

// Abort discards the file.
func (b *blobFile) Abort() error {
	if b.done {
		return nil
	}
	b.done = true
	b.remove()
	return nil
}

func (b *blobFile) remove() {
	b.f.Close()
	os.Remove(b.f.Name())
}

// cleanTemp removes the temporary files a killed writer left in a blob
// folder (prefix ends in "/"). Only local folders have them where the
// runner can see them (LocalPath); the runner holds the production's
// lease, so nobody else is writing its outputs.
//
// A Blobs method to clean one prefix would be the portable way; the
// storage interface has none yet.
func cleanTemp(b storage.Blobs, prefix string) {
	lp, ok := b.(localPather)
	if !ok {
		return
	}
	dir, err := lp.LocalPath(strings.TrimSuffix(prefix, "/"))
	if err != nil {
		return
	}
	filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll
			}
			return nil
		}
		if !e.IsDir() && strings.HasPrefix(e.Name(), storage.TempPrefix) {
			os.Remove(p)
		}
		return nil
	})
}
