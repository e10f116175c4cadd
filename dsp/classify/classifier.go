package classify

import (
	"fmt"
	"math"
	"sync"

	"github.com/audiopost/audiopost/audio"
)

// BlockSeconds is the length of the blocks Result labels: 100 ms, the grid
// of the dsp analysis, the leveler and the loudness meter, so that a label
// belongs to exactly one of their blocks. A block is round(sampleRate *
// BlockSeconds) frames long.
const BlockSeconds = 0.1

// SubBlocks is how many sub-blocks (10 ms) a block is divided into: the
// resolution of Result.Activity and of every cut.
const SubBlocks = 10

// BlockLen returns the length of a block in frames at sampleRate.
func BlockLen(sampleRate int) int {
	return max(1, int(math.Round(float64(sampleRate)*BlockSeconds)))
}

// Mode is the speech/music classifier setting (the API's msclassifier).
type Mode int

const (
	// Auto classifies every part of the recording (msclassifier "on").
	Auto Mode = iota
	// SpeechOnly labels everything that is not silence as speech.
	SpeechOnly
	// MusicOnly labels everything that is not silence as music.
	MusicOnly
)

// String returns the API's name of the mode.
func (m Mode) String() string {
	switch m {
	case Auto:
		return "on"
	case SpeechOnly:
		return "speech"
	case MusicOnly:
		return "music"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// ParseMode reads the API's msclassifier value ("on", "speech", "music";
// empty means "on").
func ParseMode(s string) (Mode, error) {
	switch s {
	case "", "on":
		return Auto, nil
	case "speech":
		return SpeechOnly, nil
	case "music":
		return MusicOnly, nil
	}
	return Auto, fmt.Errorf("classify: unknown msclassifier %q", s)
}

// Classifier is an audio.Sink that measures, in one pass over a recording,
// what voice activity, the speech/music classifier and the cut detectors
// need: a few numbers per 10 ms sub-block (14 bytes, 5 MB per hour of
// audio, whatever the sample rate and channel count). Finish turns them
// into a Result.
//
// The input is mixed to mono and, from 24 kHz up, low-passed and
// decimated by an integer factor to about 16 kHz: everything the features
// look at lies below 7 kHz, and the decimation is what keeps the analysis
// far faster than real time. The spectral analysis of the decimated
// signal, most of the work, may run in a goroutine of its own
// (Concurrent).
type Classifier struct {
	format   audio.Format
	mode     Mode
	blockLen int
	dec      int // decimation factor
	lp       [2]biquad
	phase    int // input frames until the next decimated sample

	inPos  int64 // input frames consumed
	nSub   int   // sub-blocks ended
	subEnd int64 // end of the current sub-block, in input frames
	subAcc float64
	subN   int

	win  *windows
	mono []float64 // Write's mono mix
	done bool

	// With Concurrent, Write hands the decimated samples and the levels
	// over in chunks to a goroutine that runs win.
	work chan *chunk
	free chan *chunk
	cur  *chunk
	quit chan struct{} // closed by Close: the goroutine drops its work
	exit chan struct{} // closed when the goroutine has returned
	once sync.Once
}

// chunk is a Write's worth of decimated samples and sub-block levels.
type chunk struct {
	samples []float64
	levels  []float32
}

// windows is the spectral analysis of the decimated signal: every
// sub-block's window, analysed as soon as its samples and its level are
// in, in order.
type windows struct {
	dec      int
	blockLen int
	spec     *spectral
	ring     []float64 // decimated samples, ring of power-of-two length
	nDec     int64     // decimated samples received
	due      int64     // nDec at which the next window may be complete
	frame    []float64 // one analysis window, copied out of the ring
	levels   levelQueue
	feats    featStore
	bflux    []float32 // spectral change per block (spectral.endBlock)
}

// levelQueue holds the levels of the sub-blocks that have ended and not
// been analysed: the window reaches 20 ms past a sub-block's centre, so
// two or three when the analysis follows the decimation sample by sample,
// a chunk's worth when it runs apart.
type levelQueue struct {
	buf     []float32 // power-of-two length
	head, n int
}

func (q *levelQueue) push(v float32) {
	if q.n == len(q.buf) {
		b := make([]float32, max(16, 2*len(q.buf)))
		for i := range q.n {
			b[i] = q.buf[(q.head+i)&(len(q.buf)-1)]
		}
		q.buf, q.head = b, 0
	}
	q.buf[(q.head+q.n)&(len(q.buf)-1)] = v
	q.n++
}

func (q *levelQueue) pop() float32 {
	v := q.buf[q.head]
	q.head = (q.head + 1) & (len(q.buf) - 1)
	q.n--
	return v
}

// NewClassifier returns an Classifier for a stream of format f classified in
// mode m.
func NewClassifier(f audio.Format, m Mode) (*Classifier, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	if m < Auto || m > MusicOnly {
		return nil, fmt.Errorf("classify: invalid mode %d", int(m))
	}
	a := &Classifier{format: f, mode: m, blockLen: BlockLen(f.SampleRate)}
	a.dec = max(1, int(math.Round(float64(f.SampleRate)/16000)))
	fs := float64(f.SampleRate)
	fsd := fs / float64(a.dec)
	if a.dec > 1 {
		// Fourth-order Butterworth at 0.45 of the decimated rate.
		a.lp[0] = lowPass(fs, 0.45*fsd, 0.5412)
		a.lp[1] = lowPass(fs, 0.45*fsd, 1.3066)
	}
	w := &windows{dec: a.dec, blockLen: a.blockLen, spec: newSpectral(fsd)}
	n := 1
	for n < w.spec.nw+2*a.dec+64 {
		n *= 2
	}
	w.ring = make([]float64, n)
	w.frame = make([]float64, w.spec.nw)
	w.levels.buf = make([]float32, 16)
	a.win = w
	a.subEnd = a.subStart(1)
	return a, nil
}

// Concurrent makes the spectral analysis, about three quarters of the
// work, run in a goroutine of its own, which Write feeds the decimated
// signal: with two cores the caller then spends about a quarter of the
// time in Write. The result is the same to the last bit. Call it before
// the first Write; Finish waits for the goroutine, and Close stops it
// when Finish is not reached.
func (a *Classifier) Concurrent() {
	if a.work != nil || a.inPos > 0 || a.done {
		return
	}
	const chunks = 4
	a.work = make(chan *chunk, chunks)
	a.free = make(chan *chunk, chunks)
	for range chunks {
		a.free <- &chunk{}
	}
	a.quit = make(chan struct{})
	a.exit = make(chan struct{})
	a.cur = <-a.free
	go func() {
		defer close(a.exit)
		for c := range a.work {
			select {
			case <-a.quit:
				continue // drain without work
			default:
			}
			for _, l := range c.levels {
				a.win.levels.push(l)
			}
			for _, x := range c.samples {
				a.win.push(x)
			}
			c.samples, c.levels = c.samples[:0], c.levels[:0]
			a.free <- c
		}
	}()
}

// ClassifyOnly makes the analyzer keep only what the speech/music
// classification and the activity read of every 10 ms sub-block, 8 of
// its 14 bytes (2.2 MB an hour less at the end of the analysis, its
// largest moment): for a caller that will not look for fillers or coughs,
// which then find nothing, as after Result.DropFeatures. Everything else
// in the Result is the same. Call it before the first Write.
func (a *Classifier) ClassifyOnly() {
	if a.inPos == 0 && !a.done {
		a.win.feats.classifyOnly = true
	}
}

// Close stops the goroutine of a Concurrent analyzer that will not be
// finished (Finish after Close is not allowed). It is harmless otherwise.
func (a *Classifier) Close() error {
	if a.work == nil {
		return nil
	}
	a.once.Do(func() {
		close(a.quit)
		close(a.work)
	})
	<-a.exit
	return nil
}

// subStart returns the first input frame of sub-block j.
func (a *Classifier) subStart(j int) int64 { return subStart(a.blockLen, j) }

// subStart returns the first frame of sub-block j with blocks of
// blockLen frames: SubBlocks per block, as equal as whole frames allow.
func subStart(blockLen, j int) int64 {
	b, k := j/SubBlocks, j%SubBlocks
	return int64(b)*int64(blockLen) + int64(k*blockLen/SubBlocks)
}

// Write implements audio.Sink.
func (a *Classifier) Write(b audio.Buffer) error {
	if a.done {
		return fmt.Errorf("classify: Write after Finish")
	}
	if len(b) != a.format.Channels {
		return fmt.Errorf("%w: %d channels for a %d-channel stream", audio.ErrFormatMismatch, len(b), a.format.Channels)
	}
	n := b.Frames()
	if cap(a.mono) < n {
		a.mono = make([]float64, n)
	}
	mono := a.mono[:n]
	inv := 1 / float64(len(b))
	if len(b) == 2 {
		mono2(mono, b[0][:n], b[1][:n])
	} else {
		for i := range mono {
			var x float64
			for c := range b {
				x += b[c][i]
			}
			mono[i] = x * inv
		}
	}
	if a.work == nil {
		a.consume(mono)
		return nil
	}
	a.consumeApart(mono)
	select {
	case <-a.quit:
		return fmt.Errorf("classify: Write after Close")
	default:
	}
	if len(a.cur.samples) >= chunkSamples {
		a.work <- a.cur
		a.cur = <-a.free
	}
	return nil
}

// chunkSamples is how many decimated samples (half a second at 16 kHz) a
// Concurrent analyzer hands its goroutine at a time: handing over every
// Write's few hundred would wake the goroutine, which keeps up, for each
// one, and a wake-up costs about as much as the work it brings.
const chunkSamples = 8192

// consume takes mono input frames: the sub-block levels, the decimation
// and the analysis of every window that completes. Levels may run ahead
// of the samples: a window is analysed when both are in.
func (a *Classifier) consume(mono []float64) {
	w := a.win
	a.subLevels(mono, func(l float32) { w.levels.push(l) })
	a.antiAlias(mono)
	ring, mask := w.ring, int64(len(w.ring)-1)
	nDec, due := w.nDec, w.due
	i := max(a.phase-1, 0)
	for ; i < len(mono); i += a.dec {
		ring[nDec&mask] = mono[i]
		nDec++
		if nDec >= due {
			w.nDec = nDec
			w.analyseDue()
			due = w.due
		}
	}
	a.phase, w.nDec = i-len(mono)+1, nDec
}

// consumeApart is consume for a Concurrent analyzer: the decimated
// samples and the levels go into the chunk for the goroutine. The level
// of a sub-block always comes before the last sample of its window.
func (a *Classifier) consumeApart(mono []float64) {
	c := a.cur
	a.subLevels(mono, func(l float32) { c.levels = append(c.levels, l) })
	a.antiAlias(mono)
	i := max(a.phase-1, 0)
	for ; i < len(mono); i += a.dec {
		c.samples = append(c.samples, mono[i])
	}
	a.phase = i - len(mono) + 1
}

// subLevels adds mono to the sub-block levels, giving each one that ends
// to end.
func (a *Classifier) subLevels(mono []float64, end func(float32)) {
	subAcc, subN, inPos, subEnd := a.subAcc, a.subN, a.inPos, a.subEnd
	for _, x := range mono {
		subAcc += x * x
		subN++
		inPos++
		if inPos == subEnd {
			a.subAcc, a.subN = subAcc, subN
			end(a.endSub())
			subAcc, subN, subEnd = a.subAcc, a.subN, a.subEnd
		}
	}
	a.subAcc, a.subN, a.inPos, a.subEnd = subAcc, subN, inPos, subEnd
}

// antiAlias low-passes x in place before decimation, through both
// sections at once.
func (a *Classifier) antiAlias(x []float64) {
	if a.dec <= 1 {
		return
	}
	lowPass2(&a.lp[0], &a.lp[1], x)
}

// lowPass2Go runs x in place through p and then q, the loop of
// antiAlias. The states are locals and the coefficients are read through
// pointers: with all eighteen values in locals the compiler spilled
// states to the stack, and the store and reload on the recurrence made
// the loop twice as slow. lowPass2 is lowPass2Go, or a kernel that
// computes the same values.
func lowPass2Go(p, q *biquad, x []float64) {
	x1, x2, y1, y2 := p.x1, p.x2, p.y1, p.y2
	u1, u2, v1, v2 := q.x1, q.x2, q.y1, q.y2
	for i, v := range x {
		// The float64 conversions keep the compiler from fusing
		// products into FMA instructions, so every build (GOAMD64 v1 or
		// v3, other architectures) rounds alike and classifies alike.
		y := float64(p.b0*v) + float64(p.b1*x1) + float64(p.b2*x2) - float64(p.a2*y2) - float64(p.a1*y1)
		x2, x1 = x1, v
		y2, y1 = y1, y
		z := float64(q.b0*y) + float64(q.b1*u1) + float64(q.b2*u2) - float64(q.a2*v2) - float64(q.a1*v1)
		u2, u1 = u1, y
		v2, v1 = v1, z
		x[i] = z
	}
	p.x1, p.x2, p.y1, p.y2 = x1, x2, y1, y2
	q.x1, q.x2, q.y1, q.y2 = u1, u2, v1, v2
}

// endSub closes the current sub-block and returns its level.
func (a *Classifier) endSub() float32 {
	ms := 0.0
	if a.subN > 0 {
		ms = a.subAcc / float64(a.subN)
	}
	a.nSub++
	a.subAcc, a.subN = 0, 0
	a.subEnd = a.subStart(a.nSub + 1)
	return float32(toDB(ms))
}

// push takes the next decimated sample.
func (w *windows) push(x float64) {
	w.ring[w.nDec&int64(len(w.ring)-1)] = x
	w.nDec++
	if w.nDec >= w.due {
		w.analyseDue()
	}
}

// windowStart returns the first decimated index of the analysis window
// [lo, lo+nw) of sub-block j: centred on the sub-block.
func (w *windows) windowStart(j int) int64 {
	c := (subStart(w.blockLen, j) + subStart(w.blockLen, j+1)) / 2
	return c/int64(w.dec) - int64(w.spec.nw/2)
}

// analyseDue analyses every sub-block whose window is complete and whose
// level is in, and sets due to the sample count that completes the next
// window.
func (w *windows) analyseDue() {
	for {
		lo := w.windowStart(w.feats.len())
		if w.due = lo + int64(w.spec.nw); w.levels.n == 0 || w.due > w.nDec {
			return
		}
		// The window from the ring: zeros before the first sample, then
		// at most two runs of the ring (copies, where a loop indexing the
		// ring per sample cost the browser build 2 % of its engine).
		mask := int64(len(w.ring) - 1)
		frame := w.frame
		if lo < 0 {
			z := min(int64(len(frame)), -lo)
			clear(frame[:z])
			frame, lo = frame[z:], lo+z
		}
		for len(frame) > 0 {
			n := copy(frame, w.ring[lo&mask:])
			frame, lo = frame[n:], lo+int64(n)
		}
		f := feature{level: w.levels.pop()}
		w.spec.analyse(w.frame, &f)
		w.feats.add(f.pack())
		if w.feats.len()%SubBlocks == 0 {
			w.bflux = append(w.bflux, w.spec.endBlock())
		}
	}
}

// Finish completes the analysis and classifies the recording. The
// Classifier must not be written to afterwards.
func (a *Classifier) Finish() *Result {
	w := a.win
	if !a.done {
		a.done = true
		var last []float32
		if a.subN > 0 {
			last = []float32{a.endSub()}
		}
		if a.work != nil {
			select {
			case <-a.quit: // closed: the result is what it is
			default:
				a.cur.levels = append(a.cur.levels, last...)
				a.work <- a.cur
				a.once.Do(func() { close(a.work) })
			}
			<-a.exit
		} else {
			for _, l := range last {
				w.levels.push(l)
			}
		}
		// Flush the windows that reach past the end with silence.
		for w.levels.n > 0 {
			w.push(0)
		}
	}
	if len(w.bflux)*SubBlocks < w.feats.len() {
		w.bflux = append(w.bflux, w.spec.endBlock())
	}
	feats := w.feats // the Result shares the chunks, which are complete
	return newResult(a.format.SampleRate, a.inPos, a.blockLen, a.mode, &feats, w.bflux)
}

// mono2Go sets mono to the mean of the stereo frames l, r (at least as
// long): the sum from zero, in order, as the general case adds the
// channels, halved. mono2 is mono2Go, or a kernel that computes the same
// values.
func mono2Go(mono, l, r []float64) {
	l, r = l[:len(mono)], r[:len(mono)]
	for i := range mono {
		var x float64
		x += l[i]
		x += r[i]
		mono[i] = x * 0.5
	}
}

// biquad is a second-order section in direct form I (see antiAlias). The
// decimation runs two in series on every input sample, and the sum of this
// form puts only the last multiply and subtract (6 cycles) between one
// output and the next, where the transposed form II waits 9 to 12.
type biquad struct {
	b0, b1, b2, a1, a2 float64
	x1, x2, y1, y2     float64
}

func lowPass(fs, f0, q float64) biquad {
	w := 2 * math.Pi * f0 / fs
	c, s := math.Cos(w), math.Sin(w)
	alpha := s / (2 * q)
	a0 := 1 + alpha
	return biquad{b0: (1 - c) / 2 / a0, b1: (1 - c) / a0, b2: (1 - c) / 2 / a0, a1: -2 * c / a0, a2: (1 - alpha) / a0}
}
