package sqlstore

import (
	"maps"
	"testing"
	"time"

	"github.com/audiopost/audiopost/storage"
)

func TestCountJobs(t *testing.T) {
	oneGoroutine(t)
	ctx := t.Context()
	st, _ := openTest(t)
	got, err := st.CountJobs(ctx)
	if err != nil || len(got) != 0 {
		t.Fatalf("empty store: %v, %v", got, err)
	}
	u := mkUser(t, st, "u")
	enqueue := func(production string, maxAttempts int) {
		t.Helper()
		if err := st.Enqueue(ctx, &storage.Job{Owner: u.ID, Production: production, Type: "process", MaxAttempts: maxAttempts}); err != nil {
			t.Fatal(err)
		}
	}
	claim := func(want string) storage.Job {
		t.Helper()
		j, err := st.Claim(ctx, "w", time.Minute)
		if err != nil || j.Production != want {
			t.Fatalf("claimed %q, %v; want %q", j.Production, err, want)
		}
		return j
	}
	// One job done, one running, one failed for good, one canceled, one
	// queued.
	enqueue("done", 0)
	enqueue("running", 0)
	enqueue("failed", 1)
	if err := st.Complete(ctx, claim("done").Lease()); err != nil {
		t.Fatal(err)
	}
	claim("running")
	if retry, err := st.Fail(ctx, claim("failed").Lease(), "broken", 0); retry || err != nil {
		t.Fatalf("Fail = %v, %v", retry, err)
	}
	enqueue("canceled", 0)
	enqueue("queued", 0)
	if n, err := st.CancelJobs(ctx, u.ID, "canceled"); n != 1 || err != nil {
		t.Fatalf("CancelJobs = %d, %v", n, err)
	}
	got, err = st.CountJobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[storage.JobState]int64{storage.JobDone: 1, storage.JobRunning: 1, storage.JobFailed: 1,
		storage.JobCanceled: 1, storage.JobQueued: 1}
	if !maps.Equal(got, want) {
		t.Errorf("CountJobs = %v, want %v", got, want)
	}
	st.Close()
	if _, err := st.CountJobs(ctx); err == nil {
		t.Error("CountJobs on a closed store succeeded")
	}
}
