package storage

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func TestSecretKeySealOpen(t *testing.T) {
	raw := bytes.Repeat([]byte{7}, SecretKeySize)
	k, err := NewSecretKey(raw)
	if err != nil {
		t.Fatal(err)
	}
	// Every text form of the same bytes is the same key.
	for _, text := range []string{base64.StdEncoding.EncodeToString(raw), base64.RawURLEncoding.EncodeToString(raw),
		hex.EncodeToString(raw), "  " + base64.StdEncoding.EncodeToString(raw) + "\n"} {
		k2, err := ParseSecretKey(text)
		if err != nil || !k2.Equal(k) || k2.ID() != k.ID() {
			t.Errorf("ParseSecretKey(%q) = %v, %v", text, k2, err)
		}
	}
	for _, bad := range []string{"", "short", base64.StdEncoding.EncodeToString(raw[:16]), hex.EncodeToString(raw) + "00"} {
		if _, err := ParseSecretKey(bad); !errors.Is(err, ErrSecretKey) {
			t.Errorf("ParseSecretKey(%q): %v", bad, err)
		}
	}

	secret, ctx := []byte(`{"password":"hunter2"}`), []byte("owner\x00uuid")
	a, b := k.Seal(secret, ctx), k.Seal(secret, ctx)
	if bytes.Equal(a, b) || bytes.Contains(a, []byte("hunter2")) {
		t.Fatalf("sealing is not randomized or leaks: %q %q", a, b)
	}
	if id, err := SealedKeyID(a); err != nil || id != k.ID() {
		t.Errorf("SealedKeyID = %q, %v", id, err)
	}
	if got, err := k.Open(a, ctx); err != nil || !bytes.Equal(got, secret) {
		t.Fatalf("Open = %q, %v", got, err)
	}
	other, _ := ParseSecretKey(NewSecretKeyText())
	tampered := bytes.Clone(a)
	tampered[len(tampered)-1] ^= 1
	for name, f := range map[string]func() ([]byte, error){
		"other key":     func() ([]byte, error) { return other.Open(a, ctx) },
		"other context": func() ([]byte, error) { return k.Open(a, []byte("owner\x00other")) },
		"tampered":      func() ([]byte, error) { return k.Open(tampered, ctx) },
		"truncated":     func() ([]byte, error) { return k.Open(a[:20], ctx) },
		"not sealed":    func() ([]byte, error) { return k.Open(secret, ctx) },
	} {
		if got, err := f(); !errors.Is(err, ErrSecretKey) || got != nil {
			t.Errorf("%s: %q, %v", name, got, err)
		}
	}
}

// Processes starting together on a fresh data directory agree on one
// key, and later starts read it.
func TestEnsureSecretKeyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secret.key")
	const n = 8
	keys := make([]*SecretKey, n)
	created := make([]bool, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			var err error
			keys[i], created[i], err = EnsureSecretKeyFile(path)
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	made := 0
	for i := range n {
		if created[i] {
			made++
		}
		if !keys[i].Equal(keys[0]) {
			t.Fatalf("process %d has another key", i)
		}
	}
	if made != 1 {
		t.Errorf("%d processes created the key", made)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("key file: %v, %v", fi, err)
	}
	again, created2, err := EnsureSecretKeyFile(path)
	if err != nil || created2 || !again.Equal(keys[0]) {
		t.Errorf("second start: %v %v %v", again, created2, err)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".secret-key-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	os.WriteFile(path, []byte("garbage"), 0o600)
	if _, _, err := EnsureSecretKeyFile(path); !errors.Is(err, ErrSecretKey) {
		t.Errorf("a broken key file is not replaced but reported: %v", err)
	}
}
