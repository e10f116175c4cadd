package classify

import (
	"math"

	"github.com/audiopost/audiopost/internal/fft"
)

// feature is what the analyzer keeps of one sub-block (10 ms): enough to
// decide activity, speech or music, and to find fillers and coughs, in a
// few bytes so that hours of audio fit in a few megabytes.
type feature struct {
	// level is the mean square of the mono input over the sub-block's
	// exact span, in dB (full band, no window: it sees attacks sharply).
	level float32
	// band is the mean square in the speech band (150 Hz to 4 kHz) from
	// a 40 ms window centred on the sub-block, in dB: the level the voice
	// activity detector compares with the noise floor, because most of the
	// noise of a recording lies outside that band and most of the voice in it.
	band float32
	// flat is the spectral flatness (geometric over arithmetic mean of
	// band densities, 300 Hz to 7 kHz): near 1 for noise and coughs, low
	// for voiced speech and tonal music.
	flat float32
	// flux is the mean absolute change, in dB, of the band spectrum over
	// 30 ms: high at phoneme transitions and note onsets, low in held
	// vowels, hesitations and sustained notes.
	flux float32
	// voicing is the peak of the normalised autocorrelation of the
	// whitened spectrum over the pitch range: near 1 for periodic sound,
	// near 0 for noise.
	voicing float32
	// pitch is the frequency of that peak in Hz.
	pitch float32
	// centroid is the spectral centroid of the speech band in Hz: where a
	// vowel's formants lie, steady while one vowel is held.
	centroid float32
	// tilt is the level of 200-1000 Hz over 1-4 kHz, dB: the balance of
	// the first formant against the higher ones.
	tilt float32
}

// packed is a feature as the analyzer stores it: 14 bytes per 10 ms, 5 MB
// per hour of audio. Levels keep 0.01 dB, shares 1/255, pitch 0.1 Hz.
type packed struct {
	level, band int16  // dB x 100
	flux        uint16 // dB x 100
	pitch       uint16 // Hz x 10
	centroid    uint16 // Hz
	flat        uint8  // x 255
	voicing     uint8  // x 255
	tilt        int8   // dB x 2
}

func q16(v, scale float64) int16 {
	return int16(math.Round(max(-32767, min(32767, v*scale))))
}

func qu16(v, scale float64) uint16 {
	return uint16(math.Round(max(0, min(65535, v*scale))))
}

func qu8(v float64) uint8 { return uint8(math.Round(max(0, min(1, v)) * 255)) }

func (f feature) pack() packed {
	return packed{
		level: q16(float64(f.level), 100), band: q16(float64(f.band), 100),
		flux: qu16(float64(f.flux), 100), pitch: qu16(float64(f.pitch), 10), centroid: qu16(float64(f.centroid), 1),
		flat: qu8(float64(f.flat)), voicing: qu8(float64(f.voicing)),
		tilt: int8(math.Round(max(-127, min(127, 2*float64(f.tilt))))),
	}
}

func (p packed) unpack() feature {
	return feature{
		level: float32(p.level) / 100, band: float32(p.band) / 100,
		flux: float32(p.flux) / 100, pitch: float32(p.pitch) / 10, centroid: float32(p.centroid),
		flat: float32(p.flat) / 255, voicing: float32(p.voicing) / 255, tilt: float32(p.tilt) / 2,
	}
}

// featChunkBits sets the size of a featStore chunk: 4096 sub-blocks (41 s
// of audio, 57 KB).
const featChunkBits = 12

// featStore holds the packed features of a recording's sub-blocks in
// fixed chunks. Appending to one slice would copy the whole history at
// every doubling and leave up to as much again unused (30 MB for three
// hours with its copy, at the moment the analysis ends); chunks grow by
// 57 KB and nothing is copied. The zero value is empty; a nil *featStore
// is empty too (DropFeatures).
//
// A store made for classification only (classifyOnly) keeps the fields
// the activity and speech/music decisions read, 8 of the 14 bytes, in
// slim chunks; level, centroid and tilt, which only filler and cough
// detection read, read as zero.
type featStore struct {
	chunks       [][]packed
	slim         [][]slimFeat
	classifyOnly bool
	n            int
}

// slimFeat is the part of packed that classification reads.
type slimFeat struct {
	band          int16
	flux, pitch   uint16
	flat, voicing uint8
}

// add appends the features of the next sub-block.
func (s *featStore) add(p packed) {
	k := s.n & (1<<featChunkBits - 1)
	if s.classifyOnly {
		if k == 0 {
			s.slim = append(s.slim, make([]slimFeat, 1<<featChunkBits))
		}
		s.slim[len(s.slim)-1][k] = slimFeat{band: p.band, flux: p.flux, pitch: p.pitch, flat: p.flat, voicing: p.voicing}
	} else {
		if k == 0 {
			s.chunks = append(s.chunks, make([]packed, 1<<featChunkBits))
		}
		s.chunks[len(s.chunks)-1][k] = p
	}
	s.n++
}

// len returns the number of sub-blocks stored.
func (s *featStore) len() int {
	if s == nil {
		return 0
	}
	return s.n
}

// full reports whether the store holds every feature, as filler and
// cough detection need them.
func (s *featStore) full() bool { return s != nil && !s.classifyOnly }

// at returns the features of sub-block j.
func (s *featStore) at(j int) packed {
	if uint(j) >= uint(s.n) {
		panic("classify: sub-block index out of range")
	}
	c, k := j>>featChunkBits, j&(1<<featChunkBits-1)
	if s.classifyOnly {
		f := s.slim[c][k]
		return packed{band: f.band, flux: f.flux, pitch: f.pitch, flat: f.flat, voicing: f.voicing}
	}
	return s.chunks[c][k]
}

// Pitch range of the periodicity search, Hz.
const (
	minPitch = 60.0
	maxPitch = 500.0
)

// spectral computes the windowed-FFT features of one analysis frame. One
// per Classifier: it owns the FFT plans and all scratch space, so analysing
// a frame allocates nothing.
type spectral struct {
	fsd    float64 // sample rate of the frames it is given
	nw     int     // window length
	nfft   int
	fft    *fft.Real
	win    []float64
	in     []float64
	coef   []complex128
	pow    []float64
	winPow float64 // sum of squared window samples

	// Periodicity: the autocorrelation is the inverse transform of the
	// whitened low band of the power spectrum, at a reduced rate.
	nacf     int // inverse transform size
	acRate   float64
	ifft     *fft.Real
	acCoef   []complex128
	ac       []float64
	rw       []float64 // normalised autocorrelation of the window, per lag
	nac      []float64 // the frame's normalised autocorrelation, lagLo-1..lagHi+1
	lagLo    int
	lagHi    int
	whiteK   int // half width in bins of the whitening average
	prefix   []float64
	loBin    int // lowest bin of the periodicity band
	taper    []float64
	bandLo   int // speech band bins [bandLo, bandHi)
	bandHi   int
	tiltBin  int                    // first bin of the upper part of the tilt
	bands    [][2]int               // bins of the flatness/flux bands
	bandPow  [][]float64            // band densities of the last fluxLag+2 frames
	fluxDB   [fluxLag + 1][]float64 // two-frame band levels, dB, of the last fluxLag+1 frames
	floorDB  []float64              // slowly rising minimum of each band, dB
	blockSum []float64              // band densities summed over the current block
	prevSum  []float64              // and over the block before
	hadBlock bool                   // prevSum holds a block
	histPos  int
	histFill int
}

// silentFrame is the mean square (-110 dBFS) under which a frame is
// taken as digital silence.
const silentFrame = 1e-11

// floorRise is how fast, in dB per frame, a band's floor may rise: 5 dB
// per second, slow enough that a word does not lift it, fast enough to
// follow noise that grows.
const floorRise = 0.05

// fluxLag is how many frames back the spectral flux compares with (30 ms).
const fluxLag = 3

func newSpectral(fsd float64) *spectral {
	s := &spectral{fsd: fsd}
	s.nw = 2 * int(math.Round(0.02*fsd)) // 40 ms
	maxLag := int(math.Ceil(fsd / minPitch))
	s.nfft = 1
	for s.nfft < s.nw+maxLag+2 {
		s.nfft *= 2
	}
	s.fft = fft.NewReal(s.nfft)
	s.win = make([]float64, s.nw)
	for i := range s.win {
		s.win[i] = 0.5 - 0.5*math.Cos(2*math.Pi*(float64(i)+0.5)/float64(s.nw))
		s.winPow += s.win[i] * s.win[i]
	}
	s.in = make([]float64, s.nfft)
	s.coef = make([]complex128, s.nfft/2+1)
	s.pow = make([]float64, s.nfft/2+1)
	binHz := fsd / float64(s.nfft)
	bin := func(f float64) int { return min(s.nfft/2, int(math.Round(f/binHz))) }

	// The periodicity band ends at 4 kHz (or Nyquist): the inverse
	// transform of bins [0, nacf/2] runs at nacf/nfft of the rate.
	s.nacf = s.nfft
	for s.nacf > 64 && float64(s.nacf/2)*binHz > 4000 {
		s.nacf /= 2
	}
	s.acRate = fsd * float64(s.nacf) / float64(s.nfft)
	s.ifft = fft.NewReal(s.nacf)
	s.acCoef = make([]complex128, s.nacf/2+1)
	s.ac = make([]float64, s.nacf)
	s.lagLo = int(math.Floor(s.acRate / maxPitch))
	s.lagHi = min(int(math.Ceil(s.acRate/minPitch)), s.nacf/2-2)
	s.rw = make([]float64, s.lagHi+2)
	s.nac = make([]float64, s.lagHi+2)
	step := float64(s.nfft) / float64(s.nacf) // window samples per lag
	for l := range s.rw {
		d := int(math.Round(float64(l) * step))
		var r float64
		for i := 0; i+d < s.nw; i++ {
			r += s.win[i] * s.win[i+d]
		}
		s.rw[l] = r / s.winPow
	}
	s.whiteK = max(2, bin(500))
	s.prefix = make([]float64, s.nacf/2+2)
	s.loBin = max(1, bin(minPitch))
	// The whitened comb is tapered off towards the top of the band: its
	// autocorrelation peaks, as narrow as 1/bandwidth, grow wide enough
	// to be sampled at the reduced rate without losing their height.
	s.taper = make([]float64, s.nacf/2+1)
	for k := range s.taper {
		c := math.Cos(math.Pi / 2 * float64(k) / float64(len(s.taper)))
		s.taper[k] = c * c
	}

	s.bandLo, s.bandHi = max(1, bin(150)), bin(4000)
	s.tiltBin = bin(1000)
	top := min(7000, 0.45*fsd)
	for f := 300.0; ; {
		g := f * math.Pow(2, 1.0/3)
		if g > top {
			break
		}
		lo, hi := bin(f), bin(g)
		if hi > lo {
			s.bands = append(s.bands, [2]int{lo, hi})
		}
		f = g
	}
	s.floorDB = make([]float64, len(s.bands))
	for i := range s.floorDB {
		s.floorDB[i] = math.Inf(1)
	}
	s.blockSum = make([]float64, len(s.bands))
	s.prevSum = make([]float64, len(s.bands))
	s.bandPow = make([][]float64, fluxLag+2)
	for i := range s.bandPow {
		s.bandPow[i] = make([]float64, len(s.bands))
	}
	for i := range s.fluxDB {
		s.fluxDB[i] = make([]float64, len(s.bands))
	}
	return s
}

// analyse computes the features of the frame x (len nw, oldest first) into
// f (all but level).
func (s *spectral) analyse(x []float64, f *feature) {
	if s.silent(x) {
		// Digital silence (pauses of edited and synthetic audio) needs
		// no transform; it counts as a silent spectrum.
		clear(s.pow)
		clear(s.prefix)
	} else {
		clear(s.in[s.nw:])
		s.fft.Coefficients(s.coef, s.in)
		// The power spectrum, and periodicity's running sums of its low
		// band along with it: their chain of additions overlaps the
		// products.
		powerSpectrum(s.pow, s.prefix, s.coef, s.nacf/2)
	}
	// Mean square of the signal in a band from the one-sided spectrum.
	norm := 2 / (float64(s.nfft) * s.winPow)
	var band, moment, lowP, highP float64
	for k, p := range s.pow[s.bandLo:s.bandHi] {
		band += p
		moment += p * float64(k+s.bandLo)
		if k+s.bandLo < s.tiltBin {
			lowP += p
		} else {
			highP += p
		}
	}
	f.band = float32(toDB(band * norm))
	if band > 0 {
		f.centroid = float32(moment / band * s.fsd / float64(s.nfft))
	}
	f.tilt = float32(toDB(lowP*norm) - toDB(highP*norm))

	// Band densities: flatness and flux.
	cur := s.bandPow[s.histPos]
	var logSum, linSum float64
	for j, b := range s.bands {
		var p float64
		for _, v := range s.pow[b[0]:b[1]] {
			p += v
		}
		d := p/float64(b[1]-b[0])*norm + 1e-20
		logSum += math.Log(d)
		linSum += d
		cur[j] = d
		s.blockSum[j] += d
	}
	nb := float64(len(s.bands))
	if linSum > 1e-18*nb {
		f.flat = float32(math.Exp(logSum/nb) / (linSum / nb))
	} else {
		f.flat = 1
	}
	// Flux compares band levels averaged over two frames, fluxLag frames
	// apart: a 40 ms window sees the harmonics of mains hum beat against
	// each other from one 10 ms frame to the next, and two frames average
	// the beat out. It counts only bands where the sound stands 6 dB
	// above that band's floor (now or then): in noise, the bands the noise
	// covers would only add their random flutter and hide the changes of
	// the bands that carry the voice.
	h := len(s.bandPow)
	at := func(back int) []float64 { return s.bandPow[(s.histPos-back+h)%h] }
	// The two-frame level of every band, kept fluxLag frames for the
	// comparison, so that each is computed once.
	lvl := s.fluxDB[s.histFill%(fluxLag+1)]
	if s.histFill >= 1 {
		c0, c1 := at(0), at(1)
		for j := range lvl {
			lvl[j] = 10 * math.Log10((c0[j]+c1[j])/2)
		}
	}
	if s.histFill >= fluxLag+1 {
		then := s.fluxDB[(s.histFill+1)%(fluxLag+1)] // fluxLag frames ago
		var d float64
		n := 0
		for j := range cur {
			c, p := lvl[j], then[j]
			fl := s.floorDB[j] + 6
			if c > fl || p > fl {
				d += math.Abs(c - p)
				n++
			}
			s.floorDB[j] = min(c, s.floorDB[j]+floorRise)
		}
		if n > 0 {
			f.flux = float32(d / float64(n))
		}
	}
	s.histPos = (s.histPos + 1) % h
	s.histFill++

	f.voicing, f.pitch = s.periodicity()
}

// powerSpectrumGo sets pow to the power spectrum of coef (as long), and
// prefix[k+1] to the sum of pow[0..k] for k up to half, added in order
// (prefix[0] stays 0). powerSpectrum is powerSpectrumGo, or a kernel that
// computes the same values.
func powerSpectrumGo(pow, prefix []float64, coef []complex128, half int) {
	pre := prefix[: half+2 : half+2]
	pow = pow[:len(coef)]
	var acc float64
	for i, c := range coef[:half+1] {
		p := real(c)*real(c) + imag(c)*imag(c)
		pow[i] = p
		acc += p
		pre[i+1] = acc
	}
	for i, c := range coef[half+1:] {
		pow[half+1+i] = real(c)*real(c) + imag(c)*imag(c)
	}
}

// silent sets s.in[:len(x)] to the windowed frame and reports whether its
// energy, the sum of the squares in order, is below silentFrame*winPow.
// Four running sums decide it without the sum's chain of additions: sums
// of the same non-negative terms in any order lie within n*2^-53 of each
// other relative to their size (windows here have at most 960 samples, so
// 2^-40 is far beyond that), so only a sum that close to the threshold needs the sum in order.
func (s *spectral) silent(x []float64) bool {
	in := s.in[:len(x)]
	e0, e1, e2, e3 := windowSquares(in, x, s.win[:len(x)])
	thr := silentFrame * s.winPow
	const margin = 1.0 / (1 << 40)
	switch e := (e0 + e1) + (e2 + e3); {
	case e < thr*(1-margin):
		return true
	case e > thr*(1+margin):
		return false
	}
	var e float64 // NaN, or too close to call
	for _, v := range in {
		e += v * v
	}
	return e < thr
}

// windowSquaresGo sets in[i] = x[i]*win[i] and returns the sums of the
// squares of the values at i%4 = 0, 1, 2 and 3, each added in order (the
// last len(x)%4 values into the first). windowSquares is windowSquaresGo,
// or a kernel that computes the same values.
func windowSquaresGo(in, x, win []float64) (e0, e1, e2, e3 float64) {
	in, win = in[:len(x)], win[:len(x)]
	i := 0
	for ; i+3 < len(x); i += 4 {
		a, b, c, d := x[i]*win[i], x[i+1]*win[i+1], x[i+2]*win[i+2], x[i+3]*win[i+3]
		in[i], in[i+1], in[i+2], in[i+3] = a, b, c, d
		e0 += a * a
		e1 += b * b
		e2 += c * c
		e3 += d * d
	}
	for ; i < len(x); i++ {
		a := x[i] * win[i]
		in[i] = a
		e0 += a * a
	}
	return e0, e1, e2, e3
}

// periodicity whitens the low band of the power spectrum (each bin divided
// by the mean over +-500 Hz, which removes the spectral envelope: formants,
// the tilt of pink noise) and returns the highest peak of its normalised
// autocorrelation in the pitch range, corrected for the window (Boersma
// 1993), and the pitch it stands for. Whitening is what makes noise,
// white or coloured, score near zero while a harmonic comb scores high.
func (s *spectral) periodicity() (float32, float32) {
	half := s.nacf / 2
	// s.prefix[k] is the sum of pow[0..k), added in order by analyse.
	if s.prefix[half+1] <= 1e-18 {
		return 0, 0
	}
	// Bins whose window lies inside [0, half] go to the kernel in
	// groups of four where there is one; the loop takes the rest.
	in0, in1 := max(s.loBin, s.whiteK), half-s.whiteK+1
	skipTo := in0
	if in0 < in1 {
		skipTo = s.whitenInterior(in0, in1, s.whiteK)
	}
	for k := 0; k <= half; k++ {
		if k < s.loBin {
			s.acCoef[k] = 0
			continue
		}
		if k == in0 {
			k = skipTo
			if k > half {
				break
			}
		}
		lo, hi := max(0, k-s.whiteK), min(half+1, k+s.whiteK+1)
		m := (s.prefix[hi] - s.prefix[lo]) / float64(hi-lo)
		v := 0.0
		if m > 0 {
			v = s.pow[k] / m * s.taper[k]
		}
		s.acCoef[k] = complex(v, 0)
	}
	s.ifft.Sequence(s.ac, s.acCoef)
	r0 := s.ac[0]
	if r0 <= 0 {
		return 0, 0
	}
	// The window correction makes the peaks at every multiple of the
	// period about as high as the first; the shortest lag whose peak is
	// within 0.1 of the highest is the period (the others are octave and
	// fifth errors).
	nac := s.nac[:s.lagHi+2]
	normalise(nac, s.ac, s.rw, r0, s.lagLo-1, s.lagHi+2)
	nacf := func(l int) float64 { return nac[l] }
	peak := func(l int) bool {
		v := nac[l]
		return v > 0 && v >= nac[l-1] && v >= nac[l+1]
	}
	top := 0.0
	for l := s.lagLo; l <= s.lagHi; l++ {
		if peak(l) {
			top = max(top, nacf(l))
		}
	}
	if top == 0 {
		return 0, 0
	}
	bestL := s.lagLo
	for ; bestL <= s.lagHi; bestL++ {
		if peak(bestL) && nacf(bestL) >= top-0.1 {
			break
		}
	}
	// Parabolic interpolation of the peak.
	a, b, c := nacf(bestL-1), nacf(bestL), nacf(bestL+1)
	lag, v := float64(bestL), b
	if den := a - 2*b + c; den < 0 {
		d := 0.5 * (a - c) / den
		lag += d
		v = b - 0.25*(a-c)*d
	}
	return float32(min(v, 1)), float32(s.acRate / lag)
}

// endBlock closes a block (100 ms) and returns the largest change, in dB,
// of any band's mean level from the block before (bands within 50 dB of
// the strongest): near zero for hum or a steady tone, several dB where a
// note changes, a fraction of a dB for noise. The first block returns
// a large value.
func (s *spectral) endBlock() float32 {
	d := 99.0
	if s.hadBlock {
		var top float64
		for j := range s.blockSum {
			top = max(top, s.blockSum[j], s.prevSum[j])
		}
		d = 0
		for j, a := range s.blockSum {
			if b := s.prevSum[j]; max(a, b) > top*1e-5 {
				d = max(d, math.Abs(10*math.Log10((a+1e-30)/(b+1e-30))))
			}
		}
	}
	s.hadBlock = true
	s.blockSum, s.prevSum = s.prevSum, s.blockSum
	clear(s.blockSum)
	return float32(d)
}

func toDB(ms float64) float64 {
	if ms <= 1e-20 {
		return -200
	}
	return 10 * math.Log10(ms)
}
