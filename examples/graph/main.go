// Command graph builds a custom processing graph from audiopost's dsp
// nodes: two recordings mixed (host a little left, guest a little right),
// high-passed, leveled, compressed, normalized to -16 LUFS under a -1 dBTP
// ceiling, and
// written to a WAV file while a meter listens mid-graph.
//
//	go run ./examples/graph -o mix.wav host.wav guest.wav
//
// The graph runs several times over fresh decoders: once to analyse the
// mix (the high-pass and the leveler need to know the whole recording),
// then to measure the leveled mix and fit the normalization gain, last to
// render it. Closing a graph's output closes every decoder in it.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/audiopost/audiopost/audio"
	_ "github.com/audiopost/audiopost/audio/codecs"
	"github.com/audiopost/audiopost/dsp"
	"github.com/audiopost/audiopost/loudness"
)

func main() {
	out := flag.String("o", "mix.wav", "output WAV file")
	flag.Parse()
	if flag.NArg() != 2 {
		log.Fatal("usage: graph -o out.wav host.wav guest.wav")
	}
	run(context.Background(), flag.Arg(0), flag.Arg(1), *out, os.Stdout)
}

// run is the whole graph.
func run(ctx context.Context, host, guest, out string, w io.Writer) {
	mix := func() *dsp.Mix { // host a little left, guest a little right
		a, b := open(ctx, host), open(ctx, guest)
		return try(dsp.NewMix([]dsp.MixInput{{Source: a, Pan: -0.3}, {Source: b, Pan: 0.3}}, dsp.MixOptions{Channels: 2}))
	}
	first := mix()
	an := try(dsp.Analyze(ctx, first, dsp.AnalyzerOptions{Spectrum: true})) // pass 1: analyse
	first.Close()
	leveled := func(ctx context.Context) (audio.Source, error) {
		return dsp.NewLeveler(try(dsp.NewHighPass(mix(), an)), an, dsp.LevelerOptions{Strength: 1})
	}
	// passes 2 to n: measure the leveled mix, then fit the gain so that
	// the limited output lands on the target
	norm := try(dsp.NormalizeStream(ctx, leveled, dsp.NormalizeOptions{TargetLUFS: -16, CeilingDBTP: -1}))
	defer norm.Close() // closes both decoders
	meter := try(loudness.NewMeter(norm.Format(), loudness.Options{Mode: loudness.ModeEBU}))
	tee := try(dsp.NewTee(norm, meter))
	f := try(os.Create(out))
	defer f.Close()
	enc := try(audio.NewEncoder(ctx, "wav-24bit", f, tee.Format(), audio.EncodeOptions{}))
	try(audio.Copy(ctx, enc, tee)) // last pass: render
	try(0, enc.Close())
	r := meter.Result()
	fmt.Fprintf(w, "%s: %.1f LUFS, true peak %.1f dBTP, loudness range %.1f LU\n", out, r.Integrated, r.TruePeak, r.LRA)
}

func open(ctx context.Context, path string) audio.Decoder { return try(audio.Open(ctx, path)) }

// try ends the program on an error: in a command this small, a missing
// file or a bad parameter has no better answer than a message.
func try[T any](v T, err error) T {
	if err != nil {
		log.Fatal(err)
	}
	return v
}
