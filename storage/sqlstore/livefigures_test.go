package sqlstore

import (
	"errors"
	"testing"
	"time"

	"github.com/audiopost/audiopost/storage"
)

// TestLiveJobsClaimedByTypeOnly: a live stream's job is never taken by
// Claim (it would hold a production worker until the stream is stopped),
// only by ClaimType, and a process job never by ClaimType("live").
func TestLiveJobsClaimedByTypeOnly(t *testing.T) { eachEngineSerial(t, testLiveJobsClaimedByTypeOnly) }

func testLiveJobsClaimedByTypeOnly(t *testing.T, e engine) {
	ctx := t.Context()
	st, _ := e.open(t)
	u := mkUser(t, st, "u")
	live := storage.Job{Owner: u.ID, Production: "stream", Type: storage.JobLive}
	if err := st.Enqueue(ctx, &live); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Claim(ctx, "w", time.Minute); !errors.Is(err, storage.ErrNoJob) {
		t.Fatalf("Claim took the live job: %v", err)
	}
	proc := storage.Job{Owner: u.ID, Production: "p", Type: "process"}
	if err := st.Enqueue(ctx, &proc); err != nil {
		t.Fatal(err)
	}
	j, err := st.ClaimType(ctx, "lw", storage.JobLive, time.Minute)
	if err != nil || j.ID != live.ID {
		t.Fatalf("ClaimType(live): %+v %v", j, err)
	}
	if _, err := st.ClaimType(ctx, "lw", storage.JobLive, time.Minute); !errors.Is(err, storage.ErrNoJob) {
		t.Fatalf("second ClaimType(live): %v", err)
	}
	if j, err := st.Claim(ctx, "w", time.Minute); err != nil || j.ID != proc.ID {
		t.Fatalf("Claim: %+v %v", j, err)
	}
	// A live job whose worker died is claimed again by another.
	if n, err := st.ExpireLeases(ctx, "lw"); err != nil || n != 1 {
		t.Fatalf("expire: %d %v", n, err)
	}
	if j, err := st.ClaimType(ctx, "lw2", storage.JobLive, time.Minute); err != nil || j.ID != live.ID || j.Attempts != 2 {
		t.Fatalf("reclaim: %+v %v", j, err)
	}
}

func TestLiveFigures(t *testing.T) { eachEngineSerial(t, testLiveFigures) }

func testLiveFigures(t *testing.T, e engine) {
	ctx := t.Context()
	st, _ := e.open(t)
	u, v := mkUser(t, st, "u"), mkUser(t, st, "v")
	if _, _, err := st.GetLiveFigures(ctx, u.ID, "s"); !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("no figures: %v", err)
	}
	for _, doc := range []string{`{"a":1}`, `{"a":2}`} {
		if err := st.PutLiveFigures(ctx, u.ID, "s", []byte(doc)); err != nil {
			t.Fatal(err)
		}
		got, at, err := st.GetLiveFigures(ctx, u.ID, "s")
		if err != nil || string(got) != doc || at.IsZero() {
			t.Fatalf("got %s %v %v, want %s", got, at, err, doc)
		}
	}
	// Another user neither sees nor overwrites them.
	if _, _, err := st.GetLiveFigures(ctx, v.ID, "s"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("another user's figures: %v", err)
	}
	if err := st.PutLiveFigures(ctx, v.ID, "s", []byte(`{"a":3}`)); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := st.GetLiveFigures(ctx, u.ID, "s"); string(got) != `{"a":2}` {
		t.Errorf("another user overwrote the figures: %s", got)
	}
	if err := st.DeleteLiveFigures(ctx, u.ID, "s"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.GetLiveFigures(ctx, u.ID, "s"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("after delete: %v", err)
	}
}
