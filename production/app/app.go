// Package app is audiopost's application layer: every operation a user
// can do is one method of App, taking a context and the acting user.
//
//   - productions: create (from a JSON request, or the simple API's form
//     with its files, started at once if asked), change, clear a list,
//     delete, start, stop, read, list;
//   - presets: create, change, clear a list, delete, read, list;
//   - files: uploads of inputs and covers, inputs fetched from a URL or an
//     external service and probed, covers and chapter images, downloads;
//   - external services: register, change, test, list files, delete;
//   - accounts: users, credits, API keys and OAuth clients;
//   - live streams: create, start, stop, report, delete.
//
// Each method enforces ownership (another user's production, preset,
// service, file or stream is storage.ErrNotFound, exactly like a missing
// one) and the state machine of package production, and owns its
// transaction and its retries: a change is re-read and applied once more
// when a concurrent one won. Files are staged beside what they replace
// and checked (audio probed and decoded, images decoded) before anything
// stored refers to them, so a failed request leaves nothing behind and
// loses nothing that was there.
//
// The JSON API and the web pages (transport/httpapi), the account pages
// (transport/auth) and the command line (examples/audiopost) decode their
// input, call these methods and encode the result; none of them writes
// to the store or the blob store itself.
//
// Errors are those of the domain (production.FieldErrors, the API's
// form_errors; production.ErrProcessing, ErrNotStartable, ErrNotRunning;
// storage.ErrNotFound, ErrConflict, ErrNoSecretKey) and *Error for the
// rest, whose Kind (ErrTooLarge, ErrBadRequest, ErrServiceFailed, ...)
// says what went wrong; transports map each to their own answer.
package app

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/netip"
	"time"

	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/storage/transfer"
)

// Fetcher downloads an http(s) URL given as an input file or image into w,
// streaming, and reports the byte count, the Content-Type and a file name
// (from Content-Disposition or the URL path). It must refuse addresses
// the server's policy forbids (an error wrapping
// transfer.ErrForbiddenAddress) and stop at its size limit
// (transfer.ErrTooLarge). transport/outbound's Client is one.
type Fetcher interface {
	Fetch(ctx context.Context, rawURL string, w io.Writer) (n int64, contentType, filename string, err error)
}

// Config configures New. Store is required; the operations on
// productions, presets and their files need Blobs, BaseURL and Fetcher
// too, and fail without them (the command line's account and service
// commands have no use for them).
type Config struct {
	Store storage.Store
	Blobs storage.Blobs
	// BaseURL is the absolute URL the service is reached at: stored
	// productions and presets refer to their files by download URLs
	// under it (Links).
	BaseURL string
	// Fetcher fetches input_file and image URLs.
	Fetcher Fetcher
	// Transfer is how connections to users' external services are made.
	Transfer transfer.Options
	// AddressPolicy, when set, vets every address a webhook's host
	// resolves to when the webhook is saved (the fetcher's outbound
	// policy): its error refuses the address.
	AddressPolicy func(netip.Addr) error
	// LiveURLCheck vets the addresses a live stream would reach; nil:
	// every address their hosts resolve to must pass AddressPolicy.
	LiveURLCheck func(ctx context.Context, rawURL string) error
	// MaxUploadBytes bounds an uploaded, fetched or copied file (default
	// DefaultMaxUploadBytes).
	MaxUploadBytes int64
	// Limits bound the work of each production (production.FitBudget);
	// the zero value means production.DefaultLimits.
	Limits production.Limits
	// Logger receives what cleanups could not do; nil: slog.Default().
	Logger *slog.Logger
	// Now is the clock; nil: time.Now.
	Now func() time.Time
	// PasswordIterations is the PBKDF2 iteration count of the passwords
	// CreateUser and SetPassword hash; 0 means storage.PasswordIterations,
	// else at least 1000. Tests lower it: the race detector makes a hash
	// at the default count cost seconds.
	PasswordIterations int
}

// DefaultMaxUploadBytes is the default of Config.MaxUploadBytes.
const DefaultMaxUploadBytes int64 = 2 << 30

// App holds the operations. It is safe for concurrent use.
type App struct {
	store    storage.Store
	blobs    storage.Blobs
	links    Links
	fetch    Fetcher
	transfer transfer.Options
	policy   func(netip.Addr) error
	liveURL  func(ctx context.Context, rawURL string) error
	maxUp    int64
	limits   production.Limits
	log      *slog.Logger
	now      func() time.Time
	hashIter int
}

// New returns the operations over cfg's stores.
func New(cfg Config) (*App, error) {
	if cfg.Store == nil {
		return nil, errors.New("app: Config.Store is required")
	}
	var links Links
	if cfg.BaseURL != "" {
		var err error
		if links, err = NewLinks(cfg.BaseURL); err != nil {
			return nil, err
		}
	}
	if cfg.Blobs == nil {
		cfg.Blobs = noBlobs{}
	}
	if cfg.Fetcher == nil {
		cfg.Fetcher = noFetcher{}
	}
	a := &App{store: cfg.Store, blobs: cfg.Blobs, links: links, fetch: cfg.Fetcher, transfer: cfg.Transfer,
		policy: cfg.AddressPolicy, liveURL: cfg.LiveURLCheck, maxUp: cfg.MaxUploadBytes, limits: cfg.Limits,
		log: cfg.Logger, now: cfg.Now, hashIter: cfg.PasswordIterations}
	if a.hashIter == 0 {
		a.hashIter = storage.PasswordIterations
	}
	if a.hashIter < 1000 {
		return nil, errors.New("app: Config.PasswordIterations is below 1000")
	}
	if a.maxUp <= 0 {
		a.maxUp = DefaultMaxUploadBytes
	}
	if a.log == nil {
		a.log = slog.Default()
	}
	if a.now == nil {
		a.now = time.Now
	}
	if a.liveURL == nil {
		a.liveURL = a.checkLiveURL
	}
	return a, nil
}

// PasswordIterations returns the PBKDF2 iteration count of the passwords
// it hashes (Config.PasswordIterations).
func (a *App) PasswordIterations() int { return a.hashIter }

// Links returns the URLs of the service's files.
func (a *App) Links() Links { return a.links }

// Limits returns the work limits productions are held to.
func (a *App) Limits() production.Limits { return a.limits }

// MaxUploadBytes returns the bound of an uploaded or fetched file.
func (a *App) MaxUploadBytes() int64 { return a.maxUp }

// applyOpts are the options of a change made now.
func (a *App) applyOpts() production.ApplyOptions {
	return production.ApplyOptions{Now: APITime(a.now())}
}

// APITime is t as the API shows instants: UTC, to the millisecond.
func APITime(t time.Time) production.Time {
	return production.Time{Time: t.UTC().Truncate(time.Millisecond)}
}

// errNotConfigured fails what needs a part the App was made without.
var errNotConfigured = errors.New("app: no blob store or fetcher configured")

type noBlobs struct{}

func (noBlobs) Create(context.Context, string) (storage.BlobWriter, error) {
	return nil, errNotConfigured
}
func (noBlobs) Open(context.Context, string) (io.ReadSeekCloser, storage.BlobInfo, error) {
	return nil, storage.BlobInfo{}, errNotConfigured
}
func (noBlobs) Stat(context.Context, string) (storage.BlobInfo, error) {
	return storage.BlobInfo{}, errNotConfigured
}
func (noBlobs) Delete(context.Context, string) error { return errNotConfigured }
func (noBlobs) List(context.Context, string) ([]storage.BlobInfo, error) {
	return nil, errNotConfigured
}

type noFetcher struct{}

func (noFetcher) Fetch(context.Context, string, io.Writer) (int64, string, string, error) {
	return 0, "", "", errNotConfigured
}
