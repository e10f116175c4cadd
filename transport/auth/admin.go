package auth

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
func CreateUser(ctx context.Context, store storage.Users, username, email, password string) (storage.User, error) {
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
	hash, err := storage.HashPassword(password)
	if err != nil {
		return storage.User{}, err
	}
	u := storage.User{Username: username, Email: email, PasswordHash: hash}
	if err := store.CreateUser(ctx, &u); err != nil {
		return storage.User{}, fmt.Errorf("auth: create user %q: %w", username, err)
	}
	return u, nil
}

// SetPassword validates and stores a new password for the user with this
// username. Basic logins cached with the old password stop working at once
// because the cache remembers which stored hash they matched.
func SetPassword(ctx context.Context, store storage.Users, username, password string) error {
	if err := validatePassword(password); err != nil {
		return err
	}
	u, err := store.GetUserByUsername(ctx, username)
	if err != nil {
		return fmt.Errorf("auth: user %q: %w", username, err)
	}
	if u.PasswordHash, err = storage.HashPassword(password); err != nil {
		return err
	}
	return store.UpdateUser(ctx, u)
}

func validateName(what, name string) error {
	if strings.TrimSpace(name) == "" || utf8.RuneCountInString(name) > 200 || !utf8.ValidString(name) {
		return fmt.Errorf("%w: %s name must have 1 to 200 characters", ErrInvalid, what)
	}
	return nil
}

// CreateAPIKey creates a named API key for userID that stops working at
// expires (zero: never). It returns the stored key and the secret, which
// exists nowhere else: show it to the user once.
func CreateAPIKey(ctx context.Context, store storage.APIKeys, userID, name string, expires time.Time) (storage.APIKey, string, error) {
	if err := validateName("key", name); err != nil {
		return storage.APIKey{}, "", err
	}
	secret := storage.NewToken()
	k := storage.APIKey{User: userID, Name: strings.TrimSpace(name), Hash: storage.HashToken(secret), Expires: expires}
	if err := store.CreateAPIKey(ctx, &k); err != nil {
		return storage.APIKey{}, "", fmt.Errorf("auth: create API key: %w", err)
	}
	return k, secret, nil
}

// RegisterClient registers an OAuth client owned by owner ("" for an
// operator's client). A confidential client gets a secret, returned once;
// a public one (desktop or mobile app) gets none and must use PKCE for the
// authorization-code grant. Redirect URIs may be empty: the authorize
// request then names one, which the code is bound to.
func RegisterClient(ctx context.Context, store storage.OAuthClients, owner, name string, redirectURIs []string, public bool) (storage.OAuthClient, string, error) {
	if err := validateName("client", name); err != nil {
		return storage.OAuthClient{}, "", err
	}
	for _, u := range redirectURIs {
		if err := ValidateRedirectURI(u); err != nil {
			return storage.OAuthClient{}, "", err
		}
	}
	c := storage.OAuthClient{Name: strings.TrimSpace(name), RedirectURIs: redirectURIs, Public: public, Owner: owner}
	var secret string
	if !public {
		secret = storage.NewToken()
		c.SecretHash = storage.HashToken(secret)
	}
	if c.RedirectURIs == nil {
		c.RedirectURIs = []string{}
	}
	if err := store.CreateOAuthClient(ctx, &c); err != nil {
		return storage.OAuthClient{}, "", fmt.Errorf("auth: register client: %w", err)
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
