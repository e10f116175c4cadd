package main

import (
	"strings"
	"testing"

	"github.com/audiopost/audiopost/internal/testsize"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/storage/sqlstore"
)

// clientOutput parses "client_id: X" / "client_secret: Y" lines.
func clientOutput(out string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		k, v, _ := strings.Cut(l, ": ")
		m[k] = v
	}
	return m
}

func TestClientCommands(t *testing.T) {
	testsize.SkipRace(t, "sequential CLI commands on a store; the plain run checks them, the store's concurrency is storage/sqlstore's race run")
	dir := t.TempDir()
	alice := addUser(t, dir, "alice")
	conf := clientOutput(mustCLI(t, "client", "add", "-data", dir, "-user", "alice", "-name", "web app",
		"-redirect-uri", "https://app.example/cb", "-redirect-uri", "http://127.0.0.1:8000/cb"))
	pub := clientOutput(mustCLI(t, "client", "add", "-data", dir, "-name", "desktop", "-public"))
	if conf["client_id"] == "" || len(conf["client_secret"]) != 43 || pub["client_id"] == "" || pub["client_secret"] != "" {
		t.Fatalf("add printed %v and %v", conf, pub)
	}
	withData(t, dir, func(st *sqlstore.Store) {
		c, err := st.GetOAuthClient(t.Context(), conf["client_id"])
		if err != nil || c.Owner != alice.ID || c.Public || len(c.RedirectURIs) != 2 ||
			!storage.EqualHash(c.SecretHash, storage.HashToken(conf["client_secret"])) {
			t.Errorf("stored confidential client %+v, %v", c, err)
		}
		p, err := st.GetOAuthClient(t.Context(), pub["client_id"])
		if err != nil || p.Owner != "" || !p.Public || len(p.SecretHash) != 0 {
			t.Errorf("stored public client %+v, %v", p, err)
		}
	})
	out := mustCLI(t, "client", "list", "-data", dir, "-user", "alice")
	if !strings.Contains(out, conf["client_id"]) || !strings.Contains(out, "https://app.example/cb") || strings.Contains(out, pub["client_id"]) {
		t.Errorf("alice's clients: %q", out)
	}
	if out := mustCLI(t, "client", "list", "-data", dir); !strings.Contains(out, pub["client_id"]) || !strings.Contains(out, "public") {
		t.Errorf("operator clients: %q", out)
	}
	if _, err := runCLI(t, "client", "add", "-data", dir, "-name", "x", "-redirect-uri", "javascript:alert(1)"); err == nil {
		t.Error("javascript: redirect URI accepted")
	}
	if _, err := runCLI(t, "client", "delete", "-data", dir, conf["client_id"]); err == nil {
		t.Error("deleted alice's client as the operator")
	}
	mustCLI(t, "client", "delete", "-data", dir, "-user", "alice", conf["client_id"])
	if out := mustCLI(t, "client", "list", "-data", dir, "-user", "alice"); strings.Contains(out, conf["client_id"]) {
		t.Errorf("after delete: %q", out)
	}
}
