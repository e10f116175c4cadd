// Command beepplayer is a gopxl/beep program with audiopost in its chain:
// beep decodes a file, audiopost levels it (its adaptive leveler, which
// brings quiet and loud passages to a common level) and limits its true
// peak, and beep plays or encodes the result.
//
//	go run ./examples/beepplayer [-o out.wav] [-bits 16] [-strength 1] [-ceiling -1] in.wav|in.mp3|in.flac
//	go run -tags speaker ./examples/beepplayer -play in.mp3
//
// beep's decoders (wav, mp3, flac, chosen by the file's extension) give a
// beep.StreamSeekCloser; beepaudio.NewSource turns it into an audio.Source
// (mono files stay mono, see beepaudio.ModeFor). The leveler needs to know
// the whole recording, so the program reads the file twice: a first pass
// through dsp.Analyzer, then, after seeking the beep stream back to the
// start, the second pass through the leveler and the limiter, which
// beepaudio.NewStreamer hands back to beep.
//
// By default the result is written with beep's WAV encoder to -o (default
// IN.leveled.wav), 16-bit or with -bits 24. Playback through beep's speaker
// package (-play) is built only with the "speaker" build tag: speaker uses
// oto, which on Linux needs cgo and the ALSA headers (libasound2-dev) to
// build and a sound card to run. Keeping it behind the tag lets the default
// build, go vet ./... and the test run anywhere, CI included, without cgo
// or audio hardware; a build without the tag answers -play with how to get
// it. With the tag, -play gives up with an error when the speaker makes no
// progress for 3 s (without a sound card oto neither fails nor plays).
//
// beep's decoders trust the sizes in a file's header; for files from
// untrusted sources decode with audiopost's codecs (audio.Open) or check
// WAV files with goaudio.CheckWAV first.
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

	"github.com/gopxl/beep/v2"
	"github.com/gopxl/beep/v2/flac"
	"github.com/gopxl/beep/v2/mp3"
	beepwav "github.com/gopxl/beep/v2/wav"

	"github.com/audiopost/audiopost/audio/beepaudio"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "beepplayer:", err)
		os.Exit(1)
	}
}

// play plays a stream through the speakers; it is nil unless the program
// is built with the speaker tag (speaker.go).
var play func(ctx context.Context, s beep.Streamer, f beep.Format) error

// run is main without the process: the test calls it.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("beepplayer", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "output WAV file (default: IN.leveled.wav)")
	bits := fs.Int("bits", 16, "bit depth of the output file: 16 or 24")
	strength := fs.Float64("strength", 1, "leveler strength, 0 (off) to 1.2")
	ceiling := fs.Float64("ceiling", -1, "true-peak ceiling in dBTP")
	playFlag := fs.Bool("play", false, "play through the speakers instead of writing a file (needs -tags speaker)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: beepplayer [flags] in.wav|in.mp3|in.flac")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errors.New("want one input file")
	}
	if *playFlag && play == nil {
		return errors.New("built without speaker support: build with -tags speaker (needs cgo and, on Linux, libasound2-dev)")
	}
	if *bits != 16 && *bits != 24 {
		return fmt.Errorf("-bits %d: want 16 or 24", *bits)
	}
	in := fs.Arg(0)

	stream, format, err := decode(in)
	if err != nil {
		return err
	}
	defer stream.Close()
	mode := beepaudio.ModeFor(format)

	// Pass 1: analyse the whole recording.
	src, err := beepaudio.NewSource(stream, format.SampleRate, mode)
	if err != nil {
		return err
	}
	an, err := analyze(ctx, src)
	if err != nil {
		return err
	}

	// Pass 2: from the start again, leveled and limited, back to beep.
	if err := stream.Seek(0); err != nil {
		return err
	}
	if src, err = beepaudio.NewSource(stream, format.SampleRate, mode); err != nil {
		return err
	}
	processed, err := process(src, an, *strength, *ceiling)
	if err != nil {
		return err
	}
	st, err := beepaudio.NewStreamer(processed)
	if err != nil {
		return err
	}
	outFormat := st.Format()
	outFormat.Precision = *bits / 8

	if *playFlag {
		if err := play(ctx, st, outFormat); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "played %s\n", in)
		return nil
	}
	if *out == "" {
		*out = strings.TrimSuffix(in, filepath.Ext(in)) + ".leveled.wav"
	}
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	if err := beepwav.Encode(f, st, outFormat); err != nil {
		f.Close()
		return err
	}
	if err := st.Err(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s -> %s (%d Hz, %d channels, %d-bit)\n", in, *out, outFormat.SampleRate, outFormat.NumChannels, *bits)
	return nil
}

// decode opens a file with beep's decoder for its extension.
func decode(path string) (beep.StreamSeekCloser, beep.Format, error) {
	decoders := map[string]func(*os.File) (beep.StreamSeekCloser, beep.Format, error){
		".wav":  func(f *os.File) (beep.StreamSeekCloser, beep.Format, error) { return beepwav.Decode(f) },
		".mp3":  func(f *os.File) (beep.StreamSeekCloser, beep.Format, error) { return mp3.Decode(f) },
		".flac": func(f *os.File) (beep.StreamSeekCloser, beep.Format, error) { return flac.Decode(f) },
	}
	dec, ok := decoders[strings.ToLower(filepath.Ext(path))]
	if !ok {
		return nil, beep.Format{}, fmt.Errorf("%s: want a .wav, .mp3 or .flac file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, beep.Format{}, err
	}
	s, format, err := dec(f)
	if err != nil {
		f.Close()
		return nil, beep.Format{}, fmt.Errorf("%s: %w", path, err)
	}
	return s, format, nil
}
