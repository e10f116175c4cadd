package spectral_test

import (
	"context"
	"fmt"
	"math"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	"github.com/audiopost/audiopost/dsp/spectral"
)

// level returns the RMS level of x[from:to] in dBFS.
func level(x []float64, from, to int) float64 {
	var s float64
	for _, v := range x[from:to] {
		s += v * v
	}
	return 10 * math.Log10(s/float64(to-from))
}

// A tone that comes and goes over steady hiss: the Profiler learns the
// hiss in a first pass, and the Static denoiser removes it from the pauses
// while the tone passes.
func ExampleNewDenoiser() {
	const fs = 48000
	x := audiotest.Noise(1, 6*fs, 0.01, 1) // hiss at about -45 dBFS
	tone := audiotest.Sine(1, fs, 440, 0.3, 6*fs)
	for i := range x[0] {
		if (i/fs)%2 == 1 { // tone in the odd seconds
			x[0][i] += tone[0][i]
		}
	}
	an, _ := spectral.NewProfiler(audio.Format{SampleRate: fs, Channels: 1}, spectral.ProfilerOptions{})
	audio.Copy(context.Background(), an, audio.NewBufferSource(x, fs))
	p := an.Finish()
	fmt.Printf("noise %.0f dBFS, SNR %.0f dB, hum %d Hz\n", p.NoiseDB, p.SNRDB, p.Hum.Base)

	d, _ := spectral.NewDenoiser(audio.NewBufferSource(x, fs), spectral.DenoiserOptions{
		Settings: spectral.Settings{Method: spectral.Static, ReductionDB: 24},
		Profile:  p,
	})
	y, _ := audio.ReadAll(context.Background(), d)
	fmt.Printf("frames in %d, out %d\n", x.Frames(), y.Frames())
	fmt.Printf("pause: %.0f dB quieter\n", level(x[0], 4*fs+fs/4, 5*fs-fs/4)-level(y[0], 4*fs+fs/4, 5*fs-fs/4))
	fmt.Printf("tone: within 0.5 dB: %v\n", math.Abs(level(x[0], 3*fs+fs/4, 4*fs-fs/4)-level(y[0], 3*fs+fs/4, 4*fs-fs/4)) < 0.5)
	st := d.Stats()[0]
	fmt.Printf("statistics: %s, reduction cap %.0f dB\n", st.Method, st.ReductionDB)
	// Output:
	// noise -45 dBFS, SNR 31 dB, hum 0 Hz
	// frames in 288000, out 288000
	// pause: 23 dB quieter
	// tone: within 0.5 dB: true
	// statistics: static, reduction cap 24 dB
}

// Mains hum under a tone: Dehum detects 50 Hz in the first seconds and
// subtracts it and its harmonics, leaving the tone.
func ExampleNewDehum() {
	const fs = 48000
	x := audiotest.Sine(1, fs, 1000, 0.2, 5*fs)
	hum := audiotest.Sine(1, fs, 50, 0.02, 5*fs)
	hum3 := audiotest.Sine(1, fs, 150, 0.01, 5*fs)
	for i := range x[0] {
		x[0][i] += hum[0][i] + hum3[0][i]
	}
	h, _ := spectral.NewDehum(audio.NewBufferSource(x, fs), spectral.DehumOptions{})
	y, _ := audio.ReadAll(context.Background(), h)
	var e float64
	for i := fs; i < 4*fs; i++ {
		d := y[0][i] - x[0][i] + hum[0][i] + hum3[0][i] // what is left of the hum
		e += d * d
	}
	fmt.Printf("removed %d Hz hum, %d harmonics detected\n", h.Hum().Base, len(h.Hum().Harmonics))
	fmt.Printf("hum reduced by more than 40 dB: %v\n", 10*math.Log10(e/float64(3*fs)) < level(hum[0], 0, 5*fs)-40)
	// Output:
	// removed 50 Hz hum, 2 harmonics detected
	// hum reduced by more than 40 dB: true
}

// Mains hum whose frequency drifts by half a hertz within two seconds
// (the twentieth harmonic by ten) under a quieter tone: Dehum follows the
// drift and removes the hum up to 1 kHz, the tone stays.
func ExampleNewDehum_drift() {
	const fs = 48000
	x := audiotest.Sine(1, fs, 440, 0.003, 2*fs) // the tone
	tone := append([]float64(nil), x[0]...)
	var theta float64
	for i := range x[0] {
		for h := 1.0; h*50 < 1000; h++ {
			x[0][i] += 0.01 / h * math.Sin(h*theta)
		}
		theta += 2 * math.Pi * (49.75 + 0.5*float64(i)/float64(2*fs)) / fs
	}
	h, _ := spectral.NewDehum(audio.NewBufferSource(x, fs), spectral.DehumOptions{})
	y, _ := audio.ReadAll(context.Background(), h)
	hum, left := make([]float64, 2*fs), make([]float64, 2*fs)
	for i := range hum {
		hum[i], left[i] = x[0][i]-tone[i], y[0][i]-tone[i]
	}
	fmt.Printf("removed %d Hz hum\n", h.Hum().Base)
	fmt.Printf("hum reduced by more than 30 dB: %v\n", level(hum, 0, 2*fs)-level(left, 0, 2*fs) > 30)
	// Output:
	// removed 50 Hz hum
	// hum reduced by more than 30 dB: true
}

// Segments give parts of a recording their own settings; the switch is
// crossfaded and the statistics are per segment.
func ExampleDenoiserOptions_segments() {
	const fs = 48000
	x := audiotest.Noise(2, 9*fs, 0.01, 2)
	d, _ := spectral.NewDenoiser(audio.NewBufferSource(x, fs), spectral.DenoiserOptions{
		Settings: spectral.Settings{Method: spectral.Dynamic, ReductionDB: 12},
		Segments: []spectral.Segment{
			{Start: 3 * fs, Settings: spectral.Settings{Method: spectral.Off}},
			{Start: 6 * fs, Settings: spectral.Settings{Method: spectral.Classic, ReductionDB: 6}},
		},
	})
	audio.ReadAll(context.Background(), d)
	for _, s := range d.Stats() {
		fmt.Printf("%.0f-%.0f s %-8s cap %2.0f dB, noise lowered %2.0f dB\n",
			float64(s.Start)/fs, float64(s.End)/fs, s.Method, s.ReductionDB, s.NoiseBeforeDB-s.NoiseAfterDB)
	}
	// Output:
	// 0-3 s dynamic  cap 12 dB, noise lowered 12 dB
	// 3-6 s off      cap  0 dB, noise lowered  0 dB
	// 6-9 s classic  cap  6 dB, noise lowered  6 dB
}

// Two vowel-like phrases with a breath between them: Debreath finds the
// breath (1.85-2.15 s) and lowers it by exactly the amount asked, with
// the silence around it up to 100 ms away, where its start and end fade;
// the phrases stay.
func ExampleNewDebreath() {
	const fs = 48000
	x := audio.NewBuffer(1, 4*fs)
	breath := audiotest.Noise(1, fs*3/10, 0.01, 3) // 300 ms of hiss, 30 dB under the vowels
	for i := range x[0] {
		t := float64(i) / fs
		if t < 1.5 || t >= 2.5 { // the phrases
			for h := 1.0; h <= 5; h++ {
				x[0][i] += 0.1 / h * math.Sin(2*math.Pi*150*h*t)
			}
		}
		if j := i - 1.85*fs; j >= 0 && j < len(breath[0]) {
			x[0][i] += breath[0][j] * math.Sin(math.Pi*float64(j)/float64(len(breath[0])))
		}
	}
	b, _ := spectral.NewDebreath(audio.NewBufferSource(x, fs), spectral.DebreathOptions{AmountDB: 12})
	y, _ := audio.ReadAll(context.Background(), b)
	for _, s := range b.Breaths() {
		fmt.Printf("breath %.2f-%.2f s\n", float64(s.Start)/fs, float64(s.End)/fs)
	}
	fmt.Printf("breath lowered %.1f dB, phrases %.1f dB\n",
		level(x[0], 19*fs/10, 21*fs/10)-level(y[0], 19*fs/10, 21*fs/10), level(x[0], fs/2, fs)-level(y[0], fs/2, fs))
	// Output:
	// breath 1.75-2.25 s
	// breath lowered 12.0 dB, phrases 0.0 dB
}
