package livestream

import (
	"fmt"
	"slices"

	"github.com/audiopost/audiopost/dsp"
	"github.com/audiopost/audiopost/dsp/live"
	"github.com/audiopost/audiopost/dsp/spectral"
	"github.com/audiopost/audiopost/production"
)

// wholeFile are the algorithm keys a live stream refuses, with why: each
// needs to know the recording before it changes it, and a live stream is
// processed in one pass as it is played.
var wholeFile = map[string]string{
	"cutter":         "cutting needs the whole recording",
	"silence_cutter": "cutting needs the whole recording",
	"filler_cutter":  "cutting needs the whole recording",
	"cough_cutter":   "cutting needs the whole recording",
	"music_cutter":   "cutting needs the whole recording",
	"cut_mode":       "cutting needs the whole recording",
	"fadetime":       "cutting needs the whole recording",
	"segments":       "segments are time ranges of a recording",
	"maxlra":         "a loudness range limit needs a second pass over the whole recording",
	"maxs":           "a short-term loudness limit needs a second pass over the whole recording",
	"maxm":           "a momentary loudness limit needs a second pass over the whole recording",
	"deverbamount":   "reverb reduction looks seconds ahead; a live stream allows under 100 ms (set -1)",
	"debreathamount": "breath reduction looks 1.2 s ahead; a live stream allows under 100 ms (set -1)",
}

// speechMusic are keys of the speech/music split, which a live stream
// does not make: they are accepted with a warning naming them.
var speechMusic = []string{"levelerstrength_music", "compressor_music", "musicgain", "msclassifier"}

// Config maps a live stream's algorithms, single-track keys, onto the live
// graph's settings. A key the live graph cannot honour is an error under
// "algorithms.KEY" (production.FieldErrors, wrapping production.ErrInvalid
// through its Err): cutters, segments, the second-pass loudness limits,
// reverb and breath reduction, filter methods and loudness methods that
// need an analysis. Keys it accepts but does not apply come back as
// warnings naming them. Unset keys take the live defaults, which differ
// from a production's where a production's default needs the whole file
// (filtermethod hipfilter, no reverb reduction, compressor soft).
func Config(v production.AlgorithmValues) (live.Config, []string, error) {
	errs := production.FieldErrors{}
	production.ValidateAlgorithms(v, production.ScopeSingletrack, "algorithms", errs)
	set := func(k string) bool { x, ok := v[k]; return ok && x != nil }
	a := v.In(production.ScopeSingletrack)
	for k, why := range wholeFile {
		if !set(k) {
			continue
		}
		// Off is fine: -1 for the amounts, false for switches, 0 for limits.
		switch x := v[k].(type) {
		case bool:
			if !x {
				continue
			}
		case int:
			if (k == "deverbamount" || k == "debreathamount") && x == -1 || (k == "maxlra" || k == "maxs" || k == "maxm") && x == 0 {
				continue
			}
		}
		if k == "cut_mode" || k == "fadetime" {
			if !a.Bool("cutter") {
				continue
			}
		}
		errs.Add("algorithms."+k, "not available on a live stream: "+why)
	}
	c := live.DefaultConfig()
	c.HighPass = 0
	if a.Bool("hipfilter") {
		c.HighPass = dsp.DefaultHighPass
		if m := a.String("filtermethod"); set("filtermethod") && m != "hipfilter" {
			errs.Add("algorithms.filtermethod", fmt.Sprintf("not available on a live stream: %s needs an analysis of the whole recording; use hipfilter", m))
		}
	}
	c.Leveler = a.Bool("leveler")
	c.LevelerStrength = float64(a.Int("levelerstrength_speech")) / 100
	switch comp := a.String("compressor_speech"); comp {
	case "off":
		c.Compressor = ""
	case "auto":
		// The automatic choice reads the dynamics of the whole recording;
		// live, the leveler has evened the speech already.
		c.Compressor = dsp.Soft
	default:
		c.Compressor = dsp.CompressorKind(comp)
	}
	c.Normalize = a.Bool("normloudness")
	c.TargetLUFS = float64(a.Int("loudnesstarget"))
	c.MaxTruePeak = a.Float("maxpeak")
	c.DualMono = a.Bool("dualmono")
	if m := a.String("loudnessmethod"); m != "program" {
		errs.Add("algorithms.loudnessmethod", fmt.Sprintf("not available on a live stream: %s loudness needs the speech of the whole recording; use program", m))
	}
	if a.Bool("denoise") {
		method := map[string]spectral.Method{"classic": spectral.Dynamic, "static": spectral.Dynamic,
			"dynamic": spectral.Dynamic, "speech_isolation": spectral.SpeechIsolation}[a.String("denoisemethod")]
		c.Denoise = &spectral.Settings{Method: method, ReductionDB: float64(a.Int("denoiseamount")), DeverbDB: -1}
		if amount := a.Int("dehumamount"); amount != -1 {
			c.Dehum = &live.DehumOptions{Base: a.Int("dehum"), ReductionDB: float64(amount)}
		}
	}
	var warnings []string
	for _, k := range speechMusic {
		if set(k) {
			warnings = append(warnings, fmt.Sprintf("%s is not applied: a live stream makes no speech/music split", k))
		}
	}
	if a.Bool("denoise") && set("denoisemethod") && (a.String("denoisemethod") == "classic" || a.String("denoisemethod") == "static") {
		warnings = append(warnings, fmt.Sprintf("denoisemethod %s runs as dynamic: a live stream has no noise profile learnt beforehand", a.String("denoisemethod")))
	}
	slices.Sort(warnings)
	if err := errs.Err(); err != nil {
		return c, warnings, err
	}
	if err := c.Validate(); err != nil {
		return c, warnings, err
	}
	return c, warnings, nil
}
