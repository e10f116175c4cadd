package dsp

import (
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	"github.com/audiopost/audiopost/internal/testaudio"
)

const testFS = 48000

// nodeCase builds a node over src; an is an analysis of the test signal.
type nodeCase struct {
	name string
	make func(t testing.TB, src audio.Source, an *Analysis) audio.Source
}

func nodeCases() []nodeCase {
	return []nodeCase{
		{"Gain", func(t testing.TB, src audio.Source, an *Analysis) audio.Source { return must(NewGain(src, -3)) }},
		{"GainRamp", func(t testing.TB, src audio.Source, an *Analysis) audio.Source {
			g := must(NewGain(src, 0))
			g.SetGain(-12)
			return g
		}},
		{"Biquad", func(t testing.TB, src audio.Source, an *Analysis) audio.Source {
			return must(NewBiquad(src, PeakingCoeffs(testFS, 1000, 1, 6), LowShelfCoeffs(testFS, 200, -3), HighShelfCoeffs(testFS, 6000, 2)))
		}},
		{"HighPass", func(t testing.TB, src audio.Source, an *Analysis) audio.Source {
			return must(NewHighPass(src, an))
		}},
		{"AutoEQ", func(t testing.TB, src audio.Source, an *Analysis) audio.Source {
			return must(NewAutoEQ(src, an))
		}},
		{"BWE", func(t testing.TB, src audio.Source, an *Analysis) audio.Source {
			return must(NewBWEAt(src, 4000))
		}},
		{"StudioVoice", func(t testing.TB, src audio.Source, an *Analysis) audio.Source {
			return must(NewStudioVoice(src, an))
		}},
		{"Compressor", func(t testing.TB, src audio.Source, an *Analysis) audio.Source {
			p, _ := CompressorPreset(Hard, an.SpeechRMS())
			return must(NewCompressor(src, p))
		}},
		{"CompressorPeak", func(t testing.TB, src audio.Source, an *Analysis) audio.Source {
			p, _ := CompressorPreset(Medium, an.SpeechRMS())
			p.Detector = Peak
			return must(NewCompressor(src, p))
		}},
		{"SpeechMusicCompressor", func(t testing.TB, src audio.Source, an *Analysis) audio.Source {
			p, _ := CompressorPreset(Hard, an.SpeechRMS())
			an2 := *an
			an2.Music = make([]bool, len(an.Music))
			for i := range an2.Music {
				an2.Music[i] = i%20 < 10
			}
			return must(NewSpeechMusicCompressor(src, &an2, p, Off))
		}},
		{"Limiter", func(t testing.TB, src audio.Source, an *Analysis) audio.Source {
			return must(NewLimiter(must(NewGain(src, 18)), -1))
		}},
		{"LimiterTypical", func(t testing.TB, src audio.Source, an *Analysis) audio.Source {
			return must(NewLimiter(must(NewGain(src, 12)), -1))
		}},
		{"Leveler", func(t testing.TB, src audio.Source, an *Analysis) audio.Source {
			return must(NewLeveler(src, an, LevelerOptions{Strength: 1, MusicStrength: 0.5}))
		}},
	}
}

func TestNodesContract(t *testing.T) {
	x := testaudio.SynthVoice(testFS, 3, 130, 1)
	in := stereo(x)
	an := analyse(t, in, testFS)
	for _, nc := range nodeCases() {
		t.Run(nc.name, func(t *testing.T) {
			out := audiotest.CheckSource(t, func() audio.Source {
				return nc.make(t, audio.NewBufferSource(in, testFS), an)
			})
			if out.Frames() != in.Frames() {
				t.Fatalf("output has %d frames, input %d", out.Frames(), in.Frames())
			}
		})
	}
}

func TestNodesZeroAllocs(t *testing.T) {
	x := testaudio.SynthVoice(testFS, 3, 130, 2)
	in := stereo(x)
	an := analyse(t, in, testFS)
	for _, nc := range nodeCases() {
		t.Run(nc.name, func(t *testing.T) {
			src := nc.make(t, newLoop(in, testFS, 1<<40), an)
			buf := audio.NewBuffer(2, 4096)
			for range 8 { // warm up: scratch buffers reach their size
				src.Read(buf)
			}
			if a := testing.AllocsPerRun(50, func() {
				if _, err := src.Read(buf); err != nil {
					t.Fatal(err)
				}
			}); a != 0 {
				t.Errorf("%v allocations per Read, want 0", a)
			}
		})
	}
}

func TestNodesRejectWrongShape(t *testing.T) {
	in := stereo(testaudio.SynthVoice(testFS, 1, 130, 3))
	an := analyse(t, in, testFS)
	for _, nc := range nodeCases() {
		src := nc.make(t, audio.NewBufferSource(in, testFS), an)
		if _, err := src.Read(audio.NewBuffer(1, 64)); err == nil {
			t.Errorf("%s: Read of a mono buffer from a stereo stream succeeded", nc.name)
		}
	}
}

func BenchmarkNodes(b *testing.B) {
	x := testaudio.SynthVoice(testFS, 3, 130, 2)
	in := stereo(x)
	an := analyse(b, in, testFS)
	for _, nc := range nodeCases() {
		b.Run(nc.name, func(b *testing.B) {
			src := nc.make(b, newLoop(in, testFS, 1<<40), an)
			buf := audio.NewBuffer(2, 4096)
			b.ReportAllocs()
			b.SetBytes(4096 * 2 * 8)
			b.ResetTimer()
			for range b.N {
				if _, err := src.Read(buf); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Seconds())/float64(b.N)/(4096.0/testFS), "s/s-audio")
		})
	}
}
