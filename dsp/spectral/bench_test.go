package spectral

import (
	"context"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/cputime"
)

// cpuTime is the CPU time the process has used, user and system.
var cpuTime = cputime.Process

// Per-node costs on 20 s of 48 kHz stereo held in memory; x_realtime_cpu
// is per CPU second, the figure to compare on a shared machine:
//
//	go test -run XXX -bench . -benchtime=3x ./dsp/spectral
func BenchmarkNodes(b *testing.B) {
	const secs = 20
	in := stereoTest(fs, secs)
	p := analyse(b, in, ProfilerOptions{})
	discard := audio.SinkFunc(func(audio.Buffer) error { return nil })
	run := func(b *testing.B, open func() audio.Source) {
		buf := audio.NewBuffer(2, audio.DefaultBlock)
		b.ReportAllocs()
		before := cpuTime()
		for b.Loop() {
			if _, err := audio.CopyBuffer(context.Background(), discard, open(), buf); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(secs*float64(b.N)/b.Elapsed().Seconds(), "x_realtime")
		b.ReportMetric(secs*float64(b.N)/(cpuTime()-before).Seconds(), "x_realtime_cpu")
	}
	b.Run("analyzer", func(b *testing.B) {
		b.ReportAllocs()
		before := cpuTime()
		for b.Loop() {
			a, _ := NewProfiler(audio.Format{SampleRate: fs, Channels: 2}, ProfilerOptions{})
			audio.Copy(context.Background(), a, audio.NewBufferSource(in, fs))
			a.Finish()
		}
		b.ReportMetric(secs*float64(b.N)/b.Elapsed().Seconds(), "x_realtime")
		b.ReportMetric(secs*float64(b.N)/(cpuTime()-before).Seconds(), "x_realtime_cpu")
	})
	b.Run("stft-only", func(b *testing.B) {
		run(b, func() audio.Source {
			d, _ := NewDenoiser(audio.NewBufferSource(in, fs), DenoiserOptions{Settings: Settings{Method: Off}})
			return d
		})
	})
	for _, m := range []Method{Static, Dynamic, SpeechIsolation} {
		b.Run(m.String(), func(b *testing.B) {
			run(b, func() audio.Source {
				d, _ := NewDenoiser(audio.NewBufferSource(in, fs), DenoiserOptions{Settings: Settings{Method: m, DeverbDB: -1}, Profile: p})
				return d
			})
		})
	}
	// The reverb reduction with its WPE stage, in a room given as 0.7 s.
	b.Run("dynamic-deverb", func(b *testing.B) {
		run(b, func() audio.Source {
			d, _ := NewDenoiser(audio.NewBufferSource(in, fs), DenoiserOptions{Settings: Settings{Method: Dynamic}, Profile: p, RT60: 0.7})
			return d
		})
	})
	// The same without the learned mask after the rule (dvmask.go): its
	// cost is the difference.
	b.Run("dynamic-deverb-rule", func(b *testing.B) {
		run(b, func() audio.Source {
			d, _ := NewDenoiser(audio.NewBufferSource(in, fs), DenoiserOptions{Settings: Settings{Method: Dynamic}, Profile: p, RT60: 0.7})
			d.dvm = nil
			return d
		})
	})
	// Dynamic-deverb in a room the Profile measured at 0.7 s and DRR 0 dB, as
	// the engine runs it: WPE on wpeBlockFor's longer blocks and
	// wpeContextLow.
	room := *p
	room.RT60, room.DRRDB = 0.7, 0
	b.Run("dynamic-deverb-room", func(b *testing.B) {
		run(b, func() audio.Source {
			d, _ := NewDenoiser(audio.NewBufferSource(in, fs), DenoiserOptions{Settings: Settings{Method: Dynamic}, Profile: &room})
			return d
		})
	})
	b.Run("dehum", func(b *testing.B) {
		run(b, func() audio.Source {
			d, _ := NewDehum(audio.NewBufferSource(in, fs), DehumOptions{Profile: p})
			return d
		})
	})
	b.Run("debreath", func(b *testing.B) {
		run(b, func() audio.Source {
			d, _ := NewDebreath(audio.NewBufferSource(in, fs), DebreathOptions{AmountDB: 12})
			return d
		})
	})
}
