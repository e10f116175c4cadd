package auth_test

import (
	"bytes"
	"context"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/transport/auth"
)

func (e *env) oauthConfig(c storage.OAuthClient, secret, redirect string) *oauth2.Config {
	a, tk := e.endpoint()
	return &oauth2.Config{ClientID: c.ID, ClientSecret: secret, RedirectURL: redirect,
		Endpoint: oauth2.Endpoint{AuthURL: a, TokenURL: tk}}
}

func TestAuthorizationCodeFlow(t *testing.T) {
	e := newEnv(t, nil)
	e.user("alice", "alice-password")
	c, secret := e.client("", false, "https://app.example/cb")
	conf := e.oauthConfig(c, secret, "https://app.example/cb")

	loc := e.browser("alice", "alice-password").authorize(conf.AuthCodeURL("st4te"))
	if got := loc.Scheme + "://" + loc.Host + loc.Path; got != "https://app.example/cb" {
		t.Fatalf("redirected to %s", loc)
	}
	if loc.Query().Get("state") != "st4te" || loc.Query().Get("code") == "" {
		t.Fatalf("redirect query %q", loc.RawQuery)
	}
	tok, err := conf.Exchange(t.Context(), loc.Query().Get("code"))
	if err != nil {
		t.Fatal(err)
	}
	if tok.Extra("user_name") != "alice" || tok.Type() != "Bearer" || tok.Extra("scope") != "" {
		t.Errorf("token %+v user_name %v scope %q", tok, tok.Extra("user_name"), tok.Extra("scope"))
	}
	if exp := tok.Extra("expires_in").(float64); exp != auth.DefaultTokenTTL.Seconds() {
		t.Errorf("expires_in %v", exp)
	}
	if st, body := e.me(bearer(tok.AccessToken)); st != 200 || body != "alice" {
		t.Errorf("token as header: %d %q", st, body)
	}
	if st, body := e.me(query(tok.AccessToken)); st != 200 || body != "alice" {
		t.Errorf("token as bearer_token: %d %q", st, body)
	}
	// The oauth2 package's own client sends it too.
	resp, err := conf.Client(t.Context(), tok).Get(e.srv.URL + "/api/me")
	if err != nil || resp.StatusCode != 200 {
		t.Errorf("oauth2 client: %v %v", resp, err)
	}
	resp.Body.Close()

	// The token expires with TokenTTL.
	e.clock.Add(auth.DefaultTokenTTL)
	if st, _ := e.me(bearer(tok.AccessToken)); st != 401 {
		t.Errorf("expired token: %d", st)
	}
}

func TestDenyAndBadAuthorizeRequests(t *testing.T) {
	e := newEnv(t, nil)
	e.user("alice", "alice-password")
	c, secret := e.client("", false, "https://app.example/cb")
	conf := e.oauthConfig(c, secret, "https://app.example/cb")
	b := e.browser("alice", "alice-password")
	b.authorize(conf.AuthCodeURL("x")) // logs in

	resp, page := b.do("GET", conf.AuthCodeURL("s1"), nil)
	resp, _ = b.post(page, "/oauth2/authorize/", url.Values{"decision": {"deny"}})
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != 302 || loc.Query().Get("error") != "access_denied" || loc.Query().Get("state") != "s1" || loc.Query().Has("code") {
		t.Errorf("deny: %d %s", resp.StatusCode, loc)
	}
	// A forged consent without the session's CSRF token issues nothing.
	f := forms(page)["/oauth2/authorize/"].fields
	f.Set("csrf_token", "forged")
	f.Set("decision", "approve")
	resp, _ = b.do("POST", e.srv.URL+"/oauth2/authorize/", f)
	if resp.StatusCode != 403 || resp.Header.Get("Location") != "" {
		t.Errorf("forged consent: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	// Unknown client: an error page, never a redirect.
	resp, _ = b.do("GET", e.srv.URL+"/oauth2/authorize/?response_type=code&client_id=nope&redirect_uri=https://evil.example/", nil)
	if resp.StatusCode != 400 || resp.Header.Get("Location") != "" {
		t.Errorf("unknown client: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	// Wrong response_type goes back to the (trusted) redirect URI.
	resp, _ = b.do("GET", strings.Replace(conf.AuthCodeURL("s2"), "response_type=code", "response_type=token", 1), nil)
	loc, _ = url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != 302 || loc.Query().Get("error") != "unsupported_response_type" {
		t.Errorf("response_type=token: %d %s", resp.StatusCode, loc)
	}
}

func TestTokenResponseFieldsMultipart(t *testing.T) {
	e := newEnv(t, nil)
	e.user("alice", "alice-password")
	c, secret := e.client("", false, "https://app.example/cb")
	conf := e.oauthConfig(c, secret, "https://app.example/cb")
	code := e.browser("alice", "alice-password").authorize(conf.AuthCodeURL("s")).Query().Get("code")

	// The spec's request: a multipart form with the client credentials in
	// the body.
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for _, kv := range [][2]string{{"client_id", c.ID}, {"client_secret", secret}, {"redirect_uri", "https://app.example/cb"},
		{"grant_type", "authorization_code"}, {"code", code}} {
		mw.WriteField(kv[0], kv[1])
	}
	mw.Close()
	resp, err := http.Post(e.srv.URL+"/oauth2/token/", mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	m := decodeJSON(t, resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %v", resp.StatusCode, m)
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if want := []string{"access_token", "expires_in", "scope", "token_type", "user_name"}; !slices.Equal(keys, want) {
		t.Errorf("fields %v, want %v", keys, want)
	}
	if m["token_type"] != "bearer" || m["scope"] != "" || m["user_name"] != "alice" {
		t.Errorf("response %v", m)
	}
	if resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("Cache-Control %q", resp.Header.Get("Cache-Control"))
	}
}

func TestPKCE(t *testing.T) {
	e := newEnv(t, nil)
	e.user("alice", "alice-password")
	pub, _ := e.client("", true, "http://127.0.0.1:9/cb")
	conf := e.oauthConfig(pub, "", "http://127.0.0.1:9/cb")
	b := e.browser("alice", "alice-password")

	verifier := oauth2.GenerateVerifier()
	loc := b.authorize(conf.AuthCodeURL("s", oauth2.S256ChallengeOption(verifier)))
	tok, err := conf.Exchange(t.Context(), loc.Query().Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	if st, body := e.me(bearer(tok.AccessToken)); st != 200 || body != "alice" {
		t.Errorf("PKCE token: %d %q", st, body)
	}

	// A wrong verifier or none at all is rejected.
	for _, opts := range [][]oauth2.AuthCodeOption{{oauth2.VerifierOption(oauth2.GenerateVerifier())}, nil} {
		loc = b.authorize(conf.AuthCodeURL("s", oauth2.S256ChallengeOption(verifier)))
		if _, err := conf.Exchange(t.Context(), loc.Query().Get("code"), opts...); err == nil || !strings.Contains(err.Error(), "invalid_grant") {
			t.Errorf("verifier %v: err %v", opts, err)
		}
	}
	// A public client must use PKCE, and only S256.
	for _, u := range []string{conf.AuthCodeURL("s"), conf.AuthCodeURL("s", oauth2.SetAuthURLParam("code_challenge", strings.Repeat("a", 43)), oauth2.SetAuthURLParam("code_challenge_method", "plain"))} {
		resp, _ := b.do("GET", u, nil)
		loc, _ := url.Parse(resp.Header.Get("Location"))
		if resp.StatusCode != 302 || loc.Query().Get("error") != "invalid_request" {
			t.Errorf("%s: %d %s", u, resp.StatusCode, loc)
		}
	}
	// A confidential client may use PKCE too, and then must send the verifier.
	c, secret := e.client("", false, "https://app.example/cb")
	cc := e.oauthConfig(c, secret, "https://app.example/cb")
	loc = b.authorize(cc.AuthCodeURL("s", oauth2.S256ChallengeOption(verifier)))
	if _, err := cc.Exchange(t.Context(), loc.Query().Get("code")); err == nil {
		t.Error("confidential client redeemed a PKCE code without the verifier")
	}
	loc = b.authorize(cc.AuthCodeURL("s", oauth2.S256ChallengeOption(verifier)))
	if _, err := cc.Exchange(t.Context(), loc.Query().Get("code"), oauth2.VerifierOption(verifier)); err != nil {
		t.Errorf("confidential client with PKCE: %v", err)
	}
}

func TestCodeRedeemedTwiceRevokesToken(t *testing.T) {
	e := newEnv(t, nil)
	e.user("alice", "alice-password")
	c, secret := e.client("", false, "https://app.example/cb")
	conf := e.oauthConfig(c, secret, "https://app.example/cb")
	code := e.browser("alice", "alice-password").authorize(conf.AuthCodeURL("s")).Query().Get("code")
	tok, err := conf.Exchange(t.Context(), code)
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := e.me(bearer(tok.AccessToken)); st != 200 {
		t.Fatalf("first token: %d", st)
	}
	_, err = conf.Exchange(t.Context(), code)
	var re *oauth2.RetrieveError
	if !asRetrieve(err, &re) || re.ErrorCode != "invalid_grant" || re.Response.StatusCode != 400 {
		t.Fatalf("second redeem: %v", err)
	}
	if st, _ := e.me(bearer(tok.AccessToken)); st != 401 {
		t.Errorf("token of a replayed code still works: %d", st)
	}
}

func asRetrieve(err error, re **oauth2.RetrieveError) bool {
	r, ok := err.(*oauth2.RetrieveError)
	*re = r
	return ok
}

func TestRedirectURIMustMatchExactly(t *testing.T) {
	e := newEnv(t, nil)
	e.user("alice", "alice-password")
	const reg = "https://app.example:8443/cb"
	variants := []string{
		"https://app.example:8443/cb/",      // trailing slash
		"https://APP.example:8443/cb",       // case
		"https://app.example:8443/CB",       // case of the path
		"https://app.example:9443/cb",       // port
		"https://app.example/cb",            // default port
		"https://app.example:8443/cb?x=1",   // query
		"http://app.example:8443/cb",        // scheme
		"https://app.example:8443/cb/../cb", // dot segments
	}
	c, secret := e.client("", false, reg)
	b := e.browser("alice", "alice-password")
	b.authorize(e.oauthConfig(c, secret, reg).AuthCodeURL("s")) // logs in

	// At authorize: an error page, never a redirect to the unregistered URI.
	for _, v := range variants {
		resp, page := b.do("GET", e.oauthConfig(c, secret, v).AuthCodeURL("s"), nil)
		if resp.StatusCode != 400 || resp.Header.Get("Location") != "" || !strings.Contains(page, "redirect_uri") {
			t.Errorf("authorize with %s: %d %s", v, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	// At the token endpoint, for a registered URI and for one bound to the
	// code by a client that registered none.
	open, openSecret := e.client("", false)
	for _, cl := range []struct {
		c      storage.OAuthClient
		secret string
	}{{c, secret}, {open, openSecret}} {
		for _, v := range variants {
			code := b.authorize(e.oauthConfig(cl.c, cl.secret, reg).AuthCodeURL("s")).Query().Get("code")
			if _, err := e.oauthConfig(cl.c, cl.secret, v).Exchange(t.Context(), code); err == nil || !strings.Contains(err.Error(), "invalid_grant") {
				t.Errorf("client with %d URIs, token with %s: %v", len(cl.c.RedirectURIs), v, err)
			}
		}
		code := b.authorize(e.oauthConfig(cl.c, cl.secret, reg).AuthCodeURL("s")).Query().Get("code")
		if _, err := e.oauthConfig(cl.c, cl.secret, reg).Exchange(t.Context(), code); err != nil {
			t.Errorf("client with %d URIs, exact URI: %v", len(cl.c.RedirectURIs), err)
		}
	}
	// A client that registered none needs the URI at authorize.
	resp, _ := b.do("GET", e.oauthConfig(open, openSecret, "").AuthCodeURL("s"), nil)
	if resp.StatusCode != 400 {
		t.Errorf("no redirect URI anywhere: %d", resp.StatusCode)
	}
}

func TestExpiredCodeRejected(t *testing.T) {
	e := newEnv(t, func(c *auth.Config) { c.CodeTTL = time.Minute })
	e.user("alice", "alice-password")
	c, secret := e.client("", false, "https://app.example/cb")
	conf := e.oauthConfig(c, secret, "https://app.example/cb")
	b := e.browser("alice", "alice-password")
	code := b.authorize(conf.AuthCodeURL("s")).Query().Get("code")
	e.clock.Add(time.Minute)
	if _, err := conf.Exchange(t.Context(), code); err == nil || !strings.Contains(err.Error(), "expired") {
		t.Errorf("expired code: %v", err)
	}
	code = b.authorize(conf.AuthCodeURL("s")).Query().Get("code")
	e.clock.Add(time.Minute - time.Second)
	if _, err := conf.Exchange(t.Context(), code); err != nil {
		t.Errorf("code 1 s before expiry: %v", err)
	}
}

func TestPasswordGrant(t *testing.T) {
	e := newEnv(t, nil)
	e.user("alice", "alice-password")
	c, secret := e.client("", false)
	conf := e.oauthConfig(c, secret, "")
	tok, err := conf.PasswordCredentialsToken(t.Context(), "alice", "alice-password")
	if err != nil {
		t.Fatal(err)
	}
	if tok.Extra("user_name") != "alice" {
		t.Errorf("user_name %v", tok.Extra("user_name"))
	}
	if st, body := e.me(bearer(tok.AccessToken)); st != 200 || body != "alice" {
		t.Errorf("header: %d %q", st, body)
	}
	if st, body := e.me(query(tok.AccessToken)); st != 200 || body != "alice" {
		t.Errorf("bearer_token: %d %q", st, body)
	}
	// By email too.
	if _, err := conf.PasswordCredentialsToken(t.Context(), "alice@example.org", "alice-password"); err != nil {
		t.Errorf("email login: %v", err)
	}

	_, err = conf.PasswordCredentialsToken(t.Context(), "alice", "wrong-password")
	var re *oauth2.RetrieveError
	if !asRetrieve(err, &re) || re.ErrorCode != "invalid_grant" {
		t.Errorf("wrong password: %v", err)
	}
	bad := *conf
	bad.ClientSecret = "wrong-secret"
	for _, style := range []oauth2.AuthStyle{oauth2.AuthStyleInHeader, oauth2.AuthStyleInParams} {
		bad.Endpoint.AuthStyle = style
		_, err = bad.PasswordCredentialsToken(t.Context(), "alice", "alice-password")
		if !asRetrieve(err, &re) || re.ErrorCode != "invalid_client" || re.Response.StatusCode != 401 {
			t.Errorf("wrong client secret (style %d): %v", style, err)
		}
	}
	// A public client needs no secret; a confidential one does.
	pub, _ := e.client("", true)
	if _, err := e.oauthConfig(pub, "", "").PasswordCredentialsToken(t.Context(), "alice", "alice-password"); err != nil {
		t.Errorf("public client: %v", err)
	}
	nosecret := *conf
	nosecret.ClientSecret = ""
	if _, err := nosecret.PasswordCredentialsToken(t.Context(), "alice", "alice-password"); err == nil {
		t.Error("confidential client without its secret got a token")
	}
	// An unsupported grant.
	resp, err := http.PostForm(e.srv.URL+"/oauth2/token/", url.Values{"grant_type": {"client_credentials"}, "client_id": {pub.ID}})
	if err != nil {
		t.Fatal(err)
	}
	m := decodeJSON(t, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || m["error"] != "unsupported_grant_type" || m["error_description"] == "" {
		t.Errorf("client_credentials grant: %d %v", resp.StatusCode, m)
	}
}

func TestTokenEndpointWithoutTrailingSlash(t *testing.T) {
	e := newEnv(t, nil)
	e.user("alice", "alice-password")
	c, secret := e.client("", false)
	conf := e.oauthConfig(c, secret, "")
	conf.Endpoint.TokenURL = strings.TrimSuffix(conf.Endpoint.TokenURL, "/")
	if _, err := conf.PasswordCredentialsToken(context.Background(), "alice", "alice-password"); err != nil {
		t.Error(err)
	}
}

// The routes coexist with a catch-all the embedding handler registers on
// the same mux, and wrong methods are refused.
func TestRoutesBesideCatchAll(t *testing.T) {
	st := newEnv(t, nil).st
	for _, prefix := range []string{"", "/sub"} {
		mux := http.NewServeMux()
		mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(299) })
		mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(298) })
		auth.New(st, auth.Config{BaseURL: "http://x" + prefix}).Routes(mux, prefix)
		for _, c := range []struct {
			method, path string
			want         int
		}{
			{"GET", prefix + "/oauth2/token/", 405},
			{"POST", prefix + "/oauth2/token/", 401},
			{"POST", prefix + "/oauth2/token", 401},
			{"GET", prefix + "/oauth2/authorize/", 400},
			{"GET", prefix + "/account/login/", 200},
			{"GET", prefix + "/account/nope/", 404},
			{"PUT", prefix + "/account/", 298},
			{"GET", prefix + "/elsewhere", 299},
		} {
			if rec := newRecorder(mux, c.method, c.path, "", nil); rec.code != c.want {
				t.Errorf("%s %s: %d, want %d", c.method, c.path, rec.code, c.want)
			}
		}
	}
}

func TestCodeOfAnotherClientRejected(t *testing.T) {
	e := newEnv(t, nil)
	e.user("alice", "alice-password")
	a, as := e.client("", false, "https://app.example/cb")
	b, bs := e.client("", false, "https://app.example/cb")
	code := e.browser("alice", "alice-password").authorize(e.oauthConfig(a, as, "https://app.example/cb").AuthCodeURL("s")).Query().Get("code")
	if _, err := e.oauthConfig(b, bs, "https://app.example/cb").Exchange(t.Context(), code); err == nil || !strings.Contains(err.Error(), "invalid_grant") {
		t.Errorf("client b redeemed a's code: %v", err)
	}
}
