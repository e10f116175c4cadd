// Package livestream runs live streams: audio that ffmpeg reads from a
// live source (an Icecast or HTTP stream, RTMP, SRT, a device, a file
// played at its pace) goes through the one-pass graph of package dsp/live
// and out to any number of live destinations (Icecast mounts, RTMP, SRT,
// files), each with its own format and bitrate. It keeps running through
// faults: while the source is gone the destinations get silence (or a
// fallback file), and the source is tried again every second; what a
// stalled source delivers late, once the fallback has filled its place, is
// dropped so that the stream's delay stays bounded; a
// destination whose server goes away is reconnected with backoff. Config
// maps the API's algorithm keys onto the live graph.
package livestream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/audio/ffmpeg"
	"github.com/audiopost/audiopost/audio/procpool"
	"github.com/audiopost/audiopost/dsp/live"
	"github.com/audiopost/audiopost/production/engine"
)

// Clock is the time a Stream reads and waits on; tests inject their own.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
	// NewTimer returns a timer that fires once, d from now, and can be
	// reset: the waits made every 10 ms block reuse one.
	NewTimer(d time.Duration) Timer
}

// Timer is a Clock's reusable timer, with the semantics of time.Timer
// since Go 1.23: after Reset or Stop returns, C delivers no time from
// before.
type Timer interface {
	C() <-chan time.Time
	// Reset makes the timer fire d from now, whether or not it had
	// fired or been stopped.
	Reset(d time.Duration)
	// Stop keeps the timer from firing; it reports whether it would
	// still have.
	Stop() bool
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
func (realClock) NewTimer(d time.Duration) Timer         { return realTimer{time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time   { return r.t.C }
func (r realTimer) Reset(d time.Duration) { r.t.Reset(d) }
func (r realTimer) Stop() bool            { return r.t.Stop() }

// Destination is one live output.
type Destination struct {
	// URL is anything ffmpeg writes live: icecast://source:PASSWORD@host:port/mount,
	// rtmp://..., srt://..., a file path.
	URL string `json:"url"`
	// Format is one of ffmpeg.LiveFormats (mp3, aac, opus, vorbis, flac,
	// wav); Bitrate in kbps, 0 for the format's default.
	Format  string `json:"format"`
	Bitrate int    `json:"bitrate,omitempty"`
}

// Spec says what a Stream reads, how it processes and where it sends.
type Spec struct {
	// Source is anything ffmpeg reads live. Realtime plays a file source
	// at its own pace (ffmpeg's -re).
	Source   string
	Realtime bool
	// Destinations are the outputs, at least one.
	Destinations []Destination
	// Config is the live graph's settings. A zero Headroom takes the
	// largest true-peak rise of the lossy destinations' codecs (the
	// production engine's codec table), so the decoded outputs meet
	// MaxTruePeak.
	Config live.Config
	// Fallback, when not empty, is a file played (looped) while the
	// source is down; otherwise the destinations get silence.
	Fallback string
	// Format is the processing format; zero means 48 kHz stereo.
	Format audio.Format
	// Name is sent to Icecast destinations as the stream's name.
	Name string
}

// Options tune a Stream's fault handling; the zero value is the default.
type Options struct {
	Clock  Clock
	Logger *slog.Logger
	// SourceRetry is the wait between attempts to reach the source
	// (default 1 s): processing resumes within about that plus ffmpeg's
	// probe of the source after it returns.
	SourceRetry time.Duration
	// Stall is how long the source may send nothing before it counts as
	// dropped (default 2 s).
	Stall time.Duration
	// MinBackoff and MaxBackoff bound the wait before a destination is
	// reconnected (default 0.5 s, doubling up to 30 s; back to the
	// minimum after a minute connected).
	MinBackoff, MaxBackoff time.Duration
}

// ErrSpec means a Spec cannot be run; the message says why.
var ErrSpec = errors.New("livestream: invalid stream")

// blockFrames is the processing block: 10 ms at 48 kHz.
const blockFrames = 480

// queueBlocks is how many blocks a destination may fall behind (2 s)
// before the blocks it cannot take are dropped.
const queueBlocks = 200

// Stream is a running live stream.
type Stream struct {
	spec   Spec
	opts   Options
	format audio.Format
	clock  Clock
	log    *slog.Logger
	proc   *live.Processor
	cancel context.CancelFunc
	wg     sync.WaitGroup
	done   chan struct{}

	data chan srcBlock // source blocks, and drop markers (n < 0)
	free chan audio.Buffer
	dest []*destination

	procs atomic.Int64 // ffmpeg processes running

	mu      sync.Mutex
	status  Status
	started time.Time
	err     error
}

// srcBlock is a block of source audio; n < 0 marks the source's drop.
type srcBlock struct {
	b audio.Buffer
	n int
}

// Status is a running stream's state.
type Status struct {
	// Running is false once the stream has stopped.
	Running bool          `json:"running"`
	Started time.Time     `json:"started"`
	Uptime  time.Duration `json:"uptime_ns"`
	// Source is the input's state.
	Source SourceStatus `json:"source"`
	// Destinations are the outputs' states, in the Spec's order.
	Destinations []DestinationStatus `json:"destinations"`
	// Processes is the number of ffmpeg processes the stream runs.
	Processes int `json:"processes"`
	// Stats are the live graph's figures.
	Stats live.Stats `json:"-"`
	// Error says why a stopped stream stopped (empty when asked to).
	Error string `json:"error,omitempty"`
}

// SourceStatus is the state of a stream's input.
type SourceStatus struct {
	// Connected is true while source audio flows; Since is when it last
	// started or stopped flowing.
	Connected bool      `json:"connected"`
	Since     time.Time `json:"since"`
	// Drops counts the times the source went away, and OnFallback is
	// true while the destinations get silence or the fallback file.
	Drops      int    `json:"drops"`
	OnFallback bool   `json:"on_fallback"`
	LastError  string `json:"last_error,omitempty"`
	// SkippedFrames counts the source audio dropped after stalls, which
	// the source delivered late and the fallback had already filled in,
	// so that the stream's delay does not grow with each stall.
	SkippedFrames int64 `json:"skipped_frames"`
}

// DestinationStatus is the state of one output.
type DestinationStatus struct {
	URL       string    `json:"url"` // without password
	Connected bool      `json:"connected"`
	Since     time.Time `json:"since"`
	// Reconnects counts the connections after the first; DroppedFrames
	// the audio not sent while it was disconnected or too slow.
	Reconnects    int    `json:"reconnects"`
	DroppedFrames int64  `json:"dropped_frames"`
	LastError     string `json:"last_error,omitempty"`
}

// Start validates spec and starts the stream; it runs until ctx is done
// or Stop is called.
func Start(ctx context.Context, spec Spec, opts Options) (*Stream, error) {
	if spec.Source == "" {
		return nil, fmt.Errorf("%w: no source", ErrSpec)
	}
	if len(spec.Destinations) == 0 {
		return nil, fmt.Errorf("%w: no destination", ErrSpec)
	}
	for i, d := range spec.Destinations {
		if d.URL == "" {
			return nil, fmt.Errorf("%w: destination %d has no URL", ErrSpec, i)
		}
		if !validFormat(d.Format) {
			return nil, fmt.Errorf("%w: destination %d: format %q is not one of %v", ErrSpec, i, d.Format, ffmpeg.LiveFormats())
		}
		if d.Bitrate < 0 || d.Bitrate > 1024 {
			return nil, fmt.Errorf("%w: destination %d: bitrate %d kbps", ErrSpec, i, d.Bitrate)
		}
	}
	f := spec.Format
	if f == (audio.Format{}) {
		f = audio.Format{SampleRate: 48000, Channels: 2}
	}
	if err := f.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrSpec, err)
	}
	if spec.Config.Headroom == 0 {
		spec.Config.Headroom = headroom(spec.Destinations, f.Channels)
	}
	if opts.Clock == nil {
		opts.Clock = realClock{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.SourceRetry <= 0 {
		opts.SourceRetry = time.Second
	}
	if opts.Stall <= 0 {
		opts.Stall = 2 * time.Second
	}
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = 500 * time.Millisecond
	}
	if opts.MaxBackoff < opts.MinBackoff {
		opts.MaxBackoff = max(30*time.Second, opts.MinBackoff)
	}
	// The stream's programs (the source's reader, one encoder per
	// destination, the fallback's decoder) run at once for as long as it
	// runs: it takes their slots of the process pool together, as a
	// production's render does, so that no stream holds its source's slot
	// while it waits for its destinations', and streams and productions
	// waiting on each other cannot lock the pool. Reconnects reuse the
	// slots.
	programs := 1 + len(spec.Destinations)
	if spec.Fallback != "" {
		programs++
	}
	ctx, release, err := procpool.Reserve(ctx, programs)
	if err != nil {
		return nil, fmt.Errorf("livestream: %d programs: %w", programs, err)
	}
	ctx, cancel := context.WithCancel(ctx)
	stop := func() { cancel(); release() }
	s := &Stream{spec: spec, opts: opts, format: f, clock: opts.Clock, log: opts.Logger, cancel: cancel, done: make(chan struct{})}
	s.data = make(chan srcBlock, 8)
	s.free = make(chan audio.Buffer, 10)
	for range cap(s.free) {
		s.free <- audio.NewBuffer(f.Channels, blockFrames)
	}
	fb, err := s.openFallback(ctx)
	if err != nil {
		stop()
		return nil, err
	}
	now := s.clock.Now()
	in := &feed{s: s, ctx: ctx, fallback: fb, last: now, start: now, ahead: -1}
	if s.proc, err = live.New(in, spec.Config); err != nil {
		stop()
		if fb != nil {
			fb.Close()
		}
		return nil, err
	}
	s.started = s.clock.Now()
	s.status = Status{Running: true, Started: s.started, Source: SourceStatus{Since: s.started, OnFallback: true}}
	for _, d := range spec.Destinations {
		dd := &destination{s: s, d: d, queue: make(chan sendBlock, queueBlocks), free: make(chan audio.Buffer, queueBlocks)}
		for range queueBlocks {
			dd.free <- audio.NewBuffer(f.Channels, blockFrames)
		}
		s.dest = append(s.dest, dd)
		s.status.Destinations = append(s.status.Destinations, DestinationStatus{URL: redact(d.URL)})
	}
	s.wg.Add(2 + len(s.dest))
	go s.readSource(ctx)
	for i, d := range s.dest {
		go d.run(ctx, i)
	}
	go func() {
		defer s.wg.Done()
		err := s.pump(ctx)
		if fb != nil {
			fb.Close()
		}
		cancel()
		s.mu.Lock()
		if err != nil && ctx.Err() == nil {
			s.err = err
		}
		s.mu.Unlock()
	}()
	go func() {
		s.wg.Wait()
		release()
		s.mu.Lock()
		s.status.Running = false
		s.status.Uptime = s.clock.Now().Sub(s.started)
		if s.err != nil {
			s.status.Error = s.err.Error()
		}
		s.mu.Unlock()
		close(s.done)
	}()
	return s, nil
}

// headroom is the true-peak headroom the limiter keeps under maxpeak for
// the lossy destinations: the largest peak rise of their codecs.
func headroom(dests []Destination, channels int) float64 {
	h := 0.0
	for _, d := range dests {
		if ffmpeg.LiveBitrate(d.Format) == 0 {
			continue // lossless
		}
		kbps := d.Bitrate
		if kbps == 0 {
			kbps = ffmpeg.LiveBitrate(d.Format)
		}
		h = max(h, engine.CodecPeakRise(d.Format, kbps, channels))
	}
	return h
}

func validFormat(f string) bool {
	for _, x := range ffmpeg.LiveFormats() {
		if x == f {
			return true
		}
	}
	return false
}

// Stop ends the stream and waits until every process and goroutine of it
// has ended.
func (s *Stream) Stop() {
	s.cancel()
	<-s.done
}

// Done is closed when the stream has ended.
func (s *Stream) Done() <-chan struct{} { return s.done }

// Err says why a stream ended on its own (nil after Stop).
func (s *Stream) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Latency is the processing's look-ahead in seconds.
func (s *Stream) Latency() float64 {
	return float64(s.proc.Latency()) / float64(s.format.SampleRate)
}

// Status returns the stream's current state and figures.
func (s *Stream) Status() Status {
	s.mu.Lock()
	st := s.status
	st.Destinations = append([]DestinationStatus(nil), s.status.Destinations...)
	s.mu.Unlock()
	if st.Running {
		st.Uptime = s.clock.Now().Sub(st.Started)
	}
	st.Processes = int(s.procs.Load())
	st.Stats = s.proc.Stats()
	return st
}

func (s *Stream) update(f func(*Status)) {
	s.mu.Lock()
	f(&s.status)
	s.mu.Unlock()
}

// readSource connects to the source, again and again, and sends its
// audio to the feed.
func (s *Stream) readSource(ctx context.Context) {
	defer s.wg.Done()
	for ctx.Err() == nil {
		d, err := ffmpeg.OpenLive(ctx, s.spec.Source, ffmpeg.LiveInput{Format: s.format, Realtime: s.spec.Realtime})
		if err == nil {
			s.procs.Add(1)
			err = s.pull(ctx, d)
			d.Close()
			s.procs.Add(-1)
		}
		if ctx.Err() != nil {
			return
		}
		msg := "source ended"
		if err != nil && !errors.Is(err, io.EOF) {
			msg = redactText(err.Error())
		}
		s.log.Warn("live source down", "source", redact(s.spec.Source), "err", msg)
		s.update(func(st *Status) { st.Source.LastError = msg })
		select {
		case s.data <- srcBlock{n: -1}:
		case <-ctx.Done():
			return
		}
		select {
		case <-s.clock.After(s.opts.SourceRetry):
		case <-ctx.Done():
			return
		}
	}
}

// pull reads one connection of the source to its end.
func (s *Stream) pull(ctx context.Context, d *ffmpeg.Decoder) error {
	for {
		var b audio.Buffer
		select {
		case b = <-s.free:
		case <-ctx.Done():
			return ctx.Err()
		}
		n, err := d.Read(b)
		if n == 0 {
			s.free <- b
			return err
		}
		select {
		case s.data <- srcBlock{b: b, n: n}:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// openFallback starts the fallback file's decoder (nil for silence).
func (s *Stream) openFallback(ctx context.Context) (*ffmpeg.Decoder, error) {
	if s.spec.Fallback == "" {
		return nil, nil
	}
	d, err := ffmpeg.OpenLive(ctx, s.spec.Fallback, ffmpeg.LiveInput{Format: s.format, Loop: true})
	if err != nil {
		return nil, fmt.Errorf("%w: fallback %s: %v", ErrSpec, s.spec.Fallback, err)
	}
	s.procs.Add(1)
	return d, nil
}

// pump reads the processed stream and hands every block to every
// destination.
func (s *Stream) pump(ctx context.Context) error {
	buf := audio.NewBuffer(s.format.Channels, blockFrames)
	for {
		n, err := s.proc.Read(buf)
		if n > 0 {
			for _, d := range s.dest {
				d.send(buf, n)
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// feed is the processor's input: the source's blocks while it delivers,
// the fallback (or silence) at the clock's pace while it does not.
//
// A source that stalls often comes back with what it held meanwhile (a
// server or network that buffered it) and delivers that backlog at once.
// The fallback has already filled the stall, so playing the backlog too
// would put the stream that much further behind live for good, stall after
// stall. The feed therefore counts how far its output runs ahead of the
// clock: after a stall, source frames that would take it more than
// catchUpSlack beyond where it ran before the stalls are dropped, up to
// the fallback put in; the delay stays bounded and the stream plays live
// again.
type feed struct {
	s        *Stream
	ctx      context.Context
	cur      srcBlock
	pos      int
	up       bool
	last     time.Time // stream time covered by fallback or source, by the clock
	fallback *ffmpeg.Decoder
	fbErr    bool

	start time.Time // when the feed began, by the clock
	given int64     // frames handed to the processor
	// ahead is how far the output ran ahead of the clock (frames) at the
	// last source block before a stall, the least over the stalls so
	// far (-1 before the first); debt is the fallback not yet made up for
	// by dropped backlog.
	ahead, debt int64
	skipping    bool // frames were dropped since the last stall

	// timer is the one timer of the feed's waits (a stall, the next
	// block of fallback), reset for each: a timer made for every 10 ms
	// block was the stream's garbage.
	timer Timer
}

// after returns a channel that delivers the clock's time d from now,
// reusing the feed's timer.
func (f *feed) after(d time.Duration) <-chan time.Time {
	if f.timer == nil {
		f.timer = f.s.clock.NewTimer(d)
	} else {
		f.timer.Reset(d)
	}
	return f.timer.C()
}

// catchUpSlack is how much of a backlog after a stall still plays: the
// jitter of a source that delivers in bursts of a fraction of a second.
const catchUpSlack = 250 * time.Millisecond

// frames returns d in frames of the stream's rate.
func (f *feed) frames(d time.Duration) int64 {
	return int64(d.Seconds() * float64(f.s.format.SampleRate))
}

// skipBacklog drops the front of the current source block as far as it
// would put the output beyond the bound after a stall (see feed).
func (f *feed) skipBacklog() {
	if f.debt <= 0 || f.ahead < 0 || f.pos >= f.cur.n {
		return
	}
	elapsed := f.frames(f.s.clock.Now().Sub(f.start))
	over := f.given + int64(f.cur.n-f.pos) - elapsed - f.ahead - f.frames(catchUpSlack)
	n := int(min(over, f.debt, int64(f.cur.n-f.pos)))
	if over <= 0 {
		// A block within the bound after dropping: the backlog is gone
		// and the source delivers at its pace; what is left of the debt
		// would only cut live audio at the bound.
		if f.skipping {
			f.debt, f.skipping = 0, false
		}
		return
	}
	f.pos += n
	f.debt -= int64(n)
	f.skipping = true
	f.s.update(func(st *Status) { st.Source.SkippedFrames += int64(n) })
}

func (f *feed) Format() audio.Format { return f.s.format }

func (f *feed) Read(dst audio.Buffer) (int, error) {
	s := f.s
	for {
		f.skipBacklog()
		if f.pos < f.cur.n {
			n := min(dst.Frames(), f.cur.n-f.pos)
			for c := range dst {
				copy(dst[c][:n], f.cur.b[c][f.pos:f.pos+n])
			}
			f.pos += n
			f.given += int64(n)
			return n, nil
		}
		if f.cur.b != nil {
			s.free <- f.cur.b
			f.cur = srcBlock{}
		}
		if f.up {
			select {
			case b := <-s.data:
				if b.n < 0 {
					f.down("source dropped")
					continue
				}
				f.cur, f.pos, f.last = b, 0, s.clock.Now()
			case <-f.after(s.opts.Stall):
				f.down("source sent nothing for " + s.opts.Stall.String())
			case <-f.ctx.Done():
				return 0, io.EOF
			}
			continue
		}
		// On fallback: the source's first block wins, else whatever
		// fallback time is due, else wait for a block's worth of time.
		select {
		case b := <-s.data:
			f.source(b)
			continue
		default:
		}
		if n := f.fill(dst); n > 0 {
			f.given += int64(n)
			f.debt += int64(n)
			return n, nil
		}
		select {
		case b := <-s.data:
			f.source(b)
		case <-f.after(10 * time.Millisecond):
		case <-f.ctx.Done():
			return 0, io.EOF
		}
	}
}

// source takes a block that arrived while on fallback: the source is back.
func (f *feed) source(b srcBlock) {
	if b.n < 0 {
		return
	}
	s := f.s
	f.up = true
	f.cur, f.pos = b, 0
	now := s.clock.Now()
	s.update(func(st *Status) {
		st.Source.Connected, st.Source.Since, st.Source.OnFallback = true, now, false
	})
	s.log.Info("live source up", "source", redact(s.spec.Source))
}

// down switches to the fallback; the time since the source's last block
// is filled with it.
func (f *feed) down(why string) {
	f.up = false
	now := f.s.clock.Now()
	if a := f.given - f.frames(f.last.Sub(f.start)); f.ahead < 0 || a < f.ahead {
		f.ahead = max(a, 0)
	}
	f.s.update(func(st *Status) {
		st.Source.Connected, st.Source.Since, st.Source.OnFallback = false, now, true
		st.Source.Drops++
		if st.Source.LastError == "" {
			st.Source.LastError = why
		}
	})
}

// fill writes the fallback for the time that has passed since the last
// frame the feed gave, at most dst's length.
func (f *feed) fill(dst audio.Buffer) int {
	rate := f.s.format.SampleRate
	now := f.s.clock.Now()
	due := int(now.Sub(f.last).Seconds() * float64(rate))
	if due > 5*rate {
		// The pump was held up (a stopped process, a suspended machine):
		// do not make up for more than 5 s.
		f.last = now.Add(-5 * time.Second)
		due = 5 * rate
	}
	n := min(due, dst.Frames())
	if n <= 0 {
		return 0
	}
	view := dst.Slice(0, n)
	got := 0
	if f.fallback != nil && !f.fbErr {
		m, err := f.fallback.Read(view)
		if err != nil {
			f.fbErr = true
			f.s.log.Warn("live fallback failed, playing silence", "err", err)
		}
		got = m
	}
	for c := range view {
		clear(view[c][got:])
	}
	f.last = f.last.Add(time.Duration(float64(n) / float64(rate) * float64(time.Second)))
	return n
}

// destination is one output and its reconnection loop.
type destination struct {
	s     *Stream
	d     Destination
	queue chan sendBlock
	free  chan audio.Buffer
}

type sendBlock struct {
	b audio.Buffer
	n int
}

// send copies a processed block into the destination's queue; when the
// destination is too far behind, the block is dropped and counted.
func (d *destination) send(b audio.Buffer, n int) {
	select {
	case c := <-d.free:
		for ch := range c {
			copy(c[ch][:n], b[ch][:n])
		}
		d.queue <- sendBlock{b: c, n: n}
	default:
		d.dropped(n)
	}
}

func (d *destination) dropped(n int) {
	d.s.mu.Lock()
	for i := range d.s.dest {
		if d.s.dest[i] == d {
			d.s.status.Destinations[i].DroppedFrames += int64(n)
		}
	}
	d.s.mu.Unlock()
}

// run connects, sends until the connection fails, waits and connects
// again, dropping the audio that comes in meanwhile.
func (d *destination) run(ctx context.Context, i int) {
	s := d.s
	defer s.wg.Done()
	backoff := s.opts.MinBackoff
	connects := 0
	for ctx.Err() == nil {
		out, err := ffmpeg.StartLiveOutput(ctx, d.d.URL, s.format, ffmpeg.LiveOutputOptions{Format: d.d.Format, Bitrate: d.d.Bitrate, Name: s.spec.Name})
		if err == nil {
			s.procs.Add(1)
			connects++
			since := s.clock.Now()
			s.update(func(st *Status) {
				ds := &st.Destinations[i]
				ds.Connected, ds.Since = true, since
				if connects > 1 {
					ds.Reconnects++
				}
			})
			err = d.feed(ctx, out)
			cerr := out.Close()
			if err == nil {
				err = cerr
			}
			s.procs.Add(-1)
			if s.clock.Now().Sub(since) > time.Minute {
				backoff = s.opts.MinBackoff
			}
		}
		if ctx.Err() != nil {
			d.drain()
			return
		}
		msg := "destination closed"
		if err != nil {
			msg = redactText(err.Error())
		}
		s.log.Warn("live destination down", "destination", redact(d.d.URL), "err", msg, "retry_in", backoff)
		now := s.clock.Now()
		s.update(func(st *Status) {
			ds := &st.Destinations[i]
			ds.Connected, ds.Since, ds.LastError = false, now, msg
		})
		wait := s.clock.After(backoff)
	waiting:
		for {
			select {
			case b := <-d.queue:
				d.free <- b.b
				d.dropped(b.n)
			case <-wait:
				break waiting
			case <-ctx.Done():
				d.drain()
				return
			}
		}
		backoff = min(2*backoff, s.opts.MaxBackoff)
	}
	d.drain()
}

// feed writes queued blocks to one connection until it fails.
func (d *destination) feed(ctx context.Context, out *ffmpeg.LiveOutput) error {
	for {
		select {
		case b := <-d.queue:
			err := out.Write(b.b.Slice(0, b.n))
			d.free <- b.b
			if err != nil {
				return err
			}
		case <-out.Done():
			return errors.New("ffmpeg exited")
		case <-ctx.Done():
			return nil
		}
	}
}

// drain returns the queued blocks to the free list.
func (d *destination) drain() {
	for {
		select {
		case b := <-d.queue:
			d.free <- b.b
		default:
			return
		}
	}
}
