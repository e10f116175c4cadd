package live_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp/live"
	"github.com/audiopost/audiopost/dsp/spectral"
	"github.com/audiopost/audiopost/internal/cputime"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// loop is an endless live input: a buffer played over and over.
type loop struct {
	b    audio.Buffer
	rate int
	pos  int
}

func (s *loop) Format() audio.Format { return audio.Format{SampleRate: s.rate, Channels: len(s.b)} }
func (s *loop) Read(dst audio.Buffer) (int, error) {
	n := min(dst.Frames(), s.b.Frames()-s.pos)
	for c := range dst {
		copy(dst[c][:n], s.b[c][s.pos:s.pos+n])
	}
	s.pos = (s.pos + n) % s.b.Frames()
	return n, nil
}

// programme is 20 s of 48 kHz stereo: speech-like syllables over pink
// noise with a level jump of 12 dB half way.
func programme() audio.Buffer {
	const rate = 48000
	b := audio.Buffer(testaudio.SpeechLike(rate, 20, 0.1))
	noise := testaudio.PinkNoise(b.Frames(), 0.001, 7)
	for c := range b {
		for i := range b[c] {
			if i >= b.Frames()/2 {
				b[c][i] *= 4
			}
			b[c][i] += noise[i]
		}
	}
	return b
}

// BenchmarkStreams runs the processing of 64 live 48 kHz stereo streams on
// one core, 10 ms blocks of each in turn, as a server running them would,
// and reports the share of a core one stream takes (core%/stream: the
// CPU time per second of audio of one stream, in percent, by the wall
// clock; cpu%/stream is the same by the CPU time the process used, which
// other work on the machine does not inflate). The acceptance asks under
// 2% with the default graph.
func BenchmarkStreams(b *testing.B) {
	for _, tc := range []struct {
		name string
		cfg  func() live.Config
	}{
		{"default", live.DefaultConfig},
		{"compressor", func() live.Config { c := live.DefaultConfig(); c.Compressor = "medium"; return c }},
		{"dehum", func() live.Config { c := live.DefaultConfig(); c.Dehum = &live.DehumOptions{}; return c }},
		{"denoise", func() live.Config {
			c := live.DefaultConfig()
			c.Denoise = &spectral.Settings{Method: spectral.Dynamic, DeverbDB: -1}
			return c
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			const streams, rate = 64, 48000
			in := programme()
			procs := make([]*live.Processor, streams)
			for i := range procs {
				var err error
				procs[i], err = live.New(&loop{b: in, rate: rate, pos: i * 4801 % in.Frames()}, tc.cfg())
				if err != nil {
					b.Fatal(err)
				}
			}
			buf := audio.NewBuffer(2, rate/100)
			// Three seconds of each stream before timing: the leveler and the
			// denoiser have settled.
			for k := 0; k < 300; k++ {
				for _, p := range procs {
					if _, err := p.Read(buf); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			start, cpu0 := time.Now(), cpuTime()
			blocks := 0
			for i := 0; i < b.N; i++ {
				// One second of audio of every stream per iteration.
				for k := 0; k < 100; k++ {
					for _, p := range procs {
						if _, err := p.Read(buf); err != nil {
							b.Fatal(err)
						}
					}
				}
				blocks += 100
			}
			el, cpu := time.Since(start), cpuTime()-cpu0
			audioSec := float64(blocks) / 100
			b.ReportMetric(100*el.Seconds()/audioSec/streams, "core%/stream")
			// The same from the CPU time the process used: on a machine
			// shared with other work the wall clock counts their time too.
			b.ReportMetric(100*cpu.Seconds()/audioSec/streams, "cpu%/stream")
			b.ReportMetric(float64(streams)*audioSec/el.Seconds(), "streams/core")
		})
	}
}

// cpuTime is the CPU time (user and system) the process has used.
var cpuTime = cputime.Process

// BenchmarkHour runs one hour of a 48 kHz stereo stream through the
// default graph with the denoiser, faster than real time, and reports the
// heap in use after the first minute and at the end: memory stays flat
// however long a stream runs.
func BenchmarkHour(b *testing.B) {
	const rate = 48000
	in := programme()
	for i := 0; i < b.N; i++ {
		c := live.DefaultConfig()
		c.Denoise = &spectral.Settings{Method: spectral.Dynamic, DeverbDB: -1}
		c.Compressor = "soft"
		p, err := live.New(&loop{b: in, rate: rate}, c)
		if err != nil {
			b.Fatal(err)
		}
		buf := audio.NewBuffer(2, rate/100)
		var first, peak uint64
		heap := func() uint64 {
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			return ms.HeapInuse
		}
		for s := 0; s < 3600; s++ {
			for k := 0; k < 100; k++ {
				if _, err := p.Read(buf); err != nil {
					b.Fatal(err)
				}
			}
			switch {
			case s == 60:
				first = heap()
			case s > 60 && s%600 == 0:
				peak = max(peak, heap())
			}
		}
		last := heap()
		peak = max(peak, last)
		b.ReportMetric(float64(first)/1e6, "heapMB@1min")
		b.ReportMetric(float64(peak)/1e6, "maxheapMB@10..60min")
		b.ReportMetric(float64(int64(last)-int64(first))/1e3, "growthKB")
		st := p.Stats()
		if st.Frames != 3600*rate {
			b.Fatalf("%d frames out", st.Frames)
		}
	}
}
