package sqlstore

import (
	"errors"
	"testing"
	"time"

	"github.com/audiopost/audiopost/storage"
)

// signals returns a subscriber that counts into a channel.
func signals(st *Store, topic string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 100)
	return ch, st.Subscribe(topic, func() { ch <- struct{}{} })
}

// waitSignal waits for a signal, failing after a generous deadline.
func waitSignal(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("no signal: %s", what)
	}
}

// noSignal fails if a signal is already there.
func noSignal(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
		t.Fatalf("unexpected signal: %s", what)
	default:
	}
}

func drain(ch <-chan struct{}) {
	for {
		select {
		case <-ch:
		default:
			return
		}
	}
}

func TestSubscribeInProcess(t *testing.T) { eachEngine(t, testSubscribeInProcess) }

// A Store's own commits signal its subscribers after the commit, never
// for a rollback. (On PostgreSQL each comes twice: at once, and through
// the listener.)
func testSubscribeInProcess(t *testing.T, e engine) {
	ctx := t.Context()
	st, _ := e.open(t)
	u := mkUser(t, st, "u")
	listening := make(chan struct{}, 10)
	st.onListen = func() { listening <- struct{}{} }
	jobs, unsub := signals(st, TopicJobs)
	deliveries, _ := signals(st, TopicDeliveries)
	canceled, _ := signals(st, TopicCanceled)
	each := 1
	if st.Engine() == "postgres" {
		each = 2
		// The listener's first connection signals every topic.
		waitSignal(t, listening, "listener connected")
		waitSignal(t, jobs, "listener connected")
		waitSignal(t, deliveries, "listener connected")
		waitSignal(t, canceled, "listener connected")
	}
	waitSignals := func(ch <-chan struct{}, what string) {
		t.Helper()
		for range each {
			waitSignal(t, ch, what)
		}
	}

	if err := st.Enqueue(ctx, &storage.Job{Owner: u.ID, Type: "x", MaxAttempts: 2}); err != nil {
		t.Fatal(err)
	}
	waitSignals(jobs, "enqueue outside a transaction")

	inside := false
	boom := errors.New("roll back")
	err := st.WithTx(ctx, func(tx storage.Tx) error {
		if err := tx.Enqueue(ctx, &storage.Job{Owner: u.ID, Type: "x"}); err != nil {
			return err
		}
		select {
		case <-jobs:
			inside = true
		default:
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if inside {
		t.Error("signal before the commit")
	}
	noSignal(t, jobs, "rolled back enqueue")

	err = st.WithTx(ctx, func(tx storage.Tx) error {
		return tx.EnqueueDelivery(ctx, &storage.Delivery{Owner: u.ID, URL: "https://hook"})
	})
	if err != nil {
		t.Fatal(err)
	}
	waitSignals(deliveries, "committed delivery")

	// A release and a retry make a job ready again; a final failure
	// does not.
	j, err := st.Claim(ctx, "w", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	noSignal(t, jobs, "claim")
	if err := st.Release(ctx, j.Lease()); err != nil {
		t.Fatal(err)
	}
	waitSignals(jobs, "release")
	j, _ = st.Claim(ctx, "w", time.Minute)
	if retry, err := st.Fail(ctx, j.Lease(), "again", 0); err != nil || !retry {
		t.Fatalf("fail: %v, %v", retry, err)
	}
	waitSignals(jobs, "retry")
	j, _ = st.Claim(ctx, "w", time.Minute)
	if retry, err := st.Fail(ctx, j.Lease(), "last", 0); err != nil || retry {
		t.Fatalf("last fail: %v, %v", retry, err)
	}

	// Canceling signals the workers, when there was a job to cancel.
	if n, err := st.CancelJobs(ctx, u.ID, "stopped"); err != nil || n != 0 {
		t.Fatalf("cancel without jobs: %d, %v", n, err)
	}
	noSignal(t, canceled, "nothing canceled")
	if err := st.Enqueue(ctx, &storage.Job{Owner: u.ID, Production: "stopped", Type: "x"}); err != nil {
		t.Fatal(err)
	}
	waitSignals(jobs, "enqueue to cancel")
	if n, err := st.CancelJobs(ctx, u.ID, "stopped"); err != nil || n != 1 {
		t.Fatalf("cancel: %d, %v", n, err)
	}
	waitSignals(canceled, "canceled job")

	unsub()
	st.EnqueueDelivery(ctx, &storage.Delivery{Owner: u.ID, URL: "https://hook"})
	st.Enqueue(ctx, &storage.Job{Owner: u.ID, Type: "x"})
	// Signals come in commit order: once the delivery's are in, a
	// signal of the final failure would be too.
	waitSignals(deliveries, "second delivery")
	noSignal(t, jobs, "final failure, or a job after unsubscribing")
}

// On PostgreSQL a commit in one process wakes the subscribers of every
// other process (LISTEN/NOTIFY), and a listener that lost its connection
// makes a new one and signals that it may have missed something.
func TestSubscribeAcrossProcesses(t *testing.T) {
	ctx := t.Context()
	st, dsn := engines[1].open(t)
	other, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	listening := make(chan struct{}, 10)
	other.onListen = func() { listening <- struct{}{} }
	jobs, _ := signals(other, TopicJobs)
	deliveries, _ := signals(other, TopicDeliveries)
	waitSignal(t, listening, "listener connected")
	drain(jobs)
	drain(deliveries)

	u := mkUser(t, st, "u")
	if err := st.Enqueue(ctx, &storage.Job{Owner: u.ID, Type: "x"}); err != nil {
		t.Fatal(err)
	}
	waitSignal(t, jobs, "job enqueued by the other store")
	if err := st.EnqueueDelivery(ctx, &storage.Delivery{Owner: u.ID, URL: "https://hook"}); err != nil {
		t.Fatal(err)
	}
	waitSignal(t, deliveries, "delivery enqueued by the other store")

	// A rolled back enqueue notifies nobody: after it, a committed one
	// is the only signal.
	drain(jobs)
	st.WithTx(ctx, func(tx storage.Tx) error {
		tx.Enqueue(ctx, &storage.Job{Owner: u.ID, Type: "x"})
		return errors.New("roll back")
	})
	st.EnqueueDelivery(ctx, &storage.Delivery{Owner: u.ID, URL: "https://hook"})
	waitSignal(t, deliveries, "second delivery")
	noSignal(t, jobs, "rolled back enqueue")

	// The server ends the listener's session: it reconnects, and signals.
	drain(jobs)
	if _, err := st.wdb.ExecContext(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE query LIKE 'LISTEN%' AND pid <> pg_backend_pid()`); err != nil {
		t.Fatal(err)
	}
	waitSignal(t, listening, "listener reconnected")
	waitSignal(t, jobs, "signal after reconnecting")
	drain(jobs)
	st.Enqueue(ctx, &storage.Job{Owner: u.ID, Type: "x"})
	waitSignal(t, jobs, "job enqueued after the reconnect")
}
