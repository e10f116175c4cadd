package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/audiopost/audiopost/storage/blob"
)

// DataDir is the embedded deployment's storage: one directory holding the
// SQLite database and the blob folder.
//
//	<dir>/audiopost.db (+ -wal, -shm)   metadata
//	<dir>/blobs/                        audio and side files
type DataDir struct {
	Dir   string
	Store *Store
	Blobs *blob.Dir
}

// Names inside a data directory.
const (
	DataDirDB    = "audiopost.db"
	DataDirBlobs = "blobs"
)

// OpenDataDir opens (creating if needed) the data directory dir: the SQLite
// store, migrated, and the blob folder, cleaned of temporary files that a
// crash left behind.
func OpenDataDir(ctx context.Context, dir string) (*DataDir, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("sqlstore: data directory: %w", err)
	}
	st, err := Open(ctx, filepath.Join(dir, DataDirDB))
	if err != nil {
		return nil, err
	}
	blobs, err := blob.OpenDir(filepath.Join(dir, DataDirBlobs))
	if err != nil {
		st.Close()
		return nil, err
	}
	return &DataDir{Dir: dir, Store: st, Blobs: blobs}, nil
}

// Close closes the store and the blob folder.
func (d *DataDir) Close() error {
	return errors.Join(d.Store.Close(), d.Blobs.Close())
}
