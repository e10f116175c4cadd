package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/audiopost/audiopost/storage"
)

const userColumns = `id, username, COALESCE(email, ''), password_hash, joined_at,
	onetime_credits, recurring_credits, recharge_credits, recharge_at,
	notify_email, error_email, warning_email, low_credits_email, low_credits_threshold, credential_version`

func scanUser(row interface{ Scan(...any) error }) (storage.User, error) {
	var (
		u                   storage.User
		joined, recharge    sql.NullInt64
		onetime, recurring  int64
		rechargeCr, lowCred int64
	)
	err := row.Scan(&u.ID, &u.Username, &u.Email, &u.PasswordHash, &joined,
		&onetime, &recurring, &rechargeCr, &recharge,
		&u.NotifyEmail, &u.ErrorEmail, &u.WarningEmail, &u.LowCreditsEmail, &lowCred, &u.CredentialVersion)
	if err != nil {
		return storage.User{}, err
	}
	u.Joined = goTime(joined)
	u.RechargeDate = goTime(recharge)
	u.OnetimeCredits = time.Duration(onetime)
	u.RecurringCredits = time.Duration(recurring)
	u.RechargeCredits = time.Duration(rechargeCr)
	u.LowCreditsThreshold = time.Duration(lowCred)
	return u, nil
}

func validUser(u *storage.User) error {
	switch {
	case u.Username == "":
		return fmt.Errorf("sqlstore: user without username: %w", storage.ErrInvalid)
	case u.OnetimeCredits < 0 || u.RecurringCredits < 0 || u.RechargeCredits < 0 || u.LowCreditsThreshold < 0:
		return fmt.Errorf("sqlstore: user %q: negative credits: %w", u.Username, storage.ErrInvalid)
	}
	return nil
}

// CreateUser implements storage.Users.
func (r *repo) CreateUser(ctx context.Context, u *storage.User) error {
	if err := validUser(u); err != nil {
		return err
	}
	if u.ID == "" {
		u.ID = storage.NewUUID()
	}
	if u.Joined.IsZero() {
		u.Joined = r.now()
	}
	u.Joined = u.Joined.UTC().Truncate(time.Microsecond)
	u.CredentialVersion = 1
	_, err := r.exec(ctx, `INSERT INTO users (id, username, email, password_hash, joined_at,
		onetime_credits, recurring_credits, recharge_credits, recharge_at,
		notify_email, error_email, warning_email, low_credits_email, low_credits_threshold)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		u.ID, u.Username, dbText(u.Email), u.PasswordHash, dbTime(u.Joined),
		int64(u.OnetimeCredits), int64(u.RecurringCredits), int64(u.RechargeCredits), dbTime(u.RechargeDate),
		u.NotifyEmail, u.ErrorEmail, u.WarningEmail, u.LowCreditsEmail, int64(u.LowCreditsThreshold))
	return r.wrap("create user "+u.Username, err)
}

// GetUser implements storage.Users.
func (r *repo) GetUser(ctx context.Context, id string) (storage.User, error) {
	u, err := scanUser(r.queryRow(ctx, `SELECT `+userColumns+` FROM users WHERE id = ?`+r.lockRow(), id))
	return u, r.wrap("get user", err)
}

// GetUserByUsername implements storage.Users.
func (r *repo) GetUserByUsername(ctx context.Context, username string) (storage.User, error) {
	u, err := scanUser(r.queryRow(ctx, `SELECT `+userColumns+` FROM users WHERE username = ?`+r.lockRow(), username))
	return u, r.wrap("get user by username", err)
}

// GetUserByEmail implements storage.Users.
func (r *repo) GetUserByEmail(ctx context.Context, email string) (storage.User, error) {
	if email == "" {
		return storage.User{}, fmt.Errorf("sqlstore: get user by empty email: %w", storage.ErrNotFound)
	}
	u, err := scanUser(r.queryRow(ctx, `SELECT `+userColumns+` FROM users WHERE email = ?`+r.lockRow(), email))
	return u, r.wrap("get user by email", err)
}

// UpdateUser implements storage.Users. A changed password advances the
// credential version and ends the user's sessions and OAuth tokens in the
// same transaction.
func (r *repo) UpdateUser(ctx context.Context, u storage.User) error {
	if err := validUser(&u); err != nil {
		return err
	}
	return r.begin(ctx, func(t *repo) error {
		old, err := t.getUserW(ctx, u.ID)
		if err != nil {
			return err
		}
		if err := t.execOne(ctx, "update user "+u.ID, `UPDATE users SET username = ?, email = ?, password_hash = ?,
			recharge_credits = ?, recharge_at = ?,
			notify_email = ?, error_email = ?, warning_email = ?, low_credits_email = ?, low_credits_threshold = ?
			WHERE id = ?`,
			u.Username, dbText(u.Email), u.PasswordHash, int64(u.RechargeCredits), dbTime(u.RechargeDate),
			u.NotifyEmail, u.ErrorEmail, u.WarningEmail, u.LowCreditsEmail, int64(u.LowCreditsThreshold), u.ID); err != nil {
			return err
		}
		if old.PasswordHash != u.PasswordHash {
			return t.endSessions(ctx, u.ID)
		}
		return nil
	})
}

// getUserW reads a user through the write connection (inside a
// transaction: locked on PostgreSQL).
func (r *repo) getUserW(ctx context.Context, id string) (storage.User, error) {
	u, err := scanUser(r.w.QueryRowContext(ctx, r.d.rebind(`SELECT `+userColumns+` FROM users WHERE id = ?`+r.lockRow()), id))
	return u, r.wrap("get user", err)
}

// DeleteUser implements storage.Users. Foreign keys cascade to everything
// the user owns.
func (r *repo) DeleteUser(ctx context.Context, id string) error {
	return r.execOne(ctx, "delete user "+id, `DELETE FROM users WHERE id = ?`, id)
}

// ListUsers implements storage.Users.
func (r *repo) ListUsers(ctx context.Context, limit, offset int) ([]storage.User, error) {
	limit, offset, err := page(limit, offset)
	if err != nil {
		return nil, err
	}
	rows, err := r.query(ctx, `SELECT `+userColumns+` FROM users ORDER BY username LIMIT ? OFFSET ?`, limit, offset)
	if err != nil {
		return nil, r.wrap("list users", err)
	}
	return collect(rows, "list users", scanUser)
}

// Charge implements storage.Credits in one statement: the WHERE clause
// refuses a charge larger than the balance, the SET takes recurring
// credits first. SQL evaluates every SET expression on the old row, so both
// use the same balances.
func (r *repo) Charge(ctx context.Context, userID string, d time.Duration) (storage.User, error) {
	if d < 0 {
		return storage.User{}, fmt.Errorf("sqlstore: charge %v: %w", d, storage.ErrInvalid)
	}
	var u storage.User
	err := r.begin(ctx, func(t *repo) error {
		res, err := t.exec(ctx, `UPDATE users SET
			recurring_credits = CASE WHEN recurring_credits >= ? THEN recurring_credits - ? ELSE 0 END,
			onetime_credits = CASE WHEN recurring_credits >= ? THEN onetime_credits
				ELSE onetime_credits - (? - recurring_credits) END
			WHERE id = ? AND onetime_credits + recurring_credits >= ?`,
			int64(d), int64(d), int64(d), int64(d), userID, int64(d))
		if err != nil {
			return t.wrap("charge", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("sqlstore: charge: %w", err)
		}
		u, err = t.GetUser(ctx, userID)
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("sqlstore: charge %v with %v left: %w", d, u.Credits(), storage.ErrInsufficientCredits)
		}
		return nil
	})
	return u, err
}

// AddCredits implements storage.Credits.
func (r *repo) AddCredits(ctx context.Context, userID string, onetime, recurring time.Duration) (storage.User, error) {
	var u storage.User
	err := r.begin(ctx, func(t *repo) error {
		err := t.execOne(ctx, "add credits", `UPDATE users SET
			onetime_credits = CASE WHEN onetime_credits + ? < 0 THEN 0 ELSE onetime_credits + ? END,
			recurring_credits = CASE WHEN recurring_credits + ? < 0 THEN 0 ELSE recurring_credits + ? END
			WHERE id = ?`, int64(onetime), int64(onetime), int64(recurring), int64(recurring), userID)
		if err != nil {
			return err
		}
		u, err = t.GetUser(ctx, userID)
		return err
	})
	return u, err
}

// collect scans all rows with scan and closes them.
func collect[T any](rows *sql.Rows, what string, scan func(interface{ Scan(...any) error }) (T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlstore: %s: %w", what, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlstore: %s: %w", what, err)
	}
	return out, nil
}
