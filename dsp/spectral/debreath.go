package spectral

import (
	"fmt"
	"math"
	"sort"

	"github.com/audiopost/audiopost/audio"
)

// BreathSegment sets the breath attenuation from frame Start on.
type BreathSegment struct {
	// Start is the first frame the amount applies to.
	Start int64
	// AmountDB is the attenuation of breaths in dB; 0 or negative leaves
	// them alone.
	AmountDB float64
}

// DebreathOptions configure a Debreath node.
type DebreathOptions struct {
	// AmountDB attenuates every detected breath by this many dB (the API's
	// debreathamount, 3..100); 0 or negative is off. Segments, when given,
	// override it from their starts on.
	AmountDB float64
	Segments []BreathSegment
	// SpeechDB is the level of the speech in dBFS (Profile.SpeechDB); 0
	// lets the node learn it from the voiced frames it sees.
	SpeechDB float64
}

// Breath detection works on 10 ms frames with 1.3 s of look-ahead: a
// breath is a run of frames that are above the noise floor but unvoiced
// (no pitch), lasting 100 ms to 1 s, its loudest frame brBelowDB or more
// under the speech, with no voiced frame within 60 ms after it (a
// fricative sits right against a vowel; a breath sits in the pause
// between phrases). A run that starts within 60 ms of the end of a
// phrase (in conversation, the breath is taken as the phrase ends) is
// taken from 60 ms after it on, and only when it rises from a dip and its
// spectrum is not a fricative's.
const (
	brFrameSec      = 0.01
	brLookSec       = 1.3
	brMinSec        = 0.1
	brMaxSec        = 1.0
	brGuardSec      = 0.06
	brRampSec       = 0.005
	brBelowDB       = 6 // peak level at least this far under the speech
	brActiveDB      = 6 // above the noise floor
	brVoicedCorr    = 0.6
	brVoicedSure    = 0.7
	brVoicedBelowDB = 25
	brVoicedOverDB  = 12 // a vowel stands this far over the noise floor
	// The speech level breaths are measured against is the level voiced
	// frames exceed a fraction 1-brSpeechQ of the time, tracked in steps
	// of brSpeechStep dB: the loud part of the speech, which a quiet
	// passage or a soft syllable does not pull down.
	brSpeechQ    = 0.95
	brSpeechStep = 0.5
	// brExtendSec: a breath's attenuation reaches this far into the quiet
	// frames on each side of it (under the activity threshold, or
	// brFadeDB under its loudest), where its start and its fade lie.
	brExtendSec = 0.1
	brFadeDB    = 3
	// brDipDB: a breath that follows a phrase at once lies this far above
	// the dip between them at its loudest.
	brDipDB = 6
	// brBelowTrimDB: and it lies this far under the speech, further than
	// brBelowDB: a phrase's final fricative after a short dip is loud.
	brBelowTrimDB = 10
	// brMaxHz: and its spectral centroid lies under this; a fricative's
	// (/s/, /sh/) lies higher.
	brMaxHz = 3500
)

// Debreath attenuates breaths between phrases by exactly the requested
// amount (a broadband gain over the breath and the quiet frames next to
// it, with 5 ms ramps outside), and leaves everything else bit-exact. The
// look-ahead is compensated inside.
type Debreath struct {
	src        audio.Source
	run        *hopRunner
	segs       []BreathSegment
	fs         int
	flen, look int // frame length, look-ahead in frames

	// Features per frame in a ring of L+1 frames.
	level []float64
	// The mono mix's energy and that of its first difference, whose
	// ratio gives the frame's spectral centroid.
	monoE, diffE []float64
	prev         float64
	prevVc       float64 // the voicing of the frame before
	voiced       []bool
	target       []float64 // gain per frame, decided within the look-ahead
	frame        int64

	// Run tracking.
	runStart, runEnd int64 // current candidate run [start, end)
	runVoiced        int64 // the last voiced frame before it
	slid             bool  // its start moved on, keeping it brMaxSec long
	nVoiced          int64 // voiced frames seen
	inRun            bool
	pendFrom         int64 // a finished run's first frame
	pendStart        int64 // the breath found in it, waiting for its after-guard
	pendEnd          int64
	pending          bool
	lastVoiced       int64
	noise, speech    float64
	speechKnown      bool

	// Voicing analysis on a decimated copy: 30 ms window.
	d2      int
	dec     []float64 // window of decimated samples
	decFill int
	acc     float64
	accN    int

	delay [][]float64 // per channel ring of (L+1)*F frames
	dpos  int
	g     float64 // current gain
	step  float64 // gain change per sample of a ramp
	// Detected breaths, for statistics and tests.
	breaths []audio.Span
}

// NewDebreath returns src with breaths attenuated as opts say.
func NewDebreath(src audio.Source, opts DebreathOptions) (*Debreath, error) {
	f := src.Format()
	if err := f.Validate(); err != nil {
		return nil, err
	}
	segs := append([]BreathSegment{{Start: 0, AmountDB: opts.AmountDB}}, opts.Segments...)
	for i, s := range segs {
		if math.IsNaN(s.AmountDB) || s.AmountDB > 100 || s.Start < 0 || (i > 0 && s.Start < segs[i-1].Start) {
			return nil, fmt.Errorf("%w: breath segment %d (start %d, %g dB)", ErrInvalidParameter, i, s.Start, s.AmountDB)
		}
	}
	fs := f.SampleRate
	b := &Debreath{src: src, segs: segs, fs: fs, g: 1, lastVoiced: -1 << 40}
	b.flen = max(1, int(math.Round(brFrameSec*float64(fs))))
	b.look = int(math.Ceil(brLookSec / brFrameSec))
	b.level = make([]float64, b.look+1)
	b.monoE = make([]float64, b.look+1)
	b.diffE = make([]float64, b.look+1)
	b.voiced = make([]bool, b.look+1)
	b.target = make([]float64, b.look+1)
	for i := range b.target {
		b.target[i] = 1
	}
	b.d2 = max(1, int(math.Round(float64(fs)/4000)))
	b.dec = make([]float64, int(math.Round(0.03*float64(fs)/float64(b.d2))))
	b.delay = make([][]float64, f.Channels)
	for c := range b.delay {
		b.delay[c] = make([]float64, (b.look+1)*b.flen)
	}
	b.step = 1 / (brRampSec * float64(fs))
	b.noise = 0
	if opts.SpeechDB != 0 && !math.IsInf(opts.SpeechDB, 0) {
		b.speech, b.speechKnown = opts.SpeechDB, true
	} else {
		b.speech = -20
	}
	b.noise = 0 // the first frame sets it
	b.run = newHopRunner(src, b.flen, b.look*b.flen, b.process)
	return b, nil
}

// Format implements audio.Source.
func (b *Debreath) Format() audio.Format { return b.src.Format() }

// Read implements audio.Source.
func (b *Debreath) Read(dst audio.Buffer) (int, error) { return b.run.Read(dst) }

// Close closes the upstream source.
func (b *Debreath) Close() error { return closeSource(b.src) }

// Latency is the look-ahead compensated inside, in frames.
func (b *Debreath) Latency() int { return b.look * b.flen }

// Breaths returns the frame ranges attenuated so far.
func (b *Debreath) Breaths() []audio.Span {
	if b.run.eof {
		// The frames after the end that pad the last hop are no part of
		// a breath.
		n := 0
		for _, s := range b.breaths {
			if s.Start < b.run.inTotal {
				s.End = min(s.End, b.run.inTotal)
				b.breaths[n] = s
				n++
			}
		}
		b.breaths = b.breaths[:n]
	}
	return b.breaths
}

func (b *Debreath) amountAt(f int64) float64 {
	i := sort.Search(len(b.segs), func(i int) bool { return b.segs[i].Start > f }) - 1
	return b.segs[max(i, 0)].AmountDB
}

func (b *Debreath) process(in, out audio.Buffer) {
	F, L := b.flen, b.look
	t := b.frame
	b.frame++
	slot := int(t % int64(L+1))
	// Level of the frame.
	var ms float64
	for c := range in {
		for _, v := range in[c] {
			ms += v * v
		}
		copy(b.delay[c][b.dpos:b.dpos+F], in[c])
	}
	ms /= float64(F * len(in))
	lv := 10 * math.Log10(ms+1e-20)
	// Voicing: decimate the mix into the analysis window.
	var dd, mm float64
	for i := 0; i < F; i++ {
		var v float64
		for c := range in {
			v += in[c][i]
		}
		dd += (v - b.prev) * (v - b.prev)
		mm += v * v
		b.prev = v
		b.acc += v
		b.accN++
		if b.accN == b.d2 {
			if b.decFill == len(b.dec) {
				copy(b.dec, b.dec[1:])
				b.decFill--
			}
			b.dec[b.decFill] = b.acc
			b.decFill++
			b.acc, b.accN = 0, 0
		}
	}
	// Noise floor: follows the level down at once, up by 1 dB/s.
	if lv < b.noise {
		b.noise = lv
	} else {
		b.noise += 1 * brFrameSec
	}
	active := lv > max(b.noise+brActiveDB, -80)
	// Voiced means periodic and within reach of the speech level: a faint
	// periodic residue in a pause is no vowel. Periodic means clearly so
	// (brVoicedSure), or somewhat so two frames running: noise through
	// the resonances of the vocal tract, a breath, reaches 0.5 in a frame
	// now and then, and sometimes in two.
	vc := b.voicing()
	periodic := vc > brVoicedSure || vc > brVoicedCorr && b.prevVc > brVoicedCorr
	b.prevVc = vc
	voiced := lv > max(b.noise+brVoicedOverDB, b.speech-brVoicedBelowDB) && periodic
	b.level[slot] = lv
	b.diffE[slot], b.monoE[slot] = dd, mm
	b.voiced[slot] = voiced
	b.target[slot] = 1
	if voiced {
		switch {
		case !b.speechKnown:
			b.speech = lv
			b.speechKnown = true
		case lv > b.speech:
			b.speech += b.speechStep() * brSpeechQ
		default:
			b.speech -= b.speechStep() * (1 - brSpeechQ)
		}
		b.nVoiced++
		b.lastVoiced = t
	}
	b.track(t, active, voiced, lv)

	// Output the frame L back with its decided gain.
	b.dpos = (b.dpos + F) % len(b.delay[0])
	src := b.dpos
	o := t - int64(L)
	tg := 1.0
	if o >= 0 {
		tg = b.target[int(o%int64(L+1))]
	}
	g := b.g
	for i := 0; i < F; i++ {
		if g > tg {
			g = max(tg, g-b.step)
		} else if g < tg {
			g = min(tg, g+b.step)
		}
		for c := range out {
			out[c][i] = b.delay[c][src+i] * g
		}
	}
	b.g = g
}

// track follows candidate runs and marks breaths in the target ring.
func (b *Debreath) track(t int64, active, voiced bool, lv float64) {
	guard := int64(math.Round(brGuardSec / brFrameSec))
	if b.pending {
		switch {
		case voiced && t >= b.pendEnd+guard:
			// Voicing after the guard: the breath stands; its
			// attenuation stops short of the voicing.
			b.pending = false
			b.mark(b.pendStart, b.pendEnd)
		case voiced:
			// Speech right after: the breath keeps what lies a guard
			// before it, if that is still a breath.
			b.pending = false
			if s, ok := b.candidate(b.pendFrom, b.pendStart, t-guard, true); ok {
				b.mark(s, t-guard)
			}
		case t >= b.pendEnd+guard+int64(math.Round(brExtendSec/brFrameSec)):
			// Far enough past the breath for the attenuation to reach
			// into its fade, and for the guard after that.
			b.pending = false
			b.mark(b.pendStart, b.pendEnd)
		}
	}
	cand := active && !voiced
	if cand {
		if !b.inRun {
			b.inRun, b.runStart, b.runVoiced, b.slid = true, t, b.lastVoiced, false
		}
		b.runEnd = t + 1
		if float64(b.runEnd-b.runStart)*brFrameSec > brMaxSec {
			// Too long for a breath: a breath may end it, after the
			// room tone of a recording or a long unvoiced stretch; what
			// is left of its start is no breath.
			b.runStart++
			b.slid = true
		}
		return
	}
	if !b.inRun {
		return
	}
	b.inRun = false
	// A breath taken right after a phrase follows its last voiced frame
	// at once, and one taken right before a phrase runs into its first
	// sounds: the guard's frames next to the voiced ones, which may be
	// the phrase's unvoiced ending or beginning, are left out, and the
	// rest is the candidate.
	s, e := b.runStart, b.runEnd
	trimmed := b.runVoiced >= 0 && s-b.runVoiced <= guard
	if trimmed {
		s = b.runVoiced + guard + 1
	}
	if voiced {
		e, trimmed = t-guard, true
	}
	trimmed = trimmed || b.slid
	s, ok := b.candidate(b.runStart, s, e, trimmed)
	switch {
	case !ok:
	case voiced:
		b.mark(s, e)
	case b.pending && b.runStart < b.pendEnd+guard:
		// Close after a breath still waiting: the next phrase's
		// unvoiced start, most likely; the breath waits on.
	default:
		if b.pending {
			b.mark(b.pendStart, b.pendEnd) // past its guard, voicing none
		}
		b.pending, b.pendFrom, b.pendStart, b.pendEnd = true, b.runStart, s, e
	}
}

// candidate says whether frames [s, e) of a run that began at frame from
// are a breath, and returns where the breath starts. A run cut next to
// a phrase (trimmed) must rise from a dip after the run's start (a
// breath starts anew; a phrase's fading ending does not) and have a
// spectrum that is not a fricative's; the guard's frames before it are
// its start too where they are no louder than it and no fricative (the
// frame after the last voiced one stays, for the ramp).
func (b *Debreath) candidate(from, s, e int64, trimmed bool) (int64, bool) {
	if float64(e-s)*brFrameSec < brMinSec {
		return s, false
	}
	L := int64(b.look + 1)
	peak, at := math.Inf(-1), s
	for f := s; f < e; f++ {
		if lv := b.level[int(f%L)]; lv > peak {
			peak, at = lv, f
		}
	}
	if peak > b.speech-brBelowDB {
		return s, false
	}
	if !trimmed {
		return s, true
	}
	dip := math.Inf(1)
	for f := from; f+1 < at; f++ {
		dip = min(dip, max(b.level[int(f%L)], b.level[int((f+1)%L)]))
	}
	if dip > peak-brDipDB || peak > b.speech-brBelowTrimDB || b.centroid(s, e) > brMaxHz {
		return s, false
	}
	for s-1 > max(from, b.runVoiced+1) && b.level[int((s-1)%L)] <= peak && b.centroid(s-1, s) <= brMaxHz {
		s--
	}
	return s, true
}

// mark sets the gain of the frames of a breath, widened into the quiet
// frames around it (brExtendSec at most, never closer to a voiced frame
// than the guard) and then one frame more on each side so the ramps lie
// outside it.
func (b *Debreath) mark(s, e int64) {
	a := b.amountAt(s)
	if a <= 0 {
		return
	}
	g := math.Pow(10, -a/20)
	L := int64(b.look + 1)
	oldest := b.frame - int64(b.look) // frames before this are already out
	ext := int64(math.Round(brExtendSec / brFrameSec))
	guard := int64(math.Round(brGuardSec / brFrameSec))
	// Quiet: unvoiced, and under the activity threshold or far under the
	// breath's loudest frame (a frame of its fade that noise lifts over
	// the threshold).
	peak := math.Inf(-1)
	for f := max(s, oldest); f < e; f++ {
		peak = max(peak, b.level[int(f%L)])
	}
	quiet := func(f int64) bool {
		return !b.voiced[int(f%L)] && b.level[int(f%L)] <= max(b.noise+brActiveDB, peak-brFadeDB)
	}
	voicedNear := func(f int64) bool { // a voiced frame within the guard after f
		for g := f; g <= f+guard && g < b.frame; g++ {
			if b.voiced[int(g%L)] {
				return true
			}
		}
		return false
	}
	for n := int64(0); n < ext && s-1 > max(oldest, -1) && s-1 > b.lastVoicedBefore(s)+guard && quiet(s-1); n++ {
		s--
	}
	for n := int64(0); n < ext && e < b.frame-guard && quiet(e) && !voicedNear(e); n++ {
		e++
	}
	for f := max(s-1, oldest, 0); f < e+1 && f < b.frame; f++ {
		b.target[int(f%L)] = g
	}
	b.breaths = append(b.breaths, audio.Span{Start: s * int64(b.flen), End: e * int64(b.flen)})
}

// speechStep is the speech level tracker's step: ten times brSpeechStep
// at first, down to it over the first second of voiced frames, so that
// the first words set the level and later ones refine it.
func (b *Debreath) speechStep() float64 {
	n := float64(b.nVoiced) * brFrameSec
	return brSpeechStep * max(1, 10*(1-n))
}

// centroid returns the frequency of the sinusoid whose first difference
// has the same share of its energy as that of the mono mix over frames
// [s, e): the spectral centroid, in the sense of the first moment of the
// power spectrum's sin^2 weighting.
func (b *Debreath) centroid(s, e int64) float64 {
	L := int64(b.look + 1)
	var dd, mm float64
	for f := s; f < e; f++ {
		dd += b.diffE[int(f%L)]
		mm += b.monoE[int(f%L)]
	}
	if mm == 0 {
		return 0
	}
	return float64(b.fs) / math.Pi * math.Asin(min(1, math.Sqrt(dd/mm)/2))
}

// lastVoicedBefore returns the last voiced frame before s within the
// ring, or one before the ring's oldest frame.
func (b *Debreath) lastVoicedBefore(s int64) int64 {
	L := int64(b.look + 1)
	oldest := b.frame - L
	for f := s - 1; f > oldest && f >= 0; f-- {
		if b.voiced[int(f%L)] {
			return f
		}
	}
	return oldest
}

// voicing returns the largest normalized autocorrelation of the analysis
// window over pitch lags of 80 to 400 Hz.
func (b *Debreath) voicing() float64 {
	x := b.dec[:b.decFill]
	fd := float64(b.fs) / float64(b.d2)
	lo := int(fd / 400)
	hi := min(int(fd/80), len(x)/2)
	// Only a peak of the autocorrelation counts: that of noise whose
	// power lies low (pink, a rumble) falls from lag 0 on and is high at
	// the shortest pitch lags without any pitch.
	best := 0.0
	var r0, r1 float64 // the correlations at the two lags before
	for lag := max(1, lo-1); lag <= hi+1; lag++ {
		var xy, xx, yy float64
		for i := 0; i+lag < len(x); i++ {
			xy += x[i] * x[i+lag]
			xx += x[i] * x[i]
			yy += x[i+lag] * x[i+lag]
		}
		r := 0.0
		if xx > 0 && yy > 0 {
			r = xy / math.Sqrt(xx*yy)
		}
		if lag-1 >= max(2, lo) && r1 >= r0 && r1 >= r {
			best = max(best, r1)
		}
		r0, r1 = r1, r
	}
	return best
}
