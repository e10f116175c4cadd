package dsp_test

import (
	"context"
	"fmt"
	"log"
	"math"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	"github.com/audiopost/audiopost/dsp"
	"github.com/audiopost/audiopost/loudness"
)

// A two-pass graph, as in the package documentation: analyse, then
// high-pass, level, compress and limit a fresh read of the same input.
func Example() {
	ctx := context.Background()
	const fs = 48000
	quiet, loud := talk(fs, 4, 0.02), talk(fs, 4, 0.2)
	in := audio.Buffer{append(append(quiet, make([]float64, fs)...), loud...)}
	open := func() audio.Source { return audio.NewBufferSource(in, fs) }

	an, err := dsp.Analyze(ctx, open(), dsp.AnalyzerOptions{Spectrum: true})
	if err != nil {
		log.Fatal(err)
	}
	var src audio.Source
	src, err = dsp.NewHighPass(open(), an)
	if err == nil {
		src, err = dsp.NewLeveler(src, an, dsp.LevelerOptions{Strength: 1})
	}
	var p dsp.CompressorParams
	if err == nil {
		p, err = dsp.CompressorPreset(dsp.Medium, an.SpeechRMS())
	}
	if err == nil {
		src, err = dsp.NewCompressor(src, p)
	}
	if err == nil {
		src, err = dsp.NewLimiter(src, -1)
	}
	if err != nil {
		log.Fatal(err)
	}
	out, err := audio.ReadAll(ctx, src)
	if err != nil {
		log.Fatal(err)
	}
	level := func(x []float64) float64 {
		var s float64
		for _, v := range x {
			s += v * v
		}
		return 10 * math.Log10(s/float64(len(x)))
	}
	fmt.Printf("input:  %.0f and %.0f dBFS\n", level(in[0][fs:3*fs]), level(in[0][6*fs:8*fs]))
	fmt.Printf("output: %.0f and %.0f dBFS\n", level(out[0][fs:3*fs]), level(out[0][6*fs:8*fs]))
	// Output:
	// input:  -48 and -28 dBFS
	// output: -40 and -40 dBFS
}

// talk is seconds of a voice-like test signal at peak amplitude amp: a
// 130 Hz harmonic series under a 4 Hz syllable rhythm, with a short pause
// every two seconds, which the classifier hears as speech.
func talk(fs int, seconds, amp float64) []float64 {
	x := make([]float64, int(seconds*float64(fs)))
	for i := range x {
		t := float64(i) / float64(fs)
		var v float64
		for k := 1.0; k <= 12; k++ {
			v += math.Sin(2*math.Pi*130*(1+0.1*math.Sin(2*math.Pi*0.7*t))*k*t) / k
		}
		if env := math.Sin(2 * math.Pi * 4 * t); env > 0 && math.Mod(t, 2) < 1.6 {
			x[i] = amp / 2 * env * v
		}
	}
	return x
}

// A true-peak limiter keeps a signal 6 dB too hot under its ceiling
// without delaying it or changing its length.
func ExampleNewLimiter() {
	in := audiotest.Sine(2, 48000, 997, 2, 48000) // peaks at +6 dBFS
	lim, err := dsp.NewLimiter(audio.NewBufferSource(in, 48000), -1)
	if err != nil {
		log.Fatal(err)
	}
	out, _ := audio.ReadAll(context.Background(), lim)
	r, _ := loudness.MeasureBuffer(out, 48000, loudness.Options{Mode: loudness.ModeTruePeak})
	fmt.Printf("frames in %d, out %d\n", in.Frames(), out.Frames())
	fmt.Printf("true peak at or below -1 dBTP: %v\n", r.TruePeak <= -1)
	// Output:
	// frames in 48000, out 48000
	// true peak at or below -1 dBTP: true
}

// Analyze measures a recording in a first pass; the nodes built from its
// Analysis know the whole file.
func ExampleAnalyze() {
	const fs = 48000
	b := audiotest.Sine(1, fs, 440, 0.1, 5*fs)
	an, err := dsp.Analyze(context.Background(), audio.NewBufferSource(b, fs), dsp.AnalyzerOptions{Spectrum: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d blocks, integrated %.1f LUFS\n", len(an.Energy), an.Loudness.Integrated)
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
	x := append(append(talk(fs, 4, 0.01), make([]float64, fs)...), talk(fs, 4, 0.1)...)
	an, err := dsp.Analyze(context.Background(), audio.NewBufferSource(audio.Buffer{x}, fs), dsp.AnalyzerOptions{Spectrum: true})
	if err != nil {
		log.Fatal(err)
	}
	plan := dsp.LevelerPlan(an, dsp.LevelerOptions{Strength: 1})
	fmt.Printf("quiet passage %+.0f dB, loud passage %+.0f dB\n", plan.DB[20], plan.DB[70])
	// Output:
	// quiet passage +10 dB, loud passage -9 dB
}

// Biquad designs work at any sample rate; Response gives their gain.
func ExamplePeakingCoeffs() {
	c := dsp.PeakingCoeffs(44100, 1000, 1, 6)
	fmt.Printf("%.1f dB at 1 kHz, %.1f dB at 10 kHz\n", c.Response(44100, 1000), c.Response(44100, 10000))
	// Output:
	// 6.0 dB at 1 kHz, 0.0 dB at 10 kHz
}
