package benchmarks

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/app"
	"github.com/audiopost/audiopost/production/runner"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/storage/blob"
	"github.com/audiopost/audiopost/storage/blob/s3test"
	"github.com/audiopost/audiopost/storage/sqlstore"
	"github.com/audiopost/audiopost/storage/sqlstore/pgtest"
	"github.com/audiopost/audiopost/transport/httpapi"
)

// TestMain stops the PostgreSQL and S3 servers BenchmarkScaleOut starts
// and removes what the browser benchmarks built and the denoise
// benchmark's files.
func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Stop()
	s3test.Stop()
	removeBrowserBuilds()
	removeDenoiseFiles()
	os.Exit(code)
}

// Sizes of BenchmarkScaleOut.
const (
	scaleBatch   = 80  // productions started at once, for the throughput
	scaleSamples = 100 // productions started one by one, for the claim latency
)

// BenchmarkScaleOut measures the scale-out deployment on this machine:
// an API and 1 or 2 workers (each with a store and blob client of its own,
// as separate processes have) on one PostgreSQL database and one S3
// bucket (versitygw), processing small productions (2 s WAV in, loudness
// normalized WAV out).
//
//   - prod/s: a batch of productions started at once, from the first
//     start.json to the last one Done;
//   - api+worker-cores: the CPU the API and workers used meanwhile (the
//     database and S3 servers use the rest of the machine's two);
//   - claim-p50-ms, claim-p99-ms: productions started one at a time with
//     the workers idle, from sending start.json to a worker's Claim
//     returning the job (commit, NOTIFY, wake-up, claim).
//
// Run it once: go test -run '^$' -bench ScaleOut -benchtime 1x ./benchmarks
func BenchmarkScaleOut(b *testing.B) {
	env := newScaleBench(b)
	results := map[int]scaleResult{}
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			var r scaleResult
			for b.Loop() {
				r = env.run(b, workers)
			}
			b.ReportMetric(r.throughput, "prod/s")
			b.ReportMetric(ms(r.p50), "claim-p50-ms")
			b.ReportMetric(ms(r.p99), "claim-p99-ms")
			b.ReportMetric(r.cores, "api+worker-cores")
			results[workers] = r
		})
	}
	if r1, r2 := results[1], results[2]; r1.throughput > 0 && r2.throughput > 0 {
		b.Logf("2 workers: %.2fx the throughput of 1 (%.1f vs %.1f productions/s); claim latency p50/p99 %v/%v with 1, %v/%v with 2",
			r2.throughput/r1.throughput, r2.throughput, r1.throughput, r1.p50, r1.p99, r2.p50, r2.p99)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

type scaleResult struct {
	throughput float64
	p50, p99   time.Duration
	// cores is the CPU this process (the API and the workers, not the
	// database and S3 servers) used while the batch ran, in cores.
	cores float64
}

// scaleBench is the API (in this process, over HTTP) on one database and
// bucket.
type scaleBench struct {
	dsn     string
	s3      blob.S3Config
	api     string
	hc      *http.Client
	user    string
	preset  string
	wav     []byte
	st      *sqlstore.Store
	mu      sync.Mutex
	claimed map[string]chan time.Time // production uuid -> when claimed
}

const scalePassword = "benchmark password"

var quiet = slog.New(slog.DiscardHandler)

func newScaleBench(b *testing.B) *scaleBench {
	ctx := b.Context()
	c, err := pgtest.Shared()
	if err != nil {
		pgtest.Unavailable(b, err)
	}
	dsn, err := c.CreateDatabase(ctx)
	if err != nil {
		b.Fatal(err)
	}
	srv := s3test.Start(b)
	e := &scaleBench{dsn: dsn, hc: &http.Client{}, claimed: map[string]chan time.Time{},
		s3: blob.S3Config{Endpoint: srv.Endpoint, Insecure: true, Region: srv.Region, Bucket: srv.Bucket(b),
			AccessKey: srv.AccessKey, SecretKey: srv.SecretKey}}
	e.st, err = sqlstore.Open(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.st.Close() })
	blobs, err := blob.OpenS3(ctx, e.s3)
	if err != nil {
		b.Fatal(err)
	}
	accounts, err := app.New(app.Config{Store: e.st})
	if err != nil {
		b.Fatal(err)
	}
	u, err := accounts.CreateUser(ctx, "bench", "", scalePassword)
	if err != nil {
		b.Fatal(err)
	}
	e.user = u.ID
	var h http.Handler
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	b.Cleanup(ts.Close)
	e.api = ts.URL
	h, err = httpapi.NewHandler(httpapi.Config{Store: e.st, Blobs: blobs, BaseURL: ts.URL, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	e.preset = e.call(b, "POST", "/api/presets.json", "application/json", jsonBody(map[string]any{"preset_name": "bench",
		"algorithms": map[string]any{"loudnesstarget": -16}, "output_files": []any{map[string]any{"format": "wav"}}}))["uuid"].(string)
	e.wav = benchWAV(b, 2)
	return e
}

// run measures with n workers.
func (e *scaleBench) run(b *testing.B, n int) scaleResult {
	b.StopTimer()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	for i := range n {
		st, err := sqlstore.Open(ctx, e.dsn)
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		blobs, err := blob.OpenS3(ctx, e.s3)
		if err != nil {
			b.Fatal(err)
		}
		r, err := runner.New(runner.Config{Store: &claimRecorder{Store: st, e: e}, Blobs: blobs,
			NoCharge: true, TempDir: b.TempDir(), WorkerID: fmt.Sprintf("bench-%d", i), Logger: quiet,
			// Polling is the fallback only: a claim that waited for it
			// shows in the latency.
			PollInterval: 2 * time.Second})
		if err != nil {
			b.Fatal(err)
		}
		unsub := st.Subscribe(sqlstore.TopicJobs, r.Wake)
		defer unsub()
		wg.Go(func() { r.Run(ctx) })
	}

	// Throughput: a batch started at once.
	batch := e.prepare(b, scaleBatch)
	b.StartTimer()
	began, cpu := time.Now(), selfCPU()
	for _, id := range batch {
		e.call(b, "POST", "/api/production/"+id+"/start.json", "", nil)
	}
	e.waitDone(b, batch)
	elapsed, cpu := time.Since(began), selfCPU()-cpu
	b.StopTimer()

	// Latency: one at a time, the workers idle.
	samples := e.prepare(b, scaleSamples)
	var lat []time.Duration
	for _, id := range samples {
		ch := e.expect(id)
		sent := time.Now()
		e.call(b, "POST", "/api/production/"+id+"/start.json", "", nil)
		select {
		case at := <-ch:
			lat = append(lat, at.Sub(sent))
		case <-time.After(30 * time.Second):
			b.Fatalf("production %s not claimed within 30 s", id)
		}
		e.waitDone(b, []string{id})
	}
	slices.Sort(lat)
	b.StartTimer()
	return scaleResult{throughput: float64(len(batch)) / elapsed.Seconds(), p50: quantile(lat, 0.5), p99: quantile(lat, 0.99),
		cores: cpu.Seconds() / elapsed.Seconds()}
}

// quantile is the nearest-rank quantile of sorted durations.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(i, 0)]
}

// claimRecorder tells the benchmark when a worker claimed a production.
type claimRecorder struct {
	storage.Store
	e *scaleBench
}

func (c *claimRecorder) Claim(ctx context.Context, worker string, lease time.Duration) (storage.Job, error) {
	j, err := c.Store.Claim(ctx, worker, lease)
	if err == nil {
		at := time.Now()
		c.e.mu.Lock()
		ch := c.e.claimed[j.Production]
		c.e.mu.Unlock()
		if ch != nil {
			select {
			case ch <- at:
			default:
			}
		}
	}
	return j, err
}

func (e *scaleBench) expect(id string) <-chan time.Time {
	ch := make(chan time.Time, 1)
	e.mu.Lock()
	e.claimed[id] = ch
	e.mu.Unlock()
	return ch
}

// prepare creates n productions with their input uploaded, not started.
func (e *scaleBench) prepare(b *testing.B, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = e.call(b, "POST", "/api/productions.json", "application/json", jsonBody(map[string]any{"preset": e.preset,
			"metadata": map[string]any{"title": fmt.Sprint("bench ", i)}}))["uuid"].(string)
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		fw, _ := mw.CreateFormFile("input_file", "in.wav")
		fw.Write(e.wav)
		mw.Close()
		e.call(b, "POST", "/api/production/"+ids[i]+"/upload.json", mw.FormDataContentType(), &body)
	}
	return ids
}

// waitDone waits until every production is Done.
func (e *scaleBench) waitDone(b *testing.B, ids []string) {
	deadline := time.Now().Add(5 * time.Minute)
	for _, id := range ids {
		for {
			r, err := e.st.GetResource(context.Background(), e.user, storage.KindProduction, id)
			if err != nil {
				b.Fatal(err)
			}
			if production.Status(r.Status) == production.StatusDone {
				break
			}
			if production.Status(r.Status) == production.StatusError || time.Now().After(deadline) {
				b.Fatalf("production %s: status %d", id, r.Status)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
}

func jsonBody(v any) io.Reader {
	j, _ := json.Marshal(v)
	return bytes.NewReader(j)
}

// call makes an API request and returns the envelope's data.
func (e *scaleBench) call(b *testing.B, method, path, ctype string, body io.Reader) map[string]any {
	req, err := http.NewRequest(method, e.api+path, body)
	if err != nil {
		b.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	req.SetBasicAuth("bench", scalePassword)
	res, err := e.hc.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	var env struct {
		Data map[string]any `json:"data"`
	}
	raw, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(raw, &env); err != nil || res.StatusCode/100 != 2 {
		b.Fatalf("%s %s: HTTP %d: %s", method, path, res.StatusCode, raw)
	}
	return env.Data
}

// benchWAV is seconds of a stereo tone burst as a 16-bit WAV file.
func benchWAV(b *testing.B, seconds float64) []byte {
	const rate = 44100
	n := int(seconds * rate)
	buf := audio.NewBuffer(2, n)
	for i := range n {
		t := float64(i) / rate
		v := 0.1 * math.Max(0, math.Sin(2*math.Pi*3*t)) * math.Sin(2*math.Pi*220*t)
		buf[0][i], buf[1][i] = v, v
	}
	path := filepath.Join(b.TempDir(), "in.wav")
	testaudio.WriteWAV(b, path, buf, rate)
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	return data
}
