// Package testdb gives tests a new SQLite store without migrating an empty
// database each time: the first store a test binary asks for is migrated
// by sqlstore.Open as usual, and every later one starts as a copy of that
// database, which sqlstore.Open then finds up to date. Migrating takes
// 0.2-0.3 s of CPU, 1.8 s under the race detector (the SQLite of
// modernc.org is Go translated from C, all of it instrumented), against
// 0.08 s for the copy; transport/httpapi's tests open some 70 stores.
// The migrations themselves are tested in storage/sqlstore, and a store
// opened on a database made by an earlier run is what every server's
// restart does.
package testdb

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/audiopost/audiopost/storage/sqlstore"
)

var migrated struct {
	once sync.Once
	db   []byte
	err  error
}

// SQLite opens a store on a new SQLite database at path (the file must
// not exist) with the schema of the current migrations, closed when t
// ends.
func SQLite(t testing.TB, path string) *sqlstore.Store {
	t.Helper()
	st, err := open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func open(ctx context.Context, path string) (*sqlstore.Store, error) {
	migrated.once.Do(func() {
		dir, err := os.MkdirTemp("", "audiopost-testdb-")
		if err != nil {
			migrated.err = err
			return
		}
		defer os.RemoveAll(dir)
		file := filepath.Join(dir, "migrated.db")
		st, err := sqlstore.Open(context.Background(), file)
		if err != nil {
			migrated.err = err
			return
		}
		// Close checkpoints the write-ahead log into the file.
		if err := st.Close(); err != nil {
			migrated.err = err
			return
		}
		migrated.db, migrated.err = os.ReadFile(file)
	})
	if migrated.err != nil {
		return nil, fmt.Errorf("testdb: migrating the template database: %w", migrated.err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	_, err = f.Write(migrated.db)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	return sqlstore.Open(ctx, path)
}
