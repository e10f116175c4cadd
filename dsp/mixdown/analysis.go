package mixdown

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp"
	"github.com/audiopost/audiopost/dsp/classify"
	"github.com/audiopost/audiopost/loudness"
)

// FrameSeconds is the frame of the multitrack analysis: fine enough to
// open a gate on a word's first syllable and to place a ducking fade,
// coarse enough to keep an hour of a track in a few megabytes.
const FrameSeconds = 0.01

// FrameLen returns the analysis frame in frames at a sample rate (10 ms,
// rounded to the nearest frame).
func FrameLen(sampleRate int) int { return max(1, (sampleRate+50)/100) }

// Role is what a track is in the production: the API's backforeground.
// It decides which tracks duck which, which are balanced as speakers and
// which take part in the crossgate.
type Role uint8

// The roles.
const (
	// RoleAuto lets Analyze decide: a track whose active passages are
	// mostly music becomes RoleDucking, any other RoleForeground.
	RoleAuto Role = iota
	// RoleForeground is a speaker's track: gated, crossgated, balanced
	// with the other speakers, and its speech ducks the background.
	RoleForeground
	// RoleBackground is a bed kept at a constant level, BackgroundGainDB
	// below the speakers' common level.
	RoleBackground
	// RoleUnchanged is foreground whose level is left alone: its speech
	// ducks the background and its bleed is recognised on the other
	// microphones, but it is neither gated nor balanced.
	RoleUnchanged
	// RoleDucking is a bed at its own level in the pauses and
	// BackgroundGainDB below it under foreground speech.
	RoleDucking
)

var roleNames = [...]string{"auto", "foreground", "background", "unchanged", "ducking"}

// String returns the API's name of the role.
func (r Role) String() string {
	if int(r) < len(roleNames) {
		return roleNames[r]
	}
	return fmt.Sprintf("Role(%d)", r)
}

// ParseRole maps the API's backforeground value to a Role. It accepts the
// values and their display names case-insensitively ("Ducking",
// "Foreground Track", "Unchanged (Foreground)"); empty means auto.
func ParseRole(s string) (Role, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	switch t {
	case "", "auto":
		return RoleAuto, nil
	case "foreground", "foreground track":
		return RoleForeground, nil
	case "background", "background track":
		return RoleBackground, nil
	case "unchanged", "unchanged (foreground)":
		return RoleUnchanged, nil
	case "ducking":
		return RoleDucking, nil
	}
	return RoleAuto, fmt.Errorf("%w: backforeground %q", dsp.ErrInvalidParameter, s)
}

// speech reports whether the track carries a speaker: its activity ducks
// the background and its voice is what bleeds into the other microphones.
func (r Role) speech() bool { return r == RoleForeground || r == RoleUnchanged }

// Track is one input of Analyze.
type Track struct {
	// Source is read to its end; Analyze does not close it.
	Source audio.Source
	// Offset is where the track starts in the production, in frames
	// (the API's offset, seconds relative to the first track, times the
	// sample rate).
	Offset int64
	// Role is the track's backforeground; RoleAuto is resolved by the
	// analysis.
	Role Role
	// Classifier labels the track's material (classify.Auto: by
	// analysis; SpeechOnly and MusicOnly force the label).
	Classifier classify.Mode
}

// AnalyzeOptions tune the activity decisions. The zero value is the
// tuning the tests measure.
type AnalyzeOptions struct {
	// BleedMarginDB is how far above the bleed predicted from another
	// track a microphone's level must be to count as its own speaker;
	// 0 means 6 dB. Larger keeps less overlapping speech, smaller lets
	// more bleed through.
	BleedMarginDB float64
	// RoomDecayDBPerSecond is the slowest decay of a bleed's reverberant
	// tail after the other speaker stops; 0 means 100 dB/s (a room with
	// an RT60 of 0.6 s). A lower value treats more of the tail as bleed.
	RoomDecayDBPerSecond float64
}

// Activity is what a track carries in one analysis frame.
type Activity uint8

// The activities.
const (
	// Silent: nothing above the track's noise floor.
	Silent Activity = iota
	// Voice: the track's own speaker (or music, on a music track).
	Voice
	// Bleed: something above the noise floor, explained by another
	// track's speaker reaching this microphone.
	Bleed
)

// TrackAnalysis is what Analyze measured on one track. Frame arrays are on
// the track's own timeline: frame i starts at frame i*FrameLen of the
// track, Offset + i*FrameLen of the production.
type TrackAnalysis struct {
	// Format of the track.
	Format audio.Format
	// Offset is the track's start in the production, in frames.
	Offset int64
	// Frames is the track's length in frames.
	Frames int64
	// Role is the track's role, never RoleAuto.
	Role Role
	// Level is the level of every analysis frame in dB (the mean square
	// of the channels above 100 Hz, smoothed over 30 ms).
	Level []float32
	// Floor is the track's noise floor in dB per frame (minimum
	// statistics over 5 s on either side).
	Floor []float32
	// Activity is the decision of every frame.
	Activity []Activity
	// Coupling[h] is the level in dB at which track h's speaker reaches
	// this microphone relative to h's own track (-20 for bleed 20 dB
	// down), -Inf where no bleed was measured or the pair is not two
	// speech tracks.
	Coupling []float64
	// Block is the single-track analysis of the track on dsp's 100 ms
	// grid, with the spectrum: what dsp.NewHighPass, the compressor
	// presets and the speech/music labels use.
	Block *dsp.Analysis
	// SpeechLUFS is the loudness of the track's own speech (the 100 ms
	// blocks that are mostly Voice), -Inf when the speaker never talks.
	SpeechLUFS float64
	// MusicShare is the share of the active blocks labelled music.
	MusicShare float64

	pow []float32 // frame mean square, released once the levels are known
	on  []bool    // above-floor decision, released after the analysis
	ref float64   // level of the loud passages (95th percentile), dB
}

// Analysis is the joint analysis of the tracks of a production.
type Analysis struct {
	// SampleRate of every track.
	SampleRate int
	// FrameLen is the analysis frame in frames (FrameLen(SampleRate)).
	FrameLen int
	// Tracks in the order given to Analyze.
	Tracks []*TrackAnalysis
}

// Analyze reads every track to its end (one after the other: each is
// analysed on its own, then all are compared on the production timeline)
// and returns the joint analysis. All tracks must have one sample rate
// (put a dsp.Resampler in front of those that differ). It does not close
// the sources.
func Analyze(ctx context.Context, tracks []Track, o AnalyzeOptions) (*Analysis, error) {
	if len(tracks) == 0 {
		return nil, fmt.Errorf("%w: no tracks", dsp.ErrInvalidParameter)
	}
	if o.BleedMarginDB < 0 || math.IsNaN(o.BleedMarginDB) || o.RoomDecayDBPerSecond < 0 || math.IsNaN(o.RoomDecayDBPerSecond) {
		return nil, fmt.Errorf("%w: analysis options %+v", dsp.ErrInvalidParameter, o)
	}
	rate := 0
	for i, t := range tracks {
		if t.Source == nil {
			return nil, fmt.Errorf("%w: track %d has no source", dsp.ErrInvalidParameter, i)
		}
		f := t.Source.Format()
		if err := f.Validate(); err != nil {
			return nil, fmt.Errorf("%w: track %d: %w", dsp.ErrInvalidParameter, i, err)
		}
		if rate == 0 {
			rate = f.SampleRate
		}
		if f.SampleRate != rate {
			return nil, fmt.Errorf("%w: track %d is at %d Hz, track 0 at %d Hz (resample it first)", dsp.ErrInvalidParameter, i, f.SampleRate, rate)
		}
		if t.Offset < 0 {
			return nil, fmt.Errorf("%w: track %d offset %d frames", dsp.ErrInvalidParameter, i, t.Offset)
		}
		if t.Role > RoleDucking {
			return nil, fmt.Errorf("%w: track %d role %d", dsp.ErrInvalidParameter, i, t.Role)
		}
	}
	a := &Analysis{SampleRate: rate, FrameLen: FrameLen(rate)}
	for i, t := range tracks {
		s, err := newTrackSink(t.Source.Format(), a.FrameLen, t.Classifier)
		if err != nil {
			return nil, err
		}
		if _, err := audio.Copy(ctx, s, t.Source); err != nil {
			return nil, fmt.Errorf("track %d: %w", i, err)
		}
		ta := s.finish()
		if ta.Block.Classes != nil {
			ta.Block.Classes.DropFeatures() // a mixdown does not cut
		}
		ta.Offset, ta.Role = t.Offset, t.Role
		a.Tracks = append(a.Tracks, ta)
	}
	a.classify(o)
	return a, nil
}

// Length is the production's length in frames: where the last track ends.
func (a *Analysis) Length() int64 {
	var n int64
	for _, t := range a.Tracks {
		n = max(n, t.Offset+t.Frames)
	}
	return n
}

// ReferenceLength is where the production ends when the tracks marked in
// loopTrim (the API's loop_trim) are looped or trimmed: the end of the
// longest track without loop_trim, or of the longest track when all have
// it. A looped track's length is then ReferenceLength - its Offset.
func (a *Analysis) ReferenceLength(loopTrim []bool) int64 {
	var n, all int64
	for i, t := range a.Tracks {
		end := t.Offset + t.Frames
		all = max(all, end)
		if i >= len(loopTrim) || !loopTrim[i] {
			n = max(n, end)
		}
	}
	if n == 0 {
		return all
	}
	return n
}

// SpeechLUFS is the common level of the speakers: the mean in dB of the
// foreground tracks' speech levels, weighted by how long each speaks (of
// the unchanged tracks if no foreground track speaks), -Inf without
// speech. BalancePlan brings every foreground track to it, and a
// RoleBackground track sits BackgroundGainDB below it.
func (a *Analysis) SpeechLUFS() float64 {
	for _, role := range []Role{RoleForeground, RoleUnchanged} {
		var sum, dur float64
		for _, t := range a.Tracks {
			if t.Role != role || math.IsInf(t.SpeechLUFS, -1) {
				continue
			}
			d := float64(t.voiceFrames())
			sum += d * t.SpeechLUFS
			dur += d
		}
		if dur > 0 {
			return sum / dur
		}
	}
	return math.Inf(-1)
}

// Seconds is how long the track carries activity a: its speaker's
// talking time for Voice, the others' bleed for Bleed. (Statistics for
// a production's report.)
func (t *TrackAnalysis) Seconds(a Activity) float64 {
	n := 0
	for _, v := range t.Activity {
		if v == a {
			n++
		}
	}
	return float64(n) * FrameSeconds
}

// NoiseDB is the track's typical noise floor: the median of Floor, in dB
// (of the mean square above 100 Hz; -150 for digital silence).
func (t *TrackAnalysis) NoiseDB() float64 { return percentile(t.Floor, 0.5) }

func (t *TrackAnalysis) voiceFrames() int {
	n := 0
	for _, v := range t.Activity {
		if v == Voice {
			n++
		}
	}
	return n
}

// speaking marks, on the first n frames of track g's timeline, the
// frames in which another speech track has Voice.
func (a *Analysis) speaking(g, n int) []bool {
	out := make([]bool, n)
	for h, th := range a.Tracks {
		if h == g || !th.Role.speech() {
			continue
		}
		d := a.frameShift(g, h)
		for i := range out {
			if j := i + d; j >= 0 && j < len(th.Activity) && th.Activity[j] == Voice {
				out[i] = true
			}
		}
	}
	return out
}

// frameShift returns d such that frame i of track g and frame i+d of
// track h cover the same time (to the nearest frame).
func (a *Analysis) frameShift(g, h int) int {
	d := float64(a.Tracks[g].Offset-a.Tracks[h].Offset) / float64(a.FrameLen)
	return int(math.Round(d))
}

// trackSink measures one track: the frame levels of the multitrack
// analysis (above 100 Hz, so that rumble does not pass for a voice) and a
// dsp.Analyzer for the 100 ms grid.
type trackSink struct {
	format audio.Format
	flen   int
	coef   dsp.Coeffs
	z      [][2]float64
	pos    int
	acc    float64
	pow    []float32
	frames int64
	block  *dsp.Analyzer
}

// trackLoudness are the measurements of a track's Block analysis: the
// levels a production reports per track (no true peak, whose
// oversampling would cost more than the rest of the analysis).
const trackLoudness = loudness.ModeM | loudness.ModeS | loudness.ModeI | loudness.ModeLRA | loudness.ModeLevels

// detectorHighPass is the corner of the level detector's high-pass.
const detectorHighPass = 100.0

func newTrackSink(f audio.Format, flen int, mode classify.Mode) (*trackSink, error) {
	b, err := dsp.NewAnalyzer(f, dsp.AnalyzerOptions{Spectrum: true, Loudness: loudness.Options{Mode: trackLoudness}, Classifier: mode})
	if err != nil {
		return nil, err
	}
	return &trackSink{
		format: f, flen: flen, block: b,
		coef: dsp.HighPassCoeffs(float64(f.SampleRate), detectorHighPass, math.Sqrt2/2),
		z:    make([][2]float64, f.Channels),
	}, nil
}

// Write implements audio.Sink.
func (s *trackSink) Write(b audio.Buffer) error {
	if err := s.block.Write(b); err != nil {
		return err
	}
	n := b.Frames()
	c0 := s.coef
	for off := 0; off < n; {
		m := min(n-off, s.flen-s.pos)
		for c := range b {
			z0, z1 := s.z[c][0], s.z[c][1]
			var acc float64
			for _, x := range b[c][off : off+m] {
				x += 1e-25 // keeps the state out of denormals in silence
				y := c0.B0*x + z0
				z0 = c0.B1*x - c0.A1*y + z1
				z1 = c0.B2*x - c0.A2*y
				acc += y * y
			}
			if math.IsNaN(acc) || math.IsInf(acc, 0) {
				z0, z1, acc = 0, 0, float64(m) // a damaged block counts as full scale
			}
			s.z[c] = [2]float64{z0, z1}
			s.acc += acc
		}
		s.pos += m
		off += m
		if s.pos == s.flen {
			s.endFrame()
		}
	}
	s.frames += int64(n)
	return nil
}

func (s *trackSink) endFrame() {
	s.pow = append(s.pow, float32(s.acc/float64(s.pos*s.format.Channels)))
	s.pos, s.acc = 0, 0
}

func (s *trackSink) finish() *TrackAnalysis {
	if s.pos > 0 {
		s.endFrame()
	}
	return &TrackAnalysis{Format: s.format, Frames: s.frames, Block: s.block.Finish(), pow: s.pow}
}

// Activity decision constants.
const (
	floorWindow  = 500 // noise floor: minima over 5 s before and after
	floorSpread  = 3   // dB: noise's 100 ms averages stay this close to their minimum
	floorAverage = 10  // of 100 ms averages
	floorRaise   = 1.0 // dB above the minimum of the averages
	minOnFrames  = 3   // activity shorter than 30 ms is a click
	refBelowOn   = 45  // activity this far below the loud passages is ignored
	refBelowOff  = 50  // ... once active
	couplingMin  = 30  // frames of the other speaker needed to measure a coupling
	silenceDB    = -150
)

// classify makes the per-track decisions, resolves RoleAuto and compares
// the speech tracks for bleed.
func (a *Analysis) classify(o AnalyzeOptions) {
	margin := o.BleedMarginDB
	if margin == 0 {
		margin = 6
	}
	decay := o.RoomDecayDBPerSecond
	if decay == 0 {
		decay = 100
	}
	decay *= FrameSeconds
	for _, t := range a.Tracks {
		t.levels()
		t.musicShare()
		if t.Role == RoleAuto {
			t.Role = RoleForeground
			if t.MusicShare > 0.5 {
				t.Role = RoleDucking
			}
		}
	}
	for g, t := range a.Tracks {
		t.Coupling = make([]float64, len(a.Tracks))
		for h := range a.Tracks {
			t.Coupling[h] = math.Inf(-1)
			if h != g && t.Role.speech() && a.Tracks[h].Role.speech() {
				t.Coupling[h] = a.coupling(g, h)
			}
		}
	}
	for g, t := range a.Tracks {
		t.Activity = make([]Activity, len(t.Level))
		for i, on := range t.on {
			if on {
				t.Activity[i] = Voice
			}
		}
		if t.Role.speech() {
			a.markBleed(g, margin, decay)
		}
	}
	for _, t := range a.Tracks {
		t.speechLevel(a.FrameLen)
		t.on = nil
	}
}

// levels computes the smoothed frame levels, the noise floor and the
// above-floor decision of a track.
func (t *TrackAnalysis) levels() {
	n := len(t.pow)
	t.Level = make([]float32, n)
	for i := range t.pow {
		lo, hi := max(0, i-1), min(n, i+2)
		var s float64
		for _, p := range t.pow[lo:hi] {
			s += float64(p)
		}
		t.Level[i] = float32(powDB(s / float64(hi-lo)))
	}
	// The floor, by minimum statistics on 100 ms averages: the quietest
	// within floorWindow before the frame and the quietest within
	// floorWindow after it are the noise of the nearest pauses on either
	// side. Where they differ, either the noise changed (the side that saw
	// the change is higher, and the floor must follow at once) or one side
	// is a monologue without a pause (higher too, but it is speech, not
	// noise): the higher side is taken only where most of its window sits
	// near its minimum, as stationary noise does and speech never does.
	// Raised a little: a floor is never the single quietest stretch.
	avg := make([]float32, n)
	for i := range avg {
		lo, hi := max(0, i-floorAverage/2), min(n, i+floorAverage/2)
		hi = max(hi, lo+1)
		var s float64
		for _, p := range t.pow[lo:hi] {
			s += float64(p)
		}
		avg[i] = float32(powDB(s / float64(hi-lo)))
	}
	t.pow = nil
	back := slidingMin(avg, floorWindow, 0)
	t.Floor = slidingMin(avg, 0, floorWindow)
	for i, f := range t.Floor {
		b := back[i]
		fl := min(b, f)
		if hi := max(b, f); hi > fl+floorSpread {
			lo, up := max(0, i-floorWindow), i+1
			if f > b {
				lo, up = i, min(n, i+floorWindow+1)
			}
			if mostlyBelow(avg[lo:up], hi+floorSpread) {
				fl = hi
			}
		}
		t.Floor[i] = fl + floorRaise
	}
	t.ref = percentile(t.Level, 0.95)
	// How far above the floor a frame must be: 8 dB (4 dB to stay on) on
	// a clean track, less on a noisy one so that its speech still opens.
	snr := t.ref - float64(percentile(t.Floor, 0.5))
	onDB := math.Min(8, math.Max(3, 0.4*snr))
	offDB := onDB / 2
	t.on = make([]bool, n)
	active := false
	for i, l := range t.Level {
		lv, fl := float64(l), float64(t.Floor[i])
		if active {
			active = lv > fl+offDB && lv > t.ref-refBelowOff
		} else {
			active = lv > fl+onDB && lv > t.ref-refBelowOn
		}
		t.on[i] = active
	}
	dropShortRuns(t.on, minOnFrames)
	// The same hysteresis backwards (the analysis knows what comes next):
	// a word's soft start, rising out of the noise before it crosses the
	// onset threshold, belongs to the word.
	for i := n - 2; i >= 0; i-- {
		if t.on[i+1] && !t.on[i] {
			lv := float64(t.Level[i])
			t.on[i] = lv > float64(t.Floor[i])+offDB && lv > t.ref-refBelowOff
		}
	}
}

func (t *TrackAnalysis) musicShare() {
	var act, music int
	for i, v := range t.Block.Voiced {
		if v {
			act++
			if t.Block.Music[i] {
				music++
			}
		}
	}
	if act > 0 {
		t.MusicShare = float64(music) / float64(act)
	}
}

// coupling measures how track h's speaker reaches track g's microphone.
// Over the frames where h is active and loud, the level difference g-h
// clusters at the coupling where h talks and g carries its bleed (bleed
// follows its source at a fixed ratio, and never falls below it: g's
// floor or g's own voice only add to it), and at the reverse of the other
// coupling where g talks and h's loudness is g's bleed. The coupling is
// therefore the lowest cluster of the differences: the lowest peak of
// their smoothed histogram that holds a fair share of the frames, however
// little h talks compared with g.
func (a *Analysis) coupling(g, h int) float64 {
	tg, th := a.Tracks[g], a.Tracks[h]
	d := a.frameShift(g, h)
	var hist [histBins]int32
	n := 0
	for i := range tg.Level {
		j := i + d
		if j < 0 || j >= len(th.Level) || !th.on[j] || float64(th.Level[j]) < th.ref-15 {
			continue
		}
		hist[histBin(float64(tg.Level[i]-th.Level[j]))]++
		n++
	}
	if n < couplingMin {
		return math.Inf(-1)
	}
	return lowestPeak(&hist, couplingMin)
}

// lowestPeak returns the centre of the lowest local maximum of the
// histogram smoothed over +-2 dB (a triangle) that is at least a twentieth
// of the highest and has at least minCount values within +-3 dB.
func lowestPeak(h *[histBins]int32, minCount int) float64 {
	x := make([]float64, histBins)
	for i, c := range h {
		x[i] = float64(c)
	}
	const w = int(2 / histWidth)
	tri := boxSmooth(boxSmooth(x, w), w) // a box twice is a triangle
	top := 0.0
	for _, v := range tri {
		top = max(top, v)
	}
	const near = int(3 / histWidth)
	for i := 1; i < histBins-1; i++ {
		v := tri[i]
		if v < top/20 || v < tri[i-1] || v < tri[i+1] {
			continue
		}
		cnt := 0
		for k := max(0, i-near); k <= min(histBins-1, i+near); k++ {
			cnt += int(h[k])
		}
		if cnt >= minCount {
			return histLow + (float64(i)+0.5)*histWidth
		}
	}
	return math.Inf(-1) // no cluster holds enough frames
}

// boxSmooth returns the sums of x over [i-w, i+w].
func boxSmooth(x []float64, w int) []float64 {
	out := make([]float64, len(x))
	var acc float64
	for i := -w; i < len(x)+w; i++ {
		if k := i + w; k < len(x) {
			acc += x[k]
		}
		if k := i - w - 1; k >= 0 {
			acc -= x[k]
		}
		if i >= 0 && i < len(x) {
			out[i] = acc
		}
	}
	return out
}

// markBleed turns the active frames of track g that another speech
// track's bleed explains into Bleed. A frame is bleed from h when its
// level is less than margin above what h's speaker puts on g's microphone
// (h's level plus the coupling, held with the room's decay so that the
// reverberant tail after h stops counts too), and h is not itself merely
// carrying g's speaker (which keeps both of two identical tracks open).
func (a *Analysis) markBleed(g int, margin, decay float64) {
	tg := a.Tracks[g]
	type src struct {
		t        *TrackAnalysis
		shift    int
		cgh, chg float64
		hold     float64 // h's level, held with the room's decay
	}
	var srcs []src
	for h, th := range a.Tracks {
		if h == g || math.IsInf(tg.Coupling[h], -1) {
			continue
		}
		srcs = append(srcs, src{t: th, shift: a.frameShift(g, h), cgh: tg.Coupling[h], chg: th.Coupling[g], hold: math.Inf(-1)})
	}
	if len(srcs) == 0 {
		return
	}
	for i, l := range tg.Level {
		lg := float64(l)
		bleed := false
		for k := range srcs {
			s := &srcs[k]
			j := i + s.shift
			lh := math.Inf(-1)
			if j >= 0 && j < len(s.t.Level) {
				lh = float64(s.t.Level[j])
			}
			s.hold = math.Max(lh, s.hold-decay)
			if tg.Activity[i] == Voice && lg < s.hold+s.cgh+margin && !(lg+s.chg+margin > s.hold) {
				bleed = true
			}
		}
		if bleed {
			tg.Activity[i] = Bleed
		}
	}
}

// speechLevel measures the loudness of the track's own speech on the
// 100 ms grid.
func (t *TrackAnalysis) speechLevel(flen int) {
	voiced := t.voicedBlocks(flen)
	var s float64
	n := 0
	for b, v := range voiced {
		if v {
			s += t.Block.Energy[b]
			n++
		}
	}
	t.SpeechLUFS = math.Inf(-1)
	if n > 0 {
		t.SpeechLUFS = loudness.EnergyLUFS(s / float64(n))
	}
}

// SpeechAnalysis returns the track's Block analysis with Voiced limited
// to the track's own speech: what dsp.LevelerPlan, dsp.NewLeveler and the
// compressor presets (Analysis.SpeechRMS) need on a microphone that also
// carries other speakers, whose bleed would otherwise count as this
// speaker's phrases. Block itself is left as measured.
func (a *Analysis) SpeechAnalysis(track int) *dsp.Analysis {
	t := a.Tracks[track]
	s := *t.Block
	s.Voiced = t.voicedBlocks(a.FrameLen)
	return &s
}

// voicedBlocks marks the 100 ms blocks of the track's dsp.Analysis in
// which at least half of the frames are Voice.
func (t *TrackAnalysis) voicedBlocks(flen int) []bool {
	bl := t.Block.BlockLen
	nb := len(t.Block.Energy)
	cnt := make([]int, nb)
	tot := make([]int, nb)
	for i, v := range t.Activity {
		b := (i*flen + flen/2) / bl
		if b >= nb {
			break
		}
		tot[b]++
		if v == Voice {
			cnt[b]++
		}
	}
	out := make([]bool, nb)
	for b := range out {
		out[b] = tot[b] > 0 && 2*cnt[b] >= tot[b]
	}
	return out
}

func powDB(p float64) float64 {
	if p <= 1e-15 {
		return silenceDB
	}
	return 10 * math.Log10(p)
}

// Level histograms: 0.25 dB bins from -160 to +40 dB.
const (
	histLow   = -160.0
	histWidth = 0.25
	histBins  = 800
)

func histBin(db float64) int {
	return min(max(int((db-histLow)/histWidth), 0), histBins-1)
}

func histPercentile(h *[histBins]int32, n int, p float64) float64 {
	want := int(p * float64(n))
	acc := 0
	for i, c := range h {
		acc += int(c)
		if acc > want {
			return histLow + (float64(i)+0.5)*histWidth
		}
	}
	return histLow + histBins*histWidth
}

// percentile of a level array via its histogram (0.25 dB resolution).
func percentile(x []float32, p float64) float64 {
	if len(x) == 0 {
		return silenceDB
	}
	var h [histBins]int32
	for _, v := range x {
		h[histBin(float64(v))]++
	}
	return histPercentile(&h, len(x), p)
}

// slidingMin returns the minimum of x over [i-before, i+after] for every
// i, in O(n) with a monotonic deque.
func slidingMin(x []float32, before, after int) []float32 {
	n := len(x)
	out := make([]float32, n)
	dq := make([]int, 0, before+after+2) // indices, values rising
	head, next := 0, 0
	for i := 0; i < n; i++ {
		for ; next < n && next <= i+after; next++ {
			for len(dq) > head && x[dq[len(dq)-1]] >= x[next] {
				dq = dq[:len(dq)-1]
			}
			dq = append(dq, next)
		}
		for dq[head] < i-before {
			head++
		}
		if head > 64 && head > len(dq)/2 { // compact the deque now and then
			dq = append(dq[:0], dq[head:]...)
			head = 0
		}
		out[i] = x[dq[head]]
	}
	return out
}

// mostlyBelow reports whether at least half of x (every fifth value: x
// is smooth) is below thr.
func mostlyBelow(x []float32, thr float32) bool {
	n, below := 0, 0
	for i := 0; i < len(x); i += 5 {
		n++
		if x[i] < thr {
			below++
		}
	}
	return 2*below >= n
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
			clear(v[i:j])
		}
		i = j
	}
}
