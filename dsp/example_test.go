package dsp_test

import (
	"context"
	"fmt"
	"math"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	"github.com/audiopost/audiopost/dsp"
)

// A true-peak limiter keeps a signal 6 dB too hot under its ceiling
// without delaying it or changing its length.
func ExampleNewLimiter() {
	in := audiotest.Sine(2, 48000, 997, 2, 48000) // peaks at +6 dBFS
	lim := dsp.NewLimiter(audio.NewBufferSource(in, 48000), -1)
	out, _ := audio.ReadAll(context.Background(), lim)
	peak := 0.0
	for _, ch := range out {
		for _, v := range ch {
			peak = math.Max(peak, math.Abs(v))
		}
	}
	fmt.Printf("frames in %d, out %d\n", in.Frames(), out.Frames())
	fmt.Printf("sample peak below -1 dBFS: %v\n", 20*math.Log10(peak) <= -1)
	// Output:
	// frames in 48000, out 48000
	// sample peak below -1 dBFS: true
}

// The Analyzer measures a recording in a first pass; the nodes built from
// its Analysis know the whole file.
func ExampleNewAnalyzer() {
	const fs = 48000
	b := audiotest.Sine(1, fs, 440, 0.1, 5*fs)
	a := dsp.NewAnalyzer(audio.Format{SampleRate: fs, Channels: 1}, true)
	audio.Copy(context.Background(), a, audio.NewBufferSource(b, fs))
	an := a.Finish()
	lv := an.Levels()
	fmt.Printf("%d blocks, integrated %.1f LUFS\n", len(an.Energy), lv.Integrated)
	// Output:
	// 50 blocks, integrated -23.7 LUFS
}

// Compressor presets are relative to the programme's speech level.
func ExampleCompressorPreset() {
	p, _ := dsp.CompressorPreset(dsp.Medium, -24)
	fmt.Printf("threshold %.0f dBFS, ratio %.0f:1, knee %.0f dB, attack %.0f ms, release %.0f ms\n",
		p.ThresholdDB, p.Ratio, p.KneeDB, p.Attack*1000, p.Release*1000)
	// Output:
	// threshold -21 dBFS, ratio 3:1, knee 6 dB, attack 5 ms, release 120 ms
}

// The leveler's plan brings a quiet and a loud passage to a common level.
func ExampleLevelerPlan() {
	const fs = 48000
	quiet := audiotest.Sine(1, fs, 300, 0.01, 4*fs)
	loud := audiotest.Sine(1, fs, 300, 0.1, 4*fs)
	x := append(append(quiet[0], make([]float64, fs)...), loud[0]...)
	a := dsp.NewAnalyzer(audio.Format{SampleRate: fs, Channels: 1}, true)
	a.Write(audio.Buffer{x})
	plan := dsp.LevelerPlan(a.Finish(), dsp.LevelerOptions{Strength: 1})
	fmt.Printf("quiet passage %+.0f dB, loud passage %+.0f dB\n", plan.DB[20], plan.DB[70])
	// Output:
	// quiet passage +10 dB, loud passage -10 dB
}

// Biquad designs work at any sample rate; Response gives their gain.
func ExamplePeakingCoeffs() {
	c := dsp.PeakingCoeffs(44100, 1000, 1, 6)
	fmt.Printf("%.1f dB at 1 kHz, %.1f dB at 10 kHz\n", c.Response(44100, 1000), c.Response(44100, 10000))
	// Output:
	// 6.0 dB at 1 kHz, 0.0 dB at 10 kHz
}
