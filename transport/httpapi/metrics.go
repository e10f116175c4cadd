package httpapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"log/slog"
	"maps"
	"math"
	"net/http"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/common/expfmt"

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
//	go_goroutines, go_memstats_heap_alloc_bytes,    the Go runtime and the process (client_golang's
//	go_memstats_sys_bytes, go_info, go_gc_cycles_total,  collectors), on the handler's own registry only
//	process_start_time_seconds, ...
//
// The metrics are client_golang collectors: Config.Registerer puts the
// audiopost_ ones into the embedding service's registry, beside its own
// runtime metrics; without one the handler keeps a registry of its own
// with the Go and process collectors too. The job gauges need a store
// that implements JobCounter (sqlstore.Store does); without one they and
// audiopost_store_up are left out. The program gauges are those of
// Config.Processes, left out without it. The processing metrics are fed
// by the runner through Metrics.ObserveProcessing
// (runner.Config.OnProcessed), so they are those of the process the
// runner runs in.

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

// Metrics holds the collectors of processing outcomes, which the job
// runner reports through ObserveProcessing, and of HTTP requests, which
// the handler records. Pass the same Metrics as Config.Metrics and wire
// ObserveProcessing into runner.Config.OnProcessed; a handler without
// Config.Metrics keeps its own, whose processing counters stay 0. It is
// safe for concurrent use.
type Metrics struct {
	processed, failed prometheus.Counter
	processingSeconds prometheus.Counter
	audioSeconds      prometheus.Counter
	rtf               prometheus.Summary
	inFlight          prometheus.Gauge
	latency           *prometheus.HistogramVec
}

// NewMetrics returns a Metrics with every count at 0.
func NewMetrics() *Metrics {
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	}
	return &Metrics{
		processed:         counter("audiopost_productions_processed_total", "Productions whose processing finished, Done or Error."),
		failed:            counter("audiopost_productions_failed_total", "Productions whose processing ended in Error."),
		processingSeconds: counter("audiopost_processing_seconds_total", "Seconds the engine spent on finished productions."),
		audioSeconds:      counter("audiopost_processed_audio_seconds_total", "Seconds of audio of the productions that ended Done."),
		rtf: prometheus.NewSummary(prometheus.SummaryOpts{Name: "audiopost_production_realtime_factor",
			Help: "Audio seconds per processing second of each production that ended Done."}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{Name: "audiopost_http_requests_in_flight",
			Help: "HTTP requests being served, this scrape included."}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "audiopost_http_request_duration_seconds",
			Help: "HTTP request latency by route pattern and status class.", Buckets: latencyBuckets}, []string{"route", "status_class"}),
	}
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
	m.processed.Inc()
	m.processingSeconds.Add(sec)
	if status == production.StatusError {
		m.failed.Inc()
		return
	}
	if audio > 0 && !math.IsInf(audio, 0) {
		m.audioSeconds.Add(audio)
		if sec > 0 {
			m.rtf.Observe(audio / sec)
		}
	}
}

// observeRequest records one request's latency.
func (m *Metrics) observeRequest(route string, status int, d time.Duration) {
	class := "other"
	if status >= 100 && status < 600 {
		class = strconv.Itoa(status/100) + "xx"
	}
	m.latency.WithLabelValues(route, class).Observe(d.Seconds())
}

// register puts m's collectors into reg; those a handler sharing m
// registered already are taken as they are.
func (m *Metrics) register(reg prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{m.processed, m.failed, m.processingSeconds, m.audioSeconds, m.rtf, m.inFlight, m.latency} {
		if err := reg.Register(c); err != nil && !errors.As(err, new(prometheus.AlreadyRegisteredError)) {
			return err
		}
	}
	return nil
}

// jobCollector reports the store's job counts at every scrape.
type jobCollector struct {
	counter JobCounter
	log     *slog.Logger
	jobs    *prometheus.Desc
	up      *prometheus.Desc
}

func newJobCollector(c JobCounter, log *slog.Logger) *jobCollector {
	return &jobCollector{counter: c, log: log,
		jobs: prometheus.NewDesc("audiopost_jobs", "Jobs of the durable queue by state.", []string{"state"}, nil),
		up:   prometheus.NewDesc("audiopost_store_up", "1 when this scrape could count the jobs in the store, else 0.", nil, nil)}
}

func (c *jobCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.jobs; ch <- c.up }

func (c *jobCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), metricsCountTimeout)
	jobs, err := c.counter.CountJobs(ctx)
	cancel()
	if err != nil {
		c.log.Warn("httpapi: metrics: counting jobs", "err", err)
		ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 1)
	states := slices.Clone(jobStates)
	for _, st := range slices.Sorted(maps.Keys(jobs)) {
		if !slices.Contains(states, st) {
			states = append(states, st)
		}
	}
	for _, st := range states {
		ch <- prometheus.MustNewConstMetric(c.jobs, prometheus.GaugeValue, float64(jobs[st]), string(st))
	}
}

// poolCollectors report the process pool's programs at every scrape.
func poolCollectors(pool *procpool.Pool) []prometheus.Collector {
	gauge := func(name, help string, f func() int) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 { return float64(f()) })
	}
	return []prometheus.Collector{
		gauge("audiopost_external_programs", "External programs (ffmpeg, ffprobe, pocketsphinx) running now.", pool.Running),
		gauge("audiopost_external_programs_limit", "How many external programs the process pool runs at once.", pool.Size),
		gauge("audiopost_external_programs_peak", "The most external programs that ran at once since the start.", pool.Peak),
	}
}

// runtimeCollectors are the Go runtime's and the process's metrics of a
// handler's own registry (an embedding service has its own).
func runtimeCollectors() []prometheus.Collector {
	gcCycles := prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "go_gc_cycles_total", Help: "Completed garbage collection cycles."},
		func() float64 {
			s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
			metrics.Read(s)
			if s[0].Value.Kind() != metrics.KindUint64 {
				return math.NaN()
			}
			return float64(s[0].Value.Uint64())
		})
	return []prometheus.Collector{collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), gcCycles}
}

// metricsContentType is the text exposition format 0.0.4. The names are
// all of the classic charset, so no escaping scheme need be announced.
const metricsContentType = "text/plain; version=0.0.4; charset=utf-8"

// metricsHandler serves the text exposition of g. A collector that fails
// is logged and left out; the others are served.
func metricsHandler(g prometheus.Gatherer, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mfs, err := g.Gather()
		if err != nil {
			log.WarnContext(r.Context(), "httpapi: metrics: gathering", "err", err)
		}
		var b bytes.Buffer
		enc := expfmt.NewEncoder(&b, expfmt.NewFormat(expfmt.TypeTextPlain))
		for _, mf := range mfs {
			if err := enc.Encode(mf); err != nil {
				log.WarnContext(r.Context(), "httpapi: metrics: encoding", "family", mf.GetName(), "err", err)
			}
		}
		w.Header().Set("Content-Type", metricsContentType)
		w.Write(b.Bytes())
	})
}

// serveMetrics: GET {base}/metrics.
func (s *server) serveMetrics(w http.ResponseWriter, r *http.Request) {
	if s.ops.metricsToken != "" && !bearerMatches(r, s.ops.metricsToken) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="audiopost metrics"`)
		plain(w, http.StatusUnauthorized, "unauthorized: /metrics needs the metrics bearer token\n")
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	s.ops.exposition.ServeHTTP(w, r)
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
