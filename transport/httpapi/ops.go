package httpapi

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/audiopost/audiopost/transport/internal/envelope"
	"github.com/prometheus/client_golang/prometheus"
)

// ops is the operational side of one handler: health and readiness, the
// metrics, the OpenAPI document, and the table of the routes the handler
// serves, which routes() fills as it registers them.
type ops struct {
	metrics      *Metrics
	exposition   http.Handler // the registry's text exposition
	metricsToken string
	readyTimeout time.Duration
	routes       []route
	openapi      func() (openAPIDoc, error)
}

// route is one registered path (without the base path) with its methods.
type route struct {
	path    string
	methods []string
}

func newOps(cfg Config, log *slog.Logger) (*ops, error) {
	o := &ops{metrics: cfg.Metrics, metricsToken: cfg.MetricsToken, readyTimeout: DefaultReadyTimeout}
	if o.metrics == nil {
		o.metrics = NewMetrics()
	}
	// /metrics serves a registry of the handler's own: ours and the
	// runtime's. The embedding service's Registerer gets ours too, never
	// the runtime's, which it has already.
	own := prometheus.NewRegistry()
	own.MustRegister(runtimeCollectors()...)
	regs := []prometheus.Registerer{own}
	if cfg.Registerer != nil {
		regs = append(regs, cfg.Registerer)
	}
	var gauges []prometheus.Collector // read at each scrape
	if jc, ok := cfg.Store.(JobCounter); ok {
		gauges = append(gauges, newJobCollector(jc, log))
	}
	if cfg.Processes != nil {
		gauges = append(gauges, poolCollectors(cfg.Processes)...)
	}
	for _, reg := range regs {
		if err := o.metrics.register(reg); err != nil {
			return nil, fmt.Errorf("httpapi: registering the metrics: %w", err)
		}
		for _, c := range gauges {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("httpapi: registering the store's and the process pool's metrics: %w", err)
			}
		}
	}
	o.exposition = metricsHandler(own, log)
	return o, nil
}

// record adds a registered path to the route table.
func (o *ops) record(path string, methods []string) {
	o.routes = append(o.routes, route{path: path, methods: methods})
}

// opsRoutes registers health, readiness, metrics and the OpenAPI
// document: no credentials (/metrics may want its own token), outside the
// API's authentication middleware.
func (s *server) opsRoutes(top *http.ServeMux) {
	s.ops.openapi = openAPIFor(s.base)
	for _, r := range []struct {
		path string
		h    http.HandlerFunc
	}{
		{"/healthz", s.healthz},
		{"/readyz", s.readyz},
		{"/metrics", s.serveMetrics},
		{"/api/openapi.json", s.serveOpenAPI},
	} {
		top.HandleFunc("GET "+s.prefix+r.path, r.h)
		s.ops.record(r.path, []string{"GET"})
	}
	// Other methods on the document answer like any API path: 405 in the
	// envelope (the more general /api/ pattern would ask for credentials).
	top.HandleFunc(s.prefix+"/api/openapi.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", "GET")
		s.writeError(w, r, envelope.New(http.StatusMethodNotAllowed, CodeMethodNotAllowed, r.Method+" is not allowed here; use GET"))
	})
}

// instrument wraps the handler's top mux: it records each request's
// latency under its route pattern (the API mux's for /api/ requests).
func (s *server) instrument(top, api *http.ServeMux) http.Handler {
	return &instrumented{s: s, top: top, api: api}
}

type instrumented struct {
	s        *server
	top, api *http.ServeMux
}

func (h *instrumented) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	sw := &statusWriter{ResponseWriter: w}
	h.s.ops.metrics.inFlight.Inc()
	defer h.s.ops.metrics.inFlight.Dec()
	h.top.ServeHTTP(sw, r)
	h.s.ops.metrics.observeRequest(h.routeLabel(r), sw.statusCode(), time.Since(start))
}

// routeLabel is the pattern that served r, without the base path:
// "GET /api/production/{file}", "/api/" for an unknown API path,
// "unmatched" when no pattern matched. ServeMux sets r.Pattern in place;
// requests under /api/ are resolved again by the API mux, whose pattern
// the middleware's copy of the request carried.
func (h *instrumented) routeLabel(r *http.Request) string {
	pat := r.Pattern
	if pat == h.s.prefix+"/api/" {
		_, pat = h.api.Handler(r)
	}
	if pat == "" {
		return "unmatched"
	}
	method, path, ok := strings.Cut(pat, " ")
	if !ok {
		method, path = "", pat
	}
	path = strings.TrimPrefix(path, h.s.prefix)
	if method == "" {
		return path
	}
	return method + " " + path
}

// statusWriter remembers the status a handler sent.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 && code >= 200 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// ReadFrom keeps the underlying writer's sendfile path for downloads.
func (w *statusWriter) ReadFrom(src io.Reader) (int64, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return io.Copy(w.ResponseWriter, src)
}

// Flush and Unwrap let http.ResponseController reach the real writer.
func (w *statusWriter) Flush() { http.NewResponseController(w.ResponseWriter).Flush() }

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *statusWriter) statusCode() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}
