package benchmarks

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/wav"
	"github.com/audiopost/audiopost/dsp/chain"
	"github.com/audiopost/audiopost/dsp/spectral"
	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// BenchmarkChain1h runs the default single-track chain (analysis, hipfilter,
// leveler, compressor, loudness normalization to -16 LUFS, true-peak limiter)
// on the cached 1-hour 48 kHz stereo WAV with the `audiopost process` binary,
// WAV in to WAV out, and ffmpeg's two-pass loudnorm on the same file in the
// same run. Run with -benchtime=1x:
//
//	go test -run XXX -bench Chain1h -benchtime=1x ./benchmarks
//
// x_realtime is audio seconds per wall-clock second, x_realtime_cpu per CPU
// second (the fairer figure on a shared machine); maxrss_MB is the peak RSS
// of the process binary.
func BenchmarkChain1h(b *testing.B) {
	path := programmeFile(b)
	const secs = 3600.0
	run := func(b *testing.B, cmd *exec.Cmd) (string, time.Duration, int64) {
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("%v: %v\n%s", cmd.Args, err, out)
		}
		ps := cmd.ProcessState
		return string(out), ps.UserTime() + ps.SystemTime(), ps.SysUsage().(*syscall.Rusage).Maxrss
	}
	report := func(b *testing.B, cpu time.Duration) {
		b.ReportMetric(secs*float64(b.N)/b.Elapsed().Seconds(), "x_realtime")
		b.ReportMetric(secs*float64(b.N)/cpu.Seconds(), "x_realtime_cpu")
	}
	b.Run("audiopost-process", func(b *testing.B) {
		gobin := "go" // go test puts its own go command on PATH
		bin := filepath.Join(b.TempDir(), "audiopost")
		if out, err := exec.Command(gobin, "build", "-o", bin, "github.com/audiopost/audiopost/examples/audiopost").CombinedOutput(); err != nil {
			b.Fatalf("go build: %v\n%s", err, out)
		}
		out := filepath.Join(b.TempDir(), "out.wav")
		var cpu time.Duration
		var rss int64
		b.ResetTimer()
		for b.Loop() {
			cmd := exec.Command(bin, "process", "-o", out, path)
			stdout, c, r := run(b, cmd)
			var st struct {
				Levels struct {
					Output struct {
						Loudness [2]any `json:"loudness"`
					} `json:"output"`
				} `json:"levels"`
			}
			if err := json.Unmarshal([]byte(stdout), &st); err != nil {
				b.Fatalf("statistics: %v\n%s", err, stdout)
			}
			cpu += c
			rss = max(rss, r)
		}
		report(b, cpu)
		b.ReportMetric(float64(rss)/1024, "maxrss_MB")
		if rss > 64*1024 {
			b.Errorf("peak RSS %d KB, budget 64 MB", rss)
		}
	})
	b.Run("ffmpeg-loudnorm-2pass", func(b *testing.B) {
		ff := need.Program(b, "ffmpeg")
		out := filepath.Join(b.TempDir(), "out.wav")
		var cpu time.Duration
		b.ResetTimer()
		for b.Loop() {
			cpu += ffmpegLoudnorm2Pass(b, ff, path, out)
		}
		report(b, cpu)
	})
}

// speechSeconds is the length of the speech file of BenchmarkChainSpeech.
const speechSeconds = 300

var (
	speechOnce sync.Once
	speechPath string
)

// speechFile writes (once, kept in the temporary directory) five minutes of 48 kHz stereo 16-bit
// espeak-ng speech: the test sentences in rotating voices, each phrase at
// its own level (0 to -12 dB, so the leveler has work), pauses of 0.3 to
// 1.5 s, a pink-noise floor at about -62 dBFS independent per channel, the
// right channel 1 dB below the left.
func speechFile(b testing.TB) string {
	speechOnce.Do(func() {
		const fs = 48000
		// Kept between runs beside the other benchmark inputs; written
		// under another name first, so a file there is whole.
		dir := filepath.Join(os.TempDir(), "audiopost-bench")
		path := filepath.Join(dir, "chain-speech-300s-48k-s16.wav")
		if _, err := os.Stat(path); err == nil {
			speechPath = path
			return
		}
		n := speechSeconds * fs
		x := make([]float64, 0, n+10*fs)
		gains := []float64{0, -6, -2, -9, -4, -12, -1, -7}
		pauses := []float64{0.6, 1.2, 0.3, 1.5, 0.8, 0.4, 1.0}
		for i := 0; len(x) < n; i++ {
			s := testaudio.Speech(b, fs, testaudio.Sentences[i%len(testaudio.Sentences)], testaudio.Voices[i%len(testaudio.Voices)])
			g := math.Pow(10, gains[i%len(gains)]/20) * 0.7
			for _, v := range s {
				x = append(x, v*g)
			}
			x = append(x, make([]float64, int(pauses[i%len(pauses)]*fs))...)
		}
		x = x[:n]
		buf := audio.NewBuffer(2, n)
		for c, k := range []float64{1, math.Pow(10, -1.0/20)} {
			noise := testaudio.PinkNoise(n, math.Pow(10, -62.0/20), uint64(c+7))
			for i := range x {
				buf[c][i] = k*x[i] + noise[i]
			}
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		tmp := path + "." + strconv.Itoa(os.Getpid())
		testaudio.WriteWAV(b, tmp, buf, fs)
		if err := os.Rename(tmp, path); err != nil {
			b.Fatal(err)
		}
		speechPath = path
	})
	if speechPath == "" {
		b.Fatal("no benchmark input")
	}
	return speechPath
}

// chainToWAV runs the default chain (dsp/chain.DefaultConfig: analysis,
// high-pass filter, leveler, automatic compressor, normalization to
// -16 LUFS, 0 dBTP limiter) on the WAV file at path, writing a 16-bit WAV.
// It returns the time chain.New took (the analysis and loudness passes)
// and the time of the render into the encoder.
func chainToWAV(b testing.TB, path, out string, cfg chain.Config) (passes, render time.Duration) {
	ctx := context.Background()
	open := func(ctx context.Context) (audio.Source, error) { return audio.Open(ctx, path) }
	t0 := time.Now()
	p, err := chain.New(ctx, open, cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	passes = time.Since(t0)
	f, err := os.Create(out)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<16)
	enc, err := wav.NewEncoder(ctx, &seekFlusher{w, f}, p.Format(), audio.EncodeOptions{})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := audio.Copy(ctx, enc, p); err != nil {
		b.Fatal(err)
	}
	if err := enc.Close(); err != nil {
		b.Fatal(err)
	}
	if got := p.Stats().Output.Integrated; math.Abs(got+16) > 0.5 {
		b.Fatalf("output %.2f LUFS, want -16", got)
	}
	return passes, time.Since(t0) - passes
}

// seekFlusher lets the WAV encoder patch its header through a buffered
// writer: a seek flushes first.
type seekFlusher struct {
	w *bufio.Writer
	f *os.File
}

func (s *seekFlusher) Write(p []byte) (int, error) { return s.w.Write(p) }

func (s *seekFlusher) Seek(off int64, whence int) (int64, error) {
	if err := s.w.Flush(); err != nil {
		return 0, err
	}
	return s.f.Seek(off, whence)
}

// ffmpegLoudnorm2Pass runs ffmpeg's two-pass loudnorm (-16 LUFS, -1 dBTP,
// LRA 11, linear second pass) from path to a WAV at out and returns the
// CPU time both ffmpeg processes used.
func ffmpegLoudnorm2Pass(b *testing.B, ff, path, out string) time.Duration {
	re := regexp.MustCompile(`"(input_i|input_tp|input_lra|input_thresh|target_offset)"\s*:\s*"([-\d.inf]+)"`)
	run := func(cmd *exec.Cmd) (string, time.Duration) {
		o, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("%v: %v\n%s", cmd.Args, err, o)
		}
		return string(o), cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	o1, c1 := run(exec.Command(ff, "-nostdin", "-hide_banner", "-nostats", "-i", path,
		"-af", "loudnorm=I=-16:TP=-1:LRA=11:print_format=json", "-f", "null", "-"))
	m := map[string]string{}
	for _, g := range re.FindAllStringSubmatch(o1, -1) {
		m[g[1]] = g[2]
	}
	if len(m) != 5 {
		b.Fatalf("loudnorm first pass: %v\n%s", m, o1)
	}
	af := "loudnorm=I=-16:TP=-1:LRA=11:measured_I=" + m["input_i"] + ":measured_TP=" + m["input_tp"] +
		":measured_LRA=" + m["input_lra"] + ":measured_thresh=" + m["input_thresh"] + ":offset=" + m["target_offset"] + ":linear=true"
	_, c2 := run(exec.Command(ff, "-nostdin", "-hide_banner", "-nostats", "-y", "-i", path, "-af", af, "-ar", "48000", out))
	return c1 + c2
}

// BenchmarkChainSpeech runs, in every iteration and in turn, ffmpeg's
// two-pass loudnorm and the default chain (library, WAV in, 16-bit WAV
// out) on one core and on two (GOMAXPROCS) on five minutes of 48 kHz
// stereo speech, and reports the medians over the iterations side by side
// with their ratios. Run several iterations, the machine is shared:
//
//	go test -run XXX -bench ChainSpeech -benchtime=5x ./benchmarks
//
// ffmpeg_s, chain_1core_s and chain_2core_s are wall-clock seconds;
// x_ffmpeg_1core and x_ffmpeg_2core how many times faster than ffmpeg the
// chain is (median ffmpeg over median chain); *_cpu_s the CPU seconds
// (user+system) of each, the fairer figure when other work competes for
// the cores, and x_ffmpeg_cpu their ratio for the one-core run. Every
// iteration is logged, with the chain's time split into chain.New (the
// analysis and loudness passes) and the render, to show where the time
// goes and the noise.
func BenchmarkChainSpeech(b *testing.B) {
	ff := need.Program(b, "ffmpeg")
	path := speechFile(b)
	dir := b.TempDir()
	procs := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(procs)
	var ffWall, ffCPU, wall1, cpu1, wall2, cpu2 []float64
	chainRun := func(n int) (wall, cpu float64, split string) {
		runtime.GOMAXPROCS(n)
		runtime.GC()
		c0, t0 := selfCPU(), time.Now()
		passes, render := chainToWAV(b, path, filepath.Join(dir, "chain.wav"), chain.DefaultConfig())
		wall, cpu = time.Since(t0).Seconds(), (selfCPU() - c0).Seconds()
		return wall, cpu, fmt.Sprintf("%.3f s (cpu %.3f; passes %.3f + render %.3f)", wall, cpu, passes.Seconds(), render.Seconds())
	}
	for b.Loop() {
		t0 := time.Now()
		c := ffmpegLoudnorm2Pass(b, ff, path, filepath.Join(dir, "ffmpeg.wav"))
		ffWall = append(ffWall, time.Since(t0).Seconds())
		ffCPU = append(ffCPU, c.Seconds())
		w, c1, s1 := chainRun(1)
		wall1, cpu1 = append(wall1, w), append(cpu1, c1)
		w, c2, s2 := chainRun(2)
		wall2, cpu2 = append(wall2, w), append(cpu2, c2)
		b.Logf("ffmpeg %.3f s (cpu %.3f) | chain 1 core %s | 2 cores %s", ffWall[len(ffWall)-1], ffCPU[len(ffCPU)-1], s1, s2)
	}
	runtime.GOMAXPROCS(procs)
	med := func(x []float64) float64 {
		s := slices.Sorted(slices.Values(x))
		if len(s)%2 == 1 {
			return s[len(s)/2]
		}
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	spread := func(x []float64) float64 { return slices.Max(x) - slices.Min(x) }
	f, c1, c2 := med(ffWall), med(wall1), med(wall2)
	b.ReportMetric(f, "ffmpeg_s")
	b.ReportMetric(c1, "chain_1core_s")
	b.ReportMetric(c2, "chain_2core_s")
	b.ReportMetric(f/c1, "x_ffmpeg_1core")
	b.ReportMetric(f/c2, "x_ffmpeg_2core")
	b.ReportMetric(med(ffCPU), "ffmpeg_cpu_s")
	b.ReportMetric(med(cpu1), "chain_1core_cpu_s")
	b.ReportMetric(med(cpu2), "chain_2core_cpu_s")
	b.ReportMetric(med(ffCPU)/med(cpu1), "x_ffmpeg_cpu")
	b.ReportMetric(speechSeconds/c1, "x_realtime_1core")
	b.ReportMetric(speechSeconds/c2, "x_realtime_2core")
	b.Logf("medians over %d runs (max-min): ffmpeg %.3f s (%.3f), chain 1 core %.3f s (%.3f), 2 cores %.3f s (%.3f); chain faster than ffmpeg %.1fx on one core, %.1fx on two",
		len(ffWall), f, spread(ffWall), c1, spread(wall1), c2, spread(wall2), f/c1, f/c2)
}

// BenchmarkChainTimeSplit measures how fast the default chain could run on
// two cores with every pass split in time instead of into stages (issue
// 19's next step). In every iteration, in turn: the five-minute file of
// BenchmarkChainSpeech through the chain as it is (stages on two cores),
// and its two halves at the same time, each through the chain on a
// goroutine of its own with Config.Sequential. The halves are not one
// production (each is leveled and normalized alone, and nothing joins
// them), so split_s is a ceiling: what two cores give when no audio passes
// between them.
//
//	go test ./benchmarks -run '^$' -bench ChainTimeSplit -benchtime 5x
//
// staged_s and split_s are median wall-clock seconds, x_staged their
// ratio, *_cpu_s the CPU seconds of each.
func BenchmarkChainTimeSplit(b *testing.B) {
	path := speechFile(b)
	halves := halfFiles(b, path)
	dir := b.TempDir()
	seq := chain.DefaultConfig()
	seq.Sequential = true
	var staged, split, stagedCPU, splitCPU []float64
	for b.Loop() {
		runtime.GC()
		c0, t0 := selfCPU(), time.Now()
		chainToWAV(b, path, filepath.Join(dir, "whole.wav"), chain.DefaultConfig())
		staged, stagedCPU = append(staged, time.Since(t0).Seconds()), append(stagedCPU, (selfCPU()-c0).Seconds())
		runtime.GC()
		c0, t0 = selfCPU(), time.Now()
		var wg sync.WaitGroup
		for i, h := range halves {
			wg.Go(func() { chainToWAV(b, h, filepath.Join(dir, fmt.Sprintf("half%d.wav", i)), seq) })
		}
		wg.Wait()
		split, splitCPU = append(split, time.Since(t0).Seconds()), append(splitCPU, (selfCPU()-c0).Seconds())
	}
	st, sp := median(staged), median(split)
	b.ReportMetric(st, "staged_s")
	b.ReportMetric(sp, "split_s")
	b.ReportMetric(st/sp, "x_staged")
	b.ReportMetric(median(stagedCPU), "staged_cpu_s")
	b.ReportMetric(median(splitCPU), "split_cpu_s")
	b.Logf("five minutes on two cores: staged %.3f s (cpu %.3f), two halves at once %.3f s (cpu %.3f): %.2fx",
		st, median(stagedCPU), sp, median(splitCPU), st/sp)
}

// halfFiles writes the two halves of the 16-bit WAV at path beside it,
// once, and returns their paths.
func halfFiles(b testing.TB, path string) [2]string {
	b.Helper()
	out := [2]string{strings.TrimSuffix(path, ".wav") + "-half1.wav", strings.TrimSuffix(path, ".wav") + "-half2.wav"}
	if _, err := os.Stat(out[1]); err == nil {
		return out
	}
	whole, rate := testaudio.ReadFile(b, path)
	n := whole.Frames() / 2
	// The second half is written last and under another name first: when
	// it is there, both are whole.
	for i, part := range []audio.Buffer{whole.Slice(0, n), whole.Slice(n, whole.Frames())} {
		testaudio.WriteWAV(b, out[i]+".tmp", part, rate)
		if err := os.Rename(out[i]+".tmp", out[i]); err != nil {
			b.Fatal(err)
		}
	}
	return out
}

// BenchmarkChainSpill measures what the chain's spill (Config.SpillBytes)
// saves where it is used, with the restoration stage: the five-minute file
// of BenchmarkChainSpeech through the default chain with the classic and
// the dynamic denoiser, on two cores, with the spill and without it
// (SpillBytes -1: every pass processes the input again), in turn in every
// iteration.
func BenchmarkChainSpill(b *testing.B) {
	path := speechFile(b)
	dir := b.TempDir()
	methods := []spectral.Method{spectral.Classic, spectral.Dynamic}
	wall := map[string][]float64{}
	for b.Loop() {
		for _, m := range methods {
			for _, spill := range []int64{0, -1} {
				cfg := chain.DefaultConfig()
				cfg.Restoration = &spectral.Restoration{Settings: spectral.Settings{Method: m}}
				cfg.SpillBytes, cfg.TempDir = spill, dir
				runtime.GC()
				t0 := time.Now()
				chainToWAV(b, path, filepath.Join(dir, "out.wav"), cfg)
				key := fmt.Sprintf("%s/spill=%v", m, spill == 0)
				wall[key] = append(wall[key], time.Since(t0).Seconds())
			}
		}
	}
	for _, m := range methods {
		with, without := median(wall[fmt.Sprintf("%s/spill=true", m)]), median(wall[fmt.Sprintf("%s/spill=false", m)])
		b.ReportMetric(with, m.String()+"_spill_s")
		b.ReportMetric(without, m.String()+"_nospill_s")
		b.ReportMetric(without/with, "x_"+m.String())
		b.Logf("%s denoiser, five minutes on two cores: %.3f s with the spill, %.3f s without: %.2fx", m, with, without, without/with)
	}
}
