package icecast_test

import (
	"context"
	"github.com/audiopost/audiopost/internal/need"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

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
