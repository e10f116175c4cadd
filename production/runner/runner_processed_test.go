package runner_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/engine"
	"github.com/audiopost/audiopost/production/runner"
)

// processedCall is one call of Config.OnProcessed.
type processedCall struct {
	status production.Status
	audio  float64
	took   time.Duration
}

// processedRecorder records OnProcessed calls; its clock advances 3 s per
// reading, so the engine's run takes a multiple of 3 s (the runner reads
// the clock at its start and end, and to pace the progress it stores).
type processedRecorder struct {
	mu    sync.Mutex
	calls []processedCall
	ticks int
}

func (p *processedRecorder) config(cfg runner.Config) runner.Config {
	cfg.OnProcessed = func(status production.Status, audio float64, took time.Duration) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.calls = append(p.calls, processedCall{status, audio, took})
	}
	cfg.Now = func() time.Time {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.ticks++
		return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC).Add(time.Duration(p.ticks) * 3 * time.Second)
	}
	return cfg
}

func (p *processedRecorder) only(t *testing.T) processedCall {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.calls) != 1 {
		t.Fatalf("OnProcessed called %d times (%v), want once", len(p.calls), p.calls)
	}
	return p.calls[0]
}

// clockTime reports whether d was measured with the recorder's clock.
func clockTime(d time.Duration) bool { return d > 0 && d%(3*time.Second) == 0 }

func TestRunnerOnProcessed(t *testing.T) {
	const rate = 44100
	t.Run("done", func(t *testing.T) {
		e := newRunnerEnv(t, time.Hour)
		e.addProduction(wavRequest, testaudio.EncodeWAV(t, testaudio.SpeechLike(rate, 2, 0.05), rate, 16))
		var rec processedRecorder
		r := e.runner(rec.config(runner.Config{}))
		if ran, err := r.RunOnce(context.Background(), "w1"); !ran || err != nil {
			t.Fatalf("RunOnce = %v, %v", ran, err)
		}
		c := rec.only(t)
		if c.status != production.StatusDone || c.audio < 1.99 || c.audio > 2.01 || !clockTime(c.took) {
			t.Errorf("OnProcessed(%v, %v, %v), want Done, 2 s of audio, a multiple of 3 s", c.status, c.audio, c.took)
		}
	})
	t.Run("engine error", func(t *testing.T) {
		e := newRunnerEnv(t, time.Hour)
		e.addProduction(wavRequest, []byte("RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x02\x00junk junk junk junk"))
		var rec processedRecorder
		r := e.runner(rec.config(runner.Config{}))
		if _, err := r.RunOnce(context.Background(), "w1"); err != nil {
			t.Fatal(err)
		}
		if c := rec.only(t); c.status != production.StatusError || !clockTime(c.took) {
			t.Errorf("OnProcessed(%v, %v, %v), want Error after a multiple of 3 s", c.status, c.audio, c.took)
		}
	})
	t.Run("refused before processing", func(t *testing.T) {
		e := newRunnerEnv(t, time.Second)
		e.addProduction(wavRequest, testaudio.EncodeWAV(t, testaudio.SpeechLike(rate, 2, 0.05), rate, 16))
		var rec processedRecorder
		r := e.runner(rec.config(runner.Config{}))
		if _, err := r.RunOnce(context.Background(), "w1"); err != nil {
			t.Fatal(err)
		}
		if c := rec.only(t); c.status != production.StatusError || c.took != 0 {
			t.Errorf("OnProcessed(%v, %v, %v), want Error without engine time", c.status, c.audio, c.took)
		}
	})
	t.Run("shutdown", func(t *testing.T) {
		e := newRunnerEnv(t, time.Hour)
		e.addProduction(wavRequest, testaudio.EncodeWAV(t, testaudio.SpeechLike(rate, 2, 0.05), rate, 16))
		var rec processedRecorder
		proc := newBlockingProcessor()
		r := e.runner(rec.config(runner.Config{PollInterval: 10 * time.Millisecond, Engine: &engine.Engine{Processor: proc}}))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx) }()
		proc.wait(t)
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		rec.mu.Lock()
		defer rec.mu.Unlock()
		if len(rec.calls) != 0 {
			t.Errorf("a released job was reported: %v", rec.calls)
		}
	})
}
