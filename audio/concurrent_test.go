package audio_test

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/audiotest"
)

// A prefetched source yields exactly the frames of its upstream, whatever
// the block sizes on either side, and keeps the Source contract.
func TestPrefetchContract(t *testing.T) {
	want := audiotest.Noise(2, 3*audio.DefaultBlock+1234, 0.5, 7)
	got := audiotest.CheckSource(t, func() audio.Source {
		return audio.Prefetch(context.Background(), audio.NewBufferSource(want, 48000), 3)
	})
	if d := compareBuffers(got, want); d != "" {
		t.Fatal(d)
	}
}

func compareBuffers(got, want audio.Buffer) string {
	if got.Frames() != want.Frames() {
		return "frame counts differ"
	}
	for c := range want {
		for i := range want[c] {
			if got[c][i] != want[c][i] {
				return "sample differs"
			}
		}
	}
	return ""
}

// failing yields n frames, then err.
type failing struct {
	n   int
	err error
}

func (f *failing) Format() audio.Format { return audio.Format{SampleRate: 8000, Channels: 1} }
func (f *failing) Read(dst audio.Buffer) (int, error) {
	if f.n == 0 {
		return 0, f.err
	}
	k := min(f.n, dst.Frames())
	f.n -= k
	return k, nil
}

func TestPrefetchPassesErrorsAfterData(t *testing.T) {
	boom := errors.New("disk gone")
	p := audio.Prefetch(context.Background(), &failing{n: 10000, err: boom}, 2)
	buf := audio.NewBuffer(1, 777)
	total := 0
	for {
		n, err := p.Read(buf)
		total += n
		if err != nil {
			if !errors.Is(err, boom) {
				t.Fatalf("error %v, want %v", err, boom)
			}
			break
		}
	}
	if total != 10000 {
		t.Errorf("read %d frames before the error, want 10000", total)
	}
	if n, err := p.Read(buf); n != 0 || !errors.Is(err, boom) {
		t.Errorf("after the error: %d, %v", n, err)
	}
}

// endless is a source that never ends and counts its reads.
type endless struct{ reads atomic.Int64 }

func (e *endless) Format() audio.Format { return audio.Format{SampleRate: 8000, Channels: 2} }
func (e *endless) Read(dst audio.Buffer) (int, error) {
	e.reads.Add(1)
	return dst.Frames(), nil
}

// Abandoning a prefetched source mid-stream must not leak its goroutine:
// Close stops it, and so does cancelling the context.
func TestPrefetchStops(t *testing.T) {
	before := runtime.NumGoroutine()
	src := &endless{}
	p := audio.Prefetch(context.Background(), src, 2)
	if _, err := p.Read(audio.NewBuffer(2, 100)); err != nil {
		t.Fatal(err)
	}
	p.Close()
	p.Close() // twice is harmless
	reads := src.reads.Load()
	time.Sleep(20 * time.Millisecond)
	if src.reads.Load() != reads {
		t.Error("upstream still read after Close")
	}

	ctx, cancel := context.WithCancel(context.Background())
	q := audio.Prefetch(ctx, &endless{}, 2)
	cancel()
	buf := audio.NewBuffer(2, 4096)
	var err error
	for range 10 {
		if _, err = q.Read(buf); err != nil {
			break
		}
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("after cancel: %v, want context.Canceled", err)
	}
	q.Close()
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines left, %d before", n, before)
	}
}

func TestPrefetchSteadyStateAllocatesNothing(t *testing.T) {
	p := audio.Prefetch(context.Background(), &endless{}, 4)
	defer p.Close()
	buf := audio.NewBuffer(2, 1000)
	if a := testing.AllocsPerRun(200, func() { p.Read(buf) }); a != 0 {
		t.Errorf("%v allocations per Read", a)
	}
}

// recorder keeps what it is given.
type recorder struct {
	got audio.Buffer
	err error
}

func (r *recorder) Write(b audio.Buffer) error {
	for c := range b {
		if len(r.got) <= c {
			r.got = append(r.got, nil)
		}
		r.got[c] = append(r.got[c], b[c]...)
	}
	return r.err
}

func TestParallelSink(t *testing.T) {
	want := audiotest.Noise(2, 20000, 0.5, 3)
	sinks := []*recorder{{}, {}, {}}
	ps := audio.NewParallelSink(sinks[0], sinks[1], sinks[2])
	src := audio.NewBufferSource(want, 48000)
	if _, err := audio.Copy(context.Background(), ps, src); err != nil {
		t.Fatal(err)
	}
	for i, s := range sinks {
		if d := compareBuffers(s.got, want); d != "" {
			t.Errorf("sink %d: %s", i, d)
		}
	}
	boom := errors.New("full disk")
	sinks[2].err = boom
	if err := ps.Write(want.Slice(0, 10)); !errors.Is(err, boom) {
		t.Errorf("error of the third sink: %v", err)
	}
	ps.Close()

	var empty audio.Sink = audio.NewParallelSink()
	if err := empty.Write(want); err != nil {
		t.Error(err)
	}
}

// Nothing upstream runs before the first Read; closing an unread source
// returns at once.
func TestPrefetchIsLazy(t *testing.T) {
	src := &endless{}
	p := audio.Prefetch(context.Background(), src, 2)
	time.Sleep(10 * time.Millisecond)
	if n := src.reads.Load(); n != 0 {
		t.Errorf("upstream read %d times before the first Read", n)
	}
	p.Close()
	if _, err := p.Read(audio.NewBuffer(2, 10)); !errors.Is(err, audio.ErrPrefetchClosed) {
		t.Errorf("Read after Close: %v", err)
	}
}

// A queued sink passes every frame on in order whatever the block sizes,
// blocks larger than its buffers included.
func TestQueuedSinkKeepsTheStream(t *testing.T) {
	want := audiotest.Noise(2, 5*audio.DefaultBlock+321, 0.5, 9)
	for _, block := range append(audiotest.BlockSizes, 3*audio.DefaultBlock) {
		rec := &recorder{}
		q := audio.NewQueuedSink(context.Background(), rec, 2, 3)
		for i := 0; i < want.Frames(); i += block {
			if err := q.Write(want.Slice(i, min(i+block, want.Frames()))); err != nil {
				t.Fatal(err)
			}
		}
		if err := q.Close(); err != nil {
			t.Fatal(err)
		}
		if d := compareBuffers(rec.got, want); d != "" {
			t.Errorf("block %d: %s", block, d)
		}
	}
}

// The sink's error comes back from a later Write or from Close.
func TestQueuedSinkReportsErrors(t *testing.T) {
	boom := errors.New("encoder died")
	q := audio.NewQueuedSink(context.Background(), &recorder{err: boom}, 1, 2)
	var err error
	for range 10 {
		if err = q.Write(audio.NewBuffer(1, 100)); err != nil {
			break
		}
	}
	if cerr := q.Close(); !errors.Is(err, boom) && !errors.Is(cerr, boom) {
		t.Errorf("Write = %v, Close = %v, want the sink's error", err, cerr)
	}
	if err := q.Write(audio.NewBuffer(1, 10)); err == nil {
		t.Error("Write after Close succeeded")
	}
}

// blockingSink waits in Write until released.
type blockingSink struct{ release chan struct{} }

func (b *blockingSink) Write(audio.Buffer) error { <-b.release; return nil }

// With the sink stuck, Write waits only when the queue is full, and
// returns when the context ends; Stop returns once the sink does.
func TestQueuedSinkStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	sink := &blockingSink{release: make(chan struct{})}
	q := audio.NewQueuedSink(ctx, sink, 1, 2)
	// Both buffers taken: one in the sink's Write (or about to be), one
	// queued.
	for i := range 2 {
		if err := q.Write(audio.NewBuffer(1, 10)); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	cancel()
	if err := q.Write(audio.NewBuffer(1, 10)); !errors.Is(err, context.Canceled) {
		t.Errorf("Write on a full queue after cancel: %v", err)
	}
	close(sink.release)
	q.Stop()
	if err := q.Close(); err != nil {
		t.Errorf("Close after Stop: %v", err)
	}
}

func TestQueuedSinkSteadyStateAllocatesNothing(t *testing.T) {
	q := audio.NewQueuedSink(context.Background(), audio.MultiSink(), 2, 4)
	defer q.Close()
	buf := audio.NewBuffer(2, audio.DefaultBlock)
	if a := testing.AllocsPerRun(200, func() { q.Write(buf) }); a != 0 {
		t.Errorf("%v allocations per Write", a)
	}
}
