package httpapi_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/procpool"
	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/transport/httpapi"
)

// scrape GETs /metrics, checks the content type and parses the text.
func (e *env) scrape(t *testing.T, header ...string) map[string]*promFamily {
	t.Helper()
	r, _ := http.NewRequest("GET", e.base+"/metrics", nil)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	status, h, raw := e.send(r)
	if status != http.StatusOK || h.Get("Content-Type") != "text/plain; version=0.0.4; charset=utf-8" {
		t.Fatalf("GET /metrics: %d %q: %s", status, h.Get("Content-Type"), raw)
	}
	fams, err := parsePromText(string(raw))
	if err != nil {
		t.Fatalf("the exposition does not parse: %v\n%s", err, raw)
	}
	if path, ok := need.HasProgram(t, "promtool"); ok {
		cmd := exec.Command(path, "check", "metrics")
		cmd.Stdin = bytes.NewReader(raw)
		// promtool's lint findings (exit 3) are style advice; a parse
		// error is exit 1.
		if out, err := cmd.CombinedOutput(); err != nil && cmd.ProcessState.ExitCode() != 3 {
			t.Errorf("promtool check metrics: %v\n%s", err, out)
		}
	}
	return fams
}

func wantValue(t *testing.T, fams map[string]*promFamily, family, sample string, want float64, labels ...string) {
	t.Helper()
	f := fams[family]
	if f == nil {
		t.Errorf("no family %s", family)
		return
	}
	if got := f.value(sample, labels...); got != want {
		t.Errorf("%s%v = %v, want %v", sample, labels, got, want)
	}
}

func TestMetrics(t *testing.T) {
	m := httpapi.NewMetrics()
	e := newEnv(t, func(c *httpapi.Config) { c.Metrics = m })
	// A production started (its job queued), one of another user created,
	// a 404 and a 401.
	id := e.create(e.keyA, map[string]any{"output_files": []any{map[string]any{"format": "mp3"}}})
	e.must(e.upload("/api/production/"+id+"/upload.json", e.keyA, part{field: "input_file", name: "in.wav", data: makeWAV(t, 1, 8000, 0.1, audio.Tags{})}))
	e.must(e.req("POST", "/api/production/"+id+"/start.json", e.keyA, nil))
	e.create(e.keyB, map[string]any{})
	e.wantErr(e.req("GET", "/api/production/"+id+".json", e.keyB, nil), 404, httpapi.CodeNotFound)
	e.wantErr(e.req("GET", "/api/nothing.json", e.keyA, nil), 404, httpapi.CodeNotFound)
	e.wantErr(e.req("GET", "/api/user.json", "", nil), 401, httpapi.CodeUnauthorized)
	// What the runner reports.
	m.ObserveProcessing(production.StatusDone, 120, 30*time.Second)
	m.ObserveProcessing(production.StatusDone, 60, 0) // no engine time: no realtime factor
	m.ObserveProcessing(production.StatusError, 10, 5*time.Second)
	m.ObserveProcessing(production.StatusWaiting, 10, 5*time.Second) // not finished: ignored

	// No polling is needed for the latencies: a request is recorded
	// before its handler returns, and net/http finishes the response
	// (the last chunk, or the whole of a small body) only after that.
	fams := e.scrape(t)
	wantValue(t, fams, "audiopost_jobs", "audiopost_jobs", 1, "state", "queued")
	for _, st := range []string{"running", "done", "failed", "canceled"} {
		wantValue(t, fams, "audiopost_jobs", "audiopost_jobs", 0, "state", st)
	}
	wantValue(t, fams, "audiopost_store_up", "audiopost_store_up", 1)
	wantValue(t, fams, "audiopost_productions_processed_total", "audiopost_productions_processed_total", 3)
	wantValue(t, fams, "audiopost_productions_failed_total", "audiopost_productions_failed_total", 1)
	wantValue(t, fams, "audiopost_processing_seconds_total", "audiopost_processing_seconds_total", 35)
	wantValue(t, fams, "audiopost_processed_audio_seconds_total", "audiopost_processed_audio_seconds_total", 180)
	wantValue(t, fams, "audiopost_production_realtime_factor", "audiopost_production_realtime_factor_sum", 4)
	wantValue(t, fams, "audiopost_production_realtime_factor", "audiopost_production_realtime_factor_count", 1)
	wantValue(t, fams, "audiopost_http_requests_in_flight", "audiopost_http_requests_in_flight", 1) // the scrape

	const lat = "audiopost_http_request_duration_seconds"
	for _, c := range []struct {
		route, class string
		n            float64
	}{
		{"POST /api/productions.json", "2xx", 2},
		{"POST /api/production/{uuid}/{cmd}", "2xx", 2},
		{"GET /api/production/{file}", "4xx", 1},
		{"/api/", "4xx", 1}, // an unknown API path
		{"GET /api/user.json", "4xx", 1},
	} {
		wantValue(t, fams, lat, lat+"_count", c.n, "route", c.route, "status_class", c.class)
		wantValue(t, fams, lat, lat+"_bucket", c.n, "route", c.route, "status_class", c.class, "le", "+Inf")
	}
	for _, s := range fams[lat].samples {
		if strings.Contains(s.labels["route"], id) {
			t.Errorf("a route label holds a uuid: %v", s.labels)
		}
	}
	if fams["go_goroutines"].value("go_goroutines") < 1 || !(fams["go_memstats_heap_alloc_bytes"].value("go_memstats_heap_alloc_bytes") > 0) {
		t.Error("no Go runtime metrics")
	}
	for name, typ := range map[string]string{"audiopost_jobs": "gauge", "audiopost_productions_processed_total": "counter",
		"audiopost_processing_seconds_total": "counter", "audiopost_production_realtime_factor": "summary", lat: "histogram",
		"go_goroutines": "gauge", "go_memstats_heap_alloc_bytes": "gauge", "go_gc_cycles_total": "counter", "process_start_time_seconds": "gauge"} {
		if f := fams[name]; f == nil || f.typ != typ || f.help == "" {
			t.Errorf("%s: %+v, want a %s with HELP", name, f, typ)
		}
	}

	// The scrape itself is measured once it is answered.
	wantValue(t, e.scrape(t), lat, lat+"_count", 1, "route", "GET /metrics", "status_class", "2xx")
}

// noCounter hides the store's CountJobs.
type noCounter struct{ storage.Store }

// failingCounter counts no jobs.
type failingCounter struct{ storage.Store }

func (failingCounter) CountJobs(context.Context) (map[storage.JobState]int64, error) {
	return nil, errors.New("the database is gone")
}

func TestMetricsWithoutJobCounts(t *testing.T) {
	e := newEnv(t, func(c *httpapi.Config) { c.Store = noCounter{c.Store} })
	fams := e.scrape(t)
	if fams["audiopost_jobs"] != nil || fams["audiopost_store_up"] != nil {
		t.Error("job metrics from a store that cannot count jobs")
	}
	if fams["audiopost_productions_processed_total"] == nil {
		t.Error("no processing metrics")
	}

	e = newEnv(t, func(c *httpapi.Config) { c.Store = failingCounter{c.Store} })
	fams = e.scrape(t)
	if fams["audiopost_jobs"] != nil {
		t.Error("job counts reported although counting failed")
	}
	wantValue(t, fams, "audiopost_store_up", "audiopost_store_up", 0)
}

// TestMetricsPrograms: with Config.Processes, /metrics reports the pool's
// size, the programs running and the most that ran at once, and the
// handler's probes of uploads run in that pool.
func TestMetricsPrograms(t *testing.T) {
	need.Program(t, "ffmpeg")
	pool := procpool.New(procpool.Config{Size: 3})
	e := newEnv(t, func(c *httpapi.Config) { c.Processes = pool })
	fams := e.scrape(t)
	wantValue(t, fams, "audiopost_external_programs_limit", "audiopost_external_programs_limit", 3)
	wantValue(t, fams, "audiopost_external_programs", "audiopost_external_programs", 0)
	wantValue(t, fams, "audiopost_external_programs_peak", "audiopost_external_programs_peak", 0)
	// An Opus upload is probed and decoded by ffmpeg: in the pool.
	wavPath := filepath.Join(t.TempDir(), "in.wav")
	testaudio.WriteWAV(t, wavPath, testaudio.SpeechLike(48000, 1, 0.05), 48000)
	opus := filepath.Join(t.TempDir(), "in.opus")
	if out, err := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-i", wavPath, "-c:a", "libopus", opus).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v\n%s", err, out)
	}
	data, err := os.ReadFile(opus)
	if err != nil {
		t.Fatal(err)
	}
	id := e.create(e.keyA, map[string]any{})
	e.must(e.upload("/api/production/"+id+"/upload.json", e.keyA, part{field: "input_file", name: "in.opus", data: data}))
	fams = e.scrape(t)
	if peak := fams["audiopost_external_programs_peak"].value("audiopost_external_programs_peak"); peak < 1 || peak > 3 {
		t.Errorf("peak %v after an Opus upload, want 1 to 3", peak)
	}
	wantValue(t, fams, "audiopost_external_programs", "audiopost_external_programs", 0)
}

func TestMetricsToken(t *testing.T) {
	e := newEnv(t, func(c *httpapi.Config) { c.MetricsToken = "s3cret-token" })
	for _, authz := range []string{"", "Bearer wrong", "Basic czNjcmV0LXRva2Vu", "Bearer s3cret-token-and-more", "Bearer "} {
		r, _ := http.NewRequest("GET", e.base+"/metrics", nil)
		if authz != "" {
			r.Header.Set("Authorization", authz)
		}
		status, h, raw := e.send(r)
		if status != http.StatusUnauthorized || !strings.HasPrefix(h.Get("WWW-Authenticate"), "Bearer") || bytes.Contains(raw, []byte("audiopost_")) {
			t.Errorf("Authorization %q: %d %v %s", authz, status, h, raw)
		}
	}
	// An API key is no metrics token.
	r, _ := http.NewRequest("GET", e.base+"/metrics", nil)
	r.Header.Set("Authorization", "Bearer "+e.keyA)
	if status, _, _ := e.send(r); status != http.StatusUnauthorized {
		t.Errorf("an API key opened /metrics: %d", status)
	}
	e.scrape(t, "Authorization", "Bearer s3cret-token")
	e.scrape(t, "Authorization", "bearer s3cret-token")
	// Health and readiness stay open.
	for _, p := range []string{"/healthz", "/readyz"} {
		if status, _, _ := e.send(mustRequest(t, "GET", e.base+p)); status != http.StatusOK {
			t.Errorf("%s: %d", p, status)
		}
	}
}

func mustRequest(t *testing.T, method, url string) *http.Request {
	t.Helper()
	r, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRouteLabels(t *testing.T) {
	h := handlerAt(t, "http://127.0.0.1:8080/mount")
	for path, want := range map[string]string{
		"GET /mount/api/productions.json":              "GET /api/productions.json",
		"GET /mount/api/production/abc.json":           "GET /api/production/{file}",
		"PUT /mount/api/production/abc.json":           "/api/production/{file}", // the 405 fallback
		"GET /mount/api/production/abc/status.json":    "GET /api/production/{uuid}/{cmd}",
		"GET /mount/api/info.json":                     "GET /api/info.json",
		"GET /mount/api/download/preset/abc/cover.png": "GET /api/download/{kind}/{uuid}/{name...}",
		"GET /mount/api/no/such/thing":                 "/api/",
		"GET /mount/healthz":                           "GET /healthz",
		"GET /mount/metrics":                           "GET /metrics",
		"GET /mount/api/openapi.json":                  "GET /api/openapi.json",
		"GET /elsewhere":                               "unmatched",
	} {
		method, p, _ := strings.Cut(path, " ")
		if got := httpapi.PatternOf(h, httptest.NewRequest(method, "http://127.0.0.1:8080"+p, nil)); got != want {
			t.Errorf("%s: label %q, want %q", path, got, want)
		}
	}
}

func TestPromTextParserRejects(t *testing.T) {
	for _, bad := range []string{
		"a 1",                              // no newline at the end
		"a{b=\"c} 1\n",                     // unterminated label value
		"a{b=\"\\t\"} 1\n",                 // bad escape
		"a{1b=\"c\"} 1\n",                  // bad label name
		"a 1\nb 2\na{x=\"y\"} 3\n",         // a's samples apart
		"a 1\na 2\n",                       // duplicate series
		"a one\n",                          // bad value
		"# TYPE a counter\na -1\n",         // negative counter
		"# TYPE a gauge\n# TYPE a gauge\n", // second TYPE
		"a 1\n# TYPE a gauge\n",            // TYPE after samples
		"# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n", // not cumulative
		"# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_sum 1\nh_count 1\n",                          // no +Inf
	} {
		if _, err := parsePromText(bad); err == nil {
			t.Errorf("parsed %q", bad)
		}
	}
	good := "# HELP a A \\\\ help\\n.\n# TYPE a counter\na{l=\"x\\\"y\\\\\\n\"} 1.5e+06\n" +
		"# TYPE h histogram\nh_bucket{le=\"0.5\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 0.7\nh_count 2\n"
	fams, err := parsePromText(good)
	if err != nil {
		t.Fatal(err)
	}
	if v := fams["a"].value("a", "l", "x\"y\\\n"); v != 1.5e6 || math.IsNaN(fams["h"].value("h_sum")) {
		t.Errorf("parsed %+v", fams)
	}
}
