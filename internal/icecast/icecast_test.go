package icecast_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/audiopost/audiopost/internal/need"

	"github.com/audiopost/audiopost/internal/icecast"
)

// TestPushAndRestart pushes a tone into a mount, finds it served, and
// finds the mount gone after a restart of the server until it is pushed
// again.
func TestPushAndRestart(t *testing.T) {
	s := icecast.Start(t)
	ff := need.Program(t, "ffmpeg")
	tone := filepath.Join(t.TempDir(), "tone.wav")
	if out, err := exec.Command(ff, "-v", "error", "-f", "lavfi", "-i", "sine=f=440:d=2", tone).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	// A bound for a hang only (the test measures no latency): 20 s ran
	// out in `go test -short ./...` on a fresh clone at a load of 6-23,
	// the two pushes, the restart and the mount polls sharing two cores.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p := s.Push(t, "/tone.mp3", tone, 128, true)
	s.WaitMount(ctx, "/tone.mp3")
	s.Restart()
	<-p.Done() // the server went away under the pusher
	s.Push(t, "/tone.mp3", tone, 128, true)
	s.WaitMount(ctx, "/tone.mp3")
}

// fatalRecorder is a test whose Fatalf hands its message over and ends
// the calling goroutine, as testing's does, so that a test can check how
// a helper fails.
type fatalRecorder struct {
	testing.TB
	msg chan string
}

func (f fatalRecorder) Helper() {}

func (f fatalRecorder) Fatalf(format string, args ...any) {
	f.msg <- fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// TestWaitMountReportsEndedSource: a source that cannot start (its file
// does not exist) fails WaitMount at once with ffmpeg's own words, not
// when the test's context runs out minutes later.
func TestWaitMountReportsEndedSource(t *testing.T) {
	rec := fatalRecorder{TB: t, msg: make(chan string, 1)}
	s := icecast.Start(rec)
	s.Push(t, "/gone.mp3", filepath.Join(t.TempDir(), "missing.wav"), 128, false)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	go s.WaitMount(ctx, "/gone.mp3")
	msg := <-rec.msg
	if !strings.Contains(msg, "its source ended") || !strings.Contains(msg, "missing.wav") {
		t.Fatalf("WaitMount failed with %q, want the source's end and ffmpeg's message naming the file", msg)
	}
}
