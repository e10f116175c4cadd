package mixdown_test

import (
	"context"
	"fmt"
	"log"
	"math"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	"github.com/audiopost/audiopost/dsp"
	"github.com/audiopost/audiopost/dsp/classify"
	"github.com/audiopost/audiopost/dsp/mixdown"
	"github.com/audiopost/audiopost/loudness"
)

// The examples use voice-like test signals that need no speech
// synthesizer: a harmonic series with syllables, spoken in turns.

// talk returns seconds of a voice at pitch f0 (peak amp) that speaks in
// the given turns, [start, end) in seconds, plus noise at noise (peak).
// Its pitch is steady: the speech/music model, fitted on
// real recordings, hears such a tone as music, so the examples name their
// tracks' material (classify.SpeechOnly, the API's msclassifier "speech")
// rather than leave it to the classifier.
func talk(seconds, f0, amp, noise float64, turns ...[2]float64) []float64 {
	n := int(seconds * fs)
	x := audiotest.Noise(1, n, noise, uint64(f0))[0]
	for _, tn := range turns {
		for i := int(tn[0] * fs); i < int(tn[1]*fs); i++ {
			t := float64(i) / fs
			syl := math.Pow(math.Sin(math.Pi*4*(t-tn[0])), 2) // 4 syllables a second
			var v float64
			for k := 1.0; k <= 10; k++ {
				v += math.Sin(2*math.Pi*f0*k*t) / k
			}
			x[i] += amp * 0.5 * syl * v
		}
	}
	return x
}

// bleed adds other, gainDB down, to x.
func bleed(x, other []float64, gainDB float64) []float64 {
	g := dsp.DBToGain(gainDB)
	for i := range x {
		x[i] += g * other[i]
	}
	return x
}

func level(x []float64, from, to float64) float64 {
	var s float64
	seg := x[int(from*fs):int(to*fs)]
	for _, v := range seg {
		s += v * v
	}
	return dsp.PowerToDB(s / float64(len(seg)))
}

// A host and a guest take turns on their own microphones; each
// microphone also picks up the other speaker 20 dB down. The analysis
// measures that coupling and tells each speaker's own voice from the
// other's bleed.
func ExampleAnalyze() {
	hostVoice := talk(12, 120, 0.5, 0, [2]float64{1, 4}, [2]float64{8, 10})
	guestVoice := talk(12, 210, 0.5, 0, [2]float64{5, 7}, [2]float64{10.5, 11.5})
	host := bleed(talk(12, 120, 0.5, 0.001, [2]float64{1, 4}, [2]float64{8, 10}), guestVoice, -20)
	guest := bleed(talk(12, 210, 0.5, 0.001, [2]float64{5, 7}, [2]float64{10.5, 11.5}), hostVoice, -20)
	an, err := mixdown.Analyze(context.Background(), []mixdown.Track{
		{Source: audio.NewBufferSource(audio.Buffer{host}, fs), Classifier: classify.SpeechOnly},
		{Source: audio.NewBufferSource(audio.Buffer{guest}, fs), Classifier: classify.SpeechOnly},
	}, mixdown.AnalyzeOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for i, name := range []string{"host", "guest"} {
		t := an.Tracks[i]
		fmt.Printf("%s: %v, speaks %.0f s, carries the other's bleed %.0f s, coupling %.0f dB\n",
			name, t.Role, t.Seconds(mixdown.Voice), t.Seconds(mixdown.Bleed), t.Coupling[1-i])
	}
	// Output:
	// host: foreground, speaks 5 s, carries the other's bleed 3 s, coupling -20 dB
	// guest: foreground, speaks 3 s, carries the other's bleed 5 s, coupling -20 dB
}

// The crossgate removes the host's bleed from the guest's microphone and
// keeps the guest; the noise gate removes the noise in between.
func ExampleNewGate() {
	hostVoice := talk(12, 120, 0.5, 0, [2]float64{1, 4}, [2]float64{8, 10})
	host := talk(12, 120, 0.5, 0.001, [2]float64{1, 4}, [2]float64{8, 10})
	guest := bleed(talk(12, 210, 0.5, 0.001, [2]float64{5, 7}), hostVoice, -20)
	an, err := mixdown.Analyze(context.Background(), []mixdown.Track{
		{Source: audio.NewBufferSource(audio.Buffer{host}, fs), Classifier: classify.SpeechOnly},
		{Source: audio.NewBufferSource(audio.Buffer{guest}, fs), Classifier: classify.SpeechOnly},
	}, mixdown.AnalyzeOptions{})
	if err != nil {
		log.Fatal(err)
	}
	gate, err := mixdown.NewGate(audio.NewBufferSource(audio.Buffer{guest}, fs), an, 1, mixdown.GateOptions{Noise: true, Crossgate: true})
	if err != nil {
		log.Fatal(err)
	}
	defer gate.Close()
	out, _ := audio.ReadAll(context.Background(), gate)
	fmt.Printf("host's bleed: %.0f dB -> %.0f dB\n", level(guest, 1.5, 3.5), level(out[0], 1.5, 3.5))
	fmt.Printf("guest:        %.0f dB -> %.0f dB\n", level(guest, 5, 7), level(out[0], 5, 7))
	fmt.Printf("noise:        %.0f dB -> %.0f dB\n", level(guest, 11, 12), level(out[0], 11, 12))
	// Output:
	// host's bleed: -37 dB -> -77 dB
	// guest:        -17 dB -> -17 dB
	// noise:        -65 dB -> -105 dB
}

// A music bed ducks 12 dB under the speaker, fading over 500 ms.
func ExampleNewDucker() {
	speech := talk(10, 150, 0.5, 0.0005, [2]float64{3, 6})
	bed := audiotest.Sine(1, fs, 220, 0.1, 10*fs)[0]
	an, err := mixdown.Analyze(context.Background(), []mixdown.Track{
		{Source: audio.NewBufferSource(audio.Buffer{speech}, fs), Role: mixdown.RoleForeground},
		{Source: audio.NewBufferSource(audio.Buffer{bed}, fs), Role: mixdown.RoleDucking},
	}, mixdown.AnalyzeOptions{})
	if err != nil {
		log.Fatal(err)
	}
	d, err := mixdown.NewDucker(audio.NewBufferSource(audio.Buffer{bed}, fs), an, 1, mixdown.DuckOptions{BackgroundGainDB: -12, FadeTime: 500 * time.Millisecond})
	if err != nil {
		log.Fatal(err)
	}
	out, _ := audio.ReadAll(context.Background(), d)
	for _, at := range []float64{1, 2.6, 4, 6.25, 7} {
		fmt.Printf("%.2f s: %+.0f dB\n", at, level(out[0], at, at+0.1)-level(bed, at, at+0.1))
	}
	// Output:
	// 1.00 s: +0 dB
	// 2.60 s: -4 dB
	// 4.00 s: -12 dB
	// 6.25 s: -5 dB
	// 7.00 s: +0 dB
}

// Two speakers recorded 15 dB apart come out at one level.
func ExampleNewBalance() {
	host := talk(10, 120, 0.5, 0.0005, [2]float64{1, 4})
	guest := talk(10, 210, 0.5*dsp.DBToGain(-15), 0.0005, [2]float64{5, 8})
	an, err := mixdown.Analyze(context.Background(), []mixdown.Track{
		{Source: audio.NewBufferSource(audio.Buffer{host}, fs), Classifier: classify.SpeechOnly},
		{Source: audio.NewBufferSource(audio.Buffer{guest}, fs), Classifier: classify.SpeechOnly},
	}, mixdown.AnalyzeOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for i, x := range [][]float64{host, guest} {
		b, err := mixdown.NewBalance(audio.NewBufferSource(audio.Buffer{x}, fs), an, i, mixdown.BalanceOptions{Strength: 1})
		if err != nil {
			log.Fatal(err)
		}
		out, _ := audio.ReadAll(context.Background(), b)
		from := []float64{1, 5}[i]
		fmt.Printf("track %d: %.1f LUFS -> %.1f LUFS\n", i, an.Tracks[i].SpeechLUFS, an.Tracks[i].SpeechLUFS+level(out[0], from, from+3)-level(x, from, from+3))
	}
	// Output:
	// track 0: -18.6 LUFS -> -25.8 LUFS
	// track 1: -33.0 LUFS -> -25.8 LUFS
}

// A 1 s jingle looped to 2.5 s (re-opened for every repetition, with a
// 100 ms crossfade at each seam and a fade-out at the end).
func ExampleNewLoopTrim() {
	jingle := audiotest.Sine(2, fs, 440, 0.5, fs)
	opens := 0
	open := func(context.Context) (audio.Source, error) {
		opens++
		return audio.NewBufferSource(jingle, fs), nil
	}
	l, err := mixdown.NewLoopTrim(context.Background(), open, mixdown.LoopTrimOptions{Length: 5 * fs / 2, SourceFrames: fs, FadeOut: 200 * time.Millisecond})
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	out, _ := audio.ReadAll(context.Background(), l)
	fmt.Printf("%d frames from %d passes, faded out: %v\n", out.Frames(), opens, math.Abs(out[0][out.Frames()-1]) < 1e-3)
	// Output:
	// 120000 frames from 3 passes, faded out: true
}

// The whole mixdown from a production's settings: two speakers with each
// other's bleed, a music bed that is looped to the talk and ducked, and
// loudness normalization to -16 LUFS under -1 dBTP.
func ExampleNew() {
	hostVoice := talk(12, 120, 0.5, 0, [2]float64{1, 4}, [2]float64{8, 10})
	guestVoice := talk(12, 210, 0.5, 0, [2]float64{5, 7})
	host := bleed(talk(12, 120, 0.5, 0.001, [2]float64{1, 4}, [2]float64{8, 10}), guestVoice, -20)
	guest := bleed(talk(12, 210, 0.1, 0.001, [2]float64{5, 7}), hostVoice, -20)
	music := audiotest.Sine(2, fs, 330, 0.1, 5*fs)
	buffer := func(b audio.Buffer) audio.Opener {
		return func(context.Context) (audio.Source, error) { return audio.NewBufferSource(b, fs), nil }
	}
	// The API's settings, as a production would give them.
	role, _ := mixdown.ParseRole("Ducking")
	left, _ := mixdown.ParsePan("L25")
	right, _ := mixdown.ParsePan("R25")
	h := mixdown.DefaultTrack(buffer(audio.Buffer{host}))
	h.Pan = left
	g := mixdown.DefaultTrack(buffer(audio.Buffer{guest}))
	g.Pan = right
	m := mixdown.DefaultTrack(buffer(music))
	m.Role, m.LoopTrim, m.BackgroundGainDB = role, true, -12
	md, err := mixdown.New(context.Background(), mixdown.Settings{
		Tracks: []mixdown.TrackSettings{h, g, m}, Leveler: true, Gate: true, Crossgate: true,
	})
	if err != nil {
		log.Fatal(err)
	}
	norm, err := md.Normalize(context.Background(), dsp.NormalizeOptions{TargetLUFS: -16, CeilingDBTP: -1})
	if err != nil {
		log.Fatal(err)
	}
	defer norm.Close()
	out, _ := audio.ReadAll(context.Background(), norm)
	r, _ := loudness.MeasureBuffer(out, fs, loudness.Options{Mode: loudness.ModeI | loudness.ModeTruePeak})
	fmt.Printf("%.0f s, %.1f LUFS, true peak at or below -1 dBTP: %v\n", float64(out.Frames())/fs, r.Integrated, r.TruePeak <= -1)
	both := func(from, to float64) float64 { // left plus right
		return dsp.PowerToDB(math.Pow(10, level(out[0], from, to)/10) + math.Pow(10, level(out[1], from, to)/10))
	}
	fmt.Printf("host and guest within 1 dB: %v\n", math.Abs(both(1, 4)-both(5, 7)) < 1)
	// Output:
	// 12 s, -16.0 LUFS, true peak at or below -1 dBTP: true
	// host and guest within 1 dB: true
}
