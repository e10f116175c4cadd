package livestream_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/audiopost/audiopost/internal/icecast"
	"github.com/audiopost/audiopost/internal/testdb"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/app"
	"github.com/audiopost/audiopost/production/livestream"
	"github.com/audiopost/audiopost/storage"
	"github.com/audiopost/audiopost/storage/sqlstore"
)

func openStore(t *testing.T) (*sqlstore.Store, storage.User, storage.User) {
	t.Helper()
	st := testdb.SQLite(t, filepath.Join(t.TempDir(), "store.db"))
	var users []storage.User
	for _, n := range []string{"ann", "bob"} {
		u := storage.User{Username: n, Email: n + "@example.org", PasswordHash: "x"}
		if err := st.CreateUser(t.Context(), &u); err != nil {
			t.Fatal(err)
		}
		users = append(users, u)
	}
	return st, users[0], users[1]
}

// newApp returns the application layer over st, the way the API calls
// it: the live stream operations are its methods.
func newApp(t *testing.T, st storage.Store) *app.App {
	t.Helper()
	a, err := app.New(app.Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func input(t *testing.T, js string) livestream.Input {
	t.Helper()
	var in livestream.Input
	if err := json.Unmarshal([]byte(js), &in); err != nil {
		t.Fatal(err)
	}
	return in
}

func TestServiceLifecycle(t *testing.T) {
	st, ann, bob := openStore(t)
	svc := newApp(t, st)
	ctx := t.Context()
	_, err := svc.CreateLiveStream(ctx, ann, input(t, `{"source": "file:///etc/passwd", "destinations": [{"url": "/tmp/x.mp3", "format": "wma"}],
		"algorithms": {"cutter": true}}`))
	var fe production.FieldErrors
	if !errors.As(err, &fe) {
		t.Fatalf("bad input: %v", err)
	}
	for _, k := range []string{"source", "destinations.0.url", "destinations.0.format", "algorithms.cutter"} {
		if fe[k] == "" {
			t.Errorf("no message for %s: %v", k, fe)
		}
	}
	ls, err := svc.CreateLiveStream(ctx, ann, input(t, `{"name": "show", "source": "http://127.0.0.1:8000/in.mp3",
		"destinations": [{"url": "icecast://source:pw@127.0.0.1:8000/out.mp3", "format": "mp3", "bitrate": 128}],
		"algorithms": {"loudnesstarget": -18, "musicgain": 2}}`))
	if err != nil {
		t.Fatal(err)
	}
	if ls.State != livestream.Stopped || len(ls.Warnings) != 1 {
		t.Errorf("created: %+v", ls)
	}
	if _, err := svc.GetLiveStream(ctx, bob, ls.UUID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("another user's stream: %v", err)
	}
	if _, err := svc.StartLiveStream(ctx, bob, ls.UUID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("another user started it: %v", err)
	}
	got, err := svc.StartLiveStream(ctx, ann, ls.UUID)
	if err != nil || got.State != livestream.Starting {
		t.Fatalf("start: %+v %v", got, err)
	}
	if _, err := svc.StartLiveStream(ctx, ann, ls.UUID); !errors.Is(err, livestream.ErrState) {
		t.Errorf("started twice: %v", err)
	}
	jobs, _ := st.ListJobs(ctx, ann.ID, ls.UUID)
	if len(jobs) != 1 || jobs[0].Type != storage.JobLive || jobs[0].State != storage.JobQueued {
		t.Fatalf("jobs after start: %+v", jobs)
	}
	if got, err := svc.StopLiveStream(ctx, ann, ls.UUID); err != nil || got.State != livestream.Stopped {
		t.Fatalf("stop: %+v %v", got, err)
	}
	jobs, _ = st.ListJobs(ctx, ann.ID, ls.UUID)
	if len(jobs) != 1 || jobs[0].State != storage.JobCanceled {
		t.Fatalf("jobs after stop: %+v", jobs)
	}
	list, err := svc.ListLiveStreams(ctx, ann, 10, 0)
	if err != nil || len(list) != 1 {
		t.Fatalf("list: %v %v", list, err)
	}
	if l, _ := svc.ListLiveStreams(ctx, bob, 10, 0); len(l) != 0 {
		t.Errorf("bob lists %d streams", len(l))
	}
	if err := svc.DeleteLiveStream(ctx, ann, ls.UUID); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.GetLiveStream(ctx, ann, ls.UUID); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("after delete: %v", err)
	}
}

// TestWorkerDeathHandover: a stream started through the service runs on
// one worker; when that worker dies (its leases left to run out), another
// takes the stream over and its figures come from there; a stop then ends
// it on that worker.
func TestWorkerDeathHandover(t *testing.T) {
	if testing.Short() {
		t.Skip("real servers, real time: about 15 s")
	}
	srv := icecast.Start(t)
	prog := tone(t, 60)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	srv.Push(t, "/in.mp3", prog, 128, true)
	srv.WaitMount(ctx, "/in.mp3")
	st, ann, _ := openStore(t)
	svc := newApp(t, st)
	ls, err := svc.CreateLiveStream(ctx, ann, livestream.Input{Source: srv.HTTP("/in.mp3"),
		Destinations: []livestream.Destination{{URL: srv.Source("/out.mp3"), Format: "mp3"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.StartLiveStream(ctx, ann, ls.UUID); err != nil {
		t.Fatal(err)
	}
	procs := ourProcesses(t)
	worker := func(id string) (*livestream.Worker, context.CancelCauseFunc, chan struct{}) {
		w := &livestream.Worker{Store: st, ID: id, Lease: 2 * time.Second, Poll: 100 * time.Millisecond, Logger: quiet}
		wctx, stop := context.WithCancelCause(ctx)
		done := make(chan struct{})
		go func() { w.Run(wctx); close(done) }()
		return w, stop, done
	}
	figures := func() *livestream.Figures {
		r, err := svc.LiveStreamReport(ctx, ann, ls.UUID)
		if err != nil {
			t.Fatal(err)
		}
		return r.Figures
	}
	_, killA, doneA := worker("a")
	eventually(t, 15*time.Second, "stream running on a", func() bool {
		f := figures()
		return f != nil && f.Worker == "a" && f.Source.Connected && f.Destinations[0].Connected
	})
	if r, _ := svc.LiveStreamReport(ctx, ann, ls.UUID); r.State != livestream.Running {
		t.Errorf("state %v while running", r.State)
	}
	killA(livestream.ErrDied)
	<-doneA
	_, stopB, doneB := worker("b")
	defer func() { stopB(nil); <-doneB }()
	died := time.Now()
	eventually(t, 20*time.Second, "stream taken over by b", func() bool {
		f := figures()
		return f.Worker == "b" && f.Source.Connected && f.Destinations[0].Connected
	})
	t.Logf("worker b took the stream over %.1f s after a died (lease 2 s)", time.Since(died).Seconds())
	srv.WaitMount(ctx, "/out.mp3")
	if _, err := svc.StopLiveStream(ctx, ann, ls.UUID); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "processes gone after stop", func() bool { return ourProcesses(t) == procs })
}
