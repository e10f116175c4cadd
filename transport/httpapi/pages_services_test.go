package httpapi_test

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/audiopost/audiopost/storage/transfer/transfertest"
)

// The services page lists, adds (through the API's checks and connection
// test), tests and removes a user's services, with CSRF on every form and
// secrets never in a page.
func TestPagesServices(t *testing.T) {
	srv := transfertest.Start(t, "webdav")
	os.WriteFile(filepath.Join(srv.Dir, "in.wav"), []byte("x"), 0o644)
	e := newEnv(t, withLoopback)
	b := e.browser()
	b.login(e.userA)

	p := b.get("/services/")
	if p.status != 200 {
		t.Fatalf("services page: %d\n%s", p.status, p.body)
	}
	wantContains(t, p, `id="no-services"`, `<a href="/services/">Services</a>`, `<option value="sftp"`)
	if strings.Contains(p.body, `id="add-form"`) {
		t.Error("the add form shows before a type is chosen")
	}
	p = b.get("/services/?type=webdav")
	wantContains(t, p, `id="add-form"`, `name="set.url"`, `name="set.password"`, `type="password"`, `Collection URL *`)
	csrf := csrfOf(t, p)
	if bad := b.get("/services/?type=http"); bad.status != 400 {
		t.Errorf("unknown type: %d", bad.status)
	}

	add := func(password string) url.Values {
		return url.Values{"csrf_token": {csrf}, "action": {"add"}, "type": {"webdav"}, "display_name": {"My DAV"},
			"set.url": {"http://" + srv.Addr + "/"}, "set.username": {srv.User}, "set.password": {password}, "set.base_url": {""},
			"incoming": {"false", "true"}, "outgoing": {"false", "true"}, "test": {"false", "true"}}
	}
	// A refused login: the error at the password field, the other values
	// kept, the password not.
	p = b.postForm("/services/", add("wrong password"))
	if p.status != 400 {
		t.Fatalf("wrong password: %d\n%s", p.status, p.body)
	}
	wantContains(t, p, `id="err-password"`, "refused the login", `value="http://`+srv.Addr+`/"`, `value="My DAV"`)
	if strings.Contains(p.body, "wrong password") {
		t.Error("the page shows the password sent")
	}
	// Missing CSRF.
	f := add(srv.Password)
	f.Del("csrf_token")
	if p := b.postForm("/services/", f); p.status != 403 {
		t.Errorf("without CSRF: %d", p.status)
	}
	if n := len(e.must(e.req("GET", "/api/services.json", e.keyA, nil)).list(t)); n != 0 {
		t.Fatalf("%d services stored by refused forms", n)
	}

	p = b.postForm("/services/", add(srv.Password))
	if p.status != http.StatusSeeOther || !strings.HasPrefix(p.header.Get("Location"), "/services/?added=") {
		t.Fatalf("add: %d %s\n%s", p.status, p.header.Get("Location"), p.body)
	}
	p = b.get(p.header.Get("Location"))
	wantContains(t, p, `id="notice"`, "My DAV", "WebDAV", "in and out", "url: http://"+srv.Addr+"/", "password, username set")
	if strings.Contains(p.body, srv.Password) {
		t.Error("the list shows the password")
	}
	l := e.must(e.req("GET", "/api/services.json", e.keyA, nil)).list(t)
	if len(l) != 1 {
		t.Fatalf("services %v", l)
	}
	uuid := l[0].(map[string]any)["uuid"].(string)

	p = b.postForm("/services/", url.Values{"csrf_token": {csrf}, "action": {"test"}, "uuid": {uuid}})
	if p.status != 200 {
		t.Fatalf("test: %d\n%s", p.status, p.body)
	}
	wantContains(t, p, "My DAV answered: 1 file(s)")

	// Another user neither sees nor removes it.
	bob := e.browser()
	bob.login(e.userB)
	bp := bob.get("/services/?type=ftp")
	if strings.Contains(bp.body, uuid) {
		t.Error("bob sees alice's service")
	}
	if p := bob.postForm("/services/", url.Values{"csrf_token": {csrfOf(t, bp)}, "action": {"delete"}, "uuid": {uuid}}); p.status != 404 {
		t.Errorf("bob's delete: %d", p.status)
	}
	// Nor with alice's token, which is bound to her session.
	if p := bob.postForm("/services/", url.Values{"csrf_token": {csrf}, "action": {"delete"}, "uuid": {uuid}}); p.status != 403 {
		t.Errorf("bob with alice's CSRF token: %d", p.status)
	}

	p = b.postForm("/services/", url.Values{"csrf_token": {csrf}, "action": {"delete"}, "uuid": {uuid}})
	if p.status != http.StatusSeeOther {
		t.Fatalf("delete: %d\n%s", p.status, p.body)
	}
	wantContains(t, b.get(p.header.Get("Location")), "The service was removed.", `id="no-services"`)

	// With a bearer token instead of a session, the forms carry it.
	anon := e.browser()
	p = anon.get("/services/?type=sftp&bearer_token=" + e.keyA)
	wantContains(t, p, `name="bearer_token" value="`+e.keyA+`"`, `action="/services/?bearer_token=`+e.keyA+`"`)
	if p := anon.get("/services/"); p.status != http.StatusSeeOther {
		t.Errorf("without credentials: %d", p.status)
	}
}

// In Chromium: choose a type, fill the form, add; the list shows the
// service, and its Test button answers.
func TestPagesServicesBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	// Its own browser and server: the browser tests overlap their waits.
	t.Parallel()
	ctx := newBrowser(t)
	srv := transfertest.Start(t, "sftp")
	host, port, _ := net.SplitHostPort(srv.Addr)
	e := newEnv(t, withLoopback)
	if err := accountsOf(t, e.store).SetPassword(context.Background(), e.userA.Username, testPassword); err != nil {
		t.Fatal(err)
	}
	do(t, ctx, "login", chromedp.Navigate(e.base+"/services/"),
		chromedp.WaitVisible(chromedp.CSS(`input[name=username]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=username]`), e.userA.Username),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), testPassword),
		chromedp.Submit(chromedp.CSS(`input[name=password]`)),
		chromedp.WaitVisible(chromedp.ID("type-form")),
		chromedp.SetValue(chromedp.ID("type"), "sftp"),
		chromedp.Click(chromedp.ID("choose")),
		chromedp.WaitVisible(chromedp.ID("add-form")),
		chromedp.SendKeys(chromedp.ID("display_name"), "Podcast server"),
		chromedp.SendKeys(chromedp.ID("f-host"), host),
		chromedp.SetValue(chromedp.ID("f-port"), port),
		chromedp.SendKeys(chromedp.ID("f-username"), srv.User),
		chromedp.SendKeys(chromedp.ID("f-password"), srv.Password),
		chromedp.Click(chromedp.ID("incoming")), // outgoing only
	)
	screenshot(t, ctx, "services-add.png")
	do(t, ctx, "add", chromedp.Click(chromedp.ID("add")), chromedp.WaitVisible(chromedp.ID("notice")))
	text := run(t, ctx, "page text", chromedp.Text(chromedp.ID("services")))
	for _, want := range []string{"Podcast server", "SFTP", "out", "host: " + host, "password, username set"} {
		if !strings.Contains(text, want) {
			t.Errorf("list lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "in and out") {
		t.Errorf("the unchecked incoming box was not sent as false:\n%s", text)
	}
	// The notice of the add goes, so that the test's is the next one.
	run(t, ctx, "drop notice", chromedp.Evaluate[bool](`document.getElementById("notice").remove(); true`))
	do(t, ctx, "test", chromedp.Click(chromedp.CSS(`#services button[value=test]`)), chromedp.WaitVisible(chromedp.ID("notice")))
	if n := run(t, ctx, "notice", chromedp.Text(chromedp.ID("notice"))); !strings.Contains(n, "Podcast server answered: 0 file(s)") {
		t.Errorf("test notice %q", n)
	}
	screenshot(t, ctx, "services.png")
}
