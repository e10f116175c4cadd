package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/audiopost/audiopost/audio"
	_ "github.com/audiopost/audiopost/audio/codecs" // every decoder and encoder
	"github.com/audiopost/audiopost/dsp/chain"
)

func init() {
	register("process", "run the post-production chain: process [-preset FILE.json] [-algorithms JSON] [-format NAME] [-bitrate N] -o OUT IN", runProcess)
}

// formatByExt maps output file endings to the API's format names.
var formatByExt = map[string]string{
	".wav": "wav", ".flac": "flac", ".mp3": "mp3", ".m4a": "aac", ".mp4": "aac", ".m4b": "aac",
	".aac": "aac", ".ogg": "vorbis", ".oga": "vorbis", ".opus": "opus",
}

func runProcess(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("process", flag.ContinueOnError)
	fs.SetOutput(stderr)
	preset := fs.String("preset", "", "preset JSON file whose `algorithms` object is used")
	algos := fs.String("algorithms", "", "algorithms JSON object (the API's keys), applied over the preset's")
	format := fs.String("format", "", "output format (wav, wav-24bit, flac, mp3, aac, opus, vorbis, ...); default from the -o extension")
	bitrate := fs.Int("bitrate", 0, "bitrate in kbps for lossy formats (0: the format's default)")
	out := fs.String("o", "", "output file")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: audiopost process [-preset FILE.json] [-algorithms JSON] [-format NAME] [-bitrate N] -o OUT IN")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 || *out == "" {
		fs.Usage()
		return errors.New("process needs one input file and -o OUT")
	}
	in := fs.Arg(0)
	raw, err := algorithms(*preset, *algos)
	if err != nil {
		return err
	}
	cfg, err := chain.ParseAlgorithms(raw)
	if err != nil {
		return err
	}
	name := *format
	if name == "" {
		name = formatByExt[strings.ToLower(filepath.Ext(*out))]
		if name == "" {
			return fmt.Errorf("cannot tell the output format from %q: use -format", *out)
		}
	}
	open := func(ctx context.Context) (audio.Source, error) { return audio.Open(ctx, in) }
	var progress func(float64)
	if isTerminal(stderr) {
		progress = progressBar(stderr)
	}
	stats, err := chain.EncodeFile(ctx, open, cfg, name, *out, audio.EncodeOptions{Bitrate: *bitrate}, progress)
	if progress != nil {
		fmt.Fprintln(stderr)
	}
	if err != nil {
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(stats)
}

// algorithms merges the preset's algorithms object with the -algorithms
// flag (flag keys win) and returns the result as JSON.
func algorithms(presetPath, flagJSON string) ([]byte, error) {
	merged := map[string]json.RawMessage{}
	if presetPath != "" {
		b, err := os.ReadFile(presetPath)
		if err != nil {
			return nil, err
		}
		var p struct {
			Algorithms map[string]json.RawMessage `json:"algorithms"`
		}
		if err := json.Unmarshal(b, &p); err != nil {
			return nil, fmt.Errorf("preset %s: %w", presetPath, err)
		}
		for k, v := range p.Algorithms {
			merged[k] = v
		}
	}
	if flagJSON != "" {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(flagJSON), &m); err != nil {
			return nil, fmt.Errorf("-algorithms is not a JSON object: %w", err)
		}
		for k, v := range m {
			merged[k] = v
		}
	}
	return json.Marshal(merged)
}

// isTerminal reports whether w is a character device (a terminal), without
// golang.org/x/term.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// progressBar returns a callback that redraws a bar at most ten times a
// second. Every render (loudness passes, lossy re-renders) restarts it.
func progressBar(w io.Writer) func(float64) {
	var last time.Time
	return func(f float64) {
		if now := time.Now(); now.Sub(last) < 100*time.Millisecond && f < 1 {
			return
		} else {
			last = now
		}
		const width = 40
		n := int(f * width)
		fmt.Fprintf(w, "\r[%s%s] %3.0f%%", strings.Repeat("#", n), strings.Repeat(" ", width-n), f*100)
	}
}
