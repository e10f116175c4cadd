// Package webhook sends the production webhook: when processing ends, the
// service POSTs uuid, status_string and status to the production's webhook
// URL.
//
// Deliveries live in the store's outbox (storage.Deliveries). The job runner
// calls Enqueue in the same transaction as the final status change, so a
// webhook is sent exactly for the changes that committed; a Sender claims
// due deliveries under a lease and sends them. Delivery is at least once: a
// sender that dies between the receiver's 2xx and recording it sends again
// after the lease, so receivers should treat repeats of a uuid and status
// as one event.
//
// One delivery attempt (one claim) follows the spec: the parameters are
// sent form-encoded, and when that answer is HTTP 4xx or 5xx they are sent
// again at once as multipart/form-data. A 2xx to either is success. A
// timeout, a network error, a 5xx (or 408/429) to the multipart request is
// retried later with capped, jittered exponential backoff; the schedule is
// in the store, so it survives restarts. Any other 4xx to the multipart
// request, a refused address (see package outbound) and an unusable URL
// fail the delivery for good, as does running out of attempts; OnFailed
// then lets the server tell the production's owner.
//
// Each attempt's outcome (the HTTP status, or why there was none) is kept
// on the delivery, which the API lists with the production. A sender
// claims under its WorkerID; the claims of senders of this host whose
// process died are taken back at once (Reclaim) rather than after the
// lease.
package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/audiopost/audiopost/internal/workerid"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/transport/outbound"
)

// Defaults for zero Config fields.
const (
	DefaultWorkers      = 2
	DefaultTimeout      = 30 * time.Second
	DefaultMaxAttempts  = 8
	DefaultBackoffBase  = 30 * time.Second
	DefaultBackoffMax   = 2 * time.Hour
	DefaultPollInterval = 2 * time.Second
	// DefaultReclaimInterval is how often a running sender looks for the
	// claims of dead senders of its host.
	DefaultReclaimInterval = 10 * time.Second
)

// ErrInvalidURL: a webhook URL is not an absolute http or https URL.
var ErrInvalidURL = errors.New("webhook: URL must be an absolute http or https URL")

// Config configures a Sender.
type Config struct {
	// Store holds the outbox; a storage.Store will do.
	Store storage.Deliveries
	// Client sends the requests. nil: outbound.New with the default
	// (public addresses only) policy and Timeout.
	Client *outbound.Client
	// Workers is how many deliveries are sent at once (default
	// DefaultWorkers).
	Workers int
	// Timeout bounds each HTTP request (default DefaultTimeout). A delivery
	// attempt makes up to two requests.
	Timeout time.Duration
	// Lease is how long a claimed delivery is hidden from other senders
	// (default 2*Timeout + 30s). It must exceed 2*Timeout, or another sender
	// could claim a delivery still being sent.
	Lease time.Duration
	// MaxAttempts is how many attempts a delivery gets before it is failed
	// (default DefaultMaxAttempts).
	MaxAttempts int
	// BackoffBase is the delay after the first failed attempt; it doubles
	// with each further one up to BackoffMax, and a random half of it is
	// jittered away so that many failed webhooks do not retry in lockstep.
	BackoffBase time.Duration // default DefaultBackoffBase
	BackoffMax  time.Duration // default DefaultBackoffMax
	// PollInterval is how often an idle worker looks for due deliveries
	// (default DefaultPollInterval); Wake cuts it short.
	PollInterval time.Duration
	// Now is the clock for scheduling retries (default time.Now); it must
	// agree with the store's clock, which decides when a delivery is due.
	Now func() time.Time
	// Logger receives one record per delivery outcome (default
	// slog.Default()).
	Logger *slog.Logger
	// WorkerID names this sender in its claims (default a fresh
	// workerid.New()); each worker goroutine appends "/n". A fixed
	// WorkerID must not be used by two live senders.
	WorkerID string
	// ReclaimInterval is how often Run takes back the claims of senders
	// known dead (default DefaultReclaimInterval; see Reclaim).
	ReclaimInterval time.Duration
	// OnFailed, when set, is called after a delivery failed for good,
	// with a sentence for the production's owner saying which webhook
	// failed and why; serve records it as the production's warning.
	OnFailed func(ctx context.Context, d storage.Delivery, msg string)
}

// Sender sends due webhook deliveries from the outbox.
type Sender struct {
	cfg     Config
	hc      *http.Client
	ua      string
	wake    chan struct{}
	running atomic.Bool // Run has begun claiming
}

// New checks cfg, fills in defaults and returns a Sender.
func New(cfg Config) (*Sender, error) {
	if cfg.Store == nil {
		return nil, errors.New("webhook: Config.Store is nil")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Client == nil {
		cfg.Client = outbound.New(outbound.Config{Timeout: cfg.Timeout})
	}
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.Lease <= 0 {
		cfg.Lease = 2*cfg.Timeout + 30*time.Second
	}
	if cfg.Lease <= 2*cfg.Timeout {
		return nil, fmt.Errorf("webhook: lease %v must exceed two request timeouts (%v)", cfg.Lease, 2*cfg.Timeout)
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	if cfg.BackoffBase <= 0 {
		cfg.BackoffBase = DefaultBackoffBase
	}
	if cfg.BackoffMax <= 0 {
		cfg.BackoffMax = DefaultBackoffMax
	}
	cfg.BackoffMax = max(cfg.BackoffMax, cfg.BackoffBase)
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.WorkerID == "" {
		cfg.WorkerID = workerid.New()
	}
	if cfg.ReclaimInterval <= 0 {
		cfg.ReclaimInterval = DefaultReclaimInterval
	}
	return &Sender{
		cfg: cfg,
		// The response body is read 4 KiB at most, so the client's
		// MaxBytes (which would reject a 2xx with a large declared body)
		// does not apply; address checks and redirects still do.
		hc:   cfg.Client.HTTPClient(),
		ua:   cfg.Client.Config().UserAgent,
		wake: make(chan struct{}, 1),
	}, nil
}

// Wake makes an idle worker look for due deliveries now, e.g. right after
// a commit that enqueued one. It never blocks.
func (s *Sender) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Run sends deliveries with Config.Workers workers until ctx is done, then
// waits for them and returns nil. A request interrupted by ctx is
// rescheduled to be sent again at once by the next sender. It takes back
// the claims of dead senders first and then every ReclaimInterval.
func (s *Sender) Run(ctx context.Context) error {
	if _, err := s.Reclaim(ctx); err != nil && ctx.Err() == nil {
		s.cfg.Logger.Warn("webhook: taking back the deliveries of dead senders", "err", err)
	}
	s.running.Store(true)
	var wg sync.WaitGroup
	for i := range s.cfg.Workers {
		worker := s.cfg.WorkerID + "/" + strconv.Itoa(i)
		wg.Go(func() { s.work(ctx, worker) })
	}
	wg.Go(func() {
		t := time.NewTicker(s.cfg.ReclaimInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if _, err := s.Reclaim(ctx); err != nil && ctx.Err() == nil {
				s.cfg.Logger.Warn("webhook: taking back the deliveries of dead senders", "err", err)
			}
		}
	})
	wg.Wait()
	return nil
}

// Reclaim makes the deliveries that senders known dead hold due at once,
// instead of after their lease, and reports how many: those of this
// sender's own WorkerID before Run begins claiming (a fixed id reused by
// the next instance), and those of generated ids of this host whose
// process is gone (see package workerid). The interrupted attempt counts,
// and the next claim sends the delivery again: delivery is at least once.
func (s *Sender) Reclaim(ctx context.Context) (int, error) {
	holders, err := s.cfg.Store.DeliveryHolders(ctx)
	if err != nil {
		return 0, err
	}
	var dead []string
	for _, h := range holders {
		if workerid.Base(h) == s.cfg.WorkerID {
			if !s.running.Load() {
				dead = append(dead, h)
			}
			continue
		}
		if workerid.Dead(h, s.cfg.WorkerID) {
			dead = append(dead, h)
		}
	}
	if len(dead) == 0 {
		return 0, nil
	}
	n, err := s.cfg.Store.ExpireDeliveries(ctx, dead...)
	if err != nil {
		return 0, err
	}
	if n > 0 {
		s.cfg.Logger.Info("webhook: took back the deliveries of dead senders", "deliveries", n, "senders", dead)
		s.Wake()
	}
	return n, nil
}

func (s *Sender) work(ctx context.Context, worker string) {
	for ctx.Err() == nil {
		d, err := s.cfg.Store.ClaimDelivery(ctx, worker, s.cfg.Lease)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if !errors.Is(err, storage.ErrNoJob) {
				s.cfg.Logger.Warn("webhook: claiming a delivery failed", "err", err)
			}
			s.idle(ctx)
			continue
		}
		s.deliver(ctx, d)
	}
}

func (s *Sender) idle(ctx context.Context) {
	t := time.NewTimer(s.cfg.PollInterval)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	case <-s.wake:
	}
}

// outcome is how one attempt ended.
type outcome int

const (
	delivered outcome = iota
	retry             // transient: try again later
	final             // the receiver or the URL will not change its mind
)

func (s *Sender) deliver(ctx context.Context, d storage.Delivery) {
	res, reason, code := s.attempt(ctx, d)
	d.HTTPStatus = code
	log := s.cfg.Logger.With("delivery", d.ID, "production", d.Production, "url", redact(d.URL), "attempt", d.Attempts)
	// Record the outcome even when ctx was canceled meanwhile: the store
	// must learn what happened.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	var err error
	switch {
	case res == delivered:
		err = s.cfg.Store.DeliverySucceeded(rctx, d)
		if err == nil {
			log.Info("webhook delivered")
		}
	case res == retry && ctx.Err() != nil:
		// Interrupted by shutdown, not the receiver's fault: due again at
		// once for whichever sender runs next.
		err = s.cfg.Store.DeliveryFailed(rctx, d, "interrupted: sender stopped; "+reason, s.cfg.Now())
	case res == final || d.Attempts >= s.cfg.MaxAttempts:
		if res == retry {
			reason = fmt.Sprintf("gave up after %d attempts: %s", d.Attempts, reason)
		}
		err = s.cfg.Store.DeliveryFailed(rctx, d, reason, time.Time{})
		if err == nil {
			log.Warn("webhook failed", "reason", reason)
			if s.cfg.OnFailed != nil {
				s.cfg.OnFailed(rctx, d, fmt.Sprintf("webhook to %s not delivered: %s", redact(d.URL), reason))
			}
		}
	default:
		wait := s.backoff(d.Attempts)
		err = s.cfg.Store.DeliveryFailed(rctx, d, reason, s.cfg.Now().Add(wait))
		if err == nil {
			log.Info("webhook attempt failed; will retry", "reason", reason, "retry_in", wait)
		}
	}
	if err != nil {
		// ErrLeaseLost: the lease ran out and another sender owns the
		// delivery now; its outcome is what counts.
		log.Warn("webhook: recording the outcome failed", "err", err)
	}
}

// backoff is the delay after the given failed attempt (1-based): base
// doubled per attempt, capped, with equal jitter (half fixed, half random).
func (s *Sender) backoff(attempt int) time.Duration {
	d := s.cfg.BackoffBase
	for i := 1; i < attempt && d < s.cfg.BackoffMax; i++ {
		d *= 2
	}
	d = min(d, s.cfg.BackoffMax)
	half := d / 2
	return half + rand.N(d-half+1)
}

// attempt makes one delivery attempt: form-encoded, then multipart if the
// receiver answered 4xx or 5xx. reason says why it did not succeed; code
// is the receiver's last HTTP status (0 when it did not answer).
func (s *Sender) attempt(ctx context.Context, d storage.Delivery) (res outcome, reason string, code int) {
	u, err := ParseURL(d.URL)
	if err != nil {
		return final, err.Error(), 0
	}
	vals, err := url.ParseQuery(string(d.Payload))
	if err != nil {
		return final, fmt.Sprintf("malformed stored payload: %v", err), 0
	}
	code, err = s.post(ctx, u, "application/x-www-form-urlencoded", []byte(vals.Encode()))
	if err != nil {
		return errOutcome(err), "form request: " + describe(err, s.cfg.Timeout), 0
	}
	switch {
	case code >= 200 && code <= 299:
		return delivered, "", code
	case code < 400:
		return retry, fmt.Sprintf("form request: unexpected HTTP %d", code), code
	}
	formReason := fmt.Sprintf("form request: HTTP %d", code)

	body, ctype, err := multipartBody(vals)
	if err != nil {
		return final, err.Error(), code
	}
	code, err = s.post(ctx, u, ctype, body)
	if err != nil {
		return errOutcome(err), formReason + "; multipart request: " + describe(err, s.cfg.Timeout), 0
	}
	reason = fmt.Sprintf("%s; multipart request: HTTP %d", formReason, code)
	switch {
	case code >= 200 && code <= 299:
		return delivered, "", code
	case code == http.StatusRequestTimeout || code == http.StatusTooManyRequests:
		return retry, reason, code
	case code >= 400 && code <= 499:
		return final, reason + " (rejected by the receiver)", code
	}
	return retry, reason, code
}

// post sends one request and returns the status code.
func (s *Sender) post(ctx context.Context, u *url.URL, contentType string, body []byte) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("User-Agent", s.ua)
	resp, err := s.hc.Do(req)
	if err != nil {
		return 0, err
	}
	// Read a little so the connection can be reused; the body means nothing.
	io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	return resp.StatusCode, nil
}

// errOutcome: refusals by policy are final; everything else (timeouts,
// refused connections, resets) may be transient.
func errOutcome(err error) outcome {
	if errors.Is(err, outbound.ErrForbiddenAddress) || errors.Is(err, outbound.ErrScheme) ||
		errors.Is(err, outbound.ErrTooManyRedirects) {
		return final
	}
	return retry
}

// describe renders a request error without the URL, which may carry a
// secret in its query and is logged separately, redacted.
func describe(err error, timeout time.Duration) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("no response within %v", timeout)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Sprintf("no response within %v", timeout)
	}
	return err.Error()
}

// multipartBody encodes vals as multipart/form-data, fields sorted by name
// so the body is reproducible.
func multipartBody(vals url.Values) ([]byte, string, error) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, k := range slices.Sorted(maps.Keys(vals)) {
		for _, v := range vals[k] {
			if err := mw.WriteField(k, v); err != nil {
				return nil, "", fmt.Errorf("webhook: encoding multipart body: %w", err)
			}
		}
	}
	if err := mw.Close(); err != nil {
		return nil, "", fmt.Errorf("webhook: encoding multipart body: %w", err)
	}
	return buf.Bytes(), mw.FormDataContentType(), nil
}

// redact keeps scheme, host and path: queries and user info of webhook URLs
// often carry secrets.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<unparsable URL>"
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}

// ParseURL parses a webhook URL and checks that it is absolute http or
// https with a host; errors wrap ErrInvalidURL. The API uses it to validate
// the webhook field; address policy is checked only when sending, since
// names resolve differently over time.
func ParseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("webhook: unparsable URL: %w", ErrInvalidURL)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" {
		return nil, fmt.Errorf("webhook: %q: %w", redact(raw), ErrInvalidURL)
	}
	return u, nil
}

// Payload returns the stored body of a webhook: the parameters uuid,
// status_string and status, form-encoded.
func Payload(productionUUID string, status int, statusString string) []byte {
	return []byte(url.Values{
		"uuid":          {productionUUID},
		"status_string": {statusString},
		"status":        {strconv.Itoa(status)},
	}.Encode())
}

// Enqueue adds the webhook of a finished production to the outbox. Call it
// with the transaction (the Tx inside Store.WithTx) that writes the final
// status, once per finished processing, so the webhook is sent if and only
// if that change commits. An empty webhookURL means the production has no
// webhook and enqueues nothing. The URL is not validated here: a bad one
// must not roll back the status change, so it is stored and its delivery
// fails with a recorded reason.
func Enqueue(ctx context.Context, tx storage.Deliveries, owner, productionUUID, webhookURL string, status int, statusString string) error {
	if webhookURL == "" {
		return nil
	}
	if productionUUID == "" || statusString == "" {
		return fmt.Errorf("webhook: enqueue without production uuid or status string: %w", storage.ErrInvalid)
	}
	return tx.EnqueueDelivery(ctx, &storage.Delivery{
		Owner:      owner,
		Production: productionUUID,
		URL:        webhookURL,
		Payload:    Payload(productionUUID, status, statusString),
	})
}
