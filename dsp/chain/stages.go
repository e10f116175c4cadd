package chain

import (
	"context"
	"io"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/audiopost/audiopost/audio"
)

// stageBlocks is how many blocks a stage may run ahead of the next: 1.4 s
// at 48 kHz, 1 MB of stereo per stage. With three or four stages on two
// cores the scheduler lets one wait on another now and then; 4 blocks
// left the faster stage idle through those waits, and 16 made the loudness
// pass and the render about 10% faster in alternating runs (8 gained
// less, 32 no more), for 3 MB more of the render's memory.
const stageBlocks = 16

// stages cuts one pass into concurrently running parts (see
// audio.Prefetch and audio.ParallelSink) and stops them when the pass
// ends. A nil *stages, or one of a sequential Config, leaves everything
// on the calling goroutine.
type stages struct {
	ctx    context.Context
	cancel context.CancelFunc
	pre    []*audio.Prefetched
	async  []*asyncSink
	others []io.Closer
}

// closeAtEnd closes c with the stages (after the pass, or when it fails).
func (st *stages) closeAtEnd(c io.Closer) {
	if st != nil {
		st.others = append(st.others, c)
	}
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

// fanOut returns a sink writing to every sink of ss: with stages, the
// first on the calling goroutine and each other one in a goroutine of its
// own that may fall a few blocks behind (drain waits for them).
func (st *stages) fanOut(ss []audio.Sink) audio.Sink {
	if st == nil || len(ss) < 2 {
		return audio.MultiSink(ss...)
	}
	out := []audio.Sink{ss[0]}
	for _, k := range ss[1:] {
		a := newAsyncSink(st.ctx, k, stageBlocks)
		st.async = append(st.async, a)
		out = append(out, a)
	}
	return audio.MultiSink(out...)
}

// drain waits until the sinks of fanOut have written everything given to
// them and returns the first error of any.
func (st *stages) drain() error {
	if st == nil {
		return nil
	}
	var first error
	for _, a := range st.async {
		if err := a.wait(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// asyncSink writes to a sink from a goroutine of its own: Write copies
// the block into one of a few buffers and returns, so the caller runs on
// while the sink catches up, and hands over blocks without waiting for
// each to be written (which, block by block, costs a wake-up on each side).
type asyncSink struct {
	k      audio.Sink
	ctx    context.Context
	full   chan audio.Buffer
	free   chan audio.Buffer
	done   chan struct{}
	err    error       // the sink's first error
	failed atomic.Bool // set after err
	once   sync.Once
}

func newAsyncSink(ctx context.Context, k audio.Sink, blocks int) *asyncSink {
	a := &asyncSink{k: k, ctx: ctx, full: make(chan audio.Buffer, blocks), free: make(chan audio.Buffer, blocks), done: make(chan struct{})}
	for range blocks {
		a.free <- nil // allocated at first use, with the stream's channels
	}
	go a.run()
	return a
}

func (a *asyncSink) run() {
	defer close(a.done)
	for b := range a.full {
		if a.err == nil {
			if a.err = a.k.Write(b); a.err != nil {
				a.failed.Store(true)
			}
		}
		a.free <- b
	}
}

// Write implements audio.Sink.
func (a *asyncSink) Write(b audio.Buffer) error {
	if a.failed.Load() {
		return a.err
	}
	for n := b.Frames(); n > 0; {
		var buf audio.Buffer
		select {
		case buf = <-a.free:
		case <-a.done:
			return a.failure()
		case <-a.ctx.Done():
			return a.ctx.Err()
		}
		if buf == nil || len(buf) != len(b) {
			buf = audio.NewBuffer(len(b), audio.DefaultBlock)
		}
		m := min(n, cap(buf[0]))
		off := b.Frames() - n
		for c := range buf {
			buf[c] = buf[c][:m]
			copy(buf[c], b[c][off:off+m])
		}
		a.full <- buf
		n -= m
	}
	return nil
}

// failure is why the goroutine left before wait: the sink's error.
func (a *asyncSink) failure() error {
	if a.err != nil {
		return a.err
	}
	return audio.ErrPrefetchClosed
}

// wait closes the input and waits until the sink has written it all.
func (a *asyncSink) wait() error {
	a.once.Do(func() { close(a.full) })
	<-a.done
	return a.err
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
	for _, a := range st.async {
		a.wait()
	}
	for _, c := range st.others {
		c.Close()
	}
	st.pre, st.async, st.others = nil, nil, nil
}
