package httpapi_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"log/slog"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/loudness"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/engine"
	"github.com/audiopost/audiopost/production/runner"
	"github.com/audiopost/audiopost/storage"
)

// TestPagesFirstHour is the acceptance walk of the web pages with a real
// job runner behind them, as a new user takes it: the home page, login,
// upload with a preset, the status page until Done (progress, levels,
// loudness chart), the productions list, and the download. Each page is
// saved as a screenshot in the test's artifact directory (go test
// -artifacts -outputdir DIR keeps them).
func TestPagesFirstHour(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser and processes audio")
	}
	// Its own browser and server: the browser tests overlap their waits.
	t.Parallel()
	ctx := newBrowser(t)
	e := newEnv(t)
	if err := accountsOf(t, e.store).SetPassword(context.Background(), e.userA.Username, testPassword); err != nil {
		t.Fatal(err)
	}
	// The worker of `audiopost serve`, woken by the store at each enqueue.
	r, err := runner.New(runner.Config{Store: e.store, Blobs: e.blobs, BaseURL: e.base, TempDir: t.TempDir(),
		Engine: &engine.Engine{Logger: slog.New(slog.DiscardHandler)}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.store.Subscribe("jobs", r.Wake))
	rctx, stop := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- r.Run(rctx) }()
	t.Cleanup(func() { stop(); <-ran })

	// A preset made through the API: MP3 at 128 kbit/s and -16 LUFS.
	preset := e.must(e.req("POST", "/api/presets.json", e.keyA, map[string]any{"preset_name": "Podcast MP3",
		"algorithms":   map[string]any{"loudnesstarget": -16, "leveler": true},
		"output_files": []any{map[string]any{"format": "mp3", "bitrate": 128}}})).obj(t)["uuid"].(string)
	const seconds = 6
	wavPath := filepath.Join(t.TempDir(), "first-episode.wav")
	testaudio.WriteWAV(t, wavPath, testaudio.SpeechLike(44100, seconds, 0.05), 44100)

	// The home page says what the service does and leads to the login.
	do(t, ctx, "home", chromedp.Navigate(e.base+"/"), chromedp.WaitVisible(chromedp.CSS(".hero")))
	screenshot(t, ctx, "1-home.png")
	do(t, ctx, "login form", chromedp.Click(chromedp.CSS(".hero a")), chromedp.WaitVisible(chromedp.CSS(`input[name=username]`)))
	screenshot(t, ctx, "2-login.png")
	do(t, ctx, "login",
		chromedp.SendKeys(chromedp.CSS(`input[name=username]`), e.userA.Username),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), testPassword),
		chromedp.Submit(chromedp.CSS(`input[name=password]`)),
		chromedp.WaitVisible(chromedp.ID("empty")),
	)
	if loc := run(t, ctx, "location", chromedp.Location()); loc != e.base+"/productions/" {
		t.Errorf("after login at %s, want the productions list", loc)
	}
	screenshot(t, ctx, "3-productions-empty.png")

	// Upload with the preset, adding FLAC to its MP3.
	do(t, ctx, "upload form", chromedp.Click(chromedp.CSS("#empty a")), chromedp.WaitVisible(chromedp.ID("input_file")),
		chromedp.SendKeys(chromedp.ID("title"), "First episode"),
		chromedp.SetValue(chromedp.ID("preset"), preset),
		chromedp.SetValue(chromedp.ID("output_format"), "flac"),
		chromedp.SetUploadFiles(chromedp.ID("input_file"), []string{wavPath}),
	)
	screenshot(t, ctx, "4-upload.png")
	do(t, ctx, "upload", chromedp.Click(chromedp.ID("start")), chromedp.WaitVisible(chromedp.ID("status")))
	loc := run(t, ctx, "location", chromedp.Location())
	m := regexp.MustCompile(`/production/([0-9a-f-]{36})/status/$`).FindStringSubmatch(loc)
	if m == nil {
		t.Fatalf("after the upload at %s", loc)
	}
	id := m[1]
	screenshot(t, ctx, "5-status-started.png")

	// The status page follows the worker and reloads itself when the
	// production is Done, showing the results.
	waitReloaded(t, ctx, `document.getElementById("status").textContent === "Done" && document.getElementById("levels") !== null &&
		document.getElementById("loudness-chart").naturalWidth > 0 && document.getElementById("waveform").naturalWidth > 0`, 90*time.Second)
	screenshot(t, ctx, "6-status-done.png")
	text := run(t, ctx, "page text", chromedp.Text(chromedp.CSS("body")))
	for _, want := range []string{"First episode", "Loudness", "True peak", "Loudness range (LRA)", "Signal-to-noise ratio",
		"first-episode.mp3", "first-episode.flac", "128 kbit/s"} {
		if !strings.Contains(text, want) {
			t.Errorf("the status page lacks %q", want)
		}
	}
	out := run(t, ctx, "output loudness", chromedp.Text(chromedp.CSS("#levels tr:nth-child(2) td:nth-child(3)")))
	if v, err := strconv.ParseFloat(strings.TrimSuffix(out, " LUFS"), 64); err != nil || v < -17 || v > -15 {
		t.Errorf("output loudness %q on the page, want -16 ± 1 LUFS", out)
	}
	if s := run(t, ctx, "error", chromedp.Evaluate[bool](`document.getElementById("error-message") === null`)); !s {
		t.Error("the page shows an error")
	}

	// The list page shows it, with its loudness and a download.
	do(t, ctx, "list", chromedp.Click(chromedp.CSS(`nav a[href$="/productions/"]`)), chromedp.WaitVisible(chromedp.ID("productions")))
	screenshot(t, ctx, "7-productions.png")
	row := run(t, ctx, "list row", chromedp.Text(chromedp.CSS("#productions tr:nth-child(2)")))
	for _, want := range []string{"First episode", "Done", "00:00:06", "LUFS", "dBTP", "first-episode.mp3"} {
		if !strings.Contains(row, want) {
			t.Errorf("the list row %q lacks %q", row, want)
		}
	}

	// The download link serves the MP3 the worker stored: 6 s at -16 LUFS.
	href := run(t, ctx, "download link", chromedp.AttributeValue(chromedp.CSS(`#productions a[download]`), "href"))
	if !strings.Contains(href.Value, "/files/audio-result/"+id+"/first-episode.mp3") {
		t.Fatalf("download link %q", href.Value)
	}
	got := run(t, ctx, "download", chromedp.Evaluate[string](`fetch(document.querySelector("#productions a[download]").href)
		.then(r => r.ok ? r.arrayBuffer() : Promise.reject(new Error("HTTP " + r.status)))
		.then(b => { let s = ""; for (const x of new Uint8Array(b)) s += String.fromCharCode(x); return btoa(s); })`,
		chromedp.EvalAwaitPromise))
	mp3, err := base64.StdEncoding.DecodeString(got)
	if err != nil {
		t.Fatal(err)
	}
	rc, _, err := e.blobs.Open(context.Background(), production.OutputKey(id, "first-episode.mp3"))
	if err != nil {
		t.Fatal(err)
	}
	stored, _ := io.ReadAll(rc)
	rc.Close()
	if !bytes.Equal(mp3, stored) {
		t.Fatalf("the download served %d bytes, the store holds %d", len(mp3), len(stored))
	}
	d, err := audio.Decode(context.Background(), bytes.NewReader(mp3))
	if err != nil {
		t.Fatalf("the downloaded MP3: %v", err)
	}
	defer d.Close()
	buf, err := audio.ReadAll(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	rate := d.Format().SampleRate
	if secs := float64(buf.Frames()) / float64(rate); secs < seconds-0.1 || secs > seconds+0.1 {
		t.Errorf("the MP3 lasts %.2f s, want %d", secs, seconds)
	}
	if lr, err := loudness.MeasureBuffer(buf, rate, loudness.Options{Mode: loudness.ModeI}); err != nil || lr.Integrated < -17 || lr.Integrated > -15 {
		t.Errorf("the MP3's loudness %.2f LUFS (%v), want -16 ± 1", lr.Integrated, err)
	}
	res, err := e.store.GetResource(context.Background(), e.userA.ID, storage.KindProduction, id)
	if err != nil || production.ShownProgress(production.Status(res.Status), res.Progress) != 100 {
		t.Errorf("stored status %d, progress %d, %v", res.Status, res.Progress, err)
	}
}
