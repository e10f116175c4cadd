package engine_test

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/production"
	"github.com/audiopost/audiopost/production/engine"
)

// TestEngineDropsChaptersPastTheEnd runs a production saved without a
// probed input length (as before the work budget): the chapter at 999999 s
// is dropped with a warning instead of leaving an empty AAC part, which
// failed the run ("monitoring the encoded aac: malformed data").
func TestEngineDropsChaptersPastTheEnd(t *testing.T) {
	need.Program(t, "ffmpeg")
	const rate = 44100
	dir, outDir := t.TempDir(), t.TempDir()
	input := filepath.Join(dir, "in.wav")
	testaudio.WriteWAV(t, input, testaudio.SpeechLike(rate, 4, 0.1), rate)
	p := newProduction(t, `{"input_file": "https://example.org/in.wav", "output_basename": "show",
		"chapters": [{"start": 0, "title": "One"}, {"start": 2, "title": "Two"}, {"start": 999999, "title": "Far"}],
		"output_files": [{"format": "aac", "split_on_chapters": true}]}`)
	if _, err := (&engine.Engine{}).Run(context.Background(), p, engine.Inputs{Main: input}, engine.DirWriter{Dir: outDir}, nil); err != nil {
		t.Fatalf("run: %v", err)
	}
	if want := `1 chapter at or after the end of the input (00:00:04.000) dropped: 277:46:39.000 "Far"`; !strings.Contains(p.WarningMessage, want) {
		t.Errorf("warning %q, want it to say %q", p.WarningMessage, want)
	}
	var parts []string
	for _, o := range p.ListedOutputFiles() {
		parts = append(parts, o.Filename)
	}
	if strings.Join(parts, " ") != "show-01.m4a show-02.m4a" {
		t.Errorf("parts %q, want two", parts)
	}
}

// TestEngineChecksTheBudget: a production beyond the engine's Limits ends
// in Error with the form errors before any file is written.
func TestEngineChecksTheBudget(t *testing.T) {
	const rate = 16000
	dir, outDir := t.TempDir(), t.TempDir()
	input := filepath.Join(dir, "in.wav")
	testaudio.WriteWAV(t, input, testaudio.SpeechLike(rate, 3, 0.1), rate)
	p := newProduction(t, `{"input_file": "https://example.org/in.wav",
		"chapters": [{"start": 0, "title": "One"}, {"start": 1, "title": "Two"}, {"start": 2, "title": "Three"}],
		"output_files": [{"format": "wav", "split_on_chapters": true}]}`)
	_, err := (&engine.Engine{Limits: production.Limits{Parts: 2}}).Run(context.Background(), p, engine.Inputs{Main: input}, engine.DirWriter{Dir: outDir}, nil)
	if !errors.Is(err, production.ErrInvalid) {
		t.Fatalf("run: %v, want ErrInvalid", err)
	}
	want := "the production needs more than this server allows: invalid fields: output_files.0.split_on_chapters: would split into 3 parts, one per chapter; 3 s of input allow at most 2"
	if p.Status != production.StatusError || !strings.HasPrefix(p.ErrorMessage, want) {
		t.Errorf("status %v, error %q\nwant %q", p.Status, p.ErrorMessage, want)
	}
	if files, _ := os.ReadDir(outDir); len(files) > 0 {
		t.Errorf("%d files written", len(files))
	}
}

// TestEngineKeepsTheSavedWarning: the chapter a save dropped past the
// input's end (the production no longer holds it) is still named in the
// warning after the run, and a second run does not repeat or lose it.
func TestEngineKeepsTheSavedWarning(t *testing.T) {
	const rate = 16000
	dir, outDir := t.TempDir(), t.TempDir()
	input := filepath.Join(dir, "in.wav")
	testaudio.WriteWAV(t, input, testaudio.SpeechLike(rate, 3, 0.1), rate)
	p := newProduction(t, `{"input_file": "https://example.org/in.wav",
		"chapters": [{"start": 0, "title": "One"}, {"start": 999999, "title": "Far"}],
		"output_files": [{"format": "wav"}]}`)
	p.InputLength = 3
	if err := p.FitBudget(production.Limits{}); err != nil {
		t.Fatal(err)
	}
	want := `1 chapter at or after the end of the input (00:00:03.000) dropped: 277:46:39.000 "Far"`
	if !strings.Contains(p.WarningMessage, want) {
		t.Fatalf("saved warning %q, want %q", p.WarningMessage, want)
	}
	for run := 1; run <= 2; run++ {
		if _, err := (&engine.Engine{}).Run(context.Background(), p, engine.Inputs{Main: input}, engine.DirWriter{Dir: outDir}, nil); err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		if p.Status != production.StatusDone || strings.Count(p.WarningMessage, want) != 1 {
			t.Errorf("run %d: status %v, warning %q, want Done and %q once", run, p.Status, p.WarningMessage, want)
		}
	}
}

// TestEngineBoundsDecodedDisk: an Opus input whose decode into 32-bit
// floats would not fit the engine's Limits.Disk ends the run in Error
// with the form error naming the input and the figures, before anything
// is written to TempDir or the outputs (a production stored before the
// limit, or the command line's, whose length only the engine's probe
// learns).
func TestEngineBoundsDecodedDisk(t *testing.T) {
	dir, tmp, outDir := t.TempDir(), t.TempDir(), t.TempDir()
	talk := opusInput(t, dir, "talk", 4)
	p := newProduction(t, `{"input_file": "https://example.org/talk.opus", "output_files": [{"format": "flac"}]}`)
	eng := &engine.Engine{TempDir: tmp, Limits: production.Limits{Disk: 2 << 20}}
	_, err := eng.Run(t.Context(), p, engine.Inputs{Main: talk}, engine.DirWriter{Dir: outDir}, nil)
	var fe production.FieldErrors
	if !errors.As(err, &fe) || !strings.HasPrefix(fe["input_file"], "the input decodes to 2.5 MB as 32-bit floats (4.007 s of 2 channels at 48000 Hz)") {
		t.Fatalf("run: %v, want the disk limit's form error on input_file", err)
	}
	if p.Status != production.StatusError || !strings.Contains(p.ErrorMessage, "in at most 2.0 MB of temporary disk") {
		t.Errorf("status %v, error %q", p.Status, p.ErrorMessage)
	}
	wantNoFiles(t, tmp, outDir)
}

// TestEngineBoundsCopiedVideo runs a "video" output of a 1 s video input
// whose video stream (MPEG-4 of noise, about 55 Mbit/s) is far beyond
// the 2 Mbit/s a render is planned at: the engine's probe learns the
// input's size, plans the copy at it and, over the limit, ends the run
// with the form error on output_files before anything is encoded.
func TestEngineBoundsCopiedVideo(t *testing.T) {
	ffmpeg := need.Program(t, "ffmpeg")
	need.Programs(t, "ffprobe")
	dir, tmp, outDir := t.TempDir(), t.TempDir(), t.TempDir()
	video := filepath.Join(dir, "noise.mp4")
	if out, err := exec.Command(ffmpeg, "-nostdin", "-v", "error",
		"-f", "lavfi", "-i", "nullsrc=s=640x360:r=25:d=1,geq=lum='random(1)*255':cb=128:cr=128",
		"-f", "lavfi", "-i", "sine=f=440:d=1:sample_rate=48000", "-c:v", "mpeg4", "-q:v", "2", "-c:a", "aac", "-shortest", "-y", video).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	fi, err := os.Stat(video)
	if err != nil {
		t.Fatal(err)
	}
	// The plan: the audio's decode (~1.2 MB), and twice the output with
	// its cover allowance (32 MB) and the video: ~67 MB at 2 Mbit/s, ~67
	// MB + twice the file's size as a copy.
	if fi.Size() < 4<<20 {
		t.Fatalf("the video input takes %d bytes, want over 4 MB", fi.Size())
	}
	p := newProduction(t, `{"input_file": "https://example.org/noise.mp4", "output_files": [{"format": "video"}]}`)
	eng := &engine.Engine{TempDir: tmp, Limits: production.Limits{Disk: 72 << 20}}
	_, err = eng.Run(t.Context(), p, engine.Inputs{Main: video}, engine.DirWriter{Dir: outDir}, nil)
	var fe production.FieldErrors
	if !errors.As(err, &fe) || !strings.Contains(fe["output_files"], "of temporary disk") {
		t.Fatalf("run: %v, want the disk limit's form error on output_files", err)
	}
	if p.InputSize != fi.Size() || !p.HasVideo || p.InputDecoder != "ffmpeg" {
		t.Errorf("probed input size %d (video %v, decoder %q), want %d (ffmpeg's)", p.InputSize, p.HasVideo, p.InputDecoder, fi.Size())
	}
	wantNoFiles(t, tmp, outDir)
}

// TestEngineBoundsEncoderTemp runs a multitrack production whose one
// track is ADTS AAC that ffprobe takes for 2.9 s (it estimates the length
// from the first second's bitrate) and that decodes to 15 s: its "tracks"
// output's temporary WAV, planned at 4 bytes a sample of the probed
// length (1.5 MB), grows past that (2.1 MB at 24 bits), and the run ends
// with the form error on output_files.0, no file left in TempDir or the
// outputs.
func TestEngineBoundsEncoderTemp(t *testing.T) {
	ffmpeg := need.Program(t, "ffmpeg")
	need.Programs(t, "ffprobe")
	dir, tmp, outDir := t.TempDir(), t.TempDir(), t.TempDir()
	var track []byte
	for _, part := range [][]string{
		{"anoisesrc=d=1:a=0.5:r=48000", "256k"},
		{"sine=f=300:d=14:sample_rate=48000", "24k"},
	} {
		out, err := exec.Command(ffmpeg, "-nostdin", "-v", "error", "-f", "lavfi", "-i", part[0], "-c:a", "aac", "-b:a", part[1], "-f", "adts", "-").Output()
		if err != nil {
			t.Fatal(err)
		}
		track = append(track, out...)
	}
	path := filepath.Join(dir, "a.aac")
	if err := os.WriteFile(path, track, 0o644); err != nil {
		t.Fatal(err)
	}
	p := newProduction(t, `{"is_multitrack": true, "output_files": [{"format": "tracks", "ending": "wav.zip"}],
		"multi_input_files": [{"type": "multitrack", "id": "a", "input_file": "https://example.org/a.aac"}]}`)
	eng := &engine.Engine{TempDir: tmp}
	_, err := eng.Run(t.Context(), p, engine.Inputs{Multi: map[string]string{"a": path}}, engine.DirWriter{Dir: outDir}, nil)
	var fe production.FieldErrors
	if !errors.As(err, &fe) || !strings.HasPrefix(fe["output_files.0"], "its encoder's temporary files grew past the 1.5 MB planned for them") {
		t.Fatalf("run: %v, want the form error of output_files.0 (probed length %.2f s)", err, p.MultiInputFiles[0].InputLength)
	}
	wantNoFiles(t, tmp, outDir)
}

// processorWatch is the chain's processor, telling the test when the
// processing starts, what the job said and how many frames of the input
// it has read.
type processorWatch struct {
	started func(engine.ProcessJob)
	read    *int64
}

func (w processorWatch) Process(ctx context.Context, open audio.Opener, job engine.ProcessJob) (*engine.Processed, error) {
	w.started(job)
	counted := func(ctx context.Context) (audio.Source, error) {
		src, err := open(ctx)
		if err != nil {
			return nil, err
		}
		return &countingSource{Source: src, read: w.read}, nil
	}
	return engine.ChainProcessor{}.Process(ctx, counted, job)
}

// countingSource adds the frames read to *read.
type countingSource struct {
	audio.Source
	read *int64
}

func (s *countingSource) Read(dst audio.Buffer) (int, error) {
	n, err := s.Source.Read(dst)
	*s.read += int64(n)
	return n, err
}

func (s *countingSource) Close() error {
	if c, ok := s.Source.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// TestEngineDecodeProgress runs a production from 6 s of Opus with a
// progress hook and a processor that marks its start: Audio Processing
// moves during the probe's decode (events before the processor starts,
// within the decode's first quarter of the step), then on from there as
// soon as the processor reads (not after a quarter of the input, as when
// the processor's fraction started at 0 again), never back. The
// processor's job gets what the disk limit leaves for the chain's spill
// file.
func TestEngineDecodeProgress(t *testing.T) {
	dir, outDir := t.TempDir(), t.TempDir()
	const seconds = 6
	talk := opusInput(t, dir, "talk", seconds)
	// No restoration, which the chain's spill is for: the job says what
	// the limit leaves either way, and the test stays cheap.
	p := newProduction(t, `{"input_file": "https://example.org/talk.opus", "output_files": [{"format": "flac"}]}`)
	var (
		before, after []float64 // Audio Processing's fractions before and after the processor started
		firstRead     int64     // frames the processor had read at its first event
		started       bool
		job           engine.ProcessJob
		read          int64
	)
	const disk = 64 << 20
	eng := &engine.Engine{TempDir: t.TempDir(), Limits: production.Limits{Disk: disk},
		Processor: processorWatch{started: func(j engine.ProcessJob) { started, job = true, j }, read: &read}}
	progress := func(s production.Status, frac float64) {
		if s != production.StatusAudioProcessing || frac == 0 {
			return
		}
		switch {
		case !started:
			before = append(before, frac)
		case len(after) == 0:
			firstRead = read
			fallthrough
		default:
			after = append(after, frac)
		}
	}
	if _, err := eng.Run(t.Context(), p, engine.Inputs{Main: talk}, engine.DirWriter{Dir: outDir}, progress); err != nil {
		t.Fatal(err)
	}
	if len(before) < 10 || before[len(before)-1] > 0.25+1e-9 {
		t.Fatalf("Audio Processing before the processor started: %v, want at least 10 events up to 0.25", before)
	}
	if len(after) == 0 || after[0] < before[len(before)-1] || after[len(after)-1] < 0.95 {
		t.Errorf("Audio Processing while processing: %v, want on from %v to the end", after, before[len(before)-1:])
	}
	if most := int64(0.05 * seconds * 48000); firstRead > most {
		t.Errorf("the processing's first event came after %d frames read, want within 5 %% of the input (%d)", firstRead, most)
	}
	for i := 1; i < len(after); i++ {
		if after[i] < after[i-1] {
			t.Errorf("Audio Processing went back from %g to %g", after[i-1], after[i])
		}
	}
	if want := disk - production.PlanWork(p).Disk; job.SpillBytes != want || want <= 0 {
		t.Errorf("the chain may spill %d bytes, want the %d the disk limit leaves", job.SpillBytes, want)
	}
}

// wantNoFiles fails the test for each of dirs that holds a file: a run
// stopped by a limit leaves nothing in TempDir or the outputs.
func wantNoFiles(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		if files, _ := os.ReadDir(d); len(files) > 0 {
			t.Errorf("%d files left in %s", len(files), d)
		}
	}
}
