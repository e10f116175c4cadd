package audio

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
)

// A render is a chain of nodes that each run on one block at a time, so
// one goroutine uses one core however many the machine has. Prefetch and
// ParallelSink cut a chain into stages that run at the same time: the
// stages stay sequential inside (results are bit-identical, since no node
// depends on block boundaries), the blocks flow between them through a
// small fixed set of buffers (memory stays bounded, steady state
// allocates nothing).

// prefetchBlock is one buffer travelling between the reading goroutine
// and Read.
type prefetchBlock struct {
	buf Buffer
	n   int
	err error
}

// Prefetched is a Source that reads its upstream ahead, in a goroutine of
// its own. Create it with Prefetch.
type Prefetched struct {
	format Format
	full   chan *prefetchBlock
	free   chan *prefetchBlock
	stop   chan struct{}
	done   chan struct{}
	once   sync.Once
	// The goroutine starts at the first Read, so nothing upstream runs
	// before the consumer asks (and sees what happened before it asked).
	start   func()
	started sync.Once

	stopErr error // why the goroutine left early; read after done is closed

	cur *prefetchBlock
	off int
	err error
}

// ErrPrefetchClosed is what a Prefetched source returns once closed.
var ErrPrefetchClosed = errors.New("audio: prefetched source closed")

// Prefetch returns a Source that yields what src yields, read up to
// blocks buffers of DefaultBlock frames ahead by a goroutine that starts at
// the first Read and stops at
// src's end or error, when ctx is done (Read then returns ctx.Err()), or
// when Close is called (Read then returns ErrPrefetchClosed). Everything
// upstream of the returned Source then runs in that goroutine: nothing
// else may read src or touch its nodes until Read has returned an error
// (io.EOF included) or Close has returned.
func Prefetch(ctx context.Context, src Source, blocks int) *Prefetched {
	blocks = max(blocks, 2)
	f := src.Format()
	p := &Prefetched{
		format: f,
		full:   make(chan *prefetchBlock, blocks),
		free:   make(chan *prefetchBlock, blocks),
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	for range blocks {
		p.free <- &prefetchBlock{buf: NewBuffer(f.Channels, DefaultBlock)}
	}
	p.start = func() { go p.run(ctx, src) }
	return p
}

func (p *Prefetched) run(ctx context.Context, src Source) {
	defer close(p.done)
	for {
		var b *prefetchBlock
		select {
		case b = <-p.free:
		case <-p.stop:
			return
		case <-ctx.Done():
			p.stopErr = ctx.Err()
			return
		}
		b.n, b.err = src.Read(b.buf)
		if b.n == 0 && b.err == nil {
			b.err = io.ErrNoProgress
		}
		select {
		case p.full <- b:
		case <-p.stop:
			return
		case <-ctx.Done():
			p.stopErr = ctx.Err()
			return
		}
		if b.err != nil {
			return
		}
	}
}

// next waits for the next block. When the goroutine has gone without
// one (cancelled or closed), it returns a block holding only the reason.
func (p *Prefetched) next() *prefetchBlock {
	select {
	case b := <-p.full:
		return b
	case <-p.done:
		select {
		case b := <-p.full: // sent before it left
			return b
		default:
		}
		err := p.stopErr // written before done was closed
		if err == nil {
			err = ErrPrefetchClosed
		}
		return &prefetchBlock{err: err}
	}
}

// Format implements Source.
func (p *Prefetched) Format() Format { return p.format }

// Read implements Source.
func (p *Prefetched) Read(dst Buffer) (int, error) {
	if len(dst) != p.format.Channels {
		return 0, errors.New("audio: Prefetched.Read: buffer has the wrong number of channels")
	}
	p.started.Do(p.start)
	want := dst.Frames()
	got := 0
	for got < want {
		if p.cur == nil {
			if p.err != nil {
				break
			}
			if got > 0 && len(p.full) == 0 {
				break // a short read now beats waiting for the next block
			}
			p.cur, p.off = p.next(), 0
		}
		b := p.cur
		if p.off < b.n {
			for c := range dst {
				copy(dst[c][got:want], b.buf[c][p.off:b.n])
			}
			k := min(want-got, b.n-p.off)
			got += k
			p.off += k
		}
		if p.off >= b.n {
			if b.err != nil {
				p.err = b.err
			}
			p.cur = nil
			if b.buf != nil {
				p.free <- b
			}
		}
	}
	if got > 0 {
		return got, nil
	}
	return 0, p.err
}

// Close stops the reading goroutine and waits for it to return. It does
// not close src. Closing after Read returned io.EOF is not needed but
// harmless.
func (p *Prefetched) Close() error {
	p.once.Do(func() { close(p.stop) })
	p.started.Do(func() { close(p.done) }) // never started: nothing to wait for
	<-p.done
	return nil
}

// ParallelSink is a Sink that writes each block to several sinks at the
// same time, one goroutine per sink after the first, and returns when all
// have written it. Create it with NewParallelSink; Close it to stop its
// goroutines.
type ParallelSink struct {
	first Sink
	rest  []parallelWorker
	once  sync.Once
}

type parallelWorker struct {
	in  chan Buffer
	out chan error
}

// NewParallelSink returns a Sink that writes to every sink concurrently.
// The sinks must not share state. Write reports the first sink's error in
// argument order.
func NewParallelSink(sinks ...Sink) *ParallelSink {
	ps := &ParallelSink{}
	if len(sinks) == 0 {
		ps.first = MultiSink()
		return ps
	}
	ps.first = sinks[0]
	for _, s := range sinks[1:] {
		w := parallelWorker{in: make(chan Buffer), out: make(chan error)}
		ps.rest = append(ps.rest, w)
		go func() {
			for b := range w.in {
				w.out <- s.Write(b)
			}
		}()
	}
	return ps
}

// Write implements Sink.
func (ps *ParallelSink) Write(b Buffer) error {
	for _, w := range ps.rest {
		w.in <- b
	}
	err := ps.first.Write(b)
	for _, w := range ps.rest {
		if werr := <-w.out; err == nil {
			err = werr
		}
	}
	return err
}

// Close stops the goroutines. Write must not be called after Close.
func (ps *ParallelSink) Close() error {
	ps.once.Do(func() {
		for _, w := range ps.rest {
			close(w.in)
		}
	})
	return nil
}

// QueuedSink is a Sink that writes to another sink from a goroutine of
// its own, up to a fixed number of blocks behind its caller: the caller
// goes on (rendering the next block, feeding other sinks) while a slow
// sink, an encoder, works, and waits only when that many blocks are
// queued. The blocks are copied into a fixed set of buffers, so memory
// stays bounded and steady state allocates nothing. Create it with
// NewQueuedSink; Write, Close and Stop must be called from one goroutine.
type QueuedSink struct {
	ctx    context.Context
	next   Sink
	full   chan Buffer
	free   chan Buffer
	failed chan struct{} // closed when next failed; err says how
	exited chan struct{} // closed when the goroutine has returned
	stop   chan struct{}
	err    error
	closed bool
	once   sync.Once
}

// NewQueuedSink starts the goroutine that writes to next, with blocks
// buffers of DefaultBlock frames of channels channels (a larger block
// grows its buffer). Write returns ctx.Err() instead of waiting for a
// buffer once ctx is done.
func NewQueuedSink(ctx context.Context, next Sink, channels, blocks int) *QueuedSink {
	blocks = max(blocks, 1)
	q := &QueuedSink{
		ctx:    ctx,
		next:   next,
		full:   make(chan Buffer, blocks),
		free:   make(chan Buffer, blocks),
		failed: make(chan struct{}),
		exited: make(chan struct{}),
		stop:   make(chan struct{}),
	}
	for range blocks {
		q.free <- NewBuffer(channels, DefaultBlock)
	}
	go q.run()
	return q
}

func (q *QueuedSink) run() {
	defer close(q.exited)
	for {
		select {
		case <-q.stop:
			return
		default:
		}
		select {
		case b, ok := <-q.full:
			if !ok {
				return
			}
			if err := q.next.Write(b); err != nil {
				q.err = err
				close(q.failed)
				return
			}
			q.free <- b
		case <-q.stop:
			return
		}
	}
}

// Write implements Sink: it copies b into a free buffer and queues it. It
// returns the error of an earlier block's Write, if one failed.
func (q *QueuedSink) Write(b Buffer) error {
	if q.closed {
		return errors.New("audio: write to a closed QueuedSink")
	}
	select {
	case <-q.failed:
		return q.err
	default:
	}
	var buf Buffer
	select {
	case buf = <-q.free:
	case <-q.failed:
		return q.err
	case <-q.ctx.Done():
		return q.ctx.Err()
	}
	if len(buf) != len(b) {
		q.free <- buf
		return fmt.Errorf("%w: %d channels for a %d-channel queue", ErrFormatMismatch, len(b), len(buf))
	}
	n := b.Frames()
	for c := range buf {
		if cap(buf[c]) < n {
			buf[c] = make([]float64, n)
		}
		buf[c] = buf[c][:n]
		copy(buf[c], b[c])
	}
	q.full <- buf
	return nil
}

// Close waits until every queued block has been written and returns the
// first error of the sink's Write. It does not close the sink.
func (q *QueuedSink) Close() error {
	if !q.closed {
		q.closed = true
		close(q.full)
	}
	<-q.exited
	return q.err
}

// Stop discards the queued blocks and waits for the goroutine to return
// (it finishes a Write in progress first). Use it when the stream is
// abandoned; Close after Stop returns at once.
func (q *QueuedSink) Stop() {
	q.once.Do(func() { close(q.stop) })
	if !q.closed {
		q.closed = true
		close(q.full)
	}
	<-q.exited
}
