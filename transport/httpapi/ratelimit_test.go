package httpapi

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/audiopost/audiopost/storage/sqlstore"
)

// TestLimiter runs two limiters on two connections to one database, as two
// API processes would: they draw from one bucket per user.
func TestLimiter(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "db.sqlite")
	var limiters [2]*limiter
	for i := range limiters {
		st, err := sqlstore.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		limiters[i] = newLimiter(st, 2, 4)
	}
	allow := func(i int, user string, now time.Time) (string, bool) {
		t.Helper()
		wait, ok, err := limiters[i%2].allow(ctx, user, now)
		if err != nil {
			t.Fatal(err)
		}
		return wait, ok
	}
	now := time.Unix(1000, 0)
	for i := range 4 {
		if _, ok := allow(i, "u", now); !ok {
			t.Fatalf("request %d of the burst refused", i)
		}
	}
	for i := range 2 {
		if wait, ok := allow(i, "u", now); ok || wait != "1" {
			t.Fatalf("process %d over the shared burst: ok %v wait %q", i, ok, wait)
		}
	}
	if _, ok := allow(0, "v", now); !ok {
		t.Fatal("another user is limited by u's bucket")
	}
	now = now.Add(500 * time.Millisecond) // one unit leaks at 2/s
	if _, ok := allow(1, "u", now); !ok {
		t.Fatal("the leaked unit was refused")
	}
	if wait, ok := allow(0, "u", now); ok || wait != "1" {
		t.Fatalf("second request after 0.5 s: ok %v wait %q", ok, wait)
	}
}
