package classify_test

import (
	"context"
	"fmt"
	"math"
	"os"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp/classify"
)

const rate = 48000

// chords returns seconds of plucked chords, a new one every half second.
func chords(seconds float64) []float64 {
	roots := []float64{220, 174.6, 196, 246.9}
	x := make([]float64, int(seconds*rate))
	for i := range x {
		t := float64(i) / rate
		k := int(t / 0.5)
		r := roots[k%len(roots)]
		env := math.Exp(-3 * (t - 0.5*float64(k)))
		for _, m := range []float64{1, 1.25, 1.5, 2} {
			x[i] += 0.05 * env * math.Sin(2*math.Pi*r*m*t)
		}
	}
	return x
}

// Classify a recording: two seconds of silence, eight of music, two of
// silence.
func ExampleClassifier() {
	x := append(append(make([]float64, 2*rate), chords(8)...), make([]float64, 2*rate)...)
	a, err := classify.NewClassifier(audio.Format{SampleRate: rate, Channels: 1}, classify.Auto)
	if err != nil {
		panic(err)
	}
	a.Write(audio.Buffer{x}) // or audio.Copy(ctx, a, src)
	r := a.Finish()

	count := map[classify.Label]int{}
	for _, l := range r.Labels {
		count[l]++
	}
	fmt.Printf("%d blocks of %d frames: %d silence, %d music, %d speech\n",
		len(r.Labels), r.BlockLen, count[classify.Silence], count[classify.Music], count[classify.Speech])
	for _, s := range r.Segments {
		start, end := s.Seconds(r.SampleRate)
		fmt.Printf("%s %.1f-%.1f s\n", s.Label, start, end)
	}
	// Output:
	// 120 blocks of 4800 frames: 38 silence, 82 music, 0 speech
	// music 0.0-12.0 s
}

// Shorten the pauses between bursts of sound and render the result.
func ExampleResult_Cuts() {
	burst := chords(1.5)
	var x []float64
	for i := 0; i < 3; i++ {
		x = append(append(x, burst...), make([]float64, 3*rate)...) // 3 s pauses
	}
	a, _ := classify.NewClassifier(audio.Format{SampleRate: rate, Channels: 1}, classify.Auto)
	a.Write(audio.Buffer{x})
	r := a.Finish()

	cuts := r.Cuts(classify.CutOptions{Silence: true, MaxPause: 1, KeepPause: 0.6, TrimEnd: 0.5})
	for _, c := range cuts {
		fmt.Printf("cut %.2f-%.2f s (%v)\n", float64(c.Start)/rate, float64(c.End)/rate, c.Reason)
	}
	out, _ := classify.NewCutter(audio.NewBufferSource(audio.Buffer{x}, rate), cuts,
		classify.CutterOptions{Fade: classify.DefaultFade})
	y, _ := audio.ReadAll(context.Background(), out)
	fmt.Printf("%.2f s -> %.2f s\n", float64(len(x))/rate, float64(y.Frames())/rate)
	// Output:
	// cut 1.83-4.16 s (silence)
	// cut 6.33-8.66 s (silence)
	// cut 10.83-13.50 s (silence+trim)
	// 13.50 s -> 6.17 s
}

// Move chapter marks with the cuts.
func ExampleTimeMap() {
	cuts := classify.Cuts{{Start: 2 * rate, End: 5 * rate, Reason: classify.CutMusic}}
	m, _ := classify.NewTimeMap(cuts, rate)
	for _, at := range []float64{1, 3, 5, 10} {
		fmt.Printf("%4.1f s -> %4.1f s\n", at, m.Seconds(at))
	}
	// Output:
	//  1.0 s ->  1.0 s
	//  3.0 s ->  2.0 s
	//  5.0 s ->  2.0 s
	// 10.0 s ->  7.0 s
}

// Merge overlapping and touching cuts from several detectors and the
// trims into one cut list.
func ExampleNormalize() {
	cuts := classify.Normalize(append(classify.Trim(60*rate, rate, 1.5, 0),
		classify.Cut{Start: 10 * rate, End: 12 * rate, Reason: classify.CutSilence},
		classify.Cut{Start: 11 * rate, End: 13 * rate, Reason: classify.CutFiller},
	), 0)
	for _, c := range cuts {
		fmt.Printf("%5.2f-%5.2f %v\n", float64(c.Start)/rate, float64(c.End)/rate, c.Reason)
	}
	fmt.Printf("kept %v\n", cuts.Kept(60*rate))
	// Output:
	//  0.00- 1.50 trim
	// 10.00-13.00 silence+filler
	// kept [{72000 480000} {624000 2880000}]
}

func ExampleWriteAudacityLabels() {
	cuts := classify.Cuts{
		{Start: 24000, End: 96000, Reason: classify.CutSilence},
		{Start: 150000, End: 170000, Reason: classify.CutFiller},
	}
	classify.WriteAudacityLabels(os.Stdout, cuts, rate)
	// Output:
	// 0.500000	2.000000	silence
	// 3.125000	3.541667	filler
}

func ExampleWriteEDL() {
	cuts := classify.Cuts{{Start: 48000, End: 72000, Reason: classify.CutCough}}
	classify.WriteEDL(os.Stdout, cuts, rate, 4*rate)
	// Output:
	// {
	//   "sample_rate": 48000,
	//   "frames": 192000,
	//   "duration": 4,
	//   "output_frames": 168000,
	//   "output_duration": 3.5,
	//   "cuts": [
	//     {
	//       "start": 1,
	//       "end": 1.5,
	//       "start_frame": 48000,
	//       "end_frame": 72000,
	//       "reason": "cough"
	//     }
	//   ],
	//   "kept": [
	//     {
	//       "start": 0,
	//       "end": 1,
	//       "start_frame": 0,
	//       "end_frame": 48000,
	//       "output_start": 0
	//     },
	//     {
	//       "start": 1.5,
	//       "end": 4,
	//       "start_frame": 72000,
	//       "end_frame": 192000,
	//       "output_start": 1
	//     }
	//   ]
	// }
}

// The API's music_speech statistics: segments longer than 20 s, after a
// short jingle has been merged into the speech around it.
func ExampleMergeSegments() {
	segs := []classify.Segment{
		{Label: classify.Speech, Start: 0, End: 30 * rate},
		{Label: classify.Music, Start: 30 * rate, End: 34 * rate},
		{Label: classify.Speech, Start: 34 * rate, End: 70 * rate},
		{Label: classify.Music, Start: 70 * rate, End: 100 * rate},
	}
	for _, s := range classify.MergeSegments(segs, 20*rate) {
		a, b := s.Seconds(rate)
		fmt.Printf("%s %g-%g s\n", s.Label, a, b)
	}
	// Output:
	// speech 0-70 s
	// music 70-100 s
}
