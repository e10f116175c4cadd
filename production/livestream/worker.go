package livestream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/audiopost/audiopost/internal/workerid"
	"github.com/audiopost/audiopost/storage"
)

// Figures are a running stream's figures as its worker last stored them.
// Loudness and peaks are null while undefined (silence, too short).
type Figures struct {
	Updated        time.Time           `json:"updated"`
	Worker         string              `json:"worker"`
	UptimeSeconds  float64             `json:"uptime_seconds"`
	MomentaryLUFS  *float64            `json:"momentary_lufs"`
	ShortTermLUFS  *float64            `json:"shortterm_lufs"`
	IntegratedLUFS *float64            `json:"integrated_lufs"`
	TruePeakDBTP   *float64            `json:"true_peak_dbtp"`
	GainDB         float64             `json:"gain_db"`
	LimiterDB      float64             `json:"limiter_db"`
	Speech         bool                `json:"speech"`
	Source         SourceStatus        `json:"source"`
	Destinations   []DestinationStatus `json:"destinations"`
	// History has a point per second over the last HistorySeconds, oldest
	// first: what the stream's page draws.
	History []Point `json:"history"`
}

// Point is one second of a stream's history.
type Point struct {
	Time          int64    `json:"t"` // Unix seconds
	MomentaryLUFS *float64 `json:"m"`
	ShortTermLUFS *float64 `json:"s"`
	GainDB        float64  `json:"gain"`
	PeakDB        *float64 `json:"peak"` // sample peak of the latest 100 ms, dBFS
}

// HistorySeconds is how much history Figures keep.
const HistorySeconds = 300

func defined(v float64) *float64 {
	if math.IsInf(v, 0) || math.IsNaN(v) || v < -200 {
		return nil
	}
	r := math.Round(v*100) / 100
	return &r
}

// Worker runs the live streams that users start: it claims their jobs
// (storage.JobLive) with a lease, runs each Stream, renews the lease and
// stores the stream's figures every Heartbeat. A stopped stream's job is
// canceled, which the next heartbeat notices; a worker that dies stops
// renewing, and when the lease has run out another worker claims the job
// and runs the stream from its definition. A Worker runs any number of
// streams at once, up to MaxStreams.
type Worker struct {
	Store storage.Store
	// ID names the worker in leases (default hostname-pid-random).
	ID string
	// Lease is how long a claim lasts without a heartbeat (default 10 s):
	// how long a stream whose worker died stays off the air at most, plus
	// a start. Heartbeat is how often it is renewed and the figures
	// stored (default Lease/4).
	Lease, Heartbeat time.Duration
	// Poll is how often an idle worker looks for a stream (default 1 s).
	Poll time.Duration
	// MaxStreams bounds the streams one worker runs (default 50).
	MaxStreams int
	// Options are the streams' fault handling.
	Options Options
	Logger  *slog.Logger
}

func (w *Worker) defaults() {
	if w.ID == "" {
		w.ID = workerid.New()
	}
	if w.Lease <= 0 {
		w.Lease = 10 * time.Second
	}
	if w.Heartbeat <= 0 {
		w.Heartbeat = w.Lease / 4
	}
	if w.Poll <= 0 {
		w.Poll = time.Second
	}
	if w.MaxStreams <= 0 {
		w.MaxStreams = 50
	}
	if w.Logger == nil {
		w.Logger = slog.Default()
	}
	if w.Options.Logger == nil {
		w.Options.Logger = w.Logger
	}
}

// errDied stands for a worker's death in tests: its streams stop without
// giving their jobs back, as when the process is killed.
var errDied = errors.New("livestream: worker died")

// Run claims and runs streams until ctx is done; then it stops them and
// gives their jobs back, so that another worker takes them at once.
func (w *Worker) Run(ctx context.Context) error {
	w.defaults()
	var wg sync.WaitGroup
	defer wg.Wait()
	slots := make(chan struct{}, w.MaxStreams)
	for {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return nil
		}
		job, err := w.Store.ClaimType(ctx, w.ID, storage.JobLive, w.Lease)
		if err != nil {
			<-slots
			if ctx.Err() != nil {
				return nil
			}
			if !errors.Is(err, storage.ErrNoJob) {
				w.Logger.Warn("live worker: claim", "err", err)
			}
			select {
			case <-time.After(w.Poll):
			case <-ctx.Done():
				return nil
			}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			w.run(ctx, job)
		}()
	}
}

// run runs one claimed stream until its job is canceled, its lease is
// lost, or the worker stops.
func (w *Worker) run(ctx context.Context, job storage.Job) {
	lease := job.Lease()
	log := w.Logger.With("stream", job.Production, "owner", job.Owner)
	bg := context.WithoutCancel(ctx)
	r, err := w.Store.GetResource(bg, job.Owner, storage.KindLiveStream, job.Production)
	if errors.Is(err, storage.ErrNotFound) {
		_ = w.Store.Complete(bg, lease) // deleted meanwhile
		return
	}
	var ls *LiveStream
	if err == nil {
		ls, err = Decode(r)
	}
	if err != nil {
		w.fail(bg, job, err, log)
		return
	}
	cfg, _, err := Config(ls.Algorithms)
	if err != nil {
		w.fail(bg, job, err, log)
		return
	}
	sctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	beat := time.NewTicker(w.Heartbeat)
	defer beat.Stop()
	// Start waits for the stream's slots of the process pool, which
	// productions may hold for minutes: the lease is renewed meanwhile.
	type started struct {
		s   *Stream
		err error
	}
	startc := make(chan started, 1)
	go func() {
		s, err := Start(sctx, Spec{Source: ls.Source, Destinations: ls.Destinations, Config: cfg, Fallback: ls.Fallback, Name: ls.Name}, w.Options)
		startc <- started{s, err}
	}()
	var s *Stream
	for s == nil {
		select {
		case r := <-startc:
			if r.err != nil {
				if ctx.Err() == nil {
					w.fail(bg, job, r.err, log)
				}
				return
			}
			s = r.s
		case <-beat.C:
			if err := w.Store.Heartbeat(bg, lease, w.Lease); errors.Is(err, storage.ErrLeaseLost) {
				log.Info("live stream stopped before it started", "why", "job canceled or taken over")
				cancel(nil)
				if r := <-startc; r.s != nil {
					r.s.Stop()
				}
				return
			}
		}
	}
	defer s.Stop()
	if err := w.Store.SetStatus(bg, job.Owner, storage.KindLiveStream, job.Production, int(Running)); err != nil {
		log.Warn("live worker: status", "err", err)
	}
	log.Info("live stream running", "worker", w.ID, "attempt", job.Attempts)
	var history []Point
	sample := time.NewTicker(time.Second)
	defer sample.Stop()
	for {
		select {
		case <-sample.C:
			st := s.Status()
			history = append(history, Point{Time: time.Now().Unix(), MomentaryLUFS: defined(st.Stats.Momentary),
				ShortTermLUFS: defined(st.Stats.ShortTerm), GainDB: math.Round(st.Stats.GainDB*100) / 100, PeakDB: defined(st.Stats.PeakDB)})
			if len(history) > HistorySeconds {
				history = append(history[:0], history[len(history)-HistorySeconds:]...)
			}
		case <-beat.C:
			if err := w.Store.Heartbeat(bg, lease, w.Lease); err != nil {
				if errors.Is(err, storage.ErrLeaseLost) {
					log.Info("live stream stopped", "why", "job canceled or taken over")
				} else {
					log.Warn("live worker: heartbeat", "err", err)
				}
				return
			}
			if err := w.store(bg, job, s, history); err != nil {
				log.Warn("live worker: figures", "err", err)
			}
		case <-s.Done():
			err := s.Err()
			if err == nil {
				err = errors.New("the stream ended")
			}
			w.fail(bg, job, err, log)
			return
		case <-ctx.Done():
			if errors.Is(context.Cause(ctx), errDied) {
				return // as if killed: the lease runs out
			}
			if err := w.Store.Release(bg, lease); err != nil {
				log.Warn("live worker: release", "err", err)
			}
			if err := w.Store.SetStatus(bg, job.Owner, storage.KindLiveStream, job.Production, int(Starting)); err != nil {
				log.Warn("live worker: status", "err", err)
			}
			return
		}
	}
}

// store writes the stream's figures.
func (w *Worker) store(ctx context.Context, job storage.Job, s *Stream, history []Point) error {
	st := s.Status()
	f := Figures{Updated: time.Now().UTC(), Worker: w.ID, UptimeSeconds: math.Round(st.Uptime.Seconds()),
		MomentaryLUFS: defined(st.Stats.Momentary), ShortTermLUFS: defined(st.Stats.ShortTerm),
		IntegratedLUFS: defined(st.Stats.Integrated), TruePeakDBTP: defined(st.Stats.TruePeak),
		GainDB: math.Round(st.Stats.GainDB*100) / 100, LimiterDB: math.Round(st.Stats.LimiterDB*100) / 100,
		Speech: st.Stats.Speech, Source: st.Source, Destinations: st.Destinations, History: history}
	doc, err := json.Marshal(f)
	if err != nil {
		return err
	}
	return w.Store.PutLiveFigures(ctx, job.Owner, job.Production, doc)
}

// fail ends a stream that cannot run: its job fails for good and the
// stream shows Failed with the reason.
func (w *Worker) fail(ctx context.Context, job storage.Job, cause error, log *slog.Logger) {
	log.Warn("live stream failed", "err", cause)
	err := w.Store.WithTx(ctx, func(tx storage.Tx) error {
		r, err := tx.GetResource(ctx, job.Owner, storage.KindLiveStream, job.Production)
		if err != nil {
			return err
		}
		ls, err := Decode(r)
		if err != nil {
			return err
		}
		ls.Error = redactText(cause.Error())
		if r.Doc, err = json.Marshal(ls); err != nil {
			return err
		}
		r.Status = int(Failed)
		if err := tx.UpdateResource(ctx, &r); err != nil {
			return err
		}
		return tx.Complete(ctx, job.Lease())
	})
	if err != nil {
		log.Warn("live worker: recording the failure", "err", fmt.Sprint(err))
	}
}
