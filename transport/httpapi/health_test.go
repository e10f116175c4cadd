package httpapi_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/transport/httpapi"
)

// probe serves one GET through h in the test's goroutine.
func probe(h http.Handler, url string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", url, nil))
	return rec
}

func TestHealthz(t *testing.T) {
	for _, base := range []string{"http://127.0.0.1:8080", "http://127.0.0.1:8080/mount"} {
		h := handlerAt(t, base)
		rec := probe(h, base+"/healthz")
		if rec.Code != 200 || rec.Body.String() != "ok\n" || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain") {
			t.Errorf("%s/healthz: %d %q %v", base, rec.Code, rec.Body, rec.Header())
		}
		rec = probe(h, base+"/readyz")
		if rec.Code != 200 || rec.Body.String() != "store: ok\nblobs: ok\n" {
			t.Errorf("%s/readyz: %d %q", base, rec.Code, rec.Body)
		}
	}
	// Only under the base path; other methods are refused.
	h := handlerAt(t, "http://127.0.0.1:8080/mount")
	if rec := probe(h, "http://127.0.0.1:8080/healthz"); rec.Code != http.StatusNotFound {
		t.Errorf("/healthz outside the base path: %d", rec.Code)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("POST", "http://127.0.0.1:8080/mount/healthz", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /healthz: %d", rec.Code)
	}
}

// stallingStore answers GetJob only when its context ends, or, when
// ignoreCtx, not before the test ends.
type stallingStore struct {
	storage.Store
	ignoreCtx bool
	release   chan struct{}
}

func (s stallingStore) GetJob(ctx context.Context, id int64) (storage.Job, error) {
	if s.ignoreCtx {
		<-s.release
		return storage.Job{}, storage.ErrNotFound
	}
	<-ctx.Done()
	return storage.Job{}, ctx.Err()
}

// pingStore fails its Ping.
type pingStore struct{ storage.Store }

func (pingStore) Ping(context.Context) error { return errors.New("connection refused") }

func TestReadyz(t *testing.T) {
	const base = "http://127.0.0.1:8080"
	ready := func(t *testing.T, mod func(e *env, c *httpapi.Config), timeout time.Duration) (*env, *httptest.ResponseRecorder) {
		t.Helper()
		e := newEnv(t)
		cfg := httpapi.Config{Store: e.store, Blobs: e.blobs, BaseURL: base, Logger: slog.New(slog.DiscardHandler)}
		mod(e, &cfg)
		h, err := httpapi.NewHandler(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if timeout > 0 {
			httpapi.SetReadyTimeout(h, timeout)
		}
		return e, probe(h, base+"/readyz")
	}
	want := func(t *testing.T, rec *httptest.ResponseRecorder, status int, body string) {
		t.Helper()
		if rec.Code != status || rec.Body.String() != body {
			t.Errorf("readyz: %d %q, want %d %q", rec.Code, rec.Body, status, body)
		}
	}

	t.Run("store closed", func(t *testing.T) {
		_, rec := ready(t, func(e *env, c *httpapi.Config) { e.store.Close() }, 0)
		want(t, rec, 503, "store: not reachable: the check failed (see the server log)\nblobs: ok\n")
	})
	t.Run("blobs closed", func(t *testing.T) {
		_, rec := ready(t, func(e *env, c *httpapi.Config) { e.blobs.Close() }, 0)
		want(t, rec, 503, "store: ok\nblobs: not reachable: the check failed (see the server log)\n")
	})
	t.Run("store stalls", func(t *testing.T) {
		_, rec := ready(t, func(e *env, c *httpapi.Config) { c.Store = stallingStore{Store: e.store} }, 20*time.Millisecond)
		want(t, rec, 503, "store: not reachable: no answer within 20ms\nblobs: ok\n")
	})
	t.Run("store ignores its context", func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		_, rec := ready(t, func(e *env, c *httpapi.Config) {
			c.Store = stallingStore{Store: e.store, ignoreCtx: true, release: release}
		}, 20*time.Millisecond)
		want(t, rec, 503, "store: not reachable: no answer within 20ms\nblobs: ok\n")
	})
	t.Run("store ping", func(t *testing.T) {
		_, rec := ready(t, func(e *env, c *httpapi.Config) { c.Store = pingStore{e.store} }, 0)
		want(t, rec, 503, "store: not reachable: the check failed (see the server log)\nblobs: ok\n")
	})
}

// handlerAt is a handler over an env's store mounted at base.
func handlerAt(t *testing.T, base string) http.Handler {
	t.Helper()
	e := newEnv(t)
	h, err := httpapi.NewHandler(httpapi.Config{Store: e.store, Blobs: e.blobs, BaseURL: base})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// send sends r without following redirects.
func (e *env) send(r *http.Request) (int, http.Header, []byte) {
	e.t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := c.Do(r)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return res.StatusCode, res.Header, raw
}
