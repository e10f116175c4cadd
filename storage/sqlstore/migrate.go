package sqlstore

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/audiopost/audiopost/storage"
)

// migration is one numbered schema change. Versions are applied in order,
// each exactly once, and recorded in schema_migrations. Never edit a
// released migration: append a new one.
type migration struct {
	version int
	name    string
	stmts   []string // one statement each: drivers differ on multi-statement Exec
}

// Types are written as {{serial}} and {{bytes}} and replaced per dialect;
// everything else is SQL that SQLite and PostgreSQL both accept. Instants
// are BIGINT Unix microseconds, durations BIGINT nanoseconds, JSON TEXT.
var migrations = []migration{
	{1, "initial schema", []string{
		`CREATE TABLE users (
			id TEXT PRIMARY KEY,
			username TEXT NOT NULL UNIQUE,
			email TEXT UNIQUE,
			password_hash TEXT NOT NULL DEFAULT '',
			joined_at BIGINT NOT NULL,
			onetime_credits BIGINT NOT NULL DEFAULT 0 CHECK (onetime_credits >= 0),
			recurring_credits BIGINT NOT NULL DEFAULT 0 CHECK (recurring_credits >= 0),
			recharge_credits BIGINT NOT NULL DEFAULT 0,
			recharge_at BIGINT,
			notify_email BOOLEAN NOT NULL DEFAULT FALSE,
			error_email BOOLEAN NOT NULL DEFAULT FALSE,
			warning_email BOOLEAN NOT NULL DEFAULT FALSE,
			low_credits_email BOOLEAN NOT NULL DEFAULT FALSE,
			low_credits_threshold BIGINT NOT NULL DEFAULT 0
		)`,
		`CREATE TABLE api_keys (
			id TEXT PRIMARY KEY,
			user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
			name TEXT NOT NULL,
			hash {{bytes}} NOT NULL UNIQUE,
			created_at BIGINT NOT NULL,
			last_used_at BIGINT,
			expires_at BIGINT,
			revoked BOOLEAN NOT NULL DEFAULT FALSE
		)`,
		`CREATE INDEX api_keys_user ON api_keys(user_id, created_at)`,
		`CREATE TABLE oauth_clients (
			id TEXT PRIMARY KEY,
			secret_hash {{bytes}},
			name TEXT NOT NULL,
			redirect_uris TEXT NOT NULL,
			public BOOLEAN NOT NULL DEFAULT FALSE,
			owner_id TEXT REFERENCES users(id) ON DELETE CASCADE,
			created_at BIGINT NOT NULL
		)`,
		`CREATE INDEX oauth_clients_owner ON oauth_clients(owner_id)`,
		`CREATE TABLE oauth_codes (
			hash {{bytes}} PRIMARY KEY,
			client_id TEXT NOT NULL REFERENCES oauth_clients(id) ON DELETE CASCADE,
			user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
			redirect_uri TEXT NOT NULL,
			challenge TEXT NOT NULL,
			challenge_method TEXT NOT NULL,
			scope TEXT NOT NULL,
			created_at BIGINT NOT NULL,
			expires_at BIGINT NOT NULL,
			used_at BIGINT
		)`,
		`CREATE TABLE oauth_tokens (
			hash {{bytes}} PRIMARY KEY,
			client_id TEXT NOT NULL REFERENCES oauth_clients(id) ON DELETE CASCADE,
			user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
			scope TEXT NOT NULL,
			code_hash {{bytes}},
			created_at BIGINT NOT NULL,
			expires_at BIGINT NOT NULL,
			revoked BOOLEAN NOT NULL DEFAULT FALSE
		)`,
		`CREATE INDEX oauth_tokens_code ON oauth_tokens(code_hash)`,
		`CREATE INDEX oauth_tokens_user_client ON oauth_tokens(user_id, client_id)`,
		`CREATE TABLE resources (
			seq {{serial}},
			uuid TEXT NOT NULL UNIQUE,
			owner_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
			kind TEXT NOT NULL,
			doc TEXT NOT NULL,
			status INTEGER NOT NULL DEFAULT 0,
			created_at BIGINT NOT NULL,
			changed_at BIGINT NOT NULL,
			version BIGINT NOT NULL
		)`,
		`CREATE INDEX resources_owner_list ON resources(owner_id, kind, created_at, seq)`,
		`CREATE TABLE services (
			seq {{serial}},
			uuid TEXT NOT NULL UNIQUE,
			owner_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
			type TEXT NOT NULL,
			display_name TEXT NOT NULL,
			incoming BOOLEAN NOT NULL DEFAULT FALSE,
			outgoing BOOLEAN NOT NULL DEFAULT FALSE,
			config TEXT NOT NULL,
			created_at BIGINT NOT NULL
		)`,
		`CREATE INDEX services_owner ON services(owner_id, seq)`,
		`CREATE TABLE jobs (
			id {{serial}},
			owner_id TEXT REFERENCES users(id) ON DELETE CASCADE,
			production TEXT NOT NULL,
			type TEXT NOT NULL,
			payload {{bytes}},
			state TEXT NOT NULL,
			attempts INTEGER NOT NULL DEFAULT 0,
			max_attempts INTEGER NOT NULL,
			run_at BIGINT NOT NULL,
			worker TEXT NOT NULL DEFAULT '',
			lease_until BIGINT,
			last_error TEXT NOT NULL DEFAULT '',
			created_at BIGINT NOT NULL,
			updated_at BIGINT NOT NULL
		)`,
		`CREATE INDEX jobs_ready ON jobs(state, run_at, id)`,
		`CREATE INDEX jobs_lease ON jobs(state, lease_until)`,
		`CREATE INDEX jobs_production ON jobs(owner_id, production)`,
		`CREATE TABLE webhook_deliveries (
			id {{serial}},
			owner_id TEXT REFERENCES users(id) ON DELETE CASCADE,
			production TEXT NOT NULL,
			url TEXT NOT NULL,
			payload {{bytes}},
			state TEXT NOT NULL,
			attempts INTEGER NOT NULL DEFAULT 0,
			next_attempt_at BIGINT NOT NULL,
			last_error TEXT NOT NULL DEFAULT '',
			created_at BIGINT NOT NULL,
			updated_at BIGINT NOT NULL
		)`,
		`CREATE INDEX webhook_deliveries_due ON webhook_deliveries(state, next_attempt_at, id)`,
		`CREATE INDEX webhook_deliveries_production ON webhook_deliveries(owner_id, production)`,
	}},
	{2, "sessions, credential versions and login throttles", []string{
		`ALTER TABLE users ADD COLUMN credential_version BIGINT NOT NULL DEFAULT 1`,
		`CREATE TABLE sessions (
			hash {{bytes}} PRIMARY KEY,
			user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
			csrf TEXT NOT NULL,
			credential_version BIGINT NOT NULL,
			created_at BIGINT NOT NULL,
			expires_at BIGINT NOT NULL
		)`,
		`CREATE INDEX sessions_user ON sessions(user_id)`,
		`CREATE INDEX sessions_expires ON sessions(expires_at)`,
		`CREATE TABLE throttles (
			name TEXT PRIMARY KEY,
			level DOUBLE PRECISION NOT NULL,
			updated_at BIGINT NOT NULL,
			note TEXT NOT NULL DEFAULT ''
		)`,
		`CREATE INDEX throttles_updated ON throttles(updated_at)`,
		`CREATE INDEX jobs_worker ON jobs(state, worker)`,
	}},
	{3, "production progress; webhook delivery holders and answers", []string{
		`ALTER TABLE resources ADD COLUMN progress INTEGER NOT NULL DEFAULT 0`,
		`ALTER TABLE webhook_deliveries ADD COLUMN worker TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE webhook_deliveries ADD COLUMN http_status INTEGER NOT NULL DEFAULT 0`,
		`CREATE INDEX webhook_deliveries_worker ON webhook_deliveries(state, worker)`,
	}},
	{4, "sealed service credentials", []string{
		// The credentials of a service (storage.CredentialKeys), sealed
		// with the store's secret key, and the id of that key, so that a
		// process started with another key can say so at once.
		`ALTER TABLE services ADD COLUMN credentials {{bytes}}`,
		`ALTER TABLE services ADD COLUMN credentials_key TEXT NOT NULL DEFAULT ''`,
	}},
	{5, "live stream figures", []string{
		`CREATE TABLE live_figures (
			uuid TEXT PRIMARY KEY,
			owner_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
			doc TEXT NOT NULL,
			updated_at BIGINT NOT NULL
		)`,
	}},
	{6, "job crashes", []string{
		// How many claims of a job ended with the lease running out (its
		// worker killed mid-job): the runner gives up on a job that
		// killed its worker twice instead of taking it back forever.
		`ALTER TABLE jobs ADD COLUMN crashes INTEGER NOT NULL DEFAULT 0`,
	}},
}

// SchemaVersion is the schema version this package migrates to.
var SchemaVersion = migrations[len(migrations)-1].version

// migrate brings the schema up to date in one write transaction, so that
// concurrent openers (several processes on one SQLite file, several API
// replicas on one PostgreSQL) apply each migration exactly once and a
// failed migration leaves the previous schema intact. SQLite serializes
// the transactions by itself (the writer lock); PostgreSQL would let two
// of them race on CREATE TABLE, so there the transaction begins by taking
// an advisory lock, which the commit releases.
func migrate(ctx context.Context, db *sql.DB, d *dialect, list []migration, now int64) (applied int, err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("sqlstore: migrate: begin: %w", err)
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	if d.migrateLock != "" {
		if _, err := tx.ExecContext(ctx, d.migrateLock); err != nil {
			return 0, fmt.Errorf("sqlstore: migrate: lock: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY,
		name TEXT NOT NULL,
		applied_at BIGINT NOT NULL
	)`); err != nil {
		return 0, fmt.Errorf("sqlstore: migrate: %w", err)
	}
	var current sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT MAX(version) FROM schema_migrations`).Scan(&current); err != nil {
		return 0, fmt.Errorf("sqlstore: migrate: read version: %w", err)
	}
	last := list[len(list)-1].version
	if int(current.Int64) > last {
		return 0, fmt.Errorf("%w: database at version %d, program knows up to %d", storage.ErrSchemaTooNew, current.Int64, last)
	}
	for _, m := range list {
		if m.version <= int(current.Int64) {
			continue
		}
		for i, s := range m.stmts {
			if _, err := tx.ExecContext(ctx, d.ddl.Replace(s)); err != nil {
				return 0, fmt.Errorf("sqlstore: migration %d (%s) statement %d: %w", m.version, m.name, i+1, err)
			}
		}
		if _, err := tx.ExecContext(ctx, d.rebind(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`),
			m.version, m.name, now); err != nil {
			return 0, fmt.Errorf("sqlstore: record migration %d: %w", m.version, err)
		}
		applied++
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("sqlstore: migrate: commit: %w", err)
	}
	return applied, nil
}
