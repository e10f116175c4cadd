package main

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/storage/transfer/transfertest"
)

// dataFiles returns the bytes of every file of the SQLite database (the
// file, its WAL and shared memory).
func dataFiles(t *testing.T, dir string) []byte {
	t.Helper()
	var all []byte
	matches, _ := filepath.Glob(filepath.Join(dir, "audiopost.db*"))
	for _, m := range matches {
		b, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, b...)
	}
	if len(all) == 0 {
		t.Fatal("no database files")
	}
	return all
}

func TestServiceCommands(t *testing.T) {
	srv := transfertest.Start(t, "sftp")
	os.WriteFile(filepath.Join(srv.Dir, "in.wav"), []byte("x"), 0o644)
	host, port, _ := net.SplitHostPort(srv.Addr)
	dir := t.TempDir()
	addUser(t, dir, "alice")
	addUser(t, dir, "bob")
	pwFile := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pwFile, []byte(srv.Password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	add := func(extra ...string) (string, error) {
		args := []string{"service", "add", "-type", "sftp", "-data", dir, "-set", "host=" + host, "-user", "alice",
			"-set", "port=" + port, "-set", "username=" + srv.User, "-allow-private-fetch"}
		return runCLI(t, append(args, extra...)...)
	}

	// Refused: a wrong password (tested first), unknown types and
	// settings, loopback without -allow-private-fetch.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-set", "password=wrong"}, "connection test failed (password)"},
		{[]string{"-set", "password=x", "-set", "host_key=abc"}, "host_key:"},
		{[]string{"-set", "password=x", "-set", "colour=red"}, "colour: is not a parameter of sftp"},
		{[]string{"-set", "password=x", "-set", "password=y"}, "set twice"},
	} {
		_, err := add(tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("add %v: %v, want %q", tc.args, err, tc.want)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-type", "http", "-set", "url=https://x/"}, "unknown service type"},
		{[]string{"-type", "soundcloud"}, "no connector"},
		{[]string{"-type", "webdav", "-set", "url=http://" + srv.Addr + "/"}, "refusing to connect to loopback"},
	} {
		_, err := runCLI(t, append([]string{"service", "add", "-data", dir, "-user", "alice"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("add %v: %v, want %q", tc.args, err, tc.want)
		}
	}
	if out := mustCLI(t, "service", "ls", "-data", dir, "-user", "alice"); strings.Count(out, "\n") != 1 {
		t.Fatalf("refused services were stored: %q", out)
	}

	// Flags in any order; the password from a file.
	out, err := add("-set-file", "password="+pwFile, "-name", "My server")
	if err != nil {
		t.Fatal(err)
	}
	uuid := strings.Fields(strings.TrimPrefix(out, "added service "))[0]
	if !strings.Contains(out, `(sftp, "My server") for alice`) || len(uuid) != 36 {
		t.Fatalf("add printed %q", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "secret.key")); err != nil {
		t.Errorf("no key file in the data directory: %v", err)
	}
	if db := dataFiles(t, dir); bytes.Contains(db, []byte(srv.Password)) {
		t.Error("the password is in the database in clear text")
	}
	out = mustCLI(t, "service", "ls", "-user", "alice", "-data", dir)
	if !strings.Contains(out, uuid) || !strings.Contains(out, "My server") || !strings.Contains(out, "password set") ||
		!strings.Contains(out, "host="+host) || strings.Contains(out, srv.Password) || !strings.Contains(out, "in+out") {
		t.Errorf("ls: %q", out)
	}
	if out := mustCLI(t, "service", "ls", "-user", "bob", "-data", dir); strings.Contains(out, uuid) {
		t.Errorf("bob lists alice's service: %q", out)
	}
	out = mustCLI(t, "service", "test", uuid, "-data", dir, "-user", "alice", "-allow-private-fetch")
	if !strings.HasPrefix(out, "ok: 1 file(s)") || !strings.Contains(out, "in.wav\t1") {
		t.Errorf("test: %q", out)
	}
	if _, err := runCLI(t, "service", "test", uuid, "-data", dir, "-user", "bob"); err == nil {
		t.Error("bob tested alice's service")
	}

	// Another key cannot open the credentials: the command says so.
	t.Setenv(envSecretKey, storage.NewSecretKeyText())
	if _, err := runCLI(t, "service", "ls", "-data", dir, "-user", "alice"); err == nil || !strings.Contains(err.Error(), "sealed with key") {
		t.Errorf("ls with another key: %v", err)
	}
	t.Setenv(envSecretKey, "")

	if _, err := runCLI(t, "service", "rm", "-data", dir, "-user", "bob", uuid); err == nil {
		t.Error("bob removed alice's service")
	}
	if out := mustCLI(t, "service", "rm", uuid, "-user", "alice", "-data", dir); !strings.Contains(out, "removed service "+uuid) {
		t.Errorf("rm: %q", out)
	}
	if _, err := runCLI(t, "service", "rm", uuid, "-user", "alice", "-data", dir); err == nil {
		t.Error("removing twice succeeded")
	}
	for _, bad := range [][]string{
		{"add", "-data", dir, "-user", "alice"},                          // no type
		{"add", "-data", dir, "-type", "sftp"},                           // no user
		{"add", "-data", dir, "-user", "alice", "-type", "sftp", "oops"}, // a stray argument
		{"test", "-data", dir, "-user", "alice"},                         // no uuid
		{"frobnicate"},
	} {
		if _, err := runCLI(t, append([]string{"service"}, bad...)...); err == nil {
			t.Errorf("service %v succeeded", bad)
		}
	}
}
