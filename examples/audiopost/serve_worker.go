package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/audiopost/audiopost/audio/procpool"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/app"
	"github.com/audiopost/audiopost/production/engine"
	"github.com/audiopost/audiopost/production/livestream"
	"github.com/audiopost/audiopost/production/runner"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/storage/sqlstore"
	"github.com/audiopost/audiopost/storage/transfer"
	"github.com/audiopost/audiopost/transport/outbound"
	"github.com/audiopost/audiopost/transport/webhook"
)

// workerConfig is what serve's flags say about the worker role.
type workerConfig struct {
	workers      int
	lease, poll  time.Duration
	noCharge     bool
	workDir      string
	base         string
	allowPrivate bool
	transfer     transfer.Options
	log          *slog.Logger
	processes    *procpool.Pool
	// onProcessed sees every finished processing run (metrics).
	onProcessed func(status production.Status, audioSeconds float64, took time.Duration)
	// limits are the work budget the engine holds productions to.
	limits production.Limits
}

// worker is the worker role: the job runner, the live stream worker and
// the webhook sender, woken by the store when work is committed (in this
// process, or on PostgreSQL in any), and stopped gracefully (see stop).
type worker struct {
	log    *slog.Logger
	store  *drainingStore
	runner *runner.Runner
	live   *livestream.Worker
	sender *webhook.Sender
	unsub  []func()
	cancel context.CancelFunc
	done   sync.WaitGroup
}

func newWorker(st *sqlstore.Store, blobs storage.Blobs, c workerConfig) (*worker, error) {
	w := &worker{log: c.log, store: newDrainingStore(st)}
	productions, err := app.New(app.Config{Store: st})
	if err != nil {
		return nil, err
	}
	w.sender, err = webhook.New(webhook.Config{Store: st, Logger: c.log,
		Client: outbound.New(outbound.Config{AllowLoopback: c.allowPrivate, AllowPrivate: c.allowPrivate, Timeout: webhook.DefaultTimeout}),
		// The owner reads why on the production, not only in this log.
		OnFailed: func(ctx context.Context, d storage.Delivery, msg string) {
			if err := productions.WarnProduction(ctx, d.Owner, d.Production, msg); err != nil && !errors.Is(err, storage.ErrNotFound) {
				c.log.Warn("webhook: recording the failure on the production", "production", d.Production, "err", err)
			}
		}})
	if err != nil {
		return nil, err
	}
	w.runner, err = runner.New(runner.Config{
		Store: w.store, Blobs: blobs, Engine: &engine.Engine{Logger: c.log, TempDir: c.workDir, Limits: c.limits, Processes: c.processes},
		Workers: c.workers, NoCharge: c.noCharge, Lease: c.lease, TempDir: c.workDir, BaseURL: c.base, Logger: c.log,
		PollInterval: c.poll, Transfer: c.transfer, Processes: c.processes,
		OnProcessed: c.onProcessed,
		OnFinished: func(ctx context.Context, tx storage.Tx, owner string, p *production.Production) error {
			if p.Webhook == nil || *p.Webhook == "" {
				return nil
			}
			// The store wakes the senders (of every process) at the commit.
			return webhook.Enqueue(ctx, tx, owner, p.UUID, *p.Webhook, int(p.Status), p.Status.String())
		},
	})
	if err != nil {
		return nil, err
	}
	// Live streams run on their own jobs, claimed by type: each runs until
	// it is stopped, beside the productions, not in a production slot.
	w.live = &livestream.Worker{Store: st, Lease: min(c.lease, 10*time.Second), Logger: c.log}
	w.unsub = []func(){
		st.Subscribe(sqlstore.TopicJobs, w.runner.Wake),
		st.Subscribe(sqlstore.TopicDeliveries, w.sender.Wake),
		// A stopped production stops now, not at the next heartbeat.
		st.Subscribe(sqlstore.TopicCanceled, w.runner.CheckLeases),
	}
	return w, nil
}

// start runs the runner and the sender in the background.
func (w *worker) start() {
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	w.done.Go(func() { w.runner.Run(ctx) })
	w.done.Go(func() { w.live.Run(ctx) })
	w.done.Go(func() { w.sender.Run(ctx) })
}

// stop shuts the worker down by deadline: it claims no more jobs, lets
// the productions it holds finish until shortly before the deadline, and
// then cancels what still runs, which hands those jobs back to the queue
// (released, the attempt not counted) for another worker.
func (w *worker) stop(deadline time.Time) {
	for _, u := range w.unsub {
		u()
	}
	// Keep a little of the time for handing back and the last webhooks.
	left := time.Until(deadline)
	finish := deadline.Add(-min(left/4, 5*time.Second))
	fctx, cancel := context.WithDeadline(context.Background(), finish)
	defer cancel()
	if n := w.store.drain(fctx); n > 0 {
		w.log.Warn("shutdown deadline: handing running productions back", "productions", n)
	}
	w.cancel()
	w.done.Wait()
}

// drainingStore is the store the runner sees. Once drain begins, Claim
// finds no job, so each worker goroutine finishes the production it holds
// and then idles; drain waits for that.
type drainingStore struct {
	storage.Store
	mu       sync.Mutex
	draining bool
	busy     map[string]bool // worker goroutines holding a claimed job
	changed  chan struct{}
}

func newDrainingStore(st storage.Store) *drainingStore {
	return &drainingStore{Store: st, busy: map[string]bool{}, changed: make(chan struct{}, 1)}
}

// errDraining is what Claim says while the worker shuts down.
var errDraining = fmt.Errorf("shutting down: %w", storage.ErrNoJob)

// Claim implements storage.Jobs. A worker goroutine calls it when it is
// done with its previous job, if any.
// A claim in flight counts as busy: a drain that began while the store
// was claiming would otherwise find no job held, cancel the runner, and
// leave the job it had just been given running in the store, neither
// processed nor handed back (TestServeWorkerShutdown caught one).
func (d *drainingStore) Claim(ctx context.Context, worker string, lease time.Duration) (storage.Job, error) {
	d.mu.Lock()
	draining := d.draining
	d.setBusy(worker, !draining)
	d.mu.Unlock()
	if draining {
		return storage.Job{}, errDraining
	}
	j, err := d.Store.Claim(ctx, worker, lease)
	if err != nil {
		d.mu.Lock()
		d.setBusy(worker, false)
		d.mu.Unlock()
	}
	return j, err
}

func (d *drainingStore) setBusy(worker string, busy bool) {
	if busy {
		d.busy[worker] = true
	} else {
		delete(d.busy, worker)
	}
	select {
	case d.changed <- struct{}{}:
	default:
	}
}

// drain stops the claims and waits until no job is held or ctx is done,
// and reports how many are still held.
func (d *drainingStore) drain(ctx context.Context) int {
	d.mu.Lock()
	d.draining = true
	d.mu.Unlock()
	for {
		d.mu.Lock()
		n := len(d.busy)
		d.mu.Unlock()
		if n == 0 {
			return 0
		}
		select {
		case <-ctx.Done():
			return n
		case <-d.changed:
		}
	}
}

// makeWorkDir makes this process's folder for temporary files under
// <data>/work, named after the host and process, and removes the folders
// that processes of this host left when they died (other hosts clean up
// after their own), and the files of the single-process layout.
func makeWorkDir(data string) (string, error) {
	root := filepath.Join(data, "work")
	host, _ := os.Hostname()
	host = strings.ReplaceAll(host, "-", "_")
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		p := filepath.Join(root, e.Name())
		if !e.IsDir() {
			os.Remove(p)
			continue
		}
		f := strings.Split(e.Name(), "-")
		if len(f) != 3 || f[0] != host {
			continue
		}
		pid, err := strconv.Atoi(f[1])
		if err != nil || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			os.RemoveAll(p)
		}
	}
	dir := filepath.Join(root, fmt.Sprintf("%s-%d-%d", host, os.Getpid(), time.Now().UnixNano()))
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return "", err
	}
	return dir, nil
}
