package loudness

import (
	"errors"
	"fmt"
	"math"

	"github.com/audiopost/audiopost/audio"
)

// Mode selects what a Meter measures; callers pay only for what they ask.
type Mode uint

// The measurements. K-weighting runs when any of ModeM, ModeS, ModeI,
// ModeLRA, ModeLevels or a speech mask is asked for; the true-peak
// interpolator only with ModeTruePeak.
const (
	// ModeM tracks the maximum momentary loudness (400 ms window).
	ModeM Mode = 1 << iota
	// ModeS tracks the maximum short-term loudness (3 s window).
	ModeS
	// ModeI measures the gated integrated (programme) loudness.
	ModeI
	// ModeLRA measures the loudness range (EBU Tech 3342).
	ModeLRA
	// ModeSamplePeak tracks the largest absolute sample.
	ModeSamplePeak
	// ModeTruePeak tracks the true peak (BS.1770 Annex 2).
	ModeTruePeak
	// ModeRMS measures the ungated, unweighted RMS level.
	ModeRMS
	// ModeLevels measures noise level, signal level and SNR (implies the
	// block statistics of ModeI).
	ModeLevels

	// ModeEBU is everything an EBU Mode meter reports.
	ModeEBU = ModeM | ModeS | ModeI | ModeLRA | ModeSamplePeak | ModeTruePeak
	// ModeAll is every measurement.
	ModeAll = ModeEBU | ModeRMS | ModeLevels
)

// Options configure a Meter.
type Options struct {
	// Mode selects the measurements; zero means ModeAll.
	Mode Mode
	// Layout gives each channel's role; nil means DefaultLayout.
	Layout Layout
	// DualMono counts a mono stream as two identical channels (+3.01 LU),
	// as when mono is played on both loudspeakers of a stereo pair.
	DualMono bool
	// Speech, if not nil, lists the sorted, non-overlapping ranges of
	// frames (at the stream's sample rate) that contain speech; Result.Dialog is then the gated loudness of the
	// 400 ms gating blocks whose midpoint lies inside a range.
	Speech []audio.Span
	// OnStep, if not nil, is called at the end of every 100 ms step (see
	// Meter.StepFrames) with the step's channel-weighted K-weighted mean
	// square. Gain plans and analyses work on this grid; taking it from
	// the meter keeps one K-weighting and one set of definitions.
	OnStep func(energy float64)
	// OnHop, if not nil, is called at the end of every hop, StepHops per
	// step (10 ms), with the hop's channel-weighted K-weighted sum of
	// squares; hop k of a step covers its frames [HopStart(rate, k),
	// HopStart(rate, k+1)). A step's OnStep energy is the sum of its
	// hops' sums over the step's frames. The finer grid lets a caller
	// predict how a slowly varying gain would change the step energies
	// without measuring again.
	OnHop func(sum float64)
	// Offset is how many frames of the programme precede the stream: a
	// meter measuring the continuation of a programme (see Meter.Append)
	// finds its speech ranges, which are in programme time, by it.
	Offset int64
}

// Errors of this package. They wrap audio's sentinels where one fits.
var (
	// ErrLayout means a channel layout does not fit the stream.
	ErrLayout = fmt.Errorf("%w: bad channel layout", audio.ErrUnsupported)
	// ErrSpeechMask means Options.Speech is not sorted or overlaps.
	ErrSpeechMask = errors.New("loudness: speech ranges must be sorted and must not overlap")
	// ErrTooShort means the input is shorter than one 400 ms block, so no
	// loudness is defined.
	ErrTooShort = errors.New("loudness: input shorter than one 400 ms block")
	// ErrSilence means no gating block rose above the -70 LUFS absolute
	// gate, so the integrated loudness is undefined.
	ErrSilence = errors.New("loudness: no block above the -70 LUFS gate")
)

// Geometry of the block timing: every 100 ms step is cut into subSteps
// hops (10 ms) at which the maximum momentary and short-term loudness are
// evaluated; Tech 3341 case 13 needs such a fine hop.
const (
	subSteps   = 10
	stepsM     = 4  // 400 ms
	stepsS     = 30 // 3 s
	ringLen    = stepsS * subSteps
	blockSteps = stepsM
)

// Meter is a streaming BS.1770-5 / EBU R128 loudness meter: an audio.Sink
// that measures what its Mode asks for. Memory is fixed at creation,
// whatever the duration, and Write allocates nothing.
//
// A Meter is not safe for concurrent use.
type Meter struct {
	format  audio.Format
	mode    Mode
	weights []float64
	kweight bool

	kf []kfilter
	// kstereo, for two weighted channels, holds the coefficients of the
	// stereo kernel that filters both at once.
	kstereo []float64
	step    int // frames per 100 ms step (rounded, as libebur128)
	// hop[k] is the first frame of hop k within a step, hop[subSteps] ==
	// step, so the 10 hops tile a step exactly even when 10 ms is not a
	// whole number of frames.
	hop    [subSteps + 1]int
	subIdx int     // hop within the current step
	pos    int     // frames into the current hop
	acc    float64 // weighted sum of squares of the current hop
	ring   [ringLen]float64
	ringAt int
	hops   int64 // completed hops
	sumM   float64
	sumS   float64
	maxM   float64
	maxS   float64

	blocks *histogram // 400 ms gating blocks (ModeI, ModeLevels)
	short  *histogram // 3 s blocks at 10 Hz (ModeLRA)
	dialog *histogram // speech blocks (Options.Speech)
	speech [][2]int64 // speech ranges in frames
	spAt   int

	peak   []float64 // sample peak per channel
	tp     *TruePeakDetector
	tpPeak []float64 // true peak per channel
	tpMax  float64
	rmsSum float64
	rmsCh  int

	blockPeak []float64    // per channel, of the block being written
	clean     audio.Buffer // scratch for sanitize, grown only when needed
	onStep    func(float64)
	onHop     func(float64)

	frames int64
	offset int64 // Options.Offset
	// first holds the energies of the first hops, which Append replays
	// into the meter that measured what came before: the windows that
	// reach across the join are that meter's to count.
	first [ringLen - 1]float64
}

// NewMeter returns a meter for streams of format f.
func NewMeter(f audio.Format, opts Options) (*Meter, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	w, err := opts.weights(f)
	if err != nil {
		return nil, err
	}
	if opts.Offset < 0 {
		return nil, fmt.Errorf("loudness: offset %d frames", opts.Offset)
	}
	m := &Meter{format: f, mode: opts.Mode, weights: w, onStep: opts.OnStep, onHop: opts.OnHop, offset: opts.Offset}
	if m.mode == 0 {
		m.mode = ModeAll
	}
	if m.mode&ModeLevels != 0 {
		m.mode |= ModeI
	}
	m.kweight = m.mode&(ModeM|ModeS|ModeI|ModeLRA) != 0 || opts.Speech != nil || opts.OnStep != nil || opts.OnHop != nil
	m.step = StepFrames(f.SampleRate)
	for k := range m.hop {
		m.hop[k] = HopStart(f.SampleRate, k)
	}
	if m.kweight {
		m.kf = make([]kfilter, f.Channels)
		for c := range m.kf {
			m.kf[c] = newKFilter(f.SampleRate)
		}
		if hasStereoKernel && f.Channels == 2 && w[0] > 0 && w[1] > 0 {
			m.kstereo = m.kf[0].packStereo()
		}
	}
	if m.mode&ModeI != 0 {
		m.blocks = newHistogram()
	}
	if m.mode&ModeLRA != 0 {
		m.short = newHistogram()
	}
	if opts.Speech != nil {
		m.dialog = newHistogram()
		m.speech = make([][2]int64, len(opts.Speech))
		for i, s := range opts.Speech {
			if s.End < s.Start || (i > 0 && s.Start < opts.Speech[i-1].End) {
				return nil, fmt.Errorf("%w: range %d is [%v, %v)", ErrSpeechMask, i, s.Start, s.End)
			}
			m.speech[i] = [2]int64{s.Start, s.End}
		}
	}
	if m.mode&ModeSamplePeak != 0 {
		m.peak = make([]float64, f.Channels)
	}
	if m.mode&ModeTruePeak != 0 {
		m.tp = NewTruePeakDetector(f.SampleRate, f.Channels)
		m.tpPeak = make([]float64, f.Channels)
	}
	for _, g := range w {
		if g > 0 {
			m.rmsCh++
		}
	}
	m.blockPeak = make([]float64, f.Channels)
	return m, nil
}

// Format returns the stream format the meter was made for.
func (m *Meter) Format() audio.Format { return m.format }

// Mode returns the measurements the meter makes.
func (m *Meter) Mode() Mode { return m.mode }

// StepFrames is the length of the meter's 100 ms step in frames (the
// sample rate over ten, rounded half up as libebur128 does).
func (m *Meter) StepFrames() int { return m.step }

// StepFrames returns the 100 ms step length in frames at a sample rate:
// the grid of Options.OnStep.
func StepFrames(sampleRate int) int { return (sampleRate + 5) / 10 }

// StepHops is the number of hops a step is cut into: the grid of
// Options.OnHop and of the maximum momentary and short-term loudness.
const StepHops = subSteps

// HopStart returns the first frame of hop k (0 to StepHops) within a step
// at a sample rate; HopStart(rate, StepHops) is StepFrames(rate). The
// hops tile a step exactly even where 10 ms is not a whole number of
// frames.
func HopStart(sampleRate, k int) int { return k * StepFrames(sampleRate) / subSteps }

// PendingStep returns the K-weighted energy sum (channel-weighted, not yet
// divided by frames) and the frame count of the step in progress: the
// tail of a stream that ended between steps.
func (m *Meter) PendingStep() (energy float64, frames int) {
	if !m.kweight {
		return 0, 0
	}
	return m.windowSum(m.subIdx) + m.acc, m.hop[m.subIdx] + m.pos
}

// Reset starts a new measurement, as if the meter were new.
func (m *Meter) Reset() {
	for c := range m.kf {
		m.kf[c].reset()
	}
	m.subIdx, m.pos, m.acc, m.ringAt, m.hops = 0, 0, 0, 0, 0
	m.ring = [ringLen]float64{}
	m.sumM, m.sumS, m.maxM, m.maxS = 0, 0, 0, 0
	for _, h := range []*histogram{m.blocks, m.short, m.dialog} {
		if h != nil {
			h.reset()
		}
	}
	m.spAt = 0
	clear(m.peak)
	clear(m.tpPeak)
	if m.tp != nil {
		m.tp.Reset()
	}
	m.tpMax, m.rmsSum, m.frames = 0, 0, 0
}

// Write measures the next frames. It fails only when b does not match the
// meter's format.
func (m *Meter) Write(b audio.Buffer) error {
	if len(b) != m.format.Channels {
		return fmt.Errorf("%w: %d channels written to a %d-channel meter", audio.ErrFormatMismatch, len(b), m.format.Channels)
	}
	n := b.Frames()
	for c := range b {
		if len(b[c]) != n {
			return fmt.Errorf("%w: channel %d has %d frames, channel 0 %d", audio.ErrFormatMismatch, c, len(b[c]), n)
		}
	}
	if n == 0 {
		return nil
	}
	for c, x := range b {
		p := absMax(x)
		if !(p <= maxSample) {
			b = m.sanitize(b)
			break
		}
		m.blockPeak[c] = p
	}
	if m.peak != nil {
		for c, p := range m.blockPeak {
			m.peak[c] = max(m.peak[c], p)
		}
	}
	if m.tp != nil {
		for c, x := range b {
			p := m.tp.processBelow(c, x, m.tpMax, m.blockPeak[c])
			if p > m.tpPeak[c] {
				m.tpPeak[c] = p
				m.tpMax = max(m.tpMax, p)
			}
		}
	}
	// With the stereo kernel the K-weighting loop adds up the squares
	// too, in sumSquares's order.
	fused := hasStereoKernel && m.kweight && m.kstereo != nil
	if m.mode&ModeRMS != 0 && !fused {
		for c, x := range b {
			if m.weights[c] > 0 {
				m.rmsSum += sumSquares(x)
			}
		}
	}
	var sq [4]float64
	if m.kweight {
		for off := 0; off < n; {
			k := min(n-off, m.hop[m.subIdx+1]-m.hop[m.subIdx]-m.pos)
			e := 0.0
			if m.kstereo != nil {
				// e as the loop below adds it, both channels at once.
				sl, sr := energy2Sq(&m.kf[0], &m.kf[1], b[0][off:off+k], b[1][off:off+k], m.kstereo, &sq)
				e += m.weights[0] * sl
				e += m.weights[1] * sr
			} else {
				for c, g := range m.weights {
					if g > 0 {
						e += g * m.kf[c].energy(b[c][off:off+k])
					}
				}
			}
			m.acc += e
			m.pos += k
			off += k
			if m.pos == m.hop[m.subIdx+1]-m.hop[m.subIdx] {
				m.endHop()
			}
		}
	}
	if m.mode&ModeRMS != 0 && fused {
		// Both channels weigh (m.kstereo): left, then right, each the
		// sum of its even and odd frames.
		m.rmsSum += sq[0] + sq[2]
		m.rmsSum += sq[1] + sq[3]
	}
	m.frames += int64(n)
	return nil
}

// maxSample bounds the samples a meter takes as audio: 2^30 times full
// scale (+180 dBFS) is far beyond anything a decoder or a DSP chain yields,
// and keeps every sum of squares finite.
const maxSample = 1 << 30

// sanitize returns a copy of b in which NaN, infinite and absurdly large
// samples are 0: they carry no level, and one of them would otherwise
// poison the filter states and every reading after it. It also sets
// blockPeak. Only streams with such samples pay for the copy.
func (m *Meter) sanitize(b audio.Buffer) audio.Buffer {
	n := b.Frames()
	if m.clean == nil || cap(m.clean[0]) < n {
		m.clean = audio.NewBuffer(len(b), n)
	}
	for c, x := range b {
		dst := m.clean[c][:n]
		for i, v := range x {
			if !(math.Abs(v) <= maxSample) {
				v = 0
			}
			dst[i] = v
		}
		m.clean[c] = dst
		m.blockPeak[c] = absMax(dst)
	}
	return m.clean
}

// endHop closes a 10 ms hop.
func (m *Meter) endHop() {
	e := m.acc
	m.acc, m.pos = 0, 0
	if m.onHop != nil {
		m.onHop(e)
	}
	m.addHop(e, -1)
}

// addHop takes the energy of the next hop: it updates the sliding sums
// and, at the end of each 100 ms step, feeds the gating histograms. A hop
// that Append replays is hop since (from 1) after the join, and only the
// windows that reach back across the join count.
func (m *Meter) addHop(e float64, since int) {
	spans := func(w int) bool { return since < 0 || since < w }
	if m.hops < ringLen-1 {
		m.first[m.hops] = e
	}
	oldM := m.ring[(m.ringAt+ringLen-stepsM*subSteps)%ringLen]
	oldS := m.ring[m.ringAt]
	m.ring[m.ringAt] = e
	m.ringAt = (m.ringAt + 1) % ringLen
	m.hops++
	m.subIdx++
	if m.subIdx == subSteps {
		m.subIdx = 0
		// Recomputing the sliding sums once per step keeps the rounding
		// of the running add/subtract from accumulating over hours.
		m.sumM, m.sumS = m.windowSum(stepsM*subSteps), m.windowSum(ringLen)
		if m.onStep != nil && since < 0 {
			m.onStep(max(m.windowSum(subSteps), 0) / float64(m.step))
		}
	} else {
		m.sumM += e - oldM
		m.sumS += e - oldS
	}
	if m.hops >= stepsM*subSteps && spans(stepsM*subSteps) {
		eM := max(m.sumM, 0) / float64(stepsM*m.step)
		m.maxM = max(m.maxM, eM)
		if m.subIdx == 0 {
			if m.blocks != nil {
				m.blocks.add(eM)
			}
			if m.dialog != nil && m.inSpeech(m.offset+(m.hops/subSteps-stepsM/2)*int64(m.step)) {
				m.dialog.add(eM)
			}
		}
	}
	if m.hops >= ringLen && spans(ringLen) {
		eS := max(m.sumS, 0) / float64(stepsS*m.step)
		m.maxS = max(m.maxS, eS)
		if m.subIdx == 0 && m.short != nil {
			m.short.add(eS)
		}
	}
}

// ErrAppend means Meter.Append was given a meter that cannot continue
// the measurement.
var ErrAppend = errors.New("loudness: meters cannot be joined")

// Prime runs b through the meter's filters without measuring it: the
// frames just before the stream, so that a meter measuring the
// continuation of a programme (see Append) starts with the filter states
// one meter measuring the whole would have there. About half a second is
// plenty: the K-weighting's memory is a few milliseconds.
func (m *Meter) Prime(b audio.Buffer) error {
	if len(b) != m.format.Channels {
		return fmt.Errorf("%w: %d channels written to a %d-channel meter", audio.ErrFormatMismatch, len(b), m.format.Channels)
	}
	if m.tp != nil {
		return fmt.Errorf("%w: the true-peak interpolator cannot be primed", ErrAppend)
	}
	if !m.kweight || b.Frames() == 0 {
		return nil
	}
	for _, x := range b {
		if !(absMax(x) <= maxSample) {
			b = m.sanitize(b)
			break
		}
	}
	if m.kstereo != nil {
		energy2(&m.kf[0], &m.kf[1], b[0], b[1], m.kstereo)
		return nil
	}
	for c := range m.kf {
		m.kf[c].energy(b[c])
	}
	return nil
}

// Append adds to m the measurement of next, which measured the
// continuation of m's stream: from the frame after m's last, with
// Options.Offset at m's offset plus m's length, primed (see Prime) with
// the frames before. Both must have the same format and options, m's
// length must be a whole number of 100 ms steps, and neither may track
// the true peak. Afterwards m holds, to within rounding, what one meter
// measuring both streams in turn would hold, and may measure on; next is
// spent. Two meters can so measure the halves of a programme at once.
func (m *Meter) Append(next *Meter) error {
	switch {
	case next.format != m.format || next.mode != m.mode || next.kweight != m.kweight || len(next.weights) != len(m.weights):
		return fmt.Errorf("%w: other format or mode", ErrAppend)
	case m.tp != nil:
		return fmt.Errorf("%w: true peak", ErrAppend)
	case m.subIdx != 0 || m.pos != 0 || m.frames%int64(m.step) != 0:
		return fmt.Errorf("%w: the first ends inside a 100 ms step (%d frames)", ErrAppend, m.frames)
	case next.offset != m.offset+m.frames:
		return fmt.Errorf("%w: the second starts at frame %d, not %d", ErrAppend, next.offset, m.offset+m.frames)
	case (m.dialog == nil) != (next.dialog == nil):
		return fmt.Errorf("%w: speech ranges on one only", ErrAppend)
	}
	for c := range m.weights {
		if m.weights[c] != next.weights[c] {
			return fmt.Errorf("%w: other channel weights", ErrAppend)
		}
	}
	if m.kweight {
		// The windows across the join: m's last hops and next's first.
		k := int(min(next.hops, ringLen-1))
		for j := range k {
			m.addHop(next.first[j], j+1)
		}
		if next.hops > int64(k) {
			// Beyond them next's own sliding state is m's.
			m.ring, m.ringAt, m.sumM, m.sumS = next.ring, next.ringAt, next.sumM, next.sumS
		}
		m.hops += next.hops - int64(k)
		m.subIdx, m.pos, m.acc = next.subIdx, next.pos, next.acc
		copy(m.kf, next.kf)
		m.maxM, m.maxS = max(m.maxM, next.maxM), max(m.maxS, next.maxS)
		for _, h := range [][2]*histogram{{m.blocks, next.blocks}, {m.short, next.short}, {m.dialog, next.dialog}} {
			if h[0] != nil {
				h[0].merge(h[1])
			}
		}
	}
	for c := range m.peak {
		m.peak[c] = max(m.peak[c], next.peak[c])
	}
	m.rmsSum += next.rmsSum
	m.frames += next.frames
	return nil
}

// windowSum adds the last n hop energies.
func (m *Meter) windowSum(n int) float64 {
	var s float64
	for i := 1; i <= n; i++ {
		s += m.ring[(m.ringAt-i+ringLen)%ringLen]
	}
	return s
}

// inSpeech reports whether frame t lies in a speech range. Calls come with
// increasing t, so a cursor walks the ranges once.
func (m *Meter) inSpeech(t int64) bool {
	for m.spAt < len(m.speech) && m.speech[m.spAt][1] <= t {
		m.spAt++
	}
	return m.spAt < len(m.speech) && m.speech[m.spAt][0] <= t
}

// absMax returns the largest |x[i]|. Comparing the bit patterns of the
// absolute values as integers orders them like the floats (NaN aside) and
// avoids the NaN handling of the float max builtin.
func absMax(x []float64) float64 { return math.Float64frombits(absMaxBits(x)) }

// absMaxGoBits is the bit pattern of the largest |x[i]| (a NaN's above
// every number), by two integer maxima side by side.
// absMaxGoBits and sumSquares step through x by reslicing it, which
// leaves the compiler no index to check: bounds checks cost WebAssembly,
// where these loops run as they are, a fifth of its time.
func absMaxGoBits(x []float64) uint64 {
	var m0, m1 uint64
	for ; len(x) >= 2; x = x[2:] {
		a := math.Float64bits(x[0]) &^ (1 << 63)
		b := math.Float64bits(x[1]) &^ (1 << 63)
		if a > m0 {
			m0 = a
		}
		if b > m1 {
			m1 = b
		}
	}
	if len(x) > 0 {
		if a := math.Float64bits(x[0]) &^ (1 << 63); a > m0 {
			m0 = a
		}
	}
	return max(m0, m1)
}

func sumSquares(x []float64) float64 {
	var s0, s1 float64
	for ; len(x) >= 2; x = x[2:] {
		s0 += x[0] * x[0]
		s1 += x[1] * x[1]
	}
	if len(x) > 0 {
		s0 += x[0] * x[0]
	}
	return s0 + s1
}

// Momentary returns the momentary loudness of the last 400 ms in LUFS, or
// -Inf before 400 ms have been written.
func (m *Meter) Momentary() float64 {
	if !m.kweight || m.hops < stepsM*subSteps {
		return math.Inf(-1)
	}
	return energyToLUFS(max(m.windowSum(stepsM*subSteps), 0) / float64(stepsM*m.step))
}

// ShortTerm returns the short-term loudness of the last 3 s in LUFS, or
// -Inf before 3 s have been written.
func (m *Meter) ShortTerm() float64 {
	if !m.kweight || m.hops < ringLen {
		return math.Inf(-1)
	}
	return energyToLUFS(max(m.windowSum(ringLen), 0) / float64(stepsS*m.step))
}
