package auth_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/transport/auth"
)

func TestAPIKey(t *testing.T) {
	e := newEnv(t, nil)
	alice := e.user("alice", "alice-password")
	k, secret, err := accounts(t, e.st).CreateAPIKey(t.Context(), alice, "laptop", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(secret) < 43 || strings.Contains(string(k.Hash), secret) {
		t.Fatalf("secret %q", secret)
	}
	for name, mod := range map[string]func(*http.Request){
		"Bearer":       bearer(secret),
		"bearer":       func(r *http.Request) { r.Header.Set("Authorization", "bearer "+secret) },
		"BEARER":       func(r *http.Request) { r.Header.Set("Authorization", "BEARER "+secret) },
		"bearer_token": query(secret),
	} {
		if st, body := e.me(mod); st != 200 || body != "alice" {
			t.Errorf("%s: %d %q", name, st, body)
		}
	}
	keys, err := e.st.ListAPIKeys(t.Context(), alice.ID)
	if err != nil || len(keys) != 1 || !keys[0].LastUsed.Equal(e.clock.Now()) {
		t.Errorf("last used not recorded: %+v %v (now %v)", keys, err, e.clock.Now())
	}
	e.clock.Add(time.Hour)
	e.me(bearer(secret))
	if keys, _ := e.st.ListAPIKeys(t.Context(), alice.ID); !keys[0].LastUsed.Equal(e.clock.Now()) {
		t.Errorf("last used %v, want %v", keys[0].LastUsed, e.clock.Now())
	}

	// Revocation takes effect on the very next request.
	if err := e.st.RevokeAPIKey(t.Context(), alice.ID, k.ID); err != nil {
		t.Fatal(err)
	}
	if st, _ := e.me(bearer(secret)); st != 401 {
		t.Errorf("revoked key: %d", st)
	}

	// An expiring key works until its expiry, not after.
	_, secret2, err := accounts(t, e.st).CreateAPIKey(t.Context(), alice, "ci", e.clock.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := e.me(query(secret2)); st != 200 {
		t.Errorf("fresh expiring key: %d", st)
	}
	e.clock.Add(time.Hour)
	if st, _ := e.me(query(secret2)); st != 401 {
		t.Errorf("expired key: %d", st)
	}
}

func TestUnauthorizedResponse(t *testing.T) {
	e := newEnv(t, nil)
	for name, mod := range map[string]func(*http.Request){
		"none":          nil,
		"unknown token": bearer(storage.NewToken()),
		"empty bearer":  func(r *http.Request) { r.Header.Set("Authorization", "Bearer") },
		"other scheme":  func(r *http.Request) { r.Header.Set("Authorization", "Digest x") },
		"bad basic":     func(r *http.Request) { r.Header.Set("Authorization", "Basic !!!") },
		"huge token":    bearer(strings.Repeat("a", 10000)),
	} {
		req, _ := http.NewRequest("GET", e.srv.URL+"/api/me", nil)
		if mod != nil {
			mod(req)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var env struct {
			StatusCode   int               `json:"status_code"`
			FormErrors   map[string]string `json:"form_errors"`
			ErrorCode    string            `json:"error_code"`
			ErrorMessage string            `json:"error_message"`
		}
		err = json.NewDecoder(resp.Body).Decode(&env)
		resp.Body.Close()
		if resp.StatusCode != 401 || err != nil || env.StatusCode != 401 || env.FormErrors == nil ||
			env.ErrorCode != "unauthorized" || env.ErrorMessage == "" {
			t.Errorf("%s: %d %+v %v", name, resp.StatusCode, env, err)
		}
		if ch := strings.Join(resp.Header.Values("WWW-Authenticate"), ", "); !strings.Contains(ch, "Bearer") || !strings.Contains(ch, "Basic") {
			t.Errorf("%s: WWW-Authenticate %q", name, ch)
		}
	}
}

func TestCustomWriteError(t *testing.T) {
	var got []any
	e := newEnv(t, func(c *auth.Config) {
		c.WriteError = func(w http.ResponseWriter, r *http.Request, status int, code, message string) {
			got = append(got, status, code)
			w.WriteHeader(status)
		}
	})
	if st, _ := e.me(nil); st != 401 || len(got) != 2 || got[0] != 401 || got[1] != "unauthorized" {
		t.Errorf("%d %v", st, got)
	}
}

func TestBasicAuth(t *testing.T) {
	e := newEnv(t, func(c *auth.Config) { c.Throttle = auth.Throttle{PairFree: 5, PairBase: time.Minute} })
	alice := e.user("alice", "alice-password")
	basic := func(u, p string) func(*http.Request) { return func(r *http.Request) { r.SetBasicAuth(u, p) } }

	if st, body := e.me(basic("alice", "alice-password")); st != 200 || body != "alice" {
		t.Errorf("username: %d %q", st, body)
	}
	if st, body := e.me(basic("alice@example.org", "alice-password")); st != 200 || body != "alice" {
		t.Errorf("email: %d %q", st, body)
	}
	if st, _ := e.me(basic("alice", "alice-passwore")); st != 401 {
		t.Errorf("wrong password: %d", st)
	}
	if st, _ := e.me(basic("nobody", "alice-password")); st != 401 {
		t.Errorf("unknown user: %d", st)
	}

	// A changed password invalidates the cached check at once.
	alice.PasswordHash = fastHash(t, "new-password")
	if err := e.st.UpdateUser(t.Context(), alice); err != nil {
		t.Fatal(err)
	}
	if st, _ := e.me(basic("alice", "alice-password")); st != 401 {
		t.Errorf("old password after change: %d", st)
	}
	if st, _ := e.me(basic("alice", "new-password")); st != 200 {
		t.Errorf("new password: %d", st)
	}

	// Five failures are free per (user, address), the logins above reset
	// them; then even the right password is refused without being checked,
	// except a cached one.
	for _, guess := range []string{"guess-1", "guess-2", "guess-3", "guess-4", "guess-5"} {
		if st, _ := e.me(basic("alice", guess)); st != 401 {
			t.Fatalf("%s: %d", guess, st)
		}
	}
	req, _ := http.NewRequest("GET", e.srv.URL+"/api/me", nil)
	req.SetBasicAuth("alice@example.org", "guess-6")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("after 5 failures: %d Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if st, _ := e.me(basic("alice", "new-password")); st != 200 {
		t.Errorf("cached right password while limited: %d", st)
	}
	// Another user from the same address is not slowed down by alice's
	// failures.
	e.user("bob", "bob-password")
	if st, _ := e.me(basic("bob", "bob-password")); st != 200 {
		t.Errorf("other user from the same address: %d", st)
	}
	// After the wait, one more attempt.
	e.clock.Add(time.Minute)
	if st, _ := e.me(basic("alice", "guess-7")); st != 401 {
		t.Errorf("after the wait: %d", st)
	}
	if st, _ := e.me(basic("alice", "guess-8")); st != 429 {
		t.Errorf("right after: %d", st)
	}
}

func TestPasswordUserErrors(t *testing.T) {
	e := newEnv(t, func(c *auth.Config) { c.Throttle = auth.Throttle{PairFree: 1} })
	e.user("carol", "carol-password")
	_, err := e.svc.PasswordUser(t.Context(), "carol", "nope", "")
	if !errors.Is(err, auth.ErrBadCredentials) {
		t.Errorf("wrong password: %v", err)
	}
	_, err = e.svc.PasswordUser(t.Context(), "carol", "carol-password", "")
	var re *auth.RetryError
	if !errors.Is(err, auth.ErrTooManyAttempts) || !errors.As(err, &re) || re.After <= 0 {
		t.Errorf("limited: %v", err)
	}
	// A user without a password cannot log in with an empty one.
	u := storage.User{Username: "nopw"}
	if err := e.st.CreateUser(t.Context(), &u); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.PasswordUser(t.Context(), "nopw", "", "10.0.0.1"); !errors.Is(err, auth.ErrBadCredentials) {
		t.Errorf("empty password: %v", err)
	}
}

func TestAccountPages(t *testing.T) {
	e := newEnv(t, nil)
	alice := e.user("alice", "alice-password")
	e.user("bob", "bob-password")

	// Not logged in: the account page sends to the login page.
	anon := e.browser("", "")
	resp, page := anon.do("GET", e.srv.URL+"/account/", nil)
	if resp.StatusCode != 200 || !strings.Contains(page, `name="password"`) || !strings.HasPrefix(resp.Request.URL.Path, "/account/login/") {
		t.Fatalf("anonymous account page: %d %s", resp.StatusCode, resp.Request.URL)
	}
	// A wrong password shows the form again.
	resp, _ = anon.post(page, "/account/login/", url.Values{"username": {"alice"}, "password": {"nope-nope"}})
	if resp.StatusCode != 401 {
		t.Errorf("wrong password: %d", resp.StatusCode)
	}
	// The login form needs its CSRF cookie.
	resp, _ = e.browser("", "").post(page, "/account/login/", url.Values{"username": {"alice"}, "password": {"alice-password"}})
	if resp.StatusCode != 403 {
		t.Errorf("login without the CSRF cookie: %d", resp.StatusCode)
	}

	for _, h := range []string{"Content-Security-Policy", "X-Frame-Options"} {
		if resp.Header.Get(h) == "" {
			t.Errorf("no %s header", h)
		}
	}
	a := e.browser("alice", "alice-password")
	page = a.login()
	resp, page = a.post(page, "/account/keys/", url.Values{"name": {"alice-laptop-key"}, "expires": {e.clock.Now().AddDate(0, 1, 0).Format("2006-01-02")}})
	secret := secretOn(page)
	if resp.StatusCode != 200 || secret == "" {
		t.Fatalf("create key: %d %s", resp.StatusCode, page)
	}
	if st, body := e.me(bearer(secret)); st != 200 || body != "alice" {
		t.Errorf("key made on the page: %d %q", st, body)
	}
	resp, page = a.post(page, "/account/clients/", url.Values{"name": {"alice-app"}, "redirect_uris": {"https://a.example/cb\nhttp://127.0.0.1:8000/cb"}})
	if resp.StatusCode != 200 || secretOn(page) == "" || !strings.Contains(page, "http://127.0.0.1:8000/cb") {
		t.Fatalf("register client: %d %s", resp.StatusCode, page)
	}
	if cs, _ := e.st.ListOAuthClients(t.Context(), alice.ID); len(cs) != 1 || len(cs[0].RedirectURIs) != 2 || cs[0].Public {
		t.Errorf("stored clients %+v", cs)
	}
	resp, _ = a.post(page, "/account/clients/", url.Values{"name": {"bad"}, "redirect_uris": {"javascript:alert(1)"}})
	if resp.StatusCode != 400 {
		t.Errorf("javascript: redirect URI: %d", resp.StatusCode)
	}
	keys, _ := e.st.ListAPIKeys(t.Context(), alice.ID)
	clients, _ := e.st.ListOAuthClients(t.Context(), alice.ID)

	// Bob sees none of it and cannot revoke or delete it.
	b := e.browser("bob", "bob-password")
	bpage := b.login()
	if strings.Contains(bpage, "alice-laptop-key") || strings.Contains(bpage, keys[0].ID) || strings.Contains(bpage, "alice-app") {
		t.Error("bob's page shows alice's keys or clients")
	}
	bf := forms(bpage)["/account/keys/"].fields
	bf.Set("id", keys[0].ID)
	if resp, _ = b.do("POST", e.srv.URL+"/account/keys/revoke/", bf); resp.StatusCode != 404 {
		t.Errorf("bob revokes alice's key: %d", resp.StatusCode)
	}
	bf.Set("id", clients[0].ID)
	if resp, _ = b.do("POST", e.srv.URL+"/account/clients/delete/", bf); resp.StatusCode != 404 {
		t.Errorf("bob deletes alice's client: %d", resp.StatusCode)
	}
	if st, _ := e.me(bearer(secret)); st != 200 {
		t.Errorf("alice's key after bob's attempt: %d", st)
	}
	// Alice's CSRF token in bob's session is refused.
	af := forms(page)["/account/keys/revoke/"].fields
	if resp, _ = b.do("POST", e.srv.URL+"/account/keys/revoke/", af); resp.StatusCode != 403 {
		t.Errorf("foreign CSRF token: %d", resp.StatusCode)
	}

	// Alice revokes her key on the page; the next request fails.
	resp, page = a.post(page, "/account/keys/revoke/", url.Values{"id": {keys[0].ID}})
	if resp.StatusCode != 200 || !strings.Contains(page, "revoked") {
		t.Errorf("revoke: %d", resp.StatusCode)
	}
	if st, _ := e.me(bearer(secret)); st != 401 {
		t.Errorf("revoked key: %d", st)
	}
	resp, page = a.post(page, "/account/clients/delete/", url.Values{"id": {clients[0].ID}})
	if cs, _ := e.st.ListOAuthClients(t.Context(), alice.ID); resp.StatusCode != 200 || len(cs) != 0 {
		t.Errorf("delete client: %d %+v", resp.StatusCode, cs)
	}

	// Logout ends the session on the server, not only in the browser.
	sess := sessionCookie(t, a)
	resp, _ = a.post(page, "/account/logout/", nil)
	req, _ := http.NewRequest("GET", e.srv.URL+"/account/", nil)
	req.AddCookie(sess)
	if _, ok := e.svc.BrowserUser(req); ok {
		t.Error("session still valid after logout")
	}
}

func TestLoginNextStaysOnSite(t *testing.T) {
	e := newEnv(t, nil)
	e.user("alice", "alice-password")
	for _, next := range []string{"//evil.example/", "https://evil.example/", "/\\evil.example", "javascript:alert(1)"} {
		b := e.browser("alice", "alice-password")
		_, page := b.do("GET", e.svc.LoginURL(next), nil)
		resp, _ := b.post(page, "/account/login/", url.Values{"username": {"alice"}, "password": {"alice-password"}})
		// Refused: the default landing page, the productions list.
		if resp.Request.URL.Host != strings.TrimPrefix(e.srv.URL, "http://") || resp.Request.URL.Path != "/productions/" {
			t.Errorf("next=%q led to %s", next, resp.Request.URL)
		}
	}
}

func TestSessionCookieFlags(t *testing.T) {
	for _, base := range []string{"http://example.org/sub", "https://example.org/sub"} {
		e := newEnv(t, nil)
		e.user("alice", "alice-password")
		svc := auth.New(e.st, auth.Config{BaseURL: base})
		mux := http.NewServeMux()
		svc.Routes(mux, "/sub")
		// Get the CSRF cookie and token from the prefixed login page.
		rec := newRecorder(mux, "GET", "/sub/account/login/?next=/sub/account/", "", nil)
		csrf := forms(rec.body)["/sub/account/login/"].fields
		if csrf.Get("csrf_token") == "" {
			t.Fatalf("%s: login page %d %s", base, rec.code, rec.body)
		}
		csrf.Set("username", "alice")
		csrf.Set("password", "alice-password")
		rec = newRecorder(mux, "POST", "/sub/account/login/", csrf.Encode(), rec.cookies)
		if rec.code != http.StatusSeeOther || rec.location != "/sub/account/" {
			t.Fatalf("%s: login %d %q", base, rec.code, rec.location)
		}
		var c *http.Cookie
		for _, ck := range rec.cookies {
			if ck.Name == auth.SessionCookie {
				c = ck
			}
		}
		if c == nil || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Path != "/sub/" || c.Secure != strings.HasPrefix(base, "https") {
			t.Errorf("%s: session cookie %+v", base, c)
		}
		if got := svc.LoginURL("/sub/x"); got != base+"/account/login/?next=%2Fsub%2Fx" {
			t.Errorf("LoginURL %q", got)
		}
	}
}

func secretOn(page string) string {
	_, rest, ok := strings.Cut(page, `<code id="secret">`)
	if !ok {
		return ""
	}
	s, _, _ := strings.Cut(rest, "</code>")
	return s
}

func sessionCookie(t *testing.T, b *browser) *http.Cookie {
	u, _ := url.Parse(b.e.srv.URL + "/account/")
	for _, c := range b.c.Jar.Cookies(u) {
		if c.Name == auth.SessionCookie {
			return c
		}
	}
	t.Fatal("no session cookie")
	return nil
}
