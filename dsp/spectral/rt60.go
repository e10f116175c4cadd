package spectral

import "math"

// rt60Estimator measures blindly how much of a room a recording holds: its
// reverberation time and its direct-to-reverberant ratio (DRR), by fitting
// the statistical model of the late reverberation that the Denoiser
// removes (Habets, 2009) to the recording itself.
//
// Under that model the reverberant power of a band decays by a factor
// F = exp(-2 delta T) per frame of T seconds (delta = 3 ln 10 / RT60) and
// each frame of direct sound feeds it a share kappa = (1 - F) / DRR of its
// own power:
//
//	R(t) = F (R(t-1) + kappa (P(t-1) - R(t-1)))
//
// The room is always there, so a recording can never be quieter than
// the reverberation the model predicts from its own past: wherever it is
// (a word ends faster than the room lets it), the model holds more room
// than the recording. Each model of a grid (RT60 x DRR) runs over octave
// bands of 10 ms frames and counts those violations; among the models
// that the recording contradicts on few of its frames, the one whose
// predicted reverberation explains the largest share of the recording's
// power (the free decays after words, which only the right room follows)
// is the estimate. A recording whose best model lies rtDryDRR or more
// under the speech is dry and reports RT60 0.
//
// The earlier estimator took the fastest of the free decays that fall 15
// dB or more; a room whose reverberation lies 10 to 15 dB under the direct
// sound (sox's reverb, a lecture hall miked from the desk) has almost none
// of those (the first 10 dB fall with the word), and a close microphone in
// a small room has a few, so it measured reverberant rooms as dry and dry
// recordings as rooms.
type rt60Estimator struct {
	hop, n, fill int
	buf          []float64
	win          []float64
	fft          rfft
	spec         []complex128
	pow          []float64
	lo, hi       [rtBands]int // bins of each band
	floor        [rtBands]float64
	prev         [rtBands]float64 // last frame's band power over the floor
	rise         float64
	frames       int

	fac, kap []float64 // per model: F, kappa
	lam      []float64 // per model and band: predicted reverberation
	viol     []int     // per model: frames contradicting it (strict)
	loose    []int     // per model: frames contradicting it (loose)
	prev2    [rtBands]float64
	expl     []float64 // per model: sum of the shares of power explained
	sig      int       // band frames with signal
}

const (
	rtFrameSec = 0.01
	rtBands    = 5 // octaves from 250 Hz
	// A band frame holds signal 15 dB over the band's floor; a model
	// predicts a tail that can be checked where it lies 10 dB over it.
	rtSignal = 31.6
	rtCheck  = 10
	// The strict test: a model is contradicted where a frame lies 3 dB
	// under it, and stands where at most rtViolShare of the signal frames
	// do; it gives the DRR and says whether the room is dry. The loose
	// test (the mean of three frames 6 dB under it, rtLooseShare) allows
	// for the fluctuation of a reverberant tail and gives the RT60: on
	// the tuning half's rooms the strict test found 0.2 to 0.4 s in rooms
	// of 0.5 to 1.0 s, the loose test their RT60 within a grid step (sox's
	// rooms of 1.0 s at 0.5 to 0.7 s), but took half the dry clips for
	// rooms.
	rtViol       = 0.5
	rtViolShare  = 0.02
	rtLooseViol  = 0.25
	rtLooseShare = 0.1
	// Below this many signal frames (half a second in each band) nothing
	// is said.
	rtMinSignal = 250
	// Rooms whose DRR lies rtDryDRR or more count as dry: their
	// reverberation lies too far under the speech to hear or remove. On
	// the tuning half a dry clip measured 16 dB (WPE at a quarter took it
	// to 21.6 dB SI-SDR) and sox's rooms 9 to 12.
	rtDryDRR = 16.0
)

// rtGridRT60 and rtGridDRR are the models tried.
var (
	rtGridRT60 = []float64{0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0, 1.2, 1.5, 2.0}
	rtGridDRR  = []float64{30, 25, 20, 16, 12, 9, 6, 3, 0, -3, -6, -10}
)

func newRT60Estimator(sampleRate int) *rt60Estimator {
	hop := max(1, int(math.Round(rtFrameSec*float64(sampleRate))))
	n := 64
	for n < 2*hop {
		n *= 2
	}
	r := &rt60Estimator{hop: hop, n: n, buf: make([]float64, n), win: sqrtHann(n), fft: newRFFT(n),
		spec: make([]complex128, n/2+1), pow: make([]float64, n/2+1)}
	for i := range r.win {
		r.win[i] *= r.win[i] // Hann
	}
	for b := range rtBands {
		f := 250 * math.Pow(2, float64(b))
		r.lo[b] = min(n/2, max(1, int(math.Round(f*float64(n)/float64(sampleRate)))))
		r.hi[b] = min(n/2+1, max(r.lo[b]+1, int(math.Round(2*f*float64(n)/float64(sampleRate)))))
	}
	r.rise = math.Pow(10, 0.5*rtFrameSec/10) // the floor rises by 0.5 dB/s
	T := float64(hop) / float64(sampleRate)
	for _, rt := range rtGridRT60 {
		F := math.Exp(-2 * 3 * math.Ln10 / rt * T)
		for _, drr := range rtGridDRR {
			r.fac = append(r.fac, F)
			r.kap = append(r.kap, min(1, (1-F)/math.Pow(10, drr/10)))
		}
	}
	m := len(r.fac)
	r.lam = make([]float64, m*rtBands)
	r.viol = make([]int, m)
	r.loose = make([]int, m)
	r.expl = make([]float64, m)
	return r
}

func (r *rt60Estimator) write(mono []float64) {
	for len(mono) > 0 {
		m := min(len(mono), r.hop-r.fill)
		copy(r.buf[r.n-r.hop+r.fill:], mono[:m])
		r.fill += m
		mono = mono[m:]
		if r.fill == r.hop {
			r.frame()
			copy(r.buf, r.buf[r.hop:])
			r.fill = 0
		}
	}
}

func (r *rt60Estimator) frame() {
	clear(r.pow)
	r.fft.forwardPow(r.spec, r.pow, r.buf, r.win)
	r.frames++
	for b := range rtBands {
		var p float64
		for _, v := range r.pow[r.lo[b]:r.hi[b]] {
			p += v
		}
		fl := r.floor[b]
		if r.frames == 1 || p < fl {
			fl = p
		} else {
			fl *= r.rise
		}
		r.floor[b] = max(fl, 1e-30)
		v := max(p-2*r.floor[b], 0) // twice the floor: its own fluctuation is no tail
		vs := (v + r.prev[b] + r.prev2[b]) / 3
		r.prev2[b] = r.prev[b]
		signal := p > r.floor[b]*rtSignal
		if signal {
			r.sig++
		}
		check := r.floor[b] * rtCheck
		prev := r.prev[b]
		for j, F := range r.fac {
			l := &r.lam[j*rtBands+b]
			*l = F * (*l + r.kap[j]*max(prev-*l, 0))
			if !signal {
				continue
			}
			if *l > check {
				if v < rtViol**l {
					r.viol[j]++
				}
				if vs < rtLooseViol**l {
					r.loose[j]++
				}
			}
			r.expl[j] += min(*l, v) / max(v, 1e-30)
		}
		r.prev[b] = v
	}
}

// estimate returns the model that stands and explains most: its RT60 in
// seconds (0: dry) and DRR in dB (+Inf: dry).
func (r *rt60Estimator) estimate() (rt60, drr float64) {
	if r.sig < rtMinSignal*rtBands {
		return 0, math.Inf(1)
	}
	pick := func(viol []int, share float64) int {
		best, bestE := -1, 0.0
		for j := range r.fac {
			if float64(viol[j]) > share*float64(r.sig) {
				continue
			}
			if e := r.expl[j]; e > bestE {
				best, bestE = j, e
			}
		}
		return best
	}
	strict := pick(r.viol, rtViolShare)
	if strict < 0 {
		return 0, math.Inf(1)
	}
	drr = rtGridDRR[strict%len(rtGridDRR)]
	if drr >= rtDryDRR {
		return 0, math.Inf(1)
	}
	rt60 = rtGridRT60[strict/len(rtGridDRR)]
	if loose := pick(r.loose, rtLooseShare); loose >= 0 {
		rt60 = max(rt60, rtGridRT60[loose/len(rtGridDRR)])
	}
	return rt60, drr
}

// reverbStrength returns the shares of the full reverb reduction that a
// recording whose reverberation lies drr dB under its direct sound gets
// in the WPE stage and in the late-reverberation gain. The gain's model
// feeds the whole power of a frame into the tail (a DRR near 0 dB or
// under, a distant microphone): on a room whose tail lies 10 dB or more
// under the speech (sox's reverb) it takes speech for reverberation and
// cost 1 to 3 dB of SI-SDR on the tuning half, so it fades out between 0
// and 6 dB. WPE removes what the past predicts, the speech's own
// continuation too: at full it cost up to 1 dB on those rooms where
// removing 0.6 of the prediction gained 1.3 to 2.2, so it fades from 6 dB
// to rtDryDRR (tuning half, sox's rooms: +0.62 dB SI-SDR against +0.40
// fading to 20 dB).
func reverbStrength(drr float64) (wpe, gain float64) {
	ramp := func(full, none float64) float64 { return min(1, max(0, (none-drr)/(none-full))) }
	return ramp(6, rtDryDRR), ramp(0, 6)
}

// sumSquares returns the sum of the squares of x, in four lanes so that
// no addition waits on the one before.
func sumSquares(x []float64) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		v := x[i : i+4 : i+4]
		s0 += v[0] * v[0]
		s1 += v[1] * v[1]
		s2 += v[2] * v[2]
		s3 += v[3] * v[3]
	}
	for ; i < len(x); i++ {
		s0 += x[i] * x[i]
	}
	return (s0 + s1) + (s2 + s3)
}
