package chain

import (
	"context"
	"errors"
	"math"
	"reflect"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp/spectral"
	"github.com/audiopost/audiopost/internal/testsize"
)

// The passes cut into stages (goroutines, queued blocks) compute what the
// sequential passes compute, to the last bit: analysis, loudness passes
// and the render.
func TestStagesAreBitIdentical(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	b := stereoOf(voice(12, 140, 9, []float64{0, -9, -3}))
	run := func(sequential bool) (audio.Buffer, Stats) {
		cfg := DefaultConfig()
		cfg.MaxLRA = 4 // a constraint pass more
		cfg.Sequential = sequential
		out, st, _ := renderCounting(t, b, cfg)
		return out, st
	}
	seq, sst := run(true)
	par, pst := run(false)
	for c := range seq {
		if !slices.Equal(seq[c], par[c]) {
			t.Fatalf("channel %d differs between the sequential and the staged render", c)
		}
	}
	if sst.Settings != pst.Settings || sst.Output != pst.Output || sst.GainMeanDB != pst.GainMeanDB || !slices.Equal(sst.OutputSteps, pst.OutputSteps) {
		t.Errorf("statistics differ: %+v / %+v", sst.Settings, pst.Settings)
	}
}

// failingSink fails from its nth block on.
type failingSink struct {
	n      int
	writes atomic.Int32
}

var errSink = errors.New("sink failed")

func (f *failingSink) Write(audio.Buffer) error {
	if int(f.writes.Add(1)) >= f.n {
		return errSink
	}
	return nil
}

// A sink that runs apart reports its error through the pass, and the
// pass stops feeding it.
func TestAsyncSinkError(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	// TestStagesAreBitIdentical's programme, synthesized once for both
	// (a 20 s one of its own took 1.5 s of the race run's CPU): 140
	// blocks, far more than the failing sink may see.
	b := stereoOf(voice(12, 140, 9, []float64{0, -9, -3}))
	bad := &failingSink{n: 3}
	err := runPass(context.Background(), DefaultConfig(), bufferOpener(b), nil, func(audio.Format, int64, *stages) ([]audio.Sink, error) {
		return []audio.Sink{audio.MultiSink(), bad}, nil
	})
	if !errors.Is(err, errSink) {
		t.Fatalf("pass with a failing sink: %v", err)
	}
	if w := bad.writes.Load(); w > 3+stageBlocks {
		t.Errorf("the failing sink got %d blocks, want it left alone soon after its error", w)
	}
}

// WithHeadroom renders what New with that headroom renders, to the last
// bit, without analysing the input again: one pass fewer.
func TestWithHeadroomMatchesNew(t *testing.T) {
	skipUnderRace(t)
	b := stereoOf(voice(12, 140, 9, []float64{0, -9, -3}))
	var opens atomic.Int32
	open := func(ctx context.Context) (audio.Source, error) {
		opens.Add(1)
		return audio.NewBufferSource(b, fs), nil
	}
	ctx := context.Background()
	readAll := func(p *Pipeline) audio.Buffer {
		t.Helper()
		defer p.Close()
		out, err := audio.ReadAll(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	cfg := DefaultConfig()
	cfg.Restoration = &spectral.Restoration{Settings: spectral.Settings{Method: spectral.Static, ReductionDB: 12}} // the noise profile is reused too
	first, err := New(ctx, open, cfg)
	if err != nil {
		t.Fatal(err)
	}
	readAll(first)

	opens.Store(0)
	again, err := first.WithHeadroom(ctx, open, 2.5)
	if err != nil {
		t.Fatal(err)
	}
	got, againOpens := readAll(again), opens.Load()

	cfg.Headroom = 2.5
	opens.Store(0)
	fresh, err := New(ctx, open, cfg)
	if err != nil {
		t.Fatal(err)
	}
	want, freshOpens := readAll(fresh), opens.Load()
	for c := range want {
		if !slices.Equal(got[c], want[c]) {
			t.Fatalf("channel %d differs from a new pipeline with the headroom", c)
		}
	}
	if gs, ws := again.Stats(), fresh.Stats(); gs.Output != ws.Output || gs.Settings != ws.Settings || !reflect.DeepEqual(gs.Hum, ws.Hum) || !slices.Equal(gs.OutputSteps, ws.OutputSteps) {
		t.Errorf("statistics differ: %+v / %+v", gs.Settings, ws.Settings)
	}
	if tp := again.Stats().Output.TruePeak; tp > cfg.ceiling()+0.1 {
		t.Errorf("true peak %.2f dBTP above the ceiling %.2f", tp, cfg.ceiling())
	}
	if againOpens != freshOpens-2 {
		t.Errorf("WithHeadroom read the input %d times, New %d: want the analysis and the noise profile passes saved", againOpens, freshOpens)
	}
	if _, err := first.WithHeadroom(ctx, open, -1); err == nil {
		t.Error("a negative headroom was accepted")
	}
}

// A loudness pass split in time (measureSplit) measures what one pass
// over the whole input measures, to within rounding: the same gains, the
// same output to far below 16-bit resolution. The input mixes levels and
// music, so that leveler, both compressors and every meter reading take
// part across the join.
func TestSplitPassMatchesOnePass(t *testing.T) {
	splitShortInputs(t)
	// 24 s with 8 s of music from 9 s; under the race detector, which
	// watches the two halves' goroutines (the plain run checks the
	// numbers on the long input), 12 s with 4 s of music from 4 s, split
	// from 6 s on (24 s took 6.5 s of the race run's CPU).
	secs, from, musicSecs := 24.0, 9, 8.0
	if testsize.Race {
		secs, from, musicSecs = 12, 4, 4
		d := splitMin
		splitMin = 6 * time.Second
		t.Cleanup(func() { splitMin = d })
	}
	x := voice(secs, 140, 4, []float64{0, -10, -4})
	m := music(musicSecs)
	for i := range m {
		x[from*fs+i] += 0.3 * m[i]
	}
	b := stereoOf(x)
	run := func(sequential bool, wrap func(audio.Source) audio.Source) (audio.Buffer, Stats, int) {
		cfg := DefaultConfig()
		cfg.MaxLRA = 6 // a constraint pass more
		cfg.Sequential = sequential
		return renderWrapped(t, b, cfg, wrap)
	}
	seq, sst, seqOpens := run(true, func(s audio.Source) audio.Source { return s })
	// The second half seeks to its run-up, or reads up to it where the
	// source cannot seek (not under -short: the race run covers the
	// goroutines with one).
	wraps := []func(audio.Source) audio.Source{func(s audio.Source) audio.Source { return s }}
	if !testing.Short() {
		wraps = append(wraps, func(s audio.Source) audio.Source { return wavStream{s} })
	}
	for _, wrap := range wraps {
		par, pst, parOpens := run(false, wrap)
		if parOpens <= seqOpens {
			t.Fatalf("the loudness passes were not split: %d opens, sequentially %d", parOpens, seqOpens)
		}
		var worst float64
		for c := range seq {
			for i := range seq[c] {
				worst = max(worst, math.Abs(seq[c][i]-par[c][i]))
			}
		}
		if worst > 1e-9 {
			t.Errorf("the output differs by up to %g", worst)
		}
		if d := math.Abs(sst.Settings.NormalizationGainDB - pst.Settings.NormalizationGainDB); d > 1e-9 {
			t.Errorf("normalization gain %.12f, split %.12f", sst.Settings.NormalizationGainDB, pst.Settings.NormalizationGainDB)
		}
		if sst.Settings.SpeechCompression != pst.Settings.SpeechCompression || math.Abs(sst.Output.Integrated-pst.Output.Integrated) > 1e-9 ||
			math.Abs(sst.Output.LRA-pst.Output.LRA) > 1e-9 {
			t.Errorf("statistics differ: %+v / %+v", sst.Output, pst.Output)
		}
	}
}

// wavStream looks like a WAV decoder reading a stream that cannot seek.
type wavStream struct{ audio.Source }

func (wavStream) Info() audio.Info { return audio.Info{Format: "wav"} }

// opaqueSource hides what kind of source it wraps, as a decoder of a
// compressed format would look.
type opaqueSource struct{ audio.Source }

// Compressed input is not split: the second half's decoder would decode
// the first half only to reach its start.
func TestSplitOnlyWhereSkippingIsCheap(t *testing.T) {
	skipUnderRace(t)
	splitShortInputs(t)
	b := stereoOf(voice(16, 140, 4, nil))
	_, _, opens := renderWrapped(t, b, DefaultConfig(), func(s audio.Source) audio.Source { return opaqueSource{s} })
	if opens != 3 { // analysis, loudness pass, render
		t.Errorf("%d opens: the loudness pass was split", opens)
	}
}

var errTestRead = errors.New("test: read failed")

// A split pass that fails in its second half reports that failure, not
// the first half's cancellation.
func TestSplitPassFailure(t *testing.T) {
	splitShortInputs(t)
	b := stereoOf(voice(16, 140, 4, nil))
	var opens atomic.Int32
	open := func(ctx context.Context) (audio.Source, error) {
		src := audio.Source(audio.NewBufferSource(b, fs))
		if opens.Add(1) > 1 { // the loudness pass's halves, not the analysis
			src = &failAfter{Source: wavStream{src}, frames: b.Frames() * 9 / 10, err: errTestRead}
		}
		return src, nil
	}
	_, err := New(context.Background(), open, DefaultConfig())
	if !errors.Is(err, errTestRead) {
		t.Fatalf("New: %v", err)
	}
	if opens.Load() != 3 {
		t.Errorf("%d opens: the pass was not split", opens.Load())
	}
}

// splitShortInputs lets the loudness pass split inputs of 15 s or more,
// on two cores, for the rest of the test: shorter test inputs than a
// minute's.
func splitShortInputs(t *testing.T) {
	t.Helper()
	if runtime.GOMAXPROCS(0) < 2 {
		procs := runtime.GOMAXPROCS(2)
		t.Cleanup(func() { runtime.GOMAXPROCS(procs) })
	}
	d := splitMin
	splitMin = 15 * time.Second
	t.Cleanup(func() { splitMin = d })
}
