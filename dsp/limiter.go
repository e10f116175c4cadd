package dsp

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/audiopost/audiopost/audio"
)

// The true-peak interpolator oversamples 4x like ITU-R BS.1770-5 Annex 2
// (a 48-tap polyphase FIR, 12 taps per phase), but with a Kaiser-windowed
// sinc whose phase 0 is the input sample itself, so only the three
// in-between phases cost multiplications. tpPhases[p] interpolates the
// point (p+1)/4 of the way from x[k-6] to x[k-5] from x[k-11..k].
const (
	tpTaps = 12
	tpBeta = 6.0 // Kaiser window shape: passband flat to about 0.8 Nyquist
)

var tpPhases = func() (ph [3][tpTaps]float64) {
	for p := range ph {
		mu := float64(p+1) / 4
		var sum float64
		for j := 0; j < tpTaps; j++ {
			// Distance from the interpolated point to tap j (x[k-11+j]).
			d := float64(j-6) + 1 - mu
			w := kaiser(d/float64(tpTaps/2), tpBeta)
			ph[p][j] = sinc(d) * w
			sum += ph[p][j]
		}
		for j := range ph[p] {
			ph[p][j] /= sum // unity gain at DC
		}
	}
	return
}()

func sinc(x float64) float64 {
	if x == 0 {
		return 1
	}
	return math.Sin(math.Pi*x) / (math.Pi * x)
}

func kaiser(x, beta float64) float64 {
	if x <= -1 || x >= 1 {
		return 0
	}
	return besselI0(beta*math.Sqrt(1-x*x)) / besselI0(beta)
}

func besselI0(x float64) float64 {
	s, t := 1.0, 1.0
	for k := 1; k < 40; k++ {
		t *= (x / (2 * float64(k))) * (x / (2 * float64(k)))
		s += t
	}
	return s
}

// tpGainBound is the largest sum of absolute coefficients of any phase: an
// interpolated value can never exceed it times the largest input sample in
// the filter's span, which lets quiet stretches skip the interpolation.
var tpGainBound = func() float64 {
	b := 1.0
	for _, ph := range tpPhases {
		var s float64
		for _, c := range ph {
			s += math.Abs(c)
		}
		b = math.Max(b, s)
	}
	return b
}()

// tpCentre bounds an interpolated value by its two central taps and the
// rest: |y| <= tpCentre[0]*|x[k-6]| + tpCentre[1]*|x[k-5]| +
// tpCentre[2]*max|x| over the span. Away from the ceiling this skips the
// interpolation frame by frame without changing any result.
var tpCentre = func() (c [3]float64) {
	for _, ph := range tpPhases {
		var rest float64
		for j, v := range ph {
			if j != tpTaps/2-1 && j != tpTaps/2 {
				rest += math.Abs(v)
			}
		}
		c[0] = math.Max(c[0], math.Abs(ph[tpTaps/2-1]))
		c[1] = math.Max(c[1], math.Abs(ph[tpTaps/2]))
		c[2] = math.Max(c[2], rest)
	}
	return c
}()

// skipSpan is the granularity, in frames, at which quiet stretches skip
// the interpolation.
const skipSpan = 64

// LimiterRelease is the time constant, in seconds, with which the
// limiter's gain recovers after a peak.
const LimiterRelease = 0.08

// LimiterMargin is how far below the requested ceiling, in dB, the limiter
// aims, to absorb the difference between its interpolator and other true-
// peak meters (which may oversample differently).
const LimiterMargin = 0.1

// Limiter is a lookahead true-peak limiter. It estimates the true peak of
// every frame with a 4x polyphase interpolator, derives the gain
// each frame needs to stay under the ceiling, holds the minimum of that
// over the lookahead and the interpolator's span, and smooths it with a
// moving average (attack) whose every term is already low enough, so the
// output is guaranteed below the ceiling; the gain then recovers with a
// one-pole release. The lookahead delay is compensated inside: output
// frame i is input frame i (times the gain), and the output has exactly as
// many frames as the input.
type Limiter struct {
	src     audio.Source
	ch      int
	ceiling float64 // linear, margin applied

	attack int // L: moving-average length
	delay  int // D = L + tpTaps: output lags input by this inside
	rel    float64

	// Input delay line per channel (power-of-two ring).
	xring [][]float64
	mask  int
	// Interpolator history per channel: 2*tpTaps, every sample written
	// twice so a contiguous window always exists.
	hist [][]float64
	hpos int

	// Monotonic deque of (index, required gain) for the sliding minimum.
	dqIdx  []int64
	dqVal  []float64
	dqMask int
	dqHead int
	dqLen  int

	// Moving average of the held gain.
	avg    []float64
	avgPos int
	avgSum float64

	g float64 // released gain

	in       int64 // input frames pushed (real and padding)
	out      int64 // output frames emitted
	total    int64 // real input frames, valid once eof
	eof      bool
	err      error
	scr      audio.Buffer
	scrN     int
	scrPos   int
	skip     []bool     // per skipSpan stretch of the scratch: cannot reach the ceiling
	spanPeak []float64  // per stretch: largest sample magnitude with the one before
	spanBits [][]uint64 // per channel and whole stretch: magnitudeBits
	minG     float64
	noSkip   bool      // tests: interpolate every frame
	noSteady bool      // tests: every frame through push and emit
	need     []float64 // steady: per frame required gain, then gain
	ext      []float64 // steady: one channel's input with the 11 frames before
}

// limiterBlock is the scratch block the limiter reads upstream in.
const limiterBlock = 1024

// NewLimiter returns src limited to a true peak of ceilingDB dBTP.
func NewLimiter(src audio.Source, ceilingDB float64) (*Limiter, error) {
	if math.IsNaN(ceilingDB) || math.IsInf(ceilingDB, 0) {
		return nil, fmt.Errorf("%w: limiter ceiling %v dBTP", ErrInvalidParameter, ceilingDB)
	}
	f := src.Format()
	fs := float64(f.SampleRate)
	l := &Limiter{src: src, ch: f.Channels, ceiling: DBToGain(ceilingDB - LimiterMargin), g: 1, minG: 1}
	l.attack = max(1, int(math.Round(0.002*fs)))
	l.delay = l.attack + tpTaps
	l.rel = 1 - math.Exp(-1/(LimiterRelease*fs))
	// The delay line holds a whole scratch block beyond the delay, so that
	// steady can write a block's input before it reads its output.
	size := 1
	for size < l.delay+tpTaps+2+limiterBlock {
		size *= 2
	}
	l.mask = size - 1
	l.xring = make([][]float64, f.Channels)
	l.hist = make([][]float64, f.Channels)
	for c := range l.xring {
		l.xring[c] = make([]float64, size)
		l.hist[c] = make([]float64, 2*tpTaps)
	}
	w := l.attack + 2*tpTaps + 1
	dq := 1
	for dq < w+1 {
		dq *= 2
	}
	l.dqIdx = make([]int64, dq)
	l.dqVal = make([]float64, dq)
	l.dqMask = dq - 1
	l.avg = make([]float64, l.attack)
	for i := range l.avg {
		l.avg[i] = 1
	}
	l.avgSum = float64(l.attack)
	l.scr = audio.NewBuffer(f.Channels, limiterBlock)
	l.skip = make([]bool, limiterBlock/skipSpan)
	l.spanPeak = make([]float64, limiterBlock/skipSpan)
	l.spanBits = make([][]uint64, f.Channels)
	for c := range l.spanBits {
		l.spanBits[c] = make([]uint64, limiterBlock/skipSpan)
	}
	l.need = make([]float64, limiterBlock)
	l.ext = make([]float64, tpTaps-1+limiterBlock)
	return l, nil
}

// Format implements audio.Source.
func (l *Limiter) Format() audio.Format { return l.src.Format() }

// MaxReductionDB returns the deepest gain reduction so far (<= 0).
func (l *Limiter) MaxReductionDB() float64 { return GainToDB(l.minG) }

// GainDB returns the gain applied to the latest output frame (<= 0).
func (l *Limiter) GainDB() float64 { return GainToDB(l.g) }

// Latency is the look-ahead the limiter compensates inside, in frames:
// how far it reads ahead of what it returns.
func (l *Limiter) Latency() int { return l.delay }

// Read implements audio.Source.
func (l *Limiter) Read(dst audio.Buffer) (int, error) {
	if err := checkShape(dst, l.ch); err != nil {
		return 0, err
	}
	want := dst.Frames()
	n := 0
	for n < want {
		if l.eof && l.out >= l.total {
			break
		}
		if l.scrPos == l.scrN && !l.eof {
			if l.err != nil {
				break
			}
			if err := l.fill(); err != nil {
				l.err = err
				break
			}
			continue
		}
		if l.scrPos < l.scrN && l.in >= int64(l.delay) && !l.noSteady {
			// Steady state: every input frame releases one output frame.
			cnt := min(l.scrN-l.scrPos, want-n)
			l.steady(dst, n, cnt)
			n += cnt
			continue
		}
		var frame bool
		if l.scrPos < l.scrN {
			frame = l.push(l.scr, l.scrPos, false)
			l.scrPos++
		} else {
			frame = l.push(nil, 0, true) // padding after EOF flushes the delay
		}
		if frame {
			l.emit(dst, n)
			n++
		}
	}
	if n > 0 {
		return n, nil
	}
	if l.err != nil {
		return 0, l.err
	}
	if want == 0 && !(l.eof && l.out >= l.total) {
		return 0, nil
	}
	return 0, io.EOF
}

// fill reads the next chunk from upstream into the scratch buffer.
func (l *Limiter) fill() error {
	m, err := l.src.Read(l.scr)
	if m > 0 {
		l.scrN, l.scrPos = m, 0
		// Can anything in a stretch (with the interpolator's history)
		// reach the ceiling? If not, every required gain there is exactly
		// 1 and the interpolation is skipped: the result is the same.
		prev := 0.0
		for c := range l.hist {
			for _, v := range l.hist[c][:tpTaps] {
				prev = math.Max(prev, math.Abs(v))
			}
		}
		whole := m / skipSpan
		for c := range l.scr {
			spanMax(l.scr[c][:whole*skipSpan], l.spanBits[c][:whole])
		}
		for j := 0; j*skipSpan < m; j++ {
			var pk uint64
			for c := range l.scr {
				if j < whole {
					pk = max(pk, l.spanBits[c][j])
				} else {
					pk = max(pk, magnitudeBits(l.scr[c][j*skipSpan:m]))
				}
			}
			peak := math.Float64frombits(pk)
			l.skip[j] = math.Max(peak, prev)*tpGainBound < l.ceiling
			l.spanPeak[j] = math.Max(peak, prev)
			prev = peak
		}
		return nil
	}
	if err == nil {
		return fmt.Errorf("%w: upstream returned no frames and no error", audio.ErrMalformed)
	}
	if errors.Is(err, io.EOF) {
		l.eof = true
		l.total = l.in
		l.scrN, l.scrPos = 0, 0
		return nil
	}
	return err
}

// push feeds input frame l.in and reports whether an output frame is ready.
func (l *Limiter) push(b audio.Buffer, i int, pad bool) bool {
	k := l.in
	slot := int(k) & l.mask
	h := l.hpos
	need := 1.0
	peak := 0.0
	for c := 0; c < l.ch; c++ {
		v := 0.0
		if !pad {
			v = b[c][i]
		}
		l.xring[c][slot] = v
		hc := l.hist[c]
		hc[h] = v
		hc[h+tpTaps] = v
		peak = absMax(peak, v)
		w := (*[tpTaps]float64)(hc[h+1 : h+1+tpTaps]) // oldest .. newest
		if pad || l.noSkip || (!l.skip[i/skipSpan] &&
			tpCentre[0]*math.Abs(w[tpTaps/2-1])+tpCentre[1]*math.Abs(w[tpTaps/2])+tpCentre[2]*l.spanPeak[i/skipSpan] >= l.ceiling) {
			var s0, s1, s2 float64
			for j := 0; j < tpTaps; j++ {
				s0 += tpPhases[0][j] * w[j]
				s1 += tpPhases[1][j] * w[j]
				s2 += tpPhases[2][j] * w[j]
			}
			peak = absMax(absMax(absMax(peak, s0), s1), s2)
		}
	}
	if peak > l.ceiling {
		need = l.ceiling / peak
	}
	l.hpos = (h + 1) % tpTaps
	// Sliding minimum over the window [k-W+1, k].
	for l.dqLen > 0 && l.dqVal[(l.dqHead+l.dqLen-1)&l.dqMask] >= need {
		l.dqLen--
	}
	l.dqIdx[(l.dqHead+l.dqLen)&l.dqMask] = k
	l.dqVal[(l.dqHead+l.dqLen)&l.dqMask] = need
	l.dqLen++
	w := int64(l.attack + 2*tpTaps + 1)
	for l.dqIdx[l.dqHead] <= k-w {
		l.dqHead = (l.dqHead + 1) & l.dqMask
		l.dqLen--
	}
	held := l.dqVal[l.dqHead]
	l.avgSum += held - l.avg[l.avgPos]
	l.avg[l.avgPos] = held
	l.avgPos++
	if l.avgPos == l.attack {
		l.avgPos = 0
		// Re-add from scratch once per cycle so rounding cannot build up
		// (and the gain returns to exactly 1).
		var s float64
		for _, v := range l.avg {
			s += v
		}
		l.avgSum = s
	}
	l.in++
	return k >= int64(l.delay)
}

// emit writes output frame l.out = l.in-1-delay into dst at index i.
func (l *Limiter) emit(dst audio.Buffer, i int) {
	a := l.avgSum / float64(l.attack)
	g := l.g + (1-l.g)*l.rel
	if g > 1-1e-7 {
		g = 1 // -140 dB from unity: end the release so quiet parts pass bit-exact
	}
	if a < g {
		g = a
	}
	l.g = g
	if g < l.minG {
		l.minG = g
	}
	slot := int(l.out) & l.mask
	for c := range dst {
		dst[c][i] = l.xring[c][slot] * g
	}
	l.out++
}

// magnitudeBits returns the bit pattern of the largest |x[i]|: the
// patterns of magnitudes order as integers like the floats (a NaN above
// all), and two integer maxima side by side run several times faster than
// the float max builtin, whose NaN handling lengthens the loop-carried
// chain.
func magnitudeBits(x []float64) uint64 {
	var m0, m1 uint64
	i := 0
	for ; i+1 < len(x); i += 2 {
		m0 = max(m0, math.Float64bits(x[i])&^(1<<63))
		m1 = max(m1, math.Float64bits(x[i+1])&^(1<<63))
	}
	if i < len(x) {
		m0 = max(m0, math.Float64bits(x[i])&^(1<<63))
	}
	return max(m0, m1)
}

// spanMaxGo sets out[j] to the magnitudeBits of the j-th stretch of
// skipSpan values of x. spanMax is spanMaxGo, or a kernel that computes
// the same values.
func spanMaxGo(x []float64, out []uint64) {
	for j := range out {
		out[j] = magnitudeBits(x[j*skipSpan : (j+1)*skipSpan])
	}
}

// absMax returns max(a, |v|): the builtin max and math.Abs compile to
// branchless instructions, which matters on noisy signals where a branch
// would be mispredicted half the time.
func absMax(a, v float64) float64 { return maxPos(a, math.Abs(v)) }

// scaleGo sets d[i] = x[i] * g[i]. scale is scaleGo, or a kernel that
// computes the same values.
func scaleGo(d, x, g []float64) {
	x, g = x[:len(d)], g[:len(d)]
	for i := range d {
		d[i] = x[i] * g[i]
	}
}

// peakFramesGo sets need[f] to the gain-limiting peak of frame f: |in[f]|
// (merged with need[f] when merge: the largest over the channels), and
// where the frame may reach the ceiling (always with noSkip), the three
// interpolated values of its window ext[f : f+tpTaps]. sp bounds the
// rest of the window. peakFrames is peakFramesGo, or a kernel that
// computes the same values.
func peakFramesGo(in, ext, need []float64, sp, ceiling float64, noSkip, merge bool) {
	for f := range need {
		p := math.Abs(in[f])
		if merge {
			p = maxPos(need[f], p)
		}
		win := (*[tpTaps]float64)(ext[f : f+tpTaps])
		if noSkip || tpCentre[0]*math.Abs(win[tpTaps/2-1])+tpCentre[1]*math.Abs(win[tpTaps/2])+sp >= ceiling {
			var s0, s1, s2 float64
			for j := 0; j < tpTaps; j++ {
				s0 += tpPhases[0][j] * win[j]
				s1 += tpPhases[1][j] * win[j]
				s2 += tpPhases[2][j] * win[j]
			}
			p = maxPos(maxPos(maxPos(p, math.Abs(s0)), math.Abs(s1)), math.Abs(s2))
		}
		need[f] = p
	}
}

// needGainGo sets each need to the gain it requires under the ceiling:
// ceiling/p above the ceiling, else 1 (ceiling/ceiling, exactly), and 1
// for NaN, without a branch on the signal. needGain is needGainGo, or a
// kernel that computes the same values.
func needGainGo(need []float64, ceiling float64) {
	for f, p := range need {
		q := ceiling / maxPos(p, ceiling)
		if q != q {
			q = 1
		}
		need[f] = q
	}
}

// steady is push followed by emit for cnt frames (at most the scratch
// buffer) from the scratch buffer into dst[.][n:]. It computes exactly
// what push and emit compute, frame by frame, but in three loops over the
// block: the gain each frame requires (per channel, from a contiguous
// copy of the interpolator's window), the gain curve (sliding minimum,
// moving average, release: the one recursion), and the output from the
// delay line. The delay line is long enough that the block's input never
// overwrites the output it is about to read.
func (l *Limiter) steady(dst audio.Buffer, n, cnt int) {
	i0 := l.scrPos
	k0 := l.in
	h0 := l.hpos
	mask := l.mask
	ceiling := l.ceiling
	need := l.need[:cnt]
	for c := 0; c < l.ch; c++ {
		in := l.scr[c][i0 : i0+cnt]
		hc := l.hist[c]
		// ext[f : f+tpTaps] is the interpolator's window of frame f.
		ext := l.ext[:tpTaps-1+cnt]
		copy(ext, hc[h0+1:h0+tpTaps])
		copy(ext[tpTaps-1:], in)
		for f0 := 0; f0 < cnt; {
			span := (i0 + f0) / skipSpan
			f1 := min(cnt, (span+1)*skipSpan-i0)
			check := !l.skip[span] || l.noSkip
			if !check {
				// Nothing in the stretch reaches the ceiling: every frame
				// requires unity.
				if c == 0 {
					for f := f0; f < f1; f++ {
						need[f] = 1
					}
				}
				f0 = f1
				continue
			}
			sp := tpCentre[2] * l.spanPeak[span]
			peakFrames(in[f0:f1], ext[f0:f1+tpTaps-1], need[f0:f1], sp, ceiling, l.noSkip, c > 0)
			f0 = f1
		}
		// The delay line and the history as push leaves them.
		ring := l.xring[c]
		at := int(k0) & mask
		m := copy(ring[at:], in)
		copy(ring, in[m:])
		for f := max(0, cnt-tpTaps); f < cnt; f++ {
			h := (h0 + f) % tpTaps
			hc[h] = in[f]
			hc[h+tpTaps] = in[f]
		}
	}
	// The required gains of the stretches that were checked: ceiling/p
	// above the ceiling, else 1 (ceiling/ceiling, exactly), and 1 for NaN,
	// without a branch on the signal.
	for f0 := 0; f0 < cnt; {
		span := (i0 + f0) / skipSpan
		f1 := min(cnt, (span+1)*skipSpan-i0)
		if !l.skip[span] || l.noSkip {
			needGain(need[f0:f1], ceiling)
		}
		f0 = f1
	}

	// The gain curve; need becomes the gain of each output frame.
	k := k0
	g, minG := l.g, l.minG
	avgSum, avgPos := l.avgSum, l.avgPos
	dqHead, dqLen := l.dqHead, l.dqLen
	dqMask := l.dqMask
	dqIdx, dqVal, avg := l.dqIdx, l.dqVal, l.avg
	attack := l.attack
	fa := float64(attack)
	rel := l.rel
	w := int64(attack + 2*tpTaps + 1)
	unity := false // avg is known to hold only ones
	for f0 := 0; f0 < cnt; {
		span := (i0 + f0) / skipSpan
		f1 := min(cnt, (span+1)*skipSpan-i0)
		if l.skip[span] && !l.noSkip && g == 1 && dqLen == 1 && dqVal[dqHead] == 1 && avgSum == fa {
			if !unity {
				unity = true
				for _, v := range avg {
					unity = unity && v == 1
				}
			}
			if unity {
				// Every frame of the stretch requires unity and the gain
				// is at unity: the loop below would pop the deque's one
				// entry and push the frame's, add 1-1 to the sum (and
				// re-add ones to attack), and keep the gain at 1.
				m := f1 - f0
				k += int64(m)
				dqIdx[dqHead] = k - 1
				avgPos = (avgPos + m) % attack
				f0 = f1 // need is 1 there already
				continue
			}
		}
		unity = false
		for f := f0; f < f1; f++ {
			nd := need[f]
			for dqLen > 0 && dqVal[(dqHead+dqLen-1)&dqMask] >= nd {
				dqLen--
			}
			j := (dqHead + dqLen) & dqMask
			dqIdx[j] = k
			dqVal[j] = nd
			dqLen++
			for dqIdx[dqHead] <= k-w {
				dqHead = (dqHead + 1) & dqMask
				dqLen--
			}
			held := dqVal[dqHead]
			avgSum += held - avg[avgPos]
			avg[avgPos] = held
			avgPos++
			if avgPos == attack {
				avgPos = 0
				var s float64
				for _, v := range avg {
					s += v
				}
				avgSum = s
			}
			k++
			a := avgSum / fa
			// At unity the release computes 1 + 0*rel: 1.
			gg := 1.0
			if g != 1 {
				gg = g + (1-g)*rel
				if gg > 1-1e-7 {
					gg = 1
				}
			}
			if a < gg {
				gg = a
			}
			g = gg
			if g < minG {
				minG = g
			}
			need[f] = g
		}
		f0 = f1
	}

	from := int(l.out) & mask
	for c := range dst {
		ring := l.xring[c]
		d := dst[c][n : n+cnt]
		// The ring in at most two contiguous runs.
		m := min(cnt, len(ring)-from)
		scale(d[:m], ring[from:from+m], need[:m])
		scale(d[m:], ring[:cnt-m], need[m:])
	}
	l.scrPos += cnt
	l.in, l.out, l.hpos, l.g, l.minG = k, l.out+int64(cnt), (h0+cnt)%tpTaps, g, minG
	l.avgSum, l.avgPos, l.dqHead, l.dqLen = avgSum, avgPos, dqHead, dqLen
}
