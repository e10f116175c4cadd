package httpapi

import (
	"net/http"
	"time"

	"github.com/audiopost/audiopost/production"
)

// Hooks for the external tests.

// Route is a path the handler registers (without the base path) with its
// methods.
type Route struct {
	Path    string
	Methods []string
}

func instrumentedOf(h http.Handler) *instrumented {
	i, ok := h.(*instrumented)
	if !ok {
		panic("not a handler of NewHandler")
	}
	return i
}

// RoutesOf returns the route table of a handler NewHandler made: the
// API routes and the health, metrics and OpenAPI routes, in registration
// order.
func RoutesOf(h http.Handler) []Route {
	var out []Route
	for _, r := range instrumentedOf(h).s.ops.routes {
		out = append(out, Route{Path: r.path, Methods: r.methods})
	}
	return out
}

// PatternOf returns the route label the handler would record for r: the
// pattern of the mux that serves it, without the base path.
func PatternOf(h http.Handler, r *http.Request) string {
	i := instrumentedOf(h)
	_, r.Pattern = i.top.Handler(r)
	return i.routeLabel(r)
}

// SetReadyTimeout changes the bound of each readiness check.
func SetReadyTimeout(h http.Handler, d time.Duration) {
	instrumentedOf(h).s.ops.readyTimeout = d
}

// ScrubPaths is scrubPaths, for tests.
var ScrubPaths = production.ScrubPaths
