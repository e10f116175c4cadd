package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"github.com/audiopost/audiopost/internal/browsertest"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/storage/blob/s3test"
	"github.com/audiopost/audiopost/storage/sqlstore"
	"github.com/audiopost/audiopost/storage/sqlstore/pgtest"
)

// mainEnv makes the test binary the audiopost binary: the scale-out tests
// run it as serve processes (it is the same main, so there is nothing to
// build).
const mainEnv = "AUDIOPOST_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	// Serve's admin and the user command hash passwords at 1000
	// iterations here, in the serve processes started too: the default
	// count costs 0.15 s of CPU a hash, and 2 s under the race detector
	// (production/app's tests hash at the default).
	passwordIterations = 1000
	if os.Getenv(mainEnv) != "" {
		main()
		os.Exit(0)
	}
	code := m.Run()
	browsertest.Stop()
	pgtest.Stop()
	s3test.Stop()
	os.Exit(code)
}

// proc is an audiopost process started by a test.
type proc struct {
	name string
	cmd  *exec.Cmd
	out  *syncBuffer // stdout and stderr
	done chan struct{}
}

// startProc runs `audiopost args...` with env added to this process's.
func startProc(t *testing.T, name string, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{name: name, out: &syncBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(os.Args[0], args...)
	p.cmd.Env = append(append(os.Environ(), mainEnv+"=1"), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
		if t.Failed() {
			t.Logf("%s (pid %d) output:\n%s", p.name, p.cmd.Process.Pid, p.out.String())
		}
	})
	return p
}

// waitOutput waits until the process has printed s.
func (p *proc) waitOutput(t *testing.T, s string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !strings.Contains(p.out.String(), s) {
		select {
		case <-p.done:
			t.Fatalf("%s exited before printing %q: %v\n%s", p.name, s, p.cmd.ProcessState, p.out.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not print %q within %v", p.name, s, timeout)
		}
	}
}

// stop sends SIGTERM and wants a clean exit within timeout.
func (p *proc) stop(t *testing.T, timeout time.Duration) {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(timeout):
		t.Fatalf("%s did not exit within %v of SIGTERM", p.name, timeout)
	}
	if !p.cmd.ProcessState.Success() {
		t.Errorf("%s exited with %v", p.name, p.cmd.ProcessState)
	}
}

// scaleEnv is one PostgreSQL database and one S3 bucket, the way a
// scale-out deployment has them.
type scaleEnv struct {
	dsn    string
	s3     *s3test.Server
	bucket string
	blobs  string // the -blobs URL
	env    []string
	db     *sql.DB
}

func newScaleEnv(t *testing.T) *scaleEnv {
	t.Helper()
	c, err := pgtest.Shared()
	if err != nil {
		pgtest.Unavailable(t, err)
	}
	dsn, err := c.CreateDatabase(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	srv := s3test.Start(t)
	e := &scaleEnv{dsn: dsn, s3: srv, bucket: srv.Bucket(t), env: srv.Env()}
	e.blobs = srv.URL(e.bucket, "audiopost")
	e.db, err = sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.db.Close() })
	return e
}

// count runs a COUNT query on the database.
func (e *scaleEnv) count(t *testing.T, q string, args ...any) int {
	t.Helper()
	var n int
	if err := e.db.QueryRowContext(t.Context(), q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// startAPI starts a -role api process and returns it with its base URL.
func (e *scaleEnv) startAPI(t *testing.T, name string, extra ...string) (*proc, string) {
	t.Helper()
	dir := t.TempDir()
	addrFile := filepath.Join(dir, "addr")
	args := append([]string{"serve", "-role", "api", "-db", e.dsn, "-blobs", e.blobs, "-data", filepath.Join(dir, "data"),
		"-addr", "127.0.0.1:0", "-addr-file", addrFile, "-admin-user", "admin", "-admin-password", "scale test password",
		"-allow-private-fetch", "-log-level", "warn", "-rate-limit", "0"}, extra...) // one user drives the whole load
	p := startProc(t, name, e.env, args...)
	for deadline := time.Now().Add(30 * time.Second); ; {
		if b, err := os.ReadFile(addrFile); err == nil {
			return p, "http://" + string(b)
		}
		select {
		case <-p.done:
			t.Fatalf("%s exited at start: %v\n%s", name, p.cmd.ProcessState, p.out.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not write %s within 30 s", name, addrFile)
		}
	}
}

// startWorker starts a -role worker process on the data folder.
func (e *scaleEnv) startWorker(t *testing.T, name, data string, extra ...string) *proc {
	t.Helper()
	args := append([]string{"serve", "-role", "worker", "-credits", "-db", e.dsn, "-blobs", e.blobs, "-data", data,
		"-allow-private-fetch", "-log-level", "warn"}, extra...)
	p := startProc(t, name, e.env, args...)
	p.waitOutput(t, "audiopost worker running", 30*time.Second)
	return p
}

// hookCounter is a webhook receiver counting calls per production.
type hookCounter struct {
	mu    sync.Mutex
	calls map[string]int
}

func (h *hookCounter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r.ParseMultipartForm(1 << 20)
	h.mu.Lock()
	h.calls[r.FormValue("uuid")]++
	h.mu.Unlock()
}

// createProduction makes a production from the preset with an uploaded
// input and a webhook, and returns its uuid without starting it.
func createProduction(c *apiClient, preset, name, hook string, wav []byte) string {
	c.t.Helper()
	prod := c.call("POST", "/api/productions.json", map[string]any{"preset": preset, "metadata": map[string]any{"title": name},
		"webhook": hook})
	uuid, _ := prod["uuid"].(string)
	if uuid == "" {
		c.t.Fatalf("no uuid in %v", prod)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("input_file", name+".wav")
	fw.Write(wav)
	mw.Close()
	code, b := c.do("POST", "/api/production/"+uuid+"/upload.json", mw.FormDataContentType(), &body)
	c.envelope("upload", code, b)
	return uuid
}

var episodeNumber = regexp.MustCompile(`episode [0-9]+`)

// TestScaleOut runs the scale-out deployment: one API and two worker
// processes on one PostgreSQL database and one S3 bucket process 40
// productions while one worker is killed with SIGKILL in the middle of
// one. Every production must end Done exactly once (one job, completed
// once; credits charged once; one webhook delivery), and nothing may be
// left behind: no blob that is not a production's file, no multipart
// upload, no temporary file.
func TestScaleOut(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL, S3 and four processes")
	}
	began := time.Now()
	const n = 40
	e := newScaleEnv(t)
	hooks := &hookCounter{calls: map[string]int{}}
	hookSrv := httptest.NewServer(hooks)
	defer hookSrv.Close()

	api, base := e.startAPI(t, "api")
	workerFlags := []string{"-lease", "2s", "-poll", "200ms", "-shutdown-timeout", "10s"}
	data1, data2 := t.TempDir(), t.TempDir()
	w1 := e.startWorker(t, "worker 1", data1, workerFlags...)
	w2 := e.startWorker(t, "worker 2", data2, workerFlags...)
	t.Logf("PostgreSQL, S3 and three processes up after %v", time.Since(began).Round(time.Millisecond))

	c := &apiClient{t: t, base: base, hc: http.DefaultClient, basic: [2]string{"admin", "scale test password"}}
	preset := c.call("POST", "/api/presets.json", map[string]any{"preset_name": "scale",
		"algorithms": map[string]any{"loudnesstarget": -16}, "output_files": []any{map[string]any{"format": "wav"}}})["uuid"].(string)
	wav := serveWAV(t, 2)
	st, err := sqlstore.Open(t.Context(), e.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	admin, err := st.GetUserByUsername(t.Context(), "admin")
	if err != nil {
		t.Fatal(err)
	}
	credits := admin.Credits()

	// Create and start the productions; kill worker 1 as soon as it is in
	// the middle of one, after it has finished a few.
	var uuids []string
	killed := false
	minDone := 3
	kill := func() {
		pid := w1.cmd.Process.Pid
		running := e.count(t, `SELECT COUNT(*) FROM jobs WHERE state = 'running' AND worker LIKE $1`, fmt.Sprintf("%%-%d-%%", pid))
		done := e.count(t, `SELECT COUNT(*) FROM jobs WHERE state = 'done' AND worker LIKE $1`, fmt.Sprintf("%%-%d-%%", pid))
		if killed || running == 0 || done < minDone {
			return
		}
		w1.cmd.Process.Signal(syscall.SIGKILL)
		<-w1.done
		// The job may have finished between the query and the signal; the
		// dead worker's rows no longer change, so this count is what is
		// left to take over. With none, start worker 1 again (it clears
		// the dead one's work folder) and kill it in its next job.
		if e.count(t, `SELECT COUNT(*) FROM jobs WHERE state = 'running' AND worker LIKE $1`, fmt.Sprintf("%%-%d-%%", pid)) == 0 {
			t.Logf("worker 1 finished its job before the signal landed, at %v; starting it again", time.Since(began).Round(time.Millisecond))
			w1 = e.startWorker(t, "worker 1 (restarted)", data1, workerFlags...)
			minDone = 0
			return
		}
		killed = true
		t.Logf("worker 1 killed with SIGKILL while processing (after %d productions), at %v", done, time.Since(began).Round(time.Millisecond))
	}
	for i := range n {
		uuid := createProduction(c, preset, fmt.Sprintf("episode %d", i), hookSrv.URL+"/hook", wav)
		c.call("POST", "/api/production/"+uuid+"/start.json", nil)
		uuids = append(uuids, uuid)
		kill()
	}
	for deadline := time.Now().Add(60 * time.Second); !killed; kill() {
		if time.Now().After(deadline) {
			t.Fatal("worker 1 never held a job to be killed in")
		}
		time.Sleep(5 * time.Millisecond)
	}

	// Wait for all to be Done and their webhooks delivered. A delivery the
	// killed worker had claimed comes back when worker 2's sender finds
	// its process gone (webhook.Sender.Reclaim, every 10 s), not after
	// the webhook lease (two request timeouts and 30 s, 90 s by default).
	deadline := time.Now().Add(60 * time.Second)
	for {
		done := e.count(t, `SELECT COUNT(*) FROM resources WHERE kind = 'production' AND status = $1`, int(production.StatusDone))
		delivered := e.count(t, `SELECT COUNT(*) FROM webhook_deliveries WHERE state = 'delivered'`)
		if done == n && delivered == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60 s: %d of %d productions done, %d webhooks delivered", done, n, delivered)
		}
		time.Sleep(50 * time.Millisecond)
	}
	processed := time.Since(began)

	// Exactly once: one job per production, done; the killed worker's job
	// was taken over (attempt 2); one delivery each; credits charged once.
	var charged time.Duration
	reclaimed := 0
	for _, uuid := range uuids {
		p := c.call("GET", "/api/production/"+uuid+".json", nil)
		if p["status"] != float64(production.StatusDone) {
			t.Errorf("%s: status %v (%v)", uuid, p["status_string"], p["error_message"])
		}
		jobs, err := st.ListJobs(t.Context(), admin.ID, uuid)
		if err != nil || len(jobs) != 1 || jobs[0].State != storage.JobDone || jobs[0].Attempts > 2 {
			t.Errorf("%s: jobs %+v, %v", uuid, jobs, err)
		}
		if len(jobs) == 1 && jobs[0].Attempts == 2 {
			reclaimed++
		}
		ds, err := st.ListDeliveries(t.Context(), admin.ID, uuid)
		if err != nil || len(ds) != 1 || ds[0].State != storage.DeliveryDelivered {
			t.Errorf("%s: deliveries %+v, %v", uuid, ds, err)
		}
		hooks.mu.Lock()
		calls := hooks.calls[uuid]
		hooks.mu.Unlock()
		// Webhooks are at least once: a second call only for a delivery
		// that needed a second attempt (its sender was killed mid-call).
		if calls == 0 || calls > 1 && (len(ds) != 1 || ds[0].Attempts < calls) {
			t.Errorf("%s: webhook called %d times, deliveries %+v", uuid, calls, ds)
		}
		res, err := st.GetResource(t.Context(), admin.ID, storage.KindProduction, uuid)
		if err != nil {
			t.Fatal(err)
		}
		pd, err := production.DecodeDocument(res)
		if err != nil {
			t.Fatal(err)
		}
		charged += time.Duration(pd.UsedCredits.Onetime*3600+0.5) * time.Second
	}
	if reclaimed == 0 {
		t.Error("no job was taken over from the killed worker")
	}
	admin, _ = st.GetUserByUsername(t.Context(), "admin")
	if spent := credits - admin.Credits(); spent != charged || charged == 0 {
		t.Errorf("credits: %v spent, the productions say %v", spent, charged)
	}

	// Graceful shutdown of everything that runs. The killed worker's
	// temporary files are still there; it removes them when it is started
	// again on its data folder.
	for _, p := range []*proc{api, w2} {
		p.stop(t, 15*time.Second)
	}
	if left, _ := filepath.Glob(filepath.Join(data1, "work", "*")); len(left) != 1 {
		t.Errorf("the killed worker left %v", left)
	}
	e.startWorker(t, "worker 1 again", data1, workerFlags...).stop(t, 15*time.Second)

	// Nothing left behind: every object is a file of a production or of
	// the preset, each production has the same files, no upload is
	// incomplete, and the workers' temporary folders are gone (the killed
	// worker's one removed by its replacement).
	files := map[string][]string{}
	for oi := range e.s3.Client().ListObjects(t.Context(), e.bucket, minio.ListObjectsOptions{Recursive: true}) {
		if oi.Err != nil {
			t.Fatal(oi.Err)
		}
		key := strings.TrimPrefix(oi.Key, "audiopost/")
		if strings.Contains(key, storage.TempPrefix) {
			t.Errorf("temporary object %s", oi.Key)
		}
		rest, ok := strings.CutPrefix(key, "productions/")
		uuid, name, _ := strings.Cut(rest, "/")
		if !ok {
			t.Errorf("object %s belongs to no production", oi.Key)
			continue
		}
		// The files are named after the title, "episode N".
		files[uuid] = append(files[uuid], episodeNumber.ReplaceAllString(name, "episode #"))
	}
	want := strings.Join(files[uuids[0]], ",")
	if len(files) != n || !strings.Contains(want, "output/") || !strings.Contains(want, "input/") {
		t.Errorf("objects of %d productions, the first has %s", len(files), want)
	}
	for uuid, names := range files {
		if got := strings.Join(names, ","); got != want {
			t.Errorf("production %s has %s, the first %s", uuid, got, want)
		}
	}
	for u := range e.s3.Client().ListIncompleteUploads(t.Context(), e.bucket, "", true) {
		t.Errorf("incomplete multipart upload left: %+v", u)
	}
	for _, d := range []string{data1, data2} {
		left, _ := filepath.Glob(filepath.Join(d, "work", "*"))
		if len(left) > 0 {
			t.Errorf("temporary files left in %s: %v", d, left)
		}
	}
	t.Logf("%d productions done by 2 workers (one killed) in %v; %d taken over after the kill; test took %v",
		n, processed.Round(time.Millisecond), reclaimed, time.Since(began).Round(time.Millisecond))
}

// TestServeRoles: a bad role, or a bad -blobs URL, is refused before
// anything starts.
func TestServeRoles(t *testing.T) {
	err := run(context.Background(), []string{"serve", "-role", "janitor", "-data", t.TempDir()}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "janitor") {
		t.Errorf("-role janitor: %v", err)
	}
	err = run(context.Background(), []string{"serve", "-data", t.TempDir(), "-blobs", "s3://bucket/?endpont=typo"}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "endpont") {
		t.Errorf("-blobs with a typo: %v", err)
	}
	if err != nil && errors.Is(err, context.Canceled) {
		t.Error(err)
	}
}

// TestServeWorkerShutdown: on SIGTERM a worker finishes the production it
// is processing when the shutdown timeout allows, and hands it back to the
// queue (released, the attempt not counted) when it does not. The second
// timeout is four times what finishing a production 18 times shorter
// took here (at least 800 ms): the worker lets it run for three quarters
// of that, a sixth of what finishing would need if time grew with the
// audio alone, and keeps a quarter, as
// long as the whole shorter production took, for stopping the engine and
// the hand-back's transaction whatever the machine's load (with twice,
// a quarter was ~240 ms, and a clean-clone CI run at a load of 7 left the
// job running when serve exited, abandoned as the flag documents). The
// longer production is 18 times the shorter, not 6: the shorter's time
// also holds what does not grow with the audio (taking the job, fetching
// and storing files), and at a load of 1 a 120 s production finished
// within the hand-back's timeout (the 20 s one took 0.68 s, the 120 s one
// 1.85 s against a timeout of 2.73 s).
func TestServeWorkerShutdown(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL, S3 and three processes")
	}
	e := newScaleEnv(t)
	api, base := e.startAPI(t, "api")
	defer api.stop(t, 15*time.Second)
	c := &apiClient{t: t, base: base, hc: http.DefaultClient, basic: [2]string{"admin", "scale test password"}}
	preset := c.call("POST", "/api/presets.json", map[string]any{"preset_name": "long",
		"algorithms": map[string]any{"loudnesstarget": -16}, "output_files": []any{map[string]any{"format": "wav"}}})["uuid"].(string)
	var finished time.Duration // SIGTERM to exit of the worker that finished
	for _, tc := range []struct {
		name    string
		seconds float64
		want    storage.JobState
	}{
		{"finishes", 20, storage.JobDone},
		{"hands back", 360, storage.JobQueued},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.t = t
			timeout := 60 * time.Second
			if tc.want == storage.JobQueued {
				timeout = max(800*time.Millisecond, 4*finished).Round(time.Millisecond)
			}
			uuid := createProduction(c, preset, tc.name, "", serveWAV(t, tc.seconds))
			w := e.startWorker(t, "worker", t.TempDir(), "-shutdown-timeout", timeout.String())
			c.call("POST", "/api/production/"+uuid+"/start.json", nil)
			for deadline := time.Now().Add(20 * time.Second); e.count(t, `SELECT COUNT(*) FROM jobs WHERE production = $1 AND state = 'running'`, uuid) == 0; {
				if time.Now().After(deadline) {
					t.Fatal("the worker did not take the job")
				}
				time.Sleep(5 * time.Millisecond)
			}
			signaled := time.Now()
			w.stop(t, 60*time.Second)
			took := time.Since(signaled)
			var state string
			var attempts int
			if err := e.db.QueryRowContext(t.Context(), `SELECT state, attempts FROM jobs WHERE production = $1`, uuid).Scan(&state, &attempts); err != nil {
				t.Fatal(err)
			}
			p := c.call("GET", "/api/production/"+uuid+".json", nil)
			t.Logf("-shutdown-timeout %v, SIGTERM to exit %v: job %s (attempts %d), production %v", timeout, took.Round(time.Millisecond), state, attempts, p["status_string"])
			switch tc.want {
			case storage.JobDone:
				finished = took
				if state != "done" || p["status"] != float64(production.StatusDone) {
					t.Errorf("job %s, production %v; want it finished", state, p["status_string"])
				}
			case storage.JobQueued:
				if state != "queued" || attempts != 0 || p["status"] != float64(production.StatusWaiting) {
					t.Errorf("job %s (attempts %d), production %v; want it handed back", state, attempts, p["status_string"])
				}
				if took > timeout+2*time.Second {
					t.Errorf("shutdown took %v with -shutdown-timeout %v", took, timeout)
				}
			}
		})
	}
}

// TestServeAPIDrains: on SIGTERM an API process finishes the request in
// flight (an upload still arriving) and refuses new connections.
func TestServeAPIDrains(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL, S3 and an API process")
	}
	e := newScaleEnv(t)
	api, base := e.startAPI(t, "api")
	c := &apiClient{t: t, base: base, hc: http.DefaultClient, basic: [2]string{"admin", "scale test password"}}
	uuid := c.call("POST", "/api/productions.json", map[string]any{"metadata": map[string]any{"title": "drain"}})["uuid"].(string)

	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("input_file", "slow.wav")
	fw.Write(serveWAV(t, 5))
	mw.Close()
	pr, pw := io.Pipe()
	req, _ := http.NewRequest("POST", base+"/api/production/"+uuid+"/upload.json", pr)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.SetBasicAuth("admin", "scale test password")
	type result struct {
		code int
		err  error
	}
	done := make(chan result, 1)
	go func() {
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- result{0, err}
			return
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		done <- result{res.StatusCode, nil}
	}()
	all := body.Bytes()
	pw.Write(all[:len(all)/2]) // returns once the client has taken it
	// SIGTERM only once the server serves the upload: a connection still
	// in the listen backlog would be reset with the listener (the
	// scrape is the other request in flight).
	for deadline := time.Now().Add(10 * time.Second); inFlight(t, base) < 2; {
		if time.Now().After(deadline) {
			t.Fatal("the upload is not in flight after 10 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	api.cmd.Process.Signal(syscall.SIGTERM)
	// The listener closes: a new connection is refused.
	for deadline := time.Now().Add(10 * time.Second); ; {
		if _, err := http.Get(base + "/api/info.json"); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the API still accepts connections 10 s after SIGTERM")
		}
		time.Sleep(5 * time.Millisecond)
	}
	pw.Write(all[len(all)/2:])
	pw.Close()
	r := <-done
	if r.err != nil || r.code != 200 {
		t.Errorf("upload in flight at SIGTERM: HTTP %d, %v", r.code, r.err)
	}
	api.stop(t, 15*time.Second)
	st, err := sqlstore.Open(t.Context(), e.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	admin, _ := st.GetUserByUsername(t.Context(), "admin")
	if res, err := st.GetResource(t.Context(), admin.ID, storage.KindProduction, uuid); err != nil || !strings.Contains(string(res.Doc), "slow.wav") {
		t.Errorf("the upload did not land: %s, %v", res.Doc, err)
	}
}

// inFlight reads audiopost_http_requests_in_flight from base's /metrics.
func inFlight(t *testing.T, base string) int {
	t.Helper()
	res, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "audiopost_http_requests_in_flight "); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("in flight %q: %v", v, err)
			}
			return n
		}
	}
	t.Fatal("/metrics has no audiopost_http_requests_in_flight")
	return 0
}

// TestServeWakesWithoutPolling: in the embedded deployment (SQLite, one
// process) a started production is claimed at once, through the store's
// in-process signal, not at the next poll (here an hour away).
func TestServeWakesWithoutPolling(t *testing.T) {
	s := startServe(t, "-poll", "1h", "-admin-user", "admin", "-admin-password", "correct horse battery")
	began := time.Now()
	(&apiClient{t: t, base: s.base, hc: http.DefaultClient, basic: [2]string{"admin", "correct horse battery"}}).roundTrip("wake", serveWAV(t, 1))
	t.Logf("round trip with -poll 1h: %v", time.Since(began).Round(time.Millisecond))
}
