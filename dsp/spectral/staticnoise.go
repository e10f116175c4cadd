package spectral

import "math"

// Static's noise profile from speech presence.
//
// Static keeps one noise spectrum for the whole recording, which is what
// it is chosen for. Learnt from the pauses, or without pauses from the
// quietest frames bounded by each bin's low quantile over the file
// (binFloor), it misses the mean of real noise that swells and fades
// under a voice that does not pause (a crowd, ambience, machines): on the
// tuning half's 11 real noise mixes at 5-15 dB SNR, where the classifier
// finds no pauses in any, that profile lay 4 to 12 dB under the true
// noise's mean in the bands that hold most of a crowd's or an ambience's
// power, and static gained +4.12 dB SI-SDR where the true mean, given as
// the profile, gives +5.61 (nonstationary +2.55 against +4.47). Raising
// the whole profile (1.4, 2 or 3 times: +3.99/+3.55/+2.69) or each bin's
// by its spread over the file (the ratio of two low quantiles: +3.82 to
// +4.09) gained nothing: the error is in which frames are noise, not in
// the scale.
//
// Speech isolation's network (isonet.go; Dynamic's speech presence reads
// it too, presence.go) tells each cell's Wiener gain g from the shape of
// a syllable rather than its level. Here each cell of a sample of the
// frames weighs (1-g)^staticExp as noise, and the profile is the weighted
// mean of their power over the file, less the loudest staticTrim of the
// weight (a fricative the network takes for noise can make a bin's mean
// on a sample). The Profiler runs the network on one frame in
// staticEvery of its STFT (hop n/4, as it was fitted) and analyses only
// the frames that frame's features read (isoCtx); the others enter the
// network's front as silence, which its percentiles leave out. Tuning
// half, the 11 mixes: every 8th frame, all analysed, +5.14 dB; every
// 32nd with only the features' frames +4.59 or +4.43 depending on which
// frames (one stationary mix +5.65 or +1.41), with the loudest 2% of the
// weight left out +4.76/+4.86 (1%: +4.79/+4.89, 5%: +4.68/+4.75) and the
// rest's mean times 1.2 +4.88/+5.03 (1.4: +4.88/+5.09); every 40th
// +5.10/+4.67, every 48th +4.79/+4.60. Exponents 3/6/10 +4.72/+5.13/+5.12
// (every 8th); smoothing the sums over 3 to 11 bins lost 0.8 dB or more
// (the noises' spectral lines matter); weighing each cell's noise share
// (1-g)P instead of its power lost 0.1 dB; adding the frames 4 and 8 hops
// either side with the frame's weights took in speech onsets (+4.61 and
// +3.07). As used (every 40th, staticPauseDB): +4.88 dB (stationary
// +6.02 -> +6.44, nonstationary +2.55 -> +3.58), and with the spread's
// over-subtraction (staticSpreadGain) +5.03 (+6.49, +3.82).
//
// With the network that also sees the comb shares (isonet.go, refitted),
// re-tuned on the 11 mixes with the sample taken at 4 offsets (0, 1/4,
// 1/2 and 3/4 of the spacing; one offset's figure swings by 0.2 dB with
// which frames it samples, 40th: +5.04 at 0, +4.81 at 20): the mean over
// the offsets is +4.87 every 40th, +4.95 every 32nd, +4.98 every 28th,
// +5.12 every 24th, +5.06 every 20th, +4.99 every 16th (the front's
// percentiles read more live frames as the sample grows denser, so the
// curve is not monotone). The constants hold with every 24th as with
// every 40th: staticTrimBias 1.3 +5.11, staticSpreadGain 0.5 +5.08 (and
// at every 40th, one offset, bias 1/1.1/1.3/1.4 +4.89/+4.99/+5.07/+5.07,
// spread 0/0.5/1.5 +4.88/+5.02/+5.00, trim 1%/5% +5.00/+4.95, steady 4.5/7
// dB +5.06/+4.97, exponent 4/8 +4.96/+5.01, against +5.04; at offset 20
// none over +4.83 against +4.81): every 24th is used, the rest stays.
//
// Which frames the grid of every 24th takes moves the figure by up to
// 0.1 dB (the 11 mixes, offsets 0/6/12/18 of the grid: +5.05/+5.12/
// +5.14/+5.16), and a denser grid reads other features (above). Two grids
// of every 24th, the second 12 frames on, each with its own front (so
// each pass reads the features it was fitted on), their sums pooled:
// +5.12/+5.18/+5.12/+5.18 (mean +5.15 against +5.12; three grids +5.16,
// four +5.15/+5.15/+5.15/+5.17). The second grid (staticNoise.twin) runs
// over the dense schedule's first 20 s only, where it costs as much
// again.
//
// Cost: for each pass of the network, 9 transforms of n and their band
// levels, 5 harmonicities (isoHarmonicity), the features and the forward
// pass of all bands at once (staticnoise_fast.go). The Profiler feeds it
// only until the voice activity mask has marked a second of pauses, when
// the profile is theirs. Where it runs the whole file
// (BenchmarkDenoise/static-dehum-mono-nopauses, alternating with main
// c3f8cf6's tree, which had no such profile, in one loaded run) afftdn's
// CPU time over ours fell from 1.37/1.55 to 1.15/1.25 on a mono file,
// 1.62/1.66 to 1.56/1.53 on a stereo one; with pauses (static-dehum-mono,
// static-dehum) 1.36/1.31 to 1.38/1.59 and 1.73/1.67 to 1.92/1.75 (the
// Profiler's histograms' AVX2 kernel, binRowsOf, more than pays the
// first second). Every 24th frame instead of every 40th (and the band
// sums in a register, the Profiler's mono frames shared), alternating
// with main 3c43eed in one run (load 2-5): no pauses, mono 1.22/1.15/1.14
// -> 1.09/1.04/1.04 (an earlier pair 1.22/1.20 -> 1.09/1.12); with
// pauses mono 1.36/1.50/1.40 -> 1.33/1.46/1.42, stereo 1.74/1.67/1.92 ->
// 1.83/1.75/1.55: still ahead of afftdn where the profile runs the whole
// file, by less. After the first 20 s the network runs in runs, a
// quarter of its passes (staticDenseSec): no pauses, mono, alternating
// with main 036eea9 in one run (load 8-10), 1.20/1.01/1.10 ->
// 1.26/1.17/1.24 (ours 190/189/200 -> 221/247/214x realtime per CPU s;
// in CPU profiles of the two passes, this profile 26% -> 12%, the
// Profiler's own transforms, of the frames the runs leave, 1% -> 6%).
const (
	staticExp = 6
	// staticEvery is how many frames of the network's STFT (hop n/4, 10.7
	// ms at 48 kHz) lie between two it is run on: 0.26 s. A multiple of
	// 8, so that on a mono stream all of the Profiler's frames (every 8th
	// of these) are among those the sample's features read (isoCtx 0, 8
	// and -8 of a pass) and shared (powOf).
	staticEvery = 24
	// staticMinEvals is how many frames the network must have been run on
	// for the profile to be used; a shorter recording keeps the Profiler's.
	staticMinEvals = 4
	// staticTrim is the share of the cells' weight, the loudest, that the
	// mean leaves out, and staticTrimBias what the mean of the rest is
	// multiplied by for it (see above).
	staticTrim     = 0.02
	staticTrimBias = 1.2
	// staticSteadyDB is the standard deviation, in dB, of a periodogram
	// bin of a steady noise (10 log10 of an exponential variable: 5.57);
	// where the noise cells' levels spread further, the bin's noise
	// swells and fades, and a profile at its mean leaves the swells: the
	// bin's profile is raised by staticSpreadGain times the excess over
	// staticSteadyDB, in proportion. Tuning half, the 11 mixes: +4.88 dB
	// without, gains 0.5/1/2 +5.00/+5.03/+4.93 (nonstationary +3.58 ->
	// +3.82 at 1, stationary +6.44 -> +6.49); a reference of 4.5 or 7 dB
	// +5.06/+5.03 and +4.94/+4.96 (gains 0.5/1).
	staticSteadyDB   = 5.6
	staticSpreadGain = 1.0
)

// The schedule of the network's passes: every staticEvery-th frame for
// the first staticDenseSec of the stream, then in runs of staticBurst of
// those passes, one run in every staticPeriod passes (3.1 s of every
// 12.3 at 48 kHz) at a place in the period drawn afresh each time, the
// runs' passes weighing staticPeriod/staticBurst times as much, so that
// every stretch of the stream counts as it did. A run analyses the
// frames of the passes staticNoise.reach either side of it as the dense
// schedule does (the features' percentiles read them), so that each of
// its passes gives the gains it gives there, bit for bit
// (TestStaticNoiseRunsAreDense). Where the voice never pauses the profile
// runs the whole file, and on an hour the runs cost a third of the dense
// schedule. The corpus's clips are under 18 s: on them nothing changes.
// Tuning half, its 8 real noises (2 keep the Profiler's profile) looped under 120 s and 240 s of its
// clean speech at 5, 10 or 15 dB SNR, a mask without pauses: dense
// +4.09 and +4.16 dB; runs of 12 in 48 after 30 s at fixed places
// +4.04 and +4.06 (at 240 s one machine noise's mix 7.64 -> 7.06; 8.02
// with the places drawn), at drawn places after 30 s +4.21 at 240 s,
// after 20 s +4.19 (+4.07 at 120 s; after 10, 20, 40 or 60 s, fixed places,
// +4.04/+4.00/+4.06/+4.06); runs of 12 or 24 in 96 after 15 s lost more
// (+3.94/+3.95 at 120 s), as did stopping after 30 s (+3.98).
const (
	staticDenseSec = 20
	staticBurst    = 12
	staticPeriod   = 48
)

// staticBufHops is how many hops the buffer of samples holds beyond a
// frame.
const staticBufHops = 16

// The cells' weights and weighted powers are summed by level, in rows of
// 1 dB from staticRowLow dB of full scale, so that the loudest share of
// each bin's weight can be left out at the end.
const (
	staticRowLow = -130
	staticRows   = 130
	dbPerLog2    = 3.0102999566398120 // 10 log10(2)
)

// staticNoise estimates Static's noise profile in the Profiler's pass from
// the mono mix.
type staticNoise struct {
	n, hop int
	win    []float64
	rfft
	front *isoFront
	hf    *isoHarmonicity // the front's harmonicity, faster (nil: the front's own)
	// buf holds the stream's samples the next frames read, the next
	// frame from at, up to fill; it is shifted to the front only when
	// full (staticBufHops hops past a frame), not at every hop.
	buf      []float64
	at, fill int
	spec     []complex128
	pow      []float64
	powAt    int64       // the sample the frame of pow starts at (-1: none)
	next     int64       // frames entered
	held     [][]float64 // ring: the power of the frames the network is run on
	band, g  []float64
	num, den []float64
	// rowW and rowWP: per bin, staticRows rows of the weight and the
	// weighted power of the cells of that level.
	rowW, rowWP []float32
	scale       float64 // from power to full scale
	evals       int
	// denseEvals is how many passes run on every staticEvery-th frame
	// before the runs (staticDenseSec), burst and period the runs'
	// length and spacing, in passes; reach is how many passes either
	// side of one the frames of its features' percentiles belong to.
	denseEvals           int64
	burst, period, reach int64
	// phase shifts the grid of passes: frame t is the grid's t+phase.
	phase int64
	// twin, when set, is a second profile on the grid half a spacing
	// on, fed the same samples, whose sums result adds to these: the
	// dense schedule's passes only (see staticEvery).
	twin *staticNoise
	// ctx and harm hold, for each frame number modulo staticEvery,
	// whether the features of a frame the network is run on read its
	// levels and its harmonicity.
	ctx, harm []bool
}

func newStaticNoise(sampleRate int) *staticNoise {
	s := newStaticGrid(sampleRate)
	s.twin = newStaticGrid(sampleRate)
	s.twin.phase, s.twin.burst = staticEvery/2, 0
	return s
}

// newStaticGrid returns a profile on one grid of passes, without a twin.
func newStaticGrid(sampleRate int) *staticNoise {
	n := FFTSize(sampleRate)
	s := &staticNoise{n: n, hop: n / 4}
	s.win = sqrtHann(n)
	s.rfft = newRFFT(n)
	s.front = newIsoFront(sampleRate, n, s.hop, s.win)
	s.hf = newIsoHarmonicity(s.front, n)
	b := n/2 + 1
	s.buf = make([]float64, n+staticBufHops*s.hop)
	s.spec = make([]complex128, b)
	s.pow = make([]float64, b)
	s.powAt = -1
	s.band, s.g = make([]float64, isoBands), make([]float64, b)
	s.num, s.den = make([]float64, b), make([]float64, b)
	s.held = make([][]float64, s.front.W/staticEvery+2)
	for i := range s.held {
		s.held[i] = make([]float64, b)
	}
	s.rowW, s.rowWP = make([]float32, b*staticRows), make([]float32, b*staticRows)
	s.scale = 4 / float64(n) / float64(n)
	s.denseEvals = int64(math.Ceil(staticDenseSec * float64(sampleRate) / float64(staticEvery*s.hop)))
	s.burst, s.period = staticBurst, staticPeriod
	s.reach = int64((s.front.W + isoCtx[len(isoCtx)-1]) / staticEvery)
	s.ctx, s.harm = make([]bool, staticEvery), make([]bool, staticEvery)
	for _, j := range isoCtx {
		s.ctx[((j%staticEvery)+staticEvery)%staticEvery] = true
	}
	for _, j := range isoHarmCtx {
		at := ((j % staticEvery) + staticEvery) % staticEvery
		s.ctx[at], s.harm[at] = true, true
	}
	return s
}

// write takes the next samples of the mono mix.
func (s *staticNoise) write(x []float64) {
	if s.twin != nil {
		s.twin.write(x)
	}
	for len(x) > 0 {
		m := copy(s.buf[s.fill:], x)
		s.fill += m
		x = x[m:]
		for s.fill-s.at >= s.n {
			s.frame(s.buf[s.at : s.at+s.n])
			s.at += s.hop
		}
		if s.fill == len(s.buf) {
			// Keep what the next frames read, at the front.
			s.fill = copy(s.buf, s.buf[s.at:s.fill])
			s.at = 0
		}
	}
}

// frame enters frame x into the network's front (its power, or
// silence when no frame the network is run on reads it) and runs the
// network on the frame W back when it is one of every staticEvery.
func (s *staticNoise) frame(x []float64) {
	t := s.next
	s.next++
	u := t + s.phase // on the grid
	if at := int(u % staticEvery); s.ctx[at] && s.needed(s.passOf(u, at)) {
		clear(s.pow)
		s.forwardPow(s.spec, s.pow, x, s.win)
		s.powAt = t * int64(s.hop)
		harm := s.harm[at] && s.on(s.passOf(u, at))
		if s.hf == nil {
			s.front.pushLevels(s.pow, harm)
		} else {
			s.front.pushLevels(s.pow, false)
			if harm {
				slot := int((s.front.next - 1) % int64(s.front.R))
				s.front.harm[slot] = s.hf.of(s.pow)
				s.front.lag = s.hf.lag
				s.front.combShares(s.pow, s.front.comb[slot])
			}
		}
		if at == 0 {
			copy(s.held[int(u/staticEvery)%len(s.held)], s.pow)
		}
	} else {
		s.front.skip()
	}
	o := t - int64(s.front.W)
	ou := o + s.phase
	if o < 0 || ou%staticEvery != 0 || !s.on(ou/staticEvery) {
		return
	}
	weight := 1.0
	if ou/staticEvery >= s.denseEvals {
		weight = float64(s.period) / float64(s.burst)
	}
	s.front.features(o, s.front.feat)
	isoModel.forwardBatch(s.front.feat, &s.front.batch, s.band)
	s.front.bands.spread(s.band, s.g)

	p := s.held[int(ou/staticEvery)%len(s.held)]
	for k, g := range s.g {
		u := max(1-g, 0)
		u2 := u * u
		w := u2 * u2 * u2 * weight // staticExp
		s.num[k] += w * p[k]
		s.den[k] += w
		r := 0
		if v := p[k] * s.scale; v > 0 {
			r = min(staticRows-1, max(0, int(math.Floor(dbPerLog2*fastLog2(v)))-staticRowLow))
		}
		s.rowW[k*staticRows+r] += float32(w)
		s.rowWP[k*staticRows+r] += float32(w * p[k])
	}
	s.evals++
}

// on tells whether the network runs on the e-th of every staticEvery
// frames (the schedule's).
func (s *staticNoise) on(e int64) bool {
	if e < s.denseEvals {
		return true
	}
	// The run's place in its period is drawn (splitmix64 of the
	// period's number), so that runs do not keep step with a noise that
	// cycles.
	k, r := (e-s.denseEvals)/s.period, (e-s.denseEvals)%s.period
	z := uint64(k+1) * 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	z ^= z >> 31
	r -= int64(z % uint64(s.period-s.burst+1))
	return r >= 0 && r < s.burst
}

// needed tells whether the frames of the e-th pass's features are
// analysed: its own run's or, within reach, a run's neighbour's.
func (s *staticNoise) needed(e int64) bool {
	for d := -s.reach; d <= s.reach; d++ {
		if e+d >= 0 && s.on(e+d) {
			return true
		}
	}
	return false
}

// passOf returns which pass's features read frame t, at = t modulo
// staticEvery (one of s.ctx): isoCtx reaches less than half of
// staticEvery either side.
func (s *staticNoise) passOf(t int64, at int) int64 {
	j := int64(at)
	if at > staticEvery/2 {
		j -= staticEvery
	}
	return (t - j) / staticEvery
}

// powOf returns the power of the frame of the mix that starts at sample
// pos when the last frame analysed was that one (nil otherwise): on a
// mono stream the Profiler's frames are every 8th of these, all of them
// analysed here (staticEvery; profile.go).
func (s *staticNoise) powOf(pos int64) []float64 {
	if s.powAt != pos {
		return nil
	}
	return s.pow
}

// result returns the profile, nil when the network ran on too few frames
// or took no cell of a bin for noise.
func (s *staticNoise) result(prior []float64) []float64 {

	if tw := s.twin; tw != nil {
		s.twin = nil
		for k := range s.num {
			s.num[k] += tw.num[k]
			s.den[k] += tw.den[k]
		}
		for i := range s.rowW {
			s.rowW[i] += tw.rowW[i]
			s.rowWP[i] += tw.rowWP[i]
		}
		s.evals += tw.evals
	}
	if s.evals < staticMinEvals {
		return nil
	}
	out := make([]float64, len(s.num))
	for k := range out {
		num, den := s.num[k], s.den[k]
		// Leave out the loudest rows, from the top down, until at least
		// staticTrim of the weight is gone: a loud cell of large weight
		// goes whole, not in part.
		cut := staticTrim * den
		w, wp := s.rowW[k*staticRows:(k+1)*staticRows], s.rowWP[k*staticRows:(k+1)*staticRows]
		for r := staticRows - 1; r >= 0 && cut > 0; r-- {
			num -= float64(wp[r])
			den -= float64(w[r])
			cut -= float64(w[r])
		}
		switch {
		case s.den[k] <= 0:
			// No cell of the bin was taken for noise (a band the
			// recording leaves empty, where the network's gain is 1).
			out[k] = prior[k]
			continue
		case den <= 0 || num < 0:
			// The rows' float32 sums fell short of the total's: the
			// weight lies in one row, which leaves nothing to trim.
			out[k] = staticTrimBias * s.num[k] / s.den[k]
		default:
			out[k] = staticTrimBias * num / den
		}
		// Over-subtraction where the noise cells' level spreads more
		// than a steady noise's does.
		var sw, m1, m2 float64
		for r, c := range w {
			x := float64(r)
			sw += float64(c)
			m1 += float64(c) * x
			m2 += float64(c) * x * x
		}
		if sw > 0 {
			m1 /= sw
			sd := math.Sqrt(max(m2/sw-m1*m1, 0))
			out[k] *= 1 + staticSpreadGain*max(0, sd-staticSteadyDB)/staticSteadyDB
		}
	}
	return out
}
