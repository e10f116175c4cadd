package loudness

import "math"

// tpTaps is the number of taps per polyphase branch of the true-peak
// interpolator: 12 per phase (48 for 4x) as in the BS.1770 Annex 2 example.
const tpTaps = 12

// tpHist is how many past input samples each branch needs.
const tpHist = tpTaps - 1

// tpChunk bounds the float32 scratch and sets the granularity at which
// ProcessBelow can skip the interpolation of quiet stretches.
const tpChunk = 512

// tpKaiserBeta shapes the interpolator's window: it trades passband ripple
// (which shows as over-read of high tones) against the width of the
// transition band (under-read near Nyquist). Tuned on the Tech 3341 cases
// 15-23 at 44.1, 48 and 96 kHz.
const tpKaiserBeta = 5.0

// TruePeakDetector estimates the true peak of each channel as BS.1770-5
// Annex 2 describes: it oversamples 4x below 96 kHz and 2x from 96 to
// 192 kHz (no oversampling above) with a polyphase windowed-sinc FIR and
// takes the largest absolute value. One phase of the interpolator is the
// input sample itself, so only the factor-1 in-between phases cost
// multiplications; they run in float32.
//
// The interpolated signal lags the input by Delay() frames; Pending reports
// the peak of the part still inside the filter. A limiter can use Process
// per block as a look-ahead detector, compensating for Delay.
//
// A TruePeakDetector is not safe for concurrent use.
type TruePeakDetector struct {
	factor int
	// phases[p] holds, for p = 1..factor-1, the branch taps in the order
	// they meet the samples in the window (oldest first).
	phases [3][tpTaps]float32
	// wide holds each tap of phases eight times, for peaks3's kernel.
	wide *[3][tpTaps][8]float32
	// bound is the largest sum of |taps| over the phases: no interpolated
	// value can exceed it times the largest |sample| in the window.
	bound float64
	hist  [][tpHist]float32
	buf   [tpHist + tpChunk]float32
}

// NewTruePeakDetector returns a detector for channels channels at the
// sample rate.
func NewTruePeakDetector(sampleRate, channels int) *TruePeakDetector {
	d := &TruePeakDetector{factor: oversampling(sampleRate), hist: make([][tpHist]float32, channels), bound: 1}
	if d.factor == 1 {
		return d
	}
	n := d.factor*tpTaps + 1 // odd length: symmetric around its centre tap
	centre := float64(n-1) / 2
	proto := make([]float64, n)
	i0beta := besselI0(tpKaiserBeta)
	for i := range proto {
		t := (float64(i) - centre) / float64(d.factor)
		r := (float64(i) - centre) / centre
		w := besselI0(tpKaiserBeta*math.Sqrt(1-r*r)) / i0beta
		proto[i] = sinc(t) * w
	}
	for p := 1; p < d.factor; p++ {
		// Branch p produces the point p/factor of a sample after the
		// window's centre; its taps are proto[p + factor*k], applied to the
		// sample k steps back. Normalising each branch to unity DC gain
		// makes a constant read exactly its level.
		var sum, abs float64
		for k := 0; k < tpTaps; k++ {
			sum += proto[p+d.factor*k]
		}
		for k := 0; k < tpTaps; k++ {
			v := proto[p+d.factor*k] / sum
			d.phases[p-1][tpTaps-1-k] = float32(v)
			abs += math.Abs(float64(float32(v)))
		}
		// float32 rounding in the sums can add a few ulps; the margin
		// keeps the skip test conservative.
		d.bound = math.Max(d.bound, abs*(1+1e-6))
	}
	if d.factor == 4 {
		d.wide = new([3][tpTaps][8]float32)
		for p := range d.wide {
			for j := range d.wide[p] {
				for l := range d.wide[p][j] {
					d.wide[p][j][l] = d.phases[p][j]
				}
			}
		}
	}
	return d
}

// oversampling returns the oversampling factor BS.1770 Annex 2 asks for at
// the rate: 4x up to 96 kHz, 2x up to 192 kHz.
func oversampling(sampleRate int) int {
	switch {
	case sampleRate < 96000:
		return 4
	case sampleRate <= 192000:
		return 2
	}
	return 1
}

func sinc(x float64) float64 {
	if x == 0 {
		return 1
	}
	return math.Sin(math.Pi*x) / (math.Pi * x)
}

// besselI0 is the zeroth-order modified Bessel function of the first kind,
// by its power series (converges fast for the small arguments of a window).
func besselI0(x float64) float64 {
	sum, term := 1.0, 1.0
	for k := 1; k < 50; k++ {
		term *= (x / 2) / float64(k)
		sum += term * term
		if term*term < sum*1e-17 {
			break
		}
	}
	return sum
}

// Factor returns the oversampling factor (4, 2 or 1).
func (d *TruePeakDetector) Factor() int { return d.factor }

// Delay returns how many frames the interpolated signal lags the input.
func (d *TruePeakDetector) Delay() int {
	if d.factor == 1 {
		return 0
	}
	return tpTaps / 2
}

// Reset clears the filter history of every channel.
func (d *TruePeakDetector) Reset() { clear(d.hist) }

// Process feeds the next samples of channel ch and returns the largest
// absolute value of the oversampled signal over the len(x) output frames
// this call completes (each frame being the delayed input sample and its
// factor-1 interpolated successors). The result is linear, not dB.
func (d *TruePeakDetector) Process(ch int, x []float64) float64 {
	return d.ProcessBelow(ch, x, -1)
}

// ProcessBelow is Process for callers that only need peaks above floor, such
// as a meter keeping a running maximum: stretches whose samples prove that
// no interpolated value can exceed floor skip the interpolation. The result
// is exact when it exceeds floor; otherwise it is some value <= floor.
func (d *TruePeakDetector) ProcessBelow(ch int, x []float64, floor float64) float64 {
	return d.processBelow(ch, x, floor, -1)
}

// processBelow is ProcessBelow for a caller that already knows the largest
// |x[i]| (xpeak >= 0): when it proves the whole block below floor, the block
// costs only the history update.
func (d *TruePeakDetector) processBelow(ch int, x []float64, floor, xpeak float64) float64 {
	if xpeak >= 0 && floor >= 0 && d.factor > 1 && len(x) >= tpHist {
		top := xpeak
		for _, f := range d.hist[ch] {
			top = max(top, float64(abs32(f)))
		}
		if top*d.bound <= floor {
			h := &d.hist[ch]
			for i, v := range x[len(x)-tpHist:] {
				h[i] = float32(v)
			}
			return xpeak
		}
	}
	peak := 0.0
	for len(x) > 0 {
		n := min(len(x), tpChunk)
		peak = math.Max(peak, float64(d.chunk(ch, x[:n], floor)))
		x = x[n:]
	}
	return peak
}

// chunk processes at most tpChunk samples.
func (d *TruePeakDetector) chunk(ch int, x []float64, floor float64) float32 {
	h := &d.hist[ch]
	if floor >= 0 && d.factor > 1 {
		// Every output of this chunk has its window inside the history
		// plus x, so their largest |sample| bounds all of them: test that
		// before paying for the conversion and the interpolation.
		top := absMax(x)
		for _, f := range h {
			top = max(top, float64(abs32(f)))
		}
		if top*d.bound <= floor {
			n := len(x)
			if n >= tpHist {
				for i, v := range x[n-tpHist:] {
					h[i] = float32(v)
				}
			} else {
				copy(h[:], h[n:])
				for i, v := range x {
					h[tpHist-n+i] = float32(v)
				}
			}
			return float32(top)
		}
	}
	buf := d.buf[:tpHist+len(x)]
	copy(buf, h[:])
	dst := buf[tpHist:][:len(x)]
	for i, v := range x {
		dst[i] = float32(v)
	}
	copy(h[:], buf[len(x):])
	if d.factor == 1 {
		return absMax32(buf[tpHist:])
	}
	// Phase 0 of the oversampled signal: the input samples, delayed.
	del := tpHist - tpTaps/2
	peak := absMax32(buf[del : del+len(x)])
	if d.wide != nil {
		return max(peak, peaks3(&d.phases, d.wide, buf, len(x)))
	}
	for p := 0; p < d.factor-1; p++ {
		peak = max(peak, branchPeak(&d.phases[p], buf, len(x)))
	}
	return peak
}

// branchPeak returns the largest |y| of one polyphase branch over the n
// outputs whose windows end at buf[tpHist..tpHist+n).
func branchPeak(t *[tpTaps]float32, buf []float32, n int) float32 {
	// Taps are read through t, not copied to locals: twelve taps plus the
	// accumulators would not fit the registers, and spills cost more than
	// the loads. The sum is a tree to keep its dependency chain short.
	var hi, lo float32
	for i := 0; i < n; i++ {
		w := buf[i : i+tpTaps : i+tpTaps]
		y := ((t[0]*w[0] + t[1]*w[1]) + (t[2]*w[2] + t[3]*w[3])) +
			((t[4]*w[4] + t[5]*w[5]) + (t[6]*w[6] + t[7]*w[7])) +
			((t[8]*w[8] + t[9]*w[9]) + (t[10]*w[10] + t[11]*w[11]))
		// Plain comparisons: the max builtin's NaN and signed-zero rules
		// cost several instructions per output.
		if y > hi {
			hi = y
		}
		if y < lo {
			lo = y
		}
	}
	return max(hi, -lo)
}

// absMax32 returns the largest |x[i]| (+0 for none), the value
// max(peak, abs32(f)) finds from +0, by two integer maxima of the bit
// patterns: cleared of their sign they order as the magnitudes do (-0
// and +0 alike), and Go's WebAssembly compiles the float max to a call of
// the runtime's fmax32 per sample (1.7 % of the browser build's engine)
// but the integer one to a select. A NaN gives a NaN, as the float max
// does, but perhaps another of several.
func absMax32(x []float32) float32 {
	var m0, m1 uint32
	for ; len(x) >= 2; x = x[2:] {
		m0 = max(m0, math.Float32bits(x[0])&^(1<<31))
		m1 = max(m1, math.Float32bits(x[1])&^(1<<31))
	}
	if len(x) == 1 {
		m0 = max(m0, math.Float32bits(x[0])&^(1<<31))
	}
	return math.Float32frombits(max(m0, m1))
}

func abs32(f float32) float32 {
	return math.Float32frombits(math.Float32bits(f) &^ (1 << 31))
}

// Pending returns the peak of the interpolated points of channel ch that
// still wait for later input, as if the input ended now with silence. It
// does not change the detector.
func (d *TruePeakDetector) Pending(ch int) float64 {
	if d.factor == 1 {
		return 0
	}
	var buf [tpHist + tpTaps]float32
	copy(buf[:], d.hist[ch][:])
	var peak float32
	del := tpHist - tpTaps/2
	for _, f := range buf[del : del+tpTaps] {
		peak = max(peak, abs32(f))
	}
	for p := 0; p < d.factor-1; p++ {
		peak = max(peak, branchPeak(&d.phases[p], buf[:], tpTaps))
	}
	return float64(peak)
}
