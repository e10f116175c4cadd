package mixdown

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp"
	"github.com/audiopost/audiopost/dsp/classify"
	"github.com/audiopost/audiopost/dsp/spectral"
)

// TrackSettings are one track's settings: the API's multitrack track
// algorithms, in the units of this package. Start from DefaultTrack, which
// holds the API's defaults; the zero value has no high-pass and no
// leveling within the track (the master's balance still applies).
type TrackSettings struct {
	// Open opens the track at its start; it is called once for the
	// analysis and once per render pass (and per loop repetition).
	Open audio.Opener
	// Offset is the API's offset: where the track starts relative to the
	// first track. It is rounded to the nearest frame.
	Offset time.Duration
	// Role is the API's backforeground.
	Role Role
	// BackgroundGainDB is the API's backgroundgain (-3 to -26 dB).
	BackgroundGainDB float64
	// FadeTime is the API's ducking_fadetime (125 ms to 2 s).
	FadeTime time.Duration
	// GainDB is the API's gain, applied at the mix after the balance (so
	// that a speaker can be set apart from the common level).
	GainDB float64
	// LevelerStrength is the API's levelerstrength/100 (0 to 1).
	LevelerStrength float64
	// Pan is the API's pan: -1 (L100) to 1 (R100), 0 the centre, or the
	// unchanged image of a stereo track (see ParsePan and dsp.Mix).
	Pan float64
	// LoopTrim is the API's loop_trim.
	LoopTrim bool
	// Filter is the API's hipfilter and filtermethod: dsp.NewFilter on a
	// foreground track (music beds keep their bass), tuned by the track's
	// analysis.
	Filter dsp.FilterMethod
	// Classifier is the API's msclassifier: how the track's material is
	// labelled (speech, music), which decides RoleAuto and the compressor's
	// choice.
	Classifier classify.Mode
	// Restoration, when not nil, is the API's denoise family for this
	// track: a spectral.Denoiser (and dehum) learnt from the track's own
	// pauses, ahead of the filter's output. Its Settings hold for the
	// whole track: segments are a single-track feature, refused here.
	Restoration *spectral.Restoration
	// Compressor is the API's compressor for a foreground track: a
	// dsp.CompressorPreset relative to the track's speech level after the
	// balance, "auto" to let dsp.AutoCompressor choose from its dynamics,
	// empty for none.
	Compressor dsp.CompressorKind
}

// AutoCompression asks New to choose the preset from the track.
const AutoCompression dsp.CompressorKind = "auto"

// DefaultTrack returns the API's defaults for a track: auto role, -18 dB
// background gain, 500 ms fades, full leveler strength, no gain, no pan,
// no loop/trim, the high-pass filter, the classifier on, no restoration.
func DefaultTrack(open audio.Opener) TrackSettings {
	return TrackSettings{Open: open, BackgroundGainDB: -18, FadeTime: 500 * time.Millisecond, LevelerStrength: 1, Filter: dsp.FilterHighPass}
}

// ParsePan maps the API's pan ("L100" ... "L05", "C", "R05" ... "R100",
// empty for no panning) to TrackSettings.Pan.
func ParsePan(s string) (float64, error) {
	s = strings.ToUpper(strings.TrimSpace(s))
	if s == "" || s == "C" {
		return 0, nil
	}
	if len(s) > 1 && (s[0] == 'L' || s[0] == 'R') {
		v, err := strconv.Atoi(s[1:])
		if err == nil && v >= 0 && v <= 100 {
			p := float64(v) / 100
			if s[0] == 'L' {
				p = -p
			}
			return p, nil
		}
	}
	return 0, fmt.Errorf("%w: pan %q", dsp.ErrInvalidParameter, s)
}

// Settings are a production's multitrack settings: the tracks and the
// API's master algorithms that act on them. Loudness normalisation and
// the true-peak limit are dsp.NormalizeStream's, after the mix (see
// Mixdown.Normalize).
type Settings struct {
	// Tracks are the production's multitrack inputs; the first is the
	// one the others' offsets are relative to.
	Tracks []TrackSettings
	// Leveler is the master leveler: it balances the foreground
	// speakers with each other (BalancePlan, each track with its
	// LevelerStrength).
	Leveler bool
	// Gate is the adaptive noise gate of the foreground tracks.
	Gate bool
	// Crossgate removes the other speakers' bleed from the foreground
	// tracks.
	Crossgate bool
	// Channels of the mix; 0 means stereo.
	Channels int
	// GateOptions tune the gate and crossgate (their Noise and
	// Crossgate fields are set from Gate and Crossgate).
	GateOptions GateOptions
	// Analysis tunes the activity decisions.
	Analysis AnalyzeOptions
}

// Mixdown is a production's multitrack graph, analysed and ready to be
// rendered any number of times: Open builds a fresh graph over fresh
// decoders (an audio.Opener, which is what NormalizeStream needs).
type Mixdown struct {
	s       Settings
	an      *Analysis
	offsets []int64
	lengths []int64 // loop/trim length per track, -1 for none
	gate    []dsp.GainPlan
	balance []dsp.GainPlan
	duck    []dsp.GainPlan
	comp    []*dsp.CompressorParams // per track, nil for none
	profile []*spectral.Profile     // per track with Restoration
}

// New analyses the tracks (one pass over each) and plans every gain.
func New(ctx context.Context, s Settings) (*Mixdown, error) {
	if len(s.Tracks) == 0 {
		return nil, fmt.Errorf("%w: no tracks", dsp.ErrInvalidParameter)
	}
	for i, t := range s.Tracks {
		if t.Open == nil {
			return nil, fmt.Errorf("%w: track %d has no opener", dsp.ErrInvalidParameter, i)
		}
		if !(t.Pan >= -1 && t.Pan <= 1) || math.IsNaN(t.GainDB) || math.IsInf(t.GainDB, 0) || t.Offset < 0 {
			return nil, fmt.Errorf("%w: track %d pan %v, gain %v dB, offset %v", dsp.ErrInvalidParameter, i, t.Pan, t.GainDB, t.Offset)
		}
		if t.Restoration != nil && len(t.Restoration.Segments) > 0 {
			return nil, fmt.Errorf("%w: track %d: restoration segments are for a single track's chain", dsp.ErrInvalidParameter, i)
		}
	}
	srcs := make([]audio.Source, 0, len(s.Tracks))
	defer func() { closeAll(srcs...) }()
	tracks := make([]Track, len(s.Tracks))
	for i, t := range s.Tracks {
		src, err := t.Open(ctx)
		if err != nil {
			return nil, fmt.Errorf("track %d: %w", i, err)
		}
		srcs = append(srcs, src)
		tracks[i] = Track{Source: src, Role: t.Role, Classifier: t.Classifier}
	}
	rate := srcs[0].Format().SampleRate
	m := &Mixdown{s: s}
	for i, t := range s.Tracks {
		tracks[i].Offset = int64(math.Round(t.Offset.Seconds() * float64(rate)))
		m.offsets = append(m.offsets, tracks[i].Offset)
	}
	an, err := Analyze(ctx, tracks, s.Analysis)
	if err != nil {
		return nil, err
	}
	m.an = an
	loop := make([]bool, len(s.Tracks))
	for i, t := range s.Tracks {
		loop[i] = t.LoopTrim
	}
	ref := an.ReferenceLength(loop)
	gopts := s.GateOptions
	gopts.Noise, gopts.Crossgate = s.Gate, s.Crossgate
	for i, t := range s.Tracks {
		ta := an.Tracks[i]
		length := int64(-1)
		if t.LoopTrim {
			length = max(0, ref-ta.Offset)
		}
		m.lengths = append(m.lengths, length)
		var gate, bal, duck dsp.GainPlan
		if ta.Role == RoleForeground {
			if gate, err = GatePlan(an, i, gopts); err != nil {
				return nil, fmt.Errorf("track %d: %w", i, err)
			}
			if s.Leveler {
				if bal, err = BalancePlan(an, i, BalanceOptions{Strength: t.LevelerStrength}); err != nil {
					return nil, fmt.Errorf("track %d: %w", i, err)
				}
			}
		}
		dl := max(length, 0)
		if duck, err = DuckingPlan(an, i, DuckOptions{BackgroundGainDB: t.BackgroundGainDB, FadeTime: t.FadeTime, Length: dl}); err != nil {
			return nil, fmt.Errorf("track %d: %w", i, err)
		}
		m.gate = append(m.gate, gate)
		m.balance = append(m.balance, bal)
		m.duck = append(m.duck, duck)
		var cp *dsp.CompressorParams
		if kind := t.Compressor; kind != "" && ta.Role == RoleForeground {
			if kind == AutoCompression {
				kind = dsp.AutoCompressor(ta.Block, bal)
			}
			// The presets' reference: the speaker's RMS level at the
			// common level the balance brings it to.
			ref := ta.Block.SpeechRMS()
			if len(bal.DB) > 0 {
				ref += meanDB(bal.DB)
			}
			p, err := dsp.CompressorPreset(kind, ref)
			if err != nil {
				return nil, fmt.Errorf("track %d: %w", i, err)
			}
			cp = &p
		}
		m.comp = append(m.comp, cp)
	}
	m.profile = make([]*spectral.Profile, len(s.Tracks))
	for i, t := range s.Tracks {
		if t.Restoration == nil {
			continue
		}
		if m.profile[i], err = m.learnNoise(ctx, i); err != nil {
			return nil, fmt.Errorf("track %d noise profile: %w", i, err)
		}
	}
	return m, nil
}

// learnNoise reads track i once more to learn its noise profile, from the
// blocks where no voice is heard (the other speakers' bleed is not noise
// either).
func (m *Mixdown) learnNoise(ctx context.Context, i int) (*spectral.Profile, error) {
	src, err := m.s.Tracks[i].Open(ctx)
	if err != nil {
		return nil, err
	}
	defer closeAll(src)
	f := src.Format()
	var vad []bool
	if spectral.BlockFrames(f.SampleRate) == m.an.Tracks[i].Block.BlockLen {
		vad = m.an.Tracks[i].Block.Voiced
	}
	a, err := spectral.NewProfiler(f, spectral.ProfilerOptions{VAD: vad, NoRoom: !m.s.Tracks[i].Restoration.ReducesReverb()})
	if err != nil {
		return nil, err
	}
	if _, err := audio.Copy(ctx, a, src); err != nil {
		return nil, err
	}
	return a.Finish(), nil
}

// Analysis returns the joint analysis of the tracks.
func (m *Mixdown) Analysis() *Analysis { return m.an }

// Offset returns track i's offset in frames.
func (m *Mixdown) Offset(i int) int64 { return m.offsets[i] }

// Frames is the length of the mix: where the last track ends, looped or
// trimmed ones at their new length.
func (m *Mixdown) Frames() int64 {
	var n int64
	for i, ta := range m.an.Tracks {
		n = max(n, ta.Offset+m.TrackFrames(i))
	}
	return n
}

// TrackFrames is the length of track i as OpenTrack yields it.
func (m *Mixdown) TrackFrames(i int) int64 {
	if m.lengths[i] >= 0 {
		return m.lengths[i]
	}
	return m.an.Tracks[i].Frames
}

// Plans are the gains New planned for one track, on the track's own
// timeline; a plan without blocks is not applied.
type Plans struct {
	Gate, Balance, Duck dsp.GainPlan
}

// Plans returns the gains planned for track i.
func (m *Mixdown) Plans(i int) Plans {
	return Plans{Gate: m.gate[i], Balance: m.balance[i], Duck: m.duck[i]}
}

// Open builds the render graph over fresh decoders: per track the
// high-pass, gate and crossgate, balance, loop/trim and ducking
// (OpenTrack), then a dsp.Mix with each track's gain, pan and offset.
// Closing it closes every decoder. Open is an audio.Opener.
func (m *Mixdown) Open(ctx context.Context) (audio.Source, error) {
	var ins []dsp.MixInput
	fail := func(err error) (audio.Source, error) {
		for _, in := range ins {
			closeAll(in.Source)
		}
		return nil, err
	}
	for i, t := range m.s.Tracks {
		src, err := m.OpenTrack(ctx, i)
		if err != nil {
			return fail(fmt.Errorf("track %d: %w", i, err))
		}
		ins = append(ins, dsp.MixInput{Source: src, GainDB: t.GainDB, Pan: t.Pan, Offset: m.offsets[i]})
	}
	ch := m.s.Channels
	if ch == 0 {
		ch = 2
	}
	mix, err := dsp.NewMix(ins, dsp.MixOptions{Channels: ch})
	if err != nil {
		return fail(err)
	}
	return mix, nil
}

// OpenTrack opens track i processed as it enters the mix, before its
// gain and pan: on its own timeline (its first frame is at its offset in
// the production), filtered, gated, balanced, looped or trimmed, ducked.
// It is what a production's individual processed tracks are made of.
func (m *Mixdown) OpenTrack(ctx context.Context, i int) (audio.Source, error) {
	if i < 0 || i >= len(m.s.Tracks) {
		return nil, fmt.Errorf("%w: track %d of %d", dsp.ErrInvalidParameter, i, len(m.s.Tracks))
	}
	chain := func(ctx context.Context) (audio.Source, error) { return m.trackChain(ctx, i) }
	var src audio.Source
	var err error
	if m.lengths[i] >= 0 {
		src, err = NewLoopTrim(ctx, chain, LoopTrimOptions{Length: m.lengths[i], SourceFrames: m.an.Tracks[i].Frames})
	} else {
		src, err = chain(ctx)
	}
	if err != nil {
		return nil, err
	}
	if len(m.duck[i].DB) > 0 {
		pg, err := dsp.NewPlanGain(src, m.duck[i])
		if err != nil {
			closeAll(src)
			return nil, err
		}
		src = pg
	}
	return src, nil
}

// trackChain opens track i with the nodes that work on its own timeline.
func (m *Mixdown) trackChain(ctx context.Context, i int) (audio.Source, error) {
	src, err := m.s.Tracks[i].Open(ctx)
	if err != nil {
		return nil, err
	}
	ta := m.an.Tracks[i]
	if f := src.Format(); f != ta.Format {
		closeAll(src)
		return nil, fmt.Errorf("%w: track %d opened as %+v, analysed as %+v", audio.ErrFormatMismatch, i, f, ta.Format)
	}
	if t := m.s.Tracks[i]; t.Filter != dsp.FilterOff && ta.Role == RoleForeground {
		f, err := dsp.NewFilter(src, ta.Block, t.Filter)
		if err != nil {
			closeAll(src)
			return nil, err
		}
		src = f
	}
	if r := m.s.Tracks[i].Restoration; r != nil {
		o := spectral.DenoiserOptions{Settings: r.Settings, Profile: m.profile[i]}
		if r.Dehum != nil {
			d := *r.Dehum
			d.Profile = m.profile[i]
			o.Dehum = &d
		}
		d, err := spectral.NewDenoiser(src, o)
		if err != nil {
			closeAll(src)
			return nil, err
		}
		src = d
	}
	for _, p := range []dsp.GainPlan{m.gate[i], m.balance[i]} {
		if len(p.DB) == 0 {
			continue
		}
		pg, err := dsp.NewPlanGain(src, p)
		if err != nil {
			closeAll(src)
			return nil, err
		}
		src = pg
	}
	if cp := m.comp[i]; cp != nil {
		c, err := dsp.NewCompressor(src, *cp)
		if err != nil {
			closeAll(src)
			return nil, err
		}
		src = c
	}
	return src, nil
}

// meanDB is the mean of a gain plan in dB.
func meanDB(db []float64) float64 {
	var s float64
	for _, v := range db {
		s += v
	}
	return s / float64(len(db))
}

// Normalize renders the mix to a loudness target under a true-peak
// ceiling (dsp.NormalizeStream over Open: the graph runs two to five
// times more to measure and fit the gain) and returns the final pass.
func (m *Mixdown) Normalize(ctx context.Context, o dsp.NormalizeOptions) (*dsp.Normalize, error) {
	return dsp.NormalizeStream(ctx, m.Open, o)
}
