package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/audiopost/audiopost/audio"
	_ "github.com/audiopost/audiopost/audio/codecs" // every decoder, ffmpeg as the fallback
	"github.com/audiopost/audiopost/speech"
	"github.com/audiopost/audiopost/speech/pocketsphinx"
	_ "github.com/audiopost/audiopost/speech/recognizers" // pocketsphinx, whisper, openai
)

func init() {
	register("transcribe", "speech to subtitles or text: transcribe [-format srt|vtt|json|xml|txt|html] [-recognizer URL] [-o OUT] IN", runTranscribe)
}

// transcribeFormats maps -format to the output format and ending of the
// speech writers.
var transcribeFormats = map[string][2]string{
	"srt":    {"subtitle", "srt"},
	"vtt":    {"subtitle", "webvtt"},
	"webvtt": {"subtitle", "webvtt"},
	"json":   {"speech", "json"},
	"xml":    {"speech", "xml"},
	"txt":    {"transcript", "txt"},
	"html":   {"transcript", "html"},
}

// keyEnv names the environment variable -key defaults to.
const keyEnv = "AUDIOPOST_RECOGNIZER_KEY"

func runTranscribe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("transcribe", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", "", "srt, vtt, json or xml (speech data with word timings), txt or html (transcript); default from the -o extension, else srt")
	recognizer := fs.String("recognizer", "", "base URL of a whisper-compatible server (http://host:8000/v1; /audio/transcriptions is appended), or pocketsphinx (the default: offline, English)")
	model := fs.String("model", "", "model name for -recognizer URL (default "+`"whisper-1"`+"), or a PocketSphinx model directory")
	key := fs.String("key", "", "API key for -recognizer URL (default $"+keyEnv+")")
	language := fs.String("language", "", "language code (en, en-US, de, ...); empty lets the recognizer decide")
	keywords := fs.String("keywords", "", "comma-separated names and terms that occur (sent to whisper servers as the prompt)")
	fillers := fs.Bool("fillers", false, "ask the recognizer to keep filler words (um, uh)")
	out := fs.String("o", "", "output file (default standard output)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: audiopost transcribe [-format srt|vtt|json|xml|txt|html] [-recognizer URL] [-o OUT] IN")
		fmt.Fprintln(stderr, "Recognises the speech in IN (any audio or video file) and writes subtitles, speech data or a transcript.")
		fs.PrintDefaults()
	}
	files, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(files) != 1 {
		fs.Usage()
		return errors.New("transcribe: give exactly one input file")
	}
	fmtName := strings.ToLower(*format)
	if fmtName == "" {
		fmtName = strings.TrimPrefix(strings.ToLower(filepath.Ext(*out)), ".")
		if _, ok := transcribeFormats[fmtName]; !ok {
			fmtName = "srt"
		}
	}
	target, ok := transcribeFormats[fmtName]
	if !ok {
		return fmt.Errorf("transcribe: unknown -format %q; choose srt, vtt, json, xml, txt or html", *format)
	}
	cfg := speech.Config{Type: pocketsphinx.Type, Model: *model}
	if r := *recognizer; r != "" && r != pocketsphinx.Type {
		cfg = speech.Config{Type: "whisper", BaseURL: r, Model: *model, APIKey: *key}
		if cfg.APIKey == "" {
			cfg.APIKey = os.Getenv(keyEnv)
		}
	}
	rec, err := speech.New(cfg)
	if err != nil {
		return fmt.Errorf("transcribe: %w", err)
	}
	opts := speech.Options{Language: *language, Fillers: *fillers}
	for _, k := range strings.Split(*keywords, ",") {
		if k = strings.TrimSpace(k); k != "" {
			opts.Keywords = append(opts.Keywords, k)
		}
	}

	dec, err := audio.Open(ctx, files[0])
	if err != nil {
		return err
	}
	tr, err := rec.Recognize(ctx, dec, opts)
	dec.Close()
	if err != nil {
		return fmt.Errorf("transcribe %s: %w", files[0], err)
	}
	fmt.Fprintf(stderr, "%s: %d words in %.1f s (%s)\n", files[0], len(tr.Words), tr.Duration.Seconds(), tr.Recognizer)

	w := stdout
	var f *os.File
	if *out != "" {
		if f, err = os.Create(*out); err != nil {
			return err
		}
		w = f
	}
	bw := bufio.NewWriter(w)
	title := strings.TrimSuffix(filepath.Base(files[0]), filepath.Ext(files[0]))
	err = speech.Write(bw, target[0], target[1], tr, speech.WriteOptions{Title: title})
	if err == nil {
		err = bw.Flush()
	}
	if f != nil {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	return err
}
