package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/audiopost/audiopost/production/app"
)

// GET {base}/healthz answers 200 "ok" while the process serves HTTP: a
// liveness probe, it touches nothing else. GET {base}/readyz checks that
// the store answers a cheap query and the blob store a stat, each within
// DefaultReadyTimeout, and answers 200 with a line per check, or 503
// naming the check that failed and why (timeout or error; the error
// itself is logged, not shown). Both need no credentials.

// DefaultReadyTimeout bounds each readiness check.
const DefaultReadyTimeout = 2 * time.Second

// Pinger is implemented by stores and blob stores with a cheaper or more
// telling reachability check than readiness would otherwise make (a
// lookup of job 0, a stat of a key that need not exist).
type Pinger = app.Pinger

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
		{name: "store", check: s.app.PingStore},
		{name: "blobs", check: s.app.PingBlobs},
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
