package livestream_test

import (
	"context"
	"fmt"
	"github.com/audiopost/audiopost/internal/need"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/audiopost/audiopost/dsp/live"
	"github.com/audiopost/audiopost/production/livestream"
)

// eventually polls cond until it holds or the deadline passes: the stream
// runs in goroutines and processes of its own.
func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, within)
		}
		runtime.Gosched()
		time.Sleep(5 * time.Millisecond)
	}
}

// TestFallbackFollowsTheClock: with a source that is never there, the
// destinations get silence at exactly the clock's pace, and the source is
// tried once per SourceRetry of it.
func TestFallbackFollowsTheClock(t *testing.T) {
	need.Program(t, "ffmpeg")
	clock := newSimClock()
	out := filepath.Join(t.TempDir(), "out.wav")
	s, err := livestream.Start(context.Background(), livestream.Spec{
		Source:       filepath.Join(t.TempDir(), "missing.wav"),
		Destinations: []livestream.Destination{{URL: out, Format: "wav"}},
		Config:       live.DefaultConfig(),
	}, livestream.Options{Clock: clock, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	// ffmpeg says why the source is not there (in its own, real, time).
	eventually(t, 10*time.Second, "the source's error", func() bool { return strings.Contains(s.Status().Source.LastError, "missing.wav") })
	const rate = 48000
	for _, sec := range []int{2, 5} {
		clock.Run(time.Duration(sec)*time.Second - clock.Now().Sub(s.Status().Started))
		// Everything the clock allows, less what the graph holds back
		// for its look-ahead (the limiter reads a block ahead).
		lo := int64(sec*rate - 2048)
		eventually(t, 10*time.Second, fmt.Sprintf("%d s of fallback", sec), func() bool { return s.Status().Stats.Frames >= lo })
		st := s.Status()
		if st.Stats.Frames > int64(sec*rate) {
			t.Fatalf("%d frames out after %d s of the clock: ahead of it", st.Stats.Frames, sec)
		}
		if st.Source.Connected || !st.Source.OnFallback {
			t.Errorf("source status %+v", st.Source)
		}
		if st.Uptime != time.Duration(sec)*time.Second {
			t.Errorf("uptime %v after %d s of the clock", st.Uptime, sec)
		}
	}
}

// childProcesses lists this process's children that run ffmpeg.
func childProcesses(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc")
	}
	me := strconv.Itoa(os.Getpid())
	var kids []string
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		comm := s[strings.IndexByte(s, '(')+1 : i]
		if len(f) > 1 && f[1] == me && comm == "ffmpeg" {
			kids = append(kids, e.Name())
		}
	}
	return kids
}
