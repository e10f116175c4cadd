package runner

import (
	"context"

	"github.com/audiopost/audiopost/internal/workerid"
)

// Reclaim takes back, at once, the jobs whose lease holder is known to be
// gone, instead of waiting for their leases to run out:
//
//   - jobs held under this runner's own WorkerID (a fixed Config.WorkerID
//     that a restarted process reuses): a process starting under that id
//     is the next instance, the holder died;
//   - jobs held under a generated id (host-pid-random) of this host
//     whose process no longer runs, such as this process's previous
//     instance after kill -9 or a crash.
//
// Jobs of workers on other hosts, or of processes that still run, are
// left to their leases: such a worker's jobs are claimed again once its
// heartbeat (every Config.Heartbeat) has stopped for Config.Lease. Run
// calls Reclaim when it starts; it reports how many jobs it took back,
// which the next Claim of any worker then runs again from scratch (the
// crashed attempt counts, as for a lease that ran out).
//
// The process check assumes one process namespace per host name (see
// package workerid): a worker wrongly taken for dead loses its job at its
// next heartbeat (the lease guards every write), so nothing is done twice,
// but work is repeated; give such workers distinct host names or
// WorkerIDs.
func (r *Runner) Reclaim(ctx context.Context) (int, error) {
	holders, err := r.cfg.Store.LeaseHolders(ctx)
	if err != nil {
		return 0, err
	}
	var dead []string
	for _, w := range holders {
		if r.deadHolder(w) {
			dead = append(dead, w)
		}
	}
	if len(dead) == 0 {
		return 0, nil
	}
	n, err := r.cfg.Store.ExpireLeases(ctx, dead...)
	if err != nil {
		return 0, err
	}
	if n > 0 {
		r.log.Info("job runner: took back the jobs of dead workers", "jobs", n, "workers", dead)
		r.Wake()
	}
	return n, nil
}

// deadHolder reports whether worker (a lease holder's id) is known dead.
func (r *Runner) deadHolder(worker string) bool {
	if workerid.Base(worker) == r.cfg.WorkerID {
		// Ours: this runner has not claimed anything yet, so a holder
		// under its id is a previous instance.
		return !r.running.Load()
	}
	return workerid.Dead(worker, r.cfg.WorkerID)
}
