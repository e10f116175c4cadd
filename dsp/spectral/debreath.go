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

// Breath detection works on 10 ms frames with 1.2 s of look-ahead: a
// breath is a run of frames that are above the noise floor but unvoiced
// (no pitch), lasting 100 ms to 1 s, clearly quieter than the speech, with
// no voiced frame within 60 ms before or after it (a fricative sits right
// against a vowel; a breath sits in the pause between phrases).
const (
	brFrameSec      = 0.01
	brLookSec       = 1.2
	brMinSec        = 0.1
	brMaxSec        = 1.0
	brGuardSec      = 0.06
	brRampSec       = 0.005
	brBelowDB       = 12 // peak level at least this far under the speech
	brActiveDB      = 6  // above the noise floor
	brVoicedCorr    = 0.5
	brVoicedBelowDB = 25
)

// Debreath attenuates breaths between phrases by exactly the requested
// amount (a broadband gain, with 5 ms ramps outside the breath), and leaves
// everything else bit-exact. The look-ahead is compensated inside.
type Debreath struct {
	src        audio.Source
	run        *hopRunner
	segs       []BreathSegment
	fs         int
	flen, look int // frame length, look-ahead in frames

	// Features per frame in a ring of L+1 frames.
	level  []float64
	voiced []bool
	target []float64 // gain per frame, decided within the look-ahead
	frame  int64

	// Run tracking.
	runStart, runEnd int64 // current candidate run [start, end)
	runPeak          float64
	inRun            bool
	pendStart        int64 // finished run waiting for its after-guard
	pendEnd          int64
	pendPeak         float64
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
	breaths []Span
}

// Span is a range of frames, [Start, End).
type Span struct{ Start, End int64 }

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
func (b *Debreath) Breaths() []Span { return b.breaths }

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
	for i := 0; i < F; i++ {
		var v float64
		for c := range in {
			v += in[c][i]
		}
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
	// periodic residue in a pause is no vowel.
	voiced := active && lv > b.speech-brVoicedBelowDB && b.voicing() > brVoicedCorr
	b.level[slot] = lv
	b.voiced[slot] = voiced
	b.target[slot] = 1
	if voiced {
		if !b.speechKnown {
			b.speech = lv
			b.speechKnown = true
		} else {
			b.speech += 0.02 * (lv - b.speech)
		}
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
		if voiced {
			b.pending = false // speech right after: a fricative or a word start
		} else if t >= b.pendEnd+guard {
			b.pending = false
			b.mark(b.pendStart, b.pendEnd)
		}
	}
	cand := active && !voiced
	if cand {
		if !b.inRun {
			b.inRun, b.runStart, b.runPeak = true, t, lv
		}
		b.runPeak = max(b.runPeak, lv)
		b.runEnd = t + 1
		if float64(b.runEnd-b.runStart)*brFrameSec > brMaxSec {
			b.inRun = false // too long for a breath
			b.runStart = t + 1<<40
		}
		return
	}
	if !b.inRun {
		return
	}
	b.inRun = false
	dur := float64(b.runEnd-b.runStart) * brFrameSec
	if voiced || dur < brMinSec || b.runPeak > b.speech-brBelowDB || b.runStart-b.lastVoiced <= guard && b.lastVoiced >= 0 && b.lastVoiced < b.runStart {
		return
	}
	b.pending, b.pendStart, b.pendEnd, b.pendPeak = true, b.runStart, b.runEnd, b.runPeak
}

// mark sets the gain of the frames of a breath, one frame wider on each
// side so the ramps lie outside it.
func (b *Debreath) mark(s, e int64) {
	a := b.amountAt(s)
	if a <= 0 {
		return
	}
	g := math.Pow(10, -a/20)
	oldest := b.frame - int64(b.look) // frames before this are already out
	for f := max(s-1, oldest); f < e+1 && f < b.frame; f++ {
		b.target[int(f%int64(b.look+1))] = g
	}
	b.breaths = append(b.breaths, Span{s * int64(b.flen), e * int64(b.flen)})
}

// voicing returns the largest normalized autocorrelation of the analysis
// window over pitch lags of 80 to 400 Hz.
func (b *Debreath) voicing() float64 {
	x := b.dec[:b.decFill]
	fd := float64(b.fs) / float64(b.d2)
	lo := int(fd / 400)
	hi := min(int(fd/80), len(x)/2)
	best := 0.0
	for lag := max(1, lo); lag <= hi; lag++ {
		var xy, xx, yy float64
		for i := 0; i+lag < len(x); i++ {
			xy += x[i] * x[i+lag]
			xx += x[i] * x[i]
			yy += x[i+lag] * x[i+lag]
		}
		if xx > 0 && yy > 0 {
			best = max(best, xy/math.Sqrt(xx*yy))
		}
	}
	return best
}
