package storage

import (
	"context"
	"time"
)

// Times: implementations store instants with microsecond precision and
// return them in UTC. A zero time.Time means "not set" for optional fields
// (expiry, last use, lease).

// Store is the metadata store. Its repository methods each run in their own
// transaction; WithTx runs several on one transaction.
type Store interface {
	Tx
	// WithTx runs fn inside one transaction and commits it when fn returns
	// nil; any error (or panic) rolls everything back. It is how a production
	// status change and its job enqueue happen atomically:
	//
	//	err := st.WithTx(ctx, func(tx storage.Tx) error {
	//		if err := tx.SetStatus(ctx, owner, storage.KindProduction, id, 1); err != nil {
	//			return err
	//		}
	//		return tx.Enqueue(ctx, &storage.Job{Owner: owner, Production: id, Type: "process"})
	//	})
	//
	// Inside fn use only tx, never the Store: an embedded store may have a
	// single writer connection, which tx holds until fn returns.
	//
	// Transactions that read a record and then change it run as if one
	// after the other. A store that gets this from row locks (PostgreSQL)
	// may run fn again when the database aborted the transaction to break
	// a deadlock, so fn must have no effects outside tx that cannot be
	// repeated.
	WithTx(ctx context.Context, fn func(tx Tx) error) error
	// Close releases the store's connections.
	Close() error
}

// LiveFigures keeps the latest figures of each running live stream (a
// JSON document the worker running it replaces every few seconds), apart
// from the stream's versioned document, which its owner edits.
type LiveFigures interface {
	// PutLiveFigures stores doc as the figures of the owner's live stream
	// uuid, replacing what was there.
	PutLiveFigures(ctx context.Context, owner, uuid string, doc []byte) error
	// GetLiveFigures returns the figures and when they were stored;
	// ErrNotFound when there are none.
	GetLiveFigures(ctx context.Context, owner, uuid string) ([]byte, time.Time, error)
	// DeleteLiveFigures removes them (no error when there are none).
	DeleteLiveFigures(ctx context.Context, owner, uuid string) error
}

// Tx is every repository, bound to one transaction inside Store.WithTx (or
// to the store itself outside of it).
type Tx interface {
	LiveFigures
	Users
	Credits
	APIKeys
	OAuthClients
	OAuthCodes
	OAuthTokens
	Resources
	Services
	Jobs
	Deliveries
	Sessions
	Throttles
}

// User is an account.
type User struct {
	ID           string // stable, assigned by CreateUser; survives username/email changes
	Username     string // unique
	Email        string // unique when not empty
	PasswordHash string // from HashPassword; empty disables password login
	Joined       time.Time
	// CredentialVersion starts at 1 and advances whenever the password
	// changes (UpdateUser) or the user logs out everywhere (EndSessions).
	// Browser sessions are bound to the version they were made under, so
	// either ends them all. Set by the store; UpdateUser ignores it.
	CredentialVersion int64

	// Credits are processing time. Charges take recurring credits first;
	// RechargeCredits is what RecurringCredits is reset to on RechargeDate.
	OnetimeCredits   time.Duration
	RecurringCredits time.Duration
	RechargeCredits  time.Duration
	RechargeDate     time.Time

	NotifyEmail         bool // notification_email: production finished
	ErrorEmail          bool
	WarningEmail        bool
	LowCreditsEmail     bool
	LowCreditsThreshold time.Duration
}

// Credits returns the total available processing time.
func (u User) Credits() time.Duration { return u.OnetimeCredits + u.RecurringCredits }

// Users stores accounts.
type Users interface {
	// CreateUser stores u, assigning u.ID (when empty) and u.Joined (when
	// zero). A taken username or email is ErrConflict.
	CreateUser(ctx context.Context, u *User) error
	GetUser(ctx context.Context, id string) (User, error)
	GetUserByUsername(ctx context.Context, username string) (User, error)
	GetUserByEmail(ctx context.Context, email string) (User, error)
	// UpdateUser writes every field of u except ID, Joined, the credit
	// balances (OnetimeCredits, RecurringCredits), which change only through
	// Credits so that concurrent charges are never lost, and
	// CredentialVersion. A changed PasswordHash ends every session and OAuth
	// token of the user in the same transaction, as EndSessions does.
	UpdateUser(ctx context.Context, u User) error
	// DeleteUser removes the user and everything the user owns.
	DeleteUser(ctx context.Context, id string) error
	// ListUsers lists users by username.
	ListUsers(ctx context.Context, limit, offset int) ([]User, error)
}

// Credits changes credit balances atomically.
//
// Policy: a balance never goes below zero. Charge refuses (with
// ErrInsufficientCredits, charging nothing) when the user has less than the
// amount in total; callers check before processing and charge the actual
// length afterwards, and a production that turned out longer than the
// remaining credits is the caller's decision (e.g. charge what is left).
type Credits interface {
	// Charge takes d from the user's recurring credits first, then from the
	// one-time credits, and returns the updated user.
	Charge(ctx context.Context, userID string, d time.Duration) (User, error)
	// AddCredits adds (or, with negative values, removes, never below zero)
	// credits and returns the updated user.
	AddCredits(ctx context.Context, userID string, onetime, recurring time.Duration) (User, error)
}

// APIKey is a named long-lived secret of a user. Hash is HashToken of the
// secret; the secret itself is never stored.
type APIKey struct {
	ID       string // assigned by CreateAPIKey when empty
	User     string
	Name     string
	Hash     []byte
	Created  time.Time
	LastUsed time.Time // zero: never used
	Expires  time.Time // zero: never expires
	Revoked  bool
}

// APIKeys stores API keys.
type APIKeys interface {
	// CreateAPIKey stores k, assigning ID and Created when unset.
	CreateAPIKey(ctx context.Context, k *APIKey) error
	// ListAPIKeys lists the user's keys, revoked ones included, newest first.
	ListAPIKeys(ctx context.Context, user string) ([]APIKey, error)
	// RevokeAPIKey revokes one of the user's keys.
	RevokeAPIKey(ctx context.Context, user, id string) error
	// LookupAPIKey finds the key with this hash for authentication:
	// ErrNotFound, ErrRevoked or ErrExpired (at now) when it must not be
	// accepted. It records now as LastUsed, at most once a minute per key so
	// that authentication does not turn every request into a write.
	LookupAPIKey(ctx context.Context, hash []byte, now time.Time) (APIKey, error)
}

// OAuthClient is a registered third-party application.
type OAuthClient struct {
	ID           string // the public client_id; assigned when empty
	SecretHash   []byte // HashToken of the client secret; empty for public clients
	Name         string
	RedirectURIs []string
	Public       bool   // desktop/mobile client that cannot keep a secret
	Owner        string // user who registered it; empty for operator-made clients
	Created      time.Time
}

// OAuthClients stores OAuth client registrations.
type OAuthClients interface {
	CreateOAuthClient(ctx context.Context, c *OAuthClient) error
	// GetOAuthClient looks a client up by client_id for the OAuth endpoints;
	// it is not owner-scoped.
	GetOAuthClient(ctx context.Context, id string) (OAuthClient, error)
	// ListOAuthClients lists the clients owner registered ("" lists the
	// operator's).
	ListOAuthClients(ctx context.Context, owner string) ([]OAuthClient, error)
	// UpdateOAuthClient replaces name, redirect URIs, public flag and secret
	// hash of a client that c.Owner owns.
	UpdateOAuthClient(ctx context.Context, c OAuthClient) error
	// DeleteOAuthClient removes a client that owner owns, with its codes and
	// tokens.
	DeleteOAuthClient(ctx context.Context, owner, id string) error
}

// OAuthCode is an authorization code grant. Hash is HashToken of the code.
type OAuthCode struct {
	Hash            []byte
	ClientID        string
	User            string
	RedirectURI     string
	Challenge       string // PKCE code_challenge; empty without PKCE
	ChallengeMethod string // "S256" or "plain"
	Scope           string
	Created         time.Time
	Expires         time.Time
	Used            bool
}

// OAuthCodes stores authorization codes.
type OAuthCodes interface {
	CreateOAuthCode(ctx context.Context, c *OAuthCode) error
	// RedeemOAuthCode marks the code used and, in the same transaction,
	// stores the token that issue returns for it, so the first redeem wins
	// exactly once even under concurrent requests. issue validates the code
	// (client, redirect URI, PKCE verifier) and returns the token to store,
	// or an error: the code is burned either way, and issue's error is
	// returned. A redeem of a code that was already used fails with
	// ErrAlreadyUsed and revokes every token issued from that code (RFC 6749
	// section 4.1.2); an unknown code is ErrNotFound, an expired one
	// ErrExpired. The returned OAuthCode is the stored grant.
	RedeemOAuthCode(ctx context.Context, hash []byte, now time.Time, issue func(OAuthCode) (*OAuthToken, error)) (OAuthCode, error)
}

// OAuthToken is an access token. Hash is HashToken of the token.
type OAuthToken struct {
	Hash     []byte
	ClientID string
	User     string
	Scope    string
	CodeHash []byte // the code it was issued from; empty for the password grant
	Created  time.Time
	Expires  time.Time
	Revoked  bool
}

// OAuthTokens stores access tokens.
type OAuthTokens interface {
	CreateOAuthToken(ctx context.Context, t *OAuthToken) error
	// LookupOAuthToken finds a token for authentication: ErrNotFound,
	// ErrRevoked or ErrExpired (at now) when it must not be accepted.
	LookupOAuthToken(ctx context.Context, hash []byte, now time.Time) (OAuthToken, error)
	RevokeOAuthToken(ctx context.Context, hash []byte) error
	// RevokeOAuthTokens revokes all of a user's tokens for one client and
	// reports how many were revoked.
	RevokeOAuthTokens(ctx context.Context, user, clientID string) (int, error)
}

// Kind tells productions and presets apart; they share one repository
// because they share their structure and rules.
type Kind string

// The resource kinds.
const (
	KindProduction Kind = "production"
	KindPreset     Kind = "preset"
	// KindLiveStream is a live stream (package production/livestream):
	// its document is the stream's definition, its status its state.
	KindLiveStream Kind = "livestream"
)

// Resource is a production or a preset. The store keeps the document as
// opaque JSON and indexes only what it must query on.
type Resource struct {
	UUID    string // assigned by CreateResource when empty
	Owner   string
	Kind    Kind
	Doc     []byte // the resource document, JSON
	Status  int    // production status code; 0 for presets
	Created time.Time
	Changed time.Time
	// Version increases with every change; UpdateResource succeeds only
	// when it matches the stored one (optimistic concurrency).
	Version int64
	// Progress is the job runner's estimate of how much of a production's
	// processing is done, in percent (SetProgress); SetStatus resets it
	// to 0.
	Progress int
}

// Resources stores productions and presets. Every method is scoped by
// owner: another user's resource is ErrNotFound.
type Resources interface {
	// CreateResource stores r, assigning UUID, Created, Changed (now) and
	// Version (1).
	CreateResource(ctx context.Context, r *Resource) error
	GetResource(ctx context.Context, owner string, kind Kind, uuid string) (Resource, error)
	// ListResources lists the owner's resources of one kind, newest first.
	ListResources(ctx context.Context, owner string, kind Kind, limit, offset int) ([]Resource, error)
	// UpdateResource replaces Doc and Status when r.Version is the stored
	// version, and then advances r.Version and r.Changed. A stale version is
	// ErrConflict.
	UpdateResource(ctx context.Context, r *Resource) error
	// SetStatus changes only the status (and Changed, Version), whatever the
	// version: the pipeline reports progress while users may edit.
	SetStatus(ctx context.Context, owner string, kind Kind, uuid string, status int) error
	// SetProgress stores the progress of a production in percent (0-100),
	// leaving everything else, Changed and Version included, as it is:
	// it is no change of the production.
	SetProgress(ctx context.Context, owner string, uuid string, percent int) error
	DeleteResource(ctx context.Context, owner string, kind Kind, uuid string) error
}

// Service is an external service account of a user (FTP server, bucket,
// hosting platform, speech recognizer).
type Service struct {
	UUID        string // assigned by CreateService when empty
	Owner       string
	Type        string // short provider id, e.g. "ftp", "s3"
	DisplayName string
	Incoming    bool
	Outgoing    bool
	// Config is the provider settings, a JSON object, credentials
	// included. The store keeps the keys named in CredentialKeys apart,
	// sealed with its SecretKey, and merges them back when reading.
	Config  []byte
	Created time.Time
}

// Services stores external service accounts, scoped by owner. Writing a
// service whose Config holds credentials (CredentialKeys) without a
// secret key is ErrNoSecretKey; reading one whose sealed credentials the
// store cannot open is ErrNoSecretKey or ErrSecretKey.
type Services interface {
	CreateService(ctx context.Context, s *Service) error
	GetService(ctx context.Context, owner, uuid string) (Service, error)
	// ListServices lists the owner's services, oldest first.
	ListServices(ctx context.Context, owner string) ([]Service, error)
	// UpdateService replaces type, display name, directions and config.
	UpdateService(ctx context.Context, s Service) error
	DeleteService(ctx context.Context, owner, uuid string) error
}

// JobState is where a job is in its life.
type JobState string

// The job states. Queued, running and stopping jobs are live; the others
// are final.
const (
	JobQueued  JobState = "queued"
	JobRunning JobState = "running"
	// JobStopping is a running job that was stopped (StopJobs) while its
	// lease was held: its holder notices at its next Heartbeat
	// (ErrLeaseLost) and ends it with Stopped; when the holder died
	// instead, the next Claim after the lease runs out hands it, still
	// stopping, to a worker that only ends it.
	JobStopping JobState = "stopping"
	JobDone     JobState = "done"
	JobFailed   JobState = "failed"
	JobCanceled JobState = "canceled"
)

// JobLive is the job type of a running live stream. It runs until it is
// stopped, so Claim never takes it (it would hold a production worker
// forever): live workers claim it with ClaimType.
const JobLive = "live"

// DefaultMaxAttempts is used when a job is enqueued with MaxAttempts 0.
const DefaultMaxAttempts = 3

// Job is a unit of durable background work, normally "process this
// production".
type Job struct {
	ID          int64 // assigned by Enqueue
	Owner       string
	Production  string // production uuid; may be empty for jobs about no production
	Type        string // what to do, e.g. "process"
	Payload     []byte
	State       JobState
	Attempts    int // claims so far, including one that crashed
	MaxAttempts int
	// Crashes counts the claims that ended with their lease running out,
	// the worker dead (killed, out of memory) or stalled mid-job: the
	// Claim that took the job over counted it.
	Crashes    int
	RunAt      time.Time // not claimed before this instant
	Worker     string    // holder of the current lease
	LeaseUntil time.Time
	LastError  string
	Created    time.Time
	Updated    time.Time
}

// Lease identifies one claim of a job. It includes the attempt number, so
// a worker that lost its lease cannot act on a later claim of the same job,
// even one made under the same worker id.
type Lease struct {
	JobID   int64
	Worker  string
	Attempt int
}

// Lease returns the lease of a job returned by Claim.
func (j Job) Lease() Lease { return Lease{JobID: j.ID, Worker: j.Worker, Attempt: j.Attempts} }

// Jobs is the durable job queue. A worker claims a job with a lease, keeps
// it alive with Heartbeat and ends it with Complete, Fail or Release. If the
// worker dies, the lease runs out and the next Claim takes the job again, so
// job handlers must be idempotent.
type Jobs interface {
	// Enqueue stores a queued job, assigning ID, Created and defaults
	// (MaxAttempts DefaultMaxAttempts, RunAt now).
	Enqueue(ctx context.Context, j *Job) error
	// Claim leases the oldest ready job to worker for lease: a queued job
	// whose RunAt has come, or a running or stopping job whose lease ran
	// out (a stopping one stays stopping), of any type but JobLive. Each
	// claim counts as an attempt, and taking over a running job whose
	// lease ran out as a crash (Job.Crashes); a job whose lease ran out on
	// its last attempt is failed instead of claimed. ErrNoJob when nothing
	// is ready.
	Claim(ctx context.Context, worker string, lease time.Duration) (Job, error)
	// ClaimType is Claim for the jobs of one type only (JobLive among
	// them).
	ClaimType(ctx context.Context, worker, jobType string, lease time.Duration) (Job, error)
	// Heartbeat extends the lease to now+lease. ErrLeaseLost when the lease
	// is no longer the caller's: the worker must stop working on the job.
	Heartbeat(ctx context.Context, l Lease, lease time.Duration) error
	// Complete marks the job done. ErrLeaseLost as for Heartbeat.
	Complete(ctx context.Context, l Lease) error
	// Fail records reason and queues the job again after retryAfter, or
	// fails it for good when it has used MaxAttempts; retry reports which.
	Fail(ctx context.Context, l Lease, reason string, retryAfter time.Duration) (retry bool, err error)
	// Release gives the job back unfinished without counting the attempt,
	// for a worker that shuts down gracefully.
	Release(ctx context.Context, l Lease) error
	// CancelJobs cancels the owner's live jobs of a production and
	// reports how many; a running worker notices at its next Heartbeat
	// (ErrLeaseLost). A store may signal the cancellation to workers
	// (sqlstore.TopicCanceled) so that they beat at once.
	CancelJobs(ctx context.Context, owner, production string) (int, error)
	// StopJobs is the stop command: it cancels the owner's live jobs of a
	// production, except running (or already stopping) ones whose lease
	// is still held, which become JobStopping for their holder to end, as
	// CancelJobs signals; it reports how many are stopping. A job whose
	// lease ran out has no live holder: it is canceled at once, so a stop
	// asked while no worker runs is honoured without one.
	StopJobs(ctx context.Context, owner, production string) (stopping int, err error)
	// Stopped ends a stopping job held under l as canceled: its stop is
	// honoured. ErrLeaseLost when l no longer holds it, or it is not
	// stopping.
	Stopped(ctx context.Context, l Lease) error
	// GetJob returns a job by id (operators and tests; not owner-scoped).
	GetJob(ctx context.Context, id int64) (Job, error)
	// LeaseHolders lists the distinct workers that hold running or
	// stopping jobs, for a starting process to find the leases of dead
	// workers.
	LeaseHolders(ctx context.Context) ([]string, error)
	// ExpireLeases ends the leases of the running and stopping jobs of
	// these workers now, so that the next Claim takes them again at once
	// (counting the crashed attempt, as a lease that ran out does), and
	// reports how many. Only for workers known to be dead: a live one
	// loses its jobs at its next Heartbeat.
	ExpireLeases(ctx context.Context, workers ...string) (int, error)
	// ListJobs lists the owner's jobs of a production, newest first.
	ListJobs(ctx context.Context, owner, production string) ([]Job, error)
}

// DeliveryState is where a webhook delivery is in its life.
type DeliveryState string

// The delivery states.
const (
	DeliveryPending   DeliveryState = "pending"
	DeliveryDelivered DeliveryState = "delivered"
	DeliveryFailed    DeliveryState = "failed"
)

// Delivery is one webhook call in the durable outbox.
type Delivery struct {
	ID          int64 // assigned by EnqueueDelivery
	Owner       string
	Production  string
	URL         string
	Payload     []byte // the body parameters, form-encoded
	State       DeliveryState
	Attempts    int
	NextAttempt time.Time
	LastError   string
	Created     time.Time
	Updated     time.Time
	// Worker is the sender holding the current claim ("" when none does).
	Worker string
	// HTTPStatus is the receiver's answer to the last finished attempt (0:
	// none, as after a network error or a refused address). The sender
	// sets it before DeliverySucceeded or DeliveryFailed.
	HTTPStatus int
}

// Deliveries is the webhook outbox. EnqueueDelivery goes in the same
// transaction as the final status change, so a webhook is never lost nor
// sent for a change that rolled back.
type Deliveries interface {
	// EnqueueDelivery stores a pending delivery due at d.NextAttempt (now
	// when zero).
	EnqueueDelivery(ctx context.Context, d *Delivery) error
	// ClaimDelivery takes the oldest due delivery for worker, counts an
	// attempt and postpones it by lease, so that a sender that dies does
	// not lose it and two senders never send it at once. ErrNoJob when
	// none is due.
	ClaimDelivery(ctx context.Context, worker string, lease time.Duration) (Delivery, error)
	// DeliveryHolders lists the distinct senders that hold claimed
	// deliveries, for a sender to find the claims of dead ones.
	DeliveryHolders(ctx context.Context) ([]string, error)
	// ExpireDeliveries makes the deliveries these senders hold due now,
	// so that the next ClaimDelivery takes them again (counting the
	// interrupted attempt), and reports how many. Only for senders known
	// to be dead.
	ExpireDeliveries(ctx context.Context, workers ...string) (int, error)
	// DeliverySucceeded marks a claimed delivery delivered, recording
	// d.HTTPStatus (LastError stays: why an earlier attempt failed).
	// ErrLeaseLost when it was claimed again meanwhile.
	DeliverySucceeded(ctx context.Context, d Delivery) error
	// DeliveryFailed records reason and d.HTTPStatus and schedules the
	// next attempt at next, or fails the delivery for good when next is
	// zero.
	DeliveryFailed(ctx context.Context, d Delivery, reason string, next time.Time) error
	// GetDelivery returns a delivery by id (not owner-scoped).
	GetDelivery(ctx context.Context, id int64) (Delivery, error)
	// ListDeliveries lists the owner's deliveries of a production, newest first.
	ListDeliveries(ctx context.Context, owner, production string) ([]Delivery, error)
}

// Session is a browser login. Hash is HashToken of the token in the
// session cookie; the token itself is never stored.
type Session struct {
	Hash []byte
	User string
	// CSRF is the token the session's forms carry (double submit against
	// the session, not a credential on its own).
	CSRF string
	// CredentialVersion is the user's CredentialVersion when the session
	// began; once the user's moves on, the session is revoked.
	CredentialVersion int64
	Created           time.Time
	Expires           time.Time
}

// Sessions stores browser sessions, so that they survive restarts and
// are shared by every API process on one store.
type Sessions interface {
	// CreateSession stores s (Created defaults to now; Expires is
	// required) and deletes sessions that expired before s.Created.
	CreateSession(ctx context.Context, s *Session) error
	// LookupSession finds the session with this hash: ErrNotFound,
	// ErrExpired (at now) or ErrRevoked (the user's CredentialVersion
	// moved on) when it must not be accepted.
	LookupSession(ctx context.Context, hash []byte, now time.Time) (Session, error)
	// DeleteSession ends one session (logout); an unknown hash is not an
	// error.
	DeleteSession(ctx context.Context, hash []byte) error
	// EndSessions ends every session and revokes every OAuth access token
	// of the user ("log out everywhere"), advancing CredentialVersion.
	// API keys stay: they are credentials the user manages one by one.
	EndSessions(ctx context.Context, userID string) (User, error)
}

// Throttle is a counter that leaks over time, kept in the store so that
// every API process sees the same one: login throttling counts failed
// attempts per user, per address and per (user, address) in them.
type Throttle struct {
	Key   string
	Level float64   // the level at At; it leaks from there
	At    time.Time // last change
	Note  string    // free text of the last change (e.g. the client address)
}

// LevelAt is t's level at now when one unit leaks every leak (0: none).
func (t Throttle) LevelAt(now time.Time, leak time.Duration) float64 {
	if leak <= 0 || !now.After(t.At) {
		return t.Level
	}
	return max(0, t.Level-float64(now.Sub(t.At))/float64(leak))
}

// Throttles stores leaking counters by key.
type Throttles interface {
	// GetThrottles returns the stored counters of keys; missing keys are
	// absent from the map.
	GetThrottles(ctx context.Context, keys ...string) (map[string]Throttle, error)
	// AddThrottle atomically leaks key's counter to now (one unit per
	// leak; 0: no leak), adds add, records note and now, and returns it.
	AddThrottle(ctx context.Context, key string, now time.Time, leak time.Duration, add float64, note string) (Throttle, error)
	// TakeThrottle is AddThrottle for a limit: it adds only when the
	// leaked level plus add stays at or below limit, and reports whether
	// it did. The counter returned is the stored one (unchanged when not
	// taken), so the caller can tell how long until add fits. Rate limits
	// shared by every API process are such counters.
	TakeThrottle(ctx context.Context, key string, now time.Time, leak time.Duration, add, limit float64) (Throttle, bool, error)
	// DeleteThrottles removes counters; unknown keys are not an error.
	DeleteThrottles(ctx context.Context, keys ...string) error
	// PurgeThrottles removes counters not changed since before and reports
	// how many (housekeeping).
	PurgeThrottles(ctx context.Context, before time.Time) (int, error)
}
