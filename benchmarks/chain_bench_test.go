package benchmarks

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"
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
		gobin := needTool(b, "go")
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
		ff := needTool(b, "ffmpeg")
		out := filepath.Join(b.TempDir(), "out.wav")
		re := regexp.MustCompile(`"(input_i|input_tp|input_lra|input_thresh|target_offset)"\s*:\s*"([-\d.inf]+)"`)
		var cpu time.Duration
		b.ResetTimer()
		for b.Loop() {
			o1, c1, _ := run(b, exec.Command(ff, "-nostdin", "-hide_banner", "-nostats", "-i", path,
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
			_, c2, _ := run(b, exec.Command(ff, "-nostdin", "-hide_banner", "-nostats", "-y", "-i", path, "-af", af, "-ar", "48000", out))
			cpu += c1 + c2
		}
		report(b, cpu)
	})
}
