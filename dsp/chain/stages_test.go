package chain

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/audiopost/audiopost/audio"
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
		p, err := New(context.Background(), bufferOpener(b), cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		out, err := audio.ReadAll(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		return out, p.Stats()
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
	b := stereoOf(voice(20, 140, 9, nil))
	bad := &failingSink{n: 3}
	err := runPass(context.Background(), DefaultConfig(), bufferOpener(b), nil, func(audio.Format, *stages) ([]audio.Sink, error) {
		return []audio.Sink{audio.MultiSink(), bad}, nil
	})
	if !errors.Is(err, errSink) {
		t.Fatalf("pass with a failing sink: %v", err)
	}
	if w := bad.writes.Load(); w > 3+stageBlocks {
		t.Errorf("the failing sink got %d blocks, want it left alone soon after its error", w)
	}
}
