package main

import (
	"bytes"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/storage/sqlstore"
	"github.com/audiopost/audiopost/storage/transfer"
	"github.com/audiopost/audiopost/storage/transfer/transfertest"
	"github.com/audiopost/audiopost/transport/httpapi"
	"github.com/audiopost/audiopost/transport/outbound"
)

// The account, key and service commands and the API (its JSON routes and
// the account pages) call the same operations of production/app. Each
// test below runs one operation through both, on one data directory, and
// checks that each sees what the other did and refuses what the other
// refuses, in the same words.

// opsEnv is a data directory the commands use (-data) and the API over
// it, reaching loopback servers as -allow-private-fetch lets the
// commands.
type opsEnv struct {
	t    *testing.T
	dir  string
	base string
}

func newOpsEnv(t *testing.T) *opsEnv {
	t.Helper()
	dir := t.TempDir()
	d, err := sqlstore.OpenDataDir(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	// The key the service command makes beside the database.
	key, _, err := storage.EnsureSecretKeyFile(filepath.Join(dir, secretKeyName))
	if err != nil {
		t.Fatal(err)
	}
	d.Store.SetSecretKey(key)
	srv := httptest.NewUnstartedServer(nil)
	e := &opsEnv{t: t, dir: dir, base: "http://" + srv.Listener.Addr().String()}
	ob := outbound.New(outbound.Config{AllowLoopback: true, AllowPrivate: true, Timeout: -1})
	h, err := httpapi.NewHandler(httpapi.Config{Store: d.Store, Blobs: d.Blobs, BaseURL: e.base, PasswordIterations: passwordIterations,
		Transfer: &transfer.Options{Dial: ob.DialContext, HTTPClient: ob.HTTPClient()},
		Fetcher:  outbound.New(outbound.Config{AllowLoopback: true, AllowPrivate: true})})
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = h
	srv.Start()
	t.Cleanup(srv.Close)
	return e
}

// cli runs a command on the data directory.
func (e *opsEnv) cli(args ...string) (string, error) {
	e.t.Helper()
	return runCLI(e.t, append(args, "-data", e.dir)...)
}

func (e *opsEnv) mustCLI(args ...string) string {
	e.t.Helper()
	out, err := e.cli(args...)
	if err != nil {
		e.t.Fatalf("%s: %v", strings.Join(args, " "), err)
	}
	return out
}

// apiResult is an envelope of the API.
type apiResult struct {
	status int
	Data   json.RawMessage   `json:"data"`
	Form   map[string]string `json:"form_errors"`
	Code   *string           `json:"error_code"`
}

// api calls the JSON API with Basic credentials ("user:password") or a
// bearer key.
func (e *opsEnv) api(method, path, cred string, body any) apiResult {
	e.t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, e.base+path, r)
	if err != nil {
		e.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if user, pw, ok := strings.Cut(cred, ":"); ok {
		req.SetBasicAuth(user, pw)
	} else if cred != "" {
		req.Header.Set("Authorization", "Bearer "+cred)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	var out apiResult
	raw, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(raw, &out); err != nil {
		e.t.Fatalf("%s %s: HTTP %d, no envelope: %s", method, path, res.StatusCode, raw)
	}
	out.status = res.StatusCode
	return out
}

func (r apiResult) into(t *testing.T, v any) {
	t.Helper()
	if r.status != 200 {
		t.Fatalf("HTTP %d: %s %v", r.status, r.Data, r.Form)
	}
	if err := json.Unmarshal(r.Data, v); err != nil {
		t.Fatal(err)
	}
}

// accountPages is a browser logged in to the account pages.
type accountPages struct {
	e *opsEnv
	c *http.Client
}

var pageCSRF = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

func (e *opsEnv) logIn(username, password string) *accountPages {
	e.t.Helper()
	jar, _ := cookiejar.New(nil)
	b := &accountPages{e: e, c: &http.Client{Jar: jar}}
	login := b.get("/account/login/")
	if body := b.post("/account/login/", url.Values{"csrf_token": {csrf(e.t, login)}, "next": {"/account/"}, "username": {username}, "password": {password}}); !strings.Contains(body, "API keys") {
		e.t.Fatalf("logging in as %s did not reach the account page:\n%s", username, body)
	}
	return b
}

func (b *accountPages) get(path string) string {
	b.e.t.Helper()
	res, err := b.c.Get(b.e.base + path)
	if err != nil {
		b.e.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return string(raw)
}

// post sends a form with the session's token (follows the redirect).
func (b *accountPages) post(path string, form url.Values) string {
	b.e.t.Helper()
	if form.Get("csrf_token") == "" {
		form.Set("csrf_token", csrf(b.e.t, b.get("/account/")))
	}
	res, err := b.c.PostForm(b.e.base+path, form)
	if err != nil {
		b.e.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return string(raw)
}

func csrf(t *testing.T, page string) string {
	t.Helper()
	m := pageCSRF.FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no csrf_token in:\n%s", page)
	}
	return html.UnescapeString(m[1])
}

// user is GET /api/user.json as cred.
func (e *opsEnv) user(cred string) (username string, credits float64, status int) {
	e.t.Helper()
	r := e.api("GET", "/api/user.json", cred, nil)
	if r.status != 200 {
		return "", 0, r.status
	}
	var u struct {
		Username string  `json:"username"`
		Credits  float64 `json:"credits"`
	}
	r.into(e.t, &u)
	return u.Username, u.Credits, r.status
}

const carolPassword = "carol's first password"

// userAddThroughBoth: an account the command adds is the one the API
// authenticates; a username the command refuses is refused in the
// operation's words.
func userAddThroughBoth(t *testing.T, e *opsEnv) {
	e.mustCLI("user", "add", "-username", "carol", "-password", carolPassword)
	if name, _, status := e.user("carol:" + carolPassword); name != "carol" {
		t.Errorf("the API does not know the user the command added: HTTP %d", status)
	}
	if _, err := e.cli("user", "add", "-username", "carol", "-password", carolPassword); err == nil || !strings.Contains(err.Error(), "conflict") {
		t.Errorf("the same username again: %v", err)
	}
	if _, err := e.cli("user", "add", "-username", "bad name", "-password", carolPassword); err == nil ||
		!strings.Contains(err.Error(), `username "bad name" may only contain letters, digits and . _ + -`) {
		t.Errorf("a bad username: %v", err)
	}
}

// userPasswdThroughBoth: after the command sets a password, the API
// takes the new one and refuses the old.
func userPasswdThroughBoth(t *testing.T, e *opsEnv) {
	e.mustCLI("user", "add", "-username", "erin", "-password", carolPassword)
	e.mustCLI("user", "passwd", "-username", "erin", "-password", "erin's second password")
	if _, _, status := e.user("erin:" + carolPassword); status != http.StatusUnauthorized {
		t.Errorf("the old password: HTTP %d, want 401", status)
	}
	if name, _, _ := e.user("erin:erin's second password"); name != "erin" {
		t.Error("the new password does not open the API")
	}
	if _, err := e.cli("user", "passwd", "-username", "erin", "-password", "short"); err == nil || !strings.Contains(err.Error(), "at least 8 characters") {
		t.Errorf("a short password: %v", err)
	}
}

// userCreditsThroughBoth: credits the command grants are the ones
// user.json shows.
func userCreditsThroughBoth(t *testing.T, e *opsEnv) {
	out := e.mustCLI("user", "credits", "-username", "carol", "-add", "2h30m")
	if _, credits, _ := e.user("carol:" + carolPassword); credits != 2.5 || !strings.Contains(out, "2.50 h") {
		t.Errorf("the API shows %v h after the command granted 2.5 h (it said %q)", credits, out)
	}
	if !strings.Contains(e.mustCLI("user", "list"), "2.50 h") {
		t.Error("user list does not show the credits")
	}
}

// keyLine returns the command's list line of the key called name.
func keyLine(t *testing.T, list, name string) string {
	t.Helper()
	for _, l := range strings.Split(list, "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[1] == name {
			return l
		}
	}
	t.Fatalf("no key %s in:\n%s", name, list)
	return ""
}

// keysThroughBoth: a key the command creates opens the API and is
// listed on the account page; one the account page creates is listed by
// the command; each revokes the other's, and a revoked key opens nothing.
func keysThroughBoth(t *testing.T, e *opsEnv) {
	cliKey := strings.TrimSpace(e.mustCLI("key", "create", "-user", "carol", "-name", "from-cli"))
	if name, _, _ := e.user(cliKey); name != "carol" {
		t.Fatal("the command's key does not open the API")
	}
	pages := e.logIn("carol", carolPassword)
	created := pages.post("/account/keys/", url.Values{"name": {"from-page"}})
	m := regexp.MustCompile(`<code id="secret">([^<]+)</code>`).FindStringSubmatch(created)
	if m == nil {
		t.Fatalf("the account page shows no new key:\n%s", created)
	}
	pageKey := html.UnescapeString(m[1])
	if name, _, _ := e.user(pageKey); name != "carol" {
		t.Fatal("the page's key does not open the API")
	}
	// Listed by both.
	list := e.mustCLI("key", "list", "-user", "carol")
	keyLine(t, list, "from-page")
	if !strings.Contains(pages.get("/account/"), "from-cli") {
		t.Error("the account page does not list the command's key")
	}
	// A name both refuse alike.
	if _, err := e.cli("key", "create", "-user", "carol", "-name", strings.Repeat("k", 201)); err == nil || !strings.Contains(err.Error(), "key name must have 1 to 200 characters") {
		t.Errorf("the command took a long name: %v", err)
	}
	if body := pages.post("/account/keys/", url.Values{"name": {strings.Repeat("k", 201)}}); !strings.Contains(body, "key name must have 1 to 200 characters") {
		t.Error("the account page took a long name")
	}
	// Each revokes the other's; another user's key is not found.
	pageID := strings.Fields(keyLine(t, list, "from-page"))[0]
	cliID := strings.Fields(keyLine(t, list, "from-cli"))[0]
	if _, err := e.cli("key", "revoke", "-user", "dave", pageID); err == nil {
		t.Error("dave revoked carol's key")
	}
	e.mustCLI("key", "revoke", "-user", "carol", pageID)
	pages.post("/account/keys/revoke/", url.Values{"id": {cliID}})
	for name, key := range map[string]string{"from-page": pageKey, "from-cli": cliKey} {
		if _, _, status := e.user(key); status != http.StatusUnauthorized {
			t.Errorf("the revoked key %s still opens the API: HTTP %d", name, status)
		}
		if line := keyLine(t, e.mustCLI("key", "list", "-user", "carol"), name); !strings.Contains(line, "revoked") {
			t.Errorf("the command lists %q", line)
		}
	}
}

// sftpService starts an SFTP server with a file in its directory.
func sftpService(t *testing.T) (*transfertest.Server, string, string) {
	t.Helper()
	srv := transfertest.Start(t, "sftp")
	if err := os.WriteFile(filepath.Join(srv.Dir, "in.wav"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	host, port, _ := strings.Cut(srv.Addr, ":")
	return srv, host, port
}

// serviceAddThroughBoth: a service the command adds is the one the
// API lists, with the same public settings and no secret; a setting both
// refuse is refused in the same words.
func serviceAddThroughBoth(t *testing.T, e *opsEnv, srv *transfertest.Server, host, port string) {
	cred := "carol:" + carolPassword
	out, err := e.cli("service", "add", "-user", "carol", "-type", "sftp", "-set", "host="+host, "-set", "port="+port,
		"-set", "username="+srv.User, "-set", "password="+srv.Password, "-set", "colour=red", "-allow-private-fetch")
	r := e.api("POST", "/api/services.json", cred, map[string]any{"type": "sftp", "host": host, "port": port,
		"username": srv.User, "password": srv.Password, "colour": "red"})
	if err == nil || r.status != 400 || r.Form["colour"] == "" || !strings.Contains(err.Error(), "colour: "+r.Form["colour"]) {
		t.Errorf("an unknown setting: the command %v %q, the API %d %v", err, out, r.status, r.Form)
	}
	out = e.mustCLI("service", "add", "-user", "carol", "-type", "sftp", "-name", "files", "-set", "host="+host, "-set", "port="+port,
		"-set", "username="+srv.User, "-set", "password="+srv.Password, "-allow-private-fetch")
	id := strings.Fields(strings.TrimPrefix(out, "added service "))[0]
	var svc map[string]any
	e.api("GET", "/api/service/"+id+".json", cred, nil).into(t, &svc)
	if svc["display_name"] != "files" || svc["host"] != host || svc["password"] != nil || svc["incoming"] != true {
		t.Errorf("the API shows %v", svc)
	}
	var listed []map[string]any
	e.api("GET", "/api/services.json", cred, nil).into(t, &listed)
	found := false
	for _, l := range listed {
		found = found || l["uuid"] == id
	}
	if !found {
		t.Errorf("the API does not list %s: %v", id, listed)
	}
}

// serviceLsThroughBoth: a service the API registers is the one the
// command lists, with its settings and credentials named, not shown.
func serviceLsThroughBoth(t *testing.T, e *opsEnv, srv *transfertest.Server, host, port string) {
	var svc map[string]any
	e.api("POST", "/api/services.json", "carol:"+carolPassword, map[string]any{"type": "sftp", "display_name": "via api",
		"host": host, "port": port, "username": srv.User, "password": srv.Password}).into(t, &svc)
	out := e.mustCLI("service", "ls", "-user", "carol")
	if !strings.Contains(out, svc["uuid"].(string)) || !strings.Contains(out, "via api") || !strings.Contains(out, "host="+host) ||
		!strings.Contains(out, "password set") || strings.Contains(out, srv.Password) {
		t.Errorf("the command lists %q", out)
	}
}

// serviceTestThroughBoth: the command and the API test a service
// alike: the same files, and another user's service is not found.
func serviceTestThroughBoth(t *testing.T, e *opsEnv, srv *transfertest.Server, host, port string) {
	out := e.mustCLI("service", "add", "-user", "carol", "-type", "sftp", "-set", "host="+host, "-set", "port="+port,
		"-set", "username="+srv.User, "-set", "password="+srv.Password, "-allow-private-fetch")
	id := strings.Fields(strings.TrimPrefix(out, "added service "))[0]
	var tested struct {
		Files []string `json:"files"`
	}
	e.api("POST", "/api/service/"+id+"/test.json", "carol:"+carolPassword, map[string]any{}).into(t, &tested)
	out = e.mustCLI("service", "test", id, "-user", "carol", "-allow-private-fetch")
	if len(tested.Files) != 1 || tested.Files[0] != "in.wav" || !strings.HasPrefix(out, "ok: 1 file(s)") || !strings.Contains(out, "in.wav\t1") {
		t.Errorf("the API found %v, the command %q", tested.Files, out)
	}
	if r := e.api("POST", "/api/service/"+id+"/test.json", "dave:"+carolPassword, map[string]any{}); r.status != 404 {
		t.Errorf("dave tested carol's service through the API: HTTP %d", r.status)
	}
	if _, err := e.cli("service", "test", id, "-user", "dave", "-allow-private-fetch"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("dave tested carol's service through the command: %v", err)
	}
}

// serviceRmThroughBoth: what one removes is gone for the other.
func serviceRmThroughBoth(t *testing.T, e *opsEnv, srv *transfertest.Server, host, port string) {
	cred := "carol:" + carolPassword
	add := func() string {
		var svc map[string]any
		e.api("POST", "/api/services.json", cred, map[string]any{"type": "sftp", "host": host, "port": port,
			"username": srv.User, "password": srv.Password}).into(t, &svc)
		return svc["uuid"].(string)
	}
	first, second := add(), add()
	e.mustCLI("service", "rm", first, "-user", "carol")
	if r := e.api("GET", "/api/service/"+first+".json", cred, nil); r.status != 404 {
		t.Errorf("the API still has the service the command removed: HTTP %d", r.status)
	}
	if r := e.api("DELETE", "/api/service/"+second+".json", cred, nil); r.status != 200 {
		t.Fatalf("DELETE: HTTP %d", r.status)
	}
	if _, err := e.cli("service", "rm", second, "-user", "carol"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("the command removed the service the API removed: %v", err)
	}
}

// TestAccountOperationsThroughBoth runs the user and key operations
// through the commands and the API on one data directory.
func TestAccountOperationsThroughBoth(t *testing.T) {
	e := newOpsEnv(t)
	t.Run("user add", func(t *testing.T) { userAddThroughBoth(t, e) })
	t.Run("user passwd", func(t *testing.T) { userPasswdThroughBoth(t, e) })
	t.Run("user credits", func(t *testing.T) { userCreditsThroughBoth(t, e) })
	e.mustCLI("user", "add", "-username", "dave", "-password", carolPassword)
	t.Run("key create, list, revoke", func(t *testing.T) { keysThroughBoth(t, e) })
}

// TestServiceOperationsThroughBoth runs the service operations through
// the commands and the API on one data directory and one SFTP server.
func TestServiceOperationsThroughBoth(t *testing.T) {
	srv, host, port := sftpService(t)
	e := newOpsEnv(t)
	e.mustCLI("user", "add", "-username", "carol", "-password", carolPassword)
	e.mustCLI("user", "add", "-username", "dave", "-password", carolPassword)
	for _, op := range []struct {
		name string
		fn   func(*testing.T, *opsEnv, *transfertest.Server, string, string)
	}{
		{"service add", serviceAddThroughBoth}, {"service ls", serviceLsThroughBoth},
		{"service test", serviceTestThroughBoth}, {"service rm", serviceRmThroughBoth},
	} {
		t.Run(op.name, func(t *testing.T) { op.fn(t, e, srv, host, port) })
	}
}
