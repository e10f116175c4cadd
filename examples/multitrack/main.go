// Command multitrack mixes a podcast recorded on separate microphones
// into one balanced master, built node by node from audiopost's dsp and
// dsp/mixdown packages: per speaker a high-pass, the adaptive noise gate
// and crossgate (which removes the other speaker's bleed from each
// microphone) and the speaker balance; the music bed looped or trimmed to
// the talk and ducked under it; a mix with pan and offsets; loudness
// normalization to -16 LUFS under a -1 dBTP ceiling.
//
//	go run ./examples/multitrack -o master.wav host.wav guest.wav bed.wav
//	go run ./examples/multitrack -guest-offset 2.5 -duck -12 -o master.wav host.wav guest.wav bed.wav
//
// The tracks are read several times over fresh decoders: once for the
// joint analysis (who speaks when, what is bleed, how loud each speaker
// is), then by NormalizeStream to measure the mix and fit its gain, last
// to render it. No track is ever held in memory. (Package mixdown's
// Mixdown type builds the same graph from a production's settings.)
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"time"

	"github.com/audiopost/audiopost/audio"
	_ "github.com/audiopost/audiopost/audio/codecs"
	"github.com/audiopost/audiopost/dsp"
	"github.com/audiopost/audiopost/dsp/mixdown"
	"github.com/audiopost/audiopost/loudness"
)

// options are the command's settings, in the API's terms.
type options struct {
	out         string
	guestOffset float64 // s, the API's offset of the guest track
	musicOffset float64 // s
	duckDB      float64 // the bed's backgroundgain
	fade        time.Duration
	target      float64 // LUFS
	ceiling     float64 // dBTP
}

func main() {
	var o options
	flag.StringVar(&o.out, "o", "master.wav", "output WAV file")
	flag.Float64Var(&o.guestOffset, "guest-offset", 0, "guest track start relative to the host, seconds")
	flag.Float64Var(&o.musicOffset, "music-offset", 0, "music bed start relative to the host, seconds")
	flag.Float64Var(&o.duckDB, "duck", -18, "music bed level under speech, dB")
	flag.DurationVar(&o.fade, "fade", 500*time.Millisecond, "ducking fade time")
	flag.Float64Var(&o.target, "target", -16, "loudness target, LUFS")
	flag.Float64Var(&o.ceiling, "ceiling", -1, "true-peak ceiling, dBTP")
	flag.Parse()
	if flag.NArg() != 3 {
		log.Fatal("usage: multitrack [flags] -o master.wav host.wav guest.wav bed.wav")
	}
	if err := run(context.Background(), [3]string{flag.Arg(0), flag.Arg(1), flag.Arg(2)}, o, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// The tracks, in the order of the paths.
const (
	host = iota
	guest
	bed
)

// run is the whole program: analysis, graph, normalization, render.
func run(ctx context.Context, paths [3]string, o options, w io.Writer) error {
	opener := func(path string) audio.Opener {
		return func(ctx context.Context) (audio.Source, error) { return audio.Open(ctx, path) }
	}
	// Pass 1: the joint analysis of the three tracks at their offsets.
	var tracks []mixdown.Track
	closeTracks := func() {
		for _, t := range tracks {
			t.Source.(io.Closer).Close()
		}
		tracks = nil
	}
	defer closeTracks()
	roles := [3]mixdown.Role{mixdown.RoleForeground, mixdown.RoleForeground, mixdown.RoleDucking}
	offsetSec := [3]float64{0, o.guestOffset, o.musicOffset}
	var rate int
	for i, p := range paths {
		d, err := audio.Open(ctx, p)
		if err != nil {
			return err
		}
		if i == 0 {
			rate = d.Format().SampleRate
		}
		tracks = append(tracks, mixdown.Track{Source: d, Role: roles[i], Offset: int64(math.Round(offsetSec[i] * float64(rate)))})
	}
	an, err := mixdown.Analyze(ctx, tracks, mixdown.AnalyzeOptions{})
	closeTracks()
	if err != nil {
		return err
	}
	// The bed is looped or trimmed to end with the longest speaker.
	bedLength := max(0, an.ReferenceLength([]bool{false, false, true})-an.Tracks[bed].Offset)

	// The graph: a function that builds it over fresh decoders, because
	// NormalizeStream runs it several times.
	speaker := func(ctx context.Context, i int) (audio.Source, error) {
		src, err := audio.Open(ctx, paths[i])
		if err != nil {
			return nil, err
		}
		var s audio.Source = src
		if s, err = dsp.NewHighPass(s, an.Tracks[i].Block); err != nil {
			src.Close()
			return nil, err
		}
		if s, err = mixdown.NewGate(s, an, i, mixdown.GateOptions{Noise: true, Crossgate: true}); err != nil {
			src.Close()
			return nil, err
		}
		if s, err = mixdown.NewBalance(s, an, i, mixdown.BalanceOptions{Strength: 1}); err != nil {
			src.Close()
			return nil, err
		}
		return s, nil
	}
	music := func(ctx context.Context) (audio.Source, error) {
		lt, err := mixdown.NewLoopTrim(ctx, opener(paths[bed]), mixdown.LoopTrimOptions{Length: bedLength, SourceFrames: an.Tracks[bed].Frames})
		if err != nil {
			return nil, err
		}
		d, err := mixdown.NewDucker(lt, an, bed, mixdown.DuckOptions{BackgroundGainDB: o.duckDB, FadeTime: o.fade, Length: bedLength})
		if err != nil {
			lt.Close()
			return nil, err
		}
		return d, nil
	}
	mix := func(ctx context.Context) (audio.Source, error) {
		var ins []dsp.MixInput
		fail := func(err error) (audio.Source, error) {
			for _, in := range ins {
				in.Source.(io.Closer).Close()
			}
			return nil, err
		}
		for i, pan := range []float64{-0.2, 0.2} { // host a little left, guest a little right
			s, err := speaker(ctx, i)
			if err != nil {
				return fail(err)
			}
			ins = append(ins, dsp.MixInput{Source: s, Pan: pan, Offset: an.Tracks[i].Offset})
		}
		s, err := music(ctx)
		if err != nil {
			return fail(err)
		}
		ins = append(ins, dsp.MixInput{Source: s, Offset: an.Tracks[bed].Offset})
		m, err := dsp.NewMix(ins, dsp.MixOptions{Channels: 2})
		if err != nil {
			return fail(err)
		}
		return m, nil
	}

	// Passes 2 to n: measure the mix and fit the gain to the target; the
	// last pass renders through a meter into the WAV encoder.
	norm, err := dsp.NormalizeStream(ctx, mix, dsp.NormalizeOptions{TargetLUFS: o.target, CeilingDBTP: o.ceiling})
	if err != nil {
		return err
	}
	defer norm.Close() // closes every decoder of the graph
	meter, err := loudness.NewMeter(norm.Format(), loudness.Options{Mode: loudness.ModeI | loudness.ModeTruePeak})
	if err != nil {
		return err
	}
	tee, err := dsp.NewTee(norm, meter)
	if err != nil {
		return err
	}
	f, err := os.Create(o.out)
	if err != nil {
		return err
	}
	defer f.Close()
	enc, err := audio.NewEncoder(ctx, "wav-24bit", f, tee.Format(), audio.EncodeOptions{})
	if err != nil {
		return err
	}
	if _, err := audio.Copy(ctx, enc, tee); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	r := meter.Result()
	for i, name := range []string{"host", "guest"} {
		t := an.Tracks[i]
		fmt.Fprintf(w, "%-5s speech %5.1f LUFS, noise floor %5.1f dB, speaking %4.1f s, bleed of the other %4.1f s\n",
			name, t.SpeechLUFS, t.NoiseDB(), t.Seconds(mixdown.Voice), t.Seconds(mixdown.Bleed))
	}
	fmt.Fprintf(w, "bed   %5.1f LUFS, %.1f s looped or trimmed to %.1f s, %.0f dB under speech\n", an.Tracks[bed].Block.Loudness.Integrated,
		float64(an.Tracks[bed].Frames)/float64(rate), float64(bedLength)/float64(rate), o.duckDB)
	fmt.Fprintf(w, "%s: %.1f s, %.1f LUFS, true peak %.1f dBTP\n", o.out, r.Duration(), r.Integrated, r.TruePeak)
	return nil
}
