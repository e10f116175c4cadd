package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/audiopost/audiopost/audio/procpool"
	"github.com/audiopost/audiopost/internal/need"
)

// failSafe only keeps a broken awaitShutdown from hanging the test
// binary: every wait below ends on an event of the test itself (work
// done, the timer fired by the test, a program killed) long before it.
const failSafe = 2 * time.Minute

// TestShutdownAbandonsWorkAtTheDeadline: serve's shutdown waits for its
// work (the HTTP drain, the worker's stop) only until the deadline's
// timer fires. Here one piece of work ends at once and the other waits
// on an external program that never ends (ffmpeg reading silence in real
// time). awaitShutdown must not return before the timer fires, must
// return when the test fires it although that work still runs, saying
// so, and then kill the program (which ends the stuck work) and remove
// the work folder. Without the deadline's branch it waits forever; the
// timer is the test's, so no wall clock is measured.
func TestShutdownAbandonsWorkAtTheDeadline(t *testing.T) {
	ffmpeg := need.Program(t, "ffmpeg")
	var logs syncBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	pool := procpool.New(procpool.Config{Size: 2, Logger: log})
	workDir := filepath.Join(t.TempDir(), "work")
	if err := os.MkdirAll(workDir, 0o750); err != nil {
		t.Fatal(err)
	}

	quickDone := make(chan struct{})
	started, stuckErr := make(chan struct{}), make(chan error, 1)
	quick := func() { close(quickDone) }
	stuck := func() {
		cmd := procpool.Command(procpool.With(t.Context(), pool), ffmpeg, "-nostdin", "-v", "error", "-re",
			"-f", "lavfi", "-i", "anullsrc=r=8000:cl=mono", "-f", "null", "-")
		if err := cmd.Start(); err != nil {
			close(started)
			stuckErr <- err
			return
		}
		close(started)
		stuckErr <- cmd.Wait()
	}
	// Buffered: a broken awaitShutdown that never reads it must not
	// block the test.
	expired := make(chan time.Time, 1)
	returned := make(chan bool, 1)
	go func() { returned <- awaitShutdown(log, expired, pool, workDir, quick, stuck) }()

	wait := func(what string, ch <-chan struct{}) {
		t.Helper()
		select {
		case <-ch:
		case <-time.After(failSafe):
			t.Fatalf("%s: nothing after %v", what, failSafe)
		}
	}
	wait("the quick work", quickDone)
	wait("the program's start", started)
	select {
	case <-returned:
		t.Fatal("awaitShutdown returned before its deadline with work still running")
	case err := <-stuckErr:
		t.Fatalf("the program ended before the deadline: %v", err)
	default:
	}

	expired <- time.Now()
	select {
	case abandoned := <-returned:
		if !abandoned {
			t.Error("awaitShutdown says it abandoned nothing")
		}
	case <-time.After(failSafe):
		t.Fatal("awaitShutdown waits for the stuck work past its deadline")
	}
	select {
	case err := <-stuckErr:
		if err == nil {
			t.Error("the program ended by itself, want it killed")
		}
	case <-time.After(failSafe):
		t.Fatal("the stuck work's program was not killed")
	}
	if _, err := os.Stat(workDir); !os.IsNotExist(err) {
		t.Errorf("the work folder is still there: %v", err)
	}
	for _, want := range []string{"work still running is abandoned", "external programs killed"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log does not say %q:\n%s", want, logs.String())
		}
	}
}

// TestShutdownWaitsForWork: work that ends before the deadline is not
// abandoned and nothing is said of it; the timer never fires.
func TestShutdownWaitsForWork(t *testing.T) {
	var logs syncBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	pool := procpool.New(procpool.Config{Size: 1, Logger: log})
	release := make(chan struct{})
	done := false
	work := func() {
		<-release
		done = true
	}
	returned := make(chan bool, 1)
	go func() { returned <- awaitShutdown(log, nil, pool, "", work) }()
	select {
	case <-returned:
		t.Fatal("awaitShutdown returned before its work ended")
	default:
	}
	close(release)
	select {
	case abandoned := <-returned:
		if abandoned || !done {
			t.Errorf("abandoned %v, work done %v", abandoned, done)
		}
	case <-time.After(failSafe):
		t.Fatal("awaitShutdown did not return when its work ended")
	}
	if strings.Contains(logs.String(), "abandoned") {
		t.Errorf("the log speaks of abandoned work:\n%s", logs.String())
	}
}
