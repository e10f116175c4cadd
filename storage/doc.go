// Package storage defines what audiopost persists and the interfaces that
// persist it: a metadata [Store] (users, API keys, OAuth clients, codes and
// tokens, productions and presets, external services, the durable job queue,
// the webhook outbox and credits) and a [Blobs] store for audio files.
//
// The package holds record types, interfaces, sentinel errors and the secret
// helpers every implementation shares; it imports only the standard library.
// Implementations live in sub-packages named after what they adapt:
// storage/sqlstore (database/sql; SQLite embedded, PostgreSQL for
// scale-out) and storage/blob (a local folder, or an S3-compatible
// bucket).
//
// Ownership: every production, preset, service and API key belongs to one
// user, and every query that reads or changes one takes the owner's id. A
// resource of another user is reported as [ErrNotFound], exactly like a
// resource that does not exist, so callers cannot probe for foreign ids.
//
// Secrets: the store never sees a clear-text secret. API keys, OAuth codes,
// access tokens and client secrets are high-entropy random strings
// ([NewToken]) stored as their SHA-256 ([HashToken]); passwords are stored
// as a salted PBKDF2 hash ([HashPassword], [CheckPassword]). The
// credentials of external services must be given back to log in with, so
// they cannot be hashed: stores keep them sealed with AES-256-GCM under a
// [SecretKey] the operator provides ([CredentialKeys] names them), and
// refuse to write them without one ([ErrNoSecretKey]).
package storage
