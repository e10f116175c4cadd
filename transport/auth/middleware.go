package auth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/audiopost/audiopost/storage"
)

// Errors of Authenticate.
var (
	// ErrNoCredentials: the request carries no credentials at all.
	ErrNoCredentials = errors.New("auth: no credentials")
	// ErrBadCredentials: unknown, revoked or expired key or token, or a
	// wrong username or password.
	ErrBadCredentials = errors.New("auth: invalid credentials")
	// ErrTooManyAttempts: too many failed password logins for this username
	// or client address; the error is a *RetryError saying when to retry.
	ErrTooManyAttempts = errors.New("auth: too many failed logins")
)

// RetryError is ErrTooManyAttempts with the time to wait.
type RetryError struct{ After time.Duration }

func (e *RetryError) Error() string {
	return fmt.Sprintf("auth: too many failed logins, retry in %v", e.After.Round(time.Second))
}

// Is makes errors.Is(err, ErrTooManyAttempts) true.
func (e *RetryError) Is(target error) bool { return target == ErrTooManyAttempts }

// maxSecretLen bounds what is hashed and looked up; real secrets are 43
// characters.
const maxSecretLen = 512

// dummyHash returns the hash checked when a login names no user, so that
// an unknown username takes as long as a wrong password and does not
// reveal which usernames exist: at the iteration count the accounts hash
// new passwords with. Its random salt and key match no password.
func dummyHash(iterations int) string {
	var salt [16]byte
	var key [32]byte
	rand.Read(salt[:])
	rand.Read(key[:])
	return "pbkdf2-sha256$" + strconv.Itoa(iterations) + "$" +
		base64.RawStdEncoding.EncodeToString(salt[:]) + "$" + base64.RawStdEncoding.EncodeToString(key[:])
}

// Middleware authenticates every request before next. It accepts
// "Authorization: Bearer <API key or access token>" (scheme in any case),
// the bearer_token query parameter, and HTTP Basic with username (or email)
// and password. next finds the user with UserFrom. A request without valid
// credentials gets Config.WriteError with 401 "unauthorized" and a
// WWW-Authenticate challenge; too many failed passwords get 429
// "too_many_requests" with Retry-After.
func (s *Server) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, err := s.Authenticate(r)
		if err != nil {
			s.writeAuthError(w, r, err)
			return
		}
		authenticated(r.Context())
		next.ServeHTTP(w, r.WithContext(WithUser(r.Context(), u)))
	})
}

func (s *Server) writeAuthError(w http.ResponseWriter, r *http.Request, err error) {
	var re *RetryError
	switch {
	case errors.As(err, &re):
		w.Header().Set("Retry-After", strconv.Itoa(int(re.After.Seconds())+1))
		s.cfg.WriteError(w, r, http.StatusTooManyRequests, "too_many_requests", re.Error())
	case errors.Is(err, ErrNoCredentials):
		w.Header().Add("WWW-Authenticate", `Bearer realm="audiopost"`)
		w.Header().Add("WWW-Authenticate", `Basic realm="audiopost", charset="UTF-8"`)
		s.cfg.WriteError(w, r, http.StatusUnauthorized, "unauthorized",
			"authentication required: send an API key or access token as Bearer token, or HTTP Basic credentials")
	case errors.Is(err, ErrBadCredentials):
		w.Header().Add("WWW-Authenticate", `Bearer realm="audiopost", error="invalid_token"`)
		w.Header().Add("WWW-Authenticate", `Basic realm="audiopost", charset="UTF-8"`)
		s.cfg.WriteError(w, r, http.StatusUnauthorized, "unauthorized",
			"invalid credentials: unknown, revoked or expired key or token, or wrong username or password")
	default:
		s.log.ErrorContext(r.Context(), "auth: authenticate", "err", err)
		s.cfg.WriteError(w, r, http.StatusInternalServerError, "internal_error", "authentication is unavailable")
	}
}

// Authenticate returns the user the request's credentials belong to,
// without writing a response: ErrNoCredentials, ErrBadCredentials,
// ErrTooManyAttempts, or a store failure.
func (s *Server) Authenticate(r *http.Request) (storage.User, error) {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, rest, _ := strings.Cut(h, " ")
		rest = strings.TrimSpace(rest)
		switch {
		case strings.EqualFold(scheme, "Bearer"):
			return s.bearerUser(r.Context(), rest)
		case strings.EqualFold(scheme, "Basic"):
			login, password, ok := r.BasicAuth()
			if !ok {
				return storage.User{}, ErrBadCredentials
			}
			return s.PasswordUser(r.Context(), login, password, clientIP(r))
		default:
			return storage.User{}, ErrBadCredentials
		}
	}
	if tok := r.URL.Query().Get("bearer_token"); tok != "" {
		return s.bearerUser(r.Context(), tok)
	}
	return storage.User{}, ErrNoCredentials
}

// bearerUser resolves an API key or an OAuth access token. Both are
// NewToken secrets looked up by hash, so one lookup of each kind tells them
// apart without a prefix.
func (s *Server) bearerUser(ctx context.Context, tok string) (storage.User, error) {
	if tok == "" || len(tok) > maxSecretLen {
		return storage.User{}, ErrBadCredentials
	}
	h := storage.HashToken(tok)
	now := s.now()
	k, err := s.store.LookupAPIKey(ctx, h, now)
	switch {
	case err == nil:
		return s.userByID(ctx, k.User)
	case !errors.Is(err, storage.ErrNotFound):
		return storage.User{}, credErr(err)
	}
	t, err := s.store.LookupOAuthToken(ctx, h, now)
	if err != nil {
		return storage.User{}, credErr(err)
	}
	return s.userByID(ctx, t.User)
}

func (s *Server) userByID(ctx context.Context, id string) (storage.User, error) {
	u, err := s.store.GetUser(ctx, id)
	if err != nil {
		return storage.User{}, credErr(err)
	}
	return u, nil
}

// credErr turns "no such valid credential" into ErrBadCredentials and
// passes store failures through.
func credErr(err error) error {
	if isAuthFailure(err) {
		return fmt.Errorf("%w: %w", ErrBadCredentials, err)
	}
	return err
}

// PasswordUser checks a username (or email, when login contains "@") and
// password, as HTTP Basic, the login form and the password grant do. ip
// is the client address for throttling ("" to throttle by user only);
// see Throttle. A throttled attempt is a *RetryError and the password is
// not checked.
func (s *Server) PasswordUser(ctx context.Context, login, password, ip string) (storage.User, error) {
	if login == "" || len(login) > maxSecretLen || len(password) > 4096 {
		return storage.User{}, ErrBadCredentials
	}
	now := s.now()
	ck := s.basic.id(login, password)
	if e, ok := s.basic.get(ck, now); ok {
		u, err := s.store.GetUser(ctx, e.userID)
		if err == nil && subtle.ConstantTimeCompare([]byte(u.PasswordHash), []byte(e.pwHash)) == 1 {
			return u, nil
		}
		if err != nil && !isAuthFailure(err) {
			return storage.User{}, err
		}
		s.basic.forget(ck) // password changed or user gone: check afresh
	}
	var (
		u   storage.User
		err error
	)
	if strings.Contains(login, "@") {
		u, err = s.store.GetUserByEmail(ctx, login)
	} else {
		u, err = s.store.GetUserByUsername(ctx, login)
	}
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return storage.User{}, err
	}
	subject := "n:" + strings.ToLower(login)
	if err == nil {
		subject = "u:" + u.ID
	}
	keys := newThrottleKeys(subject, ip)
	wait, terr := s.throttleWait(ctx, keys, now)
	if terr != nil {
		return storage.User{}, terr
	}
	if wait > 0 {
		s.throttleRefused(ctx, keys, login, ip, wait, now)
		return storage.User{}, &RetryError{After: wait}
	}
	hash := u.PasswordHash
	if err != nil || hash == "" {
		hash = s.dummyHash
	}
	if !storage.CheckPassword(hash, password) || err != nil || u.PasswordHash == "" {
		if terr := s.throttleFailed(ctx, keys, ip, now); terr != nil {
			return storage.User{}, terr
		}
		return storage.User{}, ErrBadCredentials
	}
	if terr := s.throttleSucceeded(ctx, keys, now); terr != nil {
		return storage.User{}, terr
	}
	s.basic.put(ck, u.ID, u.PasswordHash, now)
	return u, nil
}

// clientIP is the peer address. X-Forwarded-For is not trusted: behind a
// proxy all clients share the proxy's bucket, which errs on the safe side.
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
