package sqlstore

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/audiopost/audiopost/storage"
)

func enqueueN(t *testing.T, st storage.Jobs, owner string, n int) []int64 {
	t.Helper()
	ids := make([]int64, n)
	for i := range ids {
		j := storage.Job{Owner: owner, Production: fmt.Sprint("p", i), Type: "process", Payload: []byte{byte(i)}}
		if err := st.Enqueue(t.Context(), &j); err != nil {
			t.Fatal(err)
		}
		ids[i] = j.ID
	}
	return ids
}

func TestJobClaimConcurrentExactlyOnce(t *testing.T) {
	eachEngine(t, testJobClaimConcurrentExactlyOnce)
}

func testJobClaimConcurrentExactlyOnce(t *testing.T, e engine) {
	ctx := t.Context()
	st, dsn := e.open(t)
	// A second Store on the same database stands in for a second process:
	// the claims then also race across connections (and, on SQLite, file
	// locks).
	st2, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	u := mkUser(t, st, "u")
	const m, n = 60, 8
	ids := enqueueN(t, st, u.ID, m)

	var (
		mu      sync.Mutex
		claimed = map[int64]string{}
		wg      sync.WaitGroup
	)
	start := time.Now()
	for w := range n {
		s := st
		if w%2 == 1 {
			s = st2
		}
		worker := fmt.Sprint("w", w)
		wg.Go(func() {
			for {
				j, err := s.Claim(ctx, worker, time.Minute)
				if errors.Is(err, storage.ErrNoJob) {
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if prev, dup := claimed[j.ID]; dup {
					t.Errorf("job %d claimed by %s and %s", j.ID, prev, worker)
				}
				claimed[j.ID] = worker
				mu.Unlock()
				if j.State != storage.JobRunning || j.Worker != worker || j.Attempts != 1 || j.Type != "process" {
					t.Errorf("claimed job %+v", j)
				}
			}
		})
	}
	wg.Wait()
	if len(claimed) != m {
		t.Fatalf("%d of %d jobs claimed", len(claimed), m)
	}
	// Oldest first: the first job was claimed, and all leases hold: a
	// minute from a claim made after start (against start, not now: under
	// the race detector on a loaded machine the claims took 30 s).
	for _, id := range ids {
		j, _ := st.GetJob(ctx, id)
		if j.State != storage.JobRunning || j.LeaseUntil.Before(start.Add(time.Minute-time.Second)) {
			t.Errorf("job %d after claims: %+v", id, j)
		}
	}
	_, err = st.Claim(ctx, "late", time.Minute)
	wantErr(t, err, storage.ErrNoJob)
}

func TestJobClaimOrderAndRunAt(t *testing.T) { eachEngineSerial(t, testJobClaimOrderAndRunAt) }

func testJobClaimOrderAndRunAt(t *testing.T, e engine) {
	ctx := t.Context()
	st, _ := e.open(t)
	u := mkUser(t, st, "u")
	later := storage.Job{Owner: u.ID, Type: "x", RunAt: time.Now().Add(time.Hour)}
	if err := st.Enqueue(ctx, &later); err != nil {
		t.Fatal(err)
	}
	ids := enqueueN(t, st, u.ID, 3)
	for _, want := range ids {
		j, err := st.Claim(ctx, "w", time.Minute)
		if err != nil || j.ID != want {
			t.Fatalf("claimed %d (%v), want %d: FIFO", j.ID, err, want)
		}
	}
	_, err := st.Claim(ctx, "w", time.Minute)
	wantErr(t, err, storage.ErrNoJob) // the delayed job is not due
	wantErr(t, st.Enqueue(ctx, &storage.Job{}), storage.ErrInvalid)
	_, err = st.Claim(ctx, "", time.Minute)
	wantErr(t, err, storage.ErrInvalid)
}

func TestJobLeaseExpiryAndHeartbeat(t *testing.T) {
	eachEngineSerial(t, testJobLeaseExpiryAndHeartbeat)
}

func testJobLeaseExpiryAndHeartbeat(t *testing.T, e engine) {
	ctx := t.Context()
	st, _ := e.open(t)
	clock := newFakeClock(st)
	u := mkUser(t, st, "u")
	enqueueN(t, st, u.ID, 1)
	const lease = time.Minute

	j1, err := st.Claim(ctx, "w1", lease)
	if err != nil {
		t.Fatal(err)
	}
	// Heartbeats keep the job: after three lease lengths it is still w1's.
	for range 6 {
		clock.Advance(lease / 2)
		if err := st.Heartbeat(ctx, j1.Lease(), lease); err != nil {
			t.Fatalf("heartbeat: %v", err)
		}
		if _, err := st.Claim(ctx, "w2", lease); !errors.Is(err, storage.ErrNoJob) {
			t.Fatalf("job taken while heartbeating: %v", err)
		}
	}
	// w1 stalls; after the lease runs out w2 takes the job over.
	clock.Advance(lease + time.Millisecond)
	j2, err := st.Claim(ctx, "w2", lease)
	if err != nil || j2.ID != j1.ID || j2.Attempts != 2 || j2.Worker != "w2" {
		t.Fatalf("reclaim: %+v, %v", j2, err)
	}
	wantErr(t, st.Heartbeat(ctx, j1.Lease(), lease), storage.ErrLeaseLost)
	wantErr(t, st.Complete(ctx, j1.Lease()), storage.ErrLeaseLost)
	_, err = st.Fail(ctx, j1.Lease(), "late", 0)
	wantErr(t, err, storage.ErrLeaseLost)
	// Even under the same worker id an old claim is not the new one.
	stale := j2.Lease()
	stale.Attempt = 1
	wantErr(t, st.Heartbeat(ctx, stale, lease), storage.ErrLeaseLost)
	if err := st.Complete(ctx, j2.Lease()); err != nil {
		t.Fatal(err)
	}
	wantErr(t, st.Complete(ctx, j2.Lease()), storage.ErrLeaseLost)
	if j, _ := st.GetJob(ctx, j1.ID); j.State != storage.JobDone {
		t.Errorf("state %s, want done", j.State)
	}
}

func TestJobFailRetryRelease(t *testing.T) { eachEngineSerial(t, testJobFailRetryRelease) }

func testJobFailRetryRelease(t *testing.T, e engine) {
	ctx := t.Context()
	st, _ := e.open(t)
	clock := newFakeClock(st)
	u := mkUser(t, st, "u")
	j := storage.Job{Owner: u.ID, Type: "x", MaxAttempts: 2}
	if err := st.Enqueue(ctx, &j); err != nil {
		t.Fatal(err)
	}
	c, _ := st.Claim(ctx, "w", time.Minute)
	// Release does not count: shutting down is not the job's fault.
	if err := st.Release(ctx, c.Lease()); err != nil {
		t.Fatal(err)
	}
	c, _ = st.Claim(ctx, "w", time.Minute)
	if c.Attempts != 1 {
		t.Fatalf("attempts after release and claim: %d, want 1", c.Attempts)
	}
	retry, err := st.Fail(ctx, c.Lease(), "decoder exploded", 200*time.Millisecond)
	if err != nil || !retry {
		t.Fatalf("first failure: retry %v, %v", retry, err)
	}
	_, err = st.Claim(ctx, "w", time.Minute)
	wantErr(t, err, storage.ErrNoJob) // backing off
	clock.Advance(250 * time.Millisecond)
	c, err = st.Claim(ctx, "w", time.Minute)
	if err != nil || c.Attempts != 2 || c.LastError != "decoder exploded" {
		t.Fatalf("retry claim: %+v, %v", c, err)
	}
	retry, err = st.Fail(ctx, c.Lease(), "again", 0)
	if err != nil || retry {
		t.Fatalf("last failure: retry %v, %v", retry, err)
	}
	if got, _ := st.GetJob(ctx, j.ID); got.State != storage.JobFailed || got.LastError != "again" {
		t.Errorf("after max attempts: %+v", got)
	}

	// A job whose worker dies on every attempt is failed, not retried forever.
	k := storage.Job{Owner: u.ID, Type: "x", MaxAttempts: 1}
	st.Enqueue(ctx, &k)
	if _, err := st.Claim(ctx, "w", 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	clock.Advance(80 * time.Millisecond)
	_, err = st.Claim(ctx, "w", time.Minute)
	wantErr(t, err, storage.ErrNoJob)
	if got, _ := st.GetJob(ctx, k.ID); got.State != storage.JobFailed || got.LastError == "" {
		t.Errorf("crash-looping job: %+v", got)
	}
}

func TestCancelJobs(t *testing.T) { eachEngineSerial(t, testCancelJobs) }

func testCancelJobs(t *testing.T, e engine) {
	ctx := t.Context()
	st, _ := e.open(t)
	a, b := mkUser(t, st, "a"), mkUser(t, st, "b")
	for range 2 {
		st.Enqueue(ctx, &storage.Job{Owner: a.ID, Production: "p", Type: "x"})
	}
	c, _ := st.Claim(ctx, "w", time.Minute)
	if n, _ := st.CancelJobs(ctx, b.ID, "p"); n != 0 {
		t.Errorf("b canceled %d of a's jobs", n)
	}
	if n, err := st.CancelJobs(ctx, a.ID, "p"); err != nil || n != 2 {
		t.Errorf("CancelJobs = %d, %v; want 2", n, err)
	}
	wantErr(t, st.Heartbeat(ctx, c.Lease(), time.Minute), storage.ErrLeaseLost)
	_, err := st.Claim(ctx, "w", time.Minute)
	wantErr(t, err, storage.ErrNoJob)
}

// TestJobCrashes: a claim that takes over a running job whose lease ran
// out counts a crash; one after a release or a failure does not.
func TestJobCrashes(t *testing.T) { eachEngineSerial(t, testJobCrashes) }

func testJobCrashes(t *testing.T, e engine) {
	ctx := t.Context()
	st, _ := e.open(t)
	clock := newFakeClock(st)
	u := mkUser(t, st, "u")
	j := storage.Job{Owner: u.ID, Production: "p", Type: "x", MaxAttempts: 5}
	if err := st.Enqueue(ctx, &j); err != nil {
		t.Fatal(err)
	}
	c, _ := st.Claim(ctx, "w1", time.Minute)
	if c.Crashes != 0 {
		t.Fatalf("first claim: %d crashes", c.Crashes)
	}
	st.Release(ctx, c.Lease())
	c, _ = st.Claim(ctx, "w1", time.Minute)
	st.Fail(ctx, c.Lease(), "store down", 0)
	c, _ = st.Claim(ctx, "w1", time.Minute)
	if c.Crashes != 0 || c.Attempts != 2 {
		t.Fatalf("after a release and a failure: %d crashes, %d attempts", c.Crashes, c.Attempts)
	}
	// w1 dies: w2 takes the job over after the lease, w3 after w2 died too.
	clock.Advance(time.Minute + time.Millisecond)
	c, _ = st.Claim(ctx, "w2", time.Minute)
	if c.Crashes != 1 || c.Worker != "w2" {
		t.Fatalf("after one crash: %+v", c)
	}
	if n, err := st.ExpireLeases(ctx, "w2"); err != nil || n != 1 {
		t.Fatalf("ExpireLeases = %d, %v", n, err)
	}
	c, _ = st.Claim(ctx, "w3", time.Minute)
	if c.Crashes != 2 || c.State != storage.JobRunning {
		t.Fatalf("after two crashes: %+v", c)
	}
	if got, _ := st.GetJob(ctx, j.ID); got.Crashes != 2 {
		t.Errorf("GetJob: %d crashes", got.Crashes)
	}
}

// TestStopJobs: a stop cancels a queued job at once, makes a running one
// whose lease is held stopping (its holder loses the lease and ends it
// with Stopped), cancels at once one whose lease ran out (no worker holds
// it), and hands a stopping one whose holder died, still stopping, to the
// next claim.
func TestStopJobs(t *testing.T) { eachEngineSerial(t, testStopJobs) }

func testStopJobs(t *testing.T, e engine) {
	ctx := t.Context()
	st, _ := e.open(t)
	clock := newFakeClock(st)
	u := mkUser(t, st, "u")
	state := func(id int64) storage.JobState {
		t.Helper()
		j, err := st.GetJob(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return j.State
	}
	enqueue := func(prod string) int64 {
		j := storage.Job{Owner: u.ID, Production: prod, Type: "x"}
		if err := st.Enqueue(ctx, &j); err != nil {
			t.Fatal(err)
		}
		return j.ID
	}

	queued := enqueue("queued")
	if n, err := st.StopJobs(ctx, u.ID, "queued"); err != nil || n != 0 || state(queued) != storage.JobCanceled {
		t.Fatalf("queued: StopJobs = %d, %v; state %s", n, err, state(queued))
	}

	held := enqueue("held")
	c, _ := st.Claim(ctx, "w1", time.Minute)
	if n, err := st.StopJobs(ctx, u.ID, "held"); err != nil || n != 1 || state(held) != storage.JobStopping {
		t.Fatalf("held: StopJobs = %d, %v; state %s", n, err, state(held))
	}
	// Asked again while it is held: still the holder's to end.
	if n, _ := st.StopJobs(ctx, u.ID, "held"); n != 1 {
		t.Fatalf("held, stopped again: %d stopping", n)
	}
	wantErr(t, st.Heartbeat(ctx, c.Lease(), time.Minute), storage.ErrLeaseLost)
	if err := st.Stopped(ctx, c.Lease()); err != nil || state(held) != storage.JobCanceled {
		t.Fatalf("Stopped: %v, state %s", err, state(held))
	}
	wantErr(t, st.Stopped(ctx, c.Lease()), storage.ErrLeaseLost)

	gone := enqueue("gone")
	st.Claim(ctx, "w2", time.Minute)
	clock.Advance(time.Minute + time.Millisecond) // w2 died
	if n, err := st.StopJobs(ctx, u.ID, "gone"); err != nil || n != 0 || state(gone) != storage.JobCanceled {
		t.Fatalf("lease run out: StopJobs = %d, %v; state %s", n, err, state(gone))
	}

	orphan := enqueue("orphan")
	st.Claim(ctx, "w3", time.Minute)
	if n, _ := st.StopJobs(ctx, u.ID, "orphan"); n != 1 {
		t.Fatalf("orphan: %d stopping", n)
	}
	if holders, _ := st.LeaseHolders(ctx); len(holders) != 1 || holders[0] != "w3" {
		t.Fatalf("lease holders %v, want the stopping job's w3", holders)
	}
	// w3 dies before it notices: the restart's Reclaim expires its lease,
	// and the next claim gets the job, still stopping, to end it.
	if n, err := st.ExpireLeases(ctx, "w3"); err != nil || n != 1 {
		t.Fatalf("ExpireLeases = %d, %v", n, err)
	}
	c, err := st.Claim(ctx, "w4", time.Minute)
	if err != nil || c.ID != orphan || c.State != storage.JobStopping || c.Worker != "w4" || c.Crashes != 0 {
		t.Fatalf("claim of the stopped job: %+v, %v", c, err)
	}
	if err := st.Stopped(ctx, c.Lease()); err != nil || state(orphan) != storage.JobCanceled {
		t.Fatalf("Stopped by the next worker: %v, state %s", err, state(orphan))
	}
	if _, err := st.Claim(ctx, "w4", time.Minute); !errors.Is(err, storage.ErrNoJob) {
		t.Fatalf("a job left to claim: %v", err)
	}
}

func TestDeliveries(t *testing.T) { eachEngineSerial(t, testDeliveries) }

func testDeliveries(t *testing.T, e engine) {
	ctx := t.Context()
	st, _ := e.open(t)
	clock := newFakeClock(st)
	u := mkUser(t, st, "u")
	d := storage.Delivery{Owner: u.ID, Production: "p", URL: "https://hook", Payload: []byte("uuid=p&status=3")}
	if err := st.EnqueueDelivery(ctx, &d); err != nil {
		t.Fatal(err)
	}
	c, err := st.ClaimDelivery(ctx, "s1", 200*time.Millisecond)
	if err != nil || c.ID != d.ID || c.Attempts != 1 || string(c.Payload) != "uuid=p&status=3" || c.Worker != "s1" {
		t.Fatalf("claim: %+v, %v", c, err)
	}
	_, err = st.ClaimDelivery(ctx, "s2", time.Minute)
	wantErr(t, err, storage.ErrNoJob) // in flight
	c.HTTPStatus = 500
	if err := st.DeliveryFailed(ctx, c, "HTTP 500", clock.Now()); err != nil {
		t.Fatal(err)
	}
	if h, err := st.DeliveryHolders(ctx); err != nil || len(h) != 0 {
		t.Errorf("holders of a rescheduled delivery: %q, %v", h, err)
	}
	c2, err := st.ClaimDelivery(ctx, "s2", 100*time.Millisecond)
	if err != nil || c2.Attempts != 2 || c2.LastError != "HTTP 500" || c2.HTTPStatus != 500 {
		t.Fatalf("second claim: %+v, %v", c2, err)
	}
	// The sender dies; the claim runs out and another sender takes it.
	clock.Advance(150 * time.Millisecond)
	c3, err := st.ClaimDelivery(ctx, "s3", time.Minute)
	if err != nil || c3.Attempts != 3 {
		t.Fatalf("reclaim: %+v, %v", c3, err)
	}
	wantErr(t, st.DeliverySucceeded(ctx, c2), storage.ErrLeaseLost)
	c3.HTTPStatus = 204
	if err := st.DeliverySucceeded(ctx, c3); err != nil {
		t.Fatal(err)
	}
	if got, _ := st.GetDelivery(ctx, d.ID); got.State != storage.DeliveryDelivered || got.HTTPStatus != 204 || got.LastError != "HTTP 500" || got.Worker != "" {
		t.Errorf("delivered: %+v", got)
	}
	// A dead sender's claim is made due at once, and its late outcome
	// is refused.
	dead := storage.Delivery{Owner: u.ID, Production: "q", URL: "https://hook"}
	st.EnqueueDelivery(ctx, &dead)
	c4, err := st.ClaimDelivery(ctx, "dead", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if h, err := st.DeliveryHolders(ctx); err != nil || len(h) != 1 || h[0] != "dead" {
		t.Errorf("holders: %q, %v", h, err)
	}
	if n, err := st.ExpireDeliveries(ctx, "dead", "other"); err != nil || n != 1 {
		t.Errorf("ExpireDeliveries = %d, %v; want 1", n, err)
	}
	c5, err := st.ClaimDelivery(ctx, "s4", time.Minute)
	if err != nil || c5.ID != dead.ID || c5.Attempts != 2 {
		t.Fatalf("claim after expiry: %+v, %v", c5, err)
	}
	wantErr(t, st.DeliverySucceeded(ctx, c4), storage.ErrLeaseLost)
	if err := st.DeliverySucceeded(ctx, c5); err != nil {
		t.Fatal(err)
	}
	// Giving up is final.
	gone := storage.Delivery{Owner: u.ID, Production: "p", URL: "https://hook"}
	st.EnqueueDelivery(ctx, &gone)
	c, _ = st.ClaimDelivery(ctx, "s1", time.Minute)
	if err := st.DeliveryFailed(ctx, c, "gone", time.Time{}); err != nil {
		t.Fatal(err)
	}
	if l, _ := st.ListDeliveries(ctx, u.ID, "p"); len(l) != 2 || l[0].State != storage.DeliveryFailed || l[1].State != storage.DeliveryDelivered {
		t.Errorf("ListDeliveries: %+v", l)
	}
	if l, _ := st.ListDeliveries(ctx, "other", "p"); len(l) != 0 {
		t.Errorf("other owner sees %d deliveries", len(l))
	}
}

// The crash test runs a worker in a child process (this test binary again)
// that claims jobs, heartbeats them, and is killed with SIGKILL while it
// holds the leases. Another worker must get every job after the leases run
// out, and every job must complete exactly once.
const crashEnv = "AUDIOPOST_SQLSTORE_CRASH_CHILD"

func TestCrashedWorkerJobsAreReclaimed(t *testing.T) {
	eachEngine(t, testCrashedWorkerJobsAreReclaimed)
}

func testCrashedWorkerJobsAreReclaimed(t *testing.T, e engine) {
	if os.Getenv(crashEnv) != "" {
		t.Skip("running as the crash child")
	}
	ctx := t.Context()
	st, dsn := e.open(t)
	u := mkUser(t, st, "u")
	const m, lease = 12, time.Second
	ids := enqueueN(t, st, u.ID, m)

	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashEnv+"="+dsn)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	// A child that never reports its claims is killed, so that the scan
	// below ends and the test fails saying how many it reported, instead
	// of hanging until go test's timeout (seen once in CI's race run).
	watchdog := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	defer watchdog.Stop()
	// The child claims half the jobs and reports each one.
	childJobs := map[int64]bool{}
	sc := bufio.NewScanner(out)
	for len(childJobs) < m/2 && sc.Scan() {
		var id int64
		if _, err := fmt.Sscanf(sc.Text(), "claimed %d", &id); err == nil {
			childJobs[id] = true
		}
	}
	if len(childJobs) != m/2 {
		t.Fatalf("child claimed %d jobs before exiting (or being killed after 2 minutes): %v", len(childJobs), sc.Err())
	}
	watchdog.Stop()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child did not die of SIGKILL: %v", err)
	}
	// The dead child's leases, frozen now: when its last heartbeat made
	// them run out. (Measuring from the kill would depend on how late a
	// loaded machine ran that heartbeat.)
	leaseUntil := map[int64]time.Time{}
	for id := range childJobs {
		j, err := st.GetJob(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if j.State != storage.JobRunning || time.Until(j.LeaseUntil) > lease {
			t.Fatalf("child's job %d after the kill: %s, lease until %v", id, j.State, j.LeaseUntil)
		}
		leaseUntil[id] = j.LeaseUntil
	}

	// The parent works until every job is done.
	completed := map[int64]int{}
	deadline := time.Now().Add(10 * lease)
	for len(completed) < m {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d jobs completed", len(completed), m)
		}
		j, err := st.Claim(ctx, "survivor", lease)
		if errors.Is(err, storage.ErrNoJob) {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if childJobs[j.ID] {
			// The dead child's leases hold until they run out.
			if early := leaseUntil[j.ID].Sub(time.Now()); early > 50*time.Millisecond {
				t.Errorf("job %d of the killed child reclaimed %v before its lease ran out", j.ID, early)
			}
			if j.Attempts != 2 {
				t.Errorf("reclaimed job %d at attempt %d, want 2", j.ID, j.Attempts)
			}
		}
		if err := st.Complete(ctx, j.Lease()); err != nil {
			t.Fatal(err)
		}
		completed[j.ID]++
	}
	for _, id := range ids {
		j, _ := st.GetJob(ctx, id)
		if completed[id] != 1 || j.State != storage.JobDone {
			t.Errorf("job %d completed %d times, state %s", id, completed[id], j.State)
		}
	}
}

// TestCrashChild is the child half of TestCrashedWorkerJobsAreReclaimed.
func TestCrashChild(t *testing.T) {
	dsn := os.Getenv(crashEnv)
	if dsn == "" {
		t.Skip("only run as the crash child")
	}
	ctx := context.Background()
	st, err := Open(ctx, dsn)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	var leases []storage.Lease
	for range 6 {
		j, err := st.Claim(ctx, "child-"+strconv.Itoa(os.Getpid()), time.Second)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		leases = append(leases, j.Lease())
		fmt.Printf("claimed %d\n", j.ID)
	}
	// Work forever, heartbeating, until the parent kills us.
	for {
		time.Sleep(200 * time.Millisecond)
		for _, l := range leases {
			st.Heartbeat(ctx, l, time.Second)
		}
	}
}
