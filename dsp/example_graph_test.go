package dsp_test

import (
	"context"
	"fmt"
	"math"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	"github.com/audiopost/audiopost/dsp"
	"github.com/audiopost/audiopost/loudness"
)

// A mono voice in the centre over a stereo music bed 18 dB down, and a
// jingle on the right after a second of silence. The mix lasts until
// the jingle ends.
func ExampleNewMix() {
	const fs = 48000
	voice := audio.NewBufferSource(audiotest.Sine(1, fs, 300, 0.5, 2*fs), fs)
	bed := audio.NewBufferSource(audiotest.Sine(2, fs, 100, 0.5, 3*fs), fs)
	jingle := audio.NewBufferSource(audiotest.Sine(1, fs, 1000, 0.5, fs/2), fs)
	mix, err := dsp.NewMix([]dsp.MixInput{
		{Source: voice},
		{Source: bed, GainDB: -18},
		{Source: jingle, Pan: 1, Offset: 4 * fs},
	}, dsp.MixOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer mix.Close() // closes every input
	out, _ := audio.ReadAll(context.Background(), mix)
	peak := func(c, from, to int) float64 {
		p := 0.0
		for _, v := range out[c][from*fs/10 : to*fs/10] {
			p = math.Max(p, math.Abs(v))
		}
		return p
	}
	fmt.Printf("%d channels, %.1f s\n", len(out), float64(out.Frames())/fs)
	fmt.Printf("0-2 s: voice (-3 dB each side) and bed: %.3f %.3f\n", peak(0, 0, 20), peak(1, 0, 20))
	fmt.Printf("2-3 s: bed alone: %.3f %.3f\n", peak(0, 20, 30), peak(1, 20, 30))
	fmt.Printf("3-4 s: silence: %.3f %.3f\n", peak(0, 30, 40), peak(1, 30, 40))
	fmt.Printf("4-4.5 s: jingle on the right: %.3f %.3f\n", peak(0, 40, 45), peak(1, 40, 45))
	// Output:
	// 2 channels, 4.5 s
	// 0-2 s: voice (-3 dB each side) and bed: 0.385 0.385
	// 2-3 s: bed alone: 0.063 0.063
	// 3-4 s: silence: 0.000 0.000
	// 4-4.5 s: jingle on the right: 0.000 0.500
}

// A Tee measures the loudness of a stream while it flows on to its
// destination, here an encoder stand-in that counts frames: one pass does
// both.
func ExampleNewTee() {
	const fs = 48000
	src := audio.NewBufferSource(audiotest.Sine(2, fs, 997, 0.1, 5*fs), fs)
	meter, _ := loudness.NewMeter(src.Format(), loudness.Options{Mode: loudness.ModeI | loudness.ModeTruePeak})
	tee, err := dsp.NewTee(src, meter)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tee.Close() // closes src, not the meter
	frames := 0
	encoder := audio.SinkFunc(func(b audio.Buffer) error { frames += b.Frames(); return nil })
	audio.Copy(context.Background(), encoder, tee)
	r := meter.Result()
	fmt.Printf("encoded %d frames; they measure %.1f LUFS, %.1f dBTP\n", frames, r.Integrated, r.TruePeak)
	// Output:
	// encoded 240000 frames; they measure -20.0 LUFS, -20.0 dBTP
}

// Two-pass normalisation: measure, then apply the gain to the target
// with a true-peak limiter behind it.
func ExampleNewNormalize() {
	const fs = 48000
	quiet := audiotest.Sine(2, fs, 997, 0.02, 5*fs)
	measured, _ := loudness.MeasureBuffer(quiet, fs, loudness.Options{})
	norm, err := dsp.NewNormalize(audio.NewBufferSource(quiet, fs), dsp.NormalizeOptions{
		TargetLUFS:  -16,
		Measurement: &measured,
		Method:      loudness.Program,
		CeilingDBTP: -1,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	after, _ := loudness.Measure(context.Background(), norm, loudness.Options{})
	fmt.Printf("%.1f LUFS + %.1f dB = %.1f LUFS, true peak %.1f dBTP\n", measured.Integrated, norm.GainDB(), after.Integrated, after.TruePeak)
	// Output:
	// -34.0 LUFS + 18.0 dB = -16.0 LUFS, true peak -16.0 dBTP
}

// Converting CD audio to 48 kHz: the output keeps the input's timing and
// has exactly round(frames*48000/44100) frames.
func ExampleNewResampler() {
	in := audiotest.Sine(2, 44100, 1000, 0.5, 44100)
	r, err := dsp.NewResampler(audio.NewBufferSource(in, 44100), 48000, dsp.ResampleOptions{Quality: dsp.ResampleHigh})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	out, _ := audio.ReadAll(context.Background(), r)
	// Away from the edges (where the input starts and stops abruptly) the
	// output is the same sine sampled at 48 kHz, to within -120 dB.
	worst := 0.0
	for i := 4800; i < 43200; i++ {
		ideal := 0.5 * math.Sin(2*math.Pi*1000*float64(i)/48000)
		worst = math.Max(worst, math.Abs(out[0][i]-ideal))
	}
	fmt.Printf("%d frames at %d Hz -> %d frames at %d Hz\n", in.Frames(), 44100, out.Frames(), r.Format().SampleRate)
	fmt.Printf("largest deviation from the ideal sine below -120 dB: %v\n", 20*math.Log10(worst/0.5) < -120)
	// Output:
	// 44100 frames at 44100 Hz -> 48000 frames at 48000 Hz
	// largest deviation from the ideal sine below -120 dB: true
}
