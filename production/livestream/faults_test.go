package livestream_test

import (
	"context"
	"fmt"
	"github.com/audiopost/audiopost/internal/need"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/ffmpeg"
	"github.com/audiopost/audiopost/dsp/live"
	"github.com/audiopost/audiopost/internal/icecast"
	"github.com/audiopost/audiopost/production/livestream"
)

// tone writes seconds of a 440 Hz tone at -20 dBFS to a WAV file.
func tone(t *testing.T, seconds int) string {
	t.Helper()
	ff := need.Program(t, "ffmpeg")
	p := filepath.Join(t.TempDir(), "tone.wav")
	out, err := exec.Command(ff, "-v", "error", "-f", "lavfi", "-i", fmt.Sprintf("sine=f=440:d=%d:sample_rate=48000", seconds),
		"-af", "volume=0.1", "-ac", "2", p).CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return p
}

// listener reads a mount as a listener does and counts the frames it
// receives and their energy.
type listener struct {
	frames atomic.Int64
	loud   atomic.Int64 // frames above -40 dBFS
	done   chan struct{}
}

func listen(ctx context.Context, t *testing.T, url string) *listener {
	t.Helper()
	l := &listener{done: make(chan struct{})}
	go func() {
		defer close(l.done)
		for ctx.Err() == nil {
			d, err := ffmpeg.OpenLive(ctx, url, ffmpeg.LiveInput{Format: audio.Format{SampleRate: 48000, Channels: 2}})
			if err == nil {
				buf := audio.NewBuffer(2, 4800)
				for {
					n, err := d.Read(buf)
					for i := 0; i < n; i++ {
						if buf[0][i] > 0.01 || buf[0][i] < -0.01 {
							l.loud.Add(1)
						}
					}
					l.frames.Add(int64(n))
					if err != nil {
						break
					}
				}
				d.Close()
			}
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	return l
}

// ourProcesses counts the ffmpeg children of this process that move raw
// PCM (the stream's and the listeners', not the pushers').
func ourProcesses(t *testing.T) int {
	n := 0
	for _, pid := range childProcesses(t) {
		b, _ := os.ReadFile(filepath.Join("/proc", pid, "cmdline"))
		if strings.Contains(string(b), "f64le") {
			n++
		}
	}
	return n
}

// TestSourceDropAndReturn kills the programme pushed into the source mount
// and starts it again: meanwhile the destination mount goes on (silence),
// and processing resumes within 3 s of the source's return.
func TestSourceDropAndReturn(t *testing.T) {
	if testing.Short() {
		t.Skip("real servers, real time: about 15 s")
	}
	srv := icecast.Start(t)
	prog := tone(t, 60)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p := srv.Push(t, "/in.mp3", prog, 128, true)
	srv.WaitMount(ctx, "/in.mp3")
	s, err := livestream.Start(ctx, livestream.Spec{Source: srv.HTTP("/in.mp3"),
		Destinations: []livestream.Destination{{URL: srv.Source("/out.mp3"), Format: "mp3"}}, Config: live.DefaultConfig()}, livestream.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	eventually(t, 10*time.Second, "source up", func() bool { return s.Status().Source.Connected })
	srv.WaitMount(ctx, "/out.mp3")
	lctx, lcancel := context.WithCancel(ctx)
	defer lcancel()
	l := listen(lctx, t, srv.HTTP("/out.mp3"))
	eventually(t, 10*time.Second, "the tone at the listener", func() bool { return l.loud.Load() > 48000 })

	p.Kill()
	eventually(t, 5*time.Second, "source down", func() bool { return s.Status().Source.OnFallback })
	// The destination keeps running: two more seconds reach the listener,
	// silent ones.
	f0, loud0 := l.frames.Load(), l.loud.Load()
	eventually(t, 10*time.Second, "audio while the source is down", func() bool { return l.frames.Load() > f0+2*48000 })
	if st := s.Status(); !st.Destinations[0].Connected || st.Source.Drops != 1 {
		t.Errorf("while down: %+v", st)
	}
	back := time.Now()
	srv.Push(t, "/in.mp3", prog, 128, true)
	srv.WaitMount(ctx, "/in.mp3")
	// What starting an ffmpeg that streams to the server took here: the
	// stream's reconnection is a try every second (Options.SourceRetry)
	// and such a start, reading instead of sending, so its bound follows
	// the machine's load (a fixed 3 s failed at a load of 20: 4.2 s).
	pushed := time.Since(back)
	eventually(t, 10*time.Second+3*pushed, "source back", func() bool { return s.Status().Source.Connected })
	resumed := s.Status().Source.Since.Sub(back)
	bound := 2*time.Second + 3*pushed
	t.Logf("processing resumed %.2f s after the source returned (its pusher streamed after %.2f s); %d loud frames reached the listener while it was down",
		resumed.Seconds(), pushed.Seconds(), l.loud.Load()-loud0)
	if resumed > bound {
		t.Errorf("processing resumed %v after the source returned, want within %v", resumed, bound.Round(time.Millisecond))
	}
	loud1 := l.loud.Load()
	eventually(t, 10*time.Second, "the tone at the listener again", func() bool { return l.loud.Load() > loud1+48000 })
}

// TestDestinationRestartAndNoLeaks restarts the destination's server three
// times and drops the source twice: the output reconnects each time with
// backoff, and afterwards the stream runs exactly its two ffmpeg
// processes, its heap has not grown, and once stopped no process or
// goroutine of it is left.
func TestDestinationRestartAndNoLeaks(t *testing.T) {
	if testing.Short() {
		t.Skip("real servers, real time: about 20 s")
	}
	srcSrv, dstSrv := icecast.Start(t), icecast.Start(t)
	prog := tone(t, 60)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	p := srcSrv.Push(t, "/in.mp3", prog, 128, true)
	srcSrv.WaitMount(ctx, "/in.mp3")
	goroutines := runtime.NumGoroutine()
	procs := ourProcesses(t)
	s, err := livestream.Start(ctx, livestream.Spec{Source: srcSrv.HTTP("/in.mp3"),
		Destinations: []livestream.Destination{{URL: dstSrv.Source("/out.mp3"), Format: "mp3"}, {URL: dstSrv.Source("/out.ogg"), Format: "opus", Bitrate: 64}},
		Config:       live.DefaultConfig()},
		livestream.Options{MinBackoff: 200 * time.Millisecond, MaxBackoff: 2 * time.Second, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	up := func(st livestream.Status) bool {
		return st.Source.Connected && st.Destinations[0].Connected && st.Destinations[1].Connected
	}
	eventually(t, 10*time.Second, "stream up", func() bool { return up(s.Status()) })
	dstSrv.WaitMount(ctx, "/out.mp3")
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	h0 := heap()
	for k := 1; k <= 3; k++ {
		dstSrv.Restart()
		eventually(t, 15*time.Second, "destinations reconnected", func() bool {
			st := s.Status()
			return up(st) && st.Destinations[0].Reconnects >= k && st.Destinations[1].Reconnects >= k
		})
		dstSrv.WaitMount(ctx, "/out.mp3")
		dstSrv.WaitMount(ctx, "/out.ogg")
	}
	for k := 1; k <= 2; k++ {
		p.Kill()
		eventually(t, 5*time.Second, "source down", func() bool { return s.Status().Source.Drops >= k })
		p = srcSrv.Push(t, "/in.mp3", prog, 128, true)
		eventually(t, 10*time.Second, "source back", func() bool { return up(s.Status()) })
	}
	st := s.Status()
	t.Logf("after 3 destination restarts and 2 source drops: %d ffmpeg processes, reconnects %d/%d, heap %.1f -> %.1f MB",
		st.Processes, st.Destinations[0].Reconnects, st.Destinations[1].Reconnects, float64(h0)/1e6, float64(heap())/1e6)
	if st.Processes != 3 || ourProcesses(t)-procs != 3 {
		t.Errorf("%d processes by the status, %d children, want 3 (source and two destinations)", st.Processes, ourProcesses(t)-procs)
	}
	if h := heap(); h > h0+4<<20 {
		t.Errorf("heap grew from %d to %d bytes over the reconnects", h0, h)
	}
	s.Stop()
	eventually(t, 10*time.Second, "processes gone", func() bool { return ourProcesses(t) == procs })
	eventually(t, 10*time.Second, "goroutines gone", func() bool { return runtime.NumGoroutine() <= goroutines })
}
