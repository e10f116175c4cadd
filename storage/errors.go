package storage

import "errors"

// Sentinel errors returned by every Store and Blobs implementation, wrapped
// with context; test for them with errors.Is.
var (
	// ErrNotFound: the record does not exist or belongs to another user.
	ErrNotFound = errors.New("storage: not found")
	// ErrConflict: a unique value (username, email, uuid, key hash) is
	// taken, or an optimistic update lost against a concurrent change.
	ErrConflict = errors.New("storage: conflict")
	// ErrNoJob: no job (or webhook delivery) is ready to be claimed.
	ErrNoJob = errors.New("storage: no job ready")
	// ErrLeaseLost: the caller no longer holds the job's lease, because the
	// lease expired and another worker claimed the job, or the job was
	// canceled or finished.
	ErrLeaseLost = errors.New("storage: job lease lost")
	// ErrExpired: the API key, OAuth code or token is past its expiry.
	ErrExpired = errors.New("storage: expired")
	// ErrRevoked: the API key or token was revoked.
	ErrRevoked = errors.New("storage: revoked")
	// ErrAlreadyUsed: the OAuth authorization code was already redeemed.
	ErrAlreadyUsed = errors.New("storage: already used")
	// ErrInsufficientCredits: a charge would take the user's credits below
	// zero; nothing was charged.
	ErrInsufficientCredits = errors.New("storage: insufficient credits")
	// ErrInvalidKey: a blob key is empty, absolute, contains "..", or is
	// otherwise unusable as a storage path.
	ErrInvalidKey = errors.New("storage: invalid blob key")
	// ErrInvalid: a record is missing a required field or has a value out of
	// range (negative duration, unknown kind).
	ErrInvalid = errors.New("storage: invalid record")
	// ErrSchemaTooNew: the database was migrated by a newer program version.
	ErrSchemaTooNew = errors.New("storage: database schema is newer than this program")
	// ErrNoSecretKey: a service with credentials was to be written or read,
	// and the store has no SecretKey to seal or open them with.
	ErrNoSecretKey = errors.New("storage: no secret key configured for service credentials")
	// ErrSecretKey: a secret key is malformed, or sealed credentials do not
	// open with the store's key (another key sealed them, or they were
	// tampered with).
	ErrSecretKey = errors.New("storage: secret key")
)
