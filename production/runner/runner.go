package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/audiopost/audiopost/audio/procpool"
	"github.com/audiopost/audiopost/internal/workerid"
	"github.com/audiopost/audiopost/production/engine"

	"github.com/audiopost/audiopost/production"

	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/storage/transfer"
)

// Defaults of Config.
const (
	// DefaultLease is how long a claimed job stays a worker's without a
	// heartbeat; the heartbeat renews it every Lease/4 (7.5 s). A worker
	// that died on another host has its jobs taken over 30 s after its
	// last heartbeat at most; one of the same host, at once by the next
	// runner that starts there (Reclaim).
	DefaultLease        = 30 * time.Second
	DefaultPollInterval = time.Second
	DefaultRetryBackoff = 30 * time.Second
	maxRetryBackoff     = 30 * time.Minute
)

// Errors of the runner.
var (
	// ErrInsufficientCredits is the cause of a production refused before
	// processing because its owner's credits do not cover its input (only
	// on a server that enforces credits). Errors of it also match
	// storage.ErrInsufficientCredits.
	ErrInsufficientCredits = errors.New("not enough credits")
	// ErrInputMissing means the production's input file is not in the blob
	// store (deleted, or never uploaded).
	ErrInputMissing = errors.New("production: input file missing")
	// errCrashed is the cause of a production given up after MaxCrashes.
	errCrashed = errors.New(crashedMessage)
)

// MaxCrashes is how many times a job may take its worker down (the lease
// ran out with the worker dead mid-job: killed, out of memory) before the
// runner that takes it over next ends its production in Error instead of
// processing it again. A graceful shutdown hands jobs back without
// counting.
const MaxCrashes = 2

// crashedMessage is the production's error after MaxCrashes.
const crashedMessage = "processing stopped twice because the server processing it went down while working on it " +
	"(killed, or out of memory), so it is not tried a third time; start it again to retry, " +
	"and tell the server's operator if it happens again"

// Config configures a Runner. Store and Blobs are required.
type Config struct {
	Store storage.Store
	Blobs storage.Blobs
	// Engine processes the productions; nil: a zero Engine.
	Engine *engine.Engine
	// Workers is how many productions one Runner processes at once
	// (default 1: the pipeline is CPU-bound, so more workers than cores
	// only adds latency to every job).
	Workers int
	// Lease is how long a claim lasts without a heartbeat (default
	// DefaultLease): after a crash, the job is claimed again after at most
	// this long. Heartbeat is how often the lease is renewed (default
	// Lease/4); a stop is noticed within one Heartbeat.
	Lease, Heartbeat time.Duration
	// PollInterval is how often an idle worker looks for a job (default
	// DefaultPollInterval); Wake cuts it short.
	PollInterval time.Duration
	// RetryBackoff is the delay before a job that failed for an
	// infrastructure reason (store or blob error) is retried; it doubles
	// with each attempt (default DefaultRetryBackoff).
	RetryBackoff time.Duration
	// WorkerID names this runner in job leases (default hostname-pid-random).
	// Each worker goroutine appends its number. A fixed WorkerID must not be
	// used by two live runners: a starting runner takes back the jobs held
	// under its own id (Reclaim).
	WorkerID string
	// OnFinished is called inside the transaction that stores the final
	// status (Done or Error) of a production owned by owner, once per finished
	// processing; an error rolls the whole result back and the job is
	// retried. serve passes a function enqueuing the webhook there.
	OnFinished func(ctx context.Context, tx storage.Tx, owner string, p *production.Production) error
	// OnProcessed, when set, is called after the final status (Done or
	// Error) of a production is stored, with that status, the
	// production's length in seconds and how long the engine ran on it
	// (0 when it failed before processing), for metrics
	// (httpapi.Metrics.ObserveProcessing).
	OnProcessed func(status production.Status, audioSeconds float64, took time.Duration)
	// NoCharge turns credit accounting off (a self-hosted server where
	// processing is free): credits are neither checked nor charged, and
	// used_credits only reports the hours.
	NoCharge bool
	// TempDir holds the local copies of outputs while they are written
	// (and of inputs when Blobs has no LocalPath); default os.TempDir().
	TempDir string
	// Transfer is how connections to outgoing services (FTP, SFTP,
	// WebDAV) are made. A server that users reach passes a Dial that
	// refuses private and loopback addresses (transport/outbound); the
	// zero value dials anything.
	Transfer transfer.Options
	// BaseURL, when set, is the API's base URL: a cover the engine found
	// embedded in the input is then stored and published as the
	// production's image and thumbnail (whose fields hold download URLs).
	BaseURL string
	// Processes is the pool of external programs (ffmpeg, PocketSphinx)
	// the jobs take their slots in (package procpool): the engine's, and
	// the probes before it. Share the server's with httpapi.Config. nil:
	// procpool.Default().
	Processes *procpool.Pool
	// Logger receives a record per job outcome (default slog.Default()).
	Logger *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Runner processes "process" jobs from the durable queue (storage.Jobs):
// it claims a job with a lease, renews the lease while the Engine runs,
// stores the outputs in the blob store and the result in one transaction
// with the job's completion.
//
// Outcomes of a job:
//   - processed: the production ends Done (3), credits are charged,
//     OnFinished is called and the job completed, all in one transaction;
//   - a processing error (bad input, unsupported option): the production
//     ends in Error (2) with error_status and error_message, OnFinished is
//     called and the job completed: it is not retried, the same input
//     would fail again;
//   - insufficient credits: checked before processing from the probed
//     input length; the production ends in Error (2) at status Waiting
//     with a message saying what is missing, like a processing error;
//   - an infrastructure error (store or blob failure): the job is failed
//     for retry with exponential backoff and the production goes back to
//     Waiting; after the job's last attempt it ends in Error;
//   - stopped (the API canceled the job): noticed at the next heartbeat or
//     status change, or at once after CheckLeases, the engine is cancelled
//     and a production in Stopping (13) goes to Production Not Started
//     Yet (10), as Engine.Run defines;
//   - lease lost otherwise (this worker stalled longer than the lease and
//     another claimed the job): the run is abandoned, the other worker
//     owns the production;
//   - shutdown (Run's context done): the engine is cancelled, the
//     production goes back to Waiting and the job is released without
//     counting the attempt, so the next worker starts it again;
//   - stopped while no worker held it (the API's stop found its lease
//     run out, or its worker died after the stop): the worker that takes
//     it over only ends it, the production going from Stopping to
//     Production Not Started Yet (10);
//   - crashed: a job that took its worker down MaxCrashes times (its
//     lease ran out with the worker dead mid-job) is not processed again:
//     the worker that takes it over ends the production in Error (2)
//     saying why.
//
// A job claimed again after a crash runs from scratch: each output blob is
// replaced atomically, and the result transaction, guarded by the lease,
// commits at most once per job, so OnFinished runs once per finished
// processing.
type Runner struct {
	cfg     Config
	engine  *engine.Engine
	log     *slog.Logger
	wake    chan struct{}
	running atomic.Bool // Run has begun claiming

	// check is closed (and replaced) by CheckLeases: every heartbeat
	// waiting on it beats at once.
	checkMu sync.Mutex
	check   chan struct{}
}

// New checks cfg, fills in defaults and returns a Runner.
func New(cfg Config) (*Runner, error) {
	if cfg.Store == nil || cfg.Blobs == nil {
		return nil, errors.New("production: Config.Store and Blobs are required")
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 1
	}
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultLease
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = cfg.Lease / 4
	}
	if cfg.Heartbeat >= cfg.Lease {
		return nil, fmt.Errorf("production: heartbeat %v must be shorter than the lease %v", cfg.Heartbeat, cfg.Lease)
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.RetryBackoff <= 0 {
		cfg.RetryBackoff = DefaultRetryBackoff
	}
	if cfg.WorkerID == "" {
		cfg.WorkerID = workerid.New()
	}
	if cfg.TempDir == "" {
		cfg.TempDir = os.TempDir()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	e := cfg.Engine
	if e == nil {
		e = &engine.Engine{Logger: cfg.Logger, TempDir: cfg.TempDir, Processes: cfg.Processes}
	}
	return &Runner{cfg: cfg, engine: e, log: cfg.Logger, wake: make(chan struct{}, 1), check: make(chan struct{})}, nil
}

// CheckLeases makes every job this Runner is processing renew its lease
// now instead of at its next heartbeat, so that a job the API canceled
// (a stopped production) stops within a round trip to the store rather
// than within Config.Heartbeat. serve calls it when the store signals a
// cancellation (sqlstore.TopicCanceled). It never blocks.
func (r *Runner) CheckLeases() {
	r.checkMu.Lock()
	close(r.check)
	r.check = make(chan struct{})
	r.checkMu.Unlock()
}

// checked returns the channel the next CheckLeases closes.
func (r *Runner) checked() <-chan struct{} {
	r.checkMu.Lock()
	defer r.checkMu.Unlock()
	return r.check
}

// Wake makes an idle worker look for a job now (after an enqueue in the
// same process). It never blocks.
func (r *Runner) Wake() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Run processes jobs with Config.Workers workers until ctx is done. Then
// the jobs in flight are cancelled and released for another worker, and
// Run returns nil once every worker has stopped.
func (r *Runner) Run(ctx context.Context) error {
	if _, err := r.Reclaim(ctx); err != nil && ctx.Err() == nil {
		r.log.Error("job runner: taking back the jobs of dead workers", "err", err)
	}
	r.running.Store(true)
	var wg sync.WaitGroup
	for i := range r.cfg.Workers {
		worker := r.cfg.WorkerID
		if r.cfg.Workers > 1 {
			worker += "/" + strconv.Itoa(i)
		}
		wg.Go(func() { r.work(ctx, worker) })
	}
	wg.Wait()
	return nil
}

func (r *Runner) work(ctx context.Context, worker string) {
	t := time.NewTimer(0)
	defer t.Stop()
	for ctx.Err() == nil {
		ran, err := r.RunOnce(ctx, worker)
		if err != nil && ctx.Err() == nil {
			r.log.Error("job runner", "worker", worker, "err", err)
		}
		if ran {
			continue
		}
		t.Reset(r.cfg.PollInterval)
		select {
		case <-ctx.Done():
		case <-r.wake:
		case <-t.C:
		}
	}
}

// RunOnce claims one ready job as worker and processes it, reporting
// whether there was one. Errors are those of the queue itself; the
// outcome of the job is recorded in the store.
func (r *Runner) RunOnce(ctx context.Context, worker string) (bool, error) {
	ctx = procpool.With(ctx, r.cfg.Processes)
	job, err := r.cfg.Store.Claim(ctx, worker, r.cfg.Lease)
	if errors.Is(err, storage.ErrNoJob) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, r.handle(ctx, job)
}

// bg is a context for the bookkeeping after a run, which must happen even
// when the run's context was cancelled.
func bg(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
}

func (r *Runner) handle(ctx context.Context, job storage.Job) error {
	lease := job.Lease()
	log := r.log.With("job", job.ID, "production", job.Production, "attempt", job.Attempts, "worker", job.Worker)
	if job.Type != production.JobProcess {
		bctx, cancel := bg(ctx)
		defer cancel()
		_, err := r.cfg.Store.Fail(bctx, lease, "unknown job type "+strconv.Quote(job.Type), time.Minute)
		return err
	}
	jctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	jctx = context.WithValue(jctx, cancelKey{}, cancel)
	hbDone := make(chan struct{})
	// Taken before the run: a CheckLeases from now on is seen. One
	// before it is covered by the run's first status change, which
	// renews the lease too.
	check := r.checked()
	go func() {
		defer close(hbDone)
		r.heartbeat(jctx, lease, cancel, check)
	}()
	j := &jobRun{r: r, job: job, lease: lease, log: log}
	err := j.run(jctx)
	cancel(nil)
	<-hbDone
	return err
}

// heartbeat renews the lease until ctx is done, every Config.Heartbeat
// and at each CheckLeases; losing it cancels ctx with ErrLeaseLost. Other
// errors are retried at the next beat: the lease outlives a few missed
// beats.
func (r *Runner) heartbeat(ctx context.Context, l storage.Lease, cancel context.CancelCauseFunc, check <-chan struct{}) {
	t := time.NewTicker(r.cfg.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-check:
		}
		// Before the beat: a CheckLeases during it makes another.
		check = r.checked()
		err := r.cfg.Store.Heartbeat(ctx, l, r.cfg.Lease)
		if errors.Is(err, storage.ErrLeaseLost) {
			cancel(err)
			return
		}
		if err != nil && ctx.Err() == nil {
			r.log.Warn("job heartbeat failed", "job", l.JobID, "err", err)
		}
	}
}

// retryAfter is the backoff before attempt+1.
func (r *Runner) retryAfter(attempt int) time.Duration {
	d := r.cfg.RetryBackoff
	for i := 1; i < attempt && d < maxRetryBackoff; i++ {
		d *= 2
	}
	return min(d, maxRetryBackoff)
}

// creditsDuration is hours as a duration, rounded to the second.
func creditsDuration(hours float64) time.Duration {
	return time.Duration(math.Round(hours*3600)) * time.Second
}

// creditsError is a refusal for lack of credits, in words an account's
// owner understands and with what to do about it.
type creditsError struct{ need, have time.Duration }

func (e *creditsError) Error() string {
	return fmt.Sprintf("not enough credits: the input needs %s of processing time, the account has %s left; "+
		"the server's operator grants more (audiopost user credits)", production.FormatTimestamp(e.need), production.FormatTimestamp(e.have))
}

func (e *creditsError) Is(target error) bool {
	return target == ErrInsufficientCredits || target == storage.ErrInsufficientCredits
}
