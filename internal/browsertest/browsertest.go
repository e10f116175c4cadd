// Package browsertest starts the headless Chromium that the tests of
// audiopost's web pages drive with chromedp: the server's pages
// (transport/httpapi) and the in-browser pages (transport/browser,
// examples/audiopost). A test opens a Tab of its test binary's one
// Chromium, in a profile of its own; the package's TestMain ends that
// Chromium with Stop:
//
//	func TestMain(m *testing.M) {
//		code := m.Run()
//		browsertest.Stop()
//		os.Exit(code)
//	}
package browsertest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/audiopost/audiopost/internal/need"
)

// Chromium returns the path of a Chromium to drive, skipping the test
// when there is none (failing under CI): need.Program's row "chromium".
func Chromium(t testing.TB) string {
	t.Helper()
	return need.Program(t, "chromium")
}

// flags are the allocator options of every Chromium the tests start.
func flags(t testing.TB) []chromedp.ExecAllocatorOption {
	return []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(Chromium(t)),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("mute-audio", true),
		// Chromium's own calls home (updates, time, optimisation hints,
		// sign-in), which a test of what pages send would have to tell
		// apart from the page's.
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("disable-client-side-phishing-detection", true),
		chromedp.Flag("no-pings", true),
		chromedp.Flag("metrics-recording-only", true),
		chromedp.Flag("disable-features", "OptimizationHints,OptimizationGuideModelDownloading,OptimizationHintsFetching,"+
			"OptimizationTargetPrediction,MediaRouter,DialMediaRouteProvider,Translate,NetworkTimeServiceQuerying,"+
			"AutofillServerCommunication,CertificateTransparencyComponentUpdater,SigninInterceptBubble,ChromeSignin"),
		chromedp.WindowSize(1100, 1400),
	}
}

// profile puts Chromium's profile in dir, and its temporary files too:
// Chromium makes a directory for its singleton socket under TMPDIR for
// each start, which outlived the tests in /tmp (one for every run).
func profile(dir string) []chromedp.ExecAllocatorOption {
	opts := []chromedp.ExecAllocatorOption{chromedp.UserDataDir(dir)}
	if tmp := filepath.Join(dir, "tmp"); os.Mkdir(tmp, 0o700) == nil {
		opts = append(opts, chromedp.Env("TMPDIR="+tmp))
	}
	return opts
}

// New starts a headless Chromium with a fresh profile and returns the
// context of its first tab, cancelled after timeout or when the test
// ends: for a benchmark that reads the CPU of Chromium's processes,
// which needs a browser of its own. A test takes a Tab of the shared one.
func New(t testing.TB, timeout time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	actx, acancel := chromedp.NewExecAllocator(ctx, append(flags(t), profile(t.TempDir())...)...)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)
	return bctx
}

// shared is the Chromium of a test binary's Tabs, started by the first
// and ended by Stop. A start of Chromium costs 0.9-1.0 s of CPU (about:blank,
// its processes in a cgroup of their own; /usr/bin/time misses most of it,
// Chromium's zygote being their parent); a tab in a browser context of its
// own in a running one, less: transport/browser's four tests, a browser
// each before, took 18.5 s of CPU, 16.7 with one (gzip's default level in
// browser.Build included, ~0.6 s), httpapi's four 9.5 and 9.0 s.
var shared struct {
	sync.Mutex
	ctx     context.Context // the browser's first tab, which owns it
	cancel  []context.CancelFunc
	profile string
	err     error
}

// Tab returns the context of a new tab of the test binary's shared
// headless Chromium, in a browser context of its own (an incognito
// profile: cookies, storage, caches and downloads apart from every
// other tab's), closed after timeout or when the test ends. With a
// proxy every request of the tab and of its workers goes through it,
// loopback addresses included. TestMain calls Stop after m.Run.
func Tab(t testing.TB, timeout time.Duration, proxy *Proxy) context.Context {
	t.Helper()
	bctx := sharedBrowser(t)
	var opts []chromedp.CreateBrowserContextOption
	if proxy != nil {
		opts = append(opts, func(p *target.CreateBrowserContextParams) {
			// Chromium bypasses proxies for loopback addresses unless
			// told otherwise.
			p.ProxyServer, p.ProxyBypassList = proxy.srv.URL, "<-loopback>"
		})
	}
	tctx, tcancel := chromedp.NewContext(bctx, chromedp.WithNewBrowserContext(opts...))
	t.Cleanup(tcancel)
	ctx, cancel := context.WithTimeout(tctx, timeout)
	t.Cleanup(cancel)
	// The tab and its browser context now, so that BrowserContextID is
	// known (AllowDownloads).
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("a tab of the shared Chromium: %v", err)
	}
	return ctx
}

func sharedBrowser(t testing.TB) context.Context {
	t.Helper()
	shared.Lock()
	defer shared.Unlock()
	if shared.ctx == nil && shared.err == nil {
		shared.profile, shared.err = os.MkdirTemp("", "audiopost-chromium-")
		if shared.err == nil {
			actx, acancel := chromedp.NewExecAllocator(context.Background(), append(flags(t), profile(shared.profile)...)...)
			bctx, bcancel := chromedp.NewContext(actx)
			shared.cancel = []context.CancelFunc{bcancel, acancel}
			shared.ctx = bctx
			if shared.err = chromedp.Do(bctx); shared.err != nil {
				shared.err = fmt.Errorf("starting Chromium: %w", shared.err)
			}
		}
	}
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.ctx
}

// Stop ends the shared Chromium, if a Tab started it, and removes its
// profile.
func Stop() {
	shared.Lock()
	defer shared.Unlock()
	for _, c := range shared.cancel {
		c()
	}
	if shared.profile != "" {
		os.RemoveAll(shared.profile)
	}
	shared.ctx, shared.cancel, shared.profile, shared.err = nil, nil, "", nil
}

// AllowDownloads saves what the tab ctx (a Tab's) downloads into dir.
func AllowDownloads(t testing.TB, ctx context.Context, dir string) {
	t.Helper()
	if _, err := chromedp.CallBrowser(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dir,
		BrowserContextID: chromedp.FromContext(ctx).BrowserContextID}); err != nil {
		t.Fatal(err)
	}
}
