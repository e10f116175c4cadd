package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/audiopost/audiopost/storage"
)

const sessionColumns = `hash, user_id, csrf, credential_version, created_at, expires_at`

// CreateSession implements storage.Sessions.
func (r *repo) CreateSession(ctx context.Context, s *storage.Session) error {
	if len(s.Hash) == 0 || s.User == "" || s.CSRF == "" || s.Expires.IsZero() {
		return fmt.Errorf("sqlstore: session without hash, user, CSRF token or expiry: %w", storage.ErrInvalid)
	}
	if s.Created.IsZero() {
		s.Created = r.now()
	}
	s.Created = s.Created.UTC().Truncate(time.Microsecond)
	s.Expires = s.Expires.UTC().Truncate(time.Microsecond)
	return r.begin(ctx, func(t *repo) error {
		// Expired sessions go when new ones come: no sweeper needed, and the
		// table stays as large as the sessions in use.
		if _, err := t.exec(ctx, `DELETE FROM sessions WHERE expires_at <= ?`, s.Created.UnixMicro()); err != nil {
			return t.wrap("delete expired sessions", err)
		}
		if s.CredentialVersion == 0 {
			u, err := t.getUserW(ctx, s.User)
			if err != nil {
				return err
			}
			s.CredentialVersion = u.CredentialVersion
		}
		_, err := t.exec(ctx, `INSERT INTO sessions (`+sessionColumns+`) VALUES (?, ?, ?, ?, ?, ?)`,
			s.Hash, s.User, s.CSRF, s.CredentialVersion, dbTime(s.Created), dbTime(s.Expires))
		return t.wrap("create session", err)
	})
}

// LookupSession implements storage.Sessions.
func (r *repo) LookupSession(ctx context.Context, hash []byte, at time.Time) (storage.Session, error) {
	var (
		s                storage.Session
		created, expires sql.NullInt64
		current          int64
	)
	err := r.queryRow(ctx, `SELECT s.hash, s.user_id, s.csrf, s.credential_version, s.created_at, s.expires_at,
		u.credential_version FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.hash = ?`, hash).
		Scan(&s.Hash, &s.User, &s.CSRF, &s.CredentialVersion, &created, &expires, &current)
	if err != nil {
		return storage.Session{}, r.wrap("look up session", err)
	}
	s.Created, s.Expires = goTime(created), goTime(expires)
	switch {
	case s.CredentialVersion != current:
		return storage.Session{}, fmt.Errorf("sqlstore: session of an older password or logged out everywhere: %w", storage.ErrRevoked)
	case !at.Before(s.Expires):
		return storage.Session{}, fmt.Errorf("sqlstore: session expired at %v: %w", s.Expires, storage.ErrExpired)
	}
	return s, nil
}

// DeleteSession implements storage.Sessions.
func (r *repo) DeleteSession(ctx context.Context, hash []byte) error {
	_, err := r.exec(ctx, `DELETE FROM sessions WHERE hash = ?`, hash)
	return r.wrap("delete session", err)
}

// EndSessions implements storage.Sessions.
func (r *repo) EndSessions(ctx context.Context, userID string) (storage.User, error) {
	var u storage.User
	err := r.begin(ctx, func(t *repo) error {
		if err := t.endSessions(ctx, userID); err != nil {
			return err
		}
		var err error
		u, err = t.getUserW(ctx, userID)
		return err
	})
	return u, err
}

// endSessions advances the credential version and ends what was bound to
// the old one; run inside a transaction.
func (r *repo) endSessions(ctx context.Context, userID string) error {
	if err := r.execOne(ctx, "end sessions of user "+userID,
		`UPDATE users SET credential_version = credential_version + 1 WHERE id = ?`, userID); err != nil {
		return err
	}
	if _, err := r.exec(ctx, `DELETE FROM sessions WHERE user_id = ?`, userID); err != nil {
		return r.wrap("delete sessions", err)
	}
	if _, err := r.exec(ctx, `UPDATE oauth_tokens SET revoked = TRUE WHERE user_id = ? AND revoked = FALSE`, userID); err != nil {
		return r.wrap("revoke OAuth tokens", err)
	}
	return nil
}

const throttleColumns = `name, level, updated_at, note`

func scanThrottle(row interface{ Scan(...any) error }) (storage.Throttle, error) {
	var (
		t  storage.Throttle
		at sql.NullInt64
	)
	if err := row.Scan(&t.Key, &t.Level, &at, &t.Note); err != nil {
		return storage.Throttle{}, err
	}
	t.At = goTime(at)
	return t, nil
}

// maxThrottleKeys bounds one GetThrottles or DeleteThrottles.
const maxThrottleKeys = 100

// GetThrottles implements storage.Throttles.
func (r *repo) GetThrottles(ctx context.Context, keys ...string) (map[string]storage.Throttle, error) {
	m := make(map[string]storage.Throttle, len(keys))
	if len(keys) == 0 {
		return m, nil
	}
	if len(keys) > maxThrottleKeys {
		return nil, fmt.Errorf("sqlstore: %d throttle keys: %w", len(keys), storage.ErrInvalid)
	}
	rows, err := r.query(ctx, `SELECT `+throttleColumns+` FROM throttles WHERE name IN (`+placeholders(len(keys))+`)`, anys(keys)...)
	if err != nil {
		return nil, r.wrap("get throttles", err)
	}
	list, err := collect(rows, "get throttles", scanThrottle)
	if err != nil {
		return nil, err
	}
	for _, t := range list {
		m[t.Key] = t
	}
	return m, nil
}

// AddThrottle implements storage.Throttles.
func (r *repo) AddThrottle(ctx context.Context, key string, at time.Time, leak time.Duration, add float64, note string) (storage.Throttle, error) {
	t, _, err := r.changeThrottle(ctx, key, at, leak, add, math.Inf(1), note)
	return t, err
}

// TakeThrottle implements storage.Throttles.
func (r *repo) TakeThrottle(ctx context.Context, key string, at time.Time, leak time.Duration, add, limit float64) (storage.Throttle, bool, error) {
	return r.changeThrottle(ctx, key, at, leak, add, limit, "")
}

// changeThrottle leaks key's counter to at and adds add unless that would
// take it above limit. The row is created first when missing and then read
// and written in one transaction (locked on PostgreSQL, where the insert
// makes sure there is a row to lock; SQLite serializes writers), so
// concurrent changes from several processes are all counted and a limit
// is never exceeded.
func (r *repo) changeThrottle(ctx context.Context, key string, at time.Time, leak time.Duration, add, limit float64, note string) (storage.Throttle, bool, error) {
	if key == "" {
		return storage.Throttle{}, false, fmt.Errorf("sqlstore: throttle without key: %w", storage.ErrInvalid)
	}
	at = at.UTC().Truncate(time.Microsecond)
	var t storage.Throttle
	var ok bool
	err := r.begin(ctx, func(tx *repo) error {
		t, ok = storage.Throttle{}, false
		if _, err := tx.exec(ctx, `INSERT INTO throttles (`+throttleColumns+`) VALUES (?, 0, ?, '') ON CONFLICT (name) DO NOTHING`, key, at.UnixMicro()); err != nil {
			return tx.wrap("create throttle", err)
		}
		old, err := scanThrottle(tx.w.QueryRowContext(ctx, tx.d.rebind(`SELECT `+throttleColumns+` FROM throttles WHERE name = ?`+tx.lockRow()), key))
		if err != nil {
			return tx.wrap("read throttle", err)
		}
		t = storage.Throttle{Key: key, Level: old.LevelAt(at, leak) + add, At: at, Note: note}
		if at.Before(old.At) {
			t.At = old.At // clocks of several processes: never go back
		}
		if t.Level > limit {
			t = old
			return nil
		}
		ok = true
		_, err = tx.exec(ctx, `UPDATE throttles SET level = ?, updated_at = ?, note = ? WHERE name = ?`,
			t.Level, t.At.UnixMicro(), t.Note, t.Key)
		return tx.wrap("write throttle", err)
	})
	return t, ok, err
}

// DeleteThrottles implements storage.Throttles.
func (r *repo) DeleteThrottles(ctx context.Context, keys ...string) error {
	if len(keys) == 0 {
		return nil
	}
	if len(keys) > maxThrottleKeys {
		return fmt.Errorf("sqlstore: %d throttle keys: %w", len(keys), storage.ErrInvalid)
	}
	_, err := r.exec(ctx, `DELETE FROM throttles WHERE name IN (`+placeholders(len(keys))+`)`, anys(keys)...)
	return r.wrap("delete throttles", err)
}

// PurgeThrottles implements storage.Throttles.
func (r *repo) PurgeThrottles(ctx context.Context, before time.Time) (int, error) {
	res, err := r.exec(ctx, `DELETE FROM throttles WHERE updated_at < ?`, before.UnixMicro())
	if err != nil {
		return 0, r.wrap("purge throttles", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

func anys[T any](s []T) []any {
	a := make([]any, len(s))
	for i, v := range s {
		a[i] = v
	}
	return a
}
