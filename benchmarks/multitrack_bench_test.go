package benchmarks

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/engine"
)

var multitrackSeconds = flag.Float64("multitrack-seconds", 120, "length of the production BenchmarkMultitrack renders, seconds")

// BenchmarkMultitrack runs a whole 3-track multitrack production per op
// through production/engine on one core (a child process with
// GOMAXPROCS=1, so that its peak RSS is the production's alone): a host
// and a guest microphone (48 kHz mono 16-bit WAV, each carrying the
// other's voice 20 dB down and its own noise, the guest 10 dB quieter), a
// 20 s stereo music bed looped to the length and ducked, the default
// master (leveler, gate, crossgate, -16 LUFS, maxpeak -1) into one WAV
// output. In the same run ffmpeg mixes the same three files (amix) and
// normalises them with its one-pass loudnorm, the cheapest comparable
// thing it does; ffmpeg_ratio is our realtime factor per CPU second over
// ffmpeg's.
//
//	go test ./benchmarks -run '^$' -bench Multitrack -benchtime 1x
//	go test ./benchmarks -run '^$' -bench Multitrack -benchtime 1x -args -multitrack-seconds 3600
func BenchmarkMultitrack(b *testing.B) {
	ffmpeg := need.Program(b, "ffmpeg")
	secs := *multitrackSeconds
	paths := multitrackFiles(b, secs)
	var wall, cpu time.Duration
	var rss float64
	b.ResetTimer()
	for b.Loop() {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMultitrackBenchChild$")
		cmd.Env = append(os.Environ(), "GOMAXPROCS=1", "MULTITRACK_BENCH="+strings.Join(paths, ","))
		t0 := time.Now()
		out, err := cmd.CombinedOutput()
		wall += time.Since(t0)
		if err != nil {
			b.Fatalf("child: %v\n%s", err, out)
		}
		at := strings.Index(string(out), "multitrack-bench ")
		var hwm float64
		if at < 0 {
			b.Fatalf("child output %q", out)
		}
		if _, err := fmt.Sscanf(string(out[at:]), "multitrack-bench rss_mb=%g", &hwm); err != nil {
			b.Fatalf("child output %q: %v", out, err)
		}
		rss = max(rss, hwm)
		cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	b.StopTimer()
	ops := float64(b.N)
	ours := secs * ops / cpu.Seconds()
	b.ReportMetric(secs*ops/wall.Seconds(), "x_realtime")
	b.ReportMetric(ours, "x_realtime_cpu")
	b.ReportMetric(rss, "peak_rss_MB")

	// The peer: ffmpeg on one thread, the bed looped, amix + loudnorm.
	cmd := exec.Command(ffmpeg, "-v", "error", "-threads", "1", "-filter_threads", "1",
		"-i", paths[0], "-i", paths[1], "-stream_loop", "-1", "-i", paths[2],
		"-filter_complex", fmt.Sprintf("[2]atrim=0:%g[bed];[0][1][bed]amix=inputs=3:duration=first:normalize=0,loudnorm=I=-16:TP=-1", secs),
		"-ar", "48000", "-f", "wav", "-y", os.DevNull)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("ffmpeg: %v\n%s", err, out)
	}
	peer := secs / (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
	b.ReportMetric(peer, "ffmpeg_x_realtime_cpu")
	b.ReportMetric(ours/peer, "ffmpeg_ratio")
}

// TestMultitrackBenchChild is BenchmarkMultitrack's child process; it
// does nothing in a normal test run.
func TestMultitrackBenchChild(t *testing.T) {
	env := os.Getenv("MULTITRACK_BENCH")
	if env == "" {
		t.Skip("the child process of BenchmarkMultitrack")
	}
	paths := strings.Split(env, ",")
	in, err := production.DecodeInput([]byte(`{
		"is_multitrack": true, "output_basename": "master",
		"multi_input_files": [
			{"type": "multitrack", "id": "host", "input_file": "https://example.org/host.wav", "algorithms": {"pan": "L10"}},
			{"type": "multitrack", "id": "guest", "input_file": "https://example.org/guest.wav", "algorithms": {"pan": "R10"}},
			{"type": "multitrack", "id": "bed", "input_file": "https://example.org/bed.wav", "algorithms": {"backforeground": "ducking", "loop_trim": true}}],
		"output_files": [{"format": "wav"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := production.New(in, production.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	eng := &engine.Engine{Logger: slog.New(slog.DiscardHandler)}
	inputs := engine.Inputs{Multi: map[string]string{"host": paths[0], "guest": paths[1], "bed": paths[2]}}
	if _, err := eng.Run(context.Background(), p, inputs, engine.DirWriter{Dir: t.TempDir()}, nil); err != nil {
		t.Fatal(err)
	}
	if lv := p.Statistics.Master.Levels.Loudness.Value; math.Abs(lv+16) > 0.3 {
		t.Fatalf("master at %.2f LUFS", lv)
	}
	fmt.Printf("multitrack-bench rss_mb=%g\n", vmHWM())
}

// vmHWM is the process's peak resident set in MB.
func vmHWM() float64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

// multitrackFiles writes (once per length, cached in the temporary
// directory) the host and guest microphones, a conversation repeated to
// secs seconds, and a 20 s music bed.
func multitrackFiles(tb testing.TB, secs float64) []string {
	tb.Helper()
	const rate = 48000
	dir := filepath.Join(os.TempDir(), "audiopost-bench")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	paths := []string{
		filepath.Join(dir, fmt.Sprintf("mt-host-%g.wav", secs)),
		filepath.Join(dir, fmt.Sprintf("mt-guest-%g.wav", secs)),
		filepath.Join(dir, "mt-bed-20.wav"),
	}
	frames := int64(secs * rate)
	have := true
	for _, p := range paths[:2] {
		if fi, err := os.Stat(p); err != nil || fi.Size() != 44+2*frames {
			have = false
		}
	}
	if _, err := os.Stat(paths[2]); err != nil {
		have = false
	}
	if have {
		return paths
	}
	// A 30 s conversation: the host's and the guest's sentences in turn.
	var host, guest []float64
	for k := 0; len(host) < 30*rate; k++ {
		x := testaudio.TrimSilence(testaudio.Speech(tb, rate, testaudio.Sentences[k%len(testaudio.Sentences)], testaudio.Voices[k%2]), 1e-4)
		pause := make([]float64, rate*7/10)
		own, other := &host, &guest
		if k%2 == 1 {
			own, other = &guest, &host
		}
		*own = append(append(*own, x...), pause...)
		*other = append(*other, make([]float64, len(x)+len(pause))...)
	}
	mic := func(own, other []float64, gainDB float64, seed uint64) []float64 {
		out := testaudio.WhiteNoise(len(own), math.Pow(10, -62.0/20), seed)
		g, b := math.Pow(10, gainDB/20), math.Pow(10, (gainDB-20)/20)
		for i := range out {
			out[i] += g*own[i] + b*other[i]
		}
		return out
	}
	writePCM16(tb, paths[0], 1, rate, frames, looped(mic(host, guest, -3, 1)))
	writePCM16(tb, paths[1], 1, rate, frames, looped(mic(guest, host, -13, 2)))
	bed := testaudio.Scale(testaudio.Music(rate, 20, 4), 0.5)
	testaudio.WriteWAV(tb, paths[2], [][]float64{bed, bed}, rate)
	return paths
}
