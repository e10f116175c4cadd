package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/storage/sqlstore"
)

// runCLI runs the binary's run function and returns stdout.
func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), args, &stdout, &stderr)
	if err != nil {
		t.Logf("%s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), err
}

func mustCLI(t *testing.T, args ...string) string {
	t.Helper()
	out, err := runCLI(t, args...)
	if err != nil {
		t.Fatalf("%s: %v", strings.Join(args, " "), err)
	}
	return out
}

// withData opens the data directory the CLI wrote, after the CLI closed it.
func withData(t *testing.T, dir string, fn func(st *sqlstore.Store)) {
	t.Helper()
	d, err := sqlstore.OpenDataDir(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	fn(d.Store)
}

func TestUserCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("sequential CLI commands; the plain run checks them, -race -short need not")
	}
	dir := t.TempDir()
	out := mustCLI(t, "user", "add", "-data", dir, "-username", "alice", "-email", "alice@example.org", "-password", "correct horse")
	if !strings.Contains(out, "created user alice") {
		t.Errorf("add: %q", out)
	}
	for _, bad := range [][]string{
		{"-username", "alice", "-password", "another one"},                    // taken
		{"-username", "bob", "-password", "short"},                            // too short
		{"-username", "b@b", "-password", "long enough"},                      // bad username
		{"-username", "bob", "-email", "not-an-email", "-password", "longer"}, // bad email
		{"-username", "bob"}, // no password
	} {
		if _, err := runCLI(t, append([]string{"user", "add", "-data", dir}, bad...)...); err == nil {
			t.Errorf("user add %v succeeded", bad)
		}
	}
	if _, err := runCLI(t, "user", "add", "-username", "x", "-password", "long enough"); err == nil {
		t.Error("user add without -data succeeded")
	}
	out = mustCLI(t, "user", "list", "-data", dir)
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 2 || !strings.Contains(lines[1], "alice@example.org") {
		t.Errorf("list: %q", out)
	}
	mustCLI(t, "user", "passwd", "-data", dir, "-username", "alice", "-password", "battery staple")
	withData(t, dir, func(st *sqlstore.Store) {
		u, err := st.GetUserByUsername(t.Context(), "alice")
		if err != nil || !storage.CheckPassword(u.PasswordHash, "battery staple") || storage.CheckPassword(u.PasswordHash, "correct horse") {
			t.Errorf("password not changed: %v", err)
		}
	})
	_, err := runCLI(t, "user", "passwd", "-data", dir, "-username", "nobody", "-password", "battery staple")
	if !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("passwd of unknown user: %v", err)
	}
	if _, err := runCLI(t, "user", "frobnicate"); err == nil {
		t.Error("unknown verb succeeded")
	}
	if _, err := runCLI(t, "user", "add", "-h"); err != nil {
		t.Errorf("-h: %v", err)
	}
}

// addUser stores a user directly, without the slow password hash.
func addUser(t *testing.T, dir, name string) storage.User {
	var u storage.User
	withData(t, dir, func(st *sqlstore.Store) {
		u = storage.User{Username: name}
		if err := st.CreateUser(t.Context(), &u); err != nil {
			t.Fatal(err)
		}
	})
	return u
}
