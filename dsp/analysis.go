package dsp

import (
	"math"
	"sort"

	"gonum.org/v1/gonum/dsp/fourier"

	"github.com/audiopost/audiopost/audio"
)

// BlockSeconds is the analysis block length: BS.1770 gating blocks are
// built from four of them, short-term windows from thirty, and plans
// (leveler, loudness range) have one value per block.
const BlockSeconds = 0.1

// Absolute gate and level floor of the analysis, in LUFS.
const (
	absoluteGate = -70.0
	silenceDB    = -120.0
)

// Analyzer is a Sink that measures what the processing nodes need to know
// about a whole recording: the K-weighted level of every 100 ms block, its
// sample peak and spectral flatness, and the long-term spectrum. Memory is
// a few numbers per block (under 1 MB per hour) plus a fixed spectrum.
type Analyzer struct {
	format   audio.Format
	blockLen int
	kw       *cascade
	scratch  []float64
	scratch2 []float64

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
	accK   float64
	accRaw float64
	peak   float64

	energy []float64
	raw    []float64
	peaks  []float32
	flat   []float32
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

// NewAnalyzer returns an Analyzer for a stream of format f. With spectrum
// false it only measures levels (cheaper: a loudness pass).
func NewAnalyzer(f audio.Format, spectrum bool) *Analyzer {
	fs := float64(f.SampleRate)
	a := &Analyzer{format: f, blockLen: blockLen(f.SampleRate), spectrum: spectrum}
	k := KWeighting(fs)
	a.kw, _ = newCascade(k[:], f.Channels)
	if spectrum {
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
	return a
}

func blockLen(sampleRate int) int {
	return max(1, int(math.Round(float64(sampleRate)*BlockSeconds)))
}

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
	n := b.Frames()
	if cap(a.scratch) < n {
		a.scratch = make([]float64, n)
		a.scratch2 = make([]float64, n)
	}
	for off := 0; off < n; {
		m := min(n-off, a.blockLen-a.pos)
		if len(b) == 2 {
			// Stereo: filter both channels in one pass (see cascade.run2).
			kl, kr := a.scratch[:m], a.scratch2[:m]
			copy(kl, b[0][off:off+m])
			copy(kr, b[1][off:off+m])
			a.kw.run2(kl, kr)
			a.accumulate(b[0][off:off+m], kl)
			a.accumulate(b[1][off:off+m], kr)
		} else {
			for c := range b {
				x := b[c][off : off+m]
				k := a.scratch[:m]
				copy(k, x)
				a.kw.run(c, k)
				a.accumulate(x, k)
			}
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
			a.endBlock()
		}
	}
	return nil
}

// accumulate adds a channel's K-weighted energy, raw energy and peak.
func (a *Analyzer) accumulate(x, k []float64) {
	var sk, sr, pk float64
	k = k[:len(x)]
	for i, v := range x {
		sk += k[i] * k[i]
		sr += v * v
		pk = max(pk, math.Abs(v))
	}
	a.accK += sk
	a.accRaw += sr
	a.peak = max(a.peak, pk)
}

func (a *Analyzer) endBlock() {
	bl := float64(a.blockLen)
	e := a.accK / bl
	a.energy = append(a.energy, e)
	a.raw = append(a.raw, a.accRaw/bl/float64(a.format.Channels))
	a.peaks = append(a.peaks, float32(a.peak))
	if a.spectrum {
		// The spectrum of every third block is plenty for the long-term
		// spectra and cuts the FFT cost to a third; the blocks in between
		// reuse the last flatness (300 ms resolution is enough to tell
		// tonal music and noise bursts from voice).
		if len(a.energy)%spectrumEvery == 1 || spectrumEvery == 1 {
			a.flat = append(a.flat, float32(a.analyseSpectrum(e)))
		} else {
			a.flat = append(a.flat, a.flat[len(a.flat)-1])
		}
	}
	a.pos, a.accK, a.accRaw, a.peak = 0, 0, 0, 0
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
	lb := int(math.Floor(loudnessOf(energy))) - levelBinLow
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

// Analysis is what an Analyzer measured, with the derived voice activity,
// speech/music labels and summary levels.
type Analysis struct {
	// Format of the analysed stream.
	Format audio.Format
	// BlockLen is the analysis block in frames (100 ms).
	BlockLen int
	// Energy is the K-weighted mean square of every complete block, summed
	// over channels (BS.1770 channel weights 1).
	Energy []float64
	// Raw is the unweighted mean square per block, averaged over channels.
	Raw []float64
	// Peak is the sample peak of every block.
	Peak []float32
	// Voiced marks blocks with voice (or other foreground) activity.
	Voiced []bool
	// Music marks blocks classified as music rather than speech.
	Music []bool
	// NoiseFloor is the local noise floor per block, in dB (K-weighted).
	NoiseFloor []float64

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
	frames := int64(len(a.energy))*int64(a.blockLen) + int64(a.pos)
	if a.pos >= a.blockLen/4 && a.pos > 0 {
		// Scale the partial block as if it were complete.
		scale := float64(a.blockLen) / float64(a.pos)
		a.accK *= scale
		a.accRaw *= scale
		if a.spectrum {
			clear(a.mono[min(a.pos, a.nfft):])
		}
		a.endBlock()
	}
	an := &Analysis{
		Format: a.format, BlockLen: a.blockLen,
		Energy: a.energy, Raw: a.raw, Peak: a.peaks,
		flatness: a.flat, bands: a.bands, ltas: a.ltas, ltasN: a.ltasN, fine: a.fine, nfft: a.nfft,
		frames: frames,
	}
	an.classify()
	return an
}

// Frames is the number of frames analysed.
func (an *Analysis) Frames() int64 { return an.frames }

// BlockDB returns the K-weighted level of block i in LUFS.
func (an *Analysis) BlockDB(i int) float64 { return loudnessOf(an.Energy[i]) }

func loudnessOf(meanSquare float64) float64 {
	if meanSquare <= 0 {
		return silenceDB
	}
	return max(-0.691+10*math.Log10(meanSquare), silenceDB)
}

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
	an.NoiseFloor = slidingMin(smooth3(db), half)
	for i := range an.NoiseFloor {
		an.NoiseFloor[i] = max(an.NoiseFloor[i]+1, silenceDB)
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
		active := db[i] > an.NoiseFloor[i]+9 || (an.flatness != nil && flat < 0.03)
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

// Levels summarises an analysis the way the statistics report it.
type Levels struct {
	// Integrated is the BS.1770 gated programme loudness, LUFS.
	Integrated float64
	// Dialog is the loudness of voiced blocks only, LUFS.
	Dialog float64
	// RMS is the unweighted RMS level of the whole stream, dBFS.
	RMS float64
	// LRA is the EBU Tech 3342 loudness range, LU.
	LRA float64
	// MaxMomentary and MaxShortTerm are the highest 400 ms and 3 s
	// loudness values, LUFS.
	MaxMomentary, MaxShortTerm float64
	// SignalLevel and NoiseLevel are the power means of voiced and
	// unvoiced blocks, dB (K-weighted); SNR is their difference.
	SignalLevel, NoiseLevel, SNR float64
	// SamplePeak is the highest sample magnitude, dBFS.
	SamplePeak float64
}

// Levels computes the summary levels.
func (an *Analysis) Levels() Levels {
	var l Levels
	e := an.Energy
	mom := windowMeans(e, 4)
	st := windowMeans(e, 30)
	l.Integrated = gatedLoudness(mom, nil, 10)
	speech := make([]bool, len(mom))
	for j := range speech {
		v := 0
		for k := j; k < j+4 && k < len(an.Voiced); k++ {
			if an.Voiced[k] {
				v++
			}
		}
		speech[j] = v >= 2
	}
	l.Dialog = gatedLoudness(mom, speech, 10)
	l.LRA = loudnessRange(st)
	l.MaxMomentary, l.MaxShortTerm = silenceDB, silenceDB
	for _, m := range mom {
		l.MaxMomentary = max(l.MaxMomentary, loudnessOf(m))
	}
	for _, s := range st {
		l.MaxShortTerm = max(l.MaxShortTerm, loudnessOf(s))
	}
	if len(st) == 0 { // shorter than 3 s: the whole file is the window
		l.MaxShortTerm = loudnessOf(mean(e))
	}
	l.RMS = max(10*math.Log10(mean(an.Raw)), silenceDB)
	var sv, sn float64
	var nv, nn int
	for i, v := range an.Voiced {
		if v {
			sv += e[i]
			nv++
		} else {
			sn += e[i]
			nn++
		}
	}
	l.SignalLevel, l.NoiseLevel = silenceDB, silenceDB
	if nv > 0 {
		l.SignalLevel = loudnessOf(sv / float64(nv))
	}
	if nn > 0 {
		l.NoiseLevel = loudnessOf(sn / float64(nn))
	} else if len(an.NoiseFloor) > 0 {
		l.NoiseLevel = mean(an.NoiseFloor)
	}
	l.SNR = l.SignalLevel - l.NoiseLevel
	var pk float32
	for _, p := range an.Peak {
		pk = max(pk, p)
	}
	l.SamplePeak = max(GainToDB(float64(pk)), silenceDB)
	return l
}

func mean(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// windowMeans returns the mean of every run of w consecutive blocks (BS.1770
// gating blocks with 100 ms step: w=4 momentary, w=30 short-term).
func windowMeans(e []float64, w int) []float64 {
	if len(e) < w {
		if len(e) == 0 {
			return nil
		}
		if w == 4 {
			return []float64{mean(e)}
		}
		return nil
	}
	out := make([]float64, len(e)-w+1)
	var s float64
	for i := 0; i < w; i++ {
		s += e[i]
	}
	out[0] = s / float64(w)
	for i := w; i < len(e); i++ {
		s += e[i] - e[i-w]
		out[i-w+1] = s / float64(w)
	}
	return out
}

// gatedLoudness is the BS.1770 two-stage gated mean of blocks (keep limits
// it to blocks marked true) with the given relative gate in LU.
func gatedLoudness(blocks []float64, keep []bool, rel float64) float64 {
	var s float64
	var n int
	for i, b := range blocks {
		if (keep == nil || keep[i]) && loudnessOf(b) > absoluteGate {
			s += b
			n++
		}
	}
	if n == 0 {
		return silenceDB
	}
	gate := loudnessOf(s/float64(n)) - rel
	s, n = 0, 0
	for i, b := range blocks {
		if (keep == nil || keep[i]) && loudnessOf(b) > gate && loudnessOf(b) > absoluteGate {
			s += b
			n++
		}
	}
	return loudnessOf(s / float64(n))
}

// loudnessRange is EBU Tech 3342: the 10th to 95th percentile spread of
// short-term loudness above the absolute gate and 20 LU below their mean.
func loudnessRange(st []float64) float64 {
	var s float64
	var vals []float64
	for _, b := range st {
		if loudnessOf(b) > absoluteGate {
			s += b
			vals = append(vals, b)
		}
	}
	if len(vals) == 0 {
		return 0
	}
	gate := loudnessOf(s/float64(len(vals))) - 20
	kept := vals[:0]
	for _, b := range vals {
		if loudnessOf(b) > gate {
			kept = append(kept, loudnessOf(b))
		}
	}
	if len(kept) < 2 {
		return 0
	}
	sort.Float64s(kept)
	pct := func(p float64) float64 {
		return kept[int(math.Round(p*float64(len(kept)-1)))]
	}
	return pct(0.95) - pct(0.10)
}

// SpeechLevel is the power mean level of voiced speech blocks in LUFS (of
// all voiced blocks if there is no speech), silenceDB when nothing is
// voiced.
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
		return silenceDB
	}
	return loudnessOf(s / float64(n))
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
			f = append(f, an.NoiseFloor[i])
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

// Momentary returns the BS.1770 momentary loudness (400 ms) in LUFS of
// every window starting at block j (4 blocks).
func (an *Analysis) Momentary() []float64 { return toLUFS(windowMeans(an.Energy, 4)) }

// ShortTerm returns the short-term loudness (3 s) in LUFS of every window
// starting at block j (30 blocks).
func (an *Analysis) ShortTerm() []float64 { return toLUFS(windowMeans(an.Energy, 30)) }

func toLUFS(e []float64) []float64 {
	for i, v := range e {
		e[i] = loudnessOf(v)
	}
	return e
}

// GatedLoudness is the BS.1770 gated loudness in LUFS of a stream given
// the K-weighted mean square of its 100 ms blocks (as in Analysis.Energy).
func GatedLoudness(blockEnergy []float64) float64 {
	return gatedLoudness(windowMeans(blockEnergy, 4), nil, 10)
}
