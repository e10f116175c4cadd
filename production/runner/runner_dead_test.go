package runner_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/runner"
	"github.com/audiopost/audiopost/storage"
)

// claimDead claims the next job as worker and sets its production to
// status, as a worker does before it dies mid-job; ExpireLeases then
// stands for the lease running out (or for Reclaim finding the worker
// dead).
func (e *runnerEnv) claimDead(worker, uuid string, status production.Status) storage.Job {
	e.t.Helper()
	ctx := context.Background()
	j, err := e.store.Claim(ctx, worker, time.Minute)
	if err != nil || j.Production != uuid {
		e.t.Fatalf("claim: %+v, %v", j, err)
	}
	if err := e.store.SetStatus(ctx, e.user.ID, storage.KindProduction, uuid, int(status)); err != nil {
		e.t.Fatal(err)
	}
	return j
}

func (e *runnerEnv) expire(worker string) {
	e.t.Helper()
	if n, err := e.store.ExpireLeases(context.Background(), worker); err != nil || n != 1 {
		e.t.Fatalf("ExpireLeases(%s) = %d, %v", worker, n, err)
	}
}

// TestRunnerGivesUpAfterTwoCrashes: a job whose worker died mid-job once
// is processed again; one that took two workers down ends, at the third
// claim, in Error with a message that says why, exactly once (one
// webhook), instead of being processed (and taking workers down) again.
func TestRunnerGivesUpAfterTwoCrashes(t *testing.T) {
	const rate = 44100
	input := testaudio.EncodeWAV(t, testaudio.SpeechLike(rate, 1, 0.05), rate, 16)
	for _, crashes := range []int{1, 2} {
		e := newRunnerEnv(t, time.Hour)
		uuid, job := e.addProduction(wavRequest, input)
		for i := range crashes {
			worker := "dead" + string(rune('1'+i))
			e.claimDead(worker, uuid, production.StatusAudioEncoding)
			e.expire(worker)
		}
		r := e.runner(runner.Config{})
		if ran, err := r.RunOnce(context.Background(), "w"); !ran || err != nil {
			t.Fatalf("%d crashes: RunOnce = %v, %v", crashes, ran, err)
		}
		p := e.production(uuid)
		j, _ := e.store.GetJob(context.Background(), job.ID)
		t.Logf("after %d crashes: %v, %q; job %s, %d crashes", crashes, p.Status, p.ErrorMessage, j.State, j.Crashes)
		if j.Crashes != crashes || j.State != storage.JobDone || e.deliveries(uuid) != 1 {
			t.Errorf("%d crashes: job %s with %d crashes, %d webhooks; want done, %d, 1", crashes, j.State, j.Crashes, e.deliveries(uuid), crashes)
		}
		switch crashes {
		case 1:
			if p.Status != production.StatusDone {
				t.Errorf("after one crash: %v (%s), want Done", p.Status, p.ErrorMessage)
			}
		case 2:
			if p.Status != production.StatusError || p.ErrorKind != production.ErrorProcessing ||
				!strings.Contains(p.ErrorMessage, "stopped twice") || p.ErrorStatus == nil || *p.ErrorStatus != production.StatusAudioEncoding {
				t.Errorf("after two crashes: %v at %v, kind %q, %q", p.Status, p.ErrorStatus, p.ErrorKind, p.ErrorMessage)
			}
			if list, _ := e.blobs.List(context.Background(), runner.OutputPrefix(uuid)); len(list) != 0 {
				t.Errorf("processed after two crashes: %v", list)
			}
		}
	}
}

// TestRunnerStopWhileNoWorker: a production is stopped while no worker
// runs. When the job's lease had run out (its worker died), the stop
// lands at once; when it had not, the production is Stopping until a
// worker takes the job over (here the dead worker's next instance, under
// the same fixed id) and ends it. Neither is processed, and no webhook
// is sent.
func TestRunnerStopWhileNoWorker(t *testing.T) {
	const rate = 44100
	input := testaudio.EncodeWAV(t, testaudio.SpeechLike(rate, 1, 0.05), rate, 16)

	t.Run("lease run out", func(t *testing.T) {
		e := newRunnerEnv(t, time.Hour)
		uuid, job := e.addProduction(wavRequest, input)
		e.claimDead("dead", uuid, production.StatusAudioProcessing)
		e.expire("dead")
		if _, err := e.app().StopProduction(context.Background(), e.user, uuid); err != nil {
			t.Fatal(err)
		}
		if p := e.production(uuid); p.Status != production.StatusNotStarted {
			t.Errorf("status %v after the stop, want Not Started at once", p.Status)
		}
		if j, _ := e.store.GetJob(context.Background(), job.ID); j.State != storage.JobCanceled {
			t.Errorf("job %s", j.State)
		}
		if ran, _ := e.runner(runner.Config{}).RunOnce(context.Background(), "w"); ran {
			t.Error("a worker found the stopped job")
		}
	})

	t.Run("lease held", func(t *testing.T) {
		e := newRunnerEnv(t, time.Hour)
		uuid, job := e.addProduction(wavRequest, input)
		e.claimDead("host-1", uuid, production.StatusAudioProcessing)
		if _, err := e.app().StopProduction(context.Background(), e.user, uuid); err != nil {
			t.Fatal(err)
		}
		if p := e.production(uuid); p.Status != production.StatusStopping {
			t.Fatalf("status %v, want Stopping while the lease is held", p.Status)
		}
		// Stopping it again changes nothing while the lease is held.
		if _, err := e.app().StopProduction(context.Background(), e.user, uuid); err != nil {
			t.Fatal(err)
		}
		r := e.runner(runner.Config{WorkerID: "host-1"})
		if n, err := r.Reclaim(context.Background()); err != nil || n != 1 {
			t.Fatalf("Reclaim = %d, %v", n, err)
		}
		if ran, err := r.RunOnce(context.Background(), "host-1"); !ran || err != nil {
			t.Fatalf("RunOnce = %v, %v", ran, err)
		}
		p := e.production(uuid)
		j, _ := e.store.GetJob(context.Background(), job.ID)
		if p.Status != production.StatusNotStarted || j.State != storage.JobCanceled || e.deliveries(uuid) != 0 {
			t.Errorf("after the restart: %v, job %s, %d webhooks; want Not Started, canceled, none", p.Status, j.State, e.deliveries(uuid))
		}
		if list, _ := e.blobs.List(context.Background(), runner.OutputPrefix(uuid)); len(list) != 0 {
			t.Errorf("the stopped production was processed: %v", list)
		}
		// It can be started again.
		if _, err := e.app().StartProduction(context.Background(), e.user, uuid); err != nil {
			t.Fatal(err)
		}
	})
}
