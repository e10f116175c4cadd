package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/audiopost/audiopost/internal/browsertest"
	"github.com/audiopost/audiopost/transport/browser"
)

// TestServeBrowserPages: serve -browser serves the in-browser pages at
// /browser/ with their security headers; logged in, the process page
// offers the user's presets first and processes a recording with one in
// the browser (its lossy output replaced by FLAC, which the page can
// make), and no request after the login carries a body.
func TestServeBrowserPages(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the WebAssembly engine and drives Chromium; the plain run covers it")
	}
	t.Parallel() // beside the tests that wait on real time (TestLiveThroughIcecast)
	browsertest.Chromium(t)
	pages := t.TempDir()
	if _, err := browser.Build(context.Background(), pages, browser.Options{}); err != nil {
		t.Fatal(err)
	}
	const password = "correct horse battery"
	s := startServe(t, "-admin-user", "ann", "-admin-password", password, "-browser", pages)
	if !strings.Contains(s.stdout.String(), s.base+"/browser/") {
		t.Errorf("serve does not say where the in-browser pages are:\n%s", s.stdout.String())
	}
	res, err := http.Get(s.base + "/browser/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if csp := res.Header.Get("Content-Security-Policy"); res.StatusCode != 200 || !strings.Contains(csp, "connect-src 'self'") {
		t.Fatalf("GET /browser/: %s, CSP %q", res.Status, csp)
	}
	api := &apiClient{t: t, base: s.base, hc: http.DefaultClient, basic: [2]string{"ann", password}}
	api.call("POST", "/api/presets.json", map[string]any{"preset_name": "Radio", "output_files": []any{map[string]any{"format": "mp3"}},
		"algorithms": map[string]any{"loudnesstarget": -23, "maxpeak": -2}})
	code, _ := (&apiClient{t: t, base: s.base, hc: http.DefaultClient}).do("GET", "/presets.json", "", nil)
	if code != http.StatusUnauthorized {
		t.Errorf("GET /presets.json without a session: HTTP %d", code)
	}

	dir := t.TempDir()
	in := filepath.Join(dir, "talk.wav")
	if err := os.WriteFile(in, serveWAV(t, 8), 0o644); err != nil {
		t.Fatal(err)
	}
	proxy := browsertest.NewProxy(t)
	ctx := browsertest.Tab(t, 4*time.Minute, proxy)
	run := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	eval := func(expr string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		return v
	}
	run("log in", chromedp.Navigate(s.base+"/account/login/?next=/browser/"),
		chromedp.WaitVisible(chromedp.CSS(`input[name=username]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=username]`), "ann"),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), password),
		chromedp.Submit(chromedp.CSS(`input[name=password]`)),
		chromedp.WaitVisible(chromedp.CSS(`body[data-ready="true"]`)))
	loggedIn := len(proxy.Requests())
	if got := eval(`document.getElementById("preset").selectedOptions[0].textContent + " | " +
		document.getElementById("preset").selectedOptions[0].parentNode.label + " | " +
		document.getElementById("loudnesstarget").selectedOptions[0].textContent + " | " +
		document.getElementById("format").value + " | " + document.getElementById("nav").textContent`); !strings.Contains(got, "Radio | Your presets | -23 LUFS") ||
		!strings.Contains(got, "| flac |") || !strings.Contains(got, "Account (ann)") {
		t.Errorf("the page offers %q; want ann's preset first, its target, FLAC for its MP3 and ann's links", got)
	}
	run("process", chromedp.SetUploadFiles(chromedp.ID("file"), []string{in}), chromedp.Click(chromedp.ID("start")),
		chromedp.Poll[chromedp.Void](`!document.getElementById("result").hidden || !document.getElementById("errors").hidden`,
			chromedp.WithPollingTimeout(3*time.Minute), chromedp.WithPollingInterval(200*time.Millisecond)))
	if got := eval(`document.getElementById("errors").textContent + document.getElementById("result-title").textContent + " | " +
		document.querySelector("#levels tbody tr td:nth-child(3)").textContent`); got != "Result: talk.flac | \u221223.0\u00a0LUFS" {
		t.Errorf("the result: %q, want talk.flac at -23 LUFS", got)
	}
	for _, r := range proxy.Requests()[loggedIn:] {
		if r.BodyBytes > 0 || r.Method != http.MethodGet && r.Method != http.MethodHead && strings.HasPrefix(r.URL, s.base) {
			t.Errorf("after the login the browser sent %s %s with %d bytes", r.Method, r.URL, r.BodyBytes)
		}
	}
}
