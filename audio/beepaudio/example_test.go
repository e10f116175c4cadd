package beepaudio_test

import (
	"context"
	"fmt"
	"math"

	"github.com/gopxl/beep/v2"
	"github.com/gopxl/beep/v2/effects"
	"github.com/gopxl/beep/v2/generators"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/beepaudio"
	"github.com/audiopost/audiopost/dsp"
)

// A beep generator, made 6 dB too hot by a beep effect, goes through
// audiopost's true-peak limiter.
func ExampleNewSource() {
	const rate = beep.SampleRate(48000)
	sine, _ := generators.SineTone(rate, 997)
	hot := &effects.Volume{Streamer: beep.Take(rate.N(1e9), sine), Base: 2, Volume: 1} // x2: +6 dB
	src, err := beepaudio.NewSource(hot, rate, beepaudio.Stereo)
	if err != nil {
		panic(err)
	}
	lim, err := dsp.NewLimiter(src, -1)
	if err != nil {
		panic(err)
	}
	out, _ := audio.ReadAll(context.Background(), lim)
	peak := 0.0
	for _, ch := range out {
		for _, v := range ch {
			peak = math.Max(peak, math.Abs(v))
		}
	}
	fmt.Printf("%d channels, %d frames, peak below -1 dBFS: %v\n", len(out), out.Frames(), 20*math.Log10(peak) <= -1)
	// Output:
	// 2 channels, 48000 frames, peak below -1 dBFS: true
}

// An audiopost Source plays through beep: a mono source lands on both
// sides, and beep's Format says it is mono for beep's encoders.
func ExampleNewStreamer() {
	mono := audio.Buffer{{0.5, -0.25, 0.125}}
	st, err := beepaudio.NewStreamer(audio.NewBufferSource(mono, 44100))
	if err != nil {
		panic(err)
	}
	frames := make([][2]float64, 8)
	n, ok := st.Stream(frames)
	fmt.Println(st.Format().SampleRate, st.Format().NumChannels, n, ok, frames[:n])
	n, ok = st.Stream(frames)
	fmt.Println(n, ok, st.Err())
	// Output:
	// 44100 1 3 true [[0.5 0.5] [-0.25 -0.25] [0.125 0.125]]
	// 0 false <nil>
}
