package spectral

import (
	"fmt"
	"math"

	"github.com/audiopost/audiopost/audio"
)

// BlockFrames is the length, in frames, of the 100 ms blocks a voice
// activity mask describes: round(sampleRate*0.1), the block of the rest of
// audiopost's analysis, so the product's shared VAD can be passed in as is.
func BlockFrames(sampleRate int) int {
	return max(1, int(math.Round(float64(sampleRate)*0.1)))
}

// AnalyzerOptions configure the first pass.
type AnalyzerOptions struct {
	// VAD optionally marks, per BlockFrames block, whether a voice is
	// active (true). Given a mask, the noise profile is learnt from the
	// blocks it marks as free of voice, which is more reliable than any
	// guess from levels; without one (or with too few free blocks) the
	// Analyzer falls back to the quietest stretches of the file. Blocks
	// past the end of the mask count as unknown.
	VAD []bool
}

// Level rows of the histograms: 1 dB wide from -120 dBFS.
const (
	rowLow = -120
	rows   = 120
)

// Analyzer is the first pass of the restoration chain, an audio.Sink: it
// learns what the noise of a recording sounds like (its spectrum, from the
// passages without voice), how loud it is next to the speech, and whether
// mains hum is present, so that the Static denoiser, the automatic amounts
// and the Dehum node know the whole file before processing it. Memory is
// a fixed histogram (about 1 MB at 48 kHz) whatever the duration.
type Analyzer struct {
	format audio.Format
	n      int
	bins   int
	fft    rfft
	win    []float64
	buf    [][]float64 // per channel, n frames
	fill   int
	odd    bool
	spec   []complex128
	pow    []float64
	mono   []float64
	vad    []bool
	block  int
	pos    int64 // frames written

	hist [2]histogram // 0: all frames, 1: frames the VAD marks free of voice
	// voice: power of frames the VAD marks as voice.
	voicePow float64
	voiceN   int
	silent   int // frames of digital silence

	hum *humDetector
	rt  *rt60Estimator

	// The last two analysed frames: held, [1], until the frame after it is
	// known, since a frame is placed in the histograms by its neighbours'
	// level (see place).
	held [2]heldFrame
}

// heldFrame is an analysed frame waiting for its neighbours.
type heldFrame struct {
	pow    []float64
	ms     float64
	pos    int64
	silent bool
	ok     bool
}

type histogram struct {
	psd [rows][]float64
	pow [rows]float64
	cnt [rows]int
	n   int
}

func (h *histogram) add(row int, pow float64, psd []float64) {
	if h.psd[row] == nil {
		h.psd[row] = make([]float64, len(psd))
	}
	r := h.psd[row]
	for k, v := range psd {
		r[k] += v
	}
	h.pow[row] += pow
	h.cnt[row]++
	h.n++
}

// NewAnalyzer returns an Analyzer for a stream of format f.
func NewAnalyzer(f audio.Format, opts AnalyzerOptions) (*Analyzer, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	n := FFTSize(f.SampleRate)
	a := &Analyzer{format: f, n: n, bins: n/2 + 1, fft: newRFFT(n), win: sqrtHann(n),
		spec: make([]complex128, n/2+1), pow: make([]float64, n/2+1),
		vad: opts.VAD, block: BlockFrames(f.SampleRate), mono: make([]float64, audio.DefaultBlock)}
	a.buf = make([][]float64, f.Channels)
	for c := range a.buf {
		a.buf[c] = make([]float64, n)
	}
	for i := range a.held {
		a.held[i].pow = make([]float64, a.bins)
	}
	a.hum = newHumDetector(f.SampleRate)
	a.rt = newRT60Estimator(f.SampleRate)
	return a, nil
}

// Write implements audio.Sink.
func (a *Analyzer) Write(b audio.Buffer) error {
	if len(b) != a.format.Channels {
		return fmt.Errorf("%w: %d channels for a %d-channel stream", audio.ErrFormatMismatch, len(b), a.format.Channels)
	}
	total := b.Frames()
	for off := 0; off < total; {
		m := min(total-off, a.n-a.fill, len(a.mono))
		mono := a.mono[:m]
		clear(mono)
		for c := range b {
			copy(a.buf[c][a.fill:], b[c][off:off+m])
			for i, v := range b[c][off : off+m] {
				mono[i] += v
			}
		}
		inv := 1 / float64(len(b))
		for i := range mono {
			mono[i] *= inv
		}
		a.hum.write(mono)
		a.rt.write(mono)
		a.fill += m
		off += m
		if a.fill == a.n {
			// Every other frame is enough for the statistics and halves
			// the cost of the pass.
			if a.odd = !a.odd; a.odd {
				a.frame()
			}
			a.pos += int64(a.n)
			a.fill = 0
		}
	}
	return nil
}

// frame analyses one full frame of n samples.
func (a *Analyzer) frame() {
	clear(a.pow)
	var ms float64
	for c := range a.buf {
		for _, v := range a.buf[c] {
			ms += v * v
		}
		a.fft.forward(a.spec, a.buf[c], a.win)
		for k, z := range a.spec {
			a.pow[k] += real(z)*real(z) + imag(z)*imag(z)
		}
	}
	inv := 1 / float64(len(a.buf))
	for k := range a.pow {
		a.pow[k] *= inv
	}
	ms *= inv / float64(a.n)
	a.push(heldFrame{pow: a.pow, ms: ms, pos: a.pos, silent: ms < 1e-12, ok: true})
}

// push takes the newest analysed frame f (its pow is copied) and places
// the frame before it, whose neighbours are now both known.
func (a *Analyzer) push(f heldFrame) {
	prev, cur := &a.held[0], &a.held[1]
	if cur.ok {
		a.place(cur, prev, &f)
	}
	// Rotate: the held frame becomes the previous one, f the held one.
	buf := prev.pow
	*prev = *cur
	*cur = f
	cur.pow = buf
	if f.ok {
		copy(cur.pow, f.pow)
	}
}

// place adds frame f to the histograms, in the row of the loudest of it
// and its neighbours (p before, q after; either may be missing or digital
// silence). A frame placed by its own level alone would bias the noise
// low: the quietest frames of a noise are its troughs, where every bin
// happens to be low (the profile of the quietest tenth lay 2 to 8 dB
// under the noise of the tuning half's real recordings), whereas a frame
// whose neighbours are quiet is noise drawn nearly afresh (the analysed
// frames do not overlap), and a syllable between two quiet frames is
// placed by its own level, among the speech.
func (a *Analyzer) place(f, p, q *heldFrame) {
	if f.silent { // below -120 dBFS: digital silence, not noise
		a.silent++
		return
	}
	lvl := f.ms
	for _, nb := range []*heldFrame{p, q} {
		if nb.ok && !nb.silent {
			lvl = max(lvl, nb.ms)
		}
	}
	row := min(rows-1, max(0, int(math.Floor(10*math.Log10(lvl)))-rowLow))
	a.hist[0].add(row, f.ms, f.pow)
	if a.vad != nil {
		blk := (f.pos + int64(a.n/2)) / int64(a.block)
		if blk < int64(len(a.vad)) {
			if a.vad[blk] {
				a.voicePow += f.ms
				a.voiceN++
			} else {
				a.hist[1].add(row, f.ms, f.pow)
			}
		}
	}
}

// Profile is what the Analyzer learnt about a recording.
type Profile struct {
	// SampleRate and FFTSize say which STFT Noise belongs to.
	SampleRate, FFTSize int
	// Noise is the noise power spectrum per STFT bin, as the Denoiser sees
	// it (mean over channels of |X|^2 of a square-root-Hann windowed frame).
	Noise []float64
	// NoiseDB is the RMS level of the noise in dBFS (-Inf for digital
	// silence or an empty stream).
	NoiseDB float64
	// SpeechDB is the RMS level of the passages with voice in dBFS.
	SpeechDB float64
	// SNRDB is the speech-to-noise ratio: SpeechDB less the noise power,
	// over NoiseDB. It is +Inf when a tenth or more of the recording is
	// digital silence (its pauses hold no noise; NoiseDB is then -Inf),
	// and NaN when nothing stands out of the noise (a recording all at
	// one level).
	SNRDB float64
	// FromVAD reports that the noise came from the blocks the VAD mask
	// marks as free of voice, not from the Analyzer's own estimate.
	FromVAD bool
	// Hum is the detected mains hum.
	Hum Hum
	// RT60 is the reverberation time estimated from the free decays of
	// the recording, in seconds; 0 when too few decays were found. Below
	// 0.25 s the Denoiser takes the room as dry and reduces no reverb.
	RT60 float64
	// Frames is the number of frames analysed.
	Frames int64
}

// Finish ends the pass and returns the profile. The Analyzer must not be
// written to afterwards.
func (a *Analyzer) Finish() *Profile {
	if a.fill > 0 {
		// A partial last frame: analyse it padded with zeros, weighted as it is.
		for c := range a.buf {
			clear(a.buf[c][a.fill:])
		}
		if a.fill >= a.n/2 {
			a.frame()
		}
		a.pos += int64(a.fill)
		a.fill = 0
	}
	a.push(heldFrame{}) // places the last frame
	p := &Profile{SampleRate: a.format.SampleRate, FFTSize: a.n, Noise: make([]float64, a.bins),
		NoiseDB: math.Inf(-1), SpeechDB: math.Inf(-1), Frames: a.pos}
	p.Hum = a.hum.result()
	p.RT60 = a.rt.result()
	h := &a.hist[0]
	// About a second of noise: every other frame is analysed.
	minFrames := max(10, int(float64(a.format.SampleRate)/float64(2*a.n)))
	var hi int
	if a.vad != nil && a.hist[1].n >= minFrames {
		// Noise-only frames by the mask; keep the lower half (plus 3 dB)
		// so breaths and clicks in the pauses do not count as noise.
		h = &a.hist[1]
		hi = percentileRow(h, 0.5) + 3
		p.FromVAD = true
	} else {
		// The frames within noiseSpreadDB of the quietest tenth, at
		// most half of them, plus 1 dB: the pauses of speech, or the gaps
		// between words when there are none. A noise whose level wanders
		// (traffic, wind, a crowd) is louder on average than its quiet
		// moments, and the static gain needs that average.
		hi = min(percentileRow(h, 0.5), percentileRow(h, 0.1)+noiseSpreadDB) + 1
	}
	if h.n == 0 {
		return p
	}
	if a.silent > 0 && float64(a.silent) >= silentShare*float64(a.silent+a.hist[0].n) {
		// The pauses are digital silence: the recording has no noise
		// floor to reduce, and the quietest frames that are not silent
		// are the ends of words and the tails of the room, which the
		// estimate below would take for noise 20 or 30 dB under the
		// speech.
		var sp float64
		for r := range rows {
			sp += a.hist[0].pow[r]
		}
		p.SpeechDB = 10 * math.Log10(sp/float64(a.hist[0].n))
		p.SNRDB = math.Inf(1)
		return p
	}
	var pow float64
	cnt := 0
	for r := 0; r <= min(hi, rows-1); r++ {
		if h.cnt[r] == 0 {
			continue
		}
		for k, v := range h.psd[r] {
			p.Noise[k] += v
		}
		pow += h.pow[r]
		cnt += h.cnt[r]
	}
	for k := range p.Noise {
		p.Noise[k] /= float64(cnt)
	}
	noise := pow / float64(cnt)
	p.NoiseDB = 10 * math.Log10(noise)
	// Speech: the VAD's voice frames, else frames 10 dB above the noise.
	var sp float64
	spN := 0
	if p.FromVAD && a.voiceN > 0 {
		sp, spN = a.voicePow, a.voiceN
	} else {
		for r := min(rows, max(0, int(math.Ceil(p.NoiseDB))+10-rowLow)); r < rows; r++ {
			sp += a.hist[0].pow[r]
			spN += a.hist[0].cnt[r]
		}
	}
	p.SNRDB = math.NaN() // nothing louder than the noise: unknown
	if spN > 0 {
		s := sp / float64(spN)
		p.SpeechDB = 10 * math.Log10(s)
		p.SNRDB = 10 * math.Log10(math.Max(s-noise, noise*1e-3)/noise)
	}
	return p
}

// noiseSpreadDB is how far above the quietest tenth of the frames the
// noise profile reaches without a voice activity mask. On the tuning
// half's real noise a wider reach gained more (8 dB: static +5.4 dB
// SI-SDR on nonstationary noise, 4 dB: +3.5), but took the soft speech of
// espeak-ng phrases in white noise at 9 dB SNR for noise (the profile 1 dB
// over the noise at 6 dB, 0.5 dB at 4).
const noiseSpreadDB = 4

// silentShare is the share of the analysed frames that, when they are
// digital silence, makes the pauses of a recording silent rather than
// noisy.
const silentShare = 0.1

// percentileRow returns the histogram row below which fraction q of the
// frames lie.
func percentileRow(h *histogram, q float64) int {
	target := q * float64(h.n)
	acc := 0
	for r := 0; r < rows; r++ {
		acc += h.cnt[r]
		if float64(acc) >= target && acc > 0 {
			return r
		}
	}
	return rows - 1
}
