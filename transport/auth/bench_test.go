package auth_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// benchAuth measures one authenticated request through the middleware
// (store lookups included, no network).
func benchAuth(b *testing.B, set func(*http.Request)) {
	e := newEnv(b, nil)
	alice := e.user("alice", "alice-password")
	_, key, err := accounts(b, e.st).CreateAPIKey(b.Context(), alice, "bench", time.Time{})
	if err != nil {
		b.Fatal(err)
	}
	h := e.svc.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	req := httptest.NewRequest("GET", "/api/me", nil)
	if set == nil {
		req.Header.Set("Authorization", "Bearer "+key)
	} else {
		set(req)
	}
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatal(rec.Code)
		}
	}
}

func BenchmarkMiddlewareAPIKey(b *testing.B) { benchAuth(b, nil) }

// BenchmarkMiddlewareBasicCached is Basic authentication after the first
// request: the PBKDF2 check is cached, one user lookup remains.
func BenchmarkMiddlewareBasicCached(b *testing.B) {
	benchAuth(b, func(r *http.Request) { r.SetBasicAuth("alice", "alice-password") })
}
