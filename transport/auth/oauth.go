package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/audiopost/audiopost/production/app"
	"github.com/audiopost/audiopost/storage"
)

// Routes registers the OAuth 2.0 endpoints {prefix}/oauth2/authorize/ and
// {prefix}/oauth2/token/ (also without the trailing slash, so that a POST
// is never redirected) and the account pages under {prefix}/account/.
// prefix is the path of BaseURL, "" when the service is at the root.
//
// Every pattern names its method: a method-less pattern would conflict
// (and make ServeMux panic) with a catch-all such as "GET /" that the
// embedding handler may register on the same mux.
func (s *Server) Routes(mux *http.ServeMux, prefix string) {
	prefix = strings.TrimSuffix(prefix, "/")
	for _, p := range []string{"/oauth2/authorize/{$}", "/oauth2/authorize"} {
		mux.HandleFunc("GET "+prefix+p, s.handleAuthorize)
		mux.HandleFunc("POST "+prefix+p, s.handleAuthorize)
	}
	for _, p := range []string{"/oauth2/token/{$}", "/oauth2/token"} {
		// GET only to answer it with the RFC's JSON error (405).
		mux.HandleFunc("GET "+prefix+p, s.handleToken)
		mux.HandleFunc("POST "+prefix+p, s.handleToken)
	}
	account := http.StripPrefix(prefix+"/account", http.HandlerFunc(s.handleAccount))
	mux.Handle("GET "+prefix+"/account/", account)
	mux.Handle("POST "+prefix+"/account/", account)
}

// authzRequest is a validated authorization request.
type authzRequest struct {
	client      storage.OAuthClient
	redirectURI string // the effective one: given, or the only registered one
	state       string
	challenge   string
	method      string
}

// authzError is a failed authorization request. Errors found before the
// client and redirect URI are trusted are shown to the user; the others go
// back to the client's redirect URI (RFC 6749 section 4.1.2.1).
type authzError struct {
	redirect bool
	code     string
	desc     string
}

var authzParams = []string{"client_id", "redirect_uri", "response_type", "state", "code_challenge", "code_challenge_method", "scope"}

func (s *Server) parseAuthorize(ctx context.Context, v url.Values) (authzRequest, *authzError) {
	var q authzRequest
	for _, p := range []string{"client_id", "redirect_uri"} {
		if len(v[p]) > 1 {
			return q, &authzError{code: "invalid_request", desc: p + " is repeated"}
		}
	}
	id := v.Get("client_id")
	if id == "" {
		return q, &authzError{code: "invalid_request", desc: "client_id is missing"}
	}
	c, err := s.store.GetOAuthClient(ctx, id)
	if errors.Is(err, storage.ErrNotFound) {
		return q, &authzError{code: "invalid_client", desc: "unknown client_id"}
	}
	if err != nil {
		s.log.ErrorContext(ctx, "auth: authorize: get client", "err", err)
		return q, &authzError{code: "server_error", desc: "the service cannot look up the client now"}
	}
	q.client = c
	given := v.Get("redirect_uri")
	switch {
	case len(c.RedirectURIs) == 0:
		if given == "" {
			return q, &authzError{code: "invalid_request", desc: "redirect_uri is missing and the client registered none"}
		}
		if err := app.ValidateRedirectURI(given); err != nil {
			return q, &authzError{code: "invalid_request", desc: "redirect_uri is not acceptable: " + err.Error()}
		}
		q.redirectURI = given
	case given == "":
		if len(c.RedirectURIs) > 1 {
			return q, &authzError{code: "invalid_request", desc: "redirect_uri is missing and the client registered several"}
		}
		q.redirectURI = c.RedirectURIs[0]
	default:
		// Exact string comparison: RFC 6749 section 3.1.2.3 and the
		// security BCP forbid normalizing case, ports, slashes or queries.
		if !slices.Contains(c.RedirectURIs, given) {
			return q, &authzError{code: "invalid_request", desc: "redirect_uri does not match a registered one"}
		}
		q.redirectURI = given
	}
	for _, p := range authzParams {
		if len(v[p]) > 1 {
			return q, &authzError{redirect: true, code: "invalid_request", desc: p + " is repeated"}
		}
	}
	q.state = v.Get("state")
	if rt := v.Get("response_type"); rt != "code" {
		return q, &authzError{redirect: true, code: "unsupported_response_type", desc: "response_type must be code"}
	}
	q.challenge, q.method = v.Get("code_challenge"), v.Get("code_challenge_method")
	switch {
	case q.challenge == "" && q.method != "":
		return q, &authzError{redirect: true, code: "invalid_request", desc: "code_challenge_method without code_challenge"}
	case q.challenge == "" && c.Public:
		return q, &authzError{redirect: true, code: "invalid_request", desc: "public clients must send a PKCE code_challenge (S256)"}
	case q.challenge != "" && q.method != "S256":
		// "plain" offers no protection when the authorization request leaks,
		// which is what PKCE is for.
		return q, &authzError{redirect: true, code: "invalid_request", desc: "code_challenge_method must be S256"}
	case q.challenge != "" && (len(q.challenge) != 43 || !pkceChars(q.challenge)):
		return q, &authzError{redirect: true, code: "invalid_request", desc: "code_challenge is not a base64url SHA-256"}
	}
	return q, nil
}

// pkceChars reports whether s has only the characters RFC 7636 allows in
// verifiers and challenges.
func pkceChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~') {
			return false
		}
	}
	return true
}

// redirectTo adds params to the redirect URI, keeping its own query.
func redirectTo(w http.ResponseWriter, r *http.Request, redirectURI string, params url.Values) {
	sep := "?"
	if strings.Contains(redirectURI, "?") {
		sep = "&"
	}
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, redirectURI+sep+params.Encode(), http.StatusFound)
}

func (s *Server) authzFail(w http.ResponseWriter, r *http.Request, q authzRequest, e *authzError) {
	if !e.redirect {
		status := http.StatusBadRequest
		if e.code == "server_error" {
			status = http.StatusInternalServerError
		}
		s.renderPage(w, r, status, "error", pageData{Title: "Authorization failed", Error: e.desc})
		return
	}
	p := url.Values{"error": {e.code}, "error_description": {e.desc}}
	if q.state != "" {
		p.Set("state", q.state)
	}
	redirectTo(w, r, q.redirectURI, p)
}

// handleAuthorize serves the authorization endpoint: GET shows the consent
// page (after the login page when there is no session), POST records the
// user's decision and sends the browser back to the client.
func (s *Server) handleAuthorize(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		q, e := s.parseAuthorize(r.Context(), r.URL.Query())
		if e != nil {
			s.authzFail(w, r, q, e)
			return
		}
		ses, u, ok := s.browserSession(r)
		if !ok {
			http.Redirect(w, r, s.LoginURL(s.prefix+"/oauth2/authorize/?"+r.URL.RawQuery), http.StatusSeeOther)
			return
		}
		hidden := []hiddenField{
			{"client_id", q.client.ID}, {"redirect_uri", q.redirectURI}, {"response_type", "code"},
			{"state", q.state}, {"code_challenge", q.challenge}, {"code_challenge_method", q.method},
		}
		s.renderPage(w, r, http.StatusOK, "consent", pageData{
			Title: "Authorize " + q.client.Name, User: u.Username, CSRF: ses.csrf,
			Client: q.client.Name, RedirectURI: q.redirectURI, Hidden: hidden,
			Action: s.prefix + "/oauth2/authorize/",
		})
	case http.MethodPost:
		r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
		if err := r.ParseForm(); err != nil {
			s.renderPage(w, r, http.StatusBadRequest, "error", pageData{Title: "Authorization failed", Error: "the form does not parse"})
			return
		}
		ses, u, ok := s.browserSession(r)
		if !ok {
			s.renderPage(w, r, http.StatusForbidden, "error", pageData{Title: "Authorization failed", Error: "your session ended: log in and authorize again"})
			return
		}
		if !checkCSRF(r.PostForm.Get("csrf_token"), ses.csrf) {
			s.renderPage(w, r, http.StatusForbidden, "error", pageData{Title: "Authorization failed", Error: "the form expired or came from another site (CSRF token mismatch)"})
			return
		}
		q, e := s.parseAuthorize(r.Context(), r.PostForm)
		if e != nil {
			s.authzFail(w, r, q, e)
			return
		}
		if r.PostForm.Get("decision") != "approve" {
			s.authzFail(w, r, q, &authzError{redirect: true, code: "access_denied", desc: "the user denied access"})
			return
		}
		code := storage.NewToken()
		now := s.now()
		err := s.store.CreateOAuthCode(r.Context(), &storage.OAuthCode{
			Hash: storage.HashToken(code), ClientID: q.client.ID, User: u.ID, RedirectURI: q.redirectURI,
			Challenge: q.challenge, ChallengeMethod: q.method, Created: now, Expires: now.Add(s.cfg.CodeTTL),
		})
		if err != nil {
			s.log.ErrorContext(r.Context(), "auth: authorize: create code", "err", err)
			s.authzFail(w, r, q, &authzError{redirect: true, code: "server_error", desc: "the service cannot issue a code now"})
			return
		}
		p := url.Values{"code": {code}}
		if q.state != "" {
			p.Set("state", q.state)
		}
		redirectTo(w, r, q.redirectURI, p)
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

// tokenError is an RFC 6749 section 5.2 error response.
type tokenError struct {
	status int
	code   string
	desc   string
}

func (e *tokenError) Error() string { return e.code + ": " + e.desc }

func invalidGrant(desc string) *tokenError {
	return &tokenError{http.StatusBadRequest, "invalid_grant", desc}
}

// TokenResponse is the token endpoint's success body.
type TokenResponse struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"` // always "bearer"
	ExpiresIn   int64  `json:"expires_in"` // seconds
	UserName    string `json:"user_name"`
	Scope       string `json:"scope"` // always ""
}

func writeTokenJSON(w http.ResponseWriter, status int, v any) {
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Pragma", "no-cache")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// handleToken serves the token endpoint for the authorization_code and
// password grants. Bodies may be form-urlencoded or multipart (the spec
// uses multipart); parameters in the URL are ignored, since secrets there
// end up in logs.
func (s *Server) handleToken(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		writeTokenJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "invalid_request", "error_description": "use POST"})
		return
	}
	resp, terr := s.token(w, r)
	if terr != nil {
		if terr.status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Basic realm="audiopost oauth2", charset="UTF-8"`)
		}
		writeTokenJSON(w, terr.status, map[string]string{"error": terr.code, "error_description": terr.desc})
		return
	}
	writeTokenJSON(w, http.StatusOK, resp)
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) (*TokenResponse, *tokenError) {
	const maxBody = 64 << 10
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	var err error
	switch mt {
	case "multipart/form-data":
		err = r.ParseMultipartForm(maxBody)
		if err == nil && r.MultipartForm != nil && len(r.MultipartForm.File) > 0 {
			r.MultipartForm.RemoveAll()
			return nil, &tokenError{http.StatusBadRequest, "invalid_request", "the token request carries no files"}
		}
	case "application/x-www-form-urlencoded", "":
		err = r.ParseForm()
	default:
		return nil, &tokenError{http.StatusBadRequest, "invalid_request", "send the parameters as application/x-www-form-urlencoded or multipart/form-data"}
	}
	if err != nil {
		return nil, &tokenError{http.StatusBadRequest, "invalid_request", "the body does not parse as a form"}
	}
	form := r.PostForm
	for k, v := range form {
		if len(v) > 1 {
			return nil, &tokenError{http.StatusBadRequest, "invalid_request", k + " is repeated"}
		}
	}
	client, terr := s.authenticateClient(r.Context(), r, form)
	if terr != nil {
		return nil, terr
	}
	switch form.Get("grant_type") {
	case "authorization_code":
		return s.codeGrant(r.Context(), client, form)
	case "password":
		return s.passwordGrant(r.Context(), client, form, clientIP(r))
	case "":
		return nil, &tokenError{http.StatusBadRequest, "invalid_request", "grant_type is missing"}
	default:
		return nil, &tokenError{http.StatusBadRequest, "unsupported_grant_type", "grant_type must be authorization_code or password"}
	}
}

// authenticateClient checks the client credentials, from HTTP Basic (form
// encoded, RFC 6749 section 2.3.1) or from the body, never both. A public
// client identifies itself without a secret.
func (s *Server) authenticateClient(ctx context.Context, r *http.Request, form url.Values) (storage.OAuthClient, *tokenError) {
	bad := &tokenError{http.StatusUnauthorized, "invalid_client", "unknown client or wrong client secret"}
	id, secret, basic := r.BasicAuth()
	if basic {
		var err1, err2 error
		id, err1 = url.QueryUnescape(id)
		secret, err2 = url.QueryUnescape(secret)
		if err1 != nil || err2 != nil {
			return storage.OAuthClient{}, bad
		}
		if form.Get("client_secret") != "" {
			return storage.OAuthClient{}, &tokenError{http.StatusBadRequest, "invalid_request", "client credentials sent both in the header and in the body"}
		}
		if b := form.Get("client_id"); b != "" && b != id {
			return storage.OAuthClient{}, &tokenError{http.StatusBadRequest, "invalid_request", "client_id in the body differs from the Authorization header"}
		}
	} else {
		id, secret = form.Get("client_id"), form.Get("client_secret")
	}
	if id == "" || len(id) > maxSecretLen || len(secret) > maxSecretLen {
		return storage.OAuthClient{}, bad
	}
	c, err := s.store.GetOAuthClient(ctx, id)
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return storage.OAuthClient{}, bad
		}
		s.log.ErrorContext(ctx, "auth: token: get client", "err", err)
		return storage.OAuthClient{}, &tokenError{http.StatusInternalServerError, "server_error", "the service cannot look up the client now"}
	}
	if c.Public {
		if secret != "" {
			return storage.OAuthClient{}, bad
		}
		return c, nil
	}
	if secret == "" || !storage.EqualHash(storage.HashToken(secret), c.SecretHash) {
		return storage.OAuthClient{}, bad
	}
	return c, nil
}

func (s *Server) codeGrant(ctx context.Context, client storage.OAuthClient, form url.Values) (*TokenResponse, *tokenError) {
	code, redirectURI, verifier := form.Get("code"), form.Get("redirect_uri"), form.Get("code_verifier")
	if code == "" || len(code) > maxSecretLen {
		return nil, &tokenError{http.StatusBadRequest, "invalid_request", "code is missing"}
	}
	if redirectURI == "" {
		return nil, &tokenError{http.StatusBadRequest, "invalid_request", "redirect_uri is missing"}
	}
	now := s.now()
	secret := storage.NewToken()
	grant, err := s.store.RedeemOAuthCode(ctx, storage.HashToken(code), now, func(c storage.OAuthCode) (*storage.OAuthToken, error) {
		if c.ClientID != client.ID {
			return nil, invalidGrant("the code was issued to another client")
		}
		if redirectURI != c.RedirectURI {
			return nil, invalidGrant("redirect_uri differs from the authorization request")
		}
		switch {
		case c.Challenge == "" && verifier != "":
			return nil, invalidGrant("code_verifier sent, but the authorization request had no code_challenge")
		case c.Challenge != "":
			if len(verifier) < 43 || len(verifier) > 128 || !pkceChars(verifier) {
				return nil, invalidGrant("code_verifier is missing or malformed")
			}
			sum := sha256.Sum256([]byte(verifier))
			got := base64.RawURLEncoding.EncodeToString(sum[:])
			if c.ChallengeMethod != "S256" || subtle.ConstantTimeCompare([]byte(got), []byte(c.Challenge)) != 1 {
				return nil, invalidGrant("code_verifier does not match the code_challenge")
			}
		}
		return &storage.OAuthToken{Hash: storage.HashToken(secret), ClientID: client.ID, User: c.User,
			Created: now, Expires: now.Add(s.cfg.TokenTTL)}, nil
	})
	var te *tokenError
	switch {
	case errors.As(err, &te):
		return nil, te
	case errors.Is(err, storage.ErrAlreadyUsed):
		return nil, invalidGrant("the code was already used; the tokens issued from it are revoked")
	case errors.Is(err, storage.ErrExpired):
		return nil, invalidGrant("the code expired")
	case errors.Is(err, storage.ErrNotFound):
		return nil, invalidGrant("unknown code")
	case err != nil:
		s.log.ErrorContext(ctx, "auth: token: redeem code", "err", err)
		return nil, &tokenError{http.StatusInternalServerError, "server_error", "the service cannot redeem the code now"}
	}
	return s.tokenResponse(ctx, secret, grant.User)
}

func (s *Server) passwordGrant(ctx context.Context, client storage.OAuthClient, form url.Values, ip string) (*TokenResponse, *tokenError) {
	username, password := form.Get("username"), form.Get("password")
	if username == "" || password == "" {
		return nil, &tokenError{http.StatusBadRequest, "invalid_request", "username and password are required"}
	}
	u, err := s.PasswordUser(ctx, username, password, ip)
	var re *RetryError
	switch {
	case errors.As(err, &re):
		return nil, &tokenError{http.StatusTooManyRequests, "temporarily_unavailable", re.Error()}
	case errors.Is(err, ErrBadCredentials):
		return nil, invalidGrant("wrong username or password")
	case err != nil:
		s.log.ErrorContext(ctx, "auth: token: password grant", "err", err)
		return nil, &tokenError{http.StatusInternalServerError, "server_error", "the service cannot check the password now"}
	}
	now := s.now()
	secret := storage.NewToken()
	t := storage.OAuthToken{Hash: storage.HashToken(secret), ClientID: client.ID, User: u.ID, Created: now, Expires: now.Add(s.cfg.TokenTTL)}
	if err := s.store.CreateOAuthToken(ctx, &t); err != nil {
		s.log.ErrorContext(ctx, "auth: token: create token", "err", err)
		return nil, &tokenError{http.StatusInternalServerError, "server_error", "the service cannot issue a token now"}
	}
	return &TokenResponse{AccessToken: secret, TokenType: "bearer", ExpiresIn: int64(s.cfg.TokenTTL.Seconds()), UserName: u.Username}, nil
}

func (s *Server) tokenResponse(ctx context.Context, secret, userID string) (*TokenResponse, *tokenError) {
	u, err := s.store.GetUser(ctx, userID)
	if err != nil {
		s.log.ErrorContext(ctx, "auth: token: get user", "err", err)
		return nil, &tokenError{http.StatusInternalServerError, "server_error", "the service cannot look up the user now"}
	}
	return &TokenResponse{AccessToken: secret, TokenType: "bearer", ExpiresIn: int64(s.cfg.TokenTTL.Seconds()), UserName: u.Username}, nil
}
