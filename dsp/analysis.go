package dsp

import (
	"context"
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/dsp/fourier"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/loudness"
)

// BlockSeconds is the analysis block length: the 100 ms step of the
// loudness meter (loudness.StepFrames), so that plans (leveler, loudness
// range) line up with the meter's gating blocks and short-term windows.
const BlockSeconds = 0.1

// absoluteGate is BS.1770's absolute gate in LUFS: blocks below it carry no
// programme and are never voice.
const absoluteGate = -70.0

// Analyzer is a Sink that measures what the processing nodes need to know
// about a whole recording: the loudness of the stream and of every 100 ms
// block (from a loudness.Meter, the module's one K-weighting), each
// block's unweighted power, sample peak and spectral flatness, and the
// long-term spectrum. Memory is a few numbers per block (under 1 MB per
// hour) plus a fixed spectrum.
type Analyzer struct {
	format   audio.Format
	blockLen int
	meter    *loudness.Meter

	spectrum bool
	nfft     int
	fft      *fourier.FFT
	win      []float64
	mono     []float64
	coef     []complex128
	bands    []band
	bandPow  []float64
	ltas     [][]float64 // [level bin][band] summed band power
	ltasN    []int       // blocks per level bin
	fine     []float64   // summed power per FFT bin

	pos    int
	accRaw float64
	peak   float64

	energy []float64
	raw    []float64
	peaks  []float32
	flat   []float32
}

// AnalyzerOptions configure an Analyzer.
type AnalyzerOptions struct {
	// Spectrum adds the spectral measurements the filters need (long-term
	// spectra, flatness); without it the analysis is a cheaper level pass.
	Spectrum bool
	// Loudness configures the meter whose Result becomes
	// Analysis.Loudness; a zero Mode measures everything. OnStep must be
	// nil: the analyzer takes the step energies itself.
	Loudness loudness.Options
}

type band struct {
	centre     float64
	lo, hi     int // FFT bins [lo, hi)
	flatnessOK bool
}

// spectrumEvery is the stride, in blocks, of the spectral analysis.
const spectrumEvery = 3

// Level bins of the long-term spectrum: 1 dB wide from levelBinLow.
const (
	levelBinLow = -100
	levelBins   = 110
)

// NewAnalyzer returns an Analyzer for a stream of format f.
func NewAnalyzer(f audio.Format, o AnalyzerOptions) (*Analyzer, error) {
	if o.Loudness.OnStep != nil {
		return nil, fmt.Errorf("%w: the analyzer sets the meter's OnStep", ErrInvalidParameter)
	}
	fs := float64(f.SampleRate)
	a := &Analyzer{format: f, blockLen: blockLen(f.SampleRate), spectrum: o.Spectrum}
	mo := o.Loudness
	mo.OnStep = func(e float64) { a.energy = append(a.energy, e) }
	m, err := loudness.NewMeter(f, mo)
	if err != nil {
		return nil, err
	}
	a.meter = m
	if o.Spectrum {
		n := 1
		for n*2 <= a.blockLen && n < 8192 {
			n *= 2
		}
		a.nfft = n
		a.fft = fourier.NewFFT(n)
		a.win = make([]float64, n)
		for i := range a.win {
			a.win[i] = 0.5 - 0.5*math.Cos(2*math.Pi*float64(i)/float64(n))
		}
		a.mono = make([]float64, n)
		a.coef = make([]complex128, n/2+1)
		a.fine = make([]float64, n/2+1)
		a.bands = thirdOctaveBands(fs, n)
		a.bandPow = make([]float64, len(a.bands))
		a.ltas = make([][]float64, levelBins)
		a.ltasN = make([]int, levelBins)
		for i := range a.ltas {
			a.ltas[i] = make([]float64, len(a.bands))
		}
	}
	return a, nil
}

func blockLen(sampleRate int) int { return loudness.StepFrames(sampleRate) }

// thirdOctaveBands lays out the ISO third-octave bands from 20 Hz up to
// Nyquist over an n-point FFT; bands too narrow to hold a bin are dropped.
func thirdOctaveBands(fs float64, n int) []band {
	var out []band
	binHz := fs / float64(n)
	for k := -17; ; k++ {
		fc := 1000 * math.Pow(2, float64(k)/3)
		hiF := fc * math.Pow(2, 1.0/6)
		if hiF > fs/2 {
			break
		}
		lo := int(math.Ceil(fc * math.Pow(2, -1.0/6) / binHz))
		hi := int(math.Ceil(hiF / binHz))
		if hi <= lo {
			continue
		}
		out = append(out, band{centre: fc, lo: lo, hi: hi, flatnessOK: fc >= 100 && fc <= 8000})
	}
	return out
}

// Write implements audio.Sink.
func (a *Analyzer) Write(b audio.Buffer) error {
	if err := checkShape(b, a.format.Channels); err != nil {
		return err
	}
	// The meter completes its steps (and appends their energies) before
	// the blocks below close, so every closing block finds its energy.
	if err := a.meter.Write(b); err != nil {
		return err
	}
	n := b.Frames()
	for off := 0; off < n; {
		m := min(n-off, a.blockLen-a.pos)
		for c := range b {
			var sr, pk float64
			for _, v := range b[c][off : off+m] {
				sr += v * v
				pk = max(pk, math.Abs(v))
			}
			a.accRaw += sr
			a.peak = max(a.peak, pk)
		}
		if a.spectrum && a.pos < a.nfft {
			end := min(m, a.nfft-a.pos)
			inv := 1 / float64(len(b))
			for i := 0; i < end; i++ {
				var s float64
				for c := range b {
					s += b[c][off+i]
				}
				a.mono[a.pos+i] = s * inv
			}
		}
		a.pos += m
		off += m
		if a.pos == a.blockLen {
			a.endBlock(a.blockLen)
		}
	}
	return nil
}

// endBlock closes the block of frames frames (its energy is the last one
// the meter appended).
func (a *Analyzer) endBlock(frames int) {
	a.raw = append(a.raw, a.accRaw/float64(frames)/float64(a.format.Channels))
	a.peaks = append(a.peaks, float32(a.peak))
	if a.spectrum {
		// The spectrum of every third block is plenty for the long-term
		// spectra and cuts the FFT cost to a third; the blocks in between
		// reuse the last flatness (300 ms resolution is enough to tell
		// tonal music and noise bursts from voice).
		if len(a.raw)%spectrumEvery == 1 || spectrumEvery == 1 {
			a.flat = append(a.flat, float32(a.analyseSpectrum(a.energy[len(a.raw)-1])))
		} else {
			a.flat = append(a.flat, a.flat[len(a.flat)-1])
		}
	}
	a.pos, a.accRaw, a.peak = 0, 0, 0
}

// analyseSpectrum transforms the first nfft frames of the block, adds them
// to the long-term spectra and returns the block's spectral flatness.
func (a *Analyzer) analyseSpectrum(energy float64) float64 {
	for i := range a.mono {
		a.mono[i] *= a.win[i]
	}
	a.fft.Coefficients(a.coef, a.mono)
	for i, c := range a.coef {
		a.fine[i] += real(c)*real(c) + imag(c)*imag(c)
	}
	lb := levelBins - 1
	if l := loudness.EnergyLUFS(energy); !math.IsInf(l, -1) {
		lb = int(math.Floor(l)) - levelBinLow
	} else {
		lb = 0
	}
	lb = min(max(lb, 0), levelBins-1)
	a.ltasN[lb]++
	var logSum, linSum float64
	var nf int
	for j, bd := range a.bands {
		var p float64
		for _, c := range a.coef[bd.lo:bd.hi] {
			p += real(c)*real(c) + imag(c)*imag(c)
		}
		a.ltas[lb][j] += p
		if bd.flatnessOK {
			d := p/float64(bd.hi-bd.lo) + 1e-30
			logSum += math.Log(d)
			linSum += d
			nf++
		}
	}
	if nf == 0 || linSum < 1e-20 {
		return 1
	}
	return math.Exp(logSum/float64(nf)) / (linSum / float64(nf))
}

// Analysis is what an Analyzer measured, with the derived voice activity
// and speech/music labels.
type Analysis struct {
	// Format of the analysed stream.
	Format audio.Format
	// BlockLen is the analysis block in frames (100 ms).
	BlockLen int
	// Loudness is the meter's reading of the whole stream.
	Loudness loudness.Result
	// Energy is the channel-weighted K-weighted mean square of every
	// block (the meter's step energies; see loudness.Options.OnStep).
	Energy []float64
	// Raw is the unweighted mean square per block, averaged over channels.
	Raw []float64
	// Peak is the sample peak of every block.
	Peak []float32
	// Voiced marks blocks with voice (or other foreground) activity.
	Voiced []bool
	// Music marks blocks classified as music rather than speech.
	Music []bool

	// floor is the local background level per block in LUFS, what the
	// voice activity is measured against.
	floor []float64

	flatness []float32
	bands    []band
	ltas     [][]float64
	ltasN    []int
	fine     []float64
	nfft     int
	frames   int64
}

// Finish completes the analysis. The Analyzer must not be written to
// afterwards. A trailing partial block is measured if it is at least a
// quarter block long.
func (a *Analyzer) Finish() *Analysis {
	frames := int64(len(a.raw))*int64(a.blockLen) + int64(a.pos)
	if a.pos >= a.blockLen/4 && a.pos > 0 {
		// Measure the partial block as the mean over its frames.
		e, n := a.meter.PendingStep()
		a.energy = append(a.energy, e/float64(max(n, 1)))
		if a.spectrum {
			clear(a.mono[min(a.pos, a.nfft):])
		}
		a.endBlock(a.pos)
	}
	a.energy = a.energy[:len(a.raw)]
	an := &Analysis{
		Format: a.format, BlockLen: a.blockLen, Loudness: a.meter.Result(),
		Energy: a.energy, Raw: a.raw, Peak: a.peaks,
		flatness: a.flat, bands: a.bands, ltas: a.ltas, ltasN: a.ltasN, fine: a.fine, nfft: a.nfft,
		frames: frames,
	}
	an.classify()
	return an
}

// Frames is the number of frames analysed.
func (an *Analysis) Frames() int64 { return an.frames }

// BlockDB returns the loudness of block i in LUFS (-Inf for silence).
func (an *Analysis) BlockDB(i int) float64 { return loudness.EnergyLUFS(an.Energy[i]) }

// classify derives the noise floor, voice activity and speech/music labels.
func (an *Analysis) classify() {
	n := len(an.Energy)
	db := make([]float64, n)
	for i := range db {
		db[i] = an.BlockDB(i)
	}
	// Minimum statistics: the noise floor is the quietest level within
	// +-3 s, raised slightly (a floor is never the single quietest block),
	// which follows slowly changing noise without learning speech as noise.
	const half = 30
	an.floor = slidingMin(smooth3(db), half)
	for i := range an.floor {
		an.floor[i]++
	}
	voiced := make([]bool, n)
	for i := range voiced {
		flat := float32(0)
		if an.flatness != nil {
			flat = an.flatness[i]
		}
		// Foreground: clearly above the local floor and above the absolute
		// gate; white-ish noise bursts (flatness near 1) are not voice.
		// Strongly tonal blocks (music, sustained notes) have no pauses to
		// learn a floor from, so they count as foreground by their tonality.
		active := db[i] > an.floor[i]+9 || (an.flatness != nil && flat < 0.03)
		voiced[i] = active && db[i] > absoluteGate+10 && flat < 0.7
	}
	// Close gaps up to 200 ms (stops, short pauses inside words), then drop
	// isolated single blocks (clicks), then add 100 ms of hangover.
	fillGaps(voiced, 2)
	dropShortRuns(voiced, 2)
	v2 := append([]bool(nil), voiced...)
	for i := range voiced {
		if voiced[i] {
			if i > 0 {
				v2[i-1] = true
			}
			if i+1 < n {
				v2[i+1] = true
			}
		}
	}
	an.Voiced = v2
	an.Music = musicLabels(an.Energy, an.Voiced)
}

func smooth3(x []float64) []float64 {
	out := make([]float64, len(x))
	for i := range x {
		s, c := x[i], 1.0
		if i > 0 {
			s += x[i-1]
			c++
		}
		if i+1 < len(x) {
			s += x[i+1]
			c++
		}
		out[i] = s / c
	}
	return out
}

// slidingMin returns the minimum of x over [i-half, i+half] for every i,
// in O(n) with a monotonic deque.
func slidingMin(x []float64, half int) []float64 {
	n := len(x)
	out := make([]float64, n)
	dq := make([]int, 0, 2*half+2)
	next := 0
	for i := 0; i < n; i++ {
		for ; next < n && next <= i+half; next++ {
			for len(dq) > 0 && x[dq[len(dq)-1]] >= x[next] {
				dq = dq[:len(dq)-1]
			}
			dq = append(dq, next)
		}
		for dq[0] < i-half {
			dq = dq[1:]
		}
		out[i] = x[dq[0]]
	}
	return out
}

func fillGaps(v []bool, maxGap int) {
	last := -1
	for i := range v {
		if !v[i] {
			continue
		}
		if last >= 0 && i-last-1 <= maxGap {
			for j := last + 1; j < i; j++ {
				v[j] = true
			}
		}
		last = i
	}
}

func dropShortRuns(v []bool, minRun int) {
	for i := 0; i < len(v); {
		if !v[i] {
			i++
			continue
		}
		j := i
		for j < len(v) && v[j] {
			j++
		}
		if j-i < minRun {
			for k := i; k < j; k++ {
				v[k] = false
			}
		}
		i = j
	}
}

// musicLabels classifies blocks as music by the low short-time energy
// ratio (the share of blocks more than 3 dB below the local mean over a
// 3 s window): speech, with its syllable and phrase gaps, has many such
// blocks, sustained music few. The raw labels are smoothed by a majority
// vote over 5 s and runs shorter than 3 s are absorbed by their neighbours,
// so a label never flips within a sentence.
func musicLabels(energy []float64, voiced []bool) []bool {
	n := len(energy)
	const w = 15
	raw := make([]bool, n)
	for i := range raw {
		lo, hi := max(0, i-w), min(n, i+w+1)
		var mean float64
		act := 0
		for j := lo; j < hi; j++ {
			mean += energy[j]
			if voiced[j] {
				act++
			}
		}
		mean /= float64(hi - lo)
		low := 0
		for j := lo; j < hi; j++ {
			if energy[j] < 0.5*mean {
				low++
			}
		}
		raw[i] = float64(act) > 0.9*float64(hi-lo) && float64(low) < 0.08*float64(hi-lo)
	}
	out := make([]bool, n)
	const vote = 25
	cnt := 0
	for j := 0; j < min(n, vote); j++ {
		if raw[j] {
			cnt++
		}
	}
	for i := range out {
		lo, hi := i-vote, i+vote
		if hi < n && raw[hi] {
			cnt++
		}
		if lo-1 >= 0 && raw[lo-1] {
			cnt--
		}
		span := min(n, hi+1) - max(0, lo)
		out[i] = 2*cnt > span
	}
	// Absorb short runs of either label.
	for i := 0; i < n; {
		j := i
		for j < n && out[j] == out[i] {
			j++
		}
		if j-i < 30 && (i > 0 || j < n) {
			for k := i; k < j; k++ {
				out[k] = !out[k]
			}
		}
		i = j
	}
	return out
}

// SpeechLevel is the power mean level of voiced speech blocks in LUFS (of
// all voiced blocks if there is no speech), -Inf when nothing is voiced.
func (an *Analysis) SpeechLevel() float64 {
	var s float64
	var n int
	for i, v := range an.Voiced {
		if v && !an.Music[i] {
			s += an.Energy[i]
			n++
		}
	}
	if n == 0 {
		for i, v := range an.Voiced {
			if v {
				s += an.Energy[i]
				n++
			}
		}
	}
	if n == 0 {
		return math.Inf(-1)
	}
	return loudness.EnergyLUFS(s / float64(n))
}

// BandLevel is one band of a long-term spectrum.
type BandLevel struct {
	// Centre frequency in Hz.
	Centre float64
	// Level is the band power in dB (relative: only differences between
	// bands are meaningful).
	Level float64
}

// Spectrum returns the long-term third-octave spectrum, mean power per
// block, of the voiced blocks (voiced true) or of the other blocks (false).
// Without a spectrum analysis or without such blocks it returns nil.
func (an *Analysis) Spectrum(voiced bool) []BandLevel {
	if an.ltas == nil {
		return nil
	}
	thr := an.voiceThreshold()
	sum := make([]float64, len(an.bands))
	n := 0
	for lb := range an.ltas {
		level := float64(lb + levelBinLow)
		if (level >= thr) != voiced {
			continue
		}
		n += an.ltasN[lb]
		for j, p := range an.ltas[lb] {
			sum[j] += p
		}
	}
	if n == 0 {
		return nil
	}
	out := make([]BandLevel, len(an.bands))
	for j, bd := range an.bands {
		out[j] = BandLevel{Centre: bd.centre, Level: 10 * math.Log10(sum[j]/float64(n)+1e-30)}
	}
	return out
}

// voiceThreshold is a single level separating voiced from other blocks for
// the level-binned spectra: the median of the voiced blocks' noise floor
// plus the voicing margin.
func (an *Analysis) voiceThreshold() float64 {
	var f []float64
	for i, v := range an.Voiced {
		if v {
			f = append(f, an.floor[i])
		}
	}
	if len(f) == 0 {
		return math.Inf(1)
	}
	sort.Float64s(f)
	return f[len(f)/2] + 9
}

// FineSpectrum returns the long-term power spectrum in dB per FFT bin and
// the bin spacing in Hz.
func (an *Analysis) FineSpectrum() (db []float64, binHz float64) {
	if an.fine == nil {
		return nil, 0
	}
	db = make([]float64, len(an.fine))
	for i, p := range an.fine {
		db[i] = 10 * math.Log10(p+1e-30)
	}
	return db, float64(an.Format.SampleRate) / float64(an.nfft)
}

// Analyze reads src to its end through an Analyzer: the first pass of a
// two-pass graph, whose Analysis the nodes of the second pass are built
// from. It does not close src.
func Analyze(ctx context.Context, src audio.Source, o AnalyzerOptions) (*Analysis, error) {
	a, err := NewAnalyzer(src.Format(), o)
	if err != nil {
		return nil, err
	}
	if _, err := audio.Copy(ctx, a, src); err != nil {
		return nil, err
	}
	return a.Finish(), nil
}
