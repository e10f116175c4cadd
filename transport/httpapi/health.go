package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/audiopost/audiopost/storage"
)

// GET {base}/healthz answers 200 "ok" while the process serves HTTP: a
// liveness probe, it touches nothing else. GET {base}/readyz checks that
// the store answers a cheap query and the blob store a stat, each within
// DefaultReadyTimeout, and answers 200 with a line per check, or 503
// naming the check that failed and why (timeout or error; the error
// itself is logged, not shown). Both need no credentials.

// DefaultReadyTimeout bounds each readiness check.
const DefaultReadyTimeout = 2 * time.Second

// readyProbeKey is the blob key the readiness check stats. It need not
// exist: "not found" proves the blob store answered.
const readyProbeKey = "readyz/probe"

// Pinger is implemented by stores and blob stores with a cheaper or more
// telling reachability check than readiness would otherwise make (a
// lookup of job 0, a stat of a key that need not exist).
type Pinger interface {
	Ping(ctx context.Context) error
}

// healthz: GET {base}/healthz.
func (s *server) healthz(w http.ResponseWriter, r *http.Request) {
	plain(w, http.StatusOK, "ok\n")
}

// readyz: GET {base}/readyz.
func (s *server) readyz(w http.ResponseWriter, r *http.Request) {
	checks := []struct {
		name  string
		check func(context.Context) error
		err   error
	}{
		{name: "store", check: s.pingStore},
		{name: "blobs", check: s.pingBlobs},
	}
	var wg sync.WaitGroup
	for i := range checks {
		c := &checks[i]
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(r.Context(), s.ops.readyTimeout)
			defer cancel()
			// A check that ignores its context must not hold the probe.
			done := make(chan error, 1)
			go func() { done <- c.check(ctx) }()
			select {
			case c.err = <-done:
			case <-ctx.Done():
				c.err = ctx.Err()
			}
		})
	}
	wg.Wait()
	var b strings.Builder
	status := http.StatusOK
	for _, c := range checks {
		b.WriteString(c.name + ": ")
		switch {
		case c.err == nil:
			b.WriteString("ok\n")
			continue
		case errors.Is(c.err, context.DeadlineExceeded):
			b.WriteString("not reachable: no answer within " + s.ops.readyTimeout.String() + "\n")
		default:
			b.WriteString("not reachable: the check failed (see the server log)\n")
		}
		status = http.StatusServiceUnavailable
		s.log.WarnContext(r.Context(), "httpapi: not ready", "check", c.name, "err", c.err)
	}
	plain(w, status, b.String())
}

// pingStore makes a cheap query: a primary-key lookup of a job that does
// not exist.
func (s *server) pingStore(ctx context.Context) error {
	if p, ok := s.store.(Pinger); ok {
		return p.Ping(ctx)
	}
	_, err := s.store.GetJob(ctx, 0)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	return err
}

// pingBlobs stats a key that need not exist.
func (s *server) pingBlobs(ctx context.Context) error {
	if p, ok := s.blobs.(Pinger); ok {
		return p.Ping(ctx)
	}
	_, err := s.blobs.Stat(ctx, readyProbeKey)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	return err
}
