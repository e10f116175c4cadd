package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/audiopost/audiopost/audio/ffmpeg"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/livestream"
)

func init() {
	register("live", "process a live stream: live -i SRC [-format F -bitrate N] -o DST [...] [-preset FILE.json | -algorithms JSON]", runLive)
}

// liveOutputs is the repeatable -o flag: each output takes the -format and
// -bitrate given before it on the command line.
type liveOutputs struct {
	format  *string
	bitrate *int
	list    []livestream.Destination
}

func (o *liveOutputs) String() string { return "" }

func (o *liveOutputs) Set(url string) error {
	f := *o.format
	if f == "" {
		f = guessLiveFormat(url)
	}
	o.list = append(o.list, livestream.Destination{URL: url, Format: f, Bitrate: *o.bitrate})
	return nil
}

// guessLiveFormat picks an output format from a destination's extension
// (mount names usually have one), mp3 when it has none.
func guessLiveFormat(url string) string {
	switch strings.ToLower(filepath.Ext(strings.SplitN(url, "?", 2)[0])) {
	case ".ogg", ".oga":
		return "vorbis"
	case ".opus":
		return "opus"
	case ".aac", ".m4a":
		return "aac"
	case ".flac":
		return "flac"
	case ".wav":
		return "wav"
	}
	return "mp3"
}

func runLive(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("live", flag.ContinueOnError)
	fs.SetOutput(stderr)
	src := fs.String("i", "", "the live source: anything ffmpeg reads (http://, icecast, rtmp://, srt://, a device, a file)")
	realtime := fs.Bool("re", false, "read the source at its own pace (a file played as if live)")
	format := fs.String("format", "", "format of the outputs that follow: "+strings.Join(ffmpeg.LiveFormats(), ", ")+" (default: from the extension, else mp3)")
	bitrate := fs.Int("bitrate", 0, "bitrate in kbps of the outputs that follow (0: the format's default)")
	outs := &liveOutputs{format: format, bitrate: bitrate}
	fs.Var(outs, "o", "a live destination (repeatable): icecast://source:PASSWORD@host:port/mount, rtmp://..., a file")
	presetPath := fs.String("preset", "", "preset JSON file whose algorithms apply")
	algos := fs.String("algorithms", "", "algorithms JSON object (the API's keys), applied over the preset's")
	fallback := fs.String("fallback", "", "file played (looped) while the source is down (default: silence)")
	name := fs.String("name", "", "stream name sent to Icecast")
	every := fs.Duration("status", 10*time.Second, "how often to print the figures (0: never)")
	asJSON := fs.Bool("json", false, "print the figures as JSON lines")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: audiopost live -i SRC [-re] [-format F] [-bitrate N] -o DST [[-format F] [-bitrate N] -o DST ...] [-preset FILE.json] [-algorithms JSON] [-fallback FILE]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("live: unexpected argument %q", fs.Arg(0))
	}
	if *src == "" || len(outs.list) == 0 {
		fs.Usage()
		return errors.New("live: need a source (-i) and at least one destination (-o)")
	}
	values, err := liveAlgorithms(*presetPath, *algos)
	if err != nil {
		return err
	}
	cfg, warnings, err := livestream.Config(values)
	if err != nil {
		return fmt.Errorf("live: %w", err)
	}
	for _, w := range warnings {
		fmt.Fprintln(stderr, "audiopost: warning:", w)
	}
	s, err := livestream.Start(ctx, livestream.Spec{Source: *src, Realtime: *realtime, Destinations: outs.list,
		Config: cfg, Fallback: *fallback, Name: *name}, livestream.Options{})
	if err != nil {
		return fmt.Errorf("live: %w", err)
	}
	fmt.Fprintf(stderr, "audiopost live: processing with %.0f ms of look-ahead; stop with Ctrl-C\n", 1000*s.Latency())
	var tick <-chan time.Time
	if *every > 0 {
		t := time.NewTicker(*every)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-tick:
			printLiveStatus(stdout, s.Status(), *asJSON)
		case <-s.Done():
			printLiveStatus(stdout, s.Status(), *asJSON)
			if err := s.Err(); err != nil {
				return fmt.Errorf("live: %w", err)
			}
			return nil
		case <-ctx.Done():
			s.Stop()
			printLiveStatus(stdout, s.Status(), *asJSON)
			return nil
		}
	}
}

// liveAlgorithms reads the algorithms of the preset file and -algorithms,
// the latter over the former.
func liveAlgorithms(presetPath, algos string) (production.AlgorithmValues, error) {
	values := production.AlgorithmValues{}
	errs := production.FieldErrors{}
	if presetPath != "" {
		pin, err := readPresetFile(presetPath)
		if err != nil {
			return nil, err
		}
		values = production.ParseAlgorithms(pin.Algorithms, "algorithms", errs)
	}
	if algos != "" {
		var raw production.RawAlgorithms
		if err := json.Unmarshal([]byte(algos), &raw); err != nil {
			return nil, fmt.Errorf("-algorithms is not a JSON object: %w", err)
		}
		values = values.Merge(production.ParseAlgorithms(raw, "algorithms", errs))
	}
	if err := errs.Err(); err != nil {
		return nil, err
	}
	return values, nil
}

// liveLine is one line of `live -json`.
type liveLine struct {
	UptimeSeconds  float64  `json:"uptime_seconds"`
	MomentaryLUFS  *float64 `json:"momentary_lufs"`
	ShortTermLUFS  *float64 `json:"shortterm_lufs"`
	IntegratedLUFS *float64 `json:"integrated_lufs"`
	TruePeakDBTP   *float64 `json:"true_peak_dbtp"`
	GainDB         float64  `json:"gain_db"`
	livestream.Status
}

func printLiveStatus(w io.Writer, st livestream.Status, asJSON bool) {
	if asJSON {
		_ = json.NewEncoder(w).Encode(liveLine{UptimeSeconds: st.Uptime.Seconds(), MomentaryLUFS: num(st.Stats.Momentary),
			ShortTermLUFS: num(st.Stats.ShortTerm), IntegratedLUFS: num(st.Stats.Integrated), TruePeakDBTP: num(st.Stats.TruePeak),
			GainDB: st.Stats.GainDB, Status: st})
		return
	}
	src := "source up"
	if !st.Source.Connected {
		src = "source DOWN (fallback)"
	}
	var dst []string
	for _, d := range st.Destinations {
		state := "up"
		if !d.Connected {
			state = "DOWN"
		}
		dst = append(dst, d.URL+" "+state)
	}
	fmt.Fprintf(w, "%s  M %s  S %s  I %s LUFS  TP %s dBTP  gain %+.1f dB  %s  -> %s\n",
		st.Uptime.Truncate(time.Second), cell(st.Stats.Momentary), cell(st.Stats.ShortTerm), cell(st.Stats.Integrated),
		cell(st.Stats.TruePeak), st.Stats.GainDB, src, strings.Join(dst, ", "))
}
