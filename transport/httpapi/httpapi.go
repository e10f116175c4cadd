package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	_ "github.com/audiopost/audiopost/audio/codecs" // probe every input format the engine can decode
	"github.com/audiopost/audiopost/audio/procpool"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/app"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/storage/transfer"
	"github.com/audiopost/audiopost/transport/auth"
	"github.com/audiopost/audiopost/transport/internal/envelope"
	"github.com/audiopost/audiopost/transport/outbound"
	"github.com/prometheus/client_golang/prometheus"
)

// Fetcher downloads an http(s) URL given as input_file or image (see
// app.Fetcher); *outbound.Client implements it.
type Fetcher = app.Fetcher

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
	Auth *auth.Server
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
	// Registerer, when set, also gets the handler's audiopost_ metrics
	// (and Metrics'): the embedding service's registry, which its own
	// endpoint serves. GET {base}/metrics serves a registry of the
	// handler's own in any case, with the Go runtime's metrics.
	Registerer prometheus.Registerer
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
	// PasswordIterations is the PBKDF2 iteration count of the passwords
	// the accounts hash, which a login naming no user is checked at too;
	// 0 means storage.PasswordIterations (see app.Config).
	PasswordIterations int
}

// Defaults of Config.
const (
	DefaultMaxUploadBytes int64 = app.DefaultMaxUploadBytes
	DefaultMaxBodyBytes   int64 = 4 << 20
)

// server is the handler state shared by every route.
type server struct {
	app      *app.App
	base     string // BaseURL without trailing slash
	prefix   string // BaseURL's path without trailing slash; "" at the root
	auth     *auth.Server
	maxUp    int64
	maxBody  int64
	rate     app.RateLimit
	log      *slog.Logger
	now      func() time.Time
	handlers http.Handler
	ops      *ops
}

// NewHandler returns the whole HTTP interface of audiopost: the JSON API
// and simple API under {base}/api/, downloads, and the OAuth 2.0 and
// account routes of the auth server. See the package documentation for
// routes, error codes and response shapes. Its handlers decode requests,
// call the operations of package production/app and encode the results.
func NewHandler(cfg Config) (http.Handler, error) {
	if cfg.Store == nil || cfg.Blobs == nil {
		return nil, errors.New("httpapi: Config.Store and Config.Blobs are required")
	}
	links, err := app.NewLinks(cfg.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("httpapi: BaseURL %q must be an absolute http(s) URL without query", cfg.BaseURL)
	}
	s := &server{
		base:    links.Base(),
		prefix:  links.Prefix(),
		auth:    cfg.Auth,
		maxUp:   cfg.MaxUploadBytes,
		maxBody: cfg.MaxBodyBytes,
		rate:    app.RateLimit{Rate: cfg.RateLimit, Burst: cfg.RateBurst},
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
	fetch := cfg.Fetcher
	if fetch == nil {
		fetch = outbound.New(outbound.Config{MaxBytes: s.maxUp, Timeout: 10 * time.Minute})
	}
	// Webhooks and live streams reach the addresses the fetcher may: its
	// policy when it has one, public addresses only else.
	var policy outbound.Config
	if c, ok := fetch.(interface{ Config() outbound.Config }); ok {
		policy = c.Config()
	}
	xfer := cfg.Transfer
	if xfer == nil {
		ob := outbound.New(outbound.Config{Timeout: -1})
		xfer = &transfer.Options{Dial: ob.DialContext, HTTPClient: ob.HTTPClient()}
	}
	s.app, err = app.New(app.Config{Store: cfg.Store, Blobs: cfg.Blobs, BaseURL: cfg.BaseURL, Fetcher: fetch,
		Transfer: *xfer, AddressPolicy: policy.Check, LiveURLCheck: cfg.LiveURLCheck, MaxUploadBytes: s.maxUp,
		Limits: cfg.Limits, Logger: s.log, Now: s.now, PasswordIterations: cfg.PasswordIterations})
	if err != nil {
		return nil, err
	}
	if s.auth == nil {
		s.auth = auth.New(cfg.Store, auth.Config{BaseURL: s.base, WriteError: writeAuthError, Now: s.now, Logger: s.log, Accounts: s.app})
	}
	if s.ops, err = newOps(cfg, s.log); err != nil {
		return nil, err
	}
	s.handlers = s.routes()
	if pool := cfg.Processes; pool != nil {
		routes := s.handlers
		s.handlers = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			routes.ServeHTTP(w, r.WithContext(procpool.With(r.Context(), pool)))
		})
	}
	return s.handlers, nil
}

// writeAuthError renders the auth server's failures (401) in the API
// envelope.
func writeAuthError(w http.ResponseWriter, r *http.Request, status int, code, message string) {
	envelope.Write(w, status, &envelope.Envelope{ErrorCode: &code, ErrorMessage: message})
}
