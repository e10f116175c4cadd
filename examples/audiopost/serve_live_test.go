package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/ffmpeg"
	"github.com/audiopost/audiopost/internal/icecast"
	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/loudness"
)

// TestServeLiveStream runs a live stream through serve end to end: a real
// icecast2 server has a programme pushed into /in.mp3 (a tone at -30
// dBFS, looped); the stream is created through the API with that mount as
// its source and /out.mp3 as its destination, started, and serve's worker
// runs it: the status figures move (uptime grows, the gain brings the
// tone up, the source is connected), a listener of /out.mp3 hears the
// loudness target within 1 LU, and after stop and delete none of the
// stream's ffmpeg processes is left and the stream is gone.
func TestServeLiveStream(t *testing.T) {
	if testing.Short() {
		t.Skip("real servers in real time: about 20 s")
	}
	t.Parallel() // waits on the stream's real time (see TestLiveThroughIcecast)
	ff := need.Program(t, "ffmpeg")
	srv := icecast.Start(t)
	tone := filepath.Join(t.TempDir(), "tone.wav")
	if out, err := exec.Command(ff, "-v", "error", "-f", "lavfi", "-i", "sine=f=440:d=10:sample_rate=48000",
		"-af", "volume=-27dB", "-ac", "2", tone).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	srv.Push(t, "/in.mp3", tone, 192, true)
	srv.WaitMount(ctx, "/in.mp3")

	s := startServe(t, "-admin-user", "admin", "-admin-password", "correct horse battery", "-allow-private-fetch")
	c := &apiClient{t: t, base: s.base, hc: http.DefaultClient, basic: [2]string{"admin", "correct horse battery"}}
	const target = -16.0
	created := c.call("POST", "/api/livestreams.json", map[string]any{
		"name": "e2e", "source": srv.HTTP("/in.mp3"),
		"destinations": []map[string]any{{"url": srv.Source("/out.mp3"), "format": "mp3", "bitrate": 192}},
		"algorithms":   map[string]any{"loudnesstarget": target, "maxpeak": -1},
	})
	id, _ := created["uuid"].(string)
	if id == "" {
		t.Fatalf("created %v", created)
	}
	if st := c.call("POST", "/api/livestream/"+id+"/start.json", nil); st["state"] != "starting" && st["state"] != "running" {
		t.Fatalf("started: state %v", st["state"])
	}
	// ourProcs lists the stream's ffmpeg processes: the one reading the
	// source mount (the pusher writes it through icecast://) and the one
	// writing the destination mount, of this test's server (the test
	// runs beside others that stream into icecast servers of their own).
	ourProcs := func() []string {
		var found []string
		for pid, p := range processes() {
			if p.comm != "ffmpeg" {
				continue
			}
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			cmd := strings.ReplaceAll(string(b), "\x00", " ")
			if strings.Contains(cmd, srv.HTTP("/in.mp3")) || strings.Contains(cmd, srv.Source("/out.mp3")) {
				found = append(found, cmd)
			}
		}
		return found
	}

	// figures polls the status until cond holds on its figures.
	figures := func(what string, cond func(f map[string]any) bool) map[string]any {
		t.Helper()
		for {
			st := c.call("GET", "/api/livestream/"+id+"/status.json", nil)
			if f, ok := st["figures"].(map[string]any); ok && cond(f) {
				return f
			}
			select {
			case <-ctx.Done():
				t.Fatalf("%s: not before the deadline; last status %v", what, st)
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	num := func(f map[string]any, k string) float64 { v, _ := f[k].(float64); return v }
	first := figures("the first figures", func(f map[string]any) bool {
		src, _ := f["source"].(map[string]any)
		return src["connected"] == true && f["integrated_lufs"] != nil
	})
	srv.WaitMount(ctx, "/out.mp3")
	// A listener of the destination, for 4 s, once the leveler has had 3 s.
	time.Sleep(3 * time.Second)
	lctx, lstop := context.WithTimeout(ctx, 20*time.Second)
	d, err := ffmpeg.OpenLive(lctx, srv.HTTP("/out.mp3"), ffmpeg.LiveInput{Format: audio.Format{SampleRate: 48000, Channels: 2}})
	if err != nil {
		t.Fatal(err)
	}
	heard := audio.NewBuffer(2, 0)
	buf := audio.NewBuffer(2, 4800)
	for heard.Frames() < 4*48000 {
		n, err := d.Read(buf)
		for ch := range heard {
			heard[ch] = append(heard[ch], buf[ch][:n]...)
		}
		if err != nil {
			break
		}
	}
	d.Close()
	lstop()
	later := figures("figures that moved", func(f map[string]any) bool { return num(f, "uptime_seconds") >= num(first, "uptime_seconds")+3 })
	t.Logf("figures after %.0f s: gain %+.1f dB, integrated %.1f LUFS, short-term %.1f LUFS, true peak %.1f dBTP; then after %.0f s: gain %+.1f dB, integrated %.1f LUFS, short-term %.1f LUFS, true peak %.1f dBTP",
		num(first, "uptime_seconds"), num(first, "gain_db"), num(first, "integrated_lufs"), num(first, "shortterm_lufs"), num(first, "true_peak_dbtp"),
		num(later, "uptime_seconds"), num(later, "gain_db"), num(later, "integrated_lufs"), num(later, "shortterm_lufs"), num(later, "true_peak_dbtp"))
	if g := num(later, "gain_db"); g < 5 {
		t.Errorf("gain %+.1f dB on a tone 14 dB under the target", g)
	}
	if h, _ := later["history"].([]any); len(h) < 2 {
		t.Errorf("history of %d points", len(h))
	}
	if heard.Frames() < 4*48000 {
		t.Fatalf("the listener heard %.1f s", float64(heard.Frames())/48000)
	}
	r, err := loudness.MeasureBuffer(heard, 48000, loudness.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the listener of /out.mp3 heard %.1f LUFS, true peak %.1f dBTP", r.Integrated, r.TruePeak)
	if r.Integrated < target-1 || r.Integrated > target+1 {
		t.Errorf("the listener heard %.1f LUFS, want %v within 1", r.Integrated, target)
	}
	if n := len(ourProcs()); n != 2 {
		t.Errorf("%d ffmpeg processes of the stream while it runs, want 2: %q", n, ourProcs())
	}

	if st := c.call("POST", "/api/livestream/"+id+"/stop.json", nil); st["state"] != "stopped" {
		t.Errorf("stopped: state %v", st["state"])
	}
	// The worker notices the stop at its next heartbeat (2.5 s) and ends
	// the stream's processes.
	deadline := time.Now().Add(15 * time.Second)
	for len(ourProcs()) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("15 s after stop, the stream's processes still run: %q", ourProcs())
		}
		time.Sleep(100 * time.Millisecond)
	}
	c.call("DELETE", "/api/livestream/"+id+".json", nil)
	if code, b := c.do("GET", "/api/livestream/"+id+".json", "", nil); code != http.StatusNotFound {
		t.Errorf("after delete: HTTP %d: %s", code, b)
	}
	if code, b := c.do("GET", "/api/livestreams.json", "", nil); code != http.StatusOK || !strings.Contains(string(b), `"data":[]`) {
		t.Errorf("after delete the list is HTTP %d: %s", code, b)
	}
}
