package main

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/audiopost/audiopost/storage/blob"
)

// Orphan clean-up of serve: what interrupted uploads and writes left in
// the blob store.
const (
	// OrphanGrace is how long a temporary file (or an empty folder) of
	// another process must have been untouched before it counts as
	// abandoned. A live upload writes at least every few seconds (the
	// server cuts bodies slower than 4 KiB/s), so an hour never races one;
	// temporary files of dead processes of this host go at once.
	OrphanGrace = time.Hour
	// OrphanInterval is how often the clean-up runs after the one at
	// start-up.
	OrphanInterval = 10 * time.Minute
)

// orphanCleaner is implemented by the blob stores (blob.Dir, blob.S3).
type orphanCleaner interface {
	CleanOrphans(ctx context.Context, grace time.Duration) (blob.Orphans, error)
}

// cleanOrphans runs one clean-up pass and logs what it removed.
func cleanOrphans(ctx context.Context, c orphanCleaner, log *slog.Logger) {
	o, err := c.CleanOrphans(ctx, OrphanGrace)
	if err != nil && ctx.Err() == nil {
		log.Warn("cleaning up after interrupted uploads", "err", err)
	}
	if o.TempFiles > 0 || o.Folders > 0 {
		log.Info("cleaned up after interrupted uploads", "temporary_files", o.TempFiles, "empty_folders", o.Folders)
	}
}

// startOrphanCleaner runs a clean-up pass now and every OrphanInterval
// until the returned stop is called.
func startOrphanCleaner(b any, log *slog.Logger) (stop func()) {
	c, ok := b.(orphanCleaner)
	if !ok {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cleanOrphans(ctx, c, log)
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(OrphanInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				cleanOrphans(ctx, c, log)
			}
		}
	})
	return func() { cancel(); wg.Wait() }
}
