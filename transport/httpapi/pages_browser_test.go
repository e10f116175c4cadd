package httpapi_test

import (
	"context"
	"encoding/base64"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/browsertest"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/storage"
)

// newBrowser opens a tab of the test binary's Chromium, in a profile of
// its own.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	return browsertest.Tab(t, 2*time.Minute, nil)
}

// screenshot saves the page as PNG into the test's artifact directory:
// go test -artifacts -outputdir DIR keeps them (the test's log names the
// folder), to look at the pages. Without -artifacts nothing would keep
// them and no test reads them: the page is not captured.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if f := flag.Lookup("test.artifacts"); f == nil || f.Value.String() != "true" {
		return
	}
	png := run(t, ctx, "screenshot", chromedp.FullScreenshot(100))
	if err := os.WriteFile(filepath.Join(t.ArtifactDir(), name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

func run[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// waitReloaded waits until the page, which reloads itself meanwhile,
// satisfies the expression cond: a navigation interrupts a poll, which
// then starts over on the new document.
func waitReloaded(t *testing.T, ctx context.Context, cond string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](cond, chromedp.WithPollingTimeout(time.Until(deadline))))
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %v", cond, err)
		}
	}
}

func do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// TestPagesBrowser drives the real handler with headless Chromium: login
// through the login form, the status page of a finished production and
// its download, the upload form, and the live status update.
func TestPagesBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	// Its own browser and server: the browser tests overlap their waits.
	t.Parallel()
	ctx := newBrowser(t)
	e := newEnv(t)
	id, wavData := e.finished(e.keyA)
	if err := accountsOf(t, e.store).SetPassword(context.Background(), e.userA.Username, testPassword); err != nil {
		t.Fatal(err)
	}

	// Not logged in: the status page sends the browser to the login form,
	// which returns to the status page.
	statusURL := e.base + "/production/" + id + "/status/"
	do(t, ctx, "login", chromedp.Navigate(statusURL),
		chromedp.WaitVisible(chromedp.CSS(`input[name=username]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=username]`), e.userA.Username),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), testPassword),
		chromedp.Submit(chromedp.CSS(`input[name=password]`)),
		chromedp.WaitVisible(chromedp.ID("outputs")),
	)
	if loc := run(t, ctx, "location", chromedp.Location()); loc != statusURL {
		t.Fatalf("after login at %s, want %s", loc, statusURL)
	}
	text := run(t, ctx, "page text", chromedp.Text(chromedp.CSS("body")))
	for _, want := range []string{"Episode 42 <Live>", "The Hosts", "Season 3", "Main topic", "01:30", "Done", "WAV 16-bit PCM",
		production.FormatSize(int64(len(wavData)))} {
		if !strings.Contains(text, want) {
			t.Errorf("status page text lacks %q:\n%s", want, text)
		}
	}
	// The cover thumbnail, the chapter picture (the 64x64 cover) and the
	// waveform load, and the player reads the output's header.
	run(t, ctx, "media", chromedp.Poll[chromedp.Void](`document.getElementById("cover").naturalWidth > 0 &&
		document.querySelector(".chapter-image").naturalWidth === 64 &&
		document.getElementById("waveform").naturalWidth === 300 && document.getElementById("player").readyState >= 1`,
		chromedp.WithPollingTimeout(15*time.Second)))
	if d := run(t, ctx, "duration", chromedp.Evaluate[float64](`document.getElementById("player").duration`)); d < 0.49 || d > 0.51 {
		t.Errorf("player duration %.3f s, want 0.5", d)
	}
	screenshot(t, ctx, "status.png")
	// The download link serves the stored file to this browser session.
	href := run(t, ctx, "link", chromedp.AttributeValue(chromedp.CSS(`#outputs a`), "href"))
	if !strings.Contains(href.Value, "/files/audio-result/"+id+"/") {
		t.Fatalf("download link %q", href.Value)
	}
	got := run(t, ctx, "download", chromedp.Evaluate[string](`fetch(document.querySelector("#outputs a").href)
		.then(r => r.ok ? r.arrayBuffer() : Promise.reject(new Error("HTTP " + r.status)))
		.then(b => { let s = ""; for (const x of new Uint8Array(b)) s += String.fromCharCode(x); return btoa(s); })`,
		chromedp.EvalAwaitPromise))
	if got != base64.StdEncoding.EncodeToString(wavData) {
		t.Fatalf("the download link served %d base64 characters, not the stored output", len(got))
	}
	// The player found its source.
	if src := run(t, ctx, "player", chromedp.AttributeValue(chromedp.CSS(`#player source`), "src")); src.Value != href.Value {
		t.Errorf("player source %q, want %q", src.Value, href.Value)
	}

	// Upload a WAV through the form.
	wavPath := filepath.Join(t.TempDir(), "browser-talk.wav")
	if err := os.WriteFile(wavPath, makeWAV(t, 2, 16000, 1, audio.Tags{}), 0o644); err != nil {
		t.Fatal(err)
	}
	do(t, ctx, "upload", chromedp.Navigate(e.base+"/upload/"),
		chromedp.WaitVisible(chromedp.ID("input_file")),
	)
	screenshot(t, ctx, "upload.png")
	do(t, ctx, "upload",
		chromedp.SendKeys(chromedp.ID("title"), "Uploaded from Chromium"),
		chromedp.SetValue(chromedp.ID("output_format"), "opus"),
		chromedp.SetUploadFiles(chromedp.ID("input_file"), []string{wavPath}),
		chromedp.Click(chromedp.ID("start")),
		chromedp.WaitVisible(chromedp.ID("status")),
	)
	loc := run(t, ctx, "location", chromedp.Location())
	m := regexp.MustCompile(`/production/([0-9a-f-]{36})/status/$`).FindStringSubmatch(loc)
	if m == nil {
		t.Fatalf("after the upload at %s", loc)
	}
	newID := m[1]
	res, err := e.store.GetResource(context.Background(), e.userA.ID, storage.KindProduction, newID)
	if err != nil {
		t.Fatal(err)
	}
	p, err := production.DecodeDocument(res)
	if err != nil {
		t.Fatal(err)
	}
	if p.InputFile != "browser-talk.wav" || p.Metadata.Title != "Uploaded from Chromium" || p.Channels != 2 ||
		len(p.OutputFiles) != 1 || p.OutputFiles[0].Format != "opus" || p.Status != production.StatusWaiting {
		t.Errorf("uploaded production: input %q title %q channels %d outputs %+v status %v",
			p.InputFile, p.Metadata.Title, p.Channels, p.OutputFiles, p.Status)
	}
	if s := run(t, ctx, "status", chromedp.Text(chromedp.ID("status"))); s != "Waiting" {
		t.Errorf("status shows %q", s)
	}

	// The page polls: while a worker processes, the progress moves
	// without a reload; when it finishes, the page reloads itself to show
	// the results.
	if err := e.store.SetStatus(context.Background(), e.userA.ID, storage.KindProduction, newID, int(production.StatusAudioEncoding)); err != nil {
		t.Fatal(err)
	}
	if err := e.store.SetProgress(context.Background(), e.userA.ID, newID, 63); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, "live progress", chromedp.Poll[chromedp.Void](
		`document.getElementById("status").textContent === "Audio Encoding" && document.getElementById("progress-text").textContent === "63 %" &&
		document.getElementById("progress-bar").value === 63`,
		chromedp.WithPollingTimeout(20*time.Second)))
	do(t, ctx, "mark the page", chromedp.Evaluate[chromedp.Void](`window.notReloaded = true`))
	if err := e.store.SetStatus(context.Background(), e.userA.ID, storage.KindProduction, newID, int(production.StatusDone)); err != nil {
		t.Fatal(err)
	}
	waitReloaded(t, ctx, `!window.notReloaded && document.getElementById("status").textContent === "Done"`, 20*time.Second)
	if loc2 := run(t, ctx, "location", chromedp.Location()); loc2 != loc {
		t.Errorf("the page navigated to %s", loc2)
	}
	do(t, ctx, "edit page", chromedp.Navigate(e.base+"/production/"+id+"/edit/"), chromedp.WaitVisible(chromedp.ID("edit-form")))
	screenshot(t, ctx, "edit.png")
}
