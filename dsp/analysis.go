package dsp

import (
	"context"
	"fmt"
	"math"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp/classify"
	"github.com/audiopost/audiopost/internal/fft"
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
	classes  *classify.Classifier
	apart    bool // the caller writes to classes

	spectrum bool
	nfft     int
	fft      *fft.Real
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

	// Sample peaks of the 10 ms hops (AnalyzerOptions.OnHopPeak): hop is
	// the hop within the block, hopEnd its end in frames of the block.
	onHopPeak func(float64)
	hop       int
	hopEnd    int
	hopPeak   float64

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
	// Classifier is the speech/music classifier's mode (classify.Auto by
	// default; SpeechOnly or MusicOnly where the material is known).
	Classifier classify.Mode
	// NoClasses leaves the classifier out: Voiced, Music and Classes of
	// the Analysis stay nil. The classifier is most of an analysis pass's
	// cost, and passes that measure processed audio take their labels
	// from the input's analysis anyway.
	NoClasses bool
	// ClassifyOnly has the classifier keep only what classification
	// needs (classify.Classifier.ClassifyOnly): the Classes then find no
	// fillers or coughs.
	ClassifyOnly bool
	// ClassifyApart leaves the classifier to the caller, who writes the
	// same blocks to Classifier, typically from a goroutine of its own
	// (audio.ParallelSink): classification is the larger part of an
	// analysis and shares nothing with the rest. Finish then takes the
	// labels from it.
	ClassifyApart bool
	// OnHopPeak, when set, is called with the sample peak of every 10 ms
	// hop of the meter (loudness.HopStart's grid, whole hops only), in
	// order: with the hops' K-weighted energies (loudness.Options.OnHop)
	// it lets a model of the limiter predict its loudness loss. The
	// caller keeps them as it likes (three hours have a million).
	OnHopPeak func(peak float64)
	// Blocks is the number of 100 ms blocks the stream is expected to
	// have (0: not known). The per-block arrays are then allocated once
	// instead of grown by doubling, which on a long programme holds the
	// old and the new array at once.
	Blocks int
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
	a := &Analyzer{format: f, blockLen: blockLen(f.SampleRate), spectrum: o.Spectrum, apart: o.ClassifyApart && !o.NoClasses}
	a.onHopPeak = o.OnHopPeak
	a.hopEnd = a.blockLen
	if a.onHopPeak != nil {
		a.hopEnd = loudness.HopStart(f.SampleRate, 1)
	}
	if n := o.Blocks + 1; o.Blocks > 0 {
		a.energy, a.raw, a.peaks = make([]float64, 0, n), make([]float64, 0, n), make([]float32, 0, n)
	}
	mo := o.Loudness
	mo.OnStep = func(e float64) { a.energy = append(a.energy, e) }
	m, err := loudness.NewMeter(f, mo)
	if err != nil {
		return nil, err
	}
	a.meter = m
	if !o.NoClasses {
		if a.classes, err = classify.NewClassifier(f, o.Classifier); err != nil {
			return nil, err
		}
		if o.ClassifyOnly {
			a.classes.ClassifyOnly()
		}
	}
	if o.Spectrum {
		n := 1
		for n*2 <= a.blockLen && n < 8192 {
			n *= 2
		}
		a.nfft = n
		a.fft = fft.NewReal(n)
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

// Classifier returns the classifier of an Analyzer made with
// ClassifyApart, which the caller writes the stream to; nil otherwise.
func (a *Analyzer) Classifier() *classify.Classifier {
	if !a.apart {
		return nil
	}
	return a.classes
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
	if a.classes != nil && !a.apart {
		if err := a.classes.Write(b); err != nil {
			return err
		}
	}
	n := b.Frames()
	for off := 0; off < n; {
		// Segments end at blocks and, with OnHopPeak, at hops (which
		// rounds Raw's sums differently, by an ulp or so).
		m := min(n-off, a.hopEnd-a.pos)
		var segPeak float64
		if len(b) == 2 {
			sl, sr, pk := levels2(b[0][off:off+m], b[1][off:off+m])
			a.accRaw += sl
			a.accRaw += sr
			segPeak = pk
		} else {
			for c := range b {
				sr, pk := levels1(b[c][off : off+m])
				a.accRaw += sr
				segPeak = max(segPeak, pk)
			}
		}
		a.peak = max(a.peak, segPeak)
		if a.onHopPeak != nil {
			a.hopPeak = max(a.hopPeak, segPeak)
			if a.pos+m == a.hopEnd {
				a.onHopPeak(a.hopPeak)
				a.hopPeak = 0
				a.hop = (a.hop + 1) % loudness.StepHops
				a.hopEnd = loudness.HopStart(a.format.SampleRate, a.hop+1)
			}
		}
		// Only the blocks endBlock transforms need their mono mix.
		if a.spectrum && a.pos < a.nfft && len(a.raw)%spectrumEvery == 0 {
			end := min(m, a.nfft-a.pos)
			inv := 1 / float64(len(b))
			mono := a.mono[a.pos : a.pos+end]
			if len(b) == 2 {
				l, r := b[0][off:off+end], b[1][off:off+end]
				for i := range mono {
					mono[i] = (l[i] + r[i]) * inv
				}
			} else {
				for i := range mono {
					var s float64
					for c := range b {
						s += b[c][off+i]
					}
					mono[i] = s * inv
				}
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

// Prime runs b, the frames just before the stream, through the meter's
// filters without analysing them (see loudness.Meter.Prime): the
// analyzer of the second part of a programme starts as one analysing the
// whole would be there.
func (a *Analyzer) Prime(b audio.Buffer) error {
	if err := checkShape(b, a.format.Channels); err != nil {
		return err
	}
	return a.meter.Prime(b)
}

// Append adds to a the analysis of next, which analysed the continuation
// of a's stream (see loudness.Meter.Append; next's Loudness.Offset is
// a's offset plus a's length). a's length must be a whole number of
// blocks, and neither may classify or take spectra: those need the whole
// stream. Afterwards a holds what one analyzer of both streams would, to
// within rounding, and may analyse on; next is spent.
func (a *Analyzer) Append(next *Analyzer) error {
	switch {
	case a.classes != nil || next.classes != nil || a.spectrum || next.spectrum:
		return fmt.Errorf("%w: only level analyses can be joined", loudness.ErrAppend)
	case a.pos != 0 || next.format != a.format || (a.onHopPeak == nil) != (next.onHopPeak == nil):
		return fmt.Errorf("%w: the first analysis ends inside a block, or the two differ", loudness.ErrAppend)
	}
	if err := a.meter.Append(next.meter); err != nil {
		return err
	}
	a.energy = append(a.energy, next.energy...)
	a.raw = append(a.raw, next.raw...)
	a.peaks = append(a.peaks, next.peaks...)
	a.pos, a.accRaw, a.peak = next.pos, next.accRaw, next.peak
	a.hop, a.hopEnd, a.hopPeak = next.hop, next.hopEnd, next.hopPeak
	return nil
}

// levels1 returns the sum of squares of x, added in order, and its sample
// peak. The peak compares the bit patterns of the magnitudes as integers,
// which order like the floats (NaN aside): the float max builtin's NaN
// handling would make the loop-carried maximum several times slower than
// the sum (loudness.Meter does the same).
func levels1(x []float64) (sum, peak float64) {
	var pk uint64
	for _, v := range x {
		sum += v * v
		pk = max(pk, math.Float64bits(v)&^(1<<63))
	}
	return sum, math.Float64frombits(pk)
}

// levels2Go is levels1 of two channels at once: each sum is still added
// in order, but the two chains of additions overlap. levels2 is
// levels2Go, or a kernel that computes the same values.
func levels2Go(l, r []float64) (sl, sr, peak float64) {
	r = r[:len(l)]
	var pl, pr uint64
	for i, v := range l {
		w := r[i]
		sl += v * v
		sr += w * w
		pl = max(pl, math.Float64bits(v)&^(1<<63))
		pr = max(pr, math.Float64bits(w)&^(1<<63))
	}
	return sl, sr, math.Float64frombits(max(pl, pr))
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

// Analysis is what an Analyzer measured, with the voice activity and the
// speech/music labels of package classify: one decision that the leveler,
// the compressor, the denoiser's noise profile and the dialog loudness all
// share.
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
	// Classes is the classifier's result: labels, 10 ms activity,
	// segments, and the cuts it can detect.
	Classes *classify.Result

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
	if a.classes == nil {
		return an
	}
	an.Classes = a.classes.Finish()
	an.Voiced = fitBools(an.Classes.Voiced, len(an.Energy))
	an.Music = make([]bool, len(an.Energy))
	for i, l := range an.Classes.Labels {
		if i < len(an.Music) {
			an.Music[i] = l == classify.Music
		}
	}
	return an
}

// Frames is the number of frames analysed.
func (an *Analysis) Frames() int64 { return an.frames }

// BlockDB returns the loudness of block i in LUFS (-Inf for silence).
func (an *Analysis) BlockDB(i int) float64 { return loudness.EnergyLUFS(an.Energy[i]) }

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
// the level-binned spectra (which are summed per loudness bin while the
// stream is read, before the voice activity is known): the loudness the
// quietest tenth of voiced blocks reaches, rounded up to the whole dB the
// bins are compared in (a bin's level is at or above the exact loudness
// exactly when it is at or above the rounded one), +Inf without voiced
// blocks. A histogram of whole dB finds it without copying and sorting the
// levels: it is called for every filter built, and for three hours the
// copies came to 16 MB of garbage just as the loudness pass begins.
func (an *Analysis) voiceThreshold() float64 {
	// hist[i] counts levels v with ceil(v) = levelBinLow+i, hist[0] those
	// at or below levelBinLow, hist[levelBins] those above every bin.
	var hist [levelBins + 1]int
	n := 0
	for i, v := range an.Voiced {
		db := an.BlockDB(i)
		if !v || math.IsInf(db, -1) {
			continue
		}
		n++
		switch c := math.Ceil(db) - levelBinLow; {
		case c <= 0:
			hist[0]++
		case c < levelBins:
			hist[int(c)]++
		default:
			hist[levelBins]++
		}
	}
	// The tenth is the element n/10 of the sorted levels: the lowest whole
	// level L with more than n/10 levels at or below it.
	cum := 0
	for i, h := range hist[:levelBins] {
		if cum += h; cum > n/10 {
			return float64(i + levelBinLow)
		}
	}
	return math.Inf(1)
}

// fitBools returns b cut or padded with false to n elements.
func fitBools(b []bool, n int) []bool {
	out := make([]bool, n)
	copy(out, b)
	return out
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
