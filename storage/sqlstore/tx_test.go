package sqlstore

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/audiopost/audiopost/storage"
)

func TestWithTxReadThenWrite(t *testing.T) { eachEngine(t, testWithTxReadThenWrite) }

// Transactions that read a row and change it depending on what they read
// run one after the other, on PostgreSQL as on SQLite: of concurrent
// "start if not started" transactions exactly one starts, and a charge
// sees the balance it changes.
func testWithTxReadThenWrite(t *testing.T, e engine) {
	ctx := t.Context()
	st, _ := e.open(t)
	u := mkUser(t, st, "u")
	st.AddCredits(ctx, u.ID, 100*time.Hour, 0)
	p := storage.Resource{Owner: u.ID, Kind: storage.KindProduction}
	if err := st.CreateResource(ctx, &p); err != nil {
		t.Fatal(err)
	}
	var (
		wg      sync.WaitGroup
		started atomic.Int32
	)
	for range 8 {
		wg.Go(func() {
			err := st.WithTx(ctx, func(tx storage.Tx) error {
				res, err := tx.GetResource(ctx, u.ID, storage.KindProduction, p.UUID)
				if err != nil || res.Status != 0 {
					return err
				}
				if err := tx.SetStatus(ctx, u.ID, storage.KindProduction, p.UUID, 1); err != nil {
					return err
				}
				started.Add(1)
				return tx.Enqueue(ctx, &storage.Job{Owner: u.ID, Production: p.UUID, Type: "process"})
			})
			if err != nil {
				t.Error(err)
			}
		})
		wg.Go(func() {
			err := st.WithTx(ctx, func(tx storage.Tx) error {
				before, err := tx.GetUser(ctx, u.ID)
				if err != nil {
					return err
				}
				after, err := tx.Charge(ctx, u.ID, time.Hour)
				if err != nil {
					return err
				}
				if d := before.Credits() - after.Credits(); d != time.Hour {
					return errors.New("charged " + d.String() + " by the balance read before, want 1h")
				}
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	jobs, _ := st.ListJobs(ctx, u.ID, p.UUID)
	if started.Load() != 1 || len(jobs) != 1 {
		t.Errorf("%d transactions started the production, %d jobs; want 1", started.Load(), len(jobs))
	}
	if got, _ := st.GetUser(ctx, u.ID); got.Credits() != 92*time.Hour {
		t.Errorf("credits %v, want 92h", got.Credits())
	}
}

// Two transactions locking the same rows in opposite orders deadlock on
// PostgreSQL; it aborts one (or both), and WithTx runs it again.
func TestWithTxDeadlockIsRetried(t *testing.T) {
	ctx := t.Context()
	st, _ := engines[1].open(t)
	u := mkUser(t, st, "u")
	p := storage.Resource{Owner: u.ID, Kind: storage.KindProduction}
	st.CreateResource(ctx, &p)
	st.Enqueue(ctx, &storage.Job{Owner: u.ID, Production: p.UUID, Type: "process"})
	j, err := st.Claim(ctx, "w", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	// Each transaction waits, the first time only, until the other holds
	// its first lock.
	jobLocked, resLocked := make(chan struct{}), make(chan struct{})
	var once1, once2 sync.Once
	var runs atomic.Int32
	var wg sync.WaitGroup
	wg.Go(func() { // the runner reporting progress: job, then production
		err := st.WithTx(ctx, func(tx storage.Tx) error {
			runs.Add(1)
			if err := tx.Heartbeat(ctx, j.Lease(), time.Minute); err != nil {
				return err
			}
			once1.Do(func() { close(jobLocked); <-resLocked })
			return tx.SetStatus(ctx, u.ID, storage.KindProduction, p.UUID, 4)
		})
		if err != nil && !errors.Is(err, storage.ErrLeaseLost) {
			t.Error(err)
		}
	})
	wg.Go(func() { // the API stopping it: production, then job
		err := st.WithTx(ctx, func(tx storage.Tx) error {
			runs.Add(1)
			if _, err := tx.GetResource(ctx, u.ID, storage.KindProduction, p.UUID); err != nil {
				return err
			}
			once2.Do(func() { close(resLocked); <-jobLocked })
			if _, err := tx.CancelJobs(ctx, u.ID, p.UUID); err != nil {
				return err
			}
			return tx.SetStatus(ctx, u.ID, storage.KindProduction, p.UUID, 13)
		})
		if err != nil {
			t.Error(err)
		}
	})
	wg.Wait()
	// PostgreSQL aborts one of the two, sometimes both.
	if runs.Load() < 3 {
		t.Errorf("%d transaction runs, want 3 or more (a deadlocked one ran again)", runs.Load())
	}
	// Either order ends with the stop's effect: the heartbeat before it
	// is overwritten, or after it finds the lease canceled.
	got, _ := st.GetJob(ctx, j.ID)
	res, _ := st.GetResource(ctx, u.ID, storage.KindProduction, p.UUID)
	if got.State != storage.JobCanceled || res.Status != 13 {
		t.Errorf("job %s, production status %d; want canceled and 13", got.State, res.Status)
	}
}
