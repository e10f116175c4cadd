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

// ProfilerOptions configure the first pass.
type ProfilerOptions struct {
	// VAD optionally marks, per BlockFrames block, whether a voice is
	// active (true). Given a mask, the noise profile is learnt from the
	// blocks it marks as free of voice, which is more reliable than any
	// guess from levels; without one (or with too few free blocks) the
	// Profiler falls back to the quietest stretches of the file. Blocks
	// past the end of the mask count as unknown.
	VAD []bool
	// NoRoom leaves out the room model (RT60 and direct-to-reverberant
	// ratio), which only the reverb reduction reads and which costs about
	// half the pass: the Profile then says dry (RT60 0, DRRDB +Inf).
	// Restoration.ReducesReverb tells whether a restoration needs it.
	NoRoom bool
}

// Level rows of the histograms: 1 dB wide from -120 dBFS.
const (
	rowLow = -120
	rows   = 120
)

// Profiler is the first pass of the restoration chain, an audio.Sink: it
// learns what the noise of a recording sounds like (its spectrum, from the
// passages without voice), how loud it is next to the speech, and whether
// mains hum is present, so that the Static denoiser, the automatic amounts
// and the Dehum node know the whole file before processing it, and how
// reverberant the room is. Memory is fixed histograms (1 to 2 MB at 48
// kHz) and the room model's band levels, 1 KB a second of audio (3.6 MB
// an hour).
type Profiler struct {
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
	// The same frames by their own level: the floor the SNR is measured
	// against, and the profile of a quiet recording.
	own [2]histogram
	// voice: power of frames the VAD marks as voice.
	voicePow float64
	voiceN   int
	silent   int // frames of digital silence

	// Each bin's level over the analysed frames that are not digital
	// silence (binRows rows of binRowsPerOctave per octave of power, from
	// binLowLog2): the floor Noise takes where the mask finds no pauses.
	binHist []uint32
	binN    int
	rows    []int32 // a frame's row of each bin (countBins)

	hum *humDetector
	rt  *rt60Estimator
	sn  *staticNoise // Static's profile from speech presence (staticnoise.go)
	// snDone: the mask has marked enough pauses for the profile to be
	// theirs (FromVAD), which makes sn's of no use: it is fed no more.
	snDone bool
	// sharedFrames counts the frames whose power came from sn's.
	sharedFrames int

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

// meanPSD writes into out, which holds zeros, the mean spectrum of the
// frames in rows 0 to hi.
func (h *histogram) meanPSD(hi int, out []float64) {
	cnt := 0
	for r := 0; r <= min(hi, rows-1); r++ {
		if h.cnt[r] == 0 {
			continue
		}
		for k, v := range h.psd[r] {
			out[k] += v
		}
		cnt += h.cnt[r]
	}
	for k := range out {
		out[k] /= float64(max(cnt, 1))
	}
}

// add counts a frame of power pow and spectrum psd (nil: the level
// alone) in row.
func (h *histogram) add(row int, pow float64, psd []float64) {
	if psd != nil {
		if h.psd[row] == nil {
			h.psd[row] = make([]float64, len(psd))
		}
		r := h.psd[row]
		for k, v := range psd {
			r[k] += v
		}
	}
	h.pow[row] += pow
	h.cnt[row]++
	h.n++
}

// NewProfiler returns an Profiler for a stream of format f.
func NewProfiler(f audio.Format, opts ProfilerOptions) (*Profiler, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	n := FFTSize(f.SampleRate)
	a := &Profiler{format: f, n: n, bins: n/2 + 1, fft: newRFFT(n), win: sqrtHann(n),
		spec: make([]complex128, n/2+1), pow: make([]float64, n/2+1),
		vad: opts.VAD, block: BlockFrames(f.SampleRate), mono: make([]float64, audio.DefaultBlock)}
	a.buf = make([][]float64, f.Channels)
	for c := range a.buf {
		a.buf[c] = make([]float64, n)
	}
	for i := range a.held {
		a.held[i].pow = make([]float64, a.bins)
	}
	a.binHist = make([]uint32, a.bins*binRows)
	a.rows = make([]int32, a.bins)
	a.hum = newHumDetector(f.SampleRate)
	a.sn = newStaticNoise(f.SampleRate)
	if !opts.NoRoom {
		a.rt = newRT60Estimator(f.SampleRate)
	}
	return a, nil
}

// Write implements audio.Sink.
func (a *Profiler) Write(b audio.Buffer) error {
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
		if !a.snDone {
			a.sn.write(mono)
		}
		if a.rt != nil {
			a.rt.write(mono)
		}
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

// profilerSharesFrames: the Profiler takes a mono frame's power from
// Static's presence profile when it has it (false in a test only).
var profilerSharesFrames = true

// frame analyses one full frame of n samples.
func (a *Profiler) frame() {
	clear(a.pow)
	var ms float64
	// On a mono stream Static's presence profile may have transformed the
	// frame already (same size, window and samples: the same power).
	var shared []float64
	if len(a.buf) == 1 && !a.snDone && profilerSharesFrames {
		shared = a.sn.powOf(a.pos)
	}
	for c := range a.buf {
		for _, v := range a.buf[c] {
			ms += v * v
		}
		if shared != nil {
			copy(a.pow, shared)
			a.sharedFrames++
			continue
		}
		a.fft.forwardPow(a.spec, a.pow, a.buf[c], a.win)
	}
	inv := 1 / float64(len(a.buf))
	for k := range a.pow {
		a.pow[k] *= inv
	}
	ms *= inv / float64(a.n)
	if ms >= 1e-12 {
		a.countBins()
	}
	a.push(heldFrame{pow: a.pow, ms: ms, pos: a.pos, silent: ms < 1e-12, ok: true})
}

// push takes the newest analysed frame f (its pow is copied) and places
// the frame before it, whose neighbours are now both known.
func (a *Profiler) push(f heldFrame) {
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
func (a *Profiler) place(f, p, q *heldFrame) {
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
	ownRow := min(rows-1, max(0, int(math.Floor(10*math.Log10(f.ms)))-rowLow))
	a.hist[0].add(row, f.ms, f.pow)
	a.own[0].add(ownRow, f.ms, f.pow)
	if a.vad != nil {
		blk := (f.pos + int64(a.n/2)) / int64(a.block)
		if blk < int64(len(a.vad)) {
			if a.vad[blk] {
				a.voicePow += f.ms
				a.voiceN++
			} else {
				a.hist[1].add(row, f.ms, f.pow)
				a.own[1].add(ownRow, f.ms, f.pow)
				a.snDone = a.hist[1].n >= a.minPauseFrames()
			}
		}
	}
}

// minPauseFrames is how many analysed frames the mask must mark as pauses
// for the profile to be theirs: about a second of noise (every other
// frame is analysed).
func (a *Profiler) minPauseFrames() int {
	return max(10, int(float64(a.format.SampleRate)/float64(2*a.n)))
}

// The per-bin level histograms: rows of a third of an octave of power
// (1 dB) from 2^binLowLog2 of full scale (-211 dB) to +11 dB.
const (
	binRowsPerOctave = 3
	binLowLog2       = -70
	binRows          = (4 - binLowLog2) * binRowsPerOctave
)

// countBins counts each bin's power in a.pow, averaged with its two
// neighbours (which narrows the spread of a noise's periodogram), in its
// row of binHist.
func (a *Profiler) countBins() {
	scale := 4 / float64(a.n) / float64(a.n)
	// The mean's factor for three bins and for the two at either end,
	// divided once rather than per bin.
	by3, by2 := scale/3, scale/2
	last := a.bins - 1
	rows := a.rows
	binRowsOf(a.pow, rows, by3)
	rows[0] = int32(binRow((a.pow[0] + a.pow[1]) * by2))
	rows[last] = int32(binRow((a.pow[last-1] + a.pow[last]) * by2))
	for k, r := range rows {
		a.binHist[k*binRows+int(r)]++
	}
	a.binN++
}

// binFloor sets noise to each bin's binQuantile over the file, times
// binBias: minimum statistics over the whole recording. A voice covers a
// bin for a part of the frames only (between its harmonics, above its
// formants, in the gaps between syllables), so the low part of each bin's
// distribution is noise even where the voice never pauses.
func (a *Profiler) binFloor(noise []float64) {
	scale := 4 / float64(a.n) / float64(a.n)
	target := binQuantile * float64(a.binN)
	for k := range noise {
		h := a.binHist[k*binRows : (k+1)*binRows]
		acc := 0.0
		row := float64(binRows)
		for r, c := range h {
			if acc+float64(c) >= target && c > 0 {
				row = float64(r) + (target-acc)/float64(c)
				break
			}
			acc += float64(c)
		}
		noise[k] = binBias * math.Exp2(row/binRowsPerOctave+binLowLog2) / scale
	}
}

// binQuantile and binBias make binFloor's estimate: the quantile of each
// bin's smoothed power taken, and the factor from it to the mean of a
// stationary noise (measured on white noise: TestBinFloorWhite).
//
// A higher quantile stays closer to the mean but takes in more speech: on
// the tuning half's real noise at 5-15 dB SNR (11 mixes, none with pauses
// the mask found) static gained +3.2 dB SI-SDR at 0.1, +3.6 at 0.2, +3.8
// at 0.3 and +3.7 at 0.4.
const (
	binQuantile = 0.3
	binBias     = 1.73
)

// Profile is what the Profiler learnt about a recording.
type Profile struct {
	// SampleRate and FFTSize say which STFT Noise belongs to.
	SampleRate, FFTSize int
	// Noise is the noise power spectrum per STFT bin, as the Denoiser sees
	// it (mean over channels of |X|^2 of a square-root-Hann windowed frame):
	// the mean of the VAD's pauses, or without them of the quietest
	// frames, each bin bounded by its own floor over the file (minimum
	// statistics, bias compensated).
	Noise []float64
	// NoiseDB is the RMS level of the noise floor in dBFS (-Inf for
	// digital silence or an empty stream): the quietest tenth of the
	// frames by their own level, plus 1 dB, or the lower half of the
	// VAD's pauses. Noise is the noise's mean, so its level may lie above
	// NoiseDB.
	NoiseDB float64
	// SpeechDB is the RMS level of the passages with voice in dBFS.
	SpeechDB float64
	// SNRDB is the speech-to-noise ratio: SpeechDB less the noise power,
	// over NoiseDB. It is +Inf when a tenth or more of the recording is
	// digital silence (its pauses hold no noise; NoiseDB is then -Inf),
	// and NaN when nothing stands out of the noise (a recording all at
	// one level).
	SNRDB float64
	// StaticNoise, when not nil, is the noise power spectrum the Static
	// method reduces instead of Noise, per bin as Noise: the mean power
	// of the cells speech isolation's network takes for noise
	// (staticnoise.go), which follows the mean of noise that swells and
	// fades where Noise, learnt from the quietest frames, lies under it.
	// It is set where Noise comes from neither the VAD's pauses nor a
	// quiet recording, and the quietest frames hold more than noise
	// (staticPauseDB); nil otherwise, or when the recording is too short.
	StaticNoise []float64
	// FromVAD reports that the noise came from the blocks the VAD mask
	// marks as free of voice, not from the Profiler's own estimate.
	FromVAD bool
	// Hum is the detected mains hum.
	Hum Hum
	// RT60 is the reverberation time of the room model that fits the
	// recording best (rt60Estimator), in seconds; 0 for a dry recording.
	// Below 0.25 s the Denoiser takes the room as dry and reduces no
	// reverb.
	RT60 float64
	// DRRDB is how far the reverberation lies under the direct sound, in
	// dB, as the room model fits the recording (rt60Estimator): +Inf for a
	// dry recording. The Denoiser removes less of a room that holds
	// little.
	DRRDB float64
	// Frames is the number of frames analysed.
	Frames int64
}

// Finish ends the pass and returns the profile. The Profiler must not be
// written to afterwards.
func (a *Profiler) Finish() *Profile {
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
	// The room is fitted last, against the noise floor found below.
	if a.rt != nil {
		defer a.rt.fit(p)
	} else {
		p.RT60, p.DRRDB = 0, math.Inf(1)
	}
	h, fl := &a.hist[0], &a.own[0]
	var hi, flHi int
	if a.vad != nil && a.hist[1].n >= a.minPauseFrames() {
		// Noise-only frames by the mask; keep the lower half (plus 3 dB)
		// so breaths and clicks in the pauses do not count as noise.
		h, fl = &a.hist[1], &a.own[1]
		hi = percentileRow(h, 0.5) + 3
		flHi = percentileRow(fl, 0.5) + 3
		p.FromVAD = true
	} else {
		// The floor: the quietest tenth of the frames, plus 1 dB.
		flHi = percentileRow(fl, 0.1) + 1
		// The frames within noiseSpreadDB of the quietest tenth, at
		// most half of them, plus 1 dB: the pauses of speech, or the gaps
		// between words when there are none.
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
	// The level the SNR, and so the automatic amount, is measured
	// against is the floor, the quietest frames by their own level: the
	// profile's reach above them takes in the soft ends of words of
	// continuous clean speech (whose automatic amount it raised from 0
	// to 24 dB on the held-out half's prompts), and an amount from a floor
	// set low still reduces the noise of a noisy recording well past its
	// level.
	var pow float64
	cnt := 0
	for r := 0; r <= min(flHi, rows-1); r++ {
		pow += fl.pow[r]
		cnt += fl.cnt[r]
	}
	noise := pow / float64(max(cnt, 1))
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
	quiet := p.SNRDB >= quietSNRDB
	if !p.FromVAD && !quiet {
		// Without pauses to learn from, the frames of the quietest
		// levels hold speech wherever the voice rarely stops: on the
		// tuning half's prompts under real noise (the mask finding no
		// pauses in any), their profile lay 2 to 30 dB over the noise,
		// and static lost 0.8 dB SI-SDR on average (-8 dB at 15 dB SNR).
		// Each bin takes the lower of that and its own floor over the
		// file (binFloor): +3.8 dB there; the floor alone gained as
		// much on the real recordings but 0.7 dB less on espeak-ng
		// speech in pink noise, whose pauses the quietest frames find.
		// On a quiet recording the bins' floors hold the soft speech
		// that the noise does not cover (classic told to take 24 dB
		// kept 23.7 dB SI-SDR of a held-out clean prompt), and the
		// floor's frames below serve.
		floor := make([]float64, len(p.Noise))
		a.binFloor(floor)
		h.meanPSD(hi, p.Noise)
		// How far the quietest frames' spectrum lies over each bin's
		// floor: the lower of the ratio of their powers and the mean over
		// the bins of the ratio, in dB.
		var logs, sum, sumF float64
		for k, v := range p.Noise {
			logs += math.Log10(max(v, 1e-30) / max(floor[k], 1e-30))
			sum += v
			sumF += floor[k]
		}
		over := min(10*logs/float64(len(p.Noise)), 10*math.Log10(max(sum, 1e-300)/max(sumF, 1e-300)))
		for k := range p.Noise {
			p.Noise[k] = min(p.Noise[k], floor[k])
		}
		if over >= staticPauseDB {
			p.StaticNoise = a.sn.result(p.Noise)
		}
		return p
	}
	// The spectrum of the pauses, or of the floor: on a quiet recording,
	// the floor's own frames (the reach above them is soft speech there:
	// classic at 24 dB kept 8 to 25 dB SI-SDR of the held-out half's
	// clean prompts with it); on a noisy one, the frames placed by their
	// neighbours up to the reach.
	if quiet {
		h, hi = fl, flHi
	}
	h.meanPSD(hi, p.Noise)
	return p
}

// staticPauseDB: where the quietest frames' spectrum lies within this
// many dB of each bin's floor over the file, by the lower of the ratio of
// their powers and the mean over the bins of the ratio, they are pauses
// of noise alone, and Static keeps the profile of them (Noise) rather
// than the network's from a sample of frames (StaticNoise), which is
// noisier per bin and takes in some of a voice unlike those it was
// fitted on. espeak-ng phrases with pauses in pink and white noise
// (TestStationaryNoise) measure -0.7 and +0.1 dB, and static gains +5.09
// and +9.56 dB SI-SDR with Noise, +4.23 and +8.57 with StaticNoise;
// espeak-ng with mains hum alone in its pauses (TestDenoiserDehumStats)
// -2.8 dB by the powers, +20.4 by the bins' mean (bins the hum leaves
// empty), and keeps 18.2 dB SI-SDR of the speech with StaticNoise where
// it asks 20. The tuning half's real noise mixes, whose speech does not
// pause, measure +2.8 to +19.2 dB by the mean, +0.7 to +20.6 by the
// powers, but for one at -1.1 (a codec2 recording of 3 s under a crowd,
// which would gain 2 dB from StaticNoise); at 1 dB the one at +0.7
// (stationary, +5.26 dB with StaticNoise, +5.17 without) keeps Noise.
const staticPauseDB = 1

// noiseSpreadDB is how far above the quietest tenth of the frames the
// noise profile reaches without a voice activity mask (see binFloor for
// the per-bin bound on it). On the tuning half's real noise a wider
// reach gained more (8 dB: static +5.4 dB SI-SDR on nonstationary noise,
// 4 dB: +3.5), but took the soft speech of espeak-ng phrases in white
// noise at 9 dB SNR for noise (the profile 1 dB over the noise at 6 dB,
// 0.5 dB at 4).
const noiseSpreadDB = 4

// quietSNRDB is the SNR (against the floor) from which a recording counts
// as quiet, its noise profile taken from the floor's frames alone: the
// tuning half's noisy speech at 15 dB SNR measures 18 to 26 dB.
const quietSNRDB = 30

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
