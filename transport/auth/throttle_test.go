package auth_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/audiopost/audiopost/transport/auth"
)

// serveFrom sends req to the service as if from addr.
func (e *env) serveFrom(req *http.Request, addr string) *httptest.ResponseRecorder {
	req.RemoteAddr = addr + ":40000"
	rec := httptest.NewRecorder()
	e.srv.Config.Handler.ServeHTTP(rec, req)
	return rec
}

// guess makes one wrong password check from ip that the throttle lets
// through, waiting out (on the test clock) the attempts it refuses.
func (e *env) guess(t *testing.T, login, ip string) {
	t.Helper()
	for range 100 {
		_, err := e.svc.PasswordUser(t.Context(), login, "wrong-password", ip)
		var re *auth.RetryError
		switch {
		case errors.As(err, &re):
			e.clock.Add(re.After)
		case errors.Is(err, auth.ErrBadCredentials):
			return
		default:
			t.Fatal(err)
		}
	}
	t.Fatal("the throttle never let a guess through")
}

// TestOwnerLogsInDuringAttack is the acceptance test: after 50 wrong
// passwords for a user from one address, the owner's right password from
// another address gets in at once, by Basic auth and by the login page;
// the attacker's address stays slowed down, and the account page tells
// the owner.
func TestOwnerLogsInDuringAttack(t *testing.T) {
	e := newEnv(t, nil)
	e.user("alice", "alice-password")
	start := e.clock.Now()
	for range 50 {
		e.guess(t, "alice", "203.0.113.66")
	}
	t.Logf("50 checked guesses took the attacker %v of (test) time", e.clock.Now().Sub(start).Round(time.Minute))
	if e.clock.Now().Sub(start) < 3*time.Hour {
		t.Errorf("50 guesses from one address in %v: not slowed enough", e.clock.Now().Sub(start))
	}
	// The attacker is refused, even with the right password.
	_, err := e.svc.PasswordUser(t.Context(), "alice", "alice-password", "203.0.113.66")
	if !errors.Is(err, auth.ErrTooManyAttempts) {
		t.Errorf("attacker's address right after a guess: %v", err)
	}

	// Basic auth from another address.
	req := httptest.NewRequest("GET", "/api/me", nil)
	req.SetBasicAuth("alice", "alice-password")
	if rec := e.serveFrom(req, "198.51.100.7"); rec.Code != 200 || rec.Body.String() != "alice" {
		t.Errorf("owner by Basic auth from another address: %d %s", rec.Code, rec.Body)
	}
	// The login page from a third address.
	rec := e.serveFrom(httptest.NewRequest("GET", "/account/login/", nil), "192.0.2.8")
	csrf := forms(rec.Body.String())["/account/login/"].fields.Get("csrf_token")
	form := url.Values{"username": {"alice"}, "password": {"alice-password"}, "csrf_token": {csrf}}
	req = httptest.NewRequest("POST", "/account/login/", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.AddCookie(&http.Cookie{Name: "audiopost_login_csrf", Value: csrf})
	rec = e.serveFrom(req, "192.0.2.8")
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("owner by the login page from another address: %d %s", rec.Code, rec.Body)
	}
	// The account page shows the refused attempt.
	req = httptest.NewRequest("GET", "/account/", nil)
	for _, c := range rec.Result().Cookies() {
		req.AddCookie(c)
	}
	rec = e.serveFrom(req, "192.0.2.8")
	if !strings.Contains(rec.Body.String(), "were refused") || !strings.Contains(rec.Body.String(), "203.0.113.66") {
		t.Errorf("account page without the refused logins:\n%s", rec.Body)
	}
}

// TestThrottleAcrossProcesses: two API processes on one store share the
// counters, so an attacker gains nothing by spreading guesses over them.
func TestThrottleAcrossProcesses(t *testing.T) {
	e := newEnv(t, func(c *auth.Config) { c.Throttle = auth.Throttle{PairFree: 4} })
	e2 := newEnvOn(t, e.st, e.clock, func(c *auth.Config) { c.Throttle = auth.Throttle{PairFree: 4} })
	e.user("alice", "alice-password")
	ctx := t.Context()
	for i := range 4 {
		svc := e.svc
		if i%2 == 1 {
			svc = e2.svc
		}
		if _, err := svc.PasswordUser(ctx, "alice", "nope", "203.0.113.1"); !errors.Is(err, auth.ErrBadCredentials) {
			t.Fatalf("guess %d: %v", i, err)
		}
	}
	for _, svc := range []*auth.Server{e.svc, e2.svc} {
		if _, err := svc.PasswordUser(ctx, "alice", "nope", "203.0.113.1"); !errors.Is(err, auth.ErrTooManyAttempts) {
			t.Errorf("5th guess: %v", err)
		}
	}
	// Username and email share the counter.
	if _, err := e.svc.PasswordUser(ctx, "alice@example.org", "nope", "203.0.113.1"); !errors.Is(err, auth.ErrTooManyAttempts) {
		t.Errorf("by email: %v", err)
	}
}

// TestUserCeiling: guesses from many addresses fill the per-user ceiling;
// then new addresses wait, while an address the owner logged in from
// before still gets in.
func TestUserCeiling(t *testing.T) {
	e := newEnv(t, func(c *auth.Config) { c.Throttle = auth.Throttle{UserCeiling: 10, PairFree: 100} })
	e.user("alice", "alice-password")
	ctx := t.Context()
	// By email: the check is then cached for that login only.
	if _, err := e.svc.PasswordUser(ctx, "alice@example.org", "alice-password", "192.0.2.1"); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		ip := "203.0.113." + string(rune('a'+i))
		if _, err := e.svc.PasswordUser(ctx, "alice", "nope", ip); !errors.Is(err, auth.ErrBadCredentials) {
			t.Fatalf("guess %d: %v", i, err)
		}
	}
	if _, err := e.svc.PasswordUser(ctx, "alice", "alice-password", "198.51.100.1"); !errors.Is(err, auth.ErrTooManyAttempts) {
		t.Errorf("new address above the ceiling: %v", err)
	}
	if _, err := e.svc.PasswordUser(ctx, "alice", "alice-password", "192.0.2.1"); err != nil {
		t.Errorf("known address above the ceiling: %v", err)
	}
	// The ceiling leaks: one attempt per UserLeak.
	e.clock.Add(auth.DefaultUserLeak)
	if _, err := e.svc.PasswordUser(ctx, "alice", "alice-password", "198.51.100.1"); err != nil {
		t.Errorf("new address after the leak: %v", err)
	}
}

// TestAddressSpraying: one address guessing across many users is slowed
// down by its own counter.
func TestAddressSpraying(t *testing.T) {
	e := newEnv(t, func(c *auth.Config) { c.Throttle = auth.Throttle{AddressBurst: 5} })
	ctx := t.Context()
	for i := range 5 {
		e.user("user"+string(rune('a'+i)), "some-password")
	}
	for i := range 5 {
		if _, err := e.svc.PasswordUser(ctx, "user"+string(rune('a'+i)), "nope", "203.0.113.9"); !errors.Is(err, auth.ErrBadCredentials) {
			t.Fatalf("guess %d: %v", i, err)
		}
	}
	if _, err := e.svc.PasswordUser(ctx, "userz", "nope", "203.0.113.9"); !errors.Is(err, auth.ErrTooManyAttempts) {
		t.Errorf("6th user from one address: %v", err)
	}
	e.user("alice", "alice-password")
	if _, err := e.svc.PasswordUser(ctx, "alice", "alice-password", "198.51.100.9"); err != nil {
		t.Errorf("another address: %v", err)
	}
}
