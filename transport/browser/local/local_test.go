package local_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/audiopost/audiopost/audio"
	_ "github.com/audiopost/audiopost/audio/codecs"
	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/internal/testsize"
	"github.com/audiopost/audiopost/loudness"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/engine"
	"github.com/audiopost/audiopost/transport/browser/local"
)

// files is an engine.OutputWriter in memory whose files seek and read
// back, as the browser's Blobs do.
type files map[string]*file

func (fs files) Create(name string) (engine.PendingFile, error) {
	return &file{name: name, fs: fs}, nil
}

type file struct {
	testaudio.MemFile
	name string
	fs   files
}

func (f *file) Close() error { f.fs[f.name] = f; return nil }
func (f *file) Abort() error { return nil }

// countingReader counts the reads of the recording and how much they
// asked for, to show that it is read in slices.
type countingReader struct {
	r           io.ReaderAt
	reads, most int
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	c.reads++
	c.most = max(c.most, len(p))
	return c.r.ReadAt(p, off)
}

func input(name string, data []byte) (local.Input, *countingReader) {
	c := &countingReader{r: bytes.NewReader(data)}
	return local.Input{Name: name, Size: int64(len(data)), Data: c}, c
}

// speech is a stereo WAV of seconds of testaudio.SpeechLike at 48 kHz.
func speech(t testing.TB, seconds float64) []byte {
	return testaudio.EncodeWAV(t, testaudio.SpeechLike(48000, seconds, 0.2), 48000, 16)
}

// TestProcessIsTheServersRun processes a recording held as an
// io.ReaderAt and the same recording as a file through the Engine as the
// command line and the server run it: the files are the same bytes and
// the statistics the same, and the recording was read in slices of a
// megabyte, never whole.
func TestProcessIsTheServersRun(t *testing.T) {
	// 12 s (2.3 MB), 6 s (1.2 MB, still more than one slice) under the
	// race detector, which is here for the progress reports' goroutines.
	seconds := 12.0
	if testsize.Race {
		seconds = 6
	}
	data := speech(t, seconds)
	const settings = `{"output_files": [{"format": "flac"}, {"format": "wav"}], "algorithms": {"loudnesstarget": -18, "maxpeak": -1}}`
	ctx := context.Background()

	in, reads := input("talk.wav", data)
	out := files{}
	var seen []local.Progress
	res, err := local.Process(ctx, in, []byte(settings), out, func(p local.Progress) { seen = append(seen, p) })
	if err != nil {
		t.Fatal(err)
	}
	if reads.most > 1<<20 {
		t.Errorf("a read of %d bytes: the recording must be read in slices of at most 1 MB", reads.most)
	}
	// The analysis, the loudness passes and the render each read it.
	if min := 3 * len(data) / (1 << 20); reads.reads < min {
		t.Errorf("%d reads, want at least %d", reads.reads, min)
	}

	dir := t.TempDir()
	path := filepath.Join(dir, "talk.wav")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := local.NewProduction(ctx, []byte(settings), "talk.wav")
	if err != nil {
		t.Fatal(err)
	}
	outDir := t.TempDir()
	if _, err := (&engine.Engine{Logger: slog.New(slog.DiscardHandler)}).Run(ctx, p, engine.Inputs{Main: path}, engine.DirWriter{Dir: outDir}, nil); err != nil {
		t.Fatal(err)
	}
	if len(res.Files) != 2 || res.Files[0].Name != "talk.flac" || res.Files[1].Name != "talk.wav" {
		t.Fatalf("files %+v, want talk.flac and talk.wav", res.Files)
	}
	for _, f := range res.Files {
		want, err := os.ReadFile(filepath.Join(outDir, f.Name))
		if err != nil {
			t.Fatal(err)
		}
		if got := out[f.Name]; got == nil || !bytes.Equal(got.B, want) {
			t.Errorf("%s differs from the file the Engine wrote from disk", f.Name)
		}
	}
	a, _ := json.Marshal(p.Statistics)
	b, _ := json.Marshal(res.Production.Statistics)
	if !bytes.Equal(a, b) {
		t.Errorf("statistics differ:\nfrom disk %s\nhere      %s", a, b)
	}
	lv := res.Production.Statistics.Levels
	if lv == nil || math.Abs(lv.Output.Loudness.Value+18) > 0.2 {
		t.Errorf("output levels %+v, want -18 LUFS", lv)
	}
	if len(res.LoudnessChart) == 0 || len(res.Waveform) == 0 || res.Chart.TargetLUFS != -18 {
		t.Errorf("chart %d bytes, waveform %d bytes, legend %+v", len(res.LoudnessChart), len(res.Waveform), res.Chart)
	}

	// Progress: the statuses in order, the passes counted from 1, each
	// read to its end.
	var statuses []production.Status
	passDone := map[int]bool{}
	for _, s := range seen {
		if len(statuses) == 0 || statuses[len(statuses)-1] != s.Status {
			statuses = append(statuses, s.Status)
		}
		if s.Read == 1 {
			passDone[s.Pass] = true
		}
	}
	want := []production.Status{production.StatusAudioProcessing, production.StatusAudioEncoding, production.StatusDone}
	if !equalStatuses(statuses, want) {
		t.Errorf("statuses %v, want %v", statuses, want)
	}
	last := seen[len(seen)-1]
	if last.Pass < 3 {
		t.Errorf("%d passes, want at least 3 (analysis, loudness, render)", last.Pass)
	}
	for pass := 1; pass <= last.Pass; pass++ {
		if !passDone[pass] {
			t.Errorf("pass %d of %d never reported reading the whole recording", pass, last.Pass)
		}
	}
}

func equalStatuses(a, b []production.Status) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestProcessCompressedInputs processes FLAC and MP3 recordings, whose
// decoders seek and sniff differently from WAV's.
func TestProcessCompressedInputs(t *testing.T) {
	need.Program(t, "ffmpeg")
	// 8 s, and 2 under the race detector, whose run checks the progress
	// reports' goroutines: our MP3 and FLAC decoders, which compute alone,
	// took 24 s of its CPU on 8 s (the plain run decodes the 8).
	seconds := 8.0
	if testsize.Race {
		seconds = 2
	}
	dir := t.TempDir()
	wav := filepath.Join(dir, "talk.wav")
	if err := os.WriteFile(wav, speech(t, seconds), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, codec string }{{"talk.flac", "flac"}, {"talk.mp3", "libmp3lame"}} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name)
			if out, err := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-i", wav, "-c:a", tc.codec, "-y", path).CombinedOutput(); err != nil {
				t.Fatalf("ffmpeg: %v\n%s", err, out)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			in, _ := input(tc.name, data)
			out := files{}
			res, err := local.Process(context.Background(), in, []byte(`{"output_files": [{"format": "wav"}]}`), out, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := testaudio.DecodeWAV(t, out["talk.wav"].B)
			if secs := float64(got.Frames()) / 48000; math.Abs(secs-seconds) > 0.1 {
				t.Errorf("%.2f s of output, want %g", secs, seconds)
			}
			if res.Production.Format == "" || res.Production.SampleRate != 48000 {
				t.Errorf("input format %q at %d Hz", res.Production.Format, res.Production.SampleRate)
			}
		})
	}
}

// TestNewProductionErrors: settings the API refuses, and what only a
// server can do, are field errors naming the field.
func TestNewProductionErrors(t *testing.T) {
	for _, tc := range []struct{ settings, field string }{
		{`{"output_files": [{"format": "mp3"}]}`, "output_files.0.format"},
		{`{"output_files": [{"format": "flac"}, {"format": "video"}]}`, "output_files.1.format"},
		{`{"output_files": [{"format": "subtitle"}]}`, "output_files.0.format"},
		{`{"output_files": []}`, "output_files"},
		{`{"output_files": [{"format": "flac"}], "algorithms": {"loudnesstarget": -99}}`, "algorithms.loudnesstarget"},
		{`{"output_files": [{"format": "flac"}], "algorithms": {"nosuchkey": 1}}`, "algorithms.nosuchkey"},
		{`{"preset": {"algorithms": {"maxpeak": 7}}}`, "preset.algorithms.maxpeak"},
		{`{"preset": "some-uuid", "output_files": [{"format": "flac"}]}`, "preset"},
		{`{"output_files": [{"format": "flac"}], "is_multitrack": true}`, "is_multitrack"},
	} {
		_, err := local.NewProduction(context.Background(), []byte(tc.settings), "talk.wav")
		var fe production.FieldErrors
		if !errors.As(err, &fe) {
			t.Errorf("%s: error %v, want field errors", tc.settings, err)
			continue
		}
		if _, ok := fe[tc.field]; !ok {
			t.Errorf("%s: errors %v, want one on %s", tc.settings, fe, tc.field)
		}
	}
	if _, err := local.NewProduction(context.Background(), []byte(`{"output_files": `), "talk.wav"); err == nil {
		t.Error("broken JSON accepted")
	}
}

// TestNewProductionPreset: a preset object is merged as the API merges a
// stored preset: its values apply, the request's win, its output files
// give way to the request's; what only a server does is warned about.
func TestNewProductionPreset(t *testing.T) {
	const settings = `{"preset": {"uuid": "x", "preset_name": "Radio", "output_files": [{"format": "mp3"}],
		"algorithms": {"loudnesstarget": -23, "maxpeak": -2, "denoise": true}, "metadata": {"artist": "Ann"},
		"webhook": "https://example.org/hook"},
		"algorithms": {"maxpeak": -1}, "output_files": [{"format": "flac"}]}`
	p, err := local.NewProduction(context.Background(), []byte(settings), `C:\rec\interview.wav`)
	if err != nil {
		t.Fatal(err)
	}
	a := p.Algorithms.In(production.ScopeSingletrack)
	if a.Int("loudnesstarget") != -23 || a.Float("maxpeak") != -1 || !a.Bool("denoise") {
		t.Errorf("algorithms %v: want the preset's target and denoise with the request's maxpeak", p.Algorithms)
	}
	if len(p.OutputFiles) != 1 || p.OutputFiles[0].Format != "flac" || p.Metadata.Artist != "Ann" {
		t.Errorf("outputs %+v, artist %q", p.OutputFiles, p.Metadata.Artist)
	}
	if p.InputFile != "interview.wav" || p.OutputFilename(0) != "interview.flac" {
		t.Errorf("input %q, output %q", p.InputFile, p.OutputFilename(0))
	}
	if !strings.Contains(p.WarningMessage, "webhook") {
		t.Errorf("warning %q does not name the webhook", p.WarningMessage)
	}
}

// TestBuiltins: every built-in preset is a valid preset whose production
// can be made here, at the target its description states.
func TestBuiltins(t *testing.T) {
	d := local.Describe()
	if len(d.Presets) != len(local.Builtins) || len(d.Presets) == 0 {
		t.Fatalf("%d presets described", len(d.Presets))
	}
	for _, b := range d.Presets {
		settings := `{"preset": ` + string(b.Preset) + `}`
		p, err := local.NewProduction(context.Background(), []byte(settings), "x.wav")
		if err != nil {
			t.Errorf("%s: %v", b.Preset, err)
			continue
		}
		target := p.Algorithms.In(production.ScopeSingletrack).Int("loudnesstarget")
		if _, ok := d.Chart[target]; !ok || !strings.Contains(b.Description, "-"+strings.TrimPrefix(itoa(target), "-")) {
			t.Errorf("%s: target %d not in its description %q or the chart legends", b.Preset, target, b.Description)
		}
	}
	var offered []string
	for _, f := range d.Formats {
		if f.Unavailable == "" {
			offered = append(offered, f.Name)
		}
		if f.Name == "mp3" && !strings.Contains(f.Unavailable, "ffmpeg") {
			t.Errorf("mp3 unavailable because %q", f.Unavailable)
		}
	}
	if !sameSet(offered, local.Offered) {
		t.Errorf("formats offered %v, want %v", offered, local.Offered)
	}
	keys := map[string]bool{}
	for _, a := range d.Algorithms {
		keys[a.Key] = true
	}
	for _, k := range []string{"loudnesstarget", "maxpeak", "denoise", "leveler", "hipfilter", "cutter"} {
		if !keys[k] {
			t.Errorf("algorithm %s not described", k)
		}
	}
	if keys["gate"] || keys["pan"] {
		t.Error("multitrack keys described")
	}
}

func sameSet(a, b []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestMeasure measures as `audiopost measure` does: the decoder and the
// meter over the file, here over the recording read in slices.
func TestMeasure(t *testing.T) {
	testsize.SkipRace(t, "one goroutine: the decoder and the meter, numbers the plain run checks")
	data := speech(t, 12)
	dir := t.TempDir()
	path := filepath.Join(dir, "a.wav")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := audio.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	want, err := loudness.Measure(context.Background(), d, loudness.Options{Mode: loudness.ModeEBU})
	if err != nil {
		t.Fatal(err)
	}
	in, _ := input("a.wav", data)
	var last float64
	m, err := local.Measure(context.Background(), in, func(r float64) { last = r })
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		got  *float64
		want float64
	}{{"integrated", m.IntegratedLUFS, want.Integrated}, {"lra", m.LRALU, want.LRA}, {"true peak", m.TruePeakDBTP, want.TruePeak},
		{"sample peak", m.SamplePeakDBFS, want.SamplePeak}, {"max M", m.MaxMomentaryLUFS, want.MaxMomentary}, {"max S", m.MaxShortTermLUFS, want.MaxShortTerm}} {
		if c.got == nil || math.Abs(*c.got-c.want) > 0.005 {
			t.Errorf("%s: %v, want %.3f", c.name, c.got, c.want)
		}
	}
	if m.Format != "wav" || m.SampleRate != 48000 || m.Channels != 2 || math.Abs(m.Seconds-12) > 0.001 || last != 1 {
		t.Errorf("measurement %+v, progress ended at %v", m, last)
	}
	silent := testaudio.EncodeWAV(t, audio.NewBuffer(1, 48000), 48000, 16)
	in, _ = input("silence.wav", silent)
	if m, err := local.Measure(context.Background(), in, nil); err != nil || m.IntegratedLUFS != nil {
		t.Errorf("silence: %+v, %v; want no integrated loudness", m, err)
	}
	in, _ = input("junk.bin", []byte("this is not audio at all, just some words"))
	if _, err := local.Measure(context.Background(), in, nil); !errors.Is(err, local.ErrFormat) {
		t.Errorf("junk: %v, want local.ErrFormat", err)
	}
	if _, err := local.Process(context.Background(), in, []byte(`{"output_files": [{"format": "flac"}]}`), files{}, nil); !errors.Is(err, local.ErrFormat) {
		t.Errorf("processing junk: %v, want local.ErrFormat", err)
	}
}
