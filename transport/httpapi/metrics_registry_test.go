package httpapi_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/transport/httpapi"
)

// TestMetricsRegisterer: a service that embeds the handler gets its
// audiopost_ metrics in its own registry, beside its own Go runtime
// collector (which ours would clash with), and /metrics still serves
// them with the runtime's.
func TestMetricsRegisterer(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector())
	m := httpapi.NewMetrics()
	e := newEnv(t, func(c *httpapi.Config) { c.Metrics, c.Registerer = m, reg })
	m.ObserveProcessing(production.StatusDone, 120, 30*time.Second)
	e.create(e.keyA, map[string]any{})
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, mf := range mfs {
		got[mf.GetName()] = true
	}
	for _, name := range []string{"audiopost_productions_processed_total", "audiopost_http_request_duration_seconds",
		"audiopost_http_requests_in_flight", "audiopost_jobs", "audiopost_store_up", "go_goroutines"} {
		if !got[name] {
			t.Errorf("the embedding registry has no %s", name)
		}
	}
	wantValue(t, e.scrape(t), "audiopost_productions_processed_total", "audiopost_productions_processed_total", 1)

	// A second handler with the same Metrics and registry (a second
	// mount of one service, its store without job counts) shares the
	// collectors.
	_, err = httpapi.NewHandler(httpapi.Config{Store: noCounter{e.store}, Blobs: e.blobs, BaseURL: e.base + "/second",
		Metrics: m, Registerer: reg})
	if err != nil {
		t.Errorf("a second handler on the same Metrics and registry: %v", err)
	}
}
