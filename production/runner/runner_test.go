package runner_test

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/internal/testdb"
	"github.com/audiopost/audiopost/production/app"
	"github.com/audiopost/audiopost/production/engine"
	"github.com/audiopost/audiopost/production/runner"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/storage/blob"
	"github.com/audiopost/audiopost/storage/sqlstore"
)

// runnerEnv is a data directory with one user.
type runnerEnv struct {
	t     testing.TB
	dir   string
	store *sqlstore.Store
	blobs *blob.Dir
	user  storage.User
}

// app returns the operations over the environment's stores, which the
// API calls.
func (e *runnerEnv) app() *app.App {
	e.t.Helper()
	a, err := app.New(app.Config{Store: e.store, Blobs: e.blobs})
	if err != nil {
		e.t.Fatal(err)
	}
	return a
}

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// fileExists reports whether path names a file, as a reopened
// environment's database.
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func openRunnerEnv(t testing.TB, dir string) *runnerEnv {
	t.Helper()
	ctx := context.Background()
	var st *sqlstore.Store
	if db := filepath.Join(dir, "audiopost.db"); fileExists(db) {
		var err error
		if st, err = sqlstore.Open(ctx, db); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
	} else {
		st = testdb.SQLite(t, db)
	}
	// One key per directory, as serve keeps it: a reopened environment
	// opens the services it stored.
	key, _, err := storage.EnsureSecretKeyFile(filepath.Join(dir, "secret.key"))
	if err != nil {
		t.Fatal(err)
	}
	st.SetSecretKey(key)
	b, err := blob.OpenDir(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return &runnerEnv{t: t, dir: dir, store: st, blobs: b}
}

func newRunnerEnv(t testing.TB, credits time.Duration) *runnerEnv {
	t.Helper()
	e := openRunnerEnv(t, t.TempDir())
	ctx := context.Background()
	e.user = storage.User{Username: "alice"}
	if err := e.store.CreateUser(ctx, &e.user); err != nil {
		t.Fatal(err)
	}
	if credits > 0 {
		u, err := e.store.AddCredits(ctx, e.user.ID, credits/2, credits-credits/2)
		if err != nil {
			t.Fatal(err)
		}
		e.user = u
	}
	return e
}

// addProduction stores a production of input (WAV bytes written from b)
// with the given request JSON, starts it like the API does (status
// Waiting and a job in one transaction) and returns its uuid and job.
func (e *runnerEnv) addProduction(request string, input []byte) (string, storage.Job) {
	t := e.t
	t.Helper()
	ctx := context.Background()
	req, err := production.DecodeInput([]byte(request))
	if err != nil {
		t.Fatal(err)
	}
	p, err := production.New(req, production.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The API stores an uploaded or fetched input under its file name.
	p.InputFile = "in.wav"
	doc, err := production.EncodeDocument(p)
	if err != nil {
		t.Fatal(err)
	}
	res := &storage.Resource{Owner: e.user.ID, Kind: storage.KindProduction, Doc: doc, Status: int(production.StatusNotStarted)}
	if err := e.store.CreateResource(ctx, res); err != nil {
		t.Fatal(err)
	}
	w, err := e.blobs.Create(ctx, production.InputKey(res.UUID, p.InputFile))
	if err != nil {
		t.Fatal(err)
	}
	w.Write(input)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	job := &storage.Job{Owner: e.user.ID, Production: res.UUID, Type: production.JobProcess}
	err = e.store.WithTx(ctx, func(tx storage.Tx) error {
		if err := tx.SetStatus(ctx, e.user.ID, storage.KindProduction, res.UUID, int(production.StatusWaiting)); err != nil {
			return err
		}
		return tx.Enqueue(ctx, job)
	})
	if err != nil {
		t.Fatal(err)
	}
	return res.UUID, *job
}

func (e *runnerEnv) production(uuid string) *production.Production {
	e.t.Helper()
	res, err := e.store.GetResource(context.Background(), e.user.ID, storage.KindProduction, uuid)
	if err != nil {
		e.t.Fatal(err)
	}
	p, err := production.DecodeDocument(res)
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

// onFinished records the final status as a webhook delivery, in the
// result transaction, as serve does through transport/webhook.
func onFinished(ctx context.Context, tx storage.Tx, owner string, p *production.Production) error {
	return tx.EnqueueDelivery(ctx, &storage.Delivery{Owner: owner, Production: p.UUID, URL: "http://example.invalid/hook",
		Payload: []byte("status=" + p.Status.String())})
}

func (e *runnerEnv) deliveries(uuid string) int {
	e.t.Helper()
	ds, err := e.store.ListDeliveries(context.Background(), e.user.ID, uuid)
	if err != nil {
		e.t.Fatal(err)
	}
	return len(ds)
}

func (e *runnerEnv) runner(cfg runner.Config) *runner.Runner {
	e.t.Helper()
	cfg.Store, cfg.Blobs = e.store, e.blobs
	if cfg.OnFinished == nil {
		cfg.OnFinished = onFinished
	}
	if cfg.TempDir == "" {
		cfg.TempDir = e.t.TempDir()
	}
	cfg.Logger = quietLogger()
	if cfg.Engine == nil {
		cfg.Engine = &engine.Engine{}
	}
	cfg.Engine.Logger = cfg.Logger
	r, err := runner.New(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

const wavRequest = `{"input_file": "https://example.org/in.wav", "output_basename": "out", "webhook": "http://example.invalid/hook",
	"algorithms": {"loudnesstarget": -16}, "output_files": [{"format": "wav"}]}`

// decodeOutput decodes the blob of p's first output and returns its
// frames and loudness.
func (e *runnerEnv) decodeOutput(p *production.Production) (int64, float64) {
	e.t.Helper()
	rc, _, err := e.blobs.Open(context.Background(), production.OutputKey(p.UUID, p.OutputFilename(0)))
	if err != nil {
		e.t.Fatal(err)
	}
	defer rc.Close()
	d, err := audio.Decode(context.Background(), rc)
	if err != nil {
		e.t.Fatal(err)
	}
	defer d.Close()
	buf, err := audio.ReadAll(context.Background(), d)
	if err != nil {
		e.t.Fatal(err)
	}
	l, err := loudnessOf(buf, d.Format().SampleRate)
	if err != nil {
		e.t.Fatal(err)
	}
	return int64(buf.Frames()), l
}

func TestRunnerProcessesAndCharges(t *testing.T) {
	e := newRunnerEnv(t, time.Hour)
	const rate = 44100
	uuid, job := e.addProduction(wavRequest, testaudio.EncodeWAV(t, testaudio.SpeechLike(rate, 3, 0.05), rate, 16))
	r := e.runner(runner.Config{})
	ran, err := r.RunOnce(context.Background(), "w1")
	if err != nil || !ran {
		t.Fatalf("RunOnce = %v, %v", ran, err)
	}
	p := e.production(uuid)
	if p.Status != production.StatusDone {
		t.Fatalf("status %v, error %q", p.Status, p.ErrorMessage)
	}
	frames, lufs := e.decodeOutput(p)
	if frames != 3*rate {
		t.Errorf("output has %d frames, want %d", frames, 3*rate)
	}
	if lufs < -17 || lufs > -15 {
		t.Errorf("output loudness %.2f LUFS, want -16 ± 1", lufs)
	}
	if o := p.OutputFiles[0]; o.Size == nil || *o.Size == 0 || len(o.Checksum) != 32 {
		t.Errorf("output fields not set: %+v", o)
	}
	if _, err := e.blobs.Stat(context.Background(), production.OutputKey(uuid, p.WaveformImage)); err != nil || p.WaveformImage == "" {
		t.Errorf("waveform image %q: %v", p.WaveformImage, err)
	}
	// 3 s of input are 3 s of credits, recurring first.
	u, err := e.store.GetUser(context.Background(), e.user.ID)
	if err != nil {
		t.Fatal(err)
	}
	if spent := e.user.Credits() - u.Credits(); spent != 3*time.Second {
		t.Errorf("charged %v, want 3s", spent)
	}
	if got := p.UsedCredits.Recurring * 3600; got < 2.999 || got > 3.001 || p.UsedCredits.Onetime != 0 {
		t.Errorf("used_credits %+v, want 3 s recurring", p.UsedCredits)
	}
	if n := e.deliveries(uuid); n != 1 {
		t.Errorf("%d deliveries, want 1", n)
	}
	j, _ := e.store.GetJob(context.Background(), job.ID)
	if j.State != storage.JobDone {
		t.Errorf("job state %s", j.State)
	}
	if ran, err := r.RunOnce(context.Background(), "w1"); ran || err != nil {
		t.Errorf("second RunOnce = %v, %v; want no job", ran, err)
	}
}

func TestRunnerCorruptInputIsNotRetried(t *testing.T) {
	e := newRunnerEnv(t, time.Hour)
	garbage := []byte("RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x02\x00junk junk junk junk")
	uuid, job := e.addProduction(wavRequest, garbage)
	r := e.runner(runner.Config{})
	if _, err := r.RunOnce(context.Background(), "w1"); err != nil {
		t.Fatal(err)
	}
	p := e.production(uuid)
	if p.Status != production.StatusError || p.ErrorStatus == nil || p.ErrorMessage == "" {
		t.Fatalf("status %v, error_status %v, error_message %q; want Error with both fields", p.Status, p.ErrorStatus, p.ErrorMessage)
	}
	if !strings.HasPrefix(p.ErrorMessage, "Input file: ") || strings.Contains(p.ErrorMessage, "audio:") {
		t.Errorf("error_message %q does not name the input file in plain words", p.ErrorMessage)
	}
	// Starting again with the same input would fail the same way; another
	// input may not.
	if p.ErrorKind != production.ErrorInput || p.RestartBlocked(time.Hour) == "" {
		t.Errorf("error_kind %q, restart blocked %q; want an input error that blocks a restart", p.ErrorKind, p.RestartBlocked(time.Hour))
	}
	p.InputFile = "another.wav"
	if b := p.RestartBlocked(time.Hour); b != "" {
		t.Errorf("another input still blocks a restart: %q", b)
	}
	j, _ := e.store.GetJob(context.Background(), job.ID)
	if j.State != storage.JobDone || j.Attempts != 1 {
		t.Errorf("job %s after %d attempts; a processing error must complete it", j.State, j.Attempts)
	}
	if ran, _ := r.RunOnce(context.Background(), "w1"); ran {
		t.Error("the job was claimed again")
	}
	if n := e.deliveries(uuid); n != 1 {
		t.Errorf("%d deliveries, want 1", n)
	}
	if u, _ := e.store.GetUser(context.Background(), e.user.ID); u.Credits() != e.user.Credits() {
		t.Errorf("a failed production was charged: %v -> %v", e.user.Credits(), u.Credits())
	}
}

func TestRunnerInsufficientCredits(t *testing.T) {
	e := newRunnerEnv(t, 2*time.Second)
	const rate = 44100
	uuid, job := e.addProduction(wavRequest, testaudio.EncodeWAV(t, testaudio.SpeechLike(rate, 3, 0.05), rate, 16))
	r := e.runner(runner.Config{})
	if _, err := r.RunOnce(context.Background(), "w1"); err != nil {
		t.Fatal(err)
	}
	p := e.production(uuid)
	if p.Status != production.StatusError || p.ErrorStatus == nil || *p.ErrorStatus != production.StatusWaiting ||
		!strings.HasPrefix(p.ErrorMessage, "Not enough credits") || p.ErrorKind != production.ErrorCredits {
		t.Fatalf("status %v at %v: %q (%s); want Error at Waiting about credits", p.Status, p.ErrorStatus, p.ErrorMessage, p.ErrorKind)
	}
	// The API probed the input's length at upload: more credits than that
	// unblock a restart, what is left does not.
	p.Length = 3
	if p.RestartBlocked(2*time.Second) == "" || p.RestartBlocked(3*time.Second) != "" {
		t.Errorf("restart blocked with 2 s: %q, with 3 s: %q", p.RestartBlocked(2*time.Second), p.RestartBlocked(3*time.Second))
	}
	if _, err := e.blobs.Stat(context.Background(), production.OutputKey(uuid, p.OutputFilename(0))); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("an output was written for a refused production: %v", err)
	}
	if u, _ := e.store.GetUser(context.Background(), e.user.ID); u.Credits() != 2*time.Second {
		t.Errorf("credits %v, want 2s untouched", u.Credits())
	}
	if j, _ := e.store.GetJob(context.Background(), job.ID); j.State != storage.JobDone {
		t.Errorf("job %s", j.State)
	}
}

// waitStatus polls until pred holds for the production's stored status.
func (e *runnerEnv) waitStatus(uuid string, timeout time.Duration, pred func(production.Status) bool) production.Status {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		res, err := e.store.GetResource(context.Background(), e.user.ID, storage.KindProduction, uuid)
		if err != nil {
			e.t.Fatal(err)
		}
		if s := production.Status(res.Status); pred(s) {
			return s
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("status still %v after %v", production.Status(res.Status), timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// blockingProcessor stands in for the DSP where a test needs a run that
// is still going when something happens to it: it blocks until its
// context ends, so a stop or a shutdown always lands mid-processing
// without a long input or a timing assumption.
type blockingProcessor struct{ started chan struct{} }

func newBlockingProcessor() blockingProcessor {
	return blockingProcessor{started: make(chan struct{}, 16)}
}

func (b blockingProcessor) Process(ctx context.Context, open audio.Opener, job engine.ProcessJob) (*engine.Processed, error) {
	b.started <- struct{}{}
	<-ctx.Done()
	return nil, ctx.Err()
}

func (b blockingProcessor) wait(t *testing.T) {
	t.Helper()
	select {
	case <-b.started:
	case <-time.After(30 * time.Second):
		t.Fatal("processing never started")
	}
}

func TestRunnerStop(t *testing.T) {
	e := newRunnerEnv(t, time.Hour)
	const rate = 44100
	uuid, job := e.addProduction(wavRequest, testaudio.EncodeWAV(t, testaudio.SpeechLike(rate, 2, 0.05), rate, 16))
	var finished atomic.Int32
	proc := newBlockingProcessor()
	r := e.runner(runner.Config{Lease: time.Second, Heartbeat: 20 * time.Millisecond, Engine: &engine.Engine{Processor: proc},
		OnFinished: func(ctx context.Context, tx storage.Tx, owner string, p *production.Production) error {
			finished.Add(1)
			return nil
		}})
	done := make(chan error, 1)
	go func() { _, err := r.RunOnce(context.Background(), "w1"); done <- err }()
	proc.wait(t)
	if _, err := e.app().StopProduction(context.Background(), e.user, uuid); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the runner did not notice the stop")
	}
	p := e.production(uuid)
	if p.Status != production.StatusNotStarted {
		t.Errorf("status %v after stop, want %v", p.Status, production.StatusNotStarted)
	}
	if finished.Load() != 0 {
		t.Error("OnFinished called for a stopped production")
	}
	if j, _ := e.store.GetJob(context.Background(), job.ID); j.State != storage.JobCanceled {
		t.Errorf("job %s", j.State)
	}
	list, _ := e.blobs.List(context.Background(), runner.OutputPrefix(uuid))
	if len(list) != 0 {
		t.Errorf("a stopped run left outputs: %v", list)
	}
}

// TestRunnerStopAtOnce stops a production with the default heartbeat
// (every 7.5 s): the store's cancellation signal makes the runner check
// its lease at once, so the production lands in Not Started within
// maxStopLatency of the stop command.
func TestRunnerStopAtOnce(t *testing.T) {
	const maxStopLatency = 2 * time.Second
	e := newRunnerEnv(t, time.Hour)
	const rate = 44100
	uuid, _ := e.addProduction(wavRequest, testaudio.EncodeWAV(t, testaudio.SpeechLike(rate, 2, 0.05), rate, 16))
	proc := newBlockingProcessor()
	r := e.runner(runner.Config{Engine: &engine.Engine{Processor: proc}})
	defer e.store.Subscribe(sqlstore.TopicCanceled, r.CheckLeases)()
	done := make(chan error, 1)
	go func() { _, err := r.RunOnce(context.Background(), "w1"); done <- err }()
	proc.wait(t)
	stopped := time.Now()
	if _, err := e.app().StopProduction(context.Background(), e.user, uuid); err != nil {
		t.Fatal(err)
	}
	e.waitStatus(uuid, 30*time.Second, func(s production.Status) bool { return s == production.StatusNotStarted })
	took := time.Since(stopped)
	t.Logf("stop landed after %v", took.Round(time.Millisecond))
	if took > maxStopLatency {
		t.Errorf("stop took %v, want at most %v (the default heartbeat is %v)", took, maxStopLatency, runner.DefaultLease/4)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// stealingStore loses every heartbeat, as when the lease ran out and
// another worker claimed the job.
type stealingStore struct {
	storage.Store
	beats atomic.Int32
}

func (s *stealingStore) Heartbeat(ctx context.Context, l storage.Lease, d time.Duration) error {
	s.beats.Add(1)
	return storage.ErrLeaseLost
}

func TestRunnerLeaseLostCancelsRun(t *testing.T) {
	e := newRunnerEnv(t, time.Hour)
	const rate = 44100
	uuid, job := e.addProduction(wavRequest, testaudio.EncodeWAV(t, testaudio.SpeechLike(rate, 2, 0.05), rate, 16))
	st := &stealingStore{Store: e.store}
	var finished atomic.Int32
	// The processing blocks until the lost lease cancels it.
	r, err := runner.New(runner.Config{Store: st, Blobs: e.blobs, Lease: time.Minute, Heartbeat: 20 * time.Millisecond,
		TempDir: t.TempDir(), Logger: quietLogger(), Engine: &engine.Engine{Logger: quietLogger(), Processor: newBlockingProcessor()},
		OnFinished: func(ctx context.Context, tx storage.Tx, owner string, p *production.Production) error {
			finished.Add(1)
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := r.RunOnce(context.Background(), "w1"); err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	if st.beats.Load() == 0 {
		t.Fatal("no heartbeat was sent")
	}
	if finished.Load() != 0 {
		t.Error("OnFinished called after the lease was lost")
	}
	p := e.production(uuid)
	if p.Status == production.StatusDone || p.Status == production.StatusError {
		t.Errorf("the run without a lease stored a final status %v", p.Status)
	}
	// The job is still the (other) lease holder's: running, not done.
	if j, _ := e.store.GetJob(context.Background(), job.ID); j.State != storage.JobRunning {
		t.Errorf("job %s, want still running", j.State)
	}
	if list, _ := e.blobs.List(context.Background(), runner.OutputPrefix(uuid)); len(list) != 0 {
		t.Errorf("a cancelled run left outputs: %v", list)
	}
	t.Logf("run cancelled after %v", elapsed)
}

func TestRunnerShutdownReleases(t *testing.T) {
	e := newRunnerEnv(t, time.Hour)
	const rate = 44100
	uuid, job := e.addProduction(wavRequest, testaudio.EncodeWAV(t, testaudio.SpeechLike(rate, 2, 0.05), rate, 16))
	proc := newBlockingProcessor()
	r := e.runner(runner.Config{PollInterval: 10 * time.Millisecond, Engine: &engine.Engine{Processor: proc}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	proc.wait(t)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if p := e.production(uuid); p.Status != production.StatusWaiting {
		t.Errorf("status %v after shutdown, want Waiting", p.Status)
	}
	j, _ := e.store.GetJob(context.Background(), job.ID)
	if j.State != storage.JobQueued || j.Attempts != 0 {
		t.Errorf("job %s with %d attempts, want queued with the attempt not counted", j.State, j.Attempts)
	}
}

// The crash test: a worker process is killed with SIGKILL while it
// processes, and a second one finishes the queue.

const crashEnv = "AUDIOPOST_RUNNER_CRASH_DIR"

// TestRunnerCrashWorker is the worker process of TestRunnerCrash; it does
// nothing unless started by it.
func TestRunnerCrashWorker(t *testing.T) {
	dir := os.Getenv(crashEnv)
	if dir == "" {
		t.Skip("worker process of TestRunnerCrash")
	}
	e := openRunnerEnv(t, dir)
	r := e.runner(runner.Config{Workers: 2, Lease: 2 * time.Second, Heartbeat: 200 * time.Millisecond,
		PollInterval: 20 * time.Millisecond, TempDir: filepath.Join(dir, "work")})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	r.Run(ctx)
}

func TestRunnerCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("starts worker processes")
	}
	e := newRunnerEnv(t, 10*time.Hour)
	os.Mkdir(filepath.Join(e.dir, "work"), 0o755)
	const rate = 44100
	const n = 20
	var (
		uuids []string
		jobs  []int64
	)
	for i := range n {
		secs := 2 + float64(i%3)*0.5
		uuid, job := e.addProduction(wavRequest, testaudio.EncodeWAV(t, testaudio.SpeechLike(rate, secs, 0.02+0.005*float64(i%4)), rate, 16))
		uuids = append(uuids, uuid)
		jobs = append(jobs, job.ID)
	}
	inputFrames := func(i int) int64 { return int64((2 + float64(i%3)*0.5) * rate) }

	count := func() (done, inFlight int) {
		for _, u := range uuids {
			s := e.production(u).Status
			switch {
			case s == production.StatusDone:
				done++
			case s.Processing():
				inFlight++
			}
		}
		return done, inFlight
	}
	start := func() *workerProc { return startWorker(t, e.dir) }

	// The state read before the kill can be stale by the time SIGKILL
	// lands: the job in flight may finish in between. The state read after
	// the kill is frozen, so that one decides; if nothing was in flight,
	// start another worker and try again.
	deadline := time.Now().Add(2 * time.Minute)
	var doneAtKill int
	for killed := false; !killed; {
		w := start()
		for {
			done, inFlight := count()
			if done >= 3 && inFlight > 0 {
				w.kill()
				break
			}
			if done == n || time.Now().After(deadline) {
				w.kill()
				t.Fatalf("could not kill the worker mid-run: %d done, %d in flight", done, inFlight)
			}
			time.Sleep(2 * time.Millisecond)
		}
		var inFlight int
		doneAtKill, inFlight = count()
		killed = inFlight > 0
		t.Logf("killed the worker with %d done, %d in flight", doneAtKill, inFlight)
	}
	if doneAtKill == n {
		t.Fatal("every production finished before the kill")
	}

	w := start()
	defer w.kill()
	deadline = time.Now().Add(3 * time.Minute)
	for {
		done, _ := count()
		if done == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d done after the restart; worker output:\n%s", done, n, w.out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	w.kill()

	for i, u := range uuids {
		p := e.production(u)
		if d := e.deliveries(u); d != 1 {
			t.Errorf("production %d: %d deliveries (OnFinished calls), want exactly 1", i, d)
		}
		frames, lufs := e.decodeOutput(p)
		if frames != inputFrames(i) {
			t.Errorf("production %d: output has %d frames, want %d", i, frames, inputFrames(i))
		}
		if lufs < -17 || lufs > -15 {
			t.Errorf("production %d: output loudness %.2f LUFS, want -16 ± 1", i, lufs)
		}
	}
	reclaimed := 0
	for _, id := range jobs {
		if j, _ := e.store.GetJob(context.Background(), id); j.Attempts > 1 {
			reclaimed++
		}
	}
	if reclaimed == 0 {
		t.Error("no job was claimed again after the kill")
	}
	t.Logf("%d jobs were claimed again after the kill", reclaimed)
	var temps []string
	filepath.WalkDir(filepath.Join(e.dir, "blobs"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), storage.TempPrefix) {
			temps = append(temps, path)
		}
		return nil
	})
	if len(temps) > 0 {
		t.Errorf("temporary files left in the blob folder: %v", temps)
	}
	// Every production was charged exactly once.
	u, _ := e.store.GetUser(context.Background(), e.user.ID)
	// Each length rounds up to whole seconds.
	var want time.Duration
	for i := range n {
		secs := float64(inputFrames(i)) / rate
		want += time.Duration(int64(secs+0.999999)) * time.Second
	}
	if spent := e.user.Credits() - u.Credits(); spent != want {
		t.Errorf("charged %v in total, want %v", spent, want)
	}
}

type workerProc struct {
	cmd  *exec.Cmd
	out  *lockedBuffer
	once sync.Once
}

// startWorker runs TestRunnerCrashWorker in a new process of this test
// binary.
func startWorker(t testing.TB, dir string) *workerProc {
	t.Helper()
	out := &lockedBuffer{}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRunnerCrashWorker$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashEnv+"="+dir)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return &workerProc{cmd: cmd, out: out}
}

// kill sends SIGKILL: no deferred function, no graceful release runs.
func (w *workerProc) kill() {
	w.once.Do(func() {
		w.cmd.Process.Signal(syscall.SIGKILL)
		w.cmd.Wait()
	})
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
