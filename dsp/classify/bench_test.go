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
		a, err := NewAnalyzer(f, Auto)
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
