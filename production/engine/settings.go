package engine

import (
	"fmt"
	"time"

	"github.com/audiopost/audiopost/dsp"
	"github.com/audiopost/audiopost/dsp/chain"
	"github.com/audiopost/audiopost/dsp/classify"
	"github.com/audiopost/audiopost/dsp/mixdown"
	"github.com/audiopost/audiopost/dsp/spectral"
	"github.com/audiopost/audiopost/loudness"
	"github.com/audiopost/audiopost/production"
)

// Settings are a production's algorithms, in the API's vocabulary, as the
// DSP's settings. SettingsOf is the one place where the API's keys meet
// dsp: the engine runs on what it returns and the status page shows it
// (the loudness chart's target); a new key is a row of the algorithm
// table and a line here.
type Settings struct {
	// Chain processes a single-track production's input, or finishes a
	// multitrack production's mix: loudness control, normalization and
	// the true-peak limit only (filtering, leveling and compression ran
	// per track in the mixdown).
	Chain chain.Config
	// Mixdown are a multitrack production's master switches; the engine
	// adds the tracks it mixes, from Tracks.
	Mixdown mixdown.Settings
	// Tracks are the settings of a multitrack production's tracks by id
	// (their Open is set by the engine).
	Tracks map[string]Track
	// Normalize says whether the output is brought to Chain.TargetLUFS
	// (production.Production.Normalizes).
	Normalize bool
	// IntroMethod measures intros and outros for the gain that brings each
	// to Chain.TargetLUFS: the production's loudness method, the
	// programme's for dialog (a jingle need not have speech).
	IntroMethod loudness.Method
}

// Track is one multitrack track's settings.
type Track struct {
	mixdown.TrackSettings
	// Panned says the track asks for a place in the stereo image (pan
	// set, centered too), which makes the mix stereo.
	Panned bool
}

// SettingsOf translates p's algorithms (see Settings).
func SettingsOf(p *production.Production) (Settings, error) {
	a := p.Settings()
	s := Settings{Normalize: p.Normalizes()}
	if !p.IsMultitrack {
		s.Chain = chainConfig(a)
	} else {
		s.Chain = masterConfig(a)
		s.Mixdown = mixdown.Settings{Leveler: a.Bool("leveler"), Gate: a.Bool("gate"), Crossgate: a.Bool("crossgate")}
		s.Tracks = map[string]Track{}
		for _, m := range p.MultiInputFiles {
			if m.Type != production.InputMultitrack {
				continue
			}
			t, err := trackSettings(m)
			if err != nil {
				return s, fmt.Errorf("track %s: %w", m.ID, err)
			}
			s.Tracks[m.ID] = t
		}
	}
	s.IntroMethod = s.Chain.Method
	if s.IntroMethod == loudness.Dialog {
		s.IntroMethod = loudness.Program
	}
	return s, nil
}

// The API's choices as the DSP's types.
var (
	chainFilters = map[string]dsp.FilterMethod{"hipfilter": dsp.FilterHighPass, "autoeq": dsp.FilterAutoEQ,
		"bwe": dsp.FilterBWE, "studiovoice": dsp.FilterStudioVoice}
	chainCompressions = map[string]chain.Compression{"auto": chain.CompressionAuto, "off": chain.CompressionOff,
		"soft": chain.CompressionSoft, "medium": chain.CompressionMedium, "hard": chain.CompressionHard}
	classifierModes = map[string]classify.Mode{"on": classify.Auto, "speech": classify.SpeechOnly, "music": classify.MusicOnly}
	denoiseMethods  = map[string]spectral.Method{"classic": spectral.Classic, "static": spectral.Static,
		"dynamic": spectral.Dynamic, "speech_isolation": spectral.SpeechIsolation}
	cutModes = map[string]classify.CutMode{"apply_cuts": classify.ApplyCuts,
		"set_cuts_to_silence": classify.SilenceCuts, "export_uncut_audio": classify.ExportCuts}
	cutters = []string{"silence_cutter", "filler_cutter", "cough_cutter", "music_cutter"}
)

// chainConfig maps single-track algorithms onto the chain's settings.
func chainConfig(a production.AlgorithmView) chain.Config {
	c := chain.DefaultConfig()
	c.Filter = dsp.FilterOff
	if a.Bool("hipfilter") {
		c.Filter = chainFilters[a.String("filtermethod")]
	}
	c.Leveler = a.Bool("leveler")
	c.SpeechStrength = float64(a.Int("levelerstrength_speech")) / 100
	c.MusicStrength = float64(a.Int("levelerstrength")) / 200
	if a.Set("levelerstrength_music") {
		c.MusicStrength = float64(a.Int("levelerstrength_music")) / 100
	}
	c.MusicGainDB = float64(a.Int("musicgain"))
	c.SpeechCompression = chainCompressions[a.String("compressor_speech")]
	c.MusicCompression = chainCompressions[a.String("compressor_music")]
	c.Normalize = a.Bool("normloudness")
	loudnessControl(&c, a)
	c.Classifier = classifierModes[a.String("msclassifier")]
	if a.Bool("denoise") {
		c.Restoration = restoration(a)
	}
	c.Cutting = cutting(a)
	return c
}

// masterConfig maps a multitrack production's master algorithms onto the
// chain that finishes the mix: loudness control, normalization and the
// true-peak limit, nothing else.
func masterConfig(a production.AlgorithmView) chain.Config {
	c := chain.DefaultConfig()
	c.Filter = dsp.FilterOff
	c.Leveler = false
	c.SpeechCompression, c.MusicCompression = chain.CompressionOff, chain.CompressionOff
	c.Normalize = true
	loudnessControl(&c, a)
	return c
}

// loudnessControl maps the loudness keys a single track and a master
// share.
func loudnessControl(c *chain.Config, a production.AlgorithmView) {
	c.TargetLUFS = float64(a.Int("loudnesstarget"))
	c.Method = loudness.Method(a.String("loudnessmethod"))
	c.DualMono = a.Bool("dualmono")
	c.MaxLRA = float64(a.Int("maxlra"))
	c.MaxShortTerm = float64(a.Int("maxs"))
	c.MaxMomentary = float64(a.Int("maxm"))
	c.MaxTruePeak = a.Float("maxpeak")
}

// restoration maps the denoise family. The amounts keep the API's
// conventions, which spectral.Settings shares: 0 automatic (full for
// deverb), -1 off, 3..100 a cap in dB. Dehum runs with every method, not
// only classic: hum is as unwanted under the other methods.
func restoration(a production.AlgorithmView) *spectral.Restoration {
	settings, dehum := denoiseSettings(a)
	method := settings.Method
	r := &spectral.Restoration{Settings: settings, Dehum: dehum}
	for _, sg := range a.Segments("segments") {
		s := settings
		switch sg.DenoiseMethod {
		case "speech":
			// The production's method when it models speech.
			if method == spectral.Classic {
				s.Method = spectral.Static
			}
		case "music":
			s.Method = spectral.Music
		case "classic":
			s.Method = spectral.Classic
		case "off":
			s.Method = spectral.Off
		}
		for _, v := range []struct {
			set *int
			dst *float64
		}{{sg.DenoiseAmount, &s.ReductionDB}, {sg.DeverbAmount, &s.DeverbDB}, {sg.DebreathAmount, &s.DebreathDB}} {
			if v.set != nil {
				*v.dst = float64(*v.set)
			}
		}
		r.Segments = append(r.Segments, spectral.RestorationSegment{Start: sg.Start, Settings: s})
	}
	return r
}

// denoiseSettings maps the keys a single-track production and a
// multitrack track share: method, amounts and dehum.
func denoiseSettings(a production.AlgorithmView) (spectral.Settings, *spectral.DehumOptions) {
	name := a.String("denoisemethod")
	settings := spectral.Settings{Method: denoiseMethods[name], ReductionDB: float64(a.Int("denoiseamount")),
		DeverbDB: float64(a.Int("deverbamount")), DebreathDB: float64(a.Int("debreathamount"))}
	if !production.ReducesReverb(name) {
		settings.DeverbDB = -1 // 0, "full", is tolerated there
	}
	var dehum *spectral.DehumOptions
	if amount := a.Int("dehumamount"); amount != -1 {
		dehum = &spectral.DehumOptions{Base: a.Int("dehum"), ReductionDB: float64(amount)}
	}
	return settings, dehum
}

// trackSettings maps a multitrack track's algorithms.
func trackSettings(m production.MultiInputFile) (Track, error) {
	a := m.Algorithms.In(production.ScopeTrack)
	t := Track{TrackSettings: mixdown.DefaultTrack(nil), Panned: a.String("pan") != ""}
	t.Offset = time.Duration(m.Offset * float64(time.Second))
	t.Filter = dsp.FilterOff
	if a.Bool("hipfilter") {
		t.Filter = chainFilters[a.String("filtermethod")]
	}
	t.Classifier = classifierModes[a.String("msclassifier")]
	if a.Bool("denoise") {
		settings, dehum := denoiseSettings(a)
		t.Restoration = &spectral.Restoration{Settings: settings, Dehum: dehum}
	}
	var err error
	if t.Role, err = mixdown.ParseRole(a.String("backforeground")); err != nil {
		return t, err
	}
	if t.Pan, err = mixdown.ParsePan(a.String("pan")); err != nil {
		return t, err
	}
	t.BackgroundGainDB = float64(a.Int("backgroundgain"))
	t.FadeTime = time.Duration(a.Int("ducking_fadetime")) * time.Millisecond
	t.GainDB = float64(a.Int("gain"))
	t.LevelerStrength = float64(a.Int("levelerstrength")) / 100
	t.LoopTrim = a.Bool("loop_trim")
	if c := a.String("compressor"); c != "off" {
		t.Compressor = dsp.CompressorKind(c) // auto, soft, medium, hard: the same names
	}
	return t, nil
}

// cutting maps the cutters. cutter on takes every cutter's own setting
// (silences and fillers by default); a cutter switched on explicitly while
// cutter is unset cuts alone.
func cutting(a production.AlgorithmView) chain.Cutting {
	on := func(k string) bool { return a.Bool(k) }
	if !a.Bool("cutter") {
		on = func(k string) bool { return a.Set(k) && a.Bool(k) }
	}
	c := chain.Cutting{Mode: cutModes[a.String("cut_mode")], Fade: float64(a.Int("fadetime")) / 1000}
	c.Detect.Silence, c.Detect.Filler, c.Detect.Cough, c.Detect.Music = on(cutters[0]), on(cutters[1]), on(cutters[2]), on(cutters[3])
	return c
}
