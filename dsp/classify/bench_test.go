package classify

import (
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/testaudio"
)

// BenchmarkAnalyze measures classification and every cut detector on
// three minutes of 48 kHz stereo speech and music, written in blocks of
// 4096 frames as audio.Copy does. x_realtime is audio seconds per second
// of wall-clock time on one goroutine:
//
//	go test -run '^$' -bench Analyze -benchtime 3x ./dsp/classify/
func BenchmarkAnalyze(b *testing.B) {
	var x []float64
	for len(x) < 180*testFS {
		p := makeProgramme(b, "speech:25", "music-testaudio:20", "speech:20", "music-beat:15")
		x = append(x, p.x...)
	}
	x = x[:180*testFS]
	right := testaudio.Add(testaudio.Scale(append([]float64(nil), x...), 0.8), testaudio.WhiteNoise(len(x), 0.001, 1))
	buf := audio.Buffer{x, right}
	f := audio.Format{SampleRate: testFS, Channels: 2}
	view := make(audio.Buffer, 2)
	b.ResetTimer()
	for b.Loop() {
		a, err := NewClassifier(f, Auto)
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < len(x); i += audio.DefaultBlock {
			if err := a.Write(buf.SliceInto(view, i, min(len(x), i+audio.DefaultBlock))); err != nil {
				b.Fatal(err)
			}
		}
		r := a.Finish()
		r.Cuts(CutOptions{Silence: true, Filler: true, Cough: true, Music: true})
	}
	b.ReportMetric(180*float64(b.N)/b.Elapsed().Seconds(), "x_realtime")
}

// BenchmarkCutter renders ten seconds of 48 kHz stereo with a cut every
// half second through the Cutter in blocks of 4096 frames. Its allocs/op
// are those of building the source and the Cutter; TestCutterZeroAllocs
// checks that Read itself allocates nothing.
func BenchmarkCutter(b *testing.B) {
	x := testaudio.WhiteNoise(10*testFS, 0.1, 1)
	src := audio.Buffer{x, x}
	var cuts Cuts
	for s := int64(testFS / 4); s+testFS/8 < int64(len(x)); s += testFS / 2 {
		cuts = append(cuts, Cut{s, s + testFS/8, CutSilence})
	}
	buf := audio.NewBuffer(2, audio.DefaultBlock)
	b.ReportAllocs()
	for b.Loop() {
		c, err := NewCutter(audio.NewBufferSource(src, testFS), cuts, CutterOptions{Fade: DefaultFade})
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := c.Read(buf); err != nil {
				break
			}
		}
	}
	b.ReportMetric(10*float64(b.N)/b.Elapsed().Seconds(), "x_realtime")
}
