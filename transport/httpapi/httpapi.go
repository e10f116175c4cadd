package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	_ "github.com/audiopost/audiopost/audio/codecs" // probe every input format the engine can decode
	"github.com/audiopost/audiopost/audio/procpool"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/livestream"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/storage/transfer"
	"github.com/audiopost/audiopost/transport/auth"
	"github.com/audiopost/audiopost/transport/outbound"
)

// Fetcher downloads an http(s) URL given as input_file or image into w,
// streaming, and reports the byte count, the Content-Type and a file name
// (from Content-Disposition or the URL path). *outbound.Client implements
// it; it must refuse private and loopback addresses unless the operator
// allows them and stop at its size limit.
type Fetcher interface {
	Fetch(ctx context.Context, rawURL string, w io.Writer) (n int64, contentType, filename string, err error)
}

// Config configures NewHandler. Store, Blobs and BaseURL are required.
type Config struct {
	Store storage.Store
	Blobs storage.Blobs
	// BaseURL is the absolute URL the handler is mounted at, e.g.
	// "https://audio.example.org" or "http://127.0.0.1:8080/ap". Its path is
	// the prefix of every route; response URLs (download_url, image,
	// status_page, ...) are built from it.
	BaseURL string
	// Auth authenticates API requests and serves the OAuth and account
	// routes. nil: auth.New(Store, ...) rendering failures in the API
	// envelope.
	Auth *auth.Service
	// Fetcher fetches input_file and image URLs. nil: an outbound client
	// that refuses private and loopback addresses, limited to
	// MaxUploadBytes.
	Fetcher Fetcher
	// Transfer is how connections to users' external services (FTP, SFTP,
	// WebDAV) are made, for service ls and inputs named on a service.
	// nil: dialing through an outbound client that refuses private and
	// loopback addresses.
	Transfer *transfer.Options
	// MaxUploadBytes bounds a multipart upload request and a fetched URL
	// (default DefaultMaxUploadBytes).
	MaxUploadBytes int64
	// MaxBodyBytes bounds a JSON request body (default DefaultMaxBodyBytes).
	MaxBodyBytes int64
	// Limits bound the work one production may ask for, from its inputs'
	// length: a request beyond them is a form error when the production is
	// saved or started (see production.FitBudget). The zero value means
	// production.DefaultLimits; give the worker's engine the same.
	Limits production.Limits
	// RateLimit is the sustained number of API requests per second allowed
	// per user (a leaky bucket of RateBurst units kept as a throttle in the
	// Store, so every API process on the store shares it; one write per
	// request); 0 disables rate limiting.
	RateLimit float64
	// RateBurst is the bucket size; 0 means max(1, 2*RateLimit).
	RateBurst int
	// Metrics receives the request latencies and holds the processing
	// counters that GET {base}/metrics reports; share it with
	// runner.Config.OnProcessed (Metrics.ObserveProcessing). nil: a
	// Metrics of the handler's own.
	Metrics *Metrics
	// MetricsToken, when set, is the bearer token GET {base}/metrics
	// requires; empty serves the metrics without credentials, as is common
	// on a self-hosted listener.
	MetricsToken string
	// LiveURLCheck vets the addresses a live stream would reach (source,
	// destinations, fallback) when it is stored. nil: every address their
	// hosts resolve to must pass the Fetcher's outbound policy when it is
	// an *outbound.Client (so its AllowPrivate and AllowLoopback apply),
	// else be public.
	LiveURLCheck func(ctx context.Context, rawURL string) error
	// Logger receives internal errors; nil: slog.Default().
	Logger *slog.Logger
	// Processes is the pool of external programs the handler's probes
	// and decode checks of uploaded and fetched inputs (ffprobe, ffmpeg)
	// take their slots in: share the server's with runner.Config.Processes.
	// nil: procpool.Default().
	Processes *procpool.Pool
	// Now is the clock; nil: time.Now.
	Now func() time.Time
}

// Defaults of Config.
const (
	DefaultMaxUploadBytes int64 = 2 << 30
	DefaultMaxBodyBytes   int64 = 4 << 20
)

// server is the handler state shared by every route.
type server struct {
	store    storage.Store
	service  production.Service
	live     livestream.Service
	blobs    storage.Blobs
	base     string // BaseURL without trailing slash
	prefix   string // BaseURL's path without trailing slash; "" at the root
	auth     *auth.Service
	fetch    Fetcher
	transfer transfer.Options
	maxUp    int64
	maxBody  int64
	limiter  *limiter
	log      *slog.Logger
	now      func() time.Time
	handlers http.Handler
	ops      *ops
}

// NewHandler returns the whole HTTP interface of audiopost: the JSON API
// and simple API under {base}/api/, downloads, and the OAuth 2.0 and
// account routes of the auth service. See the package documentation for
// routes, error codes and response shapes.
func NewHandler(cfg Config) (http.Handler, error) {
	if cfg.Store == nil || cfg.Blobs == nil {
		return nil, errors.New("httpapi: Config.Store and Config.Blobs are required")
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("httpapi: BaseURL %q must be an absolute http(s) URL without query", cfg.BaseURL)
	}
	s := &server{
		store:   cfg.Store,
		service: production.Service{Store: cfg.Store, Limits: cfg.Limits},
		blobs:   cfg.Blobs,
		base:    strings.TrimSuffix(cfg.BaseURL, "/"),
		prefix:  strings.TrimSuffix(u.Path, "/"),
		auth:    cfg.Auth,
		fetch:   cfg.Fetcher,
		maxUp:   cfg.MaxUploadBytes,
		maxBody: cfg.MaxBodyBytes,
		log:     cfg.Logger,
		now:     cfg.Now,
	}
	if s.maxUp <= 0 {
		s.maxUp = DefaultMaxUploadBytes
	}
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBodyBytes
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.auth == nil {
		s.auth = auth.New(cfg.Store, auth.Config{BaseURL: s.base, WriteError: writeAuthError, Now: s.now, Logger: s.log})
	}
	if s.fetch == nil {
		s.fetch = outbound.New(outbound.Config{MaxBytes: s.maxUp, Timeout: 10 * time.Minute})
	}
	s.live = livestream.Service{Store: cfg.Store, CheckURL: cfg.LiveURLCheck}
	if s.live.CheckURL == nil {
		var policy outbound.Config
		if c, ok := s.fetch.(*outbound.Client); ok {
			policy = c.Config()
		}
		s.live.CheckURL = liveURLCheck(policy)
	}
	if cfg.Transfer != nil {
		s.transfer = *cfg.Transfer
	} else {
		ob := outbound.New(outbound.Config{Timeout: -1})
		s.transfer = transfer.Options{Dial: ob.DialContext, HTTPClient: ob.HTTPClient()}
	}
	if cfg.RateLimit > 0 {
		burst := cfg.RateBurst
		if burst <= 0 {
			burst = max(1, int(2*cfg.RateLimit))
		}
		s.limiter = newLimiter(cfg.Store, cfg.RateLimit, burst)
	}
	s.ops = newOps(cfg)
	s.handlers = s.routes()
	if pool := cfg.Processes; pool != nil {
		routes := s.handlers
		s.handlers = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			routes.ServeHTTP(w, r.WithContext(procpool.With(r.Context(), pool)))
		})
	}
	return s.handlers, nil
}

// writeAuthError renders the auth service's failures (401) in the API
// envelope.
func writeAuthError(w http.ResponseWriter, r *http.Request, status int, code, message string) {
	writeEnvelope(w, status, &envelope{ErrorCode: &code, ErrorMessage: message})
}
