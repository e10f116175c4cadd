package live

import (
	"fmt"
	"io"
	"math"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp"
	"github.com/audiopost/audiopost/loudness"
)

// LevelerOptions configure the one-pass leveler and loudness control.
type LevelerOptions struct {
	// Strength scales the leveling: 1 brings every speaker to the common
	// level within about two seconds of speech, 0 leaves level
	// differences alone (the API's levelerstrength/100, up to 1.2).
	Strength float64
	// Normalize steers the programme toward TargetLUFS; without it only
	// the differences around the programme's own level are evened.
	Normalize  bool
	TargetLUFS float64
	// Lookahead is how far the gain sees ahead of the sample it scales;
	// 0 means DefaultLookahead. It adds to the latency.
	Lookahead float64
	// MaxGainDB bounds boost and cut; 0 means 20.
	MaxGainDB float64
	// DualMono measures a mono stream as two channels (+3 LU), as the
	// output's meter does.
	DualMono bool
}

// DefaultLookahead is the leveler's look-ahead in seconds: enough that a
// gain change decided at a hop boundary ramps in before the frames that
// caused it play, short enough to leave the latency budget to the
// denoiser's STFT.
const DefaultLookahead = 0.02

// The gain computer's constants. Levels are K-weighted (LUFS) and gated
// like BS.1770's integrated loudness, but over the recent past only.
const (
	// A hop counts as programme when the momentary loudness (400 ms)
	// ending at it is above absGate, the loudness of the last 100 ms no
	// more than relGate below the current speech level, and the hop's own
	// no more than hopGate below it; pauses, room tone and noise fall
	// below and freeze every estimate. (With the 400 ms window alone, the
	// first 400 ms of every pause counted as speech.)
	absGate = -55.0
	relGate = 20.0
	hopGate = 30.0
	// levWindow is the speech the level is measured over, in seconds of
	// programme (pauses excluded): the leveler follows a change of
	// speaker within about that much speech.
	levWindow = 2.0
	// quieterDB is how much quieter than the window's level its recent
	// half must be to count as a quieter speaker (with 4 dB, real
	// speakers 10 to 12 dB quieter were followed 0.4 LU later than with 3
	// on the tuning half).
	quieterDB = 3.0
	// refTau is the time constant, in seconds of programme, of the
	// programme's common level that the leveler evens toward.
	refTau = 15.0
	// The applied gain follows the computed one with these time constants.
	// Boosts wait for programme (a pause keeps its gain), and so can be
	// as quick as cuts: with 0.25 s, a host 12 dB under the guest before
	// was still coming up 5 s into the turn (tuning half: worst 1.57 LU
	// off the target 5 s after a jump, short-term spread 1.41 LU; with
	// 0.12 s, 1.27 and 1.32).
	cutTau   = 0.15
	boostTau = 0.12
	pauseTau = 0.03
	maxDip   = 2.0
	// The loudness control measures the output's gated loudness over the
	// last trimWindow seconds, every trimEvery seconds, and moves its trim
	// by the error over trimTau seconds, within +-maxTrim dB, applied
	// trimDelay seconds later so that the result never depends on how far
	// the nodes after the leveler read ahead.
	trimWindow = 30.0
	trimEvery  = 1.0
	trimTau    = 20.0
	maxTrim    = 6.0
	trimDelay  = 1.0
	// trimHeard is how much output above trimGate LUFS the trim waits
	// for.
	trimHeard = 10.0
	trimGate  = -70.0
	// A speaker who pauses between sentences is quieter in every 3 s
	// window than in the speech the level is measured on, and the
	// short-term loudness of a live show is what its listeners follow.
	// The gain therefore makes up for the share of the last pauseWindow
	// hops (the short-term window) that lay in pauses of pauseRun hops
	// or more (between sentences, not words), by what that share takes
	// from the window's loudness, up to maxPauseMakeup dB, following it
	// with pauseMakeupTau seconds of programme (and the loudness trim
	// leaves it alone: see Feedback). The pauses keep their
	// ratio to the speech: they get the speech's gain. Tuning half's
	// programme with its pausing codec2 voices (AUDIOPOST_LIVE_DENSITY
	// 0.6): worst 4.15 -> 3.66 LU off the target 5 s after a jump,
	// short-term spread 1.68 -> 1.59 LU; with runs of 200 or 300 ms
	// 3.80 and 3.67, up to 1.5 or 3 dB 3.75 and 3.67.
	pauseWindow    = loudness.ShortTermSteps * loudness.StepHops
	pauseRun       = 40
	maxPauseMakeup = 2.0
	pauseMakeupTau = 0.33
)

// Leveler is the causal leveler and loudness control of a live stream: a
// node whose gain at every frame is decided from the past and a short
// look-ahead, in one pass. It measures the K-weighted loudness of its
// input in 10 ms hops (a loudness.Meter's OnHop), keeps the gated loudness
// of the last two seconds of programme (speech level), and sets the gain
// that brings it to the target: Strength times the distance to the
// programme's slowly moving common level, plus the distance from that
// level to TargetLUFS. A slow trim from the output's own gated loudness
// (Feedback) absorbs what compression and limiting after it take away.
// Pauses freeze every estimate: the gain in a pause is the gain of the
// speech before it.
//
// Output frame i is input frame i times its gain (the look-ahead is
// compensated inside), and the result does not depend on block sizes.
type Leveler struct {
	src   audio.Source
	ch    int
	rate  int
	o     LevelerOptions
	meter *loudness.Meter

	ring [][]float64
	mask int
	scr  audio.Buffer
	view audio.Buffer

	lookahead // la: the look-ahead in frames

	// Hops: energy ring of the momentary window, hop count and the input
	// frame where the next hop ends.
	hopSum   [40]float64
	hopLen   [40]int
	hops     int64
	hopEnd   int64
	hopStart [loudness.StepHops + 1]int

	// Gated speech window: hop energies (sums) and lengths of the last
	// levWindow seconds of programme.
	win               []float64
	winLen            []int
	winFast           []float64 // hop energies of the last 100 ms
	recSum            float64   // the window's recent half, of winFast
	recFrames         int64
	winGain           []float64 // hop energy times the gain it got
	winG2             float64
	winAt, winN       int
	winSum            float64
	winFrames         int64
	lev, ref          float64 // dB; NaN until defined
	trim              float64
	gain              float64 // speech gain, dB
	dip               float64 // the pause's dip under it, dB
	maxBoost, maxCut  float64
	refA, cutA, boost float64
	pauseA            float64

	// Gains of the latest hops: (input frame where the hop ended, linear
	// gain from then on), a ring.
	gEnd  [256]int64
	gLin  [256]float64
	gHead int64 // hops recorded

	// Trim feedback: output step energies, pending trims.
	outSteps  []float64
	stepScr   []float64
	outAt     int
	outN      int
	outCount  int64
	stepsTrim int
	pending   []pendingTrim

	active bool
	frozen int64 // hops frozen (pause) so far

	// The programme flags of the last pauseWindow hops, a ring by hop,
	// and the gain that makes up for their pauses (dB).
	recent      [pauseWindow]bool
	pauseMakeup float64
	makeupA     float64
	// makeupPow is the pause makeup of each hop as a power ratio, a ring
	// by hop, which the trim's feedback takes back out of the output.
	makeupPow [512]float64

	// What the nodes after the leveler (compressor, limiter) take from
	// the speech: per hop, the energy the leveler sent (pred) and whether
	// it was speech; the output's energy of the same hops (Observe) over
	// the last levWindow of speech; and the resulting reduction in dB by
	// output hop, which the leveler uses reductionDelay hops later.
	pred      [512]float64
	predAct   [512]bool
	outHops   int64
	redOut    []float64
	redPred   []float64
	redAt     int
	redN      int
	redOutSum float64
	redPreSum float64
	reduction [512]float64
}

// reductionDelay is how many hops after the output measured it the
// leveler uses the reduction of the nodes after it: more than any
// read-ahead of those nodes (a 4096-frame read at 8 kHz is 52 hops), so
// that the output does not depend on block sizes.
const reductionDelay = 100

type pendingTrim struct {
	at   int64 // hop from which it applies
	trim float64
}

// NewLeveler returns src leveled and steered toward its loudness target.
func NewLeveler(src audio.Source, o LevelerOptions) (*Leveler, error) {
	f := src.Format()
	if err := f.Validate(); err != nil {
		return nil, err
	}
	switch {
	case !(o.Strength >= 0 && o.Strength <= 2):
		return nil, fmt.Errorf("%w: leveler strength %v outside 0-2", dsp.ErrInvalidParameter, o.Strength)
	case o.Normalize && !(o.TargetLUFS <= 0 && o.TargetLUFS >= -70):
		return nil, fmt.Errorf("%w: loudness target %v LUFS", dsp.ErrInvalidParameter, o.TargetLUFS)
	case !(o.Lookahead >= 0 && o.Lookahead <= 0.1):
		return nil, fmt.Errorf("%w: leveler look-ahead %v s outside 0-0.1", dsp.ErrInvalidParameter, o.Lookahead)
	case !(o.MaxGainDB >= 0 && o.MaxGainDB <= 40):
		return nil, fmt.Errorf("%w: leveler gain bound %v dB", dsp.ErrInvalidParameter, o.MaxGainDB)
	}
	if o.Lookahead == 0 {
		o.Lookahead = DefaultLookahead
	}
	if o.MaxGainDB == 0 {
		o.MaxGainDB = 20
	}
	l := &Leveler{src: src, ch: f.Channels, rate: f.SampleRate, o: o, lev: math.NaN(), ref: math.NaN()}
	l.la = int(math.Round(o.Lookahead * float64(f.SampleRate)))
	m, err := loudness.NewMeter(f, loudness.Options{Mode: loudness.ModeM, OnHop: l.onHop, DualMono: o.DualMono})
	if err != nil {
		return nil, err
	}
	l.meter = m
	for k := range l.hopStart {
		l.hopStart[k] = loudness.HopStart(f.SampleRate, k)
	}
	l.hopEnd = int64(l.hopStart[1])
	size := 1
	for size < l.la+levelerBlock+1 {
		size *= 2
	}
	l.mask = size - 1
	l.ring = make([][]float64, f.Channels)
	for c := range l.ring {
		l.ring[c] = make([]float64, size)
	}
	l.scr = audio.NewBuffer(f.Channels, levelerBlock)
	l.view = make(audio.Buffer, f.Channels)
	hopSec := float64(l.hopStart[loudness.StepHops]) / float64(loudness.StepHops) / float64(f.SampleRate)
	n := int(math.Round(levWindow / hopSec))
	l.win, l.winLen, l.winGain, l.winFast = make([]float64, n), make([]int, n), make([]float64, n), make([]float64, n)
	l.refA = 1 - math.Exp(-hopSec/refTau)
	l.cutA = 1 - math.Exp(-hopSec/cutTau)
	l.pauseA = 1 - math.Exp(-hopSec/pauseTau)
	l.boost = 1 - math.Exp(-hopSec/boostTau)
	l.makeupA = 1 - math.Exp(-hopSec/pauseMakeupTau)
	l.maxBoost, l.maxCut = o.MaxGainDB, o.MaxGainDB
	if o.Normalize {
		// The distance to the target comes on top of the leveling, up
		// to 20 dB either way: a live feed of real speech whose loudest
		// guest peaks at full scale has its host near -32 LUFS and a
		// guest 12 dB under the host near -44 LUFS, 28 dB under a -16
		// LUFS target (with 10 dB, the cap, held such a guest 2 LU low).
		l.maxBoost, l.maxCut = o.MaxGainDB+20, o.MaxGainDB+20
	}
	l.redOut, l.redPred = make([]float64, n), make([]float64, n)
	l.outSteps = make([]float64, int(trimWindow*10))
	l.stepScr = make([]float64, len(l.outSteps))
	l.stepsTrim = int(trimEvery * 10)
	l.gEnd[0], l.gLin[0] = 0, 1
	l.gHead = 1
	return l, nil
}

// levelerBlock is the most the leveler reads from upstream at once: a
// larger read would only hold frames back from the output.
const levelerBlock = 512

// Format implements audio.Source.
func (l *Leveler) Format() audio.Format { return l.src.Format() }

// Latency is the look-ahead in frames.
func (l *Leveler) Latency() int { return l.la }

// GainDB returns the gain applied at the latest hop in dB.
func (l *Leveler) GainDB() float64 { return l.gain + l.dip }

// LevelLUFS returns the speech level the leveler measures on its input
// (-Inf before any speech).
func (l *Leveler) LevelLUFS() float64 {
	if math.IsNaN(l.lev) {
		return math.Inf(-1)
	}
	return l.lev
}

// TrimDB returns the loudness control's correction from Feedback.
func (l *Leveler) TrimDB() float64 { return l.trim }

// Active reports whether the latest hop counted as programme (not pause).
func (l *Leveler) Active() bool { return l.active }

// Close closes the upstream source.
func (l *Leveler) Close() error {
	if c, ok := l.src.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Read implements audio.Source. It returns as soon as any frame is ready:
// a live input that delivers 10 ms at a time gets 10 ms out.
func (l *Leveler) Read(dst audio.Buffer) (int, error) {
	if len(dst) != l.ch {
		return 0, fmt.Errorf("%w: %d channels for a %d-channel stream", audio.ErrFormatMismatch, len(dst), l.ch)
	}
	n, err := l.ready(dst.Frames(), l.fill)
	if n == 0 {
		return 0, err
	}
	l.emit(dst, n)
	return n, nil
}

// fill reads the next frames from upstream into the delay line, measuring
// them.
func (l *Leveler) fill() {
	room := len(l.ring[0]) - int(l.in-l.out) - 1
	m, err := l.src.Read(l.scr.SliceInto(l.view, 0, min(levelerBlock, room)))
	if m > 0 {
		b := l.scr.SliceInto(l.view, 0, m)
		// The meter calls onHop as hops complete; it needs l.in at the
		// block's start to date them.
		_ = l.meter.Write(b)
		at := int(l.in) & l.mask
		for c := range b {
			k := copy(l.ring[c][at:], b[c])
			copy(l.ring[c], b[c][k:])
		}
		l.in += int64(m)
		return
	}
	l.ended(err)
}

// emit writes output frames [out, out+n) into dst, each times the gain
// interpolated between the hop gains decided by the time its look-ahead
// frame was read.
func (l *Leveler) emit(dst audio.Buffer, n int) {
	i := 0
	for i < n {
		j := l.out + int64(i)
		p := j + int64(l.la) + 1 // input frames seen when frame j may go out
		// The latest hop whose end is at or before p.
		k := l.gHead - 1
		for k > 0 && l.gEnd[k&255] > p {
			k--
		}
		g1 := l.gLin[k&255]
		g0 := g1
		span := int64(1)
		if k > 0 {
			g0 = l.gLin[(k-1)&255]
			span = l.gEnd[k&255] - l.gEnd[(k-1)&255]
		}
		// Frames until the next hop's gain takes over (or all of them).
		run := int64(n - i)
		if k+1 < l.gHead {
			run = min(run, l.gEnd[(k+1)&255]-p)
		}
		run = max(run, 1)
		d := p - l.gEnd[k&255]
		for c := range dst {
			ring := l.ring[c]
			o := dst[c][i : i+int(run)]
			for f := range o {
				t := float64(d+int64(f)) / float64(span)
				g := g1
				if t < 1 {
					g = g0 + (g1-g0)*t
				}
				o[f] = ring[int(j+int64(f))&l.mask] * g
			}
		}
		i += int(run)
	}
	l.out += int64(n)
}

// onHop is the input meter's callback at the end of every 10 ms hop.
func (l *Leveler) onHop(sum float64) {
	k := int(l.hops % loudness.StepHops)
	frames := l.hopStart[k+1] - l.hopStart[k]
	slot := int(l.hops % 40)
	l.hopSum[slot], l.hopLen[slot] = sum, frames
	l.hops++
	end := l.hopEnd
	l.hopEnd += int64(l.hopStart[(k+1)%loudness.StepHops+1] - l.hopStart[(k+1)%loudness.StepHops])

	var ms, ss float64
	var mf, sf int
	for k := range l.hopSum {
		ms += l.hopSum[k]
		mf += l.hopLen[k]
		if age := (slot - k + 40) % 40; age < 10 {
			ss += l.hopSum[k]
			sf += l.hopLen[k]
		}
	}
	mom := loudness.EnergyLUFS(ms / float64(mf))
	short := loudness.EnergyLUFS(ss / float64(sf))
	own := loudness.EnergyLUFS(sum / float64(frames))
	l.active = mom > absGate && (math.IsNaN(l.lev) || short > l.lev-relGate && own > l.lev-hopGate)
	if l.active {
		// The level is the mean over the speech of the momentary (400 ms)
		// loudness, as a loudness meter's windows see it: the hop's own
		// energy would leave out the short gaps between syllables, and real
		// speech, which has them, would be measured louder than its
		// short-term and integrated loudness (3.5 dB for a reader of
		// syllables) and leveled under the target. The quieter speaker's
		// test below uses the last 100 ms instead: the 400 ms window
		// carries the last speaker into the next one's first second, and
		// on real turns held a guest 11 dB quieter 2 LU low 5 s into the
		// turn (the tuning half).
		sum, fast := ms/float64(mf)*float64(frames), ss/float64(sf)*float64(frames)
		g2 := sum * math.Pow(10, (l.gain+l.dip)/10)
		if l.winN == len(l.win) {
			l.winSum -= l.win[l.winAt]
			l.winG2 -= l.winGain[l.winAt]
			l.winFrames -= int64(l.winLen[l.winAt])
		} else {
			l.winN++
		}
		l.win[l.winAt], l.winLen[l.winAt], l.winGain[l.winAt], l.winFast[l.winAt] = sum, frames, g2, fast
		l.winG2 += g2
		l.winSum += sum
		l.winFrames += int64(frames)
		// The recent half of the window.
		half := len(l.win) / 2
		if l.winN > half {
			old := (l.winAt - half + len(l.win)) % len(l.win)
			l.recSum -= l.winFast[old]
			l.recFrames -= int64(l.winLen[old])
		}
		l.recSum += fast
		l.recFrames += int64(frames)
		l.winAt = (l.winAt + 1) % len(l.win)
		if l.winN >= 40 { // 400 ms of programme before the first estimate
			l.lev = loudness.EnergyLUFS(max(l.winSum, 0) / float64(l.winFrames))
			// The loud past dominates an energy mean until it has left the
			// window: when the last second is clearly quieter, a quieter
			// speaker has taken over, and the last second is the level.
			if rec := loudness.EnergyLUFS(max(l.recSum, 0) / float64(l.recFrames)); l.winN > half && rec < l.lev-quieterDB {
				l.lev = rec
			}
			if math.IsNaN(l.ref) {
				l.ref = l.lev
			}
			l.ref += (l.lev - l.ref) * l.refA
		}
	} else {
		l.frozen++
	}
	l.recent[(l.hops-1)%pauseWindow] = l.active
	if l.active && l.hops >= pauseWindow {
		l.pauseMakeup += (l.pauseShareMakeup() - l.pauseMakeup) * l.makeupA
	}
	l.makeupPow[(l.hops-1)&511] = math.Pow(10, l.pauseMakeup/10)
	for len(l.pending) > 0 && l.pending[0].at <= l.hops {
		l.trim = l.pending[0].trim
		l.pending = append(l.pending[:0], l.pending[1:]...)
	}
	want := l.gain
	if !math.IsNaN(l.lev) {
		lv := l.o.Strength * (l.ref - l.lev)
		lv = max(-l.o.MaxGainDB, min(l.o.MaxGainDB, lv))
		want = lv
		if l.o.Normalize {
			want += l.o.TargetLUFS - l.ref + l.trim + l.pauseMakeup
		}
		want = max(-l.maxCut, min(l.maxBoost, want))
	}
	switch {
	case want < l.gain:
		l.gain += (want - l.gain) * l.cutA
	case l.active:
		// Boosts wait for programme: a pause keeps the gain it had.
		l.gain += (want - l.gain) * l.boost
	}
	// In a pause the gain dips to what the speech before it got on
	// average (by energy), less what the compressor and limiter after the
	// leveler took from that speech: the level falls toward the end of
	// phrases and the gain rises with it, and the limiter lowers the
	// speech's peaks but not the pause; either would raise the pause
	// against its neighbours. The dip is quick (inaudible on a pause) and
	// so is its return when the speech goes on.
	dip := 0.0
	if !l.active && l.winSum > 0 {
		// The rise at the phrase's end counts up to maxDip: more is the
		// leveler following a new, quieter speaker, whose pauses (and
		// quieter syllables) must not be held at the last speaker's gain.
		dip = max(-maxDip, min(0, 10*math.Log10(l.winG2/l.winSum)-l.gain))
		if k := l.hops - 1 - reductionDelay; k >= 0 && k < l.outHops && k > l.outHops-512 {
			dip += l.reduction[k&511]
		}
	}
	l.dip += (dip - l.dip) * l.pauseA
	slot = int(l.gHead & 255)
	l.gEnd[slot], l.gLin[slot] = end, dsp.DBToGain(l.gain+l.dip)
	l.gHead++
	h := (l.hops - 1) & 511
	l.pred[h], l.predAct[h] = sum*l.gLin[slot]*l.gLin[slot], l.active
}

// pauseShareMakeup returns what the pauses of pauseRun hops or more
// within the last pauseWindow hops take from the window's loudness, in
// dB (at most maxPauseMakeup): the gain that makes up for them.
func (l *Leveler) pauseShareMakeup() float64 {
	run, paused := 0, 0
	at := int(l.hops % pauseWindow) // the oldest hop
	for j := range pauseWindow {
		if !l.recent[(at+j)%pauseWindow] {
			run++
			continue
		}
		if run >= pauseRun {
			paused += run
		}
		run = 0
	}
	if run >= pauseRun {
		paused += run
	}
	return min(maxPauseMakeup, -10*math.Log10(1-float64(paused)/pauseWindow))
}

// Observe gives the leveler the K-weighted sum of squares of the next
// 10 ms hop of the final output (a loudness.Meter's OnHop, with the
// leveler's DualMono, on the stream after the nodes that follow it), so
// that it knows how much those nodes lower the speech (see the pause rule
// in the package documentation).
func (l *Leveler) Observe(sum float64) {
	k := l.outHops
	l.outHops++
	red := 0.0
	if k < l.hops && k > l.hops-512 && l.predAct[k&511] {
		if l.redN == len(l.redOut) {
			l.redOutSum -= l.redOut[l.redAt]
			l.redPreSum -= l.redPred[l.redAt]
		} else {
			l.redN++
		}
		l.redOut[l.redAt], l.redPred[l.redAt] = sum, l.pred[k&511]
		l.redOutSum += sum
		l.redPreSum += l.pred[k&511]
		l.redAt = (l.redAt + 1) % len(l.redOut)
	}
	if l.redOutSum > 0 && l.redPreSum > 0 {
		// Whole hundredths of a dB, as the trim: the sums round with the
		// block sizes.
		red = math.Round(min(0, 10*math.Log10(l.redOutSum/l.redPreSum))*100) / 100
	}
	l.reduction[k&511] = red
}

// Feedback gives the loudness control the K-weighted mean square of the
// next 100 ms step of the final output (a loudness.Meter's OnStep on the
// stream after the nodes that follow the leveler): every second it moves
// the trim toward the target by the distance of the gated loudness of the
// last 30 seconds, slowly (20 s), within +-6 dB. A trim decided at output
// step k applies from the leveler's hop (k+1)*10 + 100 on: later than any
// read-ahead, so the output does not depend on block sizes.
func (l *Leveler) Feedback(energy float64) {
	if !l.o.Normalize {
		return
	}
	// The trim corrects what the nodes after the leveler take, not the
	// leveler's own makeup for pauses: seen, that makeup lowered every
	// speaker by the pausing ones' share (real and synthetic turns: the
	// speakers 5 s into their turns up to 0.4 LU lower).
	var mk float64
	for h := l.outCount * loudness.StepHops; h < (l.outCount+1)*loudness.StepHops; h++ {
		mk += l.makeupPow[h&511]
	}
	if mk > 0 {
		energy /= mk / loudness.StepHops
	}
	l.outSteps[l.outAt] = energy
	l.outAt = (l.outAt + 1) % len(l.outSteps)
	l.outN = min(l.outN+1, len(l.outSteps))
	l.outCount++
	if l.outCount%int64(l.stepsTrim) != 0 || l.outN < 2*l.stepsTrim {
		return
	}
	steps := l.stepScr[:0]
	start := (l.outAt - l.outN + len(l.outSteps)) % len(l.outSteps)
	heard := 0
	for i := 0; i < l.outN; i++ {
		e := l.outSteps[(start+i)%len(l.outSteps)]
		steps = append(steps, e)
		if loudness.EnergyLUFS(e) > trimGate {
			heard++
		}
	}
	// The trim corrects what the nodes after the leveler take, a slow
	// bias; until trimHeard seconds of programme have played, the
	// output's loudness is the leveler's own start (a stream that opens
	// on silence and then rises), which the trim would take for a bias
	// and follow for a minute after (+2 dB on a tone that followed 3 s
	// of silence through serve).
	if heard < int(trimHeard*10) {
		return
	}
	il := loudness.IntegratedFromSteps(steps)
	if !loudness.Defined(il) {
		return
	}
	next := l.trim
	if len(l.pending) > 0 {
		next = l.pending[len(l.pending)-1].trim
	}
	next += (l.o.TargetLUFS - il) * trimEvery / trimTau
	// Whole thousandths of a dB: the meter's sums round differently with
	// the block sizes it is written in, and the output must not.
	next = math.Round(max(-maxTrim, min(maxTrim, next))*1000) / 1000
	at := l.outCount*loudness.StepHops + int64(trimDelay*10*loudness.StepHops)
	l.pending = append(l.pending, pendingTrim{at: at, trim: next})
}
