package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/audiopost/audiopost/internal/testsize"
	"github.com/audiopost/audiopost/storage/sqlstore"
	"github.com/audiopost/audiopost/transport/auth"
)

// authenticates reports whether the key opens a route behind the auth
// middleware of a service over the data directory.
func authenticates(t *testing.T, dir, key string) bool {
	t.Helper()
	ok := false
	withData(t, dir, func(st *sqlstore.Store) {
		h := auth.New(st, auth.Config{}).Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		req := httptest.NewRequest("GET", "/api/user.json", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		ok = rec.Code == 200
	})
	return ok
}

func TestKeyCommands(t *testing.T) {
	testsize.SkipRace(t, "sequential CLI commands on a store; the plain run checks them, the store's concurrency is storage/sqlstore's race run")
	dir := t.TempDir()
	addUser(t, dir, "alice")
	addUser(t, dir, "bob")
	key := strings.TrimSpace(mustCLI(t, "key", "create", "-data", dir, "-user", "alice", "-name", "laptop"))
	if len(key) != 43 || strings.ContainsAny(key, " \n") {
		t.Fatalf("create printed %q, want just the key", key)
	}
	if !authenticates(t, dir, key) {
		t.Error("the new key does not authenticate")
	}
	key2 := strings.TrimSpace(mustCLI(t, "key", "create", "-data", dir, "-user", "alice", "-name", "ci", "-expires", "720h"))
	out := mustCLI(t, "key", "list", "-data", dir, "-user", "alice")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || strings.Contains(out, key) || strings.Contains(out, key2) {
		t.Fatalf("list: %q", out)
	}
	exp := time.Now().Add(720 * time.Hour).UTC().Format("2006-01-02")
	if !strings.Contains(lines[1], "ci") || !strings.Contains(lines[1], exp) || !strings.Contains(lines[1], "active") {
		t.Errorf("ci key line %q, want expiry %s", lines[1], exp)
	}
	if !strings.Contains(lines[2], "laptop") || !strings.Contains(lines[2], "never") {
		t.Errorf("laptop key line %q", lines[2])
	}
	laptopID := strings.Fields(lines[2])[0]
	// Bob cannot revoke alice's key.
	if _, err := runCLI(t, "key", "revoke", "-data", dir, "-user", "bob", laptopID); err == nil {
		t.Error("bob revoked alice's key")
	}
	// The ID may come before the flags.
	mustCLI(t, "key", "revoke", laptopID, "-data", dir, "-user", "alice")
	if authenticates(t, dir, key) {
		t.Error("a revoked key authenticates")
	}
	if !authenticates(t, dir, key2) {
		t.Error("the other key stopped working")
	}
	if out := mustCLI(t, "key", "list", "-data", dir, "-user", "alice"); !strings.Contains(out, "revoked") {
		t.Errorf("list after revoke: %q", out)
	}
	for _, bad := range [][]string{
		{"create", "-data", dir, "-user", "nobody", "-name", "x"},
		{"create", "-data", dir, "-user", "alice"},
		{"create", "-data", dir, "-user", "alice", "-name", "x", "-expires", "-1h"},
		{"revoke", "-data", dir, "-user", "alice"},
	} {
		if _, err := runCLI(t, append([]string{"key"}, bad...)...); err == nil {
			t.Errorf("key %v succeeded", bad)
		}
	}
}
