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

// StopStatus is the status a stop moves p to: a production still
// Waiting goes back to Not Started (Incomplete without an input), one a
// worker is processing to Stopping, and the runner, noticing the
// canceled lease, sets its final status. stopping is true when p is
// Stopping already (nothing changes); a production that is neither
// waiting nor processing is ErrNotRunning.
func (p *Production) StopStatus() (next Status, stopping bool, err error) {
	switch {
	case p.Status == StatusStopping:
		return p.Status, true, nil
	case p.Status == StatusWaiting:
		if p.HasInput() {
			return StatusNotStarted, false, nil
		}
		return StatusIncomplete, false, nil
	case p.Status.Processing():
		return StatusStopping, false, nil
	}
	return p.Status, false, fmt.Errorf("%w (status %s)", ErrNotRunning, p.Status)
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
