package auth_test

import (
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/audiopost/audiopost/internal/testdb"
	"github.com/audiopost/audiopost/production/app"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/transport/auth"
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// env is a running service: the auth routes plus a protected /api/me that
// answers with the authenticated username.
type env struct {
	t     testing.TB
	st    storage.Store
	svc   *auth.Server
	srv   *httptest.Server
	clock *clock
}

func newEnv(t testing.TB, mod func(*auth.Config)) *env {
	t.Helper()
	st := testdb.SQLite(t, filepath.Join(t.TempDir(), "auth.db"))
	return newEnvOn(t, st, &clock{t: time.Now().UTC().Truncate(time.Second)}, mod)
}

// newEnvOn starts a service on an existing store: a restarted server, or
// another API process of the same deployment.
func newEnvOn(t testing.TB, st storage.Store, c *clock, mod func(*auth.Config)) *env {
	t.Helper()
	e := &env{t: t, st: st, clock: c}
	mux := http.NewServeMux()
	e.srv = httptest.NewServer(mux)
	t.Cleanup(e.srv.Close)
	cfg := auth.Config{BaseURL: e.srv.URL, Now: e.clock.Now}
	// Passwords hashed, and the hash an unknown user's login is checked
	// against, at 1000 iterations (see accounts).
	a, err := app.New(app.Config{Store: st, Now: e.clock.Now, PasswordIterations: 1000})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Accounts = a
	if mod != nil {
		mod(&cfg)
	}
	e.svc = auth.New(st, cfg)
	e.svc.Routes(mux, "")
	mux.Handle("/api/me", e.svc.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, ok := auth.UserFrom(r.Context())
		if !ok {
			http.Error(w, "no user in context", 500)
			return
		}
		io.WriteString(w, u.Username)
	})))
	return e
}

// fastHash is a valid PBKDF2 hash with few iterations: CheckPassword
// accepts any iteration count, and the real 600,000 take over a second per
// check under the race detector.
func fastHash(t testing.TB, password string) string {
	h, err := storage.HashPasswordIterations(password, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func (e *env) user(name, password string) storage.User {
	e.t.Helper()
	u := storage.User{Username: name, Email: name + "@example.org", PasswordHash: fastHash(e.t, password)}
	if err := e.st.CreateUser(e.t.Context(), &u); err != nil {
		e.t.Fatal(err)
	}
	return u
}

// accounts are the account operations over st. They hash passwords at
// 1000 iterations: the default count costs seconds a hash under the race
// detector (production/app's own tests hash at the default).
func accounts(t testing.TB, st storage.Store) *app.App {
	t.Helper()
	a, err := app.New(app.Config{Store: st, PasswordIterations: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func (e *env) client(owner string, public bool, redirect ...string) (storage.OAuthClient, string) {
	e.t.Helper()
	c, secret, err := accounts(e.t, e.st).RegisterClient(e.t.Context(), storage.User{ID: owner}, "test app", redirect, public)
	if err != nil {
		e.t.Fatal(err)
	}
	return c, secret
}

// me calls the protected handler; it returns the status and the body.
func (e *env) me(mod func(*http.Request)) (int, string) {
	e.t.Helper()
	req, _ := http.NewRequest("GET", e.srv.URL+"/api/me", nil)
	if mod != nil {
		mod(req)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == 401 && resp.Header.Get("WWW-Authenticate") == "" {
		e.t.Error("401 without WWW-Authenticate")
	}
	return resp.StatusCode, string(b)
}

func bearer(tok string) func(*http.Request) {
	return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+tok) }
}

func query(tok string) func(*http.Request) {
	return func(r *http.Request) { r.URL.RawQuery = url.Values{"bearer_token": {tok}}.Encode() }
}

// oauthConfig is the golang.org/x/oauth2 side of a client.
func (e *env) endpoint() (authURL, tokenURL string) {
	return e.srv.URL + "/oauth2/authorize/", e.srv.URL + "/oauth2/token/"
}

// browser is a user agent with a cookie jar that follows redirects on the
// service and stops at any other host (the client's redirect URI).
type browser struct {
	t    testing.TB
	e    *env
	c    *http.Client
	user string
	pass string
}

func (e *env) browser(user, pass string) *browser {
	jar, _ := cookiejar.New(nil)
	host := strings.TrimPrefix(e.srv.URL, "http://")
	return &browser{t: e.t, e: e, user: user, pass: pass, c: &http.Client{Jar: jar,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if req.URL.Host != host {
				return http.ErrUseLastResponse
			}
			return nil
		}}}
}

type form struct {
	action string
	fields url.Values
}

var (
	formRe   = regexp.MustCompile(`(?s)<form method="post" action="([^"]*)">(.*?)</form>`)
	hiddenRe = regexp.MustCompile(`<input type="hidden" name="([^"]*)" value="([^"]*)">`)
)

// forms returns the page's POST forms by action path, with their hidden
// fields.
func forms(page string) map[string]form {
	m := map[string]form{}
	for _, f := range formRe.FindAllStringSubmatch(page, -1) {
		v := url.Values{}
		for _, h := range hiddenRe.FindAllStringSubmatch(f[2], -1) {
			v.Set(html.UnescapeString(h[1]), html.UnescapeString(h[2]))
		}
		a := html.UnescapeString(f[1])
		m[a] = form{action: a, fields: v}
	}
	return m
}

func (b *browser) do(method, rawURL string, body url.Values) (*http.Response, string) {
	b.t.Helper()
	var rd io.Reader
	if body != nil {
		rd = strings.NewReader(body.Encode())
	}
	req, _ := http.NewRequest(method, rawURL, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	return resp, string(page)
}

// post submits the form with this action found on page, plus extra fields.
func (b *browser) post(page, action string, extra url.Values) (*http.Response, string) {
	b.t.Helper()
	f, ok := forms(page)[action]
	if !ok {
		b.t.Fatalf("no form with action %q on page:\n%s", action, page)
	}
	for k, v := range extra {
		f.fields[k] = v
	}
	return b.do("POST", b.e.srv.URL+f.action, f.fields)
}

// authorize walks the browser through authorize, login (when needed) and
// consent, and returns the redirect to the client.
func (b *browser) authorize(authURL string) *url.URL {
	b.t.Helper()
	resp, page := b.do("GET", authURL, nil)
	if resp.StatusCode != 200 {
		b.t.Fatalf("GET authorize: %d %s %s", resp.StatusCode, resp.Header.Get("Location"), page)
	}
	if strings.Contains(page, `name="password"`) {
		resp, page = b.post(page, "/account/login/", url.Values{"username": {b.user}, "password": {b.pass}})
		if resp.StatusCode != 200 || !strings.Contains(page, `value="approve"`) {
			b.t.Fatalf("after login: %d %s", resp.StatusCode, page)
		}
	}
	resp, page = b.post(page, "/oauth2/authorize/", url.Values{"decision": {"approve"}})
	if resp.StatusCode != http.StatusFound {
		b.t.Fatalf("consent: %d %s", resp.StatusCode, page)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		b.t.Fatal(err)
	}
	return loc
}

// login logs the browser in through the login page.
func (b *browser) login() string {
	b.t.Helper()
	resp, page := b.do("GET", b.e.srv.URL+"/account/", nil)
	resp, page = b.post(page, "/account/login/", url.Values{"username": {b.user}, "password": {b.pass}})
	if resp.StatusCode != 200 || !strings.Contains(page, "API keys") {
		b.t.Fatalf("login: %d %s", resp.StatusCode, page)
	}
	return page
}

func decodeJSON(t *testing.T, r io.Reader) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.NewDecoder(r).Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

// recorded is a response of a handler called without a server.
type recorded struct {
	code     int
	body     string
	location string
	cookies  []*http.Cookie // the request's cookies updated by the response's
}

func newRecorder(h http.Handler, method, target, form string, cookies []*http.Cookie) recorded {
	req := httptest.NewRequest(method, target, strings.NewReader(form))
	if form != "" {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for _, c := range cookies {
		req.AddCookie(c)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	res := rec.Result()
	jar := map[string]*http.Cookie{}
	for _, c := range cookies {
		jar[c.Name] = c
	}
	for _, c := range res.Cookies() {
		jar[c.Name] = c
	}
	out := recorded{code: res.StatusCode, body: rec.Body.String(), location: res.Header.Get("Location")}
	for _, c := range jar {
		out.cookies = append(out.cookies, c)
	}
	return out
}
