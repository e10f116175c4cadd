// Package procpool bounds how many external programs (ffmpeg, ffprobe,
// pocketsphinx) a server runs at once, and makes sure none outlives its
// use.
//
// Every external program of the module starts through Command, which
// takes a slot of the Pool found in its context (With; the process-wide
// Default otherwise) before it starts and gives it back when it has
// exited. Work that needs several programs running at once (a render
// whose encoders and their verifying decoders all run while the audio
// streams through them) takes all their slots in one Reserve first:
// programs started under the reserved context use those slots, so no
// piece of work ever holds some slots while it waits for others, and two
// pieces of work cannot wait on each other. Waiters are served in order,
// so a large reservation is not starved by single programs.
//
// Each program runs in a process group of its own, which is killed as a
// whole when its context is done or when the pool is closed (a server
// shutting down); on Linux it is also killed when the server dies.
package procpool

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Errors of the pool.
var (
	// ErrClosed is returned by Start and Reserve once the pool is closed.
	ErrClosed = errors.New("procpool: the server is shutting down")
	// ErrTooLarge is a reservation of more slots than the pool has: the
	// work must be split (the engine renders outputs in batches).
	ErrTooLarge = errors.New("procpool: reservation larger than the pool")
)

// WaitDelay bounds how long Wait waits for a program's pipes to close
// after the program exited or was killed, so that a reader or writer the
// caller handed in that blocks forever cannot hang it.
const WaitDelay = 5 * time.Second

// Config configures a Pool.
type Config struct {
	// Size is how many programs may run at once (DefaultSize when 0 or
	// less).
	Size int
	// Logger receives the diagnostics of programs that failed (see
	// Logger) and a warning when work starts more programs than it
	// reserved; nil means slog.Default().
	Logger *slog.Logger
}

// Pool hands out slots for external programs. It is safe for concurrent
// use.
type Pool struct {
	size int
	log  *slog.Logger

	mu       sync.Mutex
	used     int       // slots taken, by reservations (whole) and by programs outside one
	waiters  list.List // of *waiter, first come first served
	live     map[*Cmd]struct{}
	running  int // programs running
	peak     int // most programs running at once
	overdraw int // programs started beyond their reservation
	starts   map[string]int
	closed   bool
}

type waiter struct {
	n     int
	ready chan struct{} // closed when granted (or the pool closed)
	err   error
}

// New returns a pool.
func New(cfg Config) *Pool {
	if cfg.Size <= 0 {
		cfg.Size = DefaultSize()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Pool{size: cfg.Size, log: cfg.Logger, live: map[*Cmd]struct{}{}}
}

// EnvSize names the environment variable DefaultSize reads first.
const EnvSize = "AUDIOPOST_MAX_PROGRAMS"

// DefaultSize is the pool size for this machine: AUDIOPOST_MAX_PROGRAMS
// when set to a positive number, else eight programs per core
// (GOMAXPROCS), at least 16 and at most 64, and at most one per 256 MB of
// memory. A render streams the audio through all its encoders at once:
// 16 let a production with seven lossy outputs, each with its verifying
// decoder, and a decoded input render once instead of in batches (each
// batch renders the programme again), while programs beyond the cores
// only share them. 256 MB covers the largest program (x264 rendering a
// waveform video); an Opus or MP3 encoder takes about 10 MB.
func DefaultSize() int {
	if n, err := strconv.Atoi(strings.TrimSpace(os.Getenv(EnvSize))); err == nil && n > 0 {
		return n
	}
	n := min(max(8*runtime.GOMAXPROCS(0), 16), 64)
	if mem := totalMemory(); mem > 0 {
		n = min(n, max(2, int(mem/(256<<20))))
	}
	return n
}

var (
	defaultOnce sync.Once
	defaultPool *Pool
)

// Default is the process-wide pool of DefaultSize, which programs whose
// context names no pool use.
func Default() *Pool {
	defaultOnce.Do(func() { defaultPool = New(Config{}) })
	return defaultPool
}

type poolKey struct{}
type reservationKey struct{}

// With returns ctx with p as the pool of the programs started under it;
// a nil p returns ctx unchanged.
func With(ctx context.Context, p *Pool) context.Context {
	if p == nil {
		return ctx
	}
	return context.WithValue(ctx, poolKey{}, p)
}

// From returns the pool of ctx: the one With set, else Default().
func From(ctx context.Context) *Pool {
	if p, ok := ctx.Value(poolKey{}).(*Pool); ok {
		return p
	}
	return Default()
}

// Logger is the logger of the pool of ctx: where programs' full
// diagnostics go, while users see one sentence.
func Logger(ctx context.Context) *slog.Logger { return From(ctx).log }

// Size is how many programs may run at once.
func (p *Pool) Size() int { return p.size }

// Running is how many programs run now.
func (p *Pool) Running() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.running
}

// Peak is the most programs that ran at once since the pool was made.
func (p *Pool) Peak() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.peak
}

// Starts is how many programs named name (the base name of the
// executable: "ffmpeg", "ffprobe") the pool has started since it was
// made: what a piece of work costs in program starts, each of which
// costs a tenth of a second of CPU before it does anything.
func (p *Pool) Starts(name string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.starts[name]
}

// Overdrawn counts the programs started under a reservation that had no
// slot left for them (each then waited for a slot of the pool): work that
// reserved too few. Tests check it stays 0.
func (p *Pool) Overdrawn() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.overdraw
}

// acquire takes n slots, waiting in line until they are free or ctx is
// done.
func (p *Pool) acquire(ctx context.Context, n int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return ErrClosed
	}
	if p.waiters.Len() == 0 && p.used+n <= p.size {
		p.used += n
		p.mu.Unlock()
		return nil
	}
	w := &waiter{n: n, ready: make(chan struct{})}
	e := p.waiters.PushBack(w)
	p.mu.Unlock()
	select {
	case <-w.ready:
		return w.err
	case <-ctx.Done():
		p.mu.Lock()
		select {
		case <-w.ready:
			// Granted meanwhile: give the slots back.
			if w.err == nil {
				p.used -= n
				p.grant()
			}
		default:
			p.waiters.Remove(e)
			// The head may have been the one blocking the others.
			p.grant()
		}
		p.mu.Unlock()
		return ctx.Err()
	}
}

// release gives n slots back.
func (p *Pool) release(n int) {
	p.mu.Lock()
	p.used -= n
	p.grant()
	p.mu.Unlock()
}

// grant serves the waiters in order while their slots are free. p.mu is
// held.
func (p *Pool) grant() {
	for e := p.waiters.Front(); e != nil; e = p.waiters.Front() {
		w := e.Value.(*waiter)
		if p.used+w.n > p.size {
			return
		}
		p.used += w.n
		p.waiters.Remove(e)
		close(w.ready)
	}
}

// reservation is a set of slots taken at once for work that runs several
// programs together.
type reservation struct {
	p     *Pool
	n     int
	inUse int // slots of it running programs now
	done  bool
}

// Reserve takes n slots of the pool of ctx at once, waiting in line until
// they are free, and returns a context under which programs use them
// before any other slot, and the function that gives them back (programs
// still running then keep their slot until they exit). A reservation
// larger than the pool is ErrTooLarge. Inside a reservation of at least n
// slots, Reserve changes nothing; inside a smaller one it is an error, as
// waiting for more slots while holding some could wait forever.
func Reserve(ctx context.Context, n int) (context.Context, func(), error) {
	p := From(ctx)
	n = max(n, 1)
	if parent, ok := ctx.Value(reservationKey{}).(*reservation); ok && parent.p == p {
		if parent.n >= n {
			return ctx, func() {}, nil
		}
		return nil, nil, fmt.Errorf("procpool: a reservation of %d programs inside one of %d", n, parent.n)
	}
	if n > p.size {
		return nil, nil, fmt.Errorf("%w: %d programs at once, the pool runs %d", ErrTooLarge, n, p.size)
	}
	if err := p.acquire(ctx, n); err != nil {
		return nil, nil, err
	}
	r := &reservation{p: p, n: n}
	var once sync.Once
	return context.WithValue(ctx, reservationKey{}, r), func() {
		once.Do(func() {
			p.mu.Lock()
			r.done = true
			free := r.n - r.inUse
			p.used -= free
			p.grant()
			p.mu.Unlock()
		})
	}, nil
}

// slot takes the slot a program started under ctx runs in and returns
// what gives it back.
func (p *Pool) slot(ctx context.Context) (func(), error) {
	if r, ok := ctx.Value(reservationKey{}).(*reservation); ok && r.p == p {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, ErrClosed
		}
		if !r.done && r.inUse < r.n {
			r.inUse++
			p.mu.Unlock()
			return func() {
				p.mu.Lock()
				r.inUse--
				if r.done {
					// The reservation ended while this program ran.
					p.used--
					p.grant()
				}
				p.mu.Unlock()
			}, nil
		}
		if !r.done {
			p.overdraw++
			p.log.Warn("procpool: work started more programs than it reserved; this one waits for a slot of the pool",
				"reserved", r.n)
		}
		p.mu.Unlock()
	}
	if err := p.acquire(ctx, 1); err != nil {
		return nil, err
	}
	return func() { p.release(1) }, nil
}

// started records a running program. p.mu is not held.
func (p *Pool) started(c *Cmd) {
	p.mu.Lock()
	p.live[c] = struct{}{}
	if p.starts == nil {
		p.starts = map[string]int{}
	}
	p.starts[filepath.Base(c.Path)]++
	p.running++
	p.peak = max(p.peak, p.running)
	closed := p.closed
	p.mu.Unlock()
	if closed {
		// Closed while this one was starting: it must not outlive Close.
		c.Kill()
	}
}

// exited forgets a program that has exited.
func (p *Pool) exited(c *Cmd) {
	p.mu.Lock()
	delete(p.live, c)
	p.running--
	p.mu.Unlock()
}

// Close refuses every program and reservation from now on, fails those
// waiting for a slot with ErrClosed and kills every running program's
// process group. A server calls it when its shutdown deadline has come,
// so that nothing it started outlives it. It reports how many programs it
// killed.
func (p *Pool) Close() int {
	p.mu.Lock()
	p.closed = true
	for e := p.waiters.Front(); e != nil; e = p.waiters.Front() {
		w := e.Value.(*waiter)
		w.err = ErrClosed
		p.waiters.Remove(e)
		close(w.ready)
	}
	live := make([]*Cmd, 0, len(p.live))
	for c := range p.live {
		live = append(live, c)
	}
	p.mu.Unlock()
	for _, c := range live {
		c.Kill()
	}
	return len(live)
}
