package production

import (
	"context"
	"errors"
	"fmt"

	"github.com/audiopost/audiopost/storage"
)

// JobProcess is the job type that asks a runner to process a production;
// Service.Start enqueues one.
const JobProcess = "process"

// Errors of the lifecycle, for errors.Is.
var (
	// ErrNotStartable means start_allowed is false: the production has no
	// input file, or it is being processed.
	ErrNotStartable = errors.New("production: cannot be started now")
	// ErrNotRunning means a stop of a production that is neither waiting
	// nor being processed.
	ErrNotRunning = errors.New("production: not waiting or processing")
)

// Service is the lifecycle of stored productions: creating, starting,
// stopping and deleting them. Each is one transaction, so a status change
// and the job it implies can never be seen apart: a started production is
// Waiting with exactly one live job, a stopped one has none. The HTTP
// handlers, the web pages and the command line all go through it.
type Service struct {
	Store storage.Store
	// Limits bound the work of each production (see FitBudget); the zero
	// value means DefaultLimits.
	Limits Limits
}

// Load reads production id of owner in tx (storage.ErrNotFound when there
// is none).
func Load(ctx context.Context, tx storage.Tx, owner, id string) (*Production, storage.Resource, error) {
	r, err := tx.GetResource(ctx, owner, storage.KindProduction, id)
	if err != nil {
		return nil, r, err
	}
	p, err := DecodeDocument(r)
	return p, r, err
}

// Create stores the new production p (its UUID set, its inputs probed) of
// owner; with start it is stored Waiting with its job in the same
// transaction. p is first fitted to the work budget (FitBudget): its
// chapters past the input's end are dropped with a warning, and work
// beyond the budget is FieldErrors.
func (s Service) Create(ctx context.Context, owner string, p *Production, start bool) error {
	if err := p.FitBudget(s.Limits); err != nil {
		return err
	}
	if start {
		if err := s.startable(p); err != nil {
			return err
		}
		p.Status = StatusWaiting
	}
	doc, err := EncodeDocument(p)
	if err != nil {
		return err
	}
	res := &storage.Resource{UUID: p.UUID, Owner: owner, Kind: storage.KindProduction, Doc: doc, Status: int(p.Status)}
	if !start {
		return s.Store.CreateResource(ctx, res)
	}
	return s.Store.WithTx(ctx, func(tx storage.Tx) error {
		if err := tx.CreateResource(ctx, res); err != nil {
			return err
		}
		return tx.Enqueue(ctx, &storage.Job{Owner: owner, Production: p.UUID, Type: JobProcess})
	})
}

// Start queues production id for processing: it is re-read, its
// start_allowed and work budget checked, live jobs of it canceled (restarting a waiting
// production must not queue it twice), its status set to Waiting and a
// JobProcess job enqueued.
func (s Service) Start(ctx context.Context, owner, id string) error {
	return s.Store.WithTx(ctx, func(tx storage.Tx) error {
		p, _, err := Load(ctx, tx, owner, id)
		if err != nil {
			return err
		}
		if err := s.startable(p); err != nil {
			return err
		}
		if _, err := tx.CancelJobs(ctx, owner, id); err != nil {
			return err
		}
		if err := tx.SetStatus(ctx, owner, storage.KindProduction, id, int(StatusWaiting)); err != nil {
			return err
		}
		return tx.Enqueue(ctx, &storage.Job{Owner: owner, Production: id, Type: JobProcess})
	})
}

func (s Service) startable(p *Production) error {
	switch {
	case !p.HasInput():
		return fmt.Errorf("%w: it has no input file", ErrNotStartable)
	case !p.CanStart():
		return fmt.Errorf("%w: it is being processed", ErrNotStartable)
	case len(p.OutputFiles) == 0:
		// Processing would write nothing, finish Done and cost credits.
		return FieldErrors{"output_files": "add at least one output file before starting: without one, processing produces nothing"}
	}
	// A production saved before its input's length was known (or before
	// these limits) is checked now; the engine checks once more.
	return CheckWork(p, s.Limits).Err()
}

// Stop stops production id (storage.Jobs.StopJobs). A production still
// Waiting goes back to Not Started (Incomplete without an input). One a
// worker is processing goes to Stopping, and the worker, noticing its
// stopped lease, sets its final status; if that worker dies first, the
// next worker to take the job over does. One being processed whose job no
// worker holds any longer (its lease ran out: the worker died, and none
// took it over yet) goes to Not Started at once, as does a Stopping one
// stopped again once its holder is gone. One that is neither waiting nor
// processing is ErrNotRunning.
func (s Service) Stop(ctx context.Context, owner, id string) error {
	return s.Store.WithTx(ctx, func(tx storage.Tx) error {
		p, _, err := Load(ctx, tx, owner, id)
		if err != nil {
			return err
		}
		idle := StatusIncomplete
		if p.HasInput() {
			idle = StatusNotStarted
		}
		var next Status
		switch {
		case p.Status == StatusWaiting:
			next = idle
		case p.Status.Processing():
			next = StatusStopping
		default:
			return fmt.Errorf("%w (status %s)", ErrNotRunning, p.Status)
		}
		stopping, err := tx.StopJobs(ctx, owner, id)
		if err != nil {
			return err
		}
		if stopping == 0 {
			// No worker holds a job of it: the stop is honoured here.
			next = idle
		}
		return tx.SetStatus(ctx, owner, storage.KindProduction, id, int(next))
	})
}

// Warn adds msg to the warning of production id of owner (see
// AddWarning), at its current status, for what happened after processing
// (a webhook that could not be delivered). A production being processed
// again is left alone: its run starts with a fresh warning and ends with
// its own webhook.
func (s Service) Warn(ctx context.Context, owner, id, msg string) error {
	return s.Store.WithTx(ctx, func(tx storage.Tx) error {
		p, r, err := Load(ctx, tx, owner, id)
		if err != nil {
			return err
		}
		if p.Status.Processing() || p.Status == StatusWaiting {
			return nil
		}
		p.AddWarning(p.Status, msg)
		if r.Doc, err = EncodeDocument(p); err != nil {
			return err
		}
		return tx.UpdateResource(ctx, &r)
	})
}

// Delete deletes production id of owner and cancels its waiting job in the
// same transaction; a production being processed is ErrProcessing (stop
// it first). The caller removes the blobs under ProductionPrefix(id).
func (s Service) Delete(ctx context.Context, owner, id string) error {
	return s.Store.WithTx(ctx, func(tx storage.Tx) error {
		res, err := tx.GetResource(ctx, owner, storage.KindProduction, id)
		if err != nil {
			return err
		}
		if Status(res.Status).Processing() {
			return ErrProcessing
		}
		if _, err := tx.CancelJobs(ctx, owner, id); err != nil {
			return err
		}
		return tx.DeleteResource(ctx, owner, storage.KindProduction, id)
	})
}
