package production

import (
	"context"
	"errors"
	"fmt"

	"github.com/audiopost/audiopost/storage"
)

// JobProcess is the job type that asks a runner to process a production;
// starting a production enqueues one.
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

// Startable reports why p cannot be started now, with its work held to
// limits: ErrNotStartable without an input or while it is processed, a
// form error without output files or with work beyond the limits.
func (p *Production) Startable(limits Limits) error {
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
	return CheckWork(p, limits).Err()
}

// Stoppable is nil when a stop applies to p: it is Waiting or being
// processed (Stopping included); ErrNotRunning otherwise.
func (p *Production) Stoppable() error {
	if p.Status == StatusWaiting || p.Status.Processing() {
		return nil
	}
	return fmt.Errorf("%w (status %s)", ErrNotRunning, p.Status)
}

// StopStatus is the status a stop moves a stoppable p to. held says
// whether a worker still holds a job of p (storage.Jobs.StopJobs counts
// them): then p goes to Stopping, and that worker, noticing its stopped
// lease, sets the final status (or, if it dies first, the next worker to
// take the job over does). Otherwise the stop is honoured at once: a
// production still Waiting, or one whose worker is gone (its lease ran
// out), goes back to Not Started (Incomplete without an input).
func (p *Production) StopStatus(held bool) Status {
	switch {
	case held && p.Status != StatusWaiting:
		return StatusStopping
	case p.HasInput():
		return StatusNotStarted
	}
	return StatusIncomplete
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
