// Package auth authenticates API requests and is the service's OAuth 2.0
// authorization server.
//
// Three credentials open the API (see [Server.Middleware]): API keys and
// OAuth access tokens, sent as "Authorization: Bearer <secret>" or as the
// bearer_token query parameter, and HTTP Basic with the account's username
// (or email) and password. Secrets are stored only as storage.HashToken
// hashes and looked up by hash; passwords are PBKDF2 hashes, so successful
// Basic checks are cached briefly in memory, and failures are throttled
// per (user, client address), per address and per user (see Throttle),
// with counters in the store that every API process shares.
//
// The OAuth 2.0 server ([Server.Routes]) implements the authorization-code
// grant (RFC 6749 section 4.1) with PKCE S256 (RFC 7636) and the resource
// owner password grant for desktop apps (section 4.3). It issues access
// tokens only; there are no refresh tokens.
//
// Browser sessions (account pages, the authorize consent page) are kept in
// the store (storage.Sessions): the cookie holds a random token and the
// store keeps its hash with the user, a CSRF token, the expiry and the
// user's credential version at login. So sessions survive restarts, work
// across API processes on one store, and end when the password changes or
// the user logs out everywhere (which also revokes the user's OAuth
// tokens).
package auth

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/audiopost/audiopost/production/app"
	"github.com/audiopost/audiopost/storage"
)

// Defaults of Config.
const (
	DefaultCodeTTL    = 10 * time.Minute
	DefaultTokenTTL   = 30 * 24 * time.Hour
	DefaultSessionTTL = 12 * time.Hour
)

// Config configures a Server. Only Store (given to New) is required.
type Config struct {
	// BaseURL is the absolute URL where the service is mounted, e.g.
	// "http://127.0.0.1:8080" or "https://example.org/audiopost". Its path
	// is the prefix of the auth routes; an https URL makes cookies Secure.
	BaseURL string
	// CodeTTL is how long an authorization code may be redeemed (default
	// 10 minutes); TokenTTL how long an access token lives (default 30 days).
	CodeTTL, TokenTTL time.Duration
	// SessionTTL is how long a browser login lasts (default 12 hours).
	SessionTTL time.Duration
	// WriteError renders an authentication failure of an API route. The
	// default writes the API's JSON envelope.
	WriteError func(w http.ResponseWriter, r *http.Request, status int, code, message string)
	// Now is the clock (default time.Now); tests move it.
	Now func() time.Time
	// Logger receives failures of the store (default slog.Default()).
	Logger *slog.Logger
	// BasicCacheTTL is how long a successful password check is remembered
	// (default 5 minutes); BasicCacheSize bounds the cache (default 1024).
	BasicCacheTTL  time.Duration
	BasicCacheSize int
	// Throttle tunes login throttling (see Throttle for the defaults).
	Throttle Throttle
	// Accounts are the account operations the account pages call (API
	// keys, OAuth clients); nil: those of an app.App over the store.
	Accounts *app.App
}

// Server authenticates requests and serves the OAuth 2.0 endpoints and
// the account pages. It is safe for concurrent use.
type Server struct {
	store    storage.Store
	accounts *app.App
	cfg      Config
	base     *url.URL
	prefix   string // path of BaseURL without a trailing slash
	secure   bool
	log      *slog.Logger
	basic    *credCache
	// dummyHash is checked for a login that names no user (see dummyHash).
	dummyHash string
	// Throttle counters are in the store; purging old ones is due once
	// an hour per process.
	purgeMu   sync.Mutex
	lastPurge time.Time
	alertLast map[string]time.Time // last refused attempt recorded, per user
}

// New returns a Server over store.
func New(store storage.Store, cfg Config) *Server {
	if cfg.CodeTTL <= 0 {
		cfg.CodeTTL = DefaultCodeTTL
	}
	if cfg.TokenTTL <= 0 {
		cfg.TokenTTL = DefaultTokenTTL
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = DefaultSessionTTL
	}
	if cfg.WriteError == nil {
		cfg.WriteError = WriteEnvelopeError
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.BasicCacheTTL <= 0 {
		cfg.BasicCacheTTL = 5 * time.Minute
	}
	if cfg.BasicCacheSize <= 0 {
		cfg.BasicCacheSize = 1024
	}
	cfg.Throttle.defaults()
	base, err := url.Parse(strings.TrimSuffix(cfg.BaseURL, "/"))
	if err != nil || cfg.BaseURL == "" {
		// A relative base still gives working routes and redirects on the
		// request's own host; only absolute redirects need the real one.
		base = &url.URL{}
	}
	accounts := cfg.Accounts
	if accounts == nil {
		// Only a store can be missing, and New was given one.
		accounts, _ = app.New(app.Config{Store: store, Now: cfg.Now})
	}
	s := &Server{
		store:    store,
		accounts: accounts,
		cfg:      cfg,
		base:     base,
		prefix:   strings.TrimSuffix(base.Path, "/"),
		secure:   base.Scheme == "https",
		log:      cfg.Logger,
		basic:    newCredCache(cfg.BasicCacheSize, cfg.BasicCacheTTL),

		dummyHash: dummyHash(accounts.PasswordIterations()),
	}
	return s
}

type userKey struct{}

type authHookKey struct{}

// WithAuthHook returns a context whose requests call fn once they are
// authenticated (by Middleware, or by a browser session). A server uses
// it to tell authenticated connections from anonymous ones (per-address
// connection caps).
func WithAuthHook(ctx context.Context, fn func()) context.Context {
	return context.WithValue(ctx, authHookKey{}, fn)
}

func authenticated(ctx context.Context) {
	if fn, ok := ctx.Value(authHookKey{}).(func()); ok {
		fn()
	}
}

// WithUser returns a context carrying u, as the middleware stores it.
// Handlers tested without the middleware use it too.
func WithUser(ctx context.Context, u storage.User) context.Context {
	return context.WithValue(ctx, userKey{}, u)
}

// UserFrom returns the user the middleware authenticated.
func UserFrom(ctx context.Context) (storage.User, bool) {
	u, ok := ctx.Value(userKey{}).(storage.User)
	return u, ok
}

// WriteEnvelopeError is the default Config.WriteError: the API's JSON
// envelope {status_code, form_errors, error_code, error_message}.
func WriteEnvelopeError(w http.ResponseWriter, r *http.Request, status int, code, message string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(struct {
		StatusCode   int               `json:"status_code"`
		FormErrors   map[string]string `json:"form_errors"`
		ErrorCode    string            `json:"error_code"`
		ErrorMessage string            `json:"error_message"`
	}{status, map[string]string{}, code, message})
}

// now is the service clock in UTC, at the store's microsecond precision.
func (s *Server) now() time.Time { return s.cfg.Now().UTC() }

// url returns the absolute (when BaseURL is absolute) URL of a path below
// the service's root.
func (s *Server) url(path string) string {
	u := *s.base
	u.Path = s.prefix + path
	u.RawPath = ""
	return u.String()
}

// isAuthFailure reports whether err means "these credentials are not
// valid" rather than "the store failed".
func isAuthFailure(err error) bool {
	return errors.Is(err, storage.ErrNotFound) || errors.Is(err, storage.ErrRevoked) ||
		errors.Is(err, storage.ErrExpired)
}
