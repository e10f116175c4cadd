package dsp

import (
	"fmt"
	"math"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/quickselect"
)

// Detector selects how a Compressor measures level.
type Detector int

const (
	// RMS follows the signal's power: smooth, reacts to loudness.
	RMS Detector = iota
	// Peak follows the largest sample magnitude: catches transients.
	Peak
)

// CompressorParams configure a Compressor.
type CompressorParams struct {
	// ThresholdDB is where compression starts (dBFS of the detector).
	ThresholdDB float64
	// Ratio is input dB change per output dB change above the threshold
	// (>= 1).
	Ratio float64
	// KneeDB is the width of the soft knee centred on the threshold.
	KneeDB float64
	// Attack and Release are the time constants in seconds with which the
	// gain moves toward more and toward less reduction.
	Attack, Release float64
	Detector        Detector
	// MakeupDB is a fixed gain after compression.
	MakeupDB float64
}

// CompressorKind names a preset: the API's compressor values.
type CompressorKind string

// The presets. Thresholds are relative to the programme's speech RMS level
// (the reference passed to CompressorPreset), so a preset compresses the
// same share of the programme whatever the recording level:
//
//	soft:   threshold ref+6 dB, ratio 2:1, knee 6 dB, attack 10 ms, release 150 ms, RMS
//	medium: threshold ref+3 dB, ratio 3:1, knee 6 dB, attack  5 ms, release 120 ms, RMS
//	hard:   threshold ref+0 dB, ratio 4:1, knee 8 dB, attack  2 ms, release  80 ms, RMS
const (
	Soft   CompressorKind = "soft"
	Medium CompressorKind = "medium"
	Hard   CompressorKind = "hard"
)

// CompressorPreset returns the parameters of a preset for programme whose
// speech RMS level is refDB dBFS.
func CompressorPreset(kind CompressorKind, refDB float64) (CompressorParams, error) {
	switch kind {
	case Soft:
		return CompressorParams{ThresholdDB: refDB + 6, Ratio: 2, KneeDB: 6, Attack: 0.010, Release: 0.150}, nil
	case Medium:
		return CompressorParams{ThresholdDB: refDB + 3, Ratio: 3, KneeDB: 6, Attack: 0.005, Release: 0.120}, nil
	case Hard:
		return CompressorParams{ThresholdDB: refDB, Ratio: 4, KneeDB: 8, Attack: 0.002, Release: 0.080}, nil
	}
	return CompressorParams{}, fmt.Errorf("%w: compressor preset %q", ErrInvalidParameter, kind)
}

// AutoCompressor chooses a preset from the analysed dynamics after a gain
// plan (the leveler's): the spread between the median and the 95th
// percentile of voiced 100 ms block levels. Speech that is already even
// (spread under 5 dB) or mostly music gets soft, moderately dynamic speech
// medium, very dynamic speech hard.
func AutoCompressor(an *Analysis, plan GainPlan) CompressorKind {
	voiced, music := 0, 0
	for i, v := range an.Voiced {
		if v {
			voiced++
			if an.Music[i] {
				music++
			}
		}
	}
	if voiced < 10 || 2*music > voiced {
		return Soft
	}
	// Two order statistics by selection, not a sort of a list grown by
	// appending: three hours of blocks made 4.6 MB of garbage that way.
	lv := make([]float64, 0, voiced)
	for i, v := range an.Voiced {
		if !v {
			continue
		}
		g := 0.0
		if i < len(plan.DB) {
			g = plan.DB[i]
		}
		lv = append(lv, an.BlockDB(i)+g)
	}
	k95, k50 := len(lv)*95/100, len(lv)/2
	hi := quickselect.Nth(lv, k95)
	spread := hi - quickselect.Nth(lv[:k95], k50) // lv[:k95] holds the smaller ones
	switch {
	case spread < 5:
		return Soft
	case spread < 8:
		return Medium
	}
	return Hard
}

// SpeechRMS is the unweighted RMS level in dBFS of the voiced speech blocks
// (of all blocks when none is voiced): the reference for compressor presets.
func (an *Analysis) SpeechRMS() float64 {
	var s float64
	n := 0
	for i, v := range an.Voiced {
		if v && !an.Music[i] {
			s += an.Raw[i]
			n++
		}
	}
	if n == 0 {
		for _, r := range an.Raw {
			s += r
			n++
		}
	}
	if n == 0 || s == 0 {
		return math.Inf(-1)
	}
	return 10 * math.Log10(s/float64(n))
}

// compressorStep is the control period in frames: the gain computer (a
// logarithm and an exponential) runs once per step at absolute frame
// positions, and a one-pole smoother interpolates in between.
const compressorStep = 16

// The level detector: the RMS detector averages power over about 10 ms,
// the peak detector falls back over 30 ms. Attack and release then shape
// the gain, so the static curve holds for steady signals.
const (
	compressorRMSWindow = 0.010
	compressorPeakFall  = 0.030
)

// envFloor is where adding 1e-30 to the detector starts to change it: at
// and above 2^-46 the sum rounds back to the detector's value, so only the
// levels below it (under -138 dB) pay for the addition, which would
// otherwise lengthen the detector's loop-carried chain by a quarter.
const envFloor = 0x1p-46

// Compressor is a feed-forward dynamic range compressor with a soft knee.
// All channels share one detector (linked), so the stereo image is kept.
type Compressor struct {
	src      audio.Source
	ch       int
	p        CompressorParams
	att      float64 // gain smoothing while reducing
	rel      float64 // gain smoothing while recovering
	rmsAvg   float64 // mean-square averaging of the RMS detector
	peakFall float64 // fall of the peak detector
	env      float64
	gain     float64 // linear, smoothed
	target   float64 // linear, from the gain computer
	makeup   float64
	phase    int   // frame index modulo compressorStep
	pos      int64 // absolute frame index of the next frame
	sched    *compSchedule
	minDB    float64    // lowest gain so far, for statistics
	pow      stepPowers // stereoRMS's tables
	// stereoRMS's step in progress: the gain's distance from the target
	// at its start, the powers that shrink it, the detector's sums.
	dist float64
	keep *[compressorStep]float64
	acc  [2]float64
	// quiet is a detector level safely under the knee (with a margin for
	// the rounding of the logarithm): below it the gain computer, a
	// logarithm and an exponential, is known to return unity.
	quiet float64
}

// quietLevel returns the compressor's quiet for parameters p.
func quietLevel(p CompressorParams) float64 {
	if p.Ratio == 1 {
		return math.Inf(1) // never compresses
	}
	db := p.ThresholdDB - p.KneeDB/2 - 1e-6
	if p.Detector == Peak {
		return math.Pow(10, db/20)
	}
	return math.Pow(10, db/10)
}

// NewCompressor returns src compressed with p.
func NewCompressor(src audio.Source, p CompressorParams) (*Compressor, error) {
	if p.Ratio < 1 || math.IsNaN(p.Ratio) || p.Attack <= 0 || p.Release <= 0 || p.KneeDB < 0 {
		return nil, fmt.Errorf("%w: compressor ratio %g, attack %g s, release %g s, knee %g dB", ErrInvalidParameter, p.Ratio, p.Attack, p.Release, p.KneeDB)
	}
	fs := float64(src.Format().SampleRate)
	return &Compressor{
		src: src, ch: src.Format().Channels, p: p,
		att:      1 - math.Exp(-1/(p.Attack*fs)),
		rel:      1 - math.Exp(-1/(p.Release*fs)),
		rmsAvg:   1 - math.Exp(-1/(compressorRMSWindow*fs)),
		peakFall: 1 - math.Exp(-1/(compressorPeakFall*fs)),
		gain:     1, target: 1,
		makeup: DBToGain(p.MakeupDB),
		quiet:  quietLevel(p),
	}, nil
}

// StartAt places the source's first frame at frame of the programme, for
// a render that starts part way into it: the gain computer keeps its
// steps at the programme's frame positions, and a speech/music schedule
// its blocks. Call it before the first Read; the detector and the gain
// start at rest, so a render that must match one from the start runs a
// few seconds ahead of where its output is kept.
func (c *Compressor) StartAt(frame int64) {
	c.pos = frame
	c.phase = int(frame % compressorStep)
}

// Params returns the parameters in use.
func (c *Compressor) Params() CompressorParams { return c.p }

// MaxReductionDB returns the largest gain reduction applied so far (<= 0).
func (c *Compressor) MaxReductionDB() float64 { return c.minDB }

// Format implements audio.Source.
func (c *Compressor) Format() audio.Format { return c.src.Format() }

// staticGainDB is the soft-knee gain computer (Giannoulis, Massberg and
// Reiss 2012): the gain in dB for a detector level x in dB.
func (c *Compressor) staticGainDB(x float64) float64 {
	t, r, w := c.p.ThresholdDB, c.p.Ratio, c.p.KneeDB
	d := x - t
	switch {
	case 2*d <= -w:
		return 0
	case 2*d < w:
		k := d + w/2
		return (1/r - 1) * k * k / (2 * w)
	}
	return (1/r - 1) * d
}

func (c *Compressor) computeTarget(env float64) float64 {
	if env < c.quiet {
		// Surely below the knee: staticGainDB would return 0.
		return 1
	}
	var db float64
	if c.p.Detector == Peak {
		db = 20 * math.Log10(env)
	} else {
		db = 10 * math.Log10(env)
	}
	g := c.staticGainDB(db)
	if g == 0 {
		return 1
	}
	c.minDB = math.Min(c.minDB, g)
	return DBToGain(g)
}

// Read implements audio.Source.
func (c *Compressor) Read(dst audio.Buffer) (int, error) {
	if err := checkShape(dst, c.ch); err != nil {
		return 0, err
	}
	n, err := c.src.Read(dst)
	if n == 0 {
		return n, err
	}
	if c.ch == 2 && c.p.Detector == RMS {
		c.stereoRMS(dst[0][:n], dst[1][:n])
		return n, err
	}
	inv := 1 / float64(c.ch)
	env, gain, target, phase := c.env, c.gain, c.target, c.phase
	peak := c.p.Detector == Peak
	stereo := c.ch == 2 && !peak
	var l, r []float64
	if stereo {
		l, r = dst[0][:n], dst[1][:n]
	}
	for i := 0; i < n; i++ {
		var lvl float64
		switch {
		case stereo:
			lvl = (l[i]*l[i] + r[i]*r[i]) * 0.5
		case peak:
			for ch := range dst {
				lvl = math.Max(lvl, math.Abs(dst[ch][i]))
			}
		default:
			for ch := range dst {
				v := dst[ch][i]
				lvl += v * v
			}
			lvl *= inv
		}
		if peak {
			// Peak: instant rise, exponential fall.
			if lvl > env {
				env = lvl
			} else {
				env += (lvl - env) * c.peakFall
			}
		} else {
			env += (lvl - env) * c.rmsAvg
		}
		if env < envFloor {
			env += 1e-30 // keeps the release tail out of denormals
		}
		if phase == 0 {
			if c.sched != nil {
				c.sched.apply(c, c.pos+int64(i))
			}
			target = c.computeTarget(env)
		}
		phase++
		if phase == compressorStep {
			phase = 0
		}
		// At the target the step adds 0: leave the recursion alone.
		if target < gain {
			gain += (target - gain) * c.att
		} else if target != gain {
			gain += (target - gain) * c.rel
		}
		gm := gain * c.makeup
		if stereo {
			l[i] *= gm
			r[i] *= gm
			continue
		}
		for ch := range dst {
			dst[ch][i] *= gm
		}
	}
	c.phase = phase
	c.pos += int64(n)
	c.env, c.gain, c.target = env, gain, target
	return n, err
}

// stereoRMS is Read's loop for the commonest case, stereo with the RMS
// detector. Frame by frame, the detector and the gain are two one-pole
// recursions whose loop-carried chains (a subtract, a multiply and an
// add, 9 cycles) bound the loop; but the gain computer only needs the
// detector once per step, and within a step the gain moves toward one
// target. So each step is computed in closed form: the detector at the
// step's end is a weighted sum of its levels (weights a(1-a)^k), and the
// gain k frames in is target + (gain-target)(1-c)^(k+1). Only the rounding
// differs from the recursions, at about 1e-16 of each value, and a step
// cut by the end of a block continues in the next with the same sums, so
// every block size gives the same samples.
func (c *Compressor) stereoRMS(l, r []float64) {
	w := c.stepWeights()
	if c.keep == nil {
		// Started inside a step (StartAt): the gain is at rest.
		c.keep = &w.keepRel
	}
	for i := 0; i < len(l); {
		if c.phase == 0 {
			// The step's first frame sets the target from the detector,
			// as the recursion would.
			lvl := (l[i]*l[i] + r[i]*r[i]) * 0.5
			c.env += (lvl - c.env) * c.rmsAvg
			if c.env < envFloor {
				c.env += 1e-30
			}
			if c.sched != nil {
				c.sched.apply(c, c.pos)
				w = c.stepWeights()
			}
			c.target = c.computeTarget(c.env)
			c.dist, c.keep = c.gain-c.target, &w.keepRel
			if c.dist > 0 {
				c.keep = &w.keepAtt
			}
			c.acc = [2]float64{}
		}
		m := min(compressorStep-c.phase, len(l)-i)
		t, d, mk, keep := c.target, c.dist, c.makeup, c.keep
		e0, e1 := c.acc[0], c.acc[1]
		// w.env[0] is 0: the first frame's level is in the detector.
		if m == compressorStep {
			// A whole step: the frames in pairs, without branches.
			ls, rs := (*[compressorStep]float64)(l[i:]), (*[compressorStep]float64)(r[i:])
			for k := 0; k < compressorStep; k += 2 {
				x0, y0, x1, y1 := ls[k], rs[k], ls[k+1], rs[k+1]
				e0 += w.env[k] * ((x0*x0 + y0*y0) * 0.5)
				e1 += w.env[k+1] * ((x1*x1 + y1*y1) * 0.5)
				g0, g1 := (t+d*keep[k])*mk, (t+d*keep[k+1])*mk
				ls[k], rs[k], ls[k+1], rs[k+1] = x0*g0, y0*g0, x1*g1, y1*g1
			}
		} else {
			ls, rs := l[i:i+m], r[i:i+m]
			for j := range ls {
				k := (c.phase + j) & (compressorStep - 1)
				x, y := ls[j], rs[j]
				if v := (x*x + y*y) * 0.5; k&1 == 0 {
					e0 += w.env[k] * v
				} else {
					e1 += w.env[k] * v
				}
				g := (t + d*keep[k]) * mk
				ls[j], rs[j] = x*g, y*g
			}
		}
		c.acc = [2]float64{e0, e1}
		c.phase += m
		c.pos += int64(m)
		i += m
		if c.phase == compressorStep {
			c.phase = 0
			if c.env = c.env*w.decay + (e0 + e1); c.env < envFloor {
				c.env += 1e-30
			}
			c.gain = t + d*keep[compressorStep-1]
		}
	}
}

// stepPowers are the tables of stereoRMS for one set of time constants.
type stepPowers struct {
	att, rel, avg float64 // the constants they were made for
	// keepAtt[k] and keepRel[k] are (1-c)^(k+1): what is left of the
	// distance to the target after the step's frames 0..k.
	keepAtt, keepRel [compressorStep]float64
	// env[k] weighs the level of frame k in the detector at the step's
	// last frame; decay weighs the detector at its first.
	env   [compressorStep]float64
	decay float64
}

// stepWeights returns the compressor's tables, made again when a schedule
// has switched its time constants.
func (c *Compressor) stepWeights() *stepPowers {
	w := &c.pow
	if w.att == c.att && w.rel == c.rel && w.avg == c.rmsAvg {
		return w
	}
	w.att, w.rel, w.avg = c.att, c.rel, c.rmsAvg
	ga, gr := 1.0, 1.0
	for k := range compressorStep {
		ga *= 1 - c.att
		gr *= 1 - c.rel
		w.keepAtt[k], w.keepRel[k] = ga, gr
	}
	keep := 1 - c.rmsAvg
	p := 1.0
	for k := compressorStep - 1; k > 0; k-- {
		w.env[k] = c.rmsAvg * p
		p *= keep
	}
	w.env[0] = 0
	w.decay = p
	return w
}

// compSchedule switches a compressor between two parameter sets per
// analysis block: one for speech, one for music.
type compSchedule struct {
	blockLen int
	music    []bool
	sets     [2]struct {
		p               CompressorParams
		att, rel, quiet float64
	}
}

func (s *compSchedule) apply(c *Compressor, frame int64) {
	k := frame / int64(s.blockLen)
	m := 0
	if k < int64(len(s.music)) && s.music[k] {
		m = 1
	} else if k >= int64(len(s.music)) && len(s.music) > 0 && s.music[len(s.music)-1] {
		m = 1
	}
	set := &s.sets[m]
	c.p.ThresholdDB, c.p.Ratio, c.p.KneeDB, c.p.MakeupDB = set.p.ThresholdDB, set.p.Ratio, set.p.KneeDB, set.p.MakeupDB
	c.att, c.rel, c.quiet = set.att, set.rel, set.quiet
}

// NewSpeechMusicCompressor returns a compressor that uses speech on the
// blocks an labels speech and music on the blocks it labels music
// (compressor_speech and compressor_music in the API). The detector is the
// speech parameters'; a Ratio of 1 turns compression off for that class.
func NewSpeechMusicCompressor(src audio.Source, an *Analysis, speech, music CompressorParams) (*Compressor, error) {
	c, err := NewCompressor(src, speech)
	if err != nil {
		return nil, err
	}
	if _, err := NewCompressor(src, music); err != nil {
		return nil, err
	}
	fs := float64(src.Format().SampleRate)
	s := &compSchedule{blockLen: an.BlockLen, music: an.Music}
	for i, p := range []CompressorParams{speech, music} {
		s.sets[i].p = p
		s.sets[i].att = 1 - math.Exp(-1/(p.Attack*fs))
		s.sets[i].rel = 1 - math.Exp(-1/(p.Release*fs))
		// The detector is the speech parameters' (c.p.Detector is never
		// switched).
		q := p
		q.Detector = speech.Detector
		s.sets[i].quiet = quietLevel(q)
	}
	c.sched = s
	return c, nil
}

// Off is a CompressorParams that never compresses.
var Off = CompressorParams{ThresholdDB: 0, Ratio: 1, Attack: 0.01, Release: 0.1}
