package app

import (
	"context"
	"fmt"
	"net/mail"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/audiopost/audiopost/storage"
)

// Accounts: users, their credits, API keys and OAuth clients. Creating a
// user, setting a password and granting credits are the operator's
// (serve's first start, the user command); keys and clients are the
// user's own (the account pages, the key command).

// ErrInvalid: a username, email, password, key name, client name or
// redirect URI is not acceptable. It wraps storage.ErrInvalid.
var ErrInvalid = fmt.Errorf("app: invalid value: %w", storage.ErrInvalid)

// MinPasswordLen is the shortest password CreateUser and SetPassword accept.
const MinPasswordLen = 8

// ValidateUsername checks a username: 1 to 150 characters of letters,
// digits and . _ + -. "@" is excluded so that a login containing "@" is
// unambiguously an email address.
func ValidateUsername(username string) error {
	if username == "" || len(username) > 150 {
		return fmt.Errorf("%w: username must have 1 to 150 characters", ErrInvalid)
	}
	for _, c := range username {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '.' || c == '_' || c == '+' || c == '-'
		if !ok {
			return fmt.Errorf("%w: username %q may only contain letters, digits and . _ + -", ErrInvalid, username)
		}
	}
	return nil
}

func validatePassword(password string) error {
	if utf8.RuneCountInString(password) < MinPasswordLen {
		return fmt.Errorf("%w: password must have at least %d characters", ErrInvalid, MinPasswordLen)
	}
	if len(password) > 1024 {
		return fmt.Errorf("%w: password longer than 1024 bytes", ErrInvalid)
	}
	return nil
}

// CreateUser validates and stores a new account with a hashed password.
// email may be empty. A taken username or email is storage.ErrConflict.
func (a *App) CreateUser(ctx context.Context, username, email, password string) (storage.User, error) {
	if err := ValidateUsername(username); err != nil {
		return storage.User{}, err
	}
	if email != "" {
		a, err := mail.ParseAddress(email)
		if err != nil || a.Address != email || a.Name != "" {
			return storage.User{}, fmt.Errorf("%w: %q is not an email address", ErrInvalid, email)
		}
	}
	if err := validatePassword(password); err != nil {
		return storage.User{}, err
	}
	hash, err := storage.HashPasswordIterations(password, a.hashIter)
	if err != nil {
		return storage.User{}, err
	}
	u := storage.User{Username: username, Email: email, PasswordHash: hash}
	if err := a.store.CreateUser(ctx, &u); err != nil {
		return storage.User{}, fmt.Errorf("create user %q: %w", username, err)
	}
	return u, nil
}

// SetPassword validates and stores a new password for the user with this
// username. Basic logins cached with the old password stop working at once
// because the cache remembers which stored hash they matched.
func (a *App) SetPassword(ctx context.Context, username, password string) error {
	if err := validatePassword(password); err != nil {
		return err
	}
	u, err := a.UserByName(ctx, username)
	if err != nil {
		return err
	}
	if u.PasswordHash, err = storage.HashPasswordIterations(password, a.hashIter); err != nil {
		return err
	}
	return a.store.UpdateUser(ctx, u)
}

func validateName(what, name string) error {
	if strings.TrimSpace(name) == "" || utf8.RuneCountInString(name) > 200 || !utf8.ValidString(name) {
		return fmt.Errorf("%w: %s name must have 1 to 200 characters", ErrInvalid, what)
	}
	return nil
}

// CreateAPIKey creates a named API key of u that stops working at expires
// (zero: never). It returns the stored key and the secret, which exists
// nowhere else: show it to the user once.
func (a *App) CreateAPIKey(ctx context.Context, u storage.User, name string, expires time.Time) (storage.APIKey, string, error) {
	if err := validateName("key", name); err != nil {
		return storage.APIKey{}, "", err
	}
	secret := storage.NewToken()
	k := storage.APIKey{User: u.ID, Name: strings.TrimSpace(name), Hash: storage.HashToken(secret), Expires: expires}
	if err := a.store.CreateAPIKey(ctx, &k); err != nil {
		return storage.APIKey{}, "", fmt.Errorf("create API key: %w", err)
	}
	return k, secret, nil
}

// RegisterClient registers an OAuth client owned by u (the zero User for
// an operator's client). A confidential client gets a secret, returned
// once; a public one (desktop or mobile app) gets none and must use PKCE
// for the authorization-code grant. Redirect URIs may be empty: the
// authorize request then names one, which the code is bound to.
func (a *App) RegisterClient(ctx context.Context, u storage.User, name string, redirectURIs []string, public bool) (storage.OAuthClient, string, error) {
	if err := validateName("client", name); err != nil {
		return storage.OAuthClient{}, "", err
	}
	for _, u := range redirectURIs {
		if err := ValidateRedirectURI(u); err != nil {
			return storage.OAuthClient{}, "", err
		}
	}
	c := storage.OAuthClient{Name: strings.TrimSpace(name), RedirectURIs: redirectURIs, Public: public, Owner: u.ID}
	var secret string
	if !public {
		secret = storage.NewToken()
		c.SecretHash = storage.HashToken(secret)
	}
	if c.RedirectURIs == nil {
		c.RedirectURIs = []string{}
	}
	if err := a.store.CreateOAuthClient(ctx, &c); err != nil {
		return storage.OAuthClient{}, "", fmt.Errorf("register client: %w", err)
	}
	return c, secret, nil
}

// ValidateRedirectURI accepts absolute URIs without a fragment (RFC 6749
// section 3.1.2): http(s) URLs with a host, or a native app's private-use
// scheme (RFC 8252, e.g. "com.example.app:/cb"). Schemes that run code or
// read files in a browser are refused.
func ValidateRedirectURI(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || len(raw) > 2000 {
		return fmt.Errorf("%w: redirect URI %q does not parse", ErrInvalid, raw)
	}
	switch {
	case u.Scheme == "":
		return fmt.Errorf("%w: redirect URI %q is not absolute", ErrInvalid, raw)
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return fmt.Errorf("%w: redirect URI %q has a fragment", ErrInvalid, raw)
	case u.Scheme == "http" || u.Scheme == "https":
		if u.Host == "" {
			return fmt.Errorf("%w: redirect URI %q has no host", ErrInvalid, raw)
		}
	case u.Scheme == "javascript" || u.Scheme == "data" || u.Scheme == "vbscript" || u.Scheme == "file" || u.Scheme == "blob":
		return fmt.Errorf("%w: redirect URI scheme %q is not allowed", ErrInvalid, u.Scheme)
	}
	return nil
}

// UserByName returns the user called username.
func (a *App) UserByName(ctx context.Context, username string) (storage.User, error) {
	u, err := a.store.GetUserByUsername(ctx, username)
	if err != nil {
		return storage.User{}, fmt.Errorf("user %q: %w", username, err)
	}
	return u, nil
}

// CurrentUser reads u again, so its balances are current.
func (a *App) CurrentUser(ctx context.Context, u storage.User) (storage.User, error) {
	return a.store.GetUser(ctx, u.ID)
}

// ListUsers lists the users by username.
func (a *App) ListUsers(ctx context.Context, limit, offset int) ([]storage.User, error) {
	return a.store.ListUsers(ctx, limit, offset)
}

// AddCredits grants u processing time, one-time or recurring (negative
// durations take away, never below zero), and returns the balances.
func (a *App) AddCredits(ctx context.Context, u storage.User, onetime, recurring time.Duration) (storage.User, error) {
	return a.store.AddCredits(ctx, u.ID, onetime, recurring)
}

// ListAPIKeys lists u's API keys, revoked ones too, newest first.
func (a *App) ListAPIKeys(ctx context.Context, u storage.User) ([]storage.APIKey, error) {
	return a.store.ListAPIKeys(ctx, u.ID)
}

// RevokeAPIKey revokes u's API key id; another user's key is
// storage.ErrNotFound.
func (a *App) RevokeAPIKey(ctx context.Context, u storage.User, id string) error {
	return a.store.RevokeAPIKey(ctx, u.ID, id)
}

// ListClients lists the OAuth clients u registered.
func (a *App) ListClients(ctx context.Context, u storage.User) ([]storage.OAuthClient, error) {
	return a.store.ListOAuthClients(ctx, u.ID)
}

// DeleteClient removes u's OAuth client id with its codes and tokens.
func (a *App) DeleteClient(ctx context.Context, u storage.User, id string) error {
	return a.store.DeleteOAuthClient(ctx, u.ID, id)
}

// LogOutEverywhere ends every browser session of u and revokes its OAuth
// access tokens (storage.Sessions.EndSessions); its API keys stay, as
// credentials u revokes one by one.
func (a *App) LogOutEverywhere(ctx context.Context, u storage.User) error {
	_, err := a.store.EndSessions(ctx, u.ID)
	return err
}
