package benchmarks

import (
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/wav"
	"github.com/audiopost/audiopost/dsp/spectral"
	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// denoiseSeconds is the length of the noisy-speech file the denoise
// benchmark processes.
const denoiseSeconds = 180

var (
	denoiseOnce sync.Once
	denoisePath string
)

// noisySpeechFile writes (once per run) three minutes of 48 kHz stereo
// espeak-ng speech with pink noise at 15 dB SNR (independent per channel)
// and 50 Hz hum with harmonics at -40 dBFS into a temporary directory.
func noisySpeechFile(b *testing.B) string {
	denoiseOnce.Do(func() {
		const fs = 48000
		var one []float64
		for i, s := range testaudio.Sentences {
			one = append(one, testaudio.Speech(b, fs, s, testaudio.Voices[i%len(testaudio.Voices)])...)
			one = append(one, make([]float64, fs/2)...)
		}
		n := denoiseSeconds * fs
		x := make([]float64, n)
		for i := range x {
			x[i] = one[i%len(one)]
		}
		hum := testaudio.Hum(n, fs, 50, 300, math.Pow(10, -40.0/20))
		buf := audio.NewBuffer(2, n)
		for c := range buf {
			mix, _ := testaudio.MixAtSNR(x, testaudio.PinkNoise(n, 0.1, uint64(c+1)), 15)
			for i := range mix {
				buf[c][i] = 0.7*mix[i] + hum[i]
			}
		}
		dir, err := os.MkdirTemp("", "audiopost-denoise-bench")
		if err != nil {
			b.Fatal(err)
		}
		denoisePath = filepath.Join(dir, "noisy.wav")
		testaudio.WriteWAV(b, denoisePath, buf, fs)
	})
	if denoisePath == "" {
		b.Fatal("no benchmark input")
	}
	return denoisePath
}

func openWAV(b *testing.B, path string) (*wav.Decoder, *os.File) {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	d, err := wav.NewDecoder(context.Background(), f)
	if err != nil {
		b.Fatal(err)
	}
	return d, f
}

// BenchmarkDenoise runs the restoration chain on three minutes of 48 kHz
// stereo noisy speech, WAV in, output discarded, beside ffmpeg's afftdn on
// the same file in the same run, each on one core (GOMAXPROCS work is one
// goroutine; ffmpeg with -threads 1 -filter_threads 1):
//
//	go test -run XXX -bench Denoise -benchtime=1x ./benchmarks
//
// analyzer is the first pass alone (noise profile, hum, RT60);
// static-dehum is both passes: the Profiler and the Static denoiser with
// Dehum, static-dehum-render the second pass alone; dynamic-dehum the same
// with the Dynamic method, and dynamic-dehum-1pass without the Profiler
// (Dynamic tracks the noise itself; Dehum detects the hum from the first
// three seconds). x_realtime is audio seconds per wall-clock second,
// x_realtime_cpu per CPU second (the fairer figure on a shared machine).
func BenchmarkDenoise(b *testing.B) {
	path := noisySpeechFile(b)
	report := func(b *testing.B, cpu time.Duration) {
		b.ReportMetric(denoiseSeconds*float64(b.N)/b.Elapsed().Seconds(), "x_realtime")
		b.ReportMetric(denoiseSeconds*float64(b.N)/cpu.Seconds(), "x_realtime_cpu")
	}
	analyse := func(b *testing.B, buf audio.Buffer, room bool) *spectral.Profile {
		dec, f := openWAV(b, path)
		defer f.Close()
		an, err := spectral.NewProfiler(dec.Format(), spectral.ProfilerOptions{NoRoom: !room})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := audio.CopyBuffer(context.Background(), an, dec, buf); err != nil {
			b.Fatal(err)
		}
		p := an.Finish()
		if p.Hum.Base != 50 {
			b.Fatalf("hum not detected: %+v", p.Hum)
		}
		return p
	}
	// passes: 1 the Profiler only, 2 the render pass only (the profile
	// made before the clock starts), 3 both, 0 the render pass without a
	// profile.
	ours := func(m spectral.Method, deverb float64, passes int) func(b *testing.B) {
		return func(b *testing.B) {
			buf := audio.NewBuffer(2, audio.DefaultBlock)
			// The room model only when the reverb reduction is on, as the
			// product runs the Profiler.
			room := (&spectral.Restoration{Settings: spectral.Settings{Method: m, DeverbDB: deverb}}).ReducesReverb()
			var pre *spectral.Profile
			if passes == 2 {
				pre = analyse(b, buf, room)
			}
			before := selfCPU()
			for b.Loop() {
				// Pass 1: the profile.
				p := pre
				if passes&1 != 0 {
					p = analyse(b, buf, room)
				}
				if passes == 1 {
					continue
				}
				// Pass 2: dehum and denoise.
				dec, f := openWAV(b, path)
				d, err := spectral.NewDenoiser(dec, spectral.DenoiserOptions{
					Settings: spectral.Settings{Method: m, DeverbDB: deverb},
					Profile:  p, Dehum: &spectral.DehumOptions{},
				})
				if err != nil {
					b.Fatal(err)
				}
				frames, err := audio.CopyBuffer(context.Background(), audio.SinkFunc(func(audio.Buffer) error { return nil }), d, buf)
				if err != nil || frames != denoiseSeconds*48000 {
					b.Fatalf("%d frames, %v", frames, err)
				}
				d.Close()
				f.Close()
			}
			report(b, selfCPU()-before)
		}
	}
	b.Run("analyzer", ours(spectral.Static, -1, 1))
	b.Run("static-dehum", ours(spectral.Static, -1, 3))
	b.Run("static-dehum-render", ours(spectral.Static, -1, 2))
	b.Run("dynamic-dehum", ours(spectral.Dynamic, -1, 3))
	b.Run("dynamic-dehum-1pass", ours(spectral.Dynamic, -1, 0))
	b.Run("dynamic-dehum-deverb", ours(spectral.Dynamic, 0, 3))
	b.Run("speech-isolation-dehum", ours(spectral.SpeechIsolation, -1, 3))
	b.Run("ffmpeg-afftdn", func(b *testing.B) {
		ff := need.Program(b, "ffmpeg")
		var cpu time.Duration
		for b.Loop() {
			cmd := exec.Command(ff, "-nostdin", "-hide_banner", "-nostats", "-threads", "1", "-filter_threads", "1",
				"-i", path, "-af", "afftdn", "-f", "null", "-")
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%v: %v\n%s", cmd.Args, err, out)
			}
			ps := cmd.ProcessState
			cpu += ps.UserTime() + ps.SystemTime()
			_ = ps.SysUsage().(*syscall.Rusage)
		}
		report(b, cpu)
	})
}
