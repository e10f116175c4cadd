package chain

import (
	"context"
	"errors"
	"math"
	"os"
	"reflect"
	"runtime"
	"slices"
	"testing"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp/spectral"
	"github.com/audiopost/audiopost/internal/testsize"
)

// spillInput is noisy speech in stereo, for the restoration stage whose
// output the spill keeps: 12 s, 6 s under the race detector, where the
// dynamic denoiser's two renders of 12 s took 3.5 minutes.
func spillInput() audio.Buffer {
	secs := 12.0
	if testsize.Race {
		secs = 6
	}
	x := voice(secs, 140, 9, []float64{0, -9, -3})
	r := xorshift(5)
	for i := range x {
		x[i] += 0.002 * r.next()
	}
	return stereoOf(x)
}

// spillConfig is the default chain with the dynamic denoiser, in dir.
func spillConfig(dir string, spillBytes int64) Config {
	cfg := DefaultConfig()
	cfg.Restoration = &spectral.Restoration{Settings: spectral.Settings{Method: spectral.Dynamic}}
	cfg.MaxLRA = 1 // constraint passes more, which read the spill too
	cfg.TempDir, cfg.SpillBytes = dir, spillBytes
	return cfg
}

// With the restoration stage, the passes after the first loudness pass
// read the processed signal from the spill instead of the input: the
// input is opened for the analysis, the noise profile and the first
// loudness pass only, and the output is that of the chain that processes
// the input in every pass but for the spill's 32-bit rounding, far below
// any output's resolution. Nothing is left in the temporary directory.
func TestSpillReusesProcessing(t *testing.T) {
	skipUnderRace(t)
	b := spillInput()
	dir := t.TempDir()
	before := openFiles()
	got, gs, gotOpens := renderCounting(t, b, spillConfig(dir, 0))
	want, ws, wantOpens := renderCounting(t, b, spillConfig(dir, -1))
	if gotOpens != 3 {
		t.Errorf("with the spill the input was opened %d times, want 3 (analysis, noise profile, first loudness pass)", gotOpens)
	}
	if wantOpens < 5 {
		t.Errorf("without the spill the input was opened %d times, want at least 5 (a constraint pass and the render more)", wantOpens)
	}
	worst := 0.0
	for c := range want {
		for i := range want[c] {
			worst = max(worst, math.Abs(got[c][i]-want[c][i]))
		}
	}
	db := 20 * math.Log10(worst)
	t.Logf("input opened %d times with the spill, %d without; largest difference %.1f dBFS", gotOpens, wantOpens, db)
	if db > -120 {
		t.Errorf("the output read from the spill differs from the one processed again by up to %.1f dBFS, want below -120", db)
	}
	if d := math.Abs(gs.Output.Integrated - ws.Output.Integrated); d > 1e-3 {
		t.Errorf("integrated loudness %.4f against %.4f LUFS", gs.Output.Integrated, ws.Output.Integrated)
	}
	if !reflect.DeepEqual(gs.Restoration, ws.Restoration) {
		t.Errorf("restoration statistics %+v, want %+v", gs.Restoration, ws.Restoration)
	}
	if left, _ := os.ReadDir(dir); len(left) > 0 {
		t.Errorf("%d files left in the temporary directory", len(left))
	}
	if n := openFiles(); n != before {
		t.Errorf("%d files open after Close, %d before", n, before)
	}
}

// A programme larger than SpillBytes is processed again in every pass, as
// without a spill, when the input's length is unknown too.
func TestSpillLimit(t *testing.T) {
	skipUnderRace(t)
	b := spillInput()
	before := openFiles()
	_, _, opens := renderCounting(t, b, spillConfig(t.TempDir(), 64<<10))
	if opens < 5 {
		t.Errorf("past SpillBytes the input was opened %d times, want at least 5", opens)
	}
	if n := openFiles(); n != before {
		t.Errorf("%d files open after Close, %d before", n, before)
	}
}

// The spill's passes cut into stages compute what the sequential ones do,
// to the last bit.
func TestSpillStagesAreBitIdentical(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	b := spillInput()
	seqCfg := spillConfig(t.TempDir(), 0)
	seqCfg.Sequential = true
	seq, sst, _ := renderCounting(t, b, seqCfg)
	par, pst, _ := renderCounting(t, b, spillConfig(t.TempDir(), 0))
	for c := range seq {
		if !slices.Equal(seq[c], par[c]) {
			t.Fatalf("channel %d differs between the sequential and the staged render", c)
		}
	}
	if sst.Settings != pst.Settings || sst.Output != pst.Output || !reflect.DeepEqual(sst.Restoration, pst.Restoration) {
		t.Errorf("statistics differ: %+v / %+v", sst.Settings, pst.Settings)
	}
}

// A pass that fails while it writes the spill leaves nothing behind, and
// neither does a cancelled pipeline.
func TestSpillFailureLeavesNothing(t *testing.T) {
	b := spillInput()
	dir := t.TempDir()
	errInput := errors.New("input failed")
	opens := 0
	open := func(ctx context.Context) (audio.Source, error) {
		opens++
		src := audio.NewBufferSource(b, fs)
		if opens == 3 { // the first loudness pass, which writes the spill
			return &failAfter{Source: src, frames: fs * 5, err: errInput}, nil
		}
		return src, nil
	}
	before := openFiles()
	if _, err := New(context.Background(), open, spillConfig(dir, 0)); !errors.Is(err, errInput) {
		t.Fatalf("New: %v, want the input's error", err)
	}
	if left, _ := os.ReadDir(dir); len(left) > 0 {
		t.Errorf("%d files left in the temporary directory after a failed pass", len(left))
	}
	if n := openFiles(); n != before {
		t.Errorf("%d files open after the failed pass, %d before", n, before)
	}
}

// openFiles is how many files the process has open (-1 where the system
// does not say).
func openFiles() int {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(fds)
}

// failAfter fails with err once it has yielded frames frames.
type failAfter struct {
	audio.Source
	frames int
	err    error
}

func (f *failAfter) Read(dst audio.Buffer) (int, error) {
	if f.frames <= 0 {
		return 0, f.err
	}
	n, err := f.Source.Read(dst.SliceInto(make(audio.Buffer, len(dst)), 0, min(dst.Frames(), f.frames)))
	f.frames -= n
	return n, err
}
