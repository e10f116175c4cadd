package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/audiopost/audiopost/storage"
)

// lastUsedResolution is how stale an API key's LastUsed may get before a
// lookup writes it again.
const lastUsedResolution = time.Minute

const apiKeyColumns = `id, user_id, name, hash, created_at, last_used_at, expires_at, revoked`

func scanAPIKey(row interface{ Scan(...any) error }) (storage.APIKey, error) {
	var (
		k                      storage.APIKey
		created, used, expires sql.NullInt64
	)
	if err := row.Scan(&k.ID, &k.User, &k.Name, &k.Hash, &created, &used, &expires, &k.Revoked); err != nil {
		return storage.APIKey{}, err
	}
	k.Created, k.LastUsed, k.Expires = goTime(created), goTime(used), goTime(expires)
	return k, nil
}

// CreateAPIKey implements storage.APIKeys.
func (r *repo) CreateAPIKey(ctx context.Context, k *storage.APIKey) error {
	if k.User == "" || len(k.Hash) == 0 {
		return fmt.Errorf("sqlstore: API key without user or hash: %w", storage.ErrInvalid)
	}
	if k.ID == "" {
		k.ID = storage.NewUUID()
	}
	if k.Created.IsZero() {
		k.Created = r.now()
	}
	_, err := r.exec(ctx, `INSERT INTO api_keys (`+apiKeyColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		k.ID, k.User, k.Name, k.Hash, dbTime(k.Created), dbTime(k.LastUsed), dbTime(k.Expires), k.Revoked)
	return r.wrap("create API key", err)
}

// ListAPIKeys implements storage.APIKeys.
func (r *repo) ListAPIKeys(ctx context.Context, user string) ([]storage.APIKey, error) {
	rows, err := r.query(ctx, `SELECT `+apiKeyColumns+` FROM api_keys WHERE user_id = ?
		ORDER BY created_at DESC, id DESC`, user)
	if err != nil {
		return nil, r.wrap("list API keys", err)
	}
	return collect(rows, "list API keys", scanAPIKey)
}

// RevokeAPIKey implements storage.APIKeys.
func (r *repo) RevokeAPIKey(ctx context.Context, user, id string) error {
	return r.execOne(ctx, "revoke API key", `UPDATE api_keys SET revoked = TRUE WHERE id = ? AND user_id = ?`, id, user)
}

// LookupAPIKey implements storage.APIKeys.
func (r *repo) LookupAPIKey(ctx context.Context, hash []byte, at time.Time) (storage.APIKey, error) {
	k, err := scanAPIKey(r.queryRow(ctx, `SELECT `+apiKeyColumns+` FROM api_keys WHERE hash = ?`, hash))
	if err != nil {
		return storage.APIKey{}, r.wrap("look up API key", err)
	}
	switch {
	case k.Revoked:
		return storage.APIKey{}, fmt.Errorf("sqlstore: API key %s: %w", k.ID, storage.ErrRevoked)
	case !k.Expires.IsZero() && !at.Before(k.Expires):
		return storage.APIKey{}, fmt.Errorf("sqlstore: API key %s expired at %v: %w", k.ID, k.Expires, storage.ErrExpired)
	}
	if at.Sub(k.LastUsed) >= lastUsedResolution {
		at = at.UTC().Truncate(time.Microsecond)
		// The condition keeps LastUsed monotonic when lookups race.
		if _, err := r.exec(ctx, `UPDATE api_keys SET last_used_at = ?
			WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)`,
			at.UnixMicro(), k.ID, at.UnixMicro()); err != nil {
			return storage.APIKey{}, r.wrap("record API key use", err)
		}
		k.LastUsed = at
	}
	return k, nil
}

const oauthClientColumns = `id, secret_hash, name, redirect_uris, public, COALESCE(owner_id, ''), created_at`

func scanOAuthClient(row interface{ Scan(...any) error }) (storage.OAuthClient, error) {
	var (
		c       storage.OAuthClient
		uris    string
		created sql.NullInt64
	)
	if err := row.Scan(&c.ID, &c.SecretHash, &c.Name, &uris, &c.Public, &c.Owner, &created); err != nil {
		return storage.OAuthClient{}, err
	}
	if err := json.Unmarshal([]byte(uris), &c.RedirectURIs); err != nil {
		return storage.OAuthClient{}, fmt.Errorf("redirect URIs of client %s: %w", c.ID, err)
	}
	c.Created = goTime(created)
	return c, nil
}

func redirectJSON(uris []string) (string, error) {
	if uris == nil {
		uris = []string{}
	}
	b, err := json.Marshal(uris)
	return string(b), err
}

// CreateOAuthClient implements storage.OAuthClients.
func (r *repo) CreateOAuthClient(ctx context.Context, c *storage.OAuthClient) error {
	if c.Name == "" {
		return fmt.Errorf("sqlstore: OAuth client without name: %w", storage.ErrInvalid)
	}
	if !c.Public && len(c.SecretHash) == 0 {
		return fmt.Errorf("sqlstore: confidential OAuth client %q without secret: %w", c.Name, storage.ErrInvalid)
	}
	if c.ID == "" {
		c.ID = storage.NewUUID()
	}
	if c.Created.IsZero() {
		c.Created = r.now()
	}
	uris, err := redirectJSON(c.RedirectURIs)
	if err != nil {
		return fmt.Errorf("sqlstore: create OAuth client: %w", err)
	}
	_, err = r.exec(ctx, `INSERT INTO oauth_clients (id, secret_hash, name, redirect_uris, public, owner_id, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`,
		c.ID, dbBytes(c.SecretHash), c.Name, uris, c.Public, dbText(c.Owner), dbTime(c.Created))
	return r.wrap("create OAuth client", err)
}

// GetOAuthClient implements storage.OAuthClients.
func (r *repo) GetOAuthClient(ctx context.Context, id string) (storage.OAuthClient, error) {
	c, err := scanOAuthClient(r.queryRow(ctx, `SELECT `+oauthClientColumns+` FROM oauth_clients WHERE id = ?`, id))
	return c, r.wrap("get OAuth client", err)
}

// ListOAuthClients implements storage.OAuthClients.
func (r *repo) ListOAuthClients(ctx context.Context, owner string) ([]storage.OAuthClient, error) {
	rows, err := r.query(ctx, `SELECT `+oauthClientColumns+` FROM oauth_clients
		WHERE COALESCE(owner_id, '') = ? ORDER BY created_at, id`, owner)
	if err != nil {
		return nil, r.wrap("list OAuth clients", err)
	}
	return collect(rows, "list OAuth clients", scanOAuthClient)
}

// UpdateOAuthClient implements storage.OAuthClients.
func (r *repo) UpdateOAuthClient(ctx context.Context, c storage.OAuthClient) error {
	if !c.Public && len(c.SecretHash) == 0 {
		return fmt.Errorf("sqlstore: confidential OAuth client %q without secret: %w", c.ID, storage.ErrInvalid)
	}
	uris, err := redirectJSON(c.RedirectURIs)
	if err != nil {
		return fmt.Errorf("sqlstore: update OAuth client: %w", err)
	}
	return r.execOne(ctx, "update OAuth client", `UPDATE oauth_clients SET secret_hash = ?, name = ?, redirect_uris = ?, public = ?
		WHERE id = ? AND COALESCE(owner_id, '') = ?`,
		dbBytes(c.SecretHash), c.Name, uris, c.Public, c.ID, c.Owner)
}

// DeleteOAuthClient implements storage.OAuthClients.
func (r *repo) DeleteOAuthClient(ctx context.Context, owner, id string) error {
	return r.execOne(ctx, "delete OAuth client", `DELETE FROM oauth_clients WHERE id = ? AND COALESCE(owner_id, '') = ?`, id, owner)
}

const oauthCodeColumns = `hash, client_id, user_id, redirect_uri, challenge, challenge_method, scope, created_at, expires_at, used_at`

func scanOAuthCode(row interface{ Scan(...any) error }) (storage.OAuthCode, error) {
	var (
		c                      storage.OAuthCode
		created, expires, used sql.NullInt64
	)
	if err := row.Scan(&c.Hash, &c.ClientID, &c.User, &c.RedirectURI, &c.Challenge, &c.ChallengeMethod,
		&c.Scope, &created, &expires, &used); err != nil {
		return storage.OAuthCode{}, err
	}
	c.Created, c.Expires, c.Used = goTime(created), goTime(expires), used.Valid
	return c, nil
}

// CreateOAuthCode implements storage.OAuthCodes.
func (r *repo) CreateOAuthCode(ctx context.Context, c *storage.OAuthCode) error {
	if len(c.Hash) == 0 || c.ClientID == "" || c.User == "" || c.Expires.IsZero() {
		return fmt.Errorf("sqlstore: OAuth code without hash, client, user or expiry: %w", storage.ErrInvalid)
	}
	if c.Created.IsZero() {
		c.Created = r.now()
	}
	_, err := r.exec(ctx, `INSERT INTO oauth_codes (`+oauthCodeColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)`,
		c.Hash, c.ClientID, c.User, c.RedirectURI, c.Challenge, c.ChallengeMethod, c.Scope,
		dbTime(c.Created), dbTime(c.Expires))
	return r.wrap("create OAuth code", err)
}

// RedeemOAuthCode implements storage.OAuthCodes. The conditional UPDATE
// is the arbiter: of concurrent redeemers exactly one sees a row change.
func (r *repo) RedeemOAuthCode(ctx context.Context, hash []byte, at time.Time,
	issue func(storage.OAuthCode) (*storage.OAuthToken, error)) (storage.OAuthCode, error) {
	var (
		code   storage.OAuthCode
		result error // returned after the transaction commits: a replay's revocation must stick
	)
	err := r.begin(ctx, func(t *repo) error {
		res, err := t.exec(ctx, `UPDATE oauth_codes SET used_at = ? WHERE hash = ? AND used_at IS NULL AND expires_at > ?`,
			at.UnixMicro(), hash, at.UnixMicro())
		if err != nil {
			return t.wrap("redeem OAuth code", err)
		}
		won, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("sqlstore: redeem OAuth code: %w", err)
		}
		code, err = scanOAuthCode(t.queryRow(ctx, `SELECT `+oauthCodeColumns+` FROM oauth_codes WHERE hash = ?`, hash))
		if err != nil {
			return t.wrap("redeem OAuth code", err)
		}
		if won == 0 {
			if !code.Used {
				result = fmt.Errorf("sqlstore: OAuth code expired at %v: %w", code.Expires, storage.ErrExpired)
				return nil
			}
			if _, err := t.exec(ctx, `UPDATE oauth_tokens SET revoked = TRUE WHERE code_hash = ?`, hash); err != nil {
				return t.wrap("revoke tokens of replayed OAuth code", err)
			}
			result = fmt.Errorf("sqlstore: OAuth code replayed, its tokens revoked: %w", storage.ErrAlreadyUsed)
			return nil
		}
		tok, err := issue(code)
		if err != nil {
			result = err // the code stays burned
			return nil
		}
		if tok == nil {
			return nil
		}
		tok.CodeHash = hash
		return t.CreateOAuthToken(ctx, tok)
	})
	if err != nil {
		return storage.OAuthCode{}, err
	}
	return code, result
}

const oauthTokenColumns = `hash, client_id, user_id, scope, code_hash, created_at, expires_at, revoked`

func scanOAuthToken(row interface{ Scan(...any) error }) (storage.OAuthToken, error) {
	var (
		t                storage.OAuthToken
		created, expires sql.NullInt64
	)
	if err := row.Scan(&t.Hash, &t.ClientID, &t.User, &t.Scope, &t.CodeHash, &created, &expires, &t.Revoked); err != nil {
		return storage.OAuthToken{}, err
	}
	t.Created, t.Expires = goTime(created), goTime(expires)
	return t, nil
}

// CreateOAuthToken implements storage.OAuthTokens.
func (r *repo) CreateOAuthToken(ctx context.Context, t *storage.OAuthToken) error {
	if len(t.Hash) == 0 || t.ClientID == "" || t.User == "" || t.Expires.IsZero() {
		return fmt.Errorf("sqlstore: OAuth token without hash, client, user or expiry: %w", storage.ErrInvalid)
	}
	if t.Created.IsZero() {
		t.Created = r.now()
	}
	_, err := r.exec(ctx, `INSERT INTO oauth_tokens (`+oauthTokenColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		t.Hash, t.ClientID, t.User, t.Scope, dbBytes(t.CodeHash), dbTime(t.Created), dbTime(t.Expires), t.Revoked)
	return r.wrap("create OAuth token", err)
}

// LookupOAuthToken implements storage.OAuthTokens.
func (r *repo) LookupOAuthToken(ctx context.Context, hash []byte, at time.Time) (storage.OAuthToken, error) {
	t, err := scanOAuthToken(r.queryRow(ctx, `SELECT `+oauthTokenColumns+` FROM oauth_tokens WHERE hash = ?`, hash))
	if err != nil {
		return storage.OAuthToken{}, r.wrap("look up OAuth token", err)
	}
	switch {
	case t.Revoked:
		return storage.OAuthToken{}, fmt.Errorf("sqlstore: OAuth token: %w", storage.ErrRevoked)
	case !at.Before(t.Expires):
		return storage.OAuthToken{}, fmt.Errorf("sqlstore: OAuth token expired at %v: %w", t.Expires, storage.ErrExpired)
	}
	return t, nil
}

// RevokeOAuthToken implements storage.OAuthTokens.
func (r *repo) RevokeOAuthToken(ctx context.Context, hash []byte) error {
	return r.execOne(ctx, "revoke OAuth token", `UPDATE oauth_tokens SET revoked = TRUE WHERE hash = ?`, hash)
}

// RevokeOAuthTokens implements storage.OAuthTokens.
func (r *repo) RevokeOAuthTokens(ctx context.Context, user, clientID string) (int, error) {
	res, err := r.exec(ctx, `UPDATE oauth_tokens SET revoked = TRUE WHERE user_id = ? AND client_id = ? AND revoked = FALSE`,
		user, clientID)
	if err != nil {
		return 0, r.wrap("revoke OAuth tokens", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}
