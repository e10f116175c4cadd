package mixdown_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/audiopost/audiopost/audio"
	_ "github.com/audiopost/audiopost/audio/wav"
	"github.com/audiopost/audiopost/dsp"
	"github.com/audiopost/audiopost/dsp/mixdown"
	"github.com/audiopost/audiopost/internal/testaudio"
)

var benchSeconds = flag.Float64("mixdown-seconds", 120, "length of the production BenchmarkMixdown renders, seconds")

// BenchmarkMixdown runs a whole 3-track mixdown per op, 48 kHz stereo:
// the joint analysis, then dsp.NormalizeStream over the graph (high-pass,
// gate and crossgate, balance, loop/trim and ducking, Mix) to -16 LUFS
// under -1 dBTP, which measures the mix, fits the gain and renders it to
// a discarding sink. The tracks are 16-bit WAV files decoded from disk: a
// host and a guest microphone, each with the other's bleed 20 dB down and
// its own noise, a 30 s conversation repeated to the production's length
// by re-opening the file, and a 20 s music bed that the mixdown loops.
//
// Each op is a child process with GOMAXPROCS=1 (one core), so that its
// peak RSS (read from /proc in the child) is the mixdown's alone. It reports x_realtime (production
// seconds per wall-clock second of the child), x_realtime_cpu (per CPU
// second), the analysis's and one render pass's speed, the render passes
// NormalizeStream needed, peak_rss_MB and the analysis's memory per hour.
//
//	go test ./dsp/mixdown/ -run '^$' -bench Mixdown -benchtime 3x
//	go test ./dsp/mixdown/ -run '^$' -bench Mixdown -benchtime 1x -args -mixdown-seconds 3600
func BenchmarkMixdown(b *testing.B) {
	dir := b.TempDir()
	texts := [][]string{testaudio.Sentences[0:4], testaudio.Sentences[4:8]}
	clean, _ := conversation(b, texts, testaudio.Voices[:2], 0.5, 0.7, 0.5)
	mics, _ := microphones(clean, []float64{0, -10}, -20, -62)
	for k, m := range mics {
		testaudio.WriteWAV(b, filepath.Join(dir, fmt.Sprintf("mic%d.wav", k)), [][]float64{m, testaudio.Scale(append([]float64(nil), m...), 0.8)}, fs)
	}
	testaudio.WriteWAV(b, filepath.Join(dir, "bed.wav"), stereoMusic(20, 4), fs)
	secs := *benchSeconds
	var wall, cpu, analysis, render time.Duration
	var rss float64
	var passes int
	var anMB float64
	b.ResetTimer()
	for b.Loop() {
		cmd := exec.Command(os.Args[0], "-test.run=^TestMixdownBenchChild$")
		cmd.Env = append(os.Environ(), "GOMAXPROCS=1", "MIXDOWN_BENCH_DIR="+dir, "MIXDOWN_BENCH_SECONDS="+strconv.FormatFloat(secs, 'f', -1, 64))
		t0 := time.Now()
		out, err := cmd.CombinedOutput()
		wall += time.Since(t0)
		if err != nil {
			b.Fatalf("child: %v\n%s", err, out)
		}
		var an, re, hwm float64
		at := strings.Index(string(out), "mixdown-bench ")
		if at < 0 {
			b.Fatalf("child output %q", out)
		}
		if _, err := fmt.Sscanf(string(out[at:]), "mixdown-bench analysis=%g render=%g passes=%d analysis_mb=%g rss_mb=%g", &an, &re, &passes, &anMB, &hwm); err != nil {
			b.Fatalf("child output %q: %v", out, err)
		}
		analysis += time.Duration(an * float64(time.Second))
		render += time.Duration(re * float64(time.Second))
		ps := cmd.ProcessState
		cpu += ps.UserTime() + ps.SystemTime()
		rss = max(rss, hwm)
	}
	ops := float64(b.N)
	b.ReportMetric(secs*ops/wall.Seconds(), "x_realtime")
	b.ReportMetric(secs*ops/cpu.Seconds(), "x_realtime_cpu")
	b.ReportMetric(secs*ops/analysis.Seconds(), "x_realtime_analysis")
	b.ReportMetric(secs*ops/render.Seconds()*float64(passes), "x_realtime_per_pass")
	b.ReportMetric(float64(passes), "graph_passes")
	b.ReportMetric(rss, "peak_rss_MB")
	b.ReportMetric(anMB*3600/secs, "analysis_MB/h")
}

// TestMixdownBenchChild is BenchmarkMixdown's child process; it does
// nothing in a normal test run.
func TestMixdownBenchChild(t *testing.T) {
	dir := os.Getenv("MIXDOWN_BENCH_DIR")
	if dir == "" {
		t.Skip("the child process of BenchmarkMixdown")
	}
	secs, err := strconv.ParseFloat(os.Getenv("MIXDOWN_BENCH_SECONDS"), 64)
	if err != nil {
		t.Fatal(err)
	}
	frames := int64(secs * fs)
	ctx := context.Background()
	var tracks []mixdown.TrackSettings
	for k := range 2 {
		path := filepath.Join(dir, fmt.Sprintf("mic%d.wav", k))
		tr := mixdown.DefaultTrack(func(ctx context.Context) (audio.Source, error) { return newRepeat(ctx, path, frames) })
		tr.Role, tr.Pan = mixdown.RoleForeground, []float64{-0.2, 0.2}[k]
		tracks = append(tracks, tr)
	}
	bed := filepath.Join(dir, "bed.wav")
	tr := mixdown.DefaultTrack(func(ctx context.Context) (audio.Source, error) { return audio.Open(ctx, bed) })
	tr.Role, tr.LoopTrim = mixdown.RoleDucking, true
	tracks = append(tracks, tr)

	t0 := time.Now()
	md, err := mixdown.New(ctx, mixdown.Settings{Tracks: tracks, Leveler: true, Gate: true, Crossgate: true})
	if err != nil {
		t.Fatal(err)
	}
	t1 := time.Now()
	passes := 0
	open := func(ctx context.Context) (audio.Source, error) { passes++; return md.Open(ctx) }
	norm, err := dsp.NormalizeStream(ctx, open, dsp.NormalizeOptions{TargetLUFS: -16, CeilingDBTP: -1})
	if err != nil {
		t.Fatal(err)
	}
	n, err := audio.Copy(ctx, audio.SinkFunc(func(audio.Buffer) error { return nil }), norm)
	if err != nil {
		t.Fatal(err)
	}
	norm.Close()
	if n != frames {
		t.Fatalf("%d frames rendered, want %d", n, frames)
	}
	fmt.Printf("mixdown-bench analysis=%g render=%g passes=%d analysis_mb=%g rss_mb=%g\n",
		t1.Sub(t0).Seconds(), time.Since(t1).Seconds(), passes, float64(analysisBytes(md.Analysis()))/(1<<20), peakRSS())
}

// peakRSS is the process's peak resident set (VmHWM) in MB. The child
// reads its own: the rusage of a child started by a large parent counts
// the parent's pages that the child shared until it exec'd.
func peakRSS() float64 {
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

// repeat plays a file over and over, re-opening it at its end, for a
// given number of frames: a long track from a short file in no memory.
type repeat struct {
	ctx  context.Context
	path string
	d    audio.Decoder
	left int64
}

func newRepeat(ctx context.Context, path string, frames int64) (*repeat, error) {
	d, err := audio.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	return &repeat{ctx: ctx, path: path, d: d, left: frames}, nil
}

func (r *repeat) Format() audio.Format { return r.d.Format() }

func (r *repeat) Close() error { return r.d.Close() }

func (r *repeat) Read(dst audio.Buffer) (int, error) {
	if r.left == 0 {
		return 0, io.EOF
	}
	if int64(dst.Frames()) > r.left {
		dst = dst.Slice(0, int(r.left))
	}
	for {
		n, err := r.d.Read(dst)
		if n > 0 {
			r.left -= int64(n)
			return n, nil
		}
		if !errors.Is(err, io.EOF) {
			return 0, err
		}
		r.d.Close()
		if r.d, err = audio.Open(r.ctx, r.path); err != nil {
			return 0, err
		}
	}
}

// analysisBytes is the memory an analysis keeps: its frame arrays and
// the 100 ms arrays of each track's dsp.Analysis.
func analysisBytes(an *mixdown.Analysis) int64 {
	var n int64
	for _, t := range an.Tracks {
		n += int64(len(t.Level))*4 + int64(len(t.Floor))*4 + int64(len(t.Activity))
		n += int64(len(t.Block.Energy)+len(t.Block.Raw))*8 + int64(len(t.Block.Peak))*4*2 + int64(len(t.Block.Voiced)+len(t.Block.Music))
	}
	return n
}
