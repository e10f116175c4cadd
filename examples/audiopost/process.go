package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/audiopost/audiopost/production/engine"

	_ "github.com/audiopost/audiopost/audio/codecs" // every decoder and encoder
	"github.com/audiopost/audiopost/preset"
	"github.com/audiopost/audiopost/production"
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
	presetPath := fs.String("preset", "", "preset JSON file (the API's preset fields: algorithms, metadata, ...)")
	algos := fs.String("algorithms", "", "algorithms JSON object (the API's keys), applied over the preset's")
	format := fs.String("format", "", "output format (wav, wav-24bit, flac, mp3, aac, opus, vorbis, ...); default from the -o extension")
	bitrate := fs.Int("bitrate", 0, "bitrate in kbps for lossy formats (0: the format's default)")
	chapters := fs.String("chapters", "", "chapter marks file, one per line: HH:MM:SS[.mmm] title [<url>] (the simple API's format)")
	cover := fs.String("cover", "", "cover image (PNG or JPEG) to embed")
	out := fs.String("o", "", "output file")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile (go tool pprof) of the run to this file")
	tempDisk := fs.Int64("max-temp-disk-mb", production.DefaultDisk>>20, "temporary disk the run may take in MB: an input only ffmpeg decodes (Opus, AAC, Vorbis, video) is kept as 32-bit floats in the system's temporary folder, 1.4 GB per hour of 48 kHz stereo")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: audiopost process [-preset FILE.json] [-algorithms JSON] [-format NAME] [-bitrate N] [-chapters FILE] [-cover IMAGE] -o OUT IN")
		fs.PrintDefaults()
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || *out == "" {
		fs.Usage()
		if len(pos) == 0 {
			return errors.New("process needs an input file")
		}
		if *out == "" {
			return errors.New("process needs -o OUT, the output file")
		}
		return fmt.Errorf("process takes one input file, got %d: %s", len(pos), strings.Join(pos, " "))
	}
	in := pos[0]
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	name := *format
	if name == "" {
		name = formatByExt[strings.ToLower(filepath.Ext(*out))]
		if name == "" {
			return fmt.Errorf("cannot tell the output format from %q: use -format", *out)
		}
	}
	p, err := cliProduction(ctx, *presetPath, *algos, *chapters, in, *out, name, *bitrate)
	if err != nil {
		return err
	}
	var progress engine.ProgressFunc
	if isTerminal(stderr) {
		bar := progressBar(stderr)
		progress = func(s production.Status, f float64) { bar(s.String(), f) }
	}
	// The same Engine the service's job runner uses, so the command line
	// and the service cannot drift apart.
	eng := &engine.Engine{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Limits: production.Limits{Disk: *tempDisk << 20}}
	_, err = eng.Run(ctx, p, engine.Inputs{Main: in, Cover: *cover}, engine.DirWriter{Dir: filepath.Dir(*out)}, progress)
	if progress != nil {
		fmt.Fprintln(stderr)
	}
	if err != nil {
		return err
	}
	if p.WarningMessage != "" {
		fmt.Fprintln(stderr, "audiopost: warning:", p.WarningMessage)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(p.Statistics)
}

// cliProduction builds the production the command line describes: the
// preset file's fields, then the -algorithms keys over them, the chapters
// file, and one output file at -o, validated by the same rules as the API.
func cliProduction(ctx context.Context, presetPath, algos, chaptersPath, in, out, format string, bitrate int) (*production.Production, error) {
	output := map[string]any{"format": format, "filename": filepath.Base(out)}
	if bitrate > 0 {
		output["bitrate"] = bitrate
	}
	req := map[string]any{"output_files": []any{output}}
	if algos != "" {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(algos), &m); err != nil {
			return nil, fmt.Errorf("-algorithms is not a JSON object: %w", err)
		}
		req["algorithms"] = m
	}
	if chaptersPath != "" {
		b, err := os.ReadFile(chaptersPath)
		if err != nil {
			return nil, err
		}
		chs, err := production.ParseChapters(string(b))
		if err != nil {
			return nil, fmt.Errorf("chapters %s: %w", chaptersPath, err)
		}
		req["chapters"] = production.ChapterFields(chs)
	}
	var presets production.Presets
	if presetPath != "" {
		pin, err := readPresetFile(presetPath)
		if err != nil {
			return nil, err
		}
		if pin.PresetName == nil {
			name := strings.TrimSuffix(filepath.Base(presetPath), filepath.Ext(presetPath))
			pin.PresetName = &name
		}
		pr, err := preset.New(pin, production.ApplyOptions{})
		if err != nil {
			return nil, fmt.Errorf("preset %s: %w", presetPath, err)
		}
		pr.UUID = "file:" + presetPath
		presets = production.Presets{pr.UUID: pr.Template()}
		req["preset"] = pr.UUID
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	pin, err := production.DecodeInput(body)
	if err != nil {
		return nil, err
	}
	p, err := production.New(pin, production.ApplyOptions{Presets: presets})
	if err != nil {
		return nil, err
	}
	// A local file is an upload, not a request field (the API accepts only
	// URLs and service file names there).
	p.InputFile = filepath.Base(in)
	if errs := production.Validate(p, production.ValidateOptions{}); len(errs) > 0 {
		return nil, errs
	}
	return p, nil
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
func progressBar(w io.Writer) func(stage string, f float64) {
	var last time.Time
	return func(stage string, f float64) {
		if now := time.Now(); now.Sub(last) < 100*time.Millisecond && f < 1 {
			return
		} else {
			last = now
		}
		const width = 40
		n := int(f * width)
		fmt.Fprintf(w, "\r%-24s [%s%s] %3.0f%%", stage, strings.Repeat("#", n), strings.Repeat(" ", width-n), f*100)
	}
}

// readPresetFile reads a preset as the API's presets.json takes it from
// the file at path.
func readPresetFile(path string) (*preset.Input, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pin, err := preset.DecodeInput(b)
	if err != nil {
		return nil, fmt.Errorf("preset %s: %w", path, err)
	}
	return pin, nil
}
