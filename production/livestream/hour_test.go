package livestream_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/audiopost/audiopost/dsp/live"
	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/testsize"
	"github.com/audiopost/audiopost/production/livestream"
)

// TestStreamMemoryOverAnHour runs a stream for an hour of audio and checks
// that its memory stays flat: the heap of the process (the stream's
// goroutines, queues and graph) and the resident memory of its ffmpeg
// programs (the source's reader and the destination's encoder), taken
// after two minutes (once ffmpeg has all it allocates: one run read 72 MB
// resident after the first minute and 105 MB after the second) and every
// ten minutes after. The source is
// real ffmpeg reading a named pipe that the test fills as fast as the
// stream takes it (a live source's pace does not matter to memory), the
// destination an encoder whose output is thrown away. About 30 s of CPU:
// AUDIOPOST_LONG=1 only.
func TestStreamMemoryOverAnHour(t *testing.T) {
	if !testsize.Long() {
		t.Skip("an hour of audio through a stream, about 30 s of CPU: AUDIOPOST_LONG=1")
	}
	need.Program(t, "ffmpeg")
	const rate, minutes = 48000, 60
	dir := t.TempDir()
	fifo := filepath.Join(dir, "source.wav")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no named pipes: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The wall clock: the source runs far ahead of it and never stalls,
	// and the stream goes as fast as the audio comes. (The simulated
	// clock, which would not move, would keep every timer the stream sets
	// as a waiter.)
	s, err := livestream.Start(ctx, livestream.Spec{
		Source:       fifo,
		Destinations: []livestream.Destination{{URL: "pipe:1", Format: "mp3", Bitrate: 64}},
		Config:       live.DefaultConfig(),
	}, livestream.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	hdr := []byte("RIFF\xff\xff\xff\xffWAVEfmt \x10\x00\x00\x00\x01\x00\x02\x00\x80\xbb\x00\x00\x00\xee\x02\x00\x04\x00\x10\x00data\xff\xff\xff\xff")
	if _, err := f.Write(hdr); err != nil {
		t.Fatal(err)
	}
	w := &pcmWriter{f: f}
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	// rss sums the resident memory of the stream's ffmpeg programs, in
	// bytes.
	rss := func() int64 {
		var sum int64
		for _, pid := range childProcesses(t) {
			b, _ := os.ReadFile(filepath.Join("/proc", pid, "status"))
			for _, line := range strings.Split(string(b), "\n") {
				if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
					kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
					sum += kb << 10
				}
			}
		}
		return sum
	}
	// played waits until the stream has put out the audio written so
	// far, but for what the graph and ffmpeg hold back.
	played := func(seconds int) {
		t.Helper()
		want := int64(seconds*rate) - 2048 - 4800
		eventually(t, 60*time.Second, strconv.Itoa(seconds)+" s played", func() bool { return s.Status().Stats.Frames >= want })
	}
	var heap1, rss1, heapMax, rssMax int64
	for m := 1; m <= minutes; m++ {
		for range 60 {
			w.write(t, 1)
		}
		if m == 2 || m%10 == 0 {
			played(m * 60)
			h, r := int64(heap()), rss()
			if m == 2 {
				heap1, rss1 = h, r
			}
			heapMax, rssMax = max(heapMax, h), max(rssMax, r)
			t.Logf("%2d min: heap %.2f MB, ffmpeg programs %.1f MB resident", m, float64(h)/1e6, float64(r)/1e6)
		}
	}
	st := s.Status()
	if st.Stats.Frames < int64((minutes*60-1)*rate) || st.Source.Drops != 0 || st.Processes != 2 {
		t.Fatalf("after an hour: %d frames out, %d drops, %d processes", st.Stats.Frames, st.Source.Drops, st.Processes)
	}
	t.Logf("an hour: heap %.2f MB after two minutes, at most %.2f MB after (%+.0f KB); ffmpeg %.1f MB, at most %.1f MB (%+.0f KB)",
		float64(heap1)/1e6, float64(heapMax)/1e6, float64(heapMax-heap1)/1e3, float64(rss1)/1e6, float64(rssMax)/1e6, float64(rssMax-rss1)/1e3)
	// Flat: what a leak of a few bytes per 10 ms block would exceed.
	if heapMax > heap1+1<<20 {
		t.Errorf("heap grew from %d to %d bytes over the hour", heap1, heapMax)
	}
	if rssMax > rss1+4<<20 {
		t.Errorf("the ffmpeg programs grew from %d to %d bytes resident over the hour", rss1, rssMax)
	}
}
