package engine

import (
	"errors"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
	"github.com/audiopost/audiopost/audio/procpool"
	"github.com/audiopost/audiopost/internal/need"
	"github.com/audiopost/audiopost/internal/testaudio"
	"github.com/audiopost/audiopost/internal/testsize"
	"github.com/audiopost/audiopost/production"
)

// opusFile writes seconds of speech-like stereo at 48 kHz as Opus, an
// input only ffmpeg decodes, and returns its path.
func opusFile(t *testing.T, seconds float64) string {
	t.Helper()
	need.Programs(t, "ffmpeg", "ffprobe")
	dir := t.TempDir()
	wav := filepath.Join(dir, "talk.wav")
	testaudio.WriteWAV(t, wav, testaudio.SpeechLike(48000, seconds, 0.05), 48000)
	opus := filepath.Join(dir, "talk.opus")
	if out, err := exec.Command("ffmpeg", "-nostdin", "-v", "error", "-i", wav, "-c:a", "libopus", "-y", opus).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return opus
}

// TestDecodedInputIsFFmpegs opens an Opus input three times in one run:
// the first open starts ffprobe and ffmpeg once, the others none, and all
// three read exactly the samples ffmpeg decodes, under the Info of the
// probe. Cleanup deletes the decoded file.
func TestDecodedInputIsFFmpegs(t *testing.T) {
	// Samples and counts of one goroutine's opens: the race run
	// takes the decode-once path through whole runs in
	// TestInputsDecodedOnce and TestEngineDecodeProgress.
	testsize.SkipRace(t, "one goroutine's samples and counts, checked by the plain run")
	opus := opusFile(t, 2)
	want, _ := testaudio.ReadFile(t, opus)
	info, err := audio.ProbeFile(t.Context(), opus)
	if err != nil {
		t.Fatal(err)
	}

	pool := procpool.New(procpool.Config{Size: 4, Logger: slog.New(slog.DiscardHandler)})
	ctx := procpool.With(t.Context(), pool)
	tmp := t.TempDir()
	r := &run{e: &Engine{TempDir: tmp}}
	for i := range 3 {
		d, err := r.open(ctx, opus, "input file")
		if err != nil {
			t.Fatal(err)
		}
		if got := d.Info(); got.Format != info.Format || got.Frames != info.Frames || got.Length != info.Length || got.Bitrate != info.Bitrate {
			t.Errorf("open %d: Info %+v, the probe's %+v", i, got, info)
		}
		if got := testaudio.ReadAll(t, d); !slices.EqualFunc(got, want, slices.Equal) {
			t.Errorf("open %d: %d frames unlike ffmpeg's %d", i, got.Frames(), want.Frames())
		}
		d.Close()
	}
	if p, m := pool.Starts("ffprobe"), pool.Starts("ffmpeg"); p != 1 || m != 1 {
		t.Errorf("three opens started ffprobe %d and ffmpeg %d times, want once each", p, m)
	}
	if len(r.ffmpegInputs) != 0 {
		t.Errorf("the run plans %v as decoded by ffmpeg while it streams", r.ffmpegInputs)
	}
	r.cleanup(false)
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("cleanup left %d files in TempDir", len(left))
	}
}

// TestDecodeDiskLimit: an input whose decode would take more temporary
// disk than Limits.Disk leaves (with the decodes before it) is a form
// error naming it and its figures before anything is written; one whose
// probe understates its length (here: none) stops at the limit with no
// file left, instead of filling the disk. At the limit it decodes.
func TestDecodeDiskLimit(t *testing.T) {
	testsize.SkipRace(t, "one goroutine's limits and errors, checked by the plain run")
	opus := opusFile(t, 4)
	pool := procpool.New(procpool.Config{Size: 4, Logger: slog.New(slog.DiscardHandler)})
	ctx := procpool.With(t.Context(), pool)
	info, err := audio.ProbeFile(ctx, opus)
	if err != nil {
		t.Fatal(err)
	}
	need := production.DecodedBytes(info.Channels, info.SampleRate, info.Length)
	tmp := t.TempDir()
	newRun := func(disk int64) *run {
		return &run{e: &Engine{TempDir: tmp, Limits: production.Limits{Disk: disk}}, p: &production.Production{}, in: Inputs{Main: opus}}
	}
	empty := func(when string) {
		t.Helper()
		if left, _ := os.ReadDir(tmp); len(left) != 0 {
			t.Errorf("%s: %d files left in TempDir", when, len(left))
		}
	}

	r := newRun(need - 1)
	_, err = r.open(ctx, opus, "input file")
	var fe production.FieldErrors
	if !errors.As(err, &fe) || !strings.HasPrefix(fe["input_file"], "the input decodes to 2.5 MB as 32-bit floats (4.0") ||
		!strings.Contains(fe["input_file"], "in at most 2.5 MB of temporary disk") {
		t.Errorf("one byte short: %v", err)
	}
	empty("one byte short")

	// The probe says nothing of the length: the 1 MB the plan allows a
	// file beyond its samples is all the limit leaves, and 4 s of stereo
	// take 1.5 MB.
	r = newRun(production.DecodedBytes(2, 48000, 0))
	f, err := os.Open(opus)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := audio.Decode(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.decodeToFile(ctx, lengthless{d}, "multi_input_files.1")
	d.Close()
	if !errors.As(err, &fe) || !strings.HasPrefix(fe["multi_input_files.1"], "the input decodes to more than its probe said") {
		t.Errorf("no length probed: %v", err)
	}
	empty("no length probed")

	r = newRun(need)
	d2, err := r.open(ctx, opus, "input file")
	if err != nil {
		t.Fatalf("at the limit: %v", err)
	}
	d2.Close()
	if r.decodedDisk <= 0 || r.decodedDisk > need {
		t.Errorf("at the limit: the decode took %d bytes, planned %d", r.decodedDisk, need)
	}
	r.cleanup(false)
	empty("cleanup")
}

// lengthless is a decoder whose probe found no length.
type lengthless struct{ audio.Decoder }

func (d lengthless) Info() audio.Info {
	i := d.Decoder.Info()
	i.Length, i.Frames = 0, -1
	return i
}

// TestDecodeReportsProgress decodes 8 s of Opus once with the run's
// progress hook recording every event and, at each, the size of the WAV
// file being written: the events come while the file grows (between the
// decode's start and its end), rise, stay within the decode's share of
// Audio Processing and reach it at the end. Without the reports the
// step sat at 0 % for the whole decode.
func TestDecodeReportsProgress(t *testing.T) {
	opus := opusFile(t, 8)
	pool := procpool.New(procpool.Config{Size: 4, Logger: slog.New(slog.DiscardHandler)})
	ctx := procpool.With(t.Context(), pool)
	tmp := t.TempDir()
	type event struct {
		frac float64
		size int64
	}
	var events []event
	r := &run{e: &Engine{TempDir: tmp}, p: &production.Production{}, in: Inputs{Main: opus}, status: production.StatusAudioProcessing}
	r.progress = func(s production.Status, frac float64) {
		if s != production.StatusAudioProcessing {
			t.Errorf("progress in status %v", s)
		}
		var size int64
		if files, _ := filepath.Glob(filepath.Join(tmp, "audiopost-input-*.wav")); len(files) == 1 {
			if fi, err := os.Stat(files[0]); err == nil {
				size = fi.Size()
			}
		}
		events = append(events, event{frac, size})
	}
	d, err := r.open(ctx, opus, "input file")
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	defer r.cleanup(false)
	fi, err := os.Stat(r.decoded[opus].path)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) < 20 {
		t.Fatalf("%d progress events while decoding 8 s, want one per 1 %% of the decode's %g: %+v", len(events), decodeShare, events)
	}
	growing := 0
	for i, e := range events {
		if e.frac <= 0 || e.frac > decodeShare+1e-9 || (i > 0 && e.frac <= events[i-1].frac) {
			t.Errorf("event %d: fraction %g after %g, want rising within (0, %g]", i, e.frac, events[max(i-1, 0)].frac, decodeShare)
		}
		if e.size > 0 && e.size < fi.Size() && (i == 0 || e.size >= events[i-1].size) {
			growing++
		}
	}
	if last := events[len(events)-1].frac; last < decodeShare-0.01 {
		t.Errorf("the decode ended at %g of Audio Processing, want %g", last, decodeShare)
	}
	// The last events may come once the file is written whole.
	if growing < len(events)/2 {
		t.Errorf("only %d of %d events came while the file grew", growing, len(events))
	}
}

// TestDecodeProgressByLength decodes the tracks of a multitrack
// production, 6 s and 1.5 s long, as the probe does: the first takes
// 6/7.5 of decodeShare of the progress (an equal split by count gave it
// half), the second the rest.
func TestDecodeProgressByLength(t *testing.T) {
	long, short := opusFile(t, 6), opusFile(t, 1.5)
	pool := procpool.New(procpool.Config{Size: 4, Logger: slog.New(slog.DiscardHandler)})
	ctx := procpool.With(t.Context(), pool)
	p := &production.Production{IsMultitrack: true, MultiInputFiles: []production.MultiInputFile{
		{Type: production.InputMultitrack, ID: "a", InputFile: "a.opus", InputLength: 6},
		{Type: production.InputMultitrack, ID: "b", InputFile: "b.opus", InputLength: 1.5},
	}}
	var events []float64
	r := &run{e: &Engine{TempDir: t.TempDir()}, p: p, in: Inputs{Multi: map[string]string{"a": long, "b": short}},
		status: production.StatusAudioProcessing}
	r.progress = func(_ production.Status, frac float64) { events = append(events, frac) }
	r.planDecodes()
	defer r.cleanup(false)
	var ends []float64
	for _, path := range []string{long, short} {
		d, err := r.open(ctx, path, "track")
		if err != nil {
			t.Fatal(err)
		}
		d.Close()
		ends = append(ends, r.lastFrac)
	}
	if want := decodeShare * 6 / 7.5; math.Abs(ends[0]-want) > 0.011 {
		t.Errorf("the 6 s track's decode ended at %.3f of Audio Processing, want %.3f (by length; %.3f by count): %.3f", ends[0], want, decodeShare/2, events)
	}
	if math.Abs(ends[1]-decodeShare) > 0.011 {
		t.Errorf("the decodes ended at %.3f, want %g: %.3f", ends[1], decodeShare, events)
	}
}

// TestEncoderTempLimit encodes 30 s of noise for output 1 of a production
// (MP3 at 320 kbps, 1.2 MB) through the engine's encoder of that output
// held to 64 KB of temporary disk: the encoder fails with the form error
// of output_files.1, and its temporary file (beside the output's) is
// gone.
func TestEncoderTempLimit(t *testing.T) {
	need.Programs(t, "ffmpeg", "ffprobe")
	tmp, outDir := t.TempDir(), t.TempDir()
	p := &production.Production{OutputFiles: []production.OutputFile{{Format: "wav"}, {Format: "mp3", Bitrate: 320}}}
	r := &run{e: &Engine{TempDir: tmp}, p: p, tempFiles: []int64{0, 64 << 10}}
	of, _ := production.LookupFormat("mp3")
	fh, err := openHandle(DirWriter{Dir: outDir}, "out.mp3", 1, kindMain)
	if err != nil {
		t.Fatal(err)
	}
	const rate = 44100
	format := audio.Format{SampleRate: rate, Channels: 2}
	opts := audio.EncodeOptions{Bitrate: 320, TempDir: tmp, TempLimit: r.tempLimit(1)}
	enc, err := r.limited(r.encoderFor(of, "out.mp3"), 1, opts.TempLimit)(t.Context(), fh, format, opts)
	if err != nil {
		t.Fatal(err)
	}
	_, err = audio.Copy(t.Context(), enc, audio.NewBufferSource(audiotest.Noise(2, 30*rate, 0.3, 1), rate))
	if cerr := enc.Close(); err == nil {
		err = cerr
	}
	var fe production.FieldErrors
	if !errors.As(err, &fe) || !strings.HasPrefix(fe["output_files.1"], "its encoder's temporary files grew past the 0.1 MB planned for them") {
		t.Errorf("encoding 1.2 MB within 64 KB: %v, want the form error of output_files.1", err)
	}
	if err := fh.pf.Abort(); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{tmp, outDir} {
		if files, _ := os.ReadDir(d); len(files) > 0 {
			t.Errorf("%d files left in %s", len(files), d)
		}
	}
}
