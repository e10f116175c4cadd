package httpapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"maps"
	"math"
	"net/http"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/audiopost/audiopost/audio/procpool"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/storage"
)

// GET {base}/metrics serves the Prometheus text exposition format 0.0.4:
//
//	audiopost_jobs{state}                           gauge    jobs in the store by state (queued, running, done, failed, canceled)
//	audiopost_store_up                              gauge    1 when this scrape could count the jobs, else 0 (and no audiopost_jobs)
//	audiopost_productions_processed_total           counter  productions whose processing finished (Done or Error)
//	audiopost_productions_failed_total              counter  of those, the ones that ended in Error
//	audiopost_processing_seconds_total              counter  engine time of the finished productions
//	audiopost_processed_audio_seconds_total         counter  length of the productions that ended Done
//	audiopost_production_realtime_factor            summary  audio seconds per processing second of each Done production
//	audiopost_external_programs                     gauge    external programs (ffmpeg, ffprobe, pocketsphinx) running now
//	audiopost_external_programs_limit               gauge    how many the process pool runs at once
//	audiopost_external_programs_peak                gauge    the most that ran at once since the start
//	audiopost_http_requests_in_flight               gauge    requests being served, this scrape included
//	audiopost_http_request_duration_seconds{route,status_class}
//	                                                histogram request latency by ServeMux pattern and 2xx..5xx
//	go_goroutines, go_memstats_heap_alloc_bytes,    gauges   Go runtime basics (runtime/metrics)
//	go_memstats_sys_bytes, go_info{version},
//	process_start_time_seconds
//	go_gc_cycles_total                              counter
//
// The job gauges need a store that implements JobCounter (sqlstore.Store
// does); without one they and audiopost_store_up are left out. The
// program gauges are those of Config.Processes, left out without it. The
// processing metrics are fed by the runner through
// Metrics.ObserveProcessing (runner.Config.OnProcessed), so they are
// those of the process the runner runs in.

// JobCounter is implemented by stores that can count the jobs of the
// durable queue by state. /metrics reports audiopost_jobs from it when
// Config.Store implements it.
type JobCounter interface {
	CountJobs(ctx context.Context) (map[storage.JobState]int64, error)
}

// metricsCountTimeout bounds the job count of one scrape.
const metricsCountTimeout = 2 * time.Second

// latencyBuckets are the upper bounds (seconds) of the request latency
// histogram: JSON calls take milliseconds, uploads and URL fetches
// minutes.
var latencyBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300}

// jobStates are reported even when no job is in them, so that series do
// not appear and vanish.
var jobStates = []storage.JobState{storage.JobQueued, storage.JobRunning, storage.JobStopping, storage.JobDone, storage.JobFailed, storage.JobCanceled}

// Metrics holds the counters /metrics reports besides the store's job
// counts and the Go runtime: processing outcomes, which the job runner
// reports through ObserveProcessing, and HTTP request latencies, which
// the handler records. Pass the same Metrics as Config.Metrics and wire
// ObserveProcessing into runner.Config.OnProcessed; a handler without
// Config.Metrics keeps its own, whose processing counters stay 0. The
// zero value is ready to use; it is safe for concurrent use.
type Metrics struct {
	mu                sync.Mutex
	processed, failed float64
	processingSeconds float64
	audioSeconds      float64
	rtfSum, rtfCount  float64
	http              map[latencyKey]*histogram
	inFlight          atomic.Int64
}

// NewMetrics returns an empty Metrics.
func NewMetrics() *Metrics { return &Metrics{} }

type latencyKey struct{ route, class string }

type histogram struct {
	counts []float64 // per bucket, not cumulative; the last is +Inf
	sum    float64
	count  float64
}

// ObserveProcessing records the outcome of one processing run: status
// is the production's final status, audio its length in seconds and took
// how long the engine ran. Only finished productions (Done or Error)
// count; the realtime factor is taken from Done ones that took time. Its
// signature is that of runner.Config.OnProcessed.
func (m *Metrics) ObserveProcessing(status production.Status, audio float64, took time.Duration) {
	if !status.Finished() {
		return
	}
	sec := max(took.Seconds(), 0)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.processed++
	m.processingSeconds += sec
	if status == production.StatusError {
		m.failed++
		return
	}
	if audio > 0 && !math.IsInf(audio, 0) {
		m.audioSeconds += audio
		if sec > 0 {
			m.rtfSum += audio / sec
			m.rtfCount++
		}
	}
}

// observeRequest records one request's latency.
func (m *Metrics) observeRequest(route string, status int, d time.Duration) {
	class := "other"
	if status >= 100 && status < 600 {
		class = strconv.Itoa(status/100) + "xx"
	}
	sec := d.Seconds()
	i, _ := slices.BinarySearch(latencyBuckets, sec)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.http == nil {
		m.http = map[latencyKey]*histogram{}
	}
	k := latencyKey{route, class}
	h := m.http[k]
	if h == nil {
		h = &histogram{counts: make([]float64, len(latencyBuckets)+1)}
		m.http[k] = h
	}
	h.counts[i]++
	h.sum += sec
	h.count++
}

// processStart is reported as process_start_time_seconds.
var processStart = time.Now()

// writeExposition writes every metric. counted says whether the store
// can count jobs and storeUp whether it did; jobs are its counts.
// pool is the process pool (nil: none).
func (m *Metrics) writeExposition(b *bytes.Buffer, jobs map[storage.JobState]int64, counted, storeUp bool, pool *procpool.Pool) {
	p := promWriter{b}
	if pool != nil {
		p.family("audiopost_external_programs", "gauge", "External programs (ffmpeg, ffprobe, pocketsphinx) running now.")
		p.sample("audiopost_external_programs", float64(pool.Running()))
		p.family("audiopost_external_programs_limit", "gauge", "How many external programs the process pool runs at once.")
		p.sample("audiopost_external_programs_limit", float64(pool.Size()))
		p.family("audiopost_external_programs_peak", "gauge", "The most external programs that ran at once since the start.")
		p.sample("audiopost_external_programs_peak", float64(pool.Peak()))
	}
	if counted && storeUp {
		p.family("audiopost_jobs", "gauge", "Jobs of the durable queue by state.")
		states := slices.Clone(jobStates)
		for _, st := range slices.Sorted(maps.Keys(jobs)) {
			if !slices.Contains(states, st) {
				states = append(states, st)
			}
		}
		for _, st := range states {
			p.sample("audiopost_jobs", float64(jobs[st]), "state", string(st))
		}
	}
	if counted {
		p.family("audiopost_store_up", "gauge", "1 when this scrape could count the jobs in the store, else 0.")
		p.sample("audiopost_store_up", boolFloat(storeUp))
	}

	m.mu.Lock()
	p.family("audiopost_productions_processed_total", "counter", "Productions whose processing finished, Done or Error.")
	p.sample("audiopost_productions_processed_total", m.processed)
	p.family("audiopost_productions_failed_total", "counter", "Productions whose processing ended in Error.")
	p.sample("audiopost_productions_failed_total", m.failed)
	p.family("audiopost_processing_seconds_total", "counter", "Seconds the engine spent on finished productions.")
	p.sample("audiopost_processing_seconds_total", m.processingSeconds)
	p.family("audiopost_processed_audio_seconds_total", "counter", "Seconds of audio of the productions that ended Done.")
	p.sample("audiopost_processed_audio_seconds_total", m.audioSeconds)
	p.family("audiopost_production_realtime_factor", "summary", "Audio seconds per processing second of each production that ended Done.")
	p.sample("audiopost_production_realtime_factor_sum", m.rtfSum)
	p.sample("audiopost_production_realtime_factor_count", m.rtfCount)

	p.family("audiopost_http_requests_in_flight", "gauge", "HTTP requests being served, this scrape included.")
	p.sample("audiopost_http_requests_in_flight", float64(m.inFlight.Load()))

	const lat = "audiopost_http_request_duration_seconds"
	p.family(lat, "histogram", "HTTP request latency by route pattern and status class.")
	keys := slices.SortedFunc(maps.Keys(m.http), func(a, b latencyKey) int {
		if c := strings.Compare(a.route, b.route); c != 0 {
			return c
		}
		return strings.Compare(a.class, b.class)
	})
	for _, k := range keys {
		h := m.http[k]
		var cum float64
		for i, c := range h.counts {
			cum += c
			le := "+Inf"
			if i < len(latencyBuckets) {
				le = formatFloat(latencyBuckets[i])
			}
			p.sample(lat+"_bucket", cum, "route", k.route, "status_class", k.class, "le", le)
		}
		p.sample(lat+"_sum", h.sum, "route", k.route, "status_class", k.class)
		p.sample(lat+"_count", h.count, "route", k.route, "status_class", k.class)
	}
	m.mu.Unlock()

	writeRuntimeMetrics(&p)
}

var runtimeSamples = []string{
	"/sched/goroutines:goroutines",
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/total:bytes",
	"/gc/cycles/total:gc-cycles",
}

func writeRuntimeMetrics(p *promWriter) {
	s := make([]metrics.Sample, len(runtimeSamples))
	for i, name := range runtimeSamples {
		s[i].Name = name
	}
	metrics.Read(s)
	val := func(i int) float64 {
		switch s[i].Value.Kind() {
		case metrics.KindUint64:
			return float64(s[i].Value.Uint64())
		case metrics.KindFloat64:
			return s[i].Value.Float64()
		}
		return math.NaN()
	}
	p.family("go_goroutines", "gauge", "Goroutines that currently exist.")
	p.sample("go_goroutines", val(0))
	p.family("go_memstats_heap_alloc_bytes", "gauge", "Bytes of allocated heap objects.")
	p.sample("go_memstats_heap_alloc_bytes", val(1))
	p.family("go_memstats_sys_bytes", "gauge", "Bytes of memory obtained from the operating system.")
	p.sample("go_memstats_sys_bytes", val(2))
	p.family("go_gc_cycles_total", "counter", "Completed garbage collection cycles.")
	p.sample("go_gc_cycles_total", val(3))
	p.family("go_info", "gauge", "Information about the Go environment.")
	p.sample("go_info", 1, "version", runtime.Version())
	p.family("process_start_time_seconds", "gauge", "Start time of the process since the Unix epoch in seconds.")
	p.sample("process_start_time_seconds", float64(processStart.UnixMilli())/1000)
}

func boolFloat(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// promWriter writes the text exposition format, version 0.0.4.
type promWriter struct{ b *bytes.Buffer }

func (p *promWriter) family(name, typ, help string) {
	p.b.WriteString("# HELP " + name + " " + escapeHelp(help) + "\n")
	p.b.WriteString("# TYPE " + name + " " + typ + "\n")
}

// sample writes one sample; labels are name, value pairs.
func (p *promWriter) sample(name string, v float64, labels ...string) {
	p.b.WriteString(name)
	if len(labels) > 0 {
		p.b.WriteByte('{')
		for i := 0; i+1 < len(labels); i += 2 {
			if i > 0 {
				p.b.WriteByte(',')
			}
			p.b.WriteString(labels[i] + `="` + escapeLabel(labels[i+1]) + `"`)
		}
		p.b.WriteByte('}')
	}
	p.b.WriteByte(' ')
	p.b.WriteString(formatFloat(v))
	p.b.WriteByte('\n')
}

var (
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
	labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
)

func escapeHelp(s string) string  { return helpEscaper.Replace(s) }
func escapeLabel(s string) string { return labelEscaper.Replace(s) }

// formatFloat formats a sample value or an le bound as Prometheus parses
// it.
func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// serveMetrics: GET {base}/metrics.
func (s *server) serveMetrics(w http.ResponseWriter, r *http.Request) {
	if s.ops.metricsToken != "" && !bearerMatches(r, s.ops.metricsToken) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="audiopost metrics"`)
		plain(w, http.StatusUnauthorized, "unauthorized: /metrics needs the metrics bearer token\n")
		return
	}
	var (
		jobs             map[storage.JobState]int64
		counted, storeUp bool
	)
	if jc := s.ops.jobs; jc != nil {
		counted = true
		ctx, cancel := context.WithTimeout(r.Context(), metricsCountTimeout)
		var err error
		jobs, err = jc.CountJobs(ctx)
		cancel()
		if err != nil {
			s.log.WarnContext(r.Context(), "httpapi: metrics: counting jobs", "err", err)
			jobs = nil
		}
		storeUp = err == nil
	}
	var b bytes.Buffer
	s.ops.metrics.writeExposition(&b, jobs, counted, storeUp, s.ops.processes)
	h := w.Header()
	h.Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.Write(b.Bytes())
}

// bearerMatches reports whether r carries "Authorization: Bearer token",
// comparing in constant time (over hashes, so the length leaks nothing
// either).
func bearerMatches(r *http.Request, token string) bool {
	scheme, given, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return false
	}
	a, b := sha256.Sum256([]byte(strings.TrimSpace(given))), sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

// plain writes a short text/plain answer.
func plain(w http.ResponseWriter, status int, body string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write([]byte(body))
}
