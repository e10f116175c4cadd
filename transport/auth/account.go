package auth

import (
	"bytes"
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/audiopost/audiopost/production/app"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/transport/internal/webstyle"
)

// Cookie names. The session cookie holds a random token whose hash keys the
// stored session; the login cookie is the double-submit CSRF token of
// the login form, which has no session yet.
const (
	SessionCookie    = "audiopost_session"
	loginCSRFCookie  = "audiopost_login_csrf"
	maxAccountBody   = 64 << 10
	keyDateLayout    = "2006-01-02"
	pageTimeLayout   = "2006-01-02 15:04 UTC"
	maxRedirectLines = 20
)

// LoginURL returns the URL of the login page that continues to next (a
// path on this service, e.g. "/account/"; anything else continues to the
// account page).
func (s *Server) LoginURL(next string) string {
	return s.url("/account/login/") + "?" + url.Values{"next": {next}}.Encode()
}

// BrowserUser returns the user of the request's browser session, for web
// pages. API routes use Middleware instead.
func (s *Server) BrowserUser(r *http.Request) (storage.User, bool) {
	_, u, ok := s.browserSession(r)
	return u, ok
}

// session is a browser session of the request.
type session struct {
	hash []byte
	csrf string
}

func (s *Server) browserSession(r *http.Request) (session, storage.User, bool) {
	c, err := r.Cookie(SessionCookie)
	if err != nil || c.Value == "" || len(c.Value) > maxSecretLen {
		return session{}, storage.User{}, false
	}
	ctx := r.Context()
	ses, err := s.store.LookupSession(ctx, storage.HashToken(c.Value), s.now())
	if err != nil {
		if !isAuthFailure(err) {
			s.log.ErrorContext(ctx, "auth: session", "err", err)
		}
		return session{}, storage.User{}, false
	}
	u, err := s.store.GetUser(ctx, ses.User)
	if err != nil {
		if !errors.Is(err, storage.ErrNotFound) {
			s.log.ErrorContext(ctx, "auth: session user", "err", err)
		}
		return session{}, storage.User{}, false
	}
	if u.CredentialVersion != ses.CredentialVersion {
		return session{}, storage.User{}, false // changed since the lookup
	}
	authenticated(ctx)
	return session{hash: ses.Hash, csrf: ses.CSRF}, u, true
}

// newSession stores a session of u and returns the cookie's token.
func (s *Server) newSession(ctx context.Context, u storage.User) (string, error) {
	tok := storage.NewToken()
	now := s.now()
	err := s.store.CreateSession(ctx, &storage.Session{
		Hash: storage.HashToken(tok), User: u.ID, CSRF: storage.NewToken(),
		CredentialVersion: u.CredentialVersion, Created: now, Expires: now.Add(s.cfg.SessionTTL),
	})
	return tok, err
}

// endSession deletes the session of the request's cookie, if any.
func (s *Server) endSession(r *http.Request) {
	c, err := r.Cookie(SessionCookie)
	if err != nil || c.Value == "" || len(c.Value) > maxSecretLen {
		return
	}
	if err := s.store.DeleteSession(r.Context(), storage.HashToken(c.Value)); err != nil {
		s.log.ErrorContext(r.Context(), "auth: deleting a session", "err", err)
	}
}

func (s *Server) cookie(name, value string, maxAge int) *http.Cookie {
	return &http.Cookie{
		Name: name, Value: value, Path: s.prefix + "/", MaxAge: maxAge,
		HttpOnly: true, Secure: s.secure, SameSite: http.SameSiteLaxMode,
	}
}

func checkCSRF(got, want string) bool {
	return got != "" && want != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// safeNext keeps a post-login redirect on this service: a path below the
// prefix, never another host ("//evil", "/\evil").
func (s *Server) safeNext(next string) string {
	def := s.prefix + "/productions/"
	if next == "" || !strings.HasPrefix(next, s.prefix+"/") || strings.HasPrefix(next, "//") ||
		strings.ContainsAny(next, "\\\r\n") {
		return def
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil {
		return def
	}
	return next
}

// handleAccount serves the account pages; the path arrives without
// "{prefix}/account".
func (s *Server) handleAccount(w http.ResponseWriter, r *http.Request) {
	path, method := r.URL.Path, r.Method
	if method == http.MethodHead {
		method = http.MethodGet
	}
	if method == http.MethodPost {
		r.Body = http.MaxBytesReader(w, r.Body, maxAccountBody)
		if err := r.ParseForm(); err != nil {
			s.renderPage(w, r, http.StatusBadRequest, "error", pageData{Title: "Bad request", Error: "the form does not parse"})
			return
		}
	}
	switch {
	case path == "/login/" && method == http.MethodGet:
		s.loginPage(w, r, http.StatusOK, "", "")
	case path == "/login/" && method == http.MethodPost:
		s.login(w, r)
	case path == "/logout/" && method == http.MethodPost:
		s.logout(w, r)
	case path == "/" && method == http.MethodGet,
		path == "/keys/" && method == http.MethodPost,
		path == "/keys/revoke/" && method == http.MethodPost,
		path == "/clients/" && method == http.MethodPost,
		path == "/clients/delete/" && method == http.MethodPost,
		path == "/logout-everywhere/" && method == http.MethodPost,
		path == "/alerts/dismiss/" && method == http.MethodPost:
		ses, u, ok := s.browserSession(r)
		if !ok {
			if method == http.MethodGet {
				http.Redirect(w, r, s.LoginURL(s.prefix+"/account/"), http.StatusSeeOther)
				return
			}
			s.renderPage(w, r, http.StatusForbidden, "error", pageData{Title: "Not logged in", Error: "your session ended: log in again"})
			return
		}
		if method == http.MethodPost && !checkCSRF(r.PostForm.Get("csrf_token"), ses.csrf) {
			s.renderPage(w, r, http.StatusForbidden, "error", pageData{Title: "Forbidden", Error: "the form expired or came from another site (CSRF token mismatch)"})
			return
		}
		s.accountAction(w, r, path, ses, u)
	case path == "/login/" || path == "/logout/" || path == "/" || path == "/keys/" ||
		path == "/keys/revoke/" || path == "/clients/" || path == "/clients/delete/" ||
		path == "/logout-everywhere/" || path == "/alerts/dismiss/":
		w.Header().Set("Allow", "GET, POST")
		s.renderPage(w, r, http.StatusMethodNotAllowed, "error", pageData{Title: "Method not allowed", Error: "this page does not accept " + r.Method})
	default:
		s.renderPage(w, r, http.StatusNotFound, "error", pageData{Title: "Not found", Error: "no such page"})
	}
}

func (s *Server) loginPage(w http.ResponseWriter, r *http.Request, status int, username, msg string) {
	next := r.URL.Query().Get("next")
	if r.Method == http.MethodPost {
		next = r.PostForm.Get("next")
	}
	tok := storage.NewToken()
	http.SetCookie(w, s.cookie(loginCSRFCookie, tok, 3600))
	s.renderPage(w, r, status, "login", pageData{
		Title: "Log in", CSRF: tok, Next: s.safeNext(next), Username: username, Error: msg,
		Action: s.prefix + "/account/login/",
	})
}

func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	c, err := r.Cookie(loginCSRFCookie)
	if err != nil || !checkCSRF(r.PostForm.Get("csrf_token"), c.Value) {
		s.loginPage(w, r, http.StatusForbidden, "", "The form expired or came from another site; please try again.")
		return
	}
	login := strings.TrimSpace(r.PostForm.Get("username"))
	u, err := s.PasswordUser(r.Context(), login, r.PostForm.Get("password"), clientIP(r))
	var re *RetryError
	switch {
	case errors.As(err, &re):
		w.Header().Set("Retry-After", strconv.Itoa(int(re.After.Seconds())+1))
		s.loginPage(w, r, http.StatusTooManyRequests, login, "Too many failed logins; try again later.")
		return
	case errors.Is(err, ErrBadCredentials):
		s.loginPage(w, r, http.StatusUnauthorized, login, "Wrong username or password.")
		return
	case err != nil:
		s.log.ErrorContext(r.Context(), "auth: login", "err", err)
		s.loginPage(w, r, http.StatusInternalServerError, login, "Login is unavailable right now.")
		return
	}
	// A fresh token at every login defeats session fixation.
	s.endSession(r)
	tok, err := s.newSession(r.Context(), u)
	if err != nil {
		s.log.ErrorContext(r.Context(), "auth: login: new session", "err", err)
		s.loginPage(w, r, http.StatusInternalServerError, login, "Login is unavailable right now.")
		return
	}
	http.SetCookie(w, s.cookie(SessionCookie, tok, int(s.cfg.SessionTTL.Seconds())))
	http.SetCookie(w, s.cookie(loginCSRFCookie, "", -1))
	http.Redirect(w, r, s.safeNext(r.PostForm.Get("next")), http.StatusSeeOther)
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request) {
	ses, _, ok := s.browserSession(r)
	if ok && !checkCSRF(r.PostForm.Get("csrf_token"), ses.csrf) {
		s.renderPage(w, r, http.StatusForbidden, "error", pageData{Title: "Forbidden", Error: "the form expired or came from another site (CSRF token mismatch)"})
		return
	}
	s.endSession(r)
	http.SetCookie(w, s.cookie(SessionCookie, "", -1))
	http.Redirect(w, r, s.prefix+"/account/login/", http.StatusSeeOther)
}

func (s *Server) accountAction(w http.ResponseWriter, r *http.Request, path string, ses session, u storage.User) {
	ctx := r.Context()
	d := pageData{Title: "Account", User: u.Username, CSRF: ses.csrf}
	status := http.StatusOK
	switch path {
	case "/keys/":
		var expires time.Time
		if e := strings.TrimSpace(r.PostForm.Get("expires")); e != "" {
			t, err := time.Parse(keyDateLayout, e)
			if err != nil || !t.After(s.now()) {
				d.Error, status = "The expiry must be a future date (YYYY-MM-DD).", http.StatusBadRequest
				break
			}
			expires = t
		}
		k, secret, err := s.accounts.CreateAPIKey(ctx, u, r.PostForm.Get("name"), expires)
		if err != nil {
			d.Error, status = s.formError(r, err)
			break
		}
		d.Secret = &secretInfo{What: "API key " + k.Name, Secret: secret}
	case "/keys/revoke/":
		if err := s.accounts.RevokeAPIKey(ctx, u, r.PostForm.Get("id")); err != nil {
			d.Error, status = s.formError(r, err)
			break
		}
		http.Redirect(w, r, s.prefix+"/account/", http.StatusSeeOther)
		return
	case "/clients/":
		var uris []string
		for _, l := range strings.Split(r.PostForm.Get("redirect_uris"), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				uris = append(uris, l)
			}
		}
		if len(uris) > maxRedirectLines {
			d.Error, status = "At most 20 redirect URIs.", http.StatusBadRequest
			break
		}
		c, secret, err := s.accounts.RegisterClient(ctx, u, r.PostForm.Get("name"), uris, r.PostForm.Get("public") != "")
		if err != nil {
			d.Error, status = s.formError(r, err)
			break
		}
		d.Secret = &secretInfo{What: "client " + c.Name, ClientID: c.ID, Secret: secret}
	case "/clients/delete/":
		if err := s.accounts.DeleteClient(ctx, u, r.PostForm.Get("id")); err != nil {
			d.Error, status = s.formError(r, err)
			break
		}
		http.Redirect(w, r, s.prefix+"/account/", http.StatusSeeOther)
		return
	case "/logout-everywhere/":
		// Every session (this one too) and OAuth token of the user ends;
		// API keys stay, they are revoked one by one above.
		if err := s.accounts.LogOutEverywhere(ctx, u); err != nil {
			d.Error, status = s.formError(r, err)
			break
		}
		s.log.InfoContext(ctx, "auth: user logged out everywhere", "user", u.Username)
		http.SetCookie(w, s.cookie(SessionCookie, "", -1))
		http.Redirect(w, r, s.prefix+"/account/login/", http.StatusSeeOther)
		return
	case "/alerts/dismiss/":
		if err := s.store.DeleteThrottles(ctx, alertKey(u.ID)); err != nil {
			d.Error, status = s.formError(r, err)
			break
		}
		http.Redirect(w, r, s.prefix+"/account/", http.StatusSeeOther)
		return
	}
	keys, err := s.accounts.ListAPIKeys(ctx, u)
	if err == nil {
		d.Alert, err = s.loginAlert(ctx, u.ID)
	}
	if err == nil {
		var clients []storage.OAuthClient
		if clients, err = s.accounts.ListClients(ctx, u); err == nil {
			now := s.now()
			for _, k := range keys {
				d.Keys = append(d.Keys, keyRow{ID: k.ID, Name: k.Name, Created: fmtTime(k.Created), LastUsed: fmtTime(k.LastUsed),
					Expires: fmtTime(k.Expires), Revoked: k.Revoked, Expired: !k.Expires.IsZero() && !now.Before(k.Expires)})
			}
			for _, c := range clients {
				d.Clients = append(d.Clients, clientRow{ID: c.ID, Name: c.Name, RedirectURIs: c.RedirectURIs, Public: c.Public, Created: fmtTime(c.Created)})
			}
		}
	}
	if err != nil {
		s.log.ErrorContext(ctx, "auth: account page", "err", err)
		s.renderPage(w, r, http.StatusInternalServerError, "error", pageData{Title: "Error", Error: "the account is unavailable right now"})
		return
	}
	s.renderPage(w, r, status, "account", d)
}

// formError turns an error of an account action into a message and status.
func (s *Server) formError(r *http.Request, err error) (string, int) {
	switch {
	case errors.Is(err, storage.ErrNotFound):
		return "No such key or client.", http.StatusNotFound
	case errors.Is(err, storage.ErrInvalid):
		return strings.TrimPrefix(err.Error(), app.ErrInvalid.Error()+": "), http.StatusBadRequest
	case errors.Is(err, storage.ErrConflict):
		return "That name is taken.", http.StatusConflict
	}
	s.log.ErrorContext(r.Context(), "auth: account action", "err", err)
	return "The action failed; try again later.", http.StatusInternalServerError
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(pageTimeLayout)
}

// renderPage executes a page template into a buffer first, so that a
// template error never leaves half a page behind.
func (s *Server) renderPage(w http.ResponseWriter, r *http.Request, status int, name string, d pageData) {
	d.Prefix, d.CSS = s.prefix, webstyle.CSS
	d.pageNav()
	var buf bytes.Buffer
	if err := pages[name].ExecuteTemplate(&buf, "layout", d); err != nil {
		s.log.ErrorContext(r.Context(), "auth: render page", "page", name, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	// No form-action: browsers apply it to the redirect after the consent
	// form, which must reach the client's redirect URI.
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write(buf.Bytes())
	}
}
