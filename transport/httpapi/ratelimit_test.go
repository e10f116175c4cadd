package httpapi

import (
	"fmt"
	"testing"
	"time"
)

func TestLimiter(t *testing.T) {
	now := time.Unix(1000, 0)
	l := newLimiter(2, 4, func() time.Time { return now })
	for i := range 4 {
		if _, ok := l.allow("u"); !ok {
			t.Fatalf("request %d of the burst refused", i)
		}
	}
	if wait, ok := l.allow("u"); ok || wait != "1" {
		t.Fatalf("over the burst: ok %v wait %q", ok, wait)
	}
	now = now.Add(500 * time.Millisecond) // one token at 2/s
	if _, ok := l.allow("u"); !ok {
		t.Fatal("refilled token refused")
	}
	if _, ok := l.allow("u"); ok {
		t.Fatal("second token after 0.5 s allowed")
	}
	// The map stays bounded: idle (full) buckets are dropped.
	for i := range maxBuckets + 10 {
		now = now.Add(time.Second)
		l.allow(fmt.Sprint("user", i))
	}
	if n := len(l.buckets); n > maxBuckets {
		t.Errorf("%d buckets, limit %d", n, maxBuckets)
	}
}
