// Package chain is the single-track processing pipeline: it turns the
// API's algorithms object into a typed Config and runs analysis, the
// processing chain (filter, leveler, compressor) and loudness
// normalization with a true-peak limiter, streaming: each pass re-opens
// the input instead of storing audio, so memory is bounded by the graph,
// not by the length of the file.
package chain

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// ErrInvalidConfig is wrapped by FieldErrors: some algorithm values are
// not allowed.
var ErrInvalidConfig = errors.New("chain: invalid algorithms")

// FieldErrors maps an algorithm key to what is wrong with its value.
type FieldErrors map[string]string

func (e FieldErrors) Error() string {
	keys := make([]string, 0, len(e))
	for k := range e {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + ": " + e[k]
	}
	return "chain: invalid algorithms: " + strings.Join(parts, "; ")
}

// Is makes errors.Is(err, ErrInvalidConfig) true.
func (e FieldErrors) Is(target error) bool { return target == ErrInvalidConfig }

// Filter methods (filtermethod).
const (
	FilterHighPass    = "hipfilter"
	FilterAutoEQ      = "autoeq"
	FilterBWE         = "bwe"
	FilterStudioVoice = "studiovoice"
)

// Loudness methods (loudnessmethod).
const (
	MethodProgram = "program" // BS.1770 gated integrated loudness
	MethodDialog  = "dialog"  // loudness of the voiced blocks only
	MethodRMS     = "rms"     // unweighted RMS level, dBFS
)

// Config holds the single-track algorithm settings of the API. The zero
// value is not useful: start from DefaultConfig.
type Config struct {
	// Filtering switches the filter stage (API hipfilter, also filtering).
	Filtering bool
	// FilterMethod is hipfilter, autoeq, bwe or studiovoice.
	FilterMethod string
	// Leveler switches the adaptive leveler.
	Leveler bool
	// LevelerStrength is 0-120 %, in steps of 10.
	LevelerStrength int
	// LevelerStrengthSpeech and LevelerStrengthMusic override
	// LevelerStrength for speech and music segments; -1 means unset
	// (speech: LevelerStrength; music: half of it).
	LevelerStrengthSpeech, LevelerStrengthMusic int
	// Compressor is auto, soft, medium, hard or off.
	Compressor string
	// CompressorSpeech and CompressorMusic override Compressor for speech
	// and music segments; "" means unset (speech: Compressor; music: soft
	// when Compressor is auto, else Compressor).
	CompressorSpeech, CompressorMusic string
	// MusicGain is a gain in dB for music segments (-12..+6).
	MusicGain int
	// NormLoudness switches loudness normalization. Without it the true-
	// peak limiter still enforces MaxPeak.
	NormLoudness bool
	// LoudnessTarget in LUFS. The default is -16 (the API's client
	// default; the format info's -18 is for broadcast-style outputs).
	LoudnessTarget int
	// MaxPeak is the true-peak ceiling in dBTP (0 to -6).
	MaxPeak float64
	// DualMono measures mono as if played on two speakers (+3 LU).
	DualMono bool
	// LoudnessMethod is program, dialog or rms.
	LoudnessMethod string
	// MaxLRA, MaxS and MaxM are limits in LU (0: none): loudness range,
	// short-term and momentary loudness above the target.
	MaxLRA, MaxS, MaxM int
	// Lossy leaves LossyHeadroom below MaxPeak for outputs that will be
	// encoded lossily (MP3, AAC, ...), whose decoders overshoot. Not an
	// API key: the caller sets it from the output format.
	Lossy bool
	// LossyHeadroom overrides LossyHeadroom when > 0 (EncodeFile raises it
	// when a re-decoded output still overshoots).
	LossyHeadroomDB float64
	// Sequential keeps every pass on the calling goroutine. By default,
	// when more than one CPU is available (GOMAXPROCS), each pass runs as
	// stages in goroutines of their own (decode and filter; leveler and
	// compressor; meters side by side), with bit-identical results. Not
	// an API key.
	Sequential bool
}

// LossyHeadroom is the default extra true-peak headroom in dB for lossy
// outputs: MP3 at podcast bitrates overshoots the PCM true peak by up to
// about 1 dB on speech (AAC sometimes more; EncodeFile measures and
// re-renders).
const LossyHeadroom = 1.0

// DefaultConfig returns the API defaults.
func DefaultConfig() Config {
	return Config{
		Filtering: true, FilterMethod: FilterHighPass,
		Leveler: true, LevelerStrength: 100,
		LevelerStrengthSpeech: -1, LevelerStrengthMusic: -1,
		Compressor: "auto", NormLoudness: true, LoudnessTarget: -16,
		MaxPeak: 0, LoudnessMethod: MethodProgram,
	}
}

// Allowed values.
var (
	filterMethods   = []string{FilterHighPass, FilterAutoEQ, FilterBWE, FilterStudioVoice}
	compressors     = []string{"auto", "soft", "medium", "hard", "off"}
	loudnessMethods = []string{MethodProgram, MethodDialog, MethodRMS}
	targets         = []int{-13, -14, -15, -16, -18, -19, -20, -23, -24, -26, -27, -31}
	maxPeaks        = []float64{0, -0.5, -1, -1.5, -2, -3, -4, -5, -6}
	maxLRAs         = []int{0, 3, 4, 5, 6, 8, 9, 10, 12, 15, 18, 20}
	maxSs           = []int{0, 3, 4, 5, 6, 8, 9, 10, 12}
	maxMs           = []int{0, 8, 9, 10, 11, 12, 15, 18, 20}
)

// Targets returns the allowed loudness targets.
func Targets() []int { return append([]int(nil), targets...) }

// MaxPeaks returns the allowed true-peak ceilings.
func MaxPeaks() []float64 { return append([]float64(nil), maxPeaks...) }

// ParseAlgorithms reads the API's algorithms JSON object over
// DefaultConfig. Unknown keys are ignored (they belong to other stages);
// values of the wrong type or outside the allowed values are reported per
// key in a FieldErrors, and the other keys still apply.
func ParseAlgorithms(data []byte) (Config, error) {
	cfg := DefaultConfig()
	if len(strings.TrimSpace(string(data))) == 0 {
		return cfg, nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return cfg, fmt.Errorf("%w: algorithms is not a JSON object: %v", ErrInvalidConfig, err)
	}
	return cfg, cfg.apply(raw)
}

func (c *Config) apply(raw map[string]json.RawMessage) error {
	errs := FieldErrors{}
	boolean := func(key string, dst *bool) {
		if v, ok := raw[key]; ok {
			b, err := parseBool(v)
			if err != nil {
				errs[key] = err.Error()
				return
			}
			*dst = b
		}
	}
	oneOf := func(key string, dst *string, allowed []string) {
		if v, ok := raw[key]; ok {
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				errs[key] = "must be a string, one of " + strings.Join(allowed, ", ")
				return
			}
			s = strings.ToLower(strings.TrimSpace(s))
			for _, a := range allowed {
				if s == a {
					*dst = s
					return
				}
			}
			errs[key] = fmt.Sprintf("%q is not one of %s", s, strings.Join(allowed, ", "))
		}
	}
	intIn := func(key string, dst *int, ok func(int) bool, want string) {
		if v, present := raw[key]; present {
			f, err := parseNumber(v)
			if err != nil || f != math.Trunc(f) || !ok(int(f)) {
				errs[key] = "must be " + want
				return
			}
			*dst = int(f)
		}
	}
	in := func(list []int) func(int) bool {
		return func(v int) bool {
			for _, a := range list {
				if a == v {
					return true
				}
			}
			return false
		}
	}
	strength := func(v int) bool { return v >= 0 && v <= 120 && v%10 == 0 }

	boolean("filtering", &c.Filtering)
	boolean("hipfilter", &c.Filtering) // the documented name wins if both are given
	oneOf("filtermethod", &c.FilterMethod, filterMethods)
	boolean("leveler", &c.Leveler)
	intIn("levelerstrength", &c.LevelerStrength, strength, "0, 10, ..., 120")
	intIn("levelerstrength_speech", &c.LevelerStrengthSpeech, strength, "0, 10, ..., 120")
	intIn("levelerstrength_music", &c.LevelerStrengthMusic, strength, "0, 10, ..., 120")
	oneOf("compressor", &c.Compressor, compressors)
	oneOf("compressor_speech", &c.CompressorSpeech, compressors)
	oneOf("compressor_music", &c.CompressorMusic, compressors)
	intIn("musicgain", &c.MusicGain, func(v int) bool { return v >= -12 && v <= 6 }, "an integer from -12 to 6 (dB)")
	boolean("normloudness", &c.NormLoudness)
	intIn("loudnesstarget", &c.LoudnessTarget, in(targets), "one of "+joinInts(targets))
	if v, ok := raw["maxpeak"]; ok {
		f, err := parseNumber(v)
		valid := false
		for _, a := range maxPeaks {
			if err == nil && f == a {
				valid = true
			}
		}
		if valid {
			c.MaxPeak = f
		} else {
			errs["maxpeak"] = "must be one of 0, -0.5, -1, -1.5, -2, -3, -4, -5, -6"
		}
	}
	boolean("dualmono", &c.DualMono)
	oneOf("loudnessmethod", &c.LoudnessMethod, loudnessMethods)
	intIn("maxlra", &c.MaxLRA, in(maxLRAs), "one of "+joinInts(maxLRAs))
	intIn("maxs", &c.MaxS, in(maxSs), "one of "+joinInts(maxSs))
	intIn("maxm", &c.MaxM, in(maxMs), "one of "+joinInts(maxMs))
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// Validate checks a Config built in code against the allowed values.
func (c Config) Validate() error {
	b, err := json.Marshal(map[string]any{
		"filtermethod": c.FilterMethod, "levelerstrength": c.LevelerStrength,
		"compressor": c.Compressor, "loudnesstarget": c.LoudnessTarget, "maxpeak": c.MaxPeak,
		"loudnessmethod": c.LoudnessMethod, "maxlra": c.MaxLRA, "maxs": c.MaxS, "maxm": c.MaxM,
		"musicgain": c.MusicGain,
	})
	if err != nil {
		return err
	}
	var raw map[string]json.RawMessage
	_ = json.Unmarshal(b, &raw)
	for k, v := range map[string]int{"levelerstrength_speech": c.LevelerStrengthSpeech, "levelerstrength_music": c.LevelerStrengthMusic} {
		if v != -1 {
			raw[k] = json.RawMessage(strconv.Itoa(v))
		}
	}
	for k, v := range map[string]string{"compressor_speech": c.CompressorSpeech, "compressor_music": c.CompressorMusic} {
		if v != "" {
			raw[k], _ = json.Marshal(v)
		}
	}
	tmp := c
	return tmp.apply(raw)
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}

// parseBool accepts JSON booleans, 0/1 and the strings true/false/1/0/on/off
// (form-encoded clients send strings).
func parseBool(v json.RawMessage) (bool, error) {
	var b bool
	if json.Unmarshal(v, &b) == nil {
		return b, nil
	}
	var f float64
	if json.Unmarshal(v, &f) == nil && (f == 0 || f == 1) {
		return f == 1, nil
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "true", "1", "on", "yes":
			return true, nil
		case "false", "0", "off", "no", "":
			return false, nil
		}
	}
	return false, errors.New("must be a boolean")
}

// parseNumber accepts JSON numbers and numeric strings.
func parseNumber(v json.RawMessage) (float64, error) {
	var f float64
	if err := json.Unmarshal(v, &f); err == nil {
		return f, nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return 0, errors.New("must be a number")
	}
	return strconv.ParseFloat(strings.TrimSpace(s), 64)
}

// speechStrength and musicStrength resolve the split leveler strengths.
func (c Config) speechStrength() float64 {
	if c.LevelerStrengthSpeech >= 0 {
		return float64(c.LevelerStrengthSpeech) / 100
	}
	return float64(c.LevelerStrength) / 100
}

func (c Config) musicStrength() float64 {
	if c.LevelerStrengthMusic >= 0 {
		return float64(c.LevelerStrengthMusic) / 100
	}
	return float64(c.LevelerStrength) / 200
}
