// Package webpages is audiopost's web pages: server-rendered HTML over
// the operations of package production/app that the JSON API calls,
// with the API's error table (transport/internal/envelope) and the
// simple API's form reader (transport/internal/simpleform).
// httpapi.NewHandler mounts them beside the API (Register):
//
//	GET       {base}/                                  home: what the service does; logged in, the productions list
//	GET       {base}/productions/                      the user's productions, newest first, paged
//	GET       {base}/upload/                           upload form
//	POST      {base}/upload/                           creates a production like the simple API
//	GET       {base}/production/{uuid}/status/         status page (polls status.json)
//	GET       {base}/production/{uuid}/status.json     the API's status call for the page's script
//	GET, POST {base}/production/{uuid}/edit/           edit form; action=start starts
//	GET       {base}/files/{kind}/{uuid}/{filename}    the API's downloads for page links
//	GET, POST {base}/services/                         the user's external services: list, add, test, remove
//	GET       {base}/presets.json                      the user's presets for the in-browser pages (browser.go)
//	GET       {base}/livestream/{uuid}/                a live stream with its meter (live.go)
//	GET       {base}/livestream/{uuid}/status.json     the stream's status for the page's script
//
// Pages accept the browser session of package auth (logging in through
// its login form) and, like the API, a bearer_token query parameter, which
// then rides along on every link and form of the page. Without either a
// GET redirects to the login page.
package webpages

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"errors"
	"html/template"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/app"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/transport/auth"
	"github.com/audiopost/audiopost/transport/internal/envelope"
	"github.com/audiopost/audiopost/transport/internal/webstyle"
)

//go:embed templates/*.html
var templateFS embed.FS

// pageTemplates are parsed once; a template error is a programming error.
var pageTemplates = func() map[string]*template.Template {
	m := map[string]*template.Template{}
	for _, name := range []string{"status", "edit", "upload", "error", "list", "home", "services", "live"} {
		t := template.Must(template.New("layout.html").Funcs(template.FuncMap{
			"join": strings.Join,
		}).Parse(webstyle.Nav))
		m[name] = template.Must(t.ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html"))
	}
	return m
}()

// Config is what the pages need of the handler that mounts them.
type Config struct {
	App  *app.App
	Auth *auth.Server
	// Base is the handler's BaseURL without trailing slash, Prefix its
	// path ("" at the root).
	Base, Prefix string
	// MaxBodyBytes bounds a form post, MaxUploadBytes an upload.
	MaxBodyBytes, MaxUploadBytes int64
	Logger                       *slog.Logger
	// ProductionView is the API's response form of a production (the
	// URLs of its files and pages filled in), which the pages show.
	ProductionView func(*production.Production) *production.Production
	// Download serves the API's download of the file the request names
	// (GET {base}/api/download/{kind}/{uuid}/{name...}) to u, for the
	// pages' file links.
	Download func(w http.ResponseWriter, r *http.Request, u storage.User) error
	// Status serves the API's status call of the production the request
	// names (GET {base}/api/production/{uuid}/status.json) to u, for the
	// status page's script.
	Status func(w http.ResponseWriter, r *http.Request, u storage.User) error
}

// pages serves the web pages of one handler.
type pages struct {
	cfg          Config
	app          *app.App
	auth         *auth.Server
	base, prefix string
	maxBody      int64
	maxUp        int64
	log          *slog.Logger
	// key signs CSRF tokens. Sessions of package auth live in one
	// process's memory too, so a per-process key loses nothing.
	key []byte
}

// pageReq is an authenticated page request.
type pageReq struct {
	user storage.User
	// cred is the credential the request came with (session cookie or
	// bearer token): CSRF tokens are bound to it, so a token leaks nothing
	// beyond its own session.
	cred string
	// bearer is the bearer_token the page was opened with; links and
	// forms carry it on, as there is no session cookie.
	bearer string
	// nonce allows the page's inline script under the CSP.
	nonce string
}

type pageHandler func(w http.ResponseWriter, r *http.Request, pr *pageReq)

// Register registers the web pages on mux.
func Register(mux *http.ServeMux, cfg Config) {
	key := make([]byte, 32)
	rand.Read(key)
	pg := &pages{cfg: cfg, app: cfg.App, auth: cfg.Auth, base: cfg.Base, prefix: cfg.Prefix,
		maxBody: cfg.MaxBodyBytes, maxUp: cfg.MaxUploadBytes, log: cfg.Logger, key: key}
	p := cfg.Prefix
	mux.HandleFunc("GET "+p+"/{$}", pg.home)
	mux.HandleFunc("GET "+p+"/productions/{$}", pg.withUser(false, pg.listPage))
	mux.HandleFunc("GET "+p+"/upload/{$}", pg.withUser(false, pg.uploadForm))
	mux.HandleFunc("POST "+p+"/upload/{$}", pg.withUser(false, pg.uploadPost))
	mux.HandleFunc("GET "+p+"/production/{uuid}/status/{$}", pg.withUser(false, pg.statusPage))
	mux.HandleFunc("GET "+p+"/production/{uuid}/status.json", pg.withUser(true, pg.statusJSON))
	mux.HandleFunc("GET "+p+"/production/{uuid}/edit/{$}", pg.withUser(false, pg.editForm))
	mux.HandleFunc("POST "+p+"/production/{uuid}/edit/{$}", pg.withUser(false, pg.editPost))
	mux.HandleFunc("GET "+p+"/files/{kind}/{uuid}/{name...}", pg.withUser(false, pg.file))
	mux.HandleFunc("GET "+p+"/services/{$}", pg.withUser(false, pg.servicesPage))
	mux.HandleFunc("POST "+p+"/services/{$}", pg.withUser(false, pg.servicesPost))
	mux.HandleFunc("GET "+p+"/livestream/{uuid}/{$}", pg.withUser(false, pg.livePage))
	mux.HandleFunc("GET "+p+"/livestream/{uuid}/status.json", pg.withUser(true, pg.liveJSON))
	mux.HandleFunc("GET "+p+"/presets.json", pg.withUser(true, pg.browserPresets))
}

// withUser authenticates a page request: the browser session first, else
// the API's credentials. Without credentials a GET page redirects to the
// login page; the JSON call (api) answers 401 in the envelope.
func (pg *pages) withUser(api bool, h pageHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		pr := &pageReq{nonce: newNonce()}
		if u, ok := pg.auth.BrowserUser(r); ok {
			c, _ := r.Cookie(auth.SessionCookie)
			pr.user, pr.cred = u, "session\x00"+c.Value
			h(w, r, pr)
			return
		}
		authz, bearer := r.Header.Get("Authorization"), r.URL.Query().Get("bearer_token")
		if authz == "" && bearer == "" {
			switch {
			case api:
				w.Header().Set("WWW-Authenticate", `Bearer realm="audiopost"`)
				pg.writeError(w, r, envelope.New(http.StatusUnauthorized, envelope.CodeUnauthorized, "log in or send a bearer token"))
			case r.Method == http.MethodGet || r.Method == http.MethodHead:
				http.Redirect(w, r, pg.auth.LoginURL(r.URL.RequestURI()), http.StatusSeeOther)
			default:
				pg.renderError(w, r, pr, http.StatusForbidden, "Not logged in", "Your session ended. Log in again and resend the form.")
			}
			return
		}
		u, err := pg.auth.Authenticate(r)
		if err != nil {
			status, code, title, msg := http.StatusInternalServerError, envelope.CodeInternal, "Error", "Authentication is unavailable right now."
			switch {
			case errors.Is(err, auth.ErrTooManyAttempts):
				status, code, title, msg = http.StatusTooManyRequests, envelope.CodeRateLimited, "Too many attempts", "Too many failed logins; try again later."
			case errors.Is(err, auth.ErrBadCredentials), errors.Is(err, auth.ErrNoCredentials):
				status, code, title, msg = http.StatusUnauthorized, envelope.CodeUnauthorized, "Not authorized", "The token or password is not valid (unknown, revoked or expired)."
			default:
				pg.log.ErrorContext(r.Context(), "httpapi: page authentication", "err", err)
			}
			if api {
				w.Header().Set("WWW-Authenticate", `Bearer realm="audiopost"`)
				pg.writeError(w, r, envelope.New(status, code, msg))
				return
			}
			pg.renderError(w, r, pr, status, title, msg)
			return
		}
		pr.user, pr.bearer = u, bearer
		pr.cred = "bearer\x00" + bearer + "\x00" + authz
		h(w, r, pr)
	}
}

func newNonce() string {
	b := make([]byte, 16)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// csrfToken is the token the page's forms carry: an HMAC of the user and
// the credential, checked in constant time.
func (pg *pages) csrfToken(pr *pageReq) string {
	m := hmac.New(sha256.New, pg.key)
	m.Write([]byte("audiopost page form\x00" + pr.user.ID + "\x00" + pr.cred))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func (pg *pages) validCSRF(pr *pageReq, got string) bool {
	return got != "" && hmac.Equal([]byte(got), []byte(pg.csrfToken(pr)))
}

// errCSRF rejects a form whose token is missing or wrong.
var errCSRF = envelope.New(http.StatusForbidden, "csrf_failed", "The form expired or came from another site (CSRF token mismatch); reload the page and try again.")

// link returns a path of this service, carrying the page's bearer token.
func (pg *pages) link(pr *pageReq, path string) string {
	if pr.bearer == "" {
		return path
	}
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	return path + sep + url.Values{"bearer_token": {pr.bearer}}.Encode()
}

// fileLink turns an API download URL into the page route serving it, so
// that a browser session can fetch it; other URLs stay as they are.
func (pg *pages) fileLink(pr *pageReq, apiURL string) string {
	rest, ok := strings.CutPrefix(apiURL, pg.base+"/api/download/")
	if !ok {
		return apiURL
	}
	return pg.link(pr, pg.prefix+"/files/"+rest)
}

func (pg *pages) statusURL(pr *pageReq, uuid string) string {
	return pg.link(pr, pg.prefix+"/production/"+url.PathEscape(uuid)+"/status/")
}

func (pg *pages) editURL(pr *pageReq, uuid string) string {
	return pg.link(pr, pg.prefix+"/production/"+url.PathEscape(uuid)+"/edit/")
}

// pageData is what the layout and every page template see.
type pageData struct {
	Title string
	CSS   template.CSS
	Nav   webstyle.Links
	Nonce string
	CSRF  string
	// Errors are shown at the top of the page.
	Errors []string

	Status *statusView
	Edit   *editView
	Upload *uploadView
	List   *listView
	Home   *homeView
	Svc    *servicesView // the services page
	Live   *liveView     // a live stream's page
}

func (pg *pages) data(pr *pageReq, title string) pageData {
	p := pg.prefix
	d := pageData{Title: title, CSS: webstyle.CSS, Nonce: pr.nonce, Nav: webstyle.Links{
		Home: pg.link(pr, p+"/"), User: pr.user.Username,
	}}
	if pr.user.ID != "" {
		d.CSRF = pg.csrfToken(pr)
		d.Nav.Productions = pg.link(pr, p+"/productions/")
		d.Nav.Upload = pg.link(pr, p+"/upload/")
		d.Nav.Services = pg.link(pr, p+"/services/")
	}
	if pr.bearer == "" {
		d.Nav.Account = p + "/account/"
	}
	return d
}

// render executes a page into a buffer first, so that a template error
// never leaves half a page behind.
func (pg *pages) render(w http.ResponseWriter, r *http.Request, pr *pageReq, status int, name string, d pageData) {
	var buf bytes.Buffer
	if err := pageTemplates[name].ExecuteTemplate(&buf, "layout", d); err != nil {
		pg.log.ErrorContext(r.Context(), "httpapi: render page", "page", name, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	// Page URLs may carry a bearer token: never send them elsewhere.
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'nonce-"+pr.nonce+"'; style-src 'unsafe-inline'; "+
		"img-src 'self'; media-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write(buf.Bytes())
	}
}

func (pg *pages) renderError(w http.ResponseWriter, r *http.Request, pr *pageReq, status int, title, msg string) {
	d := pg.data(pr, title)
	d.Errors = []string{msg}
	if pr.user.ID == "" {
		d.Nav.Account, d.Nav.Login = "", pg.auth.LoginURL(pg.prefix+"/productions/")
	}
	pg.render(w, r, pr, status, "error", d)
}

// renderFailure renders an error of the shared code paths as a page:
// 404 for missing and other users' productions, the message otherwise.
func (pg *pages) renderFailure(w http.ResponseWriter, r *http.Request, pr *pageReq, err error) {
	ae := envelope.Classify(err)
	if ae.Code == envelope.CodeInternal {
		pg.log.ErrorContext(r.Context(), "httpapi: page", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	title := http.StatusText(ae.Status)
	msg := ae.Msg
	if ae.Status == http.StatusNotFound {
		msg = "There is no such production in your account."
	}
	pg.render(w, r, pr, ae.Status, "error", func() pageData {
		d := pg.data(pr, title)
		d.Errors = []string{msg}
		return d
	}())
}

// messages lists an error's form errors ("title: is too long") or its
// message.
func messages(ae *envelope.Error) []string {
	if len(ae.Form) == 0 {
		return []string{ae.Msg}
	}
	out := make([]string, 0, len(ae.Form))
	for _, k := range slices.Sorted(maps.Keys(ae.Form)) {
		v := ae.Form[k]
		if k == "" || k == "non_field" {
			out = append(out, v)
			continue
		}
		out = append(out, strings.TrimPrefix(k, "metadata.")+": "+v)
	}
	return out
}

// file serves GET {base}/files/...: the API's download for page links.
func (pg *pages) file(w http.ResponseWriter, r *http.Request, pr *pageReq) {
	if err := pg.cfg.Download(w, r, pr.user); err != nil {
		ae := envelope.Classify(err)
		if ae.Status == http.StatusNotFound {
			pg.renderError(w, r, pr, http.StatusNotFound, "Not found", "There is no such file in your account.")
			return
		}
		pg.renderFailure(w, r, pr, err)
	}
}

// writeError renders err in the API's envelope, for the pages' JSON
// calls.
func (pg *pages) writeError(w http.ResponseWriter, r *http.Request, err error) {
	envelope.WriteError(w, r, pg.log, err)
}

// statusJSON serves the API's status call to the status page's script.
func (pg *pages) statusJSON(w http.ResponseWriter, r *http.Request, pr *pageReq) {
	r.SetPathValue("cmd", "status.json")
	if err := pg.cfg.Status(w, r, pr.user); err != nil {
		pg.writeError(w, r, err)
	}
}
