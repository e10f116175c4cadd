// Command goaudionormalize normalizes WAV files to a loudness target, the
// way a program built on go-audio would use audiopost: each file is read
// with go-audio's wav.Decoder (vetted first by goaudio.CheckWAV, so a hostile
// header cannot make it allocate gigabytes) and written with go-audio's
// wav.Encoder, while audiopost measures the integrated loudness (EBU R128),
// applies the gain that reaches the target and limits the true peak.
//
//	go run ./examples/goaudionormalize [-target -16] [-ceiling -1] [-suffix .normalized] a.wav b.wav ...
//
// a.wav becomes a.normalized.wav next to it, at the same sample rate,
// channels and bit depth (integer PCM; float files are written as 24-bit,
// which go-audio's encoder can write). Every file is processed even if
// another fails; the exit status is 1 if any failed.
//
// When the limiter has to take a lot off (a quiet recording with loud
// peaks), the result ends up under the target; the report line says so.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/goaudio"
	"github.com/audiopost/audiopost/loudness"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "goaudionormalize:", err)
		os.Exit(1)
	}
}

// options of one run.
type options struct {
	target, ceiling float64
	suffix          string
}

// run is main without the process: the test calls it.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("goaudionormalize", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.Float64Var(&o.target, "target", -16, "integrated loudness target in LUFS")
	fs.Float64Var(&o.ceiling, "ceiling", -1, "true-peak ceiling in dBTP")
	fs.StringVar(&o.suffix, "suffix", ".normalized", "added to each input's name (before .wav) for its output")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: goaudionormalize [flags] file.wav...")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return errors.New("no input files")
	}
	if o.suffix == "" {
		return errors.New("-suffix must not be empty: the output would replace the input")
	}
	failed := 0
	for _, in := range fs.Args() {
		ext := filepath.Ext(in)
		out := strings.TrimSuffix(in, ext) + o.suffix + ext
		r, err := normalizeFile(ctx, in, out, o)
		if err != nil {
			failed++
			fmt.Fprintf(stderr, "%s: %v\n", in, err)
			continue
		}
		fmt.Fprintf(stdout, "%s: %.1f LUFS, gain %+.1f dB -> %s: %.1f LUFS, %.1f dBTP%s\n",
			in, r.in, r.gain, out, r.out, r.truePeak, r.note(o.target))
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d files failed", failed, fs.NArg())
	}
	return nil
}

// result is what normalizing one file did.
type result struct {
	in, gain, out, truePeak float64
}

func (r result) note(target float64) string {
	if r.out < target-0.5 {
		return fmt.Sprintf(" (%.1f LU under the target: the limiter took it off the peaks)", target-r.out)
	}
	return ""
}

// normalizeFile measures in, then writes it to out with the gain that
// brings it to the target, through the true-peak limiter.
func normalizeFile(ctx context.Context, in, out string, o options) (result, error) {
	var r result
	f, err := os.Open(in)
	if err != nil {
		return r, err
	}
	defer f.Close()

	// Pass 1: measure.
	src, err := goaudio.NewWAVSource(f)
	if err != nil {
		return r, err
	}
	m, err := loudness.Measure(ctx, src, loudness.Options{Mode: loudness.ModeI})
	if err != nil {
		return r, err
	}
	if m.Err != nil {
		return r, m.Err
	}
	r.in, r.gain = m.Integrated, o.target-m.Integrated

	// Pass 2: gain and limiter, measured on the way out.
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return r, err
	}
	if src, err = goaudio.NewWAVSource(f); err != nil {
		return r, err
	}
	chain, err := normalize(src, r.gain, o.ceiling)
	if err != nil {
		return r, err
	}
	bits := src.BitDepth()
	if src.Encoding() == audio.Float32 || src.Encoding() == audio.Float64 {
		bits = 24
	}
	meter, err := loudness.NewMeter(src.Format(), loudness.Options{Mode: loudness.ModeI | loudness.ModeTruePeak})
	if err != nil {
		return r, err
	}
	tmp := out + ".tmp"
	w, err := os.Create(tmp)
	if err != nil {
		return r, err
	}
	defer os.Remove(tmp) // after a successful rename there is nothing to remove
	sink, err := goaudio.NewWAVSink(w, src.Format(), bits)
	if err != nil {
		w.Close()
		return r, err
	}
	if _, err := audio.Copy(ctx, audio.MultiSink(sink, meter), chain); err != nil {
		w.Close()
		return r, err
	}
	if err := sink.Close(); err != nil {
		w.Close()
		return r, err
	}
	if err := w.Close(); err != nil {
		return r, err
	}
	if err := os.Rename(tmp, out); err != nil {
		return r, err
	}
	res := meter.Result()
	r.out, r.truePeak = res.Integrated, res.TruePeak
	return r, nil
}
