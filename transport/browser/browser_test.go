package browser_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/audiopost/audiopost/audio"
	_ "github.com/audiopost/audiopost/audio/codecs"
	"github.com/audiopost/audiopost/internal/browsertest"
	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/realaudio"
	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/loudness"
	pages "github.com/audiopost/audiopost/transport/browser"
	"github.com/audiopost/audiopost/transport/browser/local"
)

var build struct {
	sync.Once
	dir string
	rep *pages.Report
	err error
}

var tmpRoot string

func TestMain(m *testing.M) {
	var err error
	if tmpRoot, err = os.MkdirTemp("", "audiopost-browser-test-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	browsertest.Stop()
	os.RemoveAll(tmpRoot)
	os.Exit(code)
}

// built builds the pages once per test binary.
func built(t testing.TB) string {
	t.Helper()
	build.Do(func() {
		build.dir = filepath.Join(tmpRoot, "pages")
		build.rep, build.err = pages.Build(context.Background(), build.dir, pages.Options{})
	})
	if build.err != nil {
		t.Fatal(build.err)
	}
	return build.dir
}

// serve serves the built pages at /browser/ of a test server, as a
// static host would (no audiopost server behind them).
func serve(t testing.TB) string {
	dir := built(t)
	mux := http.NewServeMux()
	mux.Handle("/browser/", http.StripPrefix("/browser/", pages.Handler(dir)))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

func do(t testing.TB, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func run[T any](t testing.TB, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// speechWAV writes seconds of 48 kHz stereo 16-bit espeak-ng speech:
// the test sentences in turn in the six voices, each phrase at its own
// level, over a pink-noise floor independent per channel.
func speechWAV(t testing.TB, path string, seconds int) {
	t.Helper()
	const rate = 48000
	n := seconds * rate
	var texts []string
	for len(texts) < 12 {
		texts = append(texts, testaudio.Sentences...)
	}
	phrases, _ := testaudio.Phrases(t, rate, texts, 0.7, testaudio.Voices...)
	gains := []float64{0, -6, -2, -9, -4}
	buf := audio.NewBuffer(2, n)
	for c, k := range []float64{0.6, 0.5} {
		noise := testaudio.PinkNoise(n, math.Pow(10, -60.0/20), uint64(11+c))
		for i := range buf[c] {
			g := math.Pow(10, gains[(i/(13*rate))%len(gains)]/20)
			buf[c][i] = k*g*phrases[i%len(phrases)] + noise[i]
		}
	}
	testaudio.WriteWAV(t, path, buf, rate)
}

// nativeBinary builds the audiopost command once per test binary.
func nativeBinary(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(tmpRoot, "audiopost")
	nativeOnce.Do(func() {
		out, err := exec.Command("go", "build", "-o", bin, "github.com/audiopost/audiopost/examples/audiopost").CombinedOutput()
		if err != nil {
			nativeErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if nativeErr != nil {
		t.Fatal(nativeErr)
	}
	return bin
}

var (
	nativeOnce sync.Once
	nativeErr  error
)

// nativeProcess runs the audiopost binary's process command, as a user
// would on the command line, and returns the statistics it prints.
func nativeProcess(t testing.TB, in, out string, extra ...string) map[string]any {
	t.Helper()
	return nativeProcessEnv(t, nil, in, out, extra...)
}

// nativeProcessEnv is nativeProcess with variables added to the
// environment.
func nativeProcessEnv(t testing.TB, env []string, in, out string, extra ...string) map[string]any {
	t.Helper()
	cmd := exec.Command(nativeBinary(t), append(append([]string{"process"}, extra...), "-o", out, in)...)
	cmd.Env = append(os.Environ(), env...)
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("audiopost process: %v", err)
	}
	var st map[string]any
	if err := json.Unmarshal(stdout, &st); err != nil {
		t.Fatalf("statistics: %v\n%s", err, stdout)
	}
	return st
}

// processInPage processes the file in the process page with no preset
// and the output format, by the form as a user does, and waits for the
// downloads of the result and of its figures in dir.
func processInPage(t testing.TB, ctx context.Context, base, file, format, dir string) (audioPath string, figures map[string]any) {
	t.Helper()
	browsertest.AllowDownloads(t, ctx, dir)
	do(t, ctx, "open the process page", chromedp.Navigate(base+"/browser/"),
		chromedp.WaitVisible(chromedp.CSS(`body[data-ready="true"]`)))
	do(t, ctx, "fill in the form",
		chromedp.SetUploadFiles(chromedp.ID("file"), []string{file}),
		chromedp.SetValue(chromedp.ID("preset"), ""),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("preset").dispatchEvent(new Event("change"))`),
		chromedp.SetValue(chromedp.ID("format"), format),
		chromedp.Click(chromedp.ID("start")))
	do(t, ctx, "wait for the result", chromedp.Poll[chromedp.Void](
		`!document.getElementById("result").hidden || !document.getElementById("errors").hidden`,
		chromedp.WithPollingTimeout(20*time.Minute), chromedp.WithPollingInterval(time.Second)))
	if msg := run(t, ctx, "errors", chromedp.Evaluate[string](`document.getElementById("errors").hidden ? "" : document.getElementById("errors").textContent`)); msg != "" {
		t.Fatalf("the page failed: %s", msg)
	}
	do(t, ctx, "download", chromedp.Evaluate[chromedp.Void](`document.querySelectorAll("#downloads a").forEach(a => a.click())`))
	names := run(t, ctx, "names", chromedp.Evaluate[[]string](`[...document.querySelectorAll("#downloads a")].map(a => a.download)`))
	deadline := time.Now().Add(5 * time.Minute)
	for _, n := range names {
		for {
			if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s was not downloaded", n)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, names[len(names)-1]))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &figures); err != nil {
		t.Fatalf("figures: %v", err)
	}
	return filepath.Join(dir, names[0]), figures
}

var seconds = flag.Int("seconds", 20, "length of TestProcessLikeNative's recording in seconds (issue 33's acceptance: 300)")

// skipShort skips the tests that drive Chromium under -short: the race
// run has nothing to find in them, and the plain run covers them.
func skipShort(t *testing.T) {
	if testing.Short() {
		t.Skip("drives Chromium over a WebAssembly build; the plain run covers it")
	}
}

var realRecordings = flag.Bool("real", false, "TestProcessLikeNative on the held-out half of the real-recording corpus (internal/realaudio) in place of espeak-ng speech")

// realWAV writes seconds of 48 kHz stereo 16-bit programme from the
// held-out half of the real-recording corpus: its speech-and-music
// programmes end to end (again from the start when they run out), the
// right channel 1 dB down and 0.4 ms late, over a real noise of the
// corpus 45 dB under the programme, the loudest peak at -3 dBFS.
func realWAV(t testing.TB, path string, seconds int) {
	t.Helper()
	c := realaudio.Load(t, realaudio.HeldOut)
	var prog []float64
	var ids []string
	for _, p := range c.Programmes() {
		prog = append(prog, p.Input...)
		ids = append(ids, p.ID)
	}
	noise := c.Noises[0].Samples
	t.Logf("%d s of %s (%.0f s, looped) over %s", seconds, strings.Join(ids, " and "), float64(len(prog))/realaudio.Rate, c.Noises[0].ID)
	n := seconds * realaudio.Rate
	const delay = realaudio.Rate * 4 / 10000
	buf := audio.NewBuffer(2, n)
	k, kn := math.Pow(10, -1.0/20), math.Pow(10, -45.0/20)
	for i := range n {
		buf[0][i] = prog[i%len(prog)] + kn*noise[i%len(noise)]
		buf[1][i] = k*prog[(i+len(prog)-delay)%len(prog)] + kn*noise[(i+len(noise)/2)%len(noise)]
	}
	var peak float64
	for c := range buf {
		for _, v := range buf[c] {
			peak = max(peak, math.Abs(v))
		}
	}
	g := math.Pow(10, -3.0/20) / peak // the peak at -3 dBFS
	for c := range buf {
		for i := range buf[c] {
			buf[c][i] *= g
		}
	}
	testaudio.WriteWAV(t, path, buf, realaudio.Rate)
}

// TestProcessLikeNative processes a recording in the page, in headless
// Chromium, with the default chain, and with the audiopost binary: the
// two WAV files agree (integrated loudness within 0.01 LU, true peak
// within 0.01 dB, every sample within -90 dBFS), the page reports the
// binary's statistics, and nothing the page sent carried audio. Twenty
// seconds of speech, to keep CI's run short; -seconds 300 for the five
// minutes of issue 33:
//
//	go test ./transport/browser -run TestProcessLikeNative -v -args -seconds 300
//
// With -real (after -args) the recording is the held-out half's real speech and music
// (realWAV) in place of espeak-ng's.
func TestProcessLikeNative(t *testing.T) {
	skipShort(t)
	seconds := *seconds
	dir := t.TempDir()
	in := filepath.Join(dir, "talk.wav")
	if *realRecordings {
		realWAV(t, in, seconds)
	} else {
		need.Program(t, "espeak-ng")
		speechWAV(t, in, seconds)
	}
	ref := filepath.Join(dir, "native.wav")
	native := nativeProcess(t, in, ref)

	base := serve(t)
	proxy := browsertest.NewProxy(t)
	ctx := browsertest.Tab(t, 20*time.Minute, proxy)
	downloads := filepath.Join(dir, "downloads")
	got, figures := processInPage(t, ctx, base, in, "wav", downloads)

	compareAudio(t, ref, got)
	compareStatistics(t, native, figures["statistics"])
	if length, _ := figures["length"].(float64); math.Abs(length-float64(seconds)) > 0.01 {
		t.Errorf("length %v s, want %d", figures["length"], seconds)
	}
	checkNoUpload(t, proxy, base, in)
}

// compareAudio decodes two files and checks that they are the same
// programme: loudness, true peak and every sample.
func compareAudio(t testing.TB, want, got string) {
	t.Helper()
	w, wr := testaudio.ReadFile(t, want)
	g, gr := testaudio.ReadFile(t, got)
	if wr != gr || len(w) != len(g) || w.Frames() != g.Frames() {
		t.Fatalf("%d channels of %d frames at %d Hz from the page, %d of %d at %d Hz from the binary", len(g), g.Frames(), gr, len(w), w.Frames(), wr)
	}
	var worst float64
	at := 0
	for c := range w {
		for i := range w[c] {
			if d := math.Abs(w[c][i] - g[c][i]); d > worst {
				worst, at = d, i
			}
		}
	}
	worstDB := 20 * math.Log10(worst)
	t.Logf("largest sample difference %.1f dBFS (frame %d)", worstDB, at)
	if worstDB >= -90 {
		t.Errorf("samples differ by up to %.1f dBFS at frame %d, want below -90", worstDB, at)
	}
	measure := func(b audio.Buffer) loudness.Result {
		m, err := loudness.NewMeter(audio.Format{SampleRate: wr, Channels: len(b)}, loudness.Options{Mode: loudness.ModeEBU})
		if err != nil {
			t.Fatal(err)
		}
		m.Write(b)
		return m.Result()
	}
	mw, mg := measure(w), measure(g)
	t.Logf("binary %.3f LUFS %.3f dBTP, page %.3f LUFS %.3f dBTP", mw.Integrated, mw.TruePeak, mg.Integrated, mg.TruePeak)
	if d := math.Abs(mw.Integrated - mg.Integrated); d > 0.01 {
		t.Errorf("integrated loudness differs by %.4f LU", d)
	}
	if d := math.Abs(mw.TruePeak - mg.TruePeak); d > 0.01 {
		t.Errorf("true peak differs by %.4f dB", d)
	}
}

// compareStatistics compares the statistics as the API reports them:
// every level within 0.011 of the binary's (both are rounded to 0.01).
func compareStatistics(t testing.TB, want, got any) {
	t.Helper()
	var walk func(path string, w, g any)
	walk = func(path string, w, g any) {
		switch w := w.(type) {
		case map[string]any:
			gm, ok := g.(map[string]any)
			if !ok {
				t.Errorf("%s: %v, want an object", path, g)
				return
			}
			for k := range w {
				walk(path+"."+k, w[k], gm[k])
			}
		case []any:
			ga, ok := g.([]any)
			if !ok || len(ga) != len(w) {
				t.Errorf("%s: %v, want %v", path, g, w)
				return
			}
			for i := range w {
				walk(fmt.Sprintf("%s[%d]", path, i), w[i], ga[i])
			}
		case float64:
			if gf, ok := g.(float64); !ok || math.Abs(gf-w) > 0.011 {
				t.Errorf("%s: %v, want %v", path, g, w)
			}
		default:
			if fmt.Sprint(w) != fmt.Sprint(g) {
				t.Errorf("%s: %v, want %v", path, g, w)
			}
		}
	}
	walk("statistics", want, got)
}

// checkNoUpload watches the network through the proxy every request of
// the browser passed: no request of the whole run had a body (so none
// carried audio), the pages' server saw GETs only, and what went
// elsewhere was Chromium's own calls home, refused by the proxy (the
// pages' Content Security Policy allows no other origin).
func checkNoUpload(t testing.TB, proxy *browsertest.Proxy, server, file string) {
	t.Helper()
	reqs := proxy.Requests()
	var sent int64
	own := 0
	for _, r := range reqs {
		sent += r.BodyBytes
		if r.BodyBytes > 0 {
			t.Errorf("%s %s carried %d bytes", r.Method, r.URL, r.BodyBytes)
		}
		u, err := url.Parse(r.URL)
		if err != nil || u.Host == "" {
			u = &url.URL{Host: r.URL} // CONNECT host:port
		}
		switch {
		case strings.HasPrefix(r.URL, server+"/"):
			own++
			if r.Method != http.MethodGet && r.Method != http.MethodHead {
				t.Errorf("the page sent %s %s", r.Method, r.URL)
			}
		case chromiumService(u.Hostname()):
			t.Logf("Chromium's own request, refused or empty: %s %s", r.Method, r.URL)
		default:
			t.Errorf("a request beyond the pages' server: %s %s", r.Method, r.URL)
		}
	}
	if own == 0 {
		t.Fatal("the proxy saw no request of the page: the browser did not use it")
	}
	st, _ := os.Stat(file)
	t.Logf("%d requests (%d to the pages' server), %d bytes in their bodies; the recording has %d bytes", len(reqs), own, sent, st.Size())
}

// chromiumService reports whether host is one of the Google services
// Chromium calls by itself (updates, sign-in) whatever page it shows.
func chromiumService(host string) bool {
	return strings.HasSuffix(host, ".google.com") || strings.HasSuffix(host, ".googleapis.com") || strings.HasSuffix(host, ".gvt1.com")
}

// TestPresetsLikeNative processes a noisy recording with each built-in
// preset through audiopost.js in Chromium and with the audiopost binary
// given the same preset: every algorithm the presets switch on (the
// classic and dynamic denoisers, RMS loudness, the music classifier, no
// filter) comes out of the browser as out of the binary, and byte for
// byte as out of the binary when it cannot keep its temporary file.
func TestPresetsLikeNative(t *testing.T) {
	skipShort(t)
	need.Program(t, "espeak-ng")
	dir := t.TempDir()
	in := filepath.Join(dir, "noisy.wav")
	// 4 s: the five presets' runs (the page's and the binary's two each)
	// cost ~0.26 s of CPU a second of input, and what is compared does
	// not grow with it: on 8 s (until 2026-11-28) the same presets restored and spilled
	// (the binary's files -90.3 dBFS from the page's at most, with
	// restoration, as on 4 s) and the test took 9.6 s of CPU, 8.5 on 4.
	speechWAV(t, in, 4)
	base := serve(t)
	ctx := browsertest.Tab(t, 10*time.Minute, nil)
	do(t, ctx, "open the process page", chromedp.Navigate(base+"/browser/"), chromedp.WaitVisible(chromedp.CSS(`body[data-ready="true"]`)),
		chromedp.SetUploadFiles(chromedp.ID("file"), []string{in}))
	for i, b := range local.Builtins {
		var name struct {
			PresetName string `json:"preset_name"`
		}
		json.Unmarshal(b.Preset, &name)
		t.Run(name.PresetName, func(t *testing.T) {
			presetFile := filepath.Join(dir, fmt.Sprintf("preset%d.json", i))
			if err := os.WriteFile(presetFile, b.Preset, 0o644); err != nil {
				t.Fatal(err)
			}
			ref := filepath.Join(dir, fmt.Sprintf("native%d.wav", i))
			nativeProcess(t, in, ref, "-preset", presetFile, "-format", "wav")
			js := `(async () => {
				const m = await import("./audiopost.js");
				const r = await m.process(document.getElementById("file").files[0],
					{preset: ` + string(b.Preset) + `, output_files: [{format: "wav"}]});
				const bytes = new Uint8Array(await r.blob.arrayBuffer());
				let s = "";
				for (let i = 0; i < bytes.length; i += 0x8000) { s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000)); }
				return btoa(s);
			})()`
			b64 := run(t, ctx, "process", chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
			wav, err := base64.StdEncoding.DecodeString(b64)
			if err != nil {
				t.Fatal(err)
			}
			got := filepath.Join(dir, fmt.Sprintf("page%d.wav", i))
			if err := os.WriteFile(got, wav, 0o644); err != nil {
				t.Fatal(err)
			}
			compareAudio(t, ref, got)
			// With restoration the binary keeps the restored signal in a
			// temporary file of 32-bit floats between its passes, which a
			// browser cannot make: it restores again in 64 bits. Without
			// the file the binary makes the browser's samples exactly.
			noSpill := filepath.Join(dir, fmt.Sprintf("nospill%d.wav", i))
			nativeProcessEnv(t, []string{"TMPDIR=" + filepath.Join(dir, "no-such-folder")}, in, noSpill, "-preset", presetFile, "-format", "wav")
			if a, b := readBytes(t, noSpill), readBytes(t, got); !bytes.Equal(a, b) {
				t.Errorf("the page's file differs from the binary's made without a temporary file")
			}
		})
	}
}

func readBytes(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
