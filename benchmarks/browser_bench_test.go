package benchmarks

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/performance"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/systeminfo"
	"github.com/chromedp/chromedp"

	"github.com/audiopost/audiopost/internal/browsertest"
	"github.com/audiopost/audiopost/transport/browser"
)

// inBrowser is the process page of the in-browser build, open in headless
// Chromium with a recording chosen, ready to run audiopost.js's process.
type inBrowser struct {
	ctx context.Context
}

var pagesBuild struct {
	sync.Once
	dir string
	err error
}

// openInBrowser builds the pages (once per run), serves them and opens
// the process page with the recording at path chosen.
func openInBrowser(b *testing.B, path string, timeout time.Duration) *inBrowser {
	b.Helper()
	pagesBuild.Do(func() {
		pagesBuild.dir, pagesBuild.err = os.MkdirTemp("", "audiopost-bench-pages-")
		if pagesBuild.err == nil {
			_, pagesBuild.err = browser.Build(context.Background(), pagesBuild.dir, browser.Options{})
		}
	})
	if pagesBuild.err != nil {
		b.Fatal(pagesBuild.err)
	}
	srv := httptest.NewServer(http.StripPrefix("/browser/", browser.Handler(pagesBuild.dir)))
	b.Cleanup(srv.Close)
	ctx := browsertest.New(b, timeout)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/browser/"), chromedp.WaitVisible(chromedp.CSS(`body[data-ready="true"]`)),
		chromedp.SetUploadFiles(chromedp.ID("file"), []string{path})); err != nil {
		b.Fatal(err)
	}
	return &inBrowser{ctx: ctx}
}

// browserRun is one process call in the page.
type browserRun struct {
	Seconds    float64 `json:"seconds"`     // wall-clock, as the page measured it
	WasmMemory float64 `json:"wasm_memory"` // the engine's largest memory, bytes
	Loudness   float64 `json:"loudness"`    // of the output, LUFS
	Length     float64 `json:"length"`      // of the output, seconds
	CPU        float64 // of the renderer process (page and worker), seconds
	// Threads is the renderer's CPU seconds by thread name (the
	// engine's worker, Chromium's I/O thread, V8's compiler threads),
	// empty where /proc cannot be read.
	Threads map[string]float64
	// Others is the CPU seconds of Chromium's other processes by type
	// (the browser process, which reads the File from disk and keeps
	// the output's Blobs, the GPU and utility processes).
	Others map[string]float64
}

// others returns the CPU of the whole browser but its renderers.
func (r browserRun) others() float64 {
	var s float64
	for _, c := range r.Others {
		s += c
	}
	return s
}

// process runs the default chain on the chosen recording, to the output
// format, through audiopost.js as the page does.
func (p *inBrowser) process(b *testing.B, format string) browserRun {
	b.Helper()
	cpu0 := rendererCPU(b, p.ctx)
	th0 := rendererThreads(b, p.ctx)
	ot0 := otherCPU(b, p.ctx)
	js := `(async () => {
		const m = await import("./audiopost.js");
		const f = document.getElementById("file").files[0];
		let mem = 0;
		const t0 = performance.now();
		const r = await m.process(f, {output_files: [{format: "` + format + `"}]}, (p) => {
			mem = Math.max(mem, p.wasm_memory || 0);
			window.lastProgress = p;
		});
		return JSON.stringify({seconds: (performance.now() - t0) / 1000, wasm_memory: mem,
			loudness: r.statistics.levels.output.loudness[0], length: r.production.length});
	})()`
	s, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
	if err != nil {
		b.Fatal(err)
	}
	var r browserRun
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		b.Fatal(err)
	}
	r.CPU = rendererCPU(b, p.ctx) - cpu0
	r.Threads = rendererThreads(b, p.ctx)
	for name, c := range th0 {
		r.Threads[name] -= c
	}
	r.Others = otherCPU(b, p.ctx)
	for typ, c := range ot0 {
		r.Others[typ] -= c
	}
	if math.Abs(r.Loudness+16) > 0.5 {
		b.Fatalf("the page's output is at %.2f LUFS, want -16", r.Loudness)
	}
	return r
}

// threadShares describes where the renderer's CPU of a run went, by
// thread name (the worker running the engine is "DedicatedWorker", the
// I/O thread that moves the recording's bytes "Chrome_ChildIOT"), and
// the rest, threads that ended during the run.
func (r browserRun) threadShares() string {
	rest := r.CPU
	type share struct {
		name string
		cpu  float64
	}
	var sh []share
	for name, c := range r.Threads {
		rest -= c
		if c >= 0.005 {
			sh = append(sh, share{name, c})
		}
	}
	if rest >= 0.005 {
		sh = append(sh, share{"ended threads", rest})
	}
	slices.SortFunc(sh, func(a, b share) int { return -cmp.Compare(a.cpu, b.cpu) })
	var parts []string
	for _, x := range sh {
		parts = append(parts, fmt.Sprintf("%s %.2f s %.0f %%", x.name, x.cpu, 100*x.cpu/r.CPU))
	}
	return strings.Join(parts, ", ")
}

// otherShares describes the CPU of the browser's other processes in a
// run, by type.
func (r browserRun) otherShares() string {
	var parts []string
	for _, typ := range slices.Sorted(maps.Keys(r.Others)) {
		if r.Others[typ] >= 0.005 {
			parts = append(parts, fmt.Sprintf("%s %.2f s", typ, r.Others[typ]))
		}
	}
	return strings.Join(parts, ", ")
}

// renderers returns the renderer processes of the browser with their
// cumulative CPU seconds.
func renderers(b *testing.B, ctx context.Context) map[int64]float64 {
	b.Helper()
	info, err := chromedp.CallBrowser(ctx, systeminfo.GetProcessInfo, struct{}{})
	if err != nil {
		b.Fatal(err)
	}
	out := map[int64]float64{}
	for _, p := range info.ProcessInfo {
		if p.Type == "renderer" {
			out[p.ID] = p.CPUTime
		}
	}
	return out
}

// otherCPU returns the cumulative CPU seconds of the browser's processes
// other than its renderers, summed by type.
func otherCPU(b *testing.B, ctx context.Context) map[string]float64 {
	b.Helper()
	info, err := chromedp.CallBrowser(ctx, systeminfo.GetProcessInfo, struct{}{})
	if err != nil {
		b.Fatal(err)
	}
	out := map[string]float64{}
	for _, p := range info.ProcessInfo {
		if p.Type != "renderer" {
			out[p.Type] += p.CPUTime
		}
	}
	return out
}

// rendererThreads returns the CPU seconds of the renderer processes'
// threads so far, summed by thread name (Linux's /proc; empty elsewhere).
func rendererThreads(b *testing.B, ctx context.Context) map[string]float64 {
	out := map[string]float64{}
	for pid := range renderers(b, ctx) {
		dir := "/proc/" + strconv.FormatInt(pid, 10) + "/task"
		tasks, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, t := range tasks {
			st, err := os.ReadFile(filepath.Join(dir, t.Name(), "stat"))
			if err != nil {
				continue
			}
			s := string(st)
			open, shut := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
			if open < 0 || shut < open {
				continue
			}
			f := strings.Fields(s[shut+1:])
			if len(f) < 13 {
				continue
			}
			u, _ := strconv.ParseFloat(f[11], 64)
			sy, _ := strconv.ParseFloat(f[12], 64)
			name := strings.TrimRight(s[open+1:shut], "0123456789")
			out[name] += (u + sy) / 100 // USER_HZ
		}
	}
	return out
}

func rendererCPU(b *testing.B, ctx context.Context) float64 {
	var sum float64
	for _, c := range renderers(b, ctx) {
		sum += c
	}
	return sum
}

// nativeBin builds the audiopost command once per run, and once more
// with the build tag purego: the Go loops in place of the amd64 assembly
// kernels, as on every other architecture.
var nativeBin = sync.OnceValues(func() ([2]string, error) {
	dir, err := os.MkdirTemp("", "audiopost-bench-bin-")
	if err != nil {
		return [2]string{}, err
	}
	nativeBinDir = dir
	var bins [2]string
	for i, tags := range []string{"", "purego"} {
		bins[i] = filepath.Join(dir, "audiopost"+tags)
		if out, err := exec.Command("go", "build", "-tags", tags, "-o", bins[i], "github.com/audiopost/audiopost/examples/audiopost").CombinedOutput(); err != nil {
			return bins, fmt.Errorf("go build: %v\n%s", err, out)
		}
	}
	return bins, nil
})

var nativeBinDir string

// removeBrowserBuilds removes the pages and the binary the browser
// benchmarks built.
func removeBrowserBuilds() {
	for _, d := range []string{pagesBuild.dir, nativeBinDir} {
		if d != "" {
			os.RemoveAll(d)
		}
	}
}

// nativeOneCore runs `audiopost process` with GOMAXPROCS=1 (built with
// purego when asked) and returns its wall-clock and CPU seconds.
func nativeOneCore(b *testing.B, in, out string, purego bool) (wall, cpu float64) {
	b.Helper()
	bins, err := nativeBin()
	if err != nil {
		b.Fatal(err)
	}
	bin := bins[0]
	if purego {
		bin = bins[1]
	}
	cmd := exec.Command(bin, "process", "-o", out, in)
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1")
	t0 := time.Now()
	if o, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("audiopost process: %v\n%s", err, o)
	}
	ps := cmd.ProcessState
	return time.Since(t0).Seconds(), (ps.UserTime() + ps.SystemTime()).Seconds()
}

// BenchmarkBrowserChain compares the in-browser build with the native one
// on five minutes of 48 kHz stereo speech (speechFile), default chain, WAV
// out: in every iteration, in turn, `audiopost process` on one core
// (GOMAXPROCS=1), the same built with -tags purego, and the process
// page's engine in headless Chromium
// (WebAssembly in a Web Worker, single-threaded). A first browser run,
// which compiles the engine, is not counted. Run with a few iterations:
//
//	go test ./benchmarks -run '^$' -bench BrowserChain -benchtime 5x
//
// browser_x_realtime and native_x_realtime are audio seconds per
// wall-clock second (medians), x_native_wall their ratio; the *_cpu
// figures the same per CPU second (the renderer process's for the
// browser: page, worker and the compiler's threads), the fairer ones on a
// machine other work shares; browser_all_x_realtime_cpu and
// x_native_cpu_all count the CPU of Chromium's other processes too (the
// browser process reads the File from disk and keeps the output's Blobs,
// as the binary's own reads and writes count in its CPU);
// purego_x_realtime_cpu and x_purego_cpu are
// the native build without its assembly kernels (-tags purego), which
// tells the WebAssembly's loss to its compiler from its lack of SIMD.
// wasm_MB is the engine's memory.
func BenchmarkBrowserChain(b *testing.B) {
	path := speechFile(b)
	out := filepath.Join(b.TempDir(), "native.wav")
	p := openInBrowser(b, path, 30*time.Minute)
	first := p.process(b, "wav")
	b.Logf("first browser run (compiles the engine): %.2f s, cpu %.2f s", first.Seconds, first.CPU)
	var bw, bc, ba, nw, nc, pw, pc, mem []float64
	for b.Loop() {
		w, c := nativeOneCore(b, path, out, false)
		nw, nc = append(nw, w), append(nc, c)
		w2, c2 := nativeOneCore(b, path, out, true)
		pw, pc = append(pw, w2), append(pc, c2)
		r := p.process(b, "wav")
		bw, bc, ba, mem = append(bw, r.Seconds), append(bc, r.CPU), append(ba, r.CPU+r.others()), append(mem, r.WasmMemory)
		b.Logf("native 1 core %.2f s (cpu %.2f) | purego %.2f s (cpu %.2f) | browser %.2f s (cpu %.2f, engine memory %.0f MB; %s; other processes %s)",
			w, c, w2, c2, r.Seconds, r.CPU, r.WasmMemory/(1<<20), r.threadShares(), r.otherShares())
	}
	med := func(x []float64) float64 {
		s := slices.Sorted(slices.Values(x))
		if len(s)%2 == 1 {
			return s[len(s)/2]
		}
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	const secs = speechSeconds
	b.ReportMetric(secs/med(bw), "browser_x_realtime")
	b.ReportMetric(secs/med(nw), "native_x_realtime")
	b.ReportMetric(med(nw)/med(bw), "x_native_wall")
	b.ReportMetric(secs/med(bc), "browser_x_realtime_cpu")
	b.ReportMetric(secs/med(nc), "native_x_realtime_cpu")
	b.ReportMetric(med(nc)/med(bc), "x_native_cpu")
	b.ReportMetric(secs/med(ba), "browser_all_x_realtime_cpu")
	b.ReportMetric(med(nc)/med(ba), "x_native_cpu_all")
	b.ReportMetric(secs/med(pc), "purego_x_realtime_cpu")
	b.ReportMetric(med(pc)/med(bc), "x_purego_cpu")
	b.ReportMetric(slices.Max(mem)/(1<<20), "wasm_MB")
}

var browserLongSeconds = flag.Float64("browser-long-seconds", 7200, "length of the recording BenchmarkBrowser2h processes, seconds")

// BenchmarkBrowser2h processes two hours of 48 kHz stereo speech
// (loopedSpeechFile, 1.4 GB of WAV) in the process page, FLAC out, and
// follows the tab's memory every second through the DevTools protocol: the
// page's JavaScript heap (Performance.getMetrics), the worker's
// (Runtime.getHeapUsage in the worker's own target) and the engine's
// WebAssembly memory (read in the worker), whose sum must stay under
// 300 MB; and the renderer process's resident memory (page, worker,
// the compiled engine; its peak is VmHWM), under 300 MB too. The output
// itself is Blob parts, which Chromium keeps outside the tab (and on
// disk when memory is short). The engine's progress is logged every
// half minute, and a run that makes none for three minutes, nor spends
// the renderer's CPU, fails. Run
// once (-browser-long-seconds sets another length):
//
//	go test ./benchmarks -run '^$' -bench Browser2h -benchtime 1x -timeout 3h
func BenchmarkBrowser2h(b *testing.B) {
	const bound = 300
	secs := *browserLongSeconds
	path := loopedSpeechFile(b, secs)
	p := openInBrowser(b, path, 150*time.Minute)
	if _, err := chromedp.Call(p.ctx, performance.Enable, performance.EnableParams{}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		var (
			done                                   = make(chan browserRun, 1)
			peakRSS, peakHeap, peakWorker, peakTab float64
			peakWasm                               float64
			pid                                    int64
			worker                                 context.Context
			last                                   string
			lastCPU                                float64
			lastChange                             = time.Now()
			lastLog                                time.Time
		)
		go func() { done <- p.process(b, "flac") }()
		tick := time.NewTicker(time.Second)
		var r browserRun
	wait:
		for {
			select {
			case r = <-done:
				break wait
			case <-tick.C:
			}
			if pid == 0 {
				for id := range renderers(b, p.ctx) {
					if rss := procStatus(id, "VmRSS"); rss > 0 && (pid == 0 || rss > procStatus(pid, "VmRSS")) {
						pid = id
					}
				}
			}
			peakRSS = max(peakRSS, procStatus(pid, "VmHWM"))
			var heap, wheap, wasm float64
			if m, err := chromedp.Call(p.ctx, performance.GetMetrics, struct{}{}); err == nil {
				for _, x := range m.Metrics {
					if x.Name == "JSHeapTotalSize" {
						heap = x.Value / (1 << 20)
					}
				}
			}
			if worker == nil {
				worker = workerTarget(b, p.ctx)
			}
			if worker != nil {
				if u, err := chromedp.Call(worker, runtime.GetHeapUsage, cdp.Empty{}); err == nil {
					wheap = u.TotalSize / (1 << 20)
				}
				if w, err := chromedp.Run(worker, chromedp.Evaluate[float64](`memory ? memory.buffer.byteLength : 0`)); err == nil {
					wasm = w / (1 << 20)
				}
			}
			peakHeap, peakWorker, peakWasm = max(peakHeap, heap), max(peakWorker, wheap), max(peakWasm, wasm)
			peakTab = max(peakTab, heap+wheap+wasm)
			// Working is progress reported or, where the engine reports
			// none (reading its FLAC back for the checksum), CPU spent.
			prog, _ := chromedp.Run(p.ctx, chromedp.Evaluate[string](`JSON.stringify(window.lastProgress || null)`))
			if cpu := rendererCPU(b, p.ctx); prog != last || cpu > lastCPU+1 {
				last, lastCPU, lastChange = prog, cpu, time.Now()
			}
			if time.Since(lastLog) >= 30*time.Second {
				lastLog = time.Now()
				b.Logf("progress %s; page heap %.0f MB, worker heap %.0f MB, engine %.0f MB, renderer RSS %.0f MB",
					prog, heap, wheap, wasm, procStatus(pid, "VmRSS"))
			}
			if time.Since(lastChange) > 3*time.Minute {
				b.Fatalf("no progress for three minutes; last %s", last)
			}
		}
		tick.Stop()
		peakWasm = max(peakWasm, r.WasmMemory/(1<<20))
		b.Logf("%.0f s in %.0f s (%.1fx realtime, renderer cpu %.0f s): renderer peak RSS %.0f MB; DevTools: page JS heap %.0f MB, worker JS heap %.0f MB, engine memory %.0f MB, their largest sum %.0f MB",
			secs, r.Seconds, secs/r.Seconds, r.CPU, peakRSS, peakHeap, peakWorker, peakWasm, peakTab)
		b.ReportMetric(peakRSS, "renderer_peak_MB")
		b.ReportMetric(peakHeap, "js_heap_MB")
		b.ReportMetric(peakWorker, "worker_heap_MB")
		b.ReportMetric(peakWasm, "wasm_MB")
		b.ReportMetric(peakTab, "tab_MB")
		b.ReportMetric(secs/r.Seconds, "x_realtime")
		if math.Abs(r.Length-secs) > 0.1 {
			b.Errorf("output of %.1f s, want %v", r.Length, secs)
		}
		if peakRSS >= bound || peakTab >= bound {
			b.Errorf("the tab's memory reached %.0f MB (renderer), %.0f MB (JS heaps and engine); the bound is %d MB", peakRSS, peakTab, bound)
		}
	}
}

// workerTarget returns a context on the page's Web Worker, the engine's,
// or nil while there is none.
func workerTarget(b *testing.B, ctx context.Context) context.Context {
	ts, err := chromedp.Targets(ctx)
	if err != nil {
		return nil
	}
	for _, t := range ts {
		if t.Type == "worker" && strings.HasSuffix(t.URL, "/worker.js") {
			wctx, cancel := chromedp.NewContext(ctx, chromedp.WithTargetID(t.TargetID))
			b.Cleanup(cancel)
			return wctx
		}
	}
	return nil
}

// procStatus returns a memory field of /proc/PID/status in MB (0 when
// unknown).
func procStatus(pid int64, field string) float64 {
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile("/proc/" + strconv.FormatInt(pid, 10) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}
