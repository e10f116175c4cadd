package storage

import (
	"errors"
	"regexp"
	"strings"
	"testing"
)

func TestPasswordHash(t *testing.T) {
	h, err := hashPassword("correct horse", 1000)
	if err != nil {
		t.Fatal(err)
	}
	if !CheckPassword(h, "correct horse") {
		t.Error("right password rejected")
	}
	for _, wrong := range []string{"", "correct hors", "correct horse ", "Correct horse"} {
		if CheckPassword(h, wrong) {
			t.Errorf("wrong password %q accepted", wrong)
		}
	}
	h2, _ := hashPassword("correct horse", 1000)
	if h == h2 {
		t.Error("two hashes of one password are equal: salt not random")
	}
	if !PasswordNeedsRehash(h) {
		t.Error("1000 iterations not flagged for rehash")
	}
	// Tampering with any part breaks the match.
	parts := strings.Split(h, "$")
	for i := range parts {
		p := append([]string(nil), parts...)
		p[i] = strings.Repeat("A", len(p[i]))
		if CheckPassword(strings.Join(p, "$"), "correct horse") {
			t.Errorf("hash with part %d replaced still matches", i)
		}
	}
}

func TestHashPasswordDefault(t *testing.T) {
	h, err := HashPassword("pw")
	if err != nil {
		t.Fatal(err)
	}
	// Verifying costs as much as hashing; TestPasswordHash covers it.
	if !strings.HasPrefix(h, "pbkdf2-sha256$600000$") || PasswordNeedsRehash(h) {
		t.Errorf("HashPassword = %q", h)
	}
}

func TestTokensAndUUIDs(t *testing.T) {
	seen := map[string]bool{}
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	for range 1000 {
		tok, id := NewToken(), NewUUID()
		if len(tok) != 43 || seen[tok] || seen[id] || !re.MatchString(id) {
			t.Fatalf("token %q uuid %q", tok, id)
		}
		seen[tok], seen[id] = true, true
	}
	a, b := HashToken("x"), HashToken("x")
	if !EqualHash(a, b) || EqualHash(a, HashToken("y")) || EqualHash(a, a[:31]) || len(a) != 32 {
		t.Error("HashToken/EqualHash")
	}
}

func TestValidKey(t *testing.T) {
	for _, k := range []string{"a", "productions/0b1c/output.mp3", "a/b/c/d.e.f", "ünï/cödé.wav", "x..y", ".hidden"} {
		if err := ValidKey(k); err != nil {
			t.Errorf("ValidKey(%q) = %v", k, err)
		}
	}
	for _, k := range []string{"", "/abs", "a//b", "a/", "../x", "a/../b", "a/./b", ".", "..", `a\b`, "c:x",
		"a\x00b", "a\nb", "\xff", strings.Repeat("a", MaxKeyLen+1), "a/.tmp-123", ".tmp-x/b"} {
		if err := ValidKey(k); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("ValidKey(%q) = %v, want ErrInvalidKey", k, err)
		}
	}
}

func FuzzValidKey(f *testing.F) {
	for _, s := range []string{"a/b", "../x", "a//b", ".tmp-x", "ü/ö"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		if ValidKey(key) != nil {
			return
		}
		// A valid key stays inside the folder whatever the platform.
		if strings.HasPrefix(key, "/") || strings.ContainsAny(key, "\\\x00:") {
			t.Fatalf("accepted %q", key)
		}
		for _, seg := range strings.Split(key, "/") {
			if seg == "" || seg == "." || seg == ".." || strings.HasPrefix(seg, TempPrefix) {
				t.Fatalf("accepted %q with segment %q", key, seg)
			}
		}
	})
}

func FuzzCheckPassword(f *testing.F) {
	h, _ := hashPassword("pw", 10)
	f.Add(h, "pw")
	f.Add("pbkdf2-sha256$99999999999$AAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAA", "pw")
	f.Add("pbkdf2-sha256$1$$", "")
	f.Fuzz(func(t *testing.T, hash, pw string) {
		// Stored hashes come from the database: a corrupt one must neither
		// panic nor make CheckPassword spend unbounded work.
		if iter, _, _, ok := parsePasswordHash(hash); ok && iter > maxIterations {
			t.Fatalf("accepted %d iterations", iter)
		}
		if iter, _, _, ok := parsePasswordHash(hash); ok && iter > 10000 {
			return // valid but slow; the bound is what matters
		}
		CheckPassword(hash, pw)
	})
}
