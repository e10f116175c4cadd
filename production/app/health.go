package app

import (
	"context"
	"errors"

	"github.com/audiopost/audiopost/storage"
)

// Pinger is implemented by stores and blob stores with a cheaper or more
// telling reachability check than a lookup (a stat of a key that need
// not exist).
type Pinger interface {
	Ping(ctx context.Context) error
}

// readyProbeKey is the blob key PingBlobs stats. It need not exist:
// "not found" proves the blob store answered.
const readyProbeKey = "readyz/probe"

// PingStore makes a cheap query of the store: its Ping, else a
// primary-key lookup of a job that does not exist.
func (a *App) PingStore(ctx context.Context) error {
	if p, ok := a.store.(Pinger); ok {
		return p.Ping(ctx)
	}
	_, err := a.store.GetJob(ctx, 0)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	return err
}

// PingBlobs checks that the blob store answers: its Ping, else a stat
// of a key that need not exist.
func (a *App) PingBlobs(ctx context.Context) error {
	if p, ok := a.blobs.(Pinger); ok {
		return p.Ping(ctx)
	}
	_, err := a.blobs.Stat(ctx, readyProbeKey)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	return err
}
