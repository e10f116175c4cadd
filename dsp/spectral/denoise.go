package spectral

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/internal/quickselect"
)

// Method selects how the Denoiser tells noise from signal.
type Method int

// Denoising methods, from the most conservative to the strongest. The
// zero value is Classic, the API's default denoisemethod.
const (
	// Classic is Wiener-like spectral subtraction against a fixed noise
	// profile: for steady hiss and hum, with no model of speech, so it is
	// safe on any material.
	Classic Method = iota
	// Static is speech-preserving reduction of stationary noise: the noise
	// profile is learnt from the file's quiet passages by the Profiler, or
	// where the voice does not pause, from the cells speech isolation's
	// network takes for noise (Profile.StaticNoise), raised where the
	// noise swells above it for half a second or more to the minimum of
	// the last half second's power, and an MMSE
	// log-spectral amplitude gain weighted by the probability of speech
	// presence keeps the voice while the pauses go quiet.
	Static
	// Dynamic tracks noise that changes (traffic, air conditioning going
	// on and off, a room that changes): the noise of each frame is the
	// power of the cells around it (a second either side) that a small
	// network fitted on real speech over real noise takes for noise
	// (presence.go), held under ten times a level tracker's estimate, and
	// the gains are smoothed so the residual does not warble (musical
	// noise). A causal Denoiser (live) tracks with the level tracker
	// alone.
	Dynamic
	// SpeechIsolation keeps speech only, the strongest setting, for
	// traffic, crowds or music behind a voice: first a mask from a small
	// network fitted on real speech over real babble, music and noise
	// (isolate.go, isonet.go), which looks half a second either side of
	// the frame, then Dynamic's gain against noise tracked four times
	// faster (0.1 s of memory per hop). Without a reduction to make (the
	// automatic amount on a clean recording) the mask is off, and so it is
	// in a causal Denoiser (live), which subtracts twice the noise. A
	// pitch comb was tried twice and lost, on the low espeak voices
	// (harmonics too close for a 43 ms window) and on real music (sung
	// vocals and guitar carry the strongest pitch); the network sees the
	// harmonicity among its other inputs instead.
	SpeechIsolation
	// Music is a gentle stationary reduction for music passages (the
	// segments' "music" method): a Wiener gain against the profile with a
	// shallow floor (12 dB unless a cap is given) and no speech model, so
	// sustained notes and transients survive.
	Music
	// Off passes the signal untouched (the segments' "off" method).
	Off
)

var methodNames = []string{"classic", "static", "dynamic", "speech_isolation", "music", "off"}

// String returns the API name of the method.
func (m Method) String() string {
	if m >= 0 && int(m) < len(methodNames) {
		return methodNames[m]
	}
	return fmt.Sprintf("Method(%d)", int(m))
}

// ParseMethod maps the API's denoisemethod and segment method names to a
// Method, so the integration does not keep its own table. The segment
// method "speech" maps to Static; the integration substitutes the
// production's speech method (static, dynamic or speech_isolation) itself.
func ParseMethod(s string) (Method, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "speech" {
		return Static, nil
	}
	for i, n := range methodNames {
		if s == n {
			return Method(i), nil
		}
	}
	return 0, fmt.Errorf("%w: unknown denoise method %q", ErrInvalidParameter, s)
}

// Settings are the amounts of one stretch of the recording. The values
// follow the API: ReductionDB is denoiseamount, DeverbDB deverbamount and
// DebreathDB debreathamount.
type Settings struct {
	// Method is how noise is told from signal; the zero value is Classic.
	Method Method
	// ReductionDB caps the noise reduction: 0 chooses it from the measured
	// SNR (the Profile's; 24 dB without one), negative turns denoising
	// off, 3..100 is the cap in dB.
	ReductionDB float64
	// DeverbDB caps the reverb reduction for Static, Dynamic and
	// SpeechIsolation: 0 is the strongest setting (as the API's "full"),
	// negative is off, 3..100 the cap (of the late-reverb gain, and the
	// WPE stage removes 1 - 10^(-cap/20) of the tail it predicts).
	// Classic and Music ignore it.
	DeverbDB float64
	// DebreathDB attenuates breaths between phrases by this many dB with
	// Dynamic and SpeechIsolation; 0 or negative is off.
	DebreathDB float64
}

// Segment gives Settings to the frames from Start (inclusive, in frames of
// the stream) until the Start of the next segment or the end.
type Segment struct {
	// Start is a frame index of the stream: round(seconds*sampleRate)
	// of the API's segment start.
	Start int64
	Settings
}

// DenoiserOptions configure a Denoiser.
type DenoiserOptions struct {
	// Settings apply to the whole stream, or, with Segments, before the
	// first segment starts.
	Settings
	// Segments switch settings at given frames, crossfaded over Crossfade.
	// They must be sorted by Start.
	Segments []Segment
	// Crossfade is the length of a switch between segments in seconds;
	// 0 means 0.03.
	Crossfade float64
	// Profile is the result of the Profiler's first pass: the noise
	// spectrum for Classic, Static and Music, the SNR for automatic
	// amounts and the hum for an automatic Dehum. Without it the noise is
	// tracked as Dynamic does.
	Profile *Profile
	// RT60 is the reverberation time, in seconds, the reverb reduction
	// assumes; 0 takes the Profile's estimate (a room under 0.25 s counts
	// as dry and gets none), or 0.5 s without a Profile.
	RT60 float64
	// Dehum, when not nil, removes mains hum before denoising.
	Dehum *DehumOptions
	// Causal keeps the look-ahead to the STFT's own, as a live stream
	// needs: SpeechIsolation then goes without its network's mask, which
	// looks 0.55 s ahead (isolate.go), and subtracts twice its
	// fast-tracked noise instead; Dynamic goes without its speech
	// presence (presence.go), which looks 1.6 s ahead; the reverb
	// reduction goes without its learned mask (dvmask.go), which looks
	// dvMaskAhead hops (85 ms at 48 kHz) ahead. The reverb reduction's
	// WPE still looks a block (2 s) ahead, which is why a live stream
	// (dsp/live) refuses the reverb reduction: turn it off (DeverbDB -1)
	// where the latency matters.
	Causal bool

	// tune, in tests, may change the room's parameters the stages take
	// (rt: the RT60 in force) before they are built.
	tune func(d *Denoiser, rt float64)
}

// Constants of the estimators (tuned on speech in pink and white noise).
const (
	ddAlpha = 0.92    // decision-directed smoothing of the a priori SNR
	xiMin   = 0.00316 // -25 dB, a priori SNR floor
	// Noise tracker smoothing per hop: about 0.4 s of memory, or 0.1 s
	// with SpeechIsolation.
	trackAlphaSteady = 0.95
	trackAlphaFast   = 0.8
	// trackXiH1 is the SNR (20 dB) the tracker assumes where speech is
	// present: a bin counts as noise unless it stands well above the
	// estimate. At 15 dB, the value of the paper, the noise estimate of
	// real noise that swells (traffic, wind, a crowd) lagged under it: on
	// the tuning half's nonstationary noise Dynamic gained 1.7 dB SI-SDR,
	// 2.7 at 20 dB with dynOver at 1.5 (30 dB gained more on spoken letters but
	// less on continuous speech, which most recordings are).
	trackXiH1 = 100.0
	// dynOver is Dynamic's over-subtraction of the tracked noise. At 1.5
	// it made up for a tracker that started from a profile over the noise
	// and followed swells late (+1 dB SI-SDR on the tuning half's real
	// noise then); since the tracker starts from each bin's floor
	// (binFloor), none is best there: 0.8/1.0/1.2/1.5/2.0 gained
	// +4.18/+4.24/+4.15/+3.94/+3.56 dB on its 11 real noise mixes.
	dynOver = 1.0
)

// Constants of the estimators.
const (
	autoNoSNR = 24.0 // automatic reduction without a measured SNR
	// autoTargetDB is how far under the speech the automatic amount puts
	// the noise. Real recordings without added noise (read speech of the
	// corpus's tuning half) measure 28 to 45 dB and need nothing; 55, the
	// target before, took 12 to 27 dB off them.
	autoTargetDB  = 40.0
	deverbFullDB  = 30.0 // the strongest reverb reduction ("full")
	defaultRT60   = 0.5
	dryRT60       = 0.25 // below this a room is dry: the reverb reduction has nothing to do
	statNoiseRat  = 1.6  // frame within 2 dB of the noise: counts as noise
	statSpeechRat = 4.0  // 6 dB above: counts as signal
)

// AutoReductionDB is the reduction Settings.ReductionDB = 0 resolves to for
// a recording with the given speech-to-noise ratio: enough to put the
// noise autoTargetDB under the speech, at most 40 dB, and none (0) where
// that takes less than 3 dB (the API's smallest amount) or the pauses are
// digitally silent (+Inf); 24 dB when the ratio is unknown (NaN).
func AutoReductionDB(snrDB float64) float64 {
	switch {
	case math.IsNaN(snrDB) || math.IsInf(snrDB, -1):
		return autoNoSNR
	case math.IsInf(snrDB, 1):
		return 0
	}
	a := math.Round(min(40, autoTargetDB-snrDB))
	if a < 3 {
		return 0
	}
	return a
}

type resolved struct {
	start   int64
	s       Settings
	gmin    float64 // noise floor gain (1: off)
	applied float64 // reduction in dB, 0 when off
	rmin    float64 // reverb floor gain (1: off)
	tracked bool    // uses the tracked noise
}

// SegmentStats reports what the Denoiser did to one segment and measured
// on its input and output.
type SegmentStats struct {
	// Start and End are frames of the stream, [Start, End).
	Start, End int64
	// Method is the segment's method (the one after the crossfade).
	Method Method
	// ReductionDB is the noise reduction cap applied (the automatic amount
	// resolved), 0 when the segment was not denoised.
	ReductionDB float64
	// DeverbDB and DebreathDB are the reverb and breath reductions applied,
	// 0 when off.
	DeverbDB, DebreathDB float64
	// DehumHz is the mains frequency whose hum was removed (50 or 60, as
	// the API reports it; Dehum.Hum has the measured frequency), 0 when
	// none.
	DehumHz float64
	// Noise level (dBFS RMS) on the frames judged free of signal, and the
	// signal-to-noise ratio, before and after; -Inf or NaN when the
	// segment had no such frames.
	NoiseBeforeDB, NoiseAfterDB float64
	SNRBeforeDB, SNRAfterDB     float64
}

// segAcc accumulates a segment's measurements. Noise levels are medians
// over the frames free of signal (a histogram in 0.5 dB steps): the mean
// would be pulled up by the odd frame that still holds the tail of a word.
type segAcc struct {
	noiseIn, noiseOut [statRows]int32
	sigIn, sigOut     float64
	noiseN, sigN      int
}

const statRows = 280 // 0.5 dB from -140 dBFS

func statRow(pow float64) int {
	return min(statRows-1, max(0, int(math.Floor(2*(10*math.Log10(pow+1e-30)+140)))))
}

func statMedian(h *[statRows]int32, n int) float64 {
	acc := 0
	for r, c := range h {
		acc += int(c)
		if 2*acc >= n {
			return float64(r)/2 - 140 + 0.25
		}
	}
	return math.Inf(-1)
}

// Denoiser is the restoration node: an STFT (square-root Hann, 50%
// overlap, FFTSize by rate) whose bins are scaled by one common gain per
// bin computed from the mean power of all channels, so the stereo image is
// kept; the gain depends on the Method of the segment the frame is in. It
// optionally removes hum before (Dehum) and breaths after (Debreath).
// The STFT latency is compensated inside: output frame i is input frame i.
type Denoiser struct {
	src   audio.Source
	out   audio.Source
	dehum *Dehum
	wpe   *wpe        // dereverberation before the gains; nil when off
	wrun  *hopRunner  // drives wpe
	dvm   *dvMask     // the learned reverb mask after the rule; nil when off
	next  [][]float64 // dvm's look-ahead: the power of the frames after the one at hand
	iso   *isolator   // speech isolation's mask (its network); nil without
	irun  *hopRunner  // drives iso
	brth  *Debreath
	run   *hopRunner
	st    *stft

	// Dynamic's noise from speech presence (presence.go); nil without.
	pres          *presenceStage // the network's band gains
	prun          *hopRunner     // drives pres
	spp           *sppNoise      // the weighted means of the power
	lamE          []float64      // spp's estimate of the frame
	looked, msFed int64          // frames analysed (look-ahead); frames fed to trackMin
	msLook        int64          // hops the minimum statistics reach past the frame (msAhead or 0)

	fs, ch, n, hop, bins int
	powScale             float64
	segs                 []resolved
	xf                   int64
	profile              []float64
	invProfile           []float64 // 1/profile, for the gains against it
	staticProfile        []float64 // Static's: the Profile's StaticNoise, else profile
	frame                int64

	needTrack, needRev bool
	needMin            bool // the minimum statistics' floor (msFloor) is kept
	trackInit          bool
	lamT, pbar         []float64 // lamT: the tracked noise, lamS raised to the minimum statistics' floor
	lamS               []float64 // the SPP tracker's noise
	msSub              []float64 // minimum tracker: msSubs minima of msSubLen frames each, per bin
	msCur              []float64 // the minimum of the sub-window being filled
	msSubMax, msCurMax []float64 // the same for the maxima
	msOld, msOldMax    []float64 // the minima and maxima over the complete sub-windows
	msFloor            []float64 // msBias times the minimum over the window
	lamP               []float64 // Static's noise: the profile raised to msFloor; nil without Static
	msN                int       // frames in the sub-window being filled
	msAt               int       // the oldest complete sub-window's slot
	lamL               []float64 // SpeechIsolation's noise: the profile's shape at the frame's level; nil without
	lvlHist            [levelMinFrames]float64
	lvl                float64
	ratio              []float64 // scratch for the level's median
	P, prevA, lam      []float64
	lamR, revHist      []float64 // late reverb PSD; smoothed power history (revDelay frames)
	revHistN           int
	revFactor          float64
	G, Gb, Gs, pS      []float64
	xi, g1, floor, gam []float64 // gam: xi gamma/(1+xi) of the refined xi
	zeta, zw           []float64 // smoothed a priori SNR; its wide average
	trackA             float64

	// The room's reverberation as the Profile measured it: the share of
	// the WPE stage's reduction it calls for (reverbStrength), and the
	// late reverberation's recursion (reverb): the share of a frame's
	// power that feeds the tail (reverbKappa), the decay per hop, and the
	// last frame's reverberant power per bin.
	revStrength, revKappa, revStep float64
	revOver                        float64 // the late reverberation's scale
	revOnset                       int     // hops back the late reverberation is predicted from
	wpeP                           wpeParams
	revQ                           []float64

	acc []segAcc

	onGain   func(g []float64)                 // tests: sees every frame's gain
	onReverb func(frame int64, lamR []float64) // tests: may replace the late reverberation
	onNoise  func(frame int64, lam []float64)  // tests: may replace the tracked noise
}

// The late reverberation is predicted from the power revDelay hops back
// (43 ms at 48 kHz) decayed along the room's exponential, scaled by
// revOver. The gain works on what the WPE stage left, whose tail is
// already shorter: on testaudio's rooms the plain model (1) beats the
// over-estimate (2) that suited the raw reverberation, by 0.2 to 0.4 dB.
const (
	revDelay = 2
	revOver  = 1.0
)

// NewDenoiser returns src denoised as opts say.
func NewDenoiser(src audio.Source, opts DenoiserOptions) (*Denoiser, error) {
	f := src.Format()
	if err := f.Validate(); err != nil {
		return nil, err
	}
	d := &Denoiser{src: src, fs: f.SampleRate, ch: f.Channels}
	d.n = FFTSize(f.SampleRate)
	d.hop = d.n / 2
	d.bins = d.n/2 + 1
	d.powScale = 4 / float64(d.n) / float64(d.n)
	if p := opts.Profile; p != nil {
		if p.SampleRate != f.SampleRate || len(p.Noise) != d.bins {
			return nil, fmt.Errorf("%w: profile for %d Hz used on a %d Hz stream", ErrInvalidParameter, p.SampleRate, f.SampleRate)
		}
		if p.Frames > 0 && !math.IsInf(p.NoiseDB, -1) {
			d.profile = p.Noise
			d.staticProfile = p.Noise
			if len(p.StaticNoise) == d.bins {
				d.staticProfile = p.StaticNoise
			}
			d.invProfile = make([]float64, len(p.Noise))
			for k, v := range p.Noise {
				d.invProfile[k] = 1 / max(v, 1e-30)
			}
		}
	}
	snr := math.NaN()
	if opts.Profile != nil {
		snr = opts.Profile.SNRDB
	}
	all := append([]Segment{{Start: 0, Settings: opts.Settings}}, opts.Segments...)
	for i, s := range all {
		if i > 0 && s.Start < all[i-1].Start {
			return nil, fmt.Errorf("%w: segments not sorted by start", ErrInvalidParameter)
		}
		r, err := resolve(s, snr, d.profile != nil)
		if err != nil {
			return nil, err
		}
		if i > 0 && s.Start == d.segs[len(d.segs)-1].start {
			d.segs[len(d.segs)-1] = r
			continue
		}
		d.segs = append(d.segs, r)
	}
	xf := opts.Crossfade
	if xf == 0 {
		xf = 0.03
	}
	if xf < 0 || xf > 1 {
		return nil, fmt.Errorf("%w: crossfade %g s", ErrInvalidParameter, xf)
	}
	d.xf = max(1, int64(xf*float64(d.fs)))
	breath := false
	for _, r := range d.segs {
		d.needTrack = d.needTrack || r.tracked
		d.needMin = d.needMin || r.tracked || r.s.Method == Static
		d.needRev = d.needRev || r.rmin < 1
		breath = breath || r.s.DebreathDB > 0
	}
	rt := opts.RT60
	if rt == 0 {
		rt = defaultRT60
		if opts.Profile != nil {
			rt = opts.Profile.RT60 // 0: a dry recording, nothing to remove
		}
	}
	// A room given by its RT60 alone is taken as all reverberation.
	d.revStrength, d.revKappa = 1, 1
	d.wpeP = wpeDefaults()
	if opts.RT60 == 0 && opts.Profile != nil {
		d.revStrength = reverbStrength(opts.Profile.DRRDB)
		d.wpeP.delay = wpeDelayFor(opts.Profile.DRRDB)
		d.wpeP.context = wpeContextFor(opts.Profile.DRRDB)
		if !opts.Causal {
			// A block is WPE's look-ahead.
			d.wpeP.blockSec = wpeBlockFor(opts.Profile.DRRDB)
		}
	}
	if rt < 0 || rt > 10 {
		return nil, fmt.Errorf("%w: RT60 %g s", ErrInvalidParameter, rt)
	}
	if rt >= dryRT60 {
		delta := 3 * math.Ln10 / rt // energy decay rate per second
		d.revFactor = math.Exp(-2 * delta * float64(revDelay*d.hop) / float64(d.fs))
		d.revStep = math.Exp(-2 * delta * float64(d.hop) / float64(d.fs))
		if opts.RT60 == 0 && opts.Profile != nil {
			d.revKappa = reverbKappa(d.revStep, opts.Profile.DRRDB)
		}
	} else {
		d.needRev = false
	}
	d.revOver, d.revOnset = revOver, revDelay
	if opts.tune != nil {
		opts.tune(d, rt)
	}
	roomDRR := 0.0 // a room given by its RT60 alone is all reverberation
	if opts.RT60 == 0 && opts.Profile != nil {
		roomDRR = opts.Profile.DRRDB
	}
	// The mask was fitted in rooms the room model measured: a room
	// assumed (no Profile, no RT60 given) is not one. It reads
	// dvMaskAhead hops ahead, which a causal stream does not have.
	if net := dvMaskFor(roomDRR, rt); d.needRev && net != nil && (opts.RT60 > 0 || opts.Profile != nil) && !opts.Causal {
		d.dvm = newDvMask(f.SampleRate, d.n, net, rt, roomDRR)
	}

	b := d.bins
	mk := func() []float64 { return make([]float64, b) }
	d.lamT, d.lamS, d.pbar, d.P, d.prevA, d.lam = mk(), mk(), mk(), mk(), mk(), mk()
	if d.needMin {
		d.msCur, d.msFloor = mk(), mk()
		if d.profile != nil {
			for _, r := range d.segs {
				if r.s.Method == Static {
					d.lamP = mk()
					break
				}
			}
		}
		d.msSub = make([]float64, msSubs*b)
		d.msSubMax, d.msCurMax = make([]float64, msSubs*b), mk()
		d.msOld, d.msOldMax = mk(), mk()
		for k := range d.msSub {
			d.msSub[k] = math.Inf(1)
		}
		for k := range d.msCur {
			d.msCur[k] = math.Inf(1)
			d.msOld[k] = math.Inf(1)
		}
	}
	d.lamR, d.G, d.Gb, d.Gs, d.pS = mk(), mk(), mk(), mk(), mk()
	// Speech isolation follows the noise faster (0.1 s instead of 0.4 s
	// per hop's memory), which suits traffic and crowds and costs a little
	// on steady noise.
	d.trackA = trackAlphaSteady
	for _, r := range d.segs {
		if r.isolates() {
			d.trackA = trackAlphaFast
		}
	}
	d.xi, d.g1, d.floor, d.gam, d.zeta, d.zw = mk(), mk(), mk(), mk(), mk(), mk()
	if d.profile != nil {
		for _, r := range d.segs {
			if r.isolates() {
				d.lamL, d.ratio = mk(), mk()
				break
			}
		}
	}
	d.revHist = make([]float64, d.revOnset*b)
	d.revQ = make([]float64, b)
	for k := range d.Gs {
		d.Gs[k] = 1
	}
	d.acc = make([]segAcc, len(d.segs))

	up := src
	if opts.Dehum != nil {
		o := *opts.Dehum
		if o.Profile == nil {
			o.Profile = opts.Profile
		}
		dh, err := NewDehum(src, o)
		if err != nil {
			return nil, err
		}
		d.dehum = dh
		up = dh
	}
	if d.needRev {
		// Dereverberation by linear prediction first, then the late
		// reverberation gain on what is left. Each frame loses as much of
		// its predicted tail as its segment's DeverbDB allows.
		d.wpe = newWPE(f.Channels, f.SampleRate, d.wpeP, d.wpeAmount)
		d.wrun = newHopRunner(up, d.wpe.hop, d.wpe.latency(), d.wpe.process)
		up = d.wrun
	}
	for _, r := range d.segs {
		if r.isolates() && !opts.Causal {
			d.iso = newIsolator(f.Channels, f.SampleRate, d.isoAmount)
			d.lamL, d.ratio = nil, nil // the level follower serves the gain without the mask
			d.irun = newHopRunner(up, d.iso.hop, d.iso.latency(), d.iso.process)
			up = d.irun
			break
		}
	}
	if !opts.Causal {
		for _, r := range d.segs {
			if r.s.Method == Dynamic && r.applied > 0 {
				d.pres = newPresenceStage(f.Channels, f.SampleRate)
				d.prun = newHopRunner(up, d.pres.hop, d.pres.latency(), d.pres.process)
				up = d.prun
				L := int(math.Round(sppLongSec * float64(f.SampleRate) / float64(d.hop)))
				w := max(1, int(math.Round(sppShortSec*float64(f.SampleRate)/float64(d.hop))))
				d.spp = newSPPNoise(b, L, w)
				d.lamE = mk()
				break
			}
		}
	}
	d.st = newSTFT(f.Channels, d.n, d.hop, d.spectral)
	d.P, d.G = d.st.pow, d.st.g
	ahead := 0
	if d.needTrack && !opts.Causal {
		d.msLook = msAhead
		ahead = msAhead
		if d.spp != nil {
			ahead = max(ahead, d.spp.L)
		}
	}
	if d.dvm != nil {
		// Static's gain stage reads no further than its STFT without the
		// mask: with it, dvMaskAhead hops more.
		ahead = max(ahead, dvMaskAhead)
		d.next = make([][]float64, dvMaskAhead)
	}
	if ahead > 0 {
		d.st.lookAhead(ahead, d.lookMin)
	}
	d.run = newHopRunner(up, d.hop, d.st.latency(), d.st.process)
	d.out = d.run
	if breath {
		sched := make([]BreathSegment, len(d.segs))
		for i, r := range d.segs {
			a := 0.0
			if r.s.DebreathDB > 0 && (r.s.Method == Dynamic || r.s.Method == SpeechIsolation) {
				a = r.s.DebreathDB
			}
			sched[i] = BreathSegment{Start: r.start, AmountDB: a}
		}
		var sp float64
		if opts.Profile != nil {
			sp = opts.Profile.SpeechDB
		}
		br, err := NewDebreath(d.run, DebreathOptions{Segments: sched, SpeechDB: sp})
		if err != nil {
			return nil, err
		}
		d.brth = br
		d.out = br
	}
	return d, nil
}

func resolve(s Segment, snr float64, haveProfile bool) (resolved, error) {
	r := resolved{start: s.Start, s: s.Settings, gmin: 1, rmin: 1}
	if s.Start < 0 {
		return r, fmt.Errorf("%w: segment start %d", ErrInvalidParameter, s.Start)
	}
	if s.Method < Classic || s.Method > Off {
		return r, fmt.Errorf("%w: method %d", ErrInvalidParameter, s.Method)
	}
	for _, a := range []float64{s.ReductionDB, s.DeverbDB, s.DebreathDB} {
		if math.IsNaN(a) || a > 100 || (a > 0 && a < 1) {
			return r, fmt.Errorf("%w: amount %g dB outside 1..100", ErrInvalidParameter, a)
		}
	}
	if s.Method == Off {
		return r, nil
	}
	amount := s.ReductionDB
	if amount == 0 {
		amount = AutoReductionDB(snr)
	}
	if s.Method == Music {
		amount = min(amount, 12)
		if s.ReductionDB > 0 {
			amount = s.ReductionDB
		}
	}
	if amount > 0 {
		r.gmin = math.Pow(10, -amount/20)
		r.applied = amount
	}
	switch s.Method {
	case Static, Dynamic, SpeechIsolation:
		if s.DeverbDB >= 0 {
			a := s.DeverbDB
			if a == 0 {
				a = deverbFullDB
			}
			r.rmin = math.Pow(10, -a/20)
		}
	}
	r.tracked = s.Method == Dynamic || s.Method == SpeechIsolation || !haveProfile
	return r, nil
}

// Format implements audio.Source.
func (d *Denoiser) Format() audio.Format { return d.src.Format() }

// Read implements audio.Source.
func (d *Denoiser) Read(dst audio.Buffer) (int, error) { return d.out.Read(dst) }

// Close closes the upstream source.
func (d *Denoiser) Close() error { return closeSource(d.src) }

// Latency is the delay the node compensates inside, in frames: how far it
// reads ahead of what it returns. Memory per channel is a few of these
// (the WPE stage of reverb reduction keeps a block of input, 2 s or 8 s
// (wpeBlockFor), and the bins under 5 kHz over it: at 48 kHz 2.2 MB per
// channel on 2 s blocks, 8.4 MB on 8 s).
func (d *Denoiser) Latency() int {
	l := d.st.latency()
	if d.dehum != nil {
		l += d.dehum.Latency()
	}
	if d.wrun != nil {
		l += d.wrun.skipTotal()
	}
	if d.irun != nil {
		l += d.irun.skipTotal()
	}
	if d.prun != nil {
		l += d.prun.skipTotal()
	}
	if d.brth != nil {
		l += d.brth.Latency()
	}
	return l
}

// Stats returns per segment what was applied and measured, complete once
// the stream has been read to the end.
func (d *Denoiser) Stats() []SegmentStats {
	out := make([]SegmentStats, len(d.segs))
	hum := 0.0
	if d.dehum != nil {
		hum = float64(d.dehum.Hum().Base)
	}
	for i, r := range d.segs {
		end := d.run.inTotal
		if i+1 < len(d.segs) {
			end = d.segs[i+1].start
		}
		a := d.acc[i]
		st := SegmentStats{Start: r.start, End: max(r.start, end), Method: r.s.Method, ReductionDB: r.applied, DehumHz: hum,
			NoiseBeforeDB: math.Inf(-1), NoiseAfterDB: math.Inf(-1), SNRBeforeDB: math.NaN(), SNRAfterDB: math.NaN()}
		if r.rmin < 1 {
			st.DeverbDB = -20 * math.Log10(r.rmin)
		}
		if r.s.DebreathDB > 0 && (r.s.Method == Dynamic || r.s.Method == SpeechIsolation) {
			st.DebreathDB = r.s.DebreathDB
		}
		if a.noiseN > 0 {
			st.NoiseBeforeDB = statMedian(&a.noiseIn, a.noiseN)
			st.NoiseAfterDB = statMedian(&a.noiseOut, a.noiseN)
			nin, nout := math.Pow(10, st.NoiseBeforeDB/10), math.Pow(10, st.NoiseAfterDB/10)
			if a.sigN > 0 {
				sin, sout := a.sigIn/float64(a.sigN), a.sigOut/float64(a.sigN)
				st.SNRBeforeDB = 10 * math.Log10(max(sin-nin, nin*1e-3)/nin)
				st.SNRAfterDB = 10 * math.Log10(max(sout-nout, nout*1e-3)/max(nout, 1e-30))
			}
		}
		out[i] = st
	}
	return out
}

// wpeAmount is the fraction of the predicted reverberation the WPE stage
// removes from the frame centred at c: 1 - the reverb floor of its
// segment, crossfaded as the gains are.
func (d *Denoiser) wpeAmount(c int64) float64 {
	cur, prev, w := d.segmentAt(c)
	a := 1 - d.segs[cur].rmin
	if prev != cur && w < 1 {
		a = w*a + (1-w)*(1-d.segs[prev].rmin)
	}
	return a * d.revStrength
}

// isoAmount is the weight of speech isolation's mask at the
// frame centred at c (isoDepth in its segments, 0 elsewhere, crossfaded
// as the gains are) and its floor gain (the segment's noise floor).
func (d *Denoiser) isoAmount(c int64) (w, floor float64) {
	cur, prev, x := d.segmentAt(c)
	one := func(r *resolved) (float64, float64) {
		if r.isolates() {
			return isoDepth(r.applied), r.gmin
		}
		return 0, 1
	}
	w, floor = one(&d.segs[cur])
	if prev != cur && x < 1 {
		pw, pf := one(&d.segs[prev])
		if w == 0 || (pw > 0 && pf < floor) {
			floor = pf
		}
		w = x*w + (1-x)*pw
	}
	return w, floor
}

// segmentAt returns the segment index for frame centre c and, inside a
// crossfade, the previous segment's index and the weight of the new one.
func (d *Denoiser) segmentAt(c int64) (cur, prev int, w float64) {
	i := sort.Search(len(d.segs), func(i int) bool { return d.segs[i].start > c }) - 1
	i = max(i, 0)
	// Is c within a crossfade around a boundary?
	half := d.xf / 2
	if i+1 < len(d.segs) && c >= d.segs[i+1].start-half {
		// Before the next boundary, inside its fade.
		w = float64(c-(d.segs[i+1].start-half)) / float64(d.xf)
		return i + 1, i, w
	}
	if i > 0 && c < d.segs[i].start+d.xf-half {
		w = float64(c-(d.segs[i].start-half)) / float64(d.xf)
		return i, i - 1, w
	}
	return i, i, 1
}

// spectral computes the gain of one frame from the mean power of the
// channels per bin; the STFT applies it.
func (d *Denoiser) spectral(P, G []float64) {
	t := d.frame
	d.frame++
	centre := (t+1)*int64(d.hop) - int64(d.n/2)
	cur, prev, w := d.segmentAt(centre)

	d.P = P
	if d.needMin && d.st.ahead == 0 {
		d.trackMin()
	}
	if d.needMin && d.st.ahead > 0 && int64(d.st.ahead) != d.msLook {
		// The look-ahead reaches further than the minimum statistics'
		// window should (or they keep behind the frame, as Static's do):
		// it takes the frames msLook ahead from the ring.
		for ; d.msFed <= t+d.msLook; d.msFed++ {
			d.P = d.st.powRing[int(d.msFed%int64(d.st.ahead+1))]
			d.trackMin()
		}
		d.P = P
	}
	if d.needTrack {
		d.track()
		if d.onNoise != nil {
			d.onNoise(t, d.lamT)
		}
	}
	if d.spp != nil {
		d.spp.estimate(d.lamE, d.msFloor, d.lamT)
	}
	if d.lamL != nil {
		d.level()
	}
	if d.needRev {
		d.reverb()
		if d.onReverb != nil {
			d.onReverb(t, d.lamR)
		}
	}
	d.gain(&d.segs[cur], d.G)
	if prev != cur && w < 1 {
		d.gain(&d.segs[prev], d.Gb)
		for k := range d.G {
			d.G[k] = w*d.G[k] + (1-w)*d.Gb[k]
		}
	}
	if d.dvm != nil {
		for j := range d.next {
			d.next[j] = d.st.powRing[int((t+1+int64(j))%int64(d.st.ahead+1))]
		}
		d.dvm.see(t, P, d.next)
		if r := &d.segs[cur]; r.rmin < 1 && r.s.Method != Off {
			// No lower than the rule's floor, which mixes the noise's
			// (the noise reduction's cap) and the reverberation's by
			// their shares of the bin.
			d.dvm.apply(t, P, d.lamR, d.lam, G, d.floor)
		}
	}
	if d.onGain != nil {
		d.onGain(G)
	}
	var pin, pout, plam float64
	for k, g := range G {
		pin += P[k]
		pout += g * g * P[k]
		plam += d.lam[k]
	}
	// Statistics on the real part of the stream only.
	if centre >= 0 && (d.run.eof == false || centre < d.run.inTotal) {
		a := &d.acc[cur]
		switch {
		case pin < statNoiseRat*plam:
			a.noiseIn[statRow(pin*d.powScale)]++
			a.noiseOut[statRow(pout*d.powScale)]++
			a.noiseN++
		case pin > statSpeechRat*plam:
			a.sigIn += pin * d.powScale
			a.sigOut += pout * d.powScale
			a.sigN++
		}
	}
}

// track updates the tracked noise PSD with the speech-presence-probability
// estimator of Gerkmann and Hendriks (2012): each bin's periodogram updates
// the noise as far as speech is unlikely, with a guard against stagnation.
func (d *Denoiser) track() {
	P := d.P
	if !d.trackInit {
		d.trackInit = true
		if d.profile != nil {
			copy(d.lamS, d.profile)
		} else {
			for k, v := range P {
				d.lamS[k] = max(v, 1e-20)
			}
		}
		for k, l := range d.lamS {
			d.lamT[k] = max(l, d.msFloor[k])
		}
		return
	}
	c := trackXiH1 / (1 + trackXiH1)
	for k, v := range P {
		l := d.lamS[k]
		post := v / max(l, 1e-30)
		p := 1 / (1 + (1+trackXiH1)*fastExpNeg(min(post*c, 700)))
		pb := 0.9*d.pbar[k] + 0.1*p
		d.pbar[k] = pb
		if pb > 0.99 {
			p = min(p, 0.99)
		}
		e := (1-p)*v + p*l
		l = max(d.trackA*l+(1-d.trackA)*e, 1e-20)
		d.lamS[k] = l
		d.lamT[k] = max(l, d.msFloor[k])
	}
}

// The noise floor under the estimates: the minimum of each bin's raw
// periodogram over the last msSubs*msSubLen frames (about half a second
// at 48 kHz), times msBias, kept in sub-windows as Martin's minimum
// statistics (2001) keep it. The SPP tracker (track) follows noise that
// swells only as far as it takes the swell for noise; where it takes it
// for speech (a crowd, a machine speeding up, a swell longer than a
// syllable) it stays behind, and Static's profile does not move at all:
// both are raised to this floor, which follows any swell that outlasts
// the window and stays under speech, whose bins fall back to the noise
// between harmonics and syllables. On the tuning half's 11 real noise
// mixes (6 nonstationary) it took static from +3.76 to +4.12 dB SI-SDR
// (nonstationary +1.91 -> +2.55, stationary +5.99 -> +6.02) and dynamic
// from +4.24 to +4.42 (+2.31 -> +2.68, 6.56 -> 6.50). Windows of
// 16/20/24/32 frames gained dynamic +4.26/+4.46/+4.50/+4.38 there
// (bias 7); biases of 5/6/7/8 +4.42/+4.44/+4.45/+4.46 (static
// +4.12/+4.16/+4.18/+4.20), but above 5 static lost its 5 dB on
// espeak-ng speech in pink noise (TestStationaryNoise: +5.56 without the
// floor, +5.09 at 5, +4.98 at 6, +4.78 at 8): espeak-ng's vowels hold
// their harmonics longer than a person's. The floor of the same window
// smoothed over 5 bins lost on both halves of the trade (dynamic +4.27 at
// its best bias): it fills the gaps between the harmonics.
const (
	msSubs   = 4
	msSubLen = 6
	msBias   = 5.0
	// msSteady: a bin whose power stayed within this ratio over the
	// window is a steady tone (a periodogram of noise spreads over a ratio
	// of 50 or more in 24 frames), which a floor times msBias would take
	// off: it gets none.
	msSteady = 4.0
)

// msAhead is how many hops (about a quarter of a second at 48 kHz) the
// minimum statistics' window reaches past the frame whose gain it serves
// in a Denoiser that tracks the noise (Dynamic, SpeechIsolation, or any
// method without a Profile) and is not causal: the window of
// msSubs*msSubLen frames then lies around the frame rather than behind
// it, so that the floor rises with noise that swells as it starts, not
// half a second later, and falls as the swell ends. On the tuning half's
// 11 real noise mixes at 5-15 dB SNR (6 nonstationary) it took dynamic
// from +4.42 to +4.59 dB SI-SDR (nonstationary +2.68 -> +2.97, stationary
// +6.50 -> +6.54; 8 and 16 hops +4.56 and +4.59). Static gained less
// there (+4.12 -> +4.22) and lost on espeak-ng speech in pink noise
// (TestStationaryNoise, +5.09 -> +4.96: its vowels hold their harmonics
// through more of a centred window), so a Denoiser of Static segments
// alone keeps the window behind the frame and its latency. It costs no
// transform: the STFT keeps msAhead+1 frames of spectra and power
// (stft.lookAhead), 0.3 MB for a mono stream at 48 kHz and 0.2 MB more
// per further channel.
const msAhead = 12

// lookMin is the STFT's look-ahead: it runs the minimum statistics on
// each frame as it is analysed, msAhead hops before its gain (when the
// look-ahead is msAhead; spectral feeds them from the ring when it is
// longer), and enters the frame into Dynamic's speech presence estimate.
func (d *Denoiser) lookMin(pow []float64) {
	if d.spp != nil {
		d.pres.gains(d.looked, d.spp.g)
		d.spp.push(pow, d.spp.g)
	}
	d.looked++
	if d.msLook > 0 && int64(d.st.ahead) == d.msLook {
		d.P = pow
		d.trackMin()
	}
}

// trackMin updates msFloor with this frame's power, and lamP with it.
func (d *Denoiser) trackMin() {
	b := d.bins
	cur, curMax := d.msCur[:b], d.msCurMax[:b]
	old, oldMax := d.msOld[:b], d.msOldMax[:b]
	floor := d.msFloor[:b]
	minStat(d.P[:b], cur, curMax, old, oldMax, floor)
	if d.lamP != nil {
		maxOf(d.lamP[:b], d.staticProfile[:b], floor)
	}
	d.msN++
	if d.msN < msSubLen {
		return
	}
	// The sub-window is complete: it replaces the oldest, and the extremes
	// of the complete ones are taken again (once every msSubLen frames
	// instead of every frame).
	copy(d.msSub[d.msAt*b:(d.msAt+1)*b], cur)
	copy(d.msSubMax[d.msAt*b:(d.msAt+1)*b], curMax)
	d.msAt = (d.msAt + 1) % msSubs
	copy(old, d.msSub[:b])
	copy(oldMax, d.msSubMax[:b])
	for j := 1; j < msSubs; j++ {
		sub, subMax := d.msSub[j*b:(j+1)*b], d.msSubMax[j*b:(j+1)*b]
		for k := range old {
			old[k] = min(old[k], sub[k])
			oldMax[k] = max(oldMax[k], subMax[k])
		}
	}
	for k := range cur {
		cur[k] = math.Inf(1)
		curMax[k] = 0
	}
	d.msN = 0
}

// levelMinFrames is how many frames (about 130 ms at 48 kHz) the noise
// level of SpeechIsolation is the minimum of.
const levelMinFrames = 6

// level sets lamL to the profile's noise shape at this frame's level, for
// noise whose spectrum keeps its shape while its level swells and fades
// (traffic, a crowd's roar, air conditioning), as the per-bin tracker
// cannot follow under speech. The level is the median over the bins of
// the frame's power over the profile, divided by ln 2 (the median of a
// periodogram bin of noise is ln 2 times its mean): a voice covers fewer
// than half of the bins at a time, so the median is noise. Over the
// frames of a syllable that holds more, the minimum over levelMinFrames
// frames keeps it, and the result is smoothed by half per frame.
func (d *Denoiser) level() {
	r := d.ratio[:0]
	for k := 2; k < len(d.P); k++ { // DC and the first bin hold rumble
		r = append(r, d.P[k]/max(d.profile[k], 1e-30))
	}
	a := quickselect.Nth(r, len(r)/2) / math.Ln2
	t := d.frame - 1
	d.lvlHist[t%levelMinFrames] = a
	m := a
	for j := int64(1); j < levelMinFrames && j <= t; j++ {
		m = min(m, d.lvlHist[(t-j)%levelMinFrames])
	}
	if t == 0 {
		d.lvl = m
	} else {
		d.lvl = 0.5*d.lvl + 0.5*m
	}
	for k, v := range d.profile {
		d.lamL[k] = max(d.lvl*v, 1e-20)
	}
}

// reverb predicts the late reverberation PSD of this frame from the
// noise-free power revDelay hops ago decayed along the exponential model
// of the room (Lebart et al., 2001; Habets, 2007). Where the Profile
// measured the reverberation under the direct sound, only the share
// revKappa of a frame's power beyond the tail it already holds feeds the
// tail (Habets, 2009): the whole of it took the speech of sox's rooms
// (tail 10-15 dB under it) for reverberation, which cost them 1 to 3 dB
// of SI-SDR on the tuning half.
func (d *Denoiser) reverb() {
	b := d.bins
	slot := int(d.frame%int64(d.revOnset)) * b
	old := d.revHist[slot : slot+b]
	noise := d.lamT
	if d.profile != nil {
		noise = d.profile
	}
	for k, v := range d.P {
		d.lamR[k] = d.revOver * d.revFactor * old[k]
		// Twice the noise is taken off so that the noise's own
		// fluctuation is not mistaken for a reverberant tail.
		p := max(v-2*noise[k], 0)
		if d.revKappa < 1 {
			r := min(d.revStep*d.revQ[k], p)
			p = r + d.revKappa*(p-r)
		}
		d.revQ[k] = p
		old[k] = p
	}
}

// isolates reports whether speech isolation reduces noise in r's
// segment. With its noise reduction off (ReductionDB -1, or an automatic
// amount of 0) SpeechIsolation follows and weighs the noise as Dynamic
// does: its own noise (the profile's shape at the frame's level, twice
// over, followed fast) is there to take the background the mask leaves,
// and with nothing to take it only held back the reverb reduction, whose
// gain shares the bin with the noise. TestRealDeverb -realhalf tuning
// -realfull, speech_isolation with noise reduction off: image-source
// rooms +4.11 -> +4.19 dB, sox +5.06 -> +5.43, as Dynamic's; with the
// automatic amount, where it chose 0 dB on some sox rooms, +4.36 -> +4.37
// and +5.16 -> +5.37.
func (r *resolved) isolates() bool { return r.s.Method == SpeechIsolation && r.applied > 0 }

// gain computes the gain of every bin under the settings r into G.
func (d *Denoiser) gain(r *resolved, G []float64) {
	if r.s.Method == Off || (r.gmin >= 1 && r.rmin >= 1) {
		for k := range G {
			G[k] = 1
		}
		copy(d.lam, d.lamT)
		return
	}
	noise := d.lamT
	switch {
	case !r.tracked && r.s.Method == Static && d.lamP != nil:
		noise = d.lamP
	case !r.tracked:
		noise = d.profile
	case r.s.Method == Dynamic && d.lamE != nil:
		noise = d.lamE
	case r.isolates() && d.lamL != nil && d.iso == nil:
		noise = d.lamL // no mask before: the profile's shape at the frame's level
	}
	P, lam, prevA := d.P, d.lam, d.prevA
	xiA, gA, flA, vA := d.xi, d.g1, d.floor, d.gam
	over := 1.0
	switch {
	case r.s.Method == Classic:
		over = 1.5
	case r.isolates():
		// After the background mask, twice the noise's profile at the
		// frame's level took what the mask had left of the voice (tuning
		// half, babble/music: +0.3/+1.6 dB SI-SDR against +0.9/+1.8 with
		// Dynamic's gain).
		over = 2
		if d.iso != nil {
			over = dynOver
		}
	case r.s.Method == Dynamic || r.s.Method == SpeechIsolation:
		over = dynOver
	}
	gmin := r.gmin
	rev := r.rmin < 1
	wiener := r.s.Method == Classic || r.s.Method == Music
	// Against the fixed profile and no reverberation, 1/(over*noise) needs
	// no division per frame.
	inv := d.invProfile
	if rev || r.tracked || r.s.Method == Static {
		inv = nil
	}
	invOver := 1 / over
	if inv == nil && !rev && !wiener {
		// The common case, against the noise alone, in whole-frame passes
		// (gainkern.go); the floor is gmin in every bin (flA is read
		// with the reverberation only).
		copy(lam, noise)
		lsaFirst(P, noise, prevA, gA, vA, over)
	} else {
		for k, v := range P {
			ln := noise[k] * over
			l := ln
			floor := gmin
			var il float64
			switch {
			case inv != nil:
				il = min(inv[k]*invOver, 1e30)
			case rev:
				l += d.lamR[k]
				il = 1 / max(l, 1e-30)
				floor = (ln*gmin + d.lamR[k]*r.rmin) * il
			default:
				il = 1 / max(l, 1e-30)
			}
			lam[k] = noise[k]
			gamma := min(v*il, 1e4)
			xi := max(ddAlpha*prevA[k]*il+(1-ddAlpha)*max(gamma-1, 0), xiMin)
			flA[k] = floor
			if wiener {
				g := xi / (1 + xi)
				prevA[k] = g * g * v
				G[k] = min(max(g, floor), 1)
				continue
			}
			// Kept for the passes below: the first-step xi/(1+xi) and gamma.
			gA[k] = xi / (1 + xi)
			vA[k] = gamma
		}
		if wiener {
			return
		}
	}
	lsaRefine(P, prevA, xiA, gA, vA)
	d.presence()
	// OM-LSA (Cohen and Berdugo, 2001): the LSA gain where speech is
	// present, the floor where it is absent, geometrically weighted.
	if rev {
		for k := range G {
			p, fl := d.pS[k], flA[k]
			g := fastExp2Neg(-(p*fastLog2(max(gA[k], 1e-6)) + (1-p)*fastLog2(fl)))
			G[k] = min(max(g, fl), 1)
		}
	} else {
		omLSA(G, d.pS, gA, fastLog2(gmin), gmin)
	}
	if r.s.Method == Dynamic || r.s.Method == SpeechIsolation {
		// Musical noise control: where speech is unlikely, the gain follows
		// a smoothed track instead of jumping frame to frame.
		for k := range G {
			if d.pS[k] < 0.5 {
				G[k] = min(G[k], 0.6*d.Gs[k]+0.4*G[k])
			}
			d.Gs[k] = G[k]
		}
	}
}

// Speech presence: the a priori probability of speech absence follows
// Cohen's OM-LSA (2001): the a priori SNR, smoothed over time, is averaged
// over a narrow (3 bins) and a wide (31 bins) neighbourhood and over the
// frame; each average maps to a likelihood of speech between -10 and -5 dB,
// and speech is absent unless all three say otherwise. Isolated noise
// peaks, which would otherwise become musical tones, therefore stay at the
// floor, while voiced harmonics (which come with wide-band energy) pass.
const (
	zetaBeta  = 0.7
	zetaMin   = 0.1
	zetaMax   = 0.3162
	qMax      = 0.95
	wideBins  = 15
	localBins = 1
)

func zetaLikelihood(z float64) float64 {
	switch {
	case z <= zetaMin:
		return 0
	case z >= zetaMax:
		return 1
	}
	return (fastLog2(z) - zetaLog2Min) * zetaInvSpan
}

// The constants of zetaLikelihood, computed once (a call to math.Log2 in
// it cost a tenth of the gain).
var (
	zetaLog2Min = math.Log2(zetaMin)
	zetaInvSpan = 1 / math.Log2(zetaMax/zetaMin)
)

// presence computes the speech presence probability of every bin into pS.
func (d *Denoiser) presence() {
	z := d.zeta
	xi := d.xi
	var zf float64
	for k := range z {
		z[k] = zetaBeta*z[k] + (1-zetaBeta)*xi[k]
		zf += z[k]
	}
	zf /= float64(len(z))
	pf := zetaLikelihood(zf)
	n := len(z)
	// Running sums for the local and wide moving averages.
	var sl, sw float64
	for k := 0; k <= min(localBins, n-1); k++ {
		sl += z[k]
	}
	for k := 0; k <= min(wideBins, n-1); k++ {
		sw += z[k]
	}
	const invL, invW = 1.0 / (2*localBins + 1), 1.0 / (2*wideBins + 1)
	for k := 0; k < n; k++ {
		il, iw := invL, invW
		if k < wideBins || k >= n-wideBins { // windows cut by the ends
			il = 1 / float64(min(k+localBins, n-1)-max(k-localBins, 0)+1)
			iw = 1 / float64(min(k+wideBins, n-1)-max(k-wideBins, 0)+1)
		}
		// The averages now, the probabilities in a second pass that
		// does not wait on the running sums.
		d.pS[k], d.zw[k] = sl*il, sw*iw
		// Slide the windows.
		if j := k + localBins + 1; j < n {
			sl += z[j]
		}
		if j := k - localBins; j >= 0 {
			sl -= z[j]
		}
		if j := k + wideBins + 1; j < n {
			sw += z[j]
		}
		if j := k - wideBins; j >= 0 {
			sw -= z[j]
		}
	}
	presenceProb(d.pS, d.zw, xi, d.gam, pf)
}
