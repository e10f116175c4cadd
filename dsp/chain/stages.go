package chain

import (
	"context"
	"runtime"

	"github.com/audiopost/audiopost/audio"
)

// stageBlocks is how many blocks a stage may run ahead of the next: enough
// to ride out scheduling jitter, small enough to keep memory bounded.
const stageBlocks = 4

// stages cuts one pass into concurrently running parts (see
// audio.Prefetch and audio.ParallelSink) and stops them when the pass
// ends. A nil *stages, or one of a sequential Config, leaves everything
// on the calling goroutine.
type stages struct {
	ctx    context.Context
	cancel context.CancelFunc
	pre    []*audio.Prefetched
	sinks  []*audio.ParallelSink
}

func newStages(ctx context.Context, cfg Config) *stages {
	if cfg.Sequential || runtime.GOMAXPROCS(0) < 2 {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	return &stages{ctx: ctx, cancel: cancel}
}

// split runs everything upstream of s in a goroutine of its own.
func (st *stages) split(s audio.Source) audio.Source {
	if st == nil {
		return s
	}
	p := audio.Prefetch(st.ctx, s, stageBlocks)
	st.pre = append(st.pre, p)
	return p
}

// fanOut returns a sink writing to every sink of ss, side by side when
// there are several.
func (st *stages) fanOut(ss []audio.Sink) audio.Sink {
	if st == nil || len(ss) < 2 {
		return audio.MultiSink(ss...)
	}
	ps := audio.NewParallelSink(ss...)
	st.sinks = append(st.sinks, ps)
	return ps
}

// close stops every stage and waits for their goroutines, so nothing
// reads the pass's input or nodes after it returns.
func (st *stages) close() {
	if st == nil {
		return
	}
	st.cancel()
	for _, p := range st.pre {
		p.Close()
	}
	for _, s := range st.sinks {
		s.Close()
	}
	st.pre, st.sinks = nil, nil
}
