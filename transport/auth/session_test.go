package auth_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/transport/auth"
)

// loggedIn reports whether the browser's session opens the account page.
func (b *browser) loggedIn() (bool, string) {
	b.t.Helper()
	resp, page := b.do("GET", b.e.srv.URL+"/account/", nil)
	return resp.StatusCode == 200 && strings.Contains(page, "API keys") && !strings.HasPrefix(resp.Request.URL.Path, "/account/login/"), page
}

func TestSessionSurvivesRestart(t *testing.T) {
	e := newEnv(t, nil)
	e.user("alice", "alice-password")
	b := e.browser("alice", "alice-password")
	b.login()

	// The same store behind a new service and listener: a restarted
	// server, or another API process. Cookies do not depend on the port.
	e2 := newEnvOn(t, e.st, e.clock, nil)
	b.e = e2
	if ok, _ := b.loggedIn(); !ok {
		t.Fatal("logged out by a restart")
	}
	// The session still ends with its TTL.
	e.clock.Add(auth.DefaultSessionTTL)
	if ok, _ := b.loggedIn(); ok {
		t.Error("session outlived its TTL")
	}
}

func TestPasswordChangeEndsSessions(t *testing.T) {
	e := newEnv(t, nil)
	alice := e.user("alice", "alice-password")
	b := e.browser("alice", "alice-password")
	b.login()
	other := e.browser("alice", "alice-password")
	other.login()
	ctx := t.Context()

	// An OAuth token of an application ends too.
	c, _ := e.client(alice.ID, true)
	tok := storage.NewToken()
	if err := e.st.CreateOAuthToken(ctx, &storage.OAuthToken{Hash: storage.HashToken(tok), ClientID: c.ID, User: alice.ID,
		Expires: e.clock.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if st, _ := e.me(bearer(tok)); st != 200 {
		t.Fatalf("token before: %d", st)
	}

	// `audiopost user passwd` calls SetPassword.
	if err := accounts(t, e.st).SetPassword(ctx, "alice", "changed-password"); err != nil {
		t.Fatal(err)
	}
	// The next request of the open session lands on the login page.
	resp, page := b.do("GET", e.srv.URL+"/account/", nil)
	if !strings.HasPrefix(resp.Request.URL.Path, "/account/login/") || !strings.Contains(page, `name="password"`) {
		t.Errorf("open session after a password change: %d at %s", resp.StatusCode, resp.Request.URL)
	}
	if ok, _ := other.loggedIn(); ok {
		t.Error("second session survived the password change")
	}
	if st, _ := e.me(bearer(tok)); st != 401 {
		t.Errorf("OAuth token after a password change: %d", st)
	}
	// A POST of an old page is refused too.
	resp, _ = b.do("POST", e.srv.URL+"/account/keys/", url.Values{"name": {"k"}})
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("POST with the ended session: %d", resp.StatusCode)
	}
	b.pass = "changed-password"
	b.login()
}

func TestLogoutEverywhere(t *testing.T) {
	e := newEnv(t, nil)
	alice := e.user("alice", "alice-password")
	b := e.browser("alice", "alice-password")
	page := b.login()
	other := e.browser("alice", "alice-password")
	other.login()
	bob := e.browser("bob", "bob-password")
	e.user("bob", "bob-password")
	bob.login()
	key, secret, err := accounts(t, e.st).CreateAPIKey(t.Context(), alice, "script", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	_ = key

	resp, _ := b.post(page, "/account/logout-everywhere/", nil)
	if !strings.HasPrefix(resp.Request.URL.Path, "/account/login/") {
		t.Errorf("after log out everywhere: at %s", resp.Request.URL)
	}
	if ok, _ := b.loggedIn(); ok {
		t.Error("this session survived")
	}
	if ok, _ := other.loggedIn(); ok {
		t.Error("the other session survived")
	}
	if ok, _ := bob.loggedIn(); !ok {
		t.Error("another user's session ended")
	}
	if st, _ := e.me(bearer(secret)); st != 200 {
		t.Errorf("API key after log out everywhere: %d (keys stay)", st)
	}
	// Without the CSRF token nothing happens.
	bob2 := e.browser("bob", "bob-password")
	bob2.login()
	resp, _ = bob2.do("POST", e.srv.URL+"/account/logout-everywhere/", url.Values{"csrf_token": {"forged"}})
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("forged log out everywhere: %d", resp.StatusCode)
	}
	if ok, _ := bob.loggedIn(); !ok {
		t.Error("forged request ended sessions")
	}
}
