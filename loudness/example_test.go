package loudness_test

import (
	"fmt"
	"math"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/loudness"
)

// A Meter is a Sink: write blocks as they come, read the result at the end.
// Here: the EBU calibration tone, 1 kHz at -23 dBFS on both channels.
func ExampleMeter() {
	const rate = 48000
	m, err := loudness.NewMeter(audio.Format{SampleRate: rate, Channels: 2}, loudness.Options{Mode: loudness.ModeEBU})
	if err != nil {
		panic(err)
	}
	block := audio.NewBuffer(2, 4800)
	amp := math.Pow(10, -23.0/20)
	for i := 0; i < 20*rate; i += block.Frames() {
		for k := range block[0] {
			v := amp * math.Sin(2*math.Pi*1000*float64(i+k)/rate)
			block[0][k], block[1][k] = v, v
		}
		if err := m.Write(block); err != nil {
			panic(err)
		}
	}
	r := m.Result()
	fmt.Printf("I %.1f LUFS, LRA %.1f LU, max M %.1f LUFS, true peak %.1f dBTP\n",
		r.Integrated, r.LRA, r.MaxMomentary, r.TruePeak)
	// Output: I -23.0 LUFS, LRA 0.0 LU, max M -23.0 LUFS, true peak -23.0 dBTP
}

// Too little audio gives -Inf readings and an error saying why.
func ExampleMeasureBuffer() {
	r, _ := loudness.MeasureBuffer(audio.NewBuffer(1, 4800), 48000, loudness.Options{})
	fmt.Println(r.Integrated, r.Err)
	// Output: -Inf loudness: input shorter than one 400 ms block
}

// The true-peak detector on its own, as a limiter would use it: a tone at a
// quarter of the sample rate whose samples all miss the crests by 45°
// (Tech 3341 case 16), faded in and out over 10 ms.
func ExampleTruePeakDetector() {
	const rate, fade = 48000, 480
	x := make([]float64, 4800)
	for i := range x {
		g := min(1, float64(min(i, len(x)-1-i))/fade)
		x[i] = g * 0.5 * math.Sin(math.Pi/2*float64(i)+math.Pi/4)
	}
	d := loudness.NewTruePeakDetector(rate, 1)
	tp := max(d.Process(0, x), d.Pending(0))
	sp := 0.0
	for _, v := range x {
		sp = max(sp, math.Abs(v))
	}
	fmt.Printf("sample peak %.1f dBFS, true peak %.1f dBTP, %dx oversampling, %d frames delay\n",
		20*math.Log10(sp), 20*math.Log10(tp), d.Factor(), d.Delay())
	// Output: sample peak -9.0 dBFS, true peak -6.0 dBTP, 4x oversampling, 6 frames delay
}

// Two meters measure the halves of a programme at once, each on a core of
// its own, and Append joins them into the reading of one meter. The
// second is primed with the half second before its half and starts at
// the first's length (Options.Offset). Here: a tone that steps from -30
// to -20 dBFS in the middle of 20 s.
func ExampleMeter_Append() {
	const rate, half = 48000, 10 * 48000
	x := make([]float64, 2*half)
	for i := range x {
		amp := math.Pow(10, -30.0/20)
		if i >= half {
			amp = math.Pow(10, -20.0/20)
		}
		x[i] = amp * math.Sin(2*math.Pi*1000*float64(i)/rate)
	}
	f := audio.Format{SampleRate: rate, Channels: 1}
	mode := loudness.ModeI | loudness.ModeLRA
	first, _ := loudness.NewMeter(f, loudness.Options{Mode: mode})
	second, _ := loudness.NewMeter(f, loudness.Options{Mode: mode, Offset: half})
	done := make(chan error)
	go func() { done <- first.Write(audio.Buffer{x[:half]}) }()
	if err := second.Prime(audio.Buffer{x[half-rate/2 : half]}); err != nil {
		panic(err)
	}
	if err := second.Write(audio.Buffer{x[half:]}); err != nil {
		panic(err)
	}
	if err := <-done; err != nil {
		panic(err)
	}
	if err := first.Append(second); err != nil {
		panic(err)
	}
	whole, _ := loudness.MeasureBuffer(audio.Buffer{x}, rate, loudness.Options{Mode: mode})
	r := first.Result()
	fmt.Printf("joined: I %.2f LUFS, LRA %.2f LU; one meter: I %.2f LUFS, LRA %.2f LU\n", r.Integrated, r.LRA, whole.Integrated, whole.LRA)
	// Output: joined: I -25.60 LUFS, LRA 10.00 LU; one meter: I -25.60 LUFS, LRA 10.00 LU
}
