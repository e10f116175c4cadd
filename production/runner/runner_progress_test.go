package runner_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/runner"
	"github.com/audiopost/audiopost/storage"
)

// progressLog is a store that records every progress the runner stores,
// with the runner's clock.
type progressLog struct {
	storage.Store
	now    func() time.Time
	mu     sync.Mutex
	status production.Status
	writes []progressWrite
}

type progressWrite struct {
	status  production.Status
	percent int
	at      time.Time
}

func (l *progressLog) WithTx(ctx context.Context, fn func(storage.Tx) error) error {
	return l.Store.WithTx(ctx, func(tx storage.Tx) error { return fn(progressTx{tx, l}) })
}

func (l *progressLog) SetProgress(ctx context.Context, owner, uuid string, pct int) error {
	return progressTx{l.Store, l}.SetProgress(ctx, owner, uuid, pct)
}

type progressTx struct {
	storage.Tx
	l *progressLog
}

func (t progressTx) SetStatus(ctx context.Context, owner string, kind storage.Kind, uuid string, status int) error {
	t.l.mu.Lock()
	t.l.status = production.Status(status)
	t.l.mu.Unlock()
	return t.Tx.SetStatus(ctx, owner, kind, uuid, status)
}

func (t progressTx) SetProgress(ctx context.Context, owner, uuid string, pct int) error {
	t.l.mu.Lock()
	t.l.writes = append(t.l.writes, progressWrite{t.l.status, pct, t.l.now()})
	t.l.mu.Unlock()
	return t.Tx.SetProgress(ctx, owner, uuid, pct)
}

// TestRunnerProgress: the runner stores a progress estimate that only
// grows, at every status change and otherwise at most once a second,
// and the API shows 100 once the production is Done.
func TestRunnerProgress(t *testing.T) {
	e := newRunnerEnv(t, time.Hour)
	const rate = 44100
	uuid, _ := e.addProduction(wavRequest, testaudio.EncodeWAV(t, testaudio.SpeechLike(rate, 5, 0.05), rate, 16))
	// A clock that moves 200 ms each time it is read stands for a run
	// long enough to report in between.
	var mu sync.Mutex
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		clock = clock.Add(200 * time.Millisecond)
		return clock
	}
	log := &progressLog{Store: e.store, now: now}
	r, err := runner.New(runner.Config{Store: log, Blobs: e.blobs, Now: now, TempDir: t.TempDir(), Logger: quietLogger(), OnFinished: onFinished})
	if err != nil {
		t.Fatal(err)
	}
	if ran, err := r.RunOnce(context.Background(), "w1"); err != nil || !ran {
		t.Fatalf("RunOnce = %v, %v", ran, err)
	}
	p := e.production(uuid)
	if p.Status != production.StatusDone {
		t.Fatalf("status %v: %s", p.Status, p.ErrorMessage)
	}
	if got := production.ShownProgress(p.Status, p.Progress); got != 100 {
		t.Errorf("a Done production shows %d %%", got)
	}
	w := log.writes
	t.Logf("progress writes: %v", w)
	if len(w) < 4 {
		t.Fatalf("%d progress writes, want several: %+v", len(w), w)
	}
	statuses := map[production.Status]bool{}
	for i, x := range w {
		statuses[x.status] = true
		if x.percent < 0 || x.percent > 99 {
			t.Errorf("write %d: %d %%", i, x.percent)
		}
		if i == 0 {
			continue
		}
		prev := w[i-1]
		if x.percent < prev.percent {
			t.Errorf("progress went back from %d to %d %%", prev.percent, x.percent)
		}
		if x.status == prev.status && x.at.Sub(prev.at) < time.Second {
			t.Errorf("two writes in %s %v apart", x.status, x.at.Sub(prev.at))
		}
	}
	if !statuses[production.StatusAudioProcessing] || !statuses[production.StatusAudioEncoding] {
		t.Errorf("progress stored in %v, want Audio Processing and Audio Encoding", statuses)
	}
	if last := w[len(w)-1].percent; last < 80 {
		t.Errorf("last progress before Done %d %%, want most of the way", last)
	}
}
