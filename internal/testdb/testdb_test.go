package testdb

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/audiopost/audiopost/storage"
)

// Each store is a database of its own with the whole schema, and a
// database is never opened over an existing file.
func TestSQLite(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a := SQLite(t, filepath.Join(dir, "a.db"))
	b := SQLite(t, filepath.Join(dir, "b.db"))
	u := storage.User{Username: "ann", Email: "ann@example.org"}
	if err := a.CreateUser(ctx, &u); err != nil {
		t.Fatal(err)
	}
	if _, err := a.GetUser(ctx, u.ID); err != nil {
		t.Errorf("the user just made: %v", err)
	}
	if _, err := b.GetUser(ctx, u.ID); err == nil {
		t.Error("a user of one store is in another")
	}
	if st, err := open(ctx, filepath.Join(dir, "a.db")); err == nil {
		st.Close()
		t.Error("opened a new database over an existing file")
	}
}
