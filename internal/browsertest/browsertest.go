// Package browsertest starts the headless Chromium that the tests of
// audiopost's web pages drive with chromedp: the server's pages
// (transport/httpapi) and the in-browser pages (transport/browser).
package browsertest

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/audiopost/audiopost/internal/need"
)

// Chromium returns the path of a Chromium to drive, skipping the test
// when there is none (failing under CI): need.Program's row "chromium".
func Chromium(t testing.TB) string {
	t.Helper()
	return need.Program(t, "chromium")
}

// New starts a headless Chromium with a fresh profile and returns the
// context of its first tab, cancelled after timeout or when the test
// ends. extra adds allocator options (flags) to the defaults.
func New(t testing.TB, timeout time.Duration, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
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
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1100, 1400),
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	actx, acancel := chromedp.NewExecAllocator(ctx, append(opts, extra...)...)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)
	return bctx
}
