// Package local runs audiopost's processing on a recording where its
// owner holds it, without a server: the work behind the in-browser pages,
// where the WebAssembly build calls it with a File read in slices. It
// runs the Engine the server runs, with the settings the API takes, and
// reports what the server reports, so a recording processed here and one
// processed by a server come out the same.
//
// Nothing here knows about browsers: the recording is an io.ReaderAt and
// the files are written through an engine.OutputWriter, which the tests
// give files in memory.
package local

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"sync"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/artwork"
	"github.com/audiopost/audiopost/production/engine"
)

// Progress is where a run has got to.
type Progress struct {
	// Status is the production's status (Audio Processing, Audio
	// Encoding, ...) and Fraction how far the Engine is within it.
	Status   production.Status
	Fraction float64
	// Pass counts the readings of the recording: the analysis is the
	// first, each loudness pass and the final render one more.
	Pass int
	// Read is how much of the recording this pass has read, 0 to 1.
	Read float64
}

// Result is what a finished run produced besides its files.
type Result struct {
	// Production is the production as the API would return it when
	// done: statistics, warnings, length, cuts, the output files' sizes
	// and checksums.
	Production *production.Production
	// Files are the files written, in the order of the output files.
	Files []engine.WrittenFile
	// LoudnessChart and Waveform are the PNGs of the status page: the
	// short-term loudness of input and output over time (Chart explains
	// its colours and scale), and the output's waveform.
	LoudnessChart, Waveform []byte
	Chart                   ChartLegend
}

// ChartLegend describes the loudness chart: its colours as CSS, the
// target and the scale in LUFS.
type ChartLegend struct {
	Input      string `json:"input"`
	Output     string `json:"output"`
	Target     string `json:"target"`
	TargetLUFS int    `json:"target_lufs"`
	Bottom     int    `json:"bottom"`
	Top        int    `json:"top"`
	Grid       int    `json:"grid"`
}

// Legend returns the legend of the loudness chart drawn for target.
func Legend(target int) ChartLegend {
	return ChartLegend{
		Input: artwork.CSSColor(artwork.ChartInputColor), Output: artwork.CSSColor(artwork.ChartOutputColor),
		Target: artwork.CSSColor(artwork.ChartTargetColor), TargetLUFS: target,
		Bottom: target - artwork.ChartBelowLU, Top: target + artwork.ChartAboveLU, Grid: artwork.ChartGridLU,
	}
}

// progressEvery is the least change of Read worth a report.
const progressEvery = 0.005

// Process runs the production that settings describe (see NewProduction)
// on the recording with the server's Engine and writes its files to out.
// progress (may be nil) hears of every status change and of every half
// percent read, one call at a time (the engine reads on goroutines of
// its own, so not always on the calling goroutine). On failure the error is the
// Engine's, or production.FieldErrors for bad settings.
func Process(ctx context.Context, in Input, settings []byte, out engine.OutputWriter, progress func(Progress)) (*Result, error) {
	p, err := NewProduction(ctx, settings, in.Name)
	if err != nil {
		return nil, err
	}
	report := func(Progress) {}
	if progress != nil {
		report = progress
	}
	// The engine reads the recording on goroutines of its passes while
	// it reports status changes on its own: mu keeps the progress whole.
	var (
		mu      sync.Mutex
		cur     Progress
		lastN   int
		counted = map[int]bool{}
	)
	fsys := &inputFS{in: in, name: "recording"}
	fsys.seen = func(r *reader) {
		mu.Lock()
		defer mu.Unlock()
		// The engine's probe reads the header only: a reader becomes a
		// pass when it reads on past its first chunk, or is the whole file.
		if !counted[r.n] && (r.at > 0 || r.done() == 1) {
			counted[r.n] = true
			cur.Pass++
		}
		if !counted[r.n] {
			return
		}
		read := r.done()
		if r.n != lastN || read-cur.Read >= progressEvery || read == 1 {
			lastN, cur.Read = r.n, read
			report(cur)
		}
	}
	eng := &engine.Engine{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	res, err := eng.Run(ctx, p, engine.Inputs{Main: fsys.name, FS: fsys}, out, func(s production.Status, f float64) {
		mu.Lock()
		defer mu.Unlock()
		cur.Status, cur.Fraction = s, f
		report(cur)
	})
	if err != nil {
		return nil, formatError(err)
	}
	warnIgnored(p)
	// The chart's target is the one the engine ran with.
	s, err := engine.SettingsOf(p)
	if err != nil {
		return nil, err
	}
	target := int(math.Round(s.Chain.TargetLUFS))
	return &Result{Production: p, Files: res.Files, LoudnessChart: res.LoudnessChart, Waveform: res.Waveform, Chart: Legend(target)}, nil
}

// ErrFormat means the recording is not WAV, FLAC or MP3, the formats
// audiopost decodes in Go: the others need ffmpeg, which only a server
// has.
var ErrFormat = errors.New("not a WAV, FLAC or MP3 recording (other formats need ffmpeg, which only a server has)")

// formatError makes a decoder's failure to recognise the recording
// ErrFormat: the registry's last resort is ffmpeg, whose absence is no
// news to someone without a server.
func formatError(err error) error {
	if errors.Is(err, audio.ErrCodecUnavailable) || errors.Is(err, audio.ErrUnknownFormat) {
		return ErrFormat
	}
	return err
}
