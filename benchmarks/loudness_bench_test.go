package benchmarks

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/audiopost/audiopost/audio"
	_ "github.com/audiopost/audiopost/audio/wav"
	"github.com/audiopost/audiopost/internal/cputime"
	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/loudness"
)

// buildEbur128 compiles ebur128/meter.c against the system libebur128.
func buildEbur128(tb testing.TB) string {
	tb.Helper()
	cc := need.Program(tb, "cc")
	flags := need.PkgConfig(tb, "libebur128")
	bin := filepath.Join(tb.TempDir(), "ebur128-meter")
	args := append([]string{"-O2", "-o", bin, filepath.Join("ebur128", "meter.c")}, flags...)
	if out, err := exec.Command(cc, append(args, "-lm")...).CombinedOutput(); err != nil {
		tb.Fatalf("building meter.c: %v\n%s", err, out)
	}
	return bin
}

// runEbur128 runs the C meter and parses its "key value" lines.
func runEbur128(tb testing.TB, bin string, args ...string) map[string]float64 {
	tb.Helper()
	out, err := exec.Command(bin, args...).Output()
	if err != nil {
		tb.Fatalf("%s %v: %v", bin, args, err)
	}
	res := map[string]float64{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		k, v, ok := strings.Cut(line, " ")
		f, err := strconv.ParseFloat(v, 64)
		if !ok || err != nil {
			tb.Fatalf("bad meter output line %q", line)
		}
		res[k] = f
	}
	return res
}

func measureFile(tb testing.TB, path string, mode loudness.Mode) loudness.Result {
	tb.Helper()
	d, err := audio.Open(context.Background(), path)
	if err != nil {
		tb.Fatal(err)
	}
	defer d.Close()
	r, err := loudness.Measure(context.Background(), d, loudness.Options{Mode: mode})
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// makeSpeech renders sentences with several espeak-ng voices and joins them
// at different levels with pauses: speech with a realistic loudness spread.
func makeSpeech(t *testing.T, dir string) string {
	espeak := need.Program(t, "espeak-ng")
	lines := []struct{ voice, speed, text string }{
		{"en-us", "150", "Welcome to the show. Today we talk about loudness, and why it matters for every podcast."},
		{"en-gb+f3", "170", "Broadcasters agreed on a common target, so that programmes no longer jump in level."},
		{"en-us+m3", "130", "The integrated loudness is measured over the whole programme, with a gate for silence."},
		{"en-gb-scotland", "160", "Short pauses between sentences are removed by the relative gate."},
		{"en-us+f2", "180", "Thank you for listening, and see you next week!"},
	}
	gains := []float64{0, -6, -2, -9, -4}
	pauses := []float64{0.8, 1.5, 0.6, 2.0, 1.0}
	var out []float64
	rate := 0
	for i, l := range lines {
		p := filepath.Join(dir, fmt.Sprintf("s%d.wav", i))
		if b, err := exec.Command(espeak, "-v", l.voice, "-s", l.speed, "-w", p, l.text).CombinedOutput(); err != nil {
			t.Fatalf("espeak-ng: %v\n%s", err, b)
		}
		var b audio.Buffer
		b, rate = testaudio.ReadFile(t, p)
		g := math.Pow(10, gains[i]/20)
		for _, v := range b[0] {
			out = append(out, v*g)
		}
		out = append(out, make([]float64, int(pauses[i]*float64(rate)))...)
	}
	path := filepath.Join(dir, "speech22k.wav")
	testaudio.WriteWAV(t, path, audio.Buffer{out}, rate)
	return path
}

// to48kStereo resamples a file with sox to 48 kHz stereo.
func to48kStereo(t *testing.T, in string) string {
	sox := need.Program(t, "sox")
	out := strings.TrimSuffix(in, ".wav") + "-48k.wav"
	if b, err := exec.Command(sox, in, "-b", "16", "-c", "2", out, "rate", "48000").CombinedOutput(); err != nil {
		t.Fatalf("sox: %v\n%s", err, b)
	}
	return out
}

// makeMusic synthesises music-like stereo material with sox: chords with
// tremolo, pink noise, a filtered square/sawtooth pad, a quiet fade.
func makeMusic(t *testing.T, dir string) string {
	sox := need.Program(t, "sox")
	parts := [][]string{
		{"synth", "10", "sine", "220", "sine", "330", "tremolo", "4", "60", "gain", "-14", "fade", "t", "1", "10", "2"},
		{"synth", "8", "pinknoise", "pinknoise", "gain", "-30", "fade", "t", "0.5", "8", "0.5"},
		{"synth", "12", "square", "110", "sawtooth", "165", "gain", "-10", "lowpass", "3000", "tremolo", "0.5", "80"},
		{"synth", "10", "sine", "440", "sine", "660", "gain", "-24", "fade", "t", "2", "10", "3"},
		{"synth", "15", "pluck", "C3", "pluck", "G3", "gain", "-8", "tremolo", "2", "90"},
	}
	var files []string
	for i, p := range parts {
		f := filepath.Join(dir, fmt.Sprintf("m%d.wav", i))
		args := append([]string{"-n", "-r", "44100", "-c", "2", "-b", "16", f}, p...)
		if out, err := exec.Command(sox, args...).CombinedOutput(); err != nil {
			t.Fatalf("sox %v: %v\n%s", args, err, out)
		}
		files = append(files, f)
	}
	path := filepath.Join(dir, "music.wav")
	if out, err := exec.Command(sox, append(files, path)...).CombinedOutput(); err != nil {
		t.Fatalf("sox join: %v\n%s", err, out)
	}
	return path
}

// TestLibebur128Agreement compares the meter with libebur128 on speech and
// music at 48 and 44.1 kHz. libebur128 samples the short-term loudness for
// LRA at 1 Hz, where Tech 3342 (since 2016) asks for at least 10 Hz; the LRA
// is compared with LRA10, the C program's Tech 3342 LRA over libebur128's
// short-term loudness polled every 100 ms, and the 1 Hz figure is logged.
func TestLibebur128Agreement(t *testing.T) {
	bin := buildEbur128(t)
	dir := t.TempDir()
	speech := makeSpeech(t, dir)
	files := map[string]string{"speech-48k": to48kStereo(t, speech), "music-44k": makeMusic(t, dir)}
	for _, name := range []string{"speech-48k", "music-44k"} {
		path := files[name]
		t.Run(name, func(t *testing.T) {
			ref := runEbur128(t, bin, "-st10", path)
			r := measureFile(t, path, loudness.ModeEBU)
			t.Logf("audiopost: I %.3f LRA %.3f TP %.3f SP %.3f", r.Integrated, r.LRA, r.TruePeak, r.SamplePeak)
			t.Logf("libebur128: I %.3f LRA %.3f (1 Hz) LRA10 %.3f TP %.3f SP %.3f", ref["I"], ref["LRA"], ref["LRA10"], ref["TP"], ref["SP"])
			cmp := func(what string, got, want, tol float64) {
				if d := got - want; !(math.Abs(d) <= tol) {
					t.Errorf("%s: audiopost %.3f, libebur128 %.3f (difference %.3f, allowed %.2f)", what, got, want, d, tol)
				}
			}
			cmp("integrated", r.Integrated, ref["I"], 0.05)
			cmp("LRA", r.LRA, ref["LRA10"], 0.1)
			cmp("true peak", r.TruePeak, ref["TP"], 0.1)
			cmp("sample peak", r.SamplePeak, ref["SP"], 0.001)
		})
	}
	// Away from 48 kHz libebur128 keeps the RLB numerator at 1, -2, 1, so
	// its passband gain, and every loudness it reads, drifts with the rate
	// (+0.05 dB at 22.05 kHz, +0.2 dB at 8 kHz); audiopost keeps the 48 kHz
	// response. The difference must be exactly that drift.
	t.Run("speech-22k-mono", func(t *testing.T) {
		ref := runEbur128(t, bin, speech)
		r := measureFile(t, speech, loudness.ModeI)
		drift := rlbDrift(22050)
		t.Logf("audiopost I %.3f, libebur128 I %.3f, predicted libebur128 offset %.3f dB", r.Integrated, ref["I"], drift)
		if d := ref["I"] - r.Integrated - drift; math.Abs(d) > 0.01 {
			t.Errorf("libebur128 - audiopost = %.3f LU, predicted %.3f", ref["I"]-r.Integrated, drift)
		}
	})
}

// rlbDrift is the passband gain, in dB, of an RLB high-pass whose numerator
// is fixed at 1, -2, 1, at the rate relative to 48 kHz.
func rlbDrift(rate float64) float64 {
	a0 := func(fs float64) float64 {
		const f0, q = 38.13547087602444, 0.5003270373238773
		k := math.Tan(math.Pi * f0 / fs)
		return 1 + k/q + k*k
	}
	return 20 * math.Log10(a0(rate)/a0(48000))
}

// programmeFile returns a cached 1-hour 48 kHz stereo 16-bit WAV of
// programme-like material (noise bursts of random length and level with
// quiet passages), generating it on first use.
func programmeFile(tb testing.TB) string {
	tb.Helper()
	dir := filepath.Join(os.TempDir(), "audiopost-bench")
	path := filepath.Join(dir, "programme-1h-48k-s16.wav")
	const rate, secs = 48000, 3600
	frames := rate * secs
	if fi, err := os.Stat(path); err == nil && fi.Size() == int64(44+frames*4) {
		return path
	}
	s := uint64(0x9E3779B97F4A7C15)
	rnd := func() float64 {
		s ^= s << 13
		s ^= s >> 7
		s ^= s << 17
		return float64(s>>11) / float64(1<<53)
	}
	// Segments of 0.2-3.2 s, each at its own level under a sine
	// envelope, a fifth of them pauses; each channel low-passed noise.
	var lp [2]float64
	var k, n int
	var amp float64
	writePCM16(tb, path, 2, rate, int64(frames), func(_ int64, c int) int16 {
		if c == 0 {
			if k == n {
				k, n = 0, int((0.2+3*rnd())*rate)
				amp = math.Pow(10, (-40+34*rnd())/20)
				if rnd() < 0.2 {
					amp *= 0.003 // pauses: background only
				}
			}
			k++
		}
		env := math.Sin(math.Pi * float64(k-1) / float64(n))
		lp[c] = 0.75*lp[c] + 0.25*(2*rnd()-1)
		v := amp * env * lp[c] * 3
		return int16(math.Round(max(-1, min(v, 32767.0/32768)) * 32768))
	})
	return path
}

// BenchmarkLoudness1h measures I + LRA + true peak of the same 1-hour file
// with audiopost (library, and the `audiopost measure` binary whose peak RSS
// is reported), the libebur128 program and ffmpeg's ebur128 filter. Run
// with -benchtime=1x. x_realtime is audio seconds per wall-clock second;
// x_realtime_cpu is audio seconds per CPU second (user+system), the fairer
// figure on a machine shared with other work.
func BenchmarkLoudness1h(b *testing.B) {
	path := programmeFile(b)
	const secs = 3600.0
	report := func(b *testing.B, cpu time.Duration) {
		b.ReportMetric(secs*float64(b.N)/b.Elapsed().Seconds(), "x_realtime")
		b.ReportMetric(secs*float64(b.N)/cpu.Seconds(), "x_realtime_cpu")
	}
	// child runs a command and returns its CPU time and peak RSS (KB).
	child := func(b *testing.B, cmd *exec.Cmd, ok func(out string) bool) (time.Duration, int64) {
		out, err := cmd.CombinedOutput()
		if err != nil || !ok(string(out)) {
			b.Fatalf("%v: %v\n%s", cmd.Args, err, out)
		}
		ps := cmd.ProcessState
		return ps.UserTime() + ps.SystemTime(), ps.SysUsage().(*syscall.Rusage).Maxrss
	}
	b.Run("audiopost", func(b *testing.B) {
		b.ReportAllocs()
		before := selfCPU()
		for b.Loop() {
			r := measureFile(b, path, loudness.ModeI|loudness.ModeLRA|loudness.ModeTruePeak)
			if !loudness.Defined(r.Integrated) {
				b.Fatalf("integrated undefined: %+v", r)
			}
		}
		report(b, selfCPU()-before)
	})
	b.Run("audiopost-cli", func(b *testing.B) {
		gobin := "go" // go test puts its own go command on PATH
		bin := filepath.Join(b.TempDir(), "audiopost")
		if out, err := exec.Command(gobin, "build", "-o", bin, "github.com/audiopost/audiopost/examples/audiopost").CombinedOutput(); err != nil {
			b.Fatalf("go build: %v\n%s", err, out)
		}
		var rss int64
		var cpu time.Duration
		for b.Loop() {
			c, r := child(b, exec.Command(bin, "measure", "-json", path), func(out string) bool { return strings.Contains(out, "integrated_lufs") })
			cpu += c
			rss = max(rss, r)
		}
		report(b, cpu)
		b.ReportMetric(float64(rss)/1024, "maxrss_MB")
		if rss > 32*1024 {
			b.Errorf("peak RSS %d KB, budget 32 MB", rss)
		}
	})
	b.Run("libebur128", func(b *testing.B) {
		bin := buildEbur128(b)
		var cpu time.Duration
		for b.Loop() {
			c, _ := child(b, exec.Command(bin, path), func(out string) bool { return strings.HasPrefix(out, "I ") })
			cpu += c
		}
		report(b, cpu)
	})
	b.Run("ffmpeg", func(b *testing.B) {
		ff := need.Program(b, "ffmpeg")
		var cpu time.Duration
		for b.Loop() {
			c, _ := child(b, exec.Command(ff, "-nostdin", "-hide_banner", "-nostats", "-i", path, "-af", "ebur128=peak=true", "-f", "null", "-"),
				func(out string) bool { return strings.Contains(out, "Integrated loudness") })
			cpu += c
		}
		report(b, cpu)
	})
}

// selfCPU returns the CPU time this process has used so far.
var selfCPU = cputime.Process
