package production

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Scope says where an algorithm key may appear.
type Scope uint8

// Scopes of algorithm keys.
const (
	// ScopeSingletrack is the algorithms object of a single-track production
	// or preset.
	ScopeSingletrack Scope = 1 << iota
	// ScopeMaster is the algorithms object of a multitrack production or
	// preset: the settings of the mixdown.
	ScopeMaster
	// ScopeTrack is the algorithms object of a multi_input_files element of
	// type multitrack.
	ScopeTrack
)

var scopeNames = []struct {
	s    Scope
	name string
}{
	{ScopeSingletrack, "singletrack"},
	{ScopeMaster, "multitrack_master"},
	{ScopeTrack, "multitrack_track"},
}

// Names returns the names of the scopes in s ("singletrack",
// "multitrack_master", "multitrack_track").
func (s Scope) Names() []string {
	var n []string
	for _, sn := range scopeNames {
		if s&sn.s != 0 {
			n = append(n, sn.name)
		}
	}
	return n
}

// ValueKind is the JSON type of an algorithm value.
type ValueKind int

// Value kinds. Values are normalized to bool, int, float64, string and
// []Segment respectively.
const (
	KindBool ValueKind = iota
	KindInt
	KindFloat
	KindString
	KindSegments
)

// Option is one allowed value of a select algorithm.
type Option struct {
	DisplayName string `json:"display_name"`
	Value       any    `json:"value"`
}

// Algorithm is one row of the algorithm table.
type Algorithm struct {
	Key         string
	Kind        ValueKind
	DisplayName string
	Description string
	// BelongsTo is the switch this setting refines (in single-track
	// productions; multitrack masters have fewer switches).
	BelongsTo string
	// Default is the value an unset key takes, nil when DefaultFrom names
	// the key whose value is the default or when the default is derived
	// (DefaultLabel says how).
	Default      any
	DefaultFrom  string
	DefaultLabel string
	// Options are the allowed values; empty for checkboxes and segments.
	Options []Option
	Scopes  Scope
	// Pending, when not empty, names what this server does not do yet for
	// the key (for example "multitrack processing"): the key is accepted
	// and stored, a production that sets it gets a warning naming it, and
	// the edit page does not offer it.
	Pending string
}

// InfoType is the type shown in the algorithm info: checkbox for switches,
// select for choices and list for the denoise segments.
func (a Algorithm) InfoType() string {
	switch a.Kind {
	case KindBool:
		return "checkbox"
	case KindSegments:
		return "list"
	}
	return "select"
}

// Allowed reports whether v (normalized to a.Kind) is one of the options.
func (a Algorithm) Allowed(v any) bool {
	if len(a.Options) == 0 {
		return true
	}
	for _, o := range a.Options {
		if sameValue(o.Value, v) {
			return true
		}
	}
	return false
}

func (a Algorithm) optionList() string {
	s := make([]string, len(a.Options))
	for i, o := range a.Options {
		s[i] = formatValue(o.Value)
	}
	return strings.Join(s, ", ")
}

func sameValue(a, b any) bool {
	if fa, ok := a.(float64); ok {
		fb, ok := b.(float64)
		return ok && math.Abs(fa-fb) < 1e-9
	}
	return a == b
}

func formatValue(v any) string {
	switch v := v.(type) {
	case string:
		if v == "" {
			return `""`
		}
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

func ints(unit string, labels map[int]string, vs ...int) []Option {
	o := make([]Option, len(vs))
	for i, v := range vs {
		name, ok := labels[v]
		if !ok {
			name = strconv.Itoa(v)
			if unit != "" {
				name += " " + unit
			}
		}
		o[i] = Option{DisplayName: name, Value: v}
	}
	return o
}

func floats(unit string, vs ...float64) []Option {
	o := make([]Option, len(vs))
	for i, v := range vs {
		o[i] = Option{DisplayName: strconv.FormatFloat(v, 'f', -1, 64) + " " + unit, Value: v}
	}
	return o
}

func strs(pairs ...string) []Option {
	o := make([]Option, len(pairs)/2)
	for i := range o {
		o[i] = Option{Value: pairs[2*i], DisplayName: pairs[2*i+1]}
	}
	return o
}

func steps(from, to, step int) []int {
	var v []int
	for i := from; i <= to; i += step {
		v = append(v, i)
	}
	return v
}

var (
	autoOff       = map[int]string{0: "Auto", -1: "Off", 100: "100 dB (maximum)"}
	fullOff       = map[int]string{0: "Full", -1: "Off", 100: "100 dB (maximum)"}
	offOnly       = map[int]string{-1: "Off", 100: "100 dB (maximum)"}
	autoLU        = map[int]string{0: "Auto"}
	denoiseValues = []int{0, -1, 3, 6, 9, 12, 15, 18, 24, 30, 36, 100}
	filterMethods = strs("hipfilter", "High-Pass Filtering", "autoeq", "Auto EQ", "bwe", "Bandwidth Extension", "studiovoice", "Voice AutoEQ (Studio Voice)")
	compressors   = strs("auto", "Auto", "soft", "Soft", "medium", "Medium", "hard", "Hard", "off", "Off")
	denoiseMeth   = strs("classic", "Classic", "static", "Static Denoiser", "dynamic", "Dynamic Denoiser", "speech_isolation", "Speech Isolation")
	singleMaster  = ScopeSingletrack | ScopeMaster
	singleTrack   = ScopeSingletrack | ScopeTrack
)

// algorithmTable is the single source of truth for algorithm keys: their
// types, defaults, allowed values and scopes. A key appears twice only when
// its default or options differ between scopes (filtermethod,
// levelerstrength); validation picks the row of the scope at hand and
// AlgorithmInfo shows the first row.
//
// Choices where the spec is silent:
//   - loudnesstarget defaults to -16 LUFS everywhere. The spec's format info
//     says -18 and its client defaults -16; a production created without
//     algorithms must give the same result whether the client filled in
//     defaults or not, and -16 is what multitrack masters use and what
//     podcast platforms recommend for stereo.
//   - filtermethod defaults to autoeq for single tracks (what current clients
//     send) and to hipfilter for multitrack tracks (as the spec states).
//   - the cutters are silence_cutter, filler_cutter, cough_cutter and
//     music_cutter, named like the other snake_case keys, under the switch
//     cutter with cut_mode and fadetime (milliseconds, default 100).
//     cutter on cuts silences and fillers unless told otherwise; a cutter
//     switched on while cutter is unset cuts alone.
//   - msclassifier applies to single tracks too.
//   - the speech/music split keys default to their base key (DefaultFrom),
//     except levelerstrength_music, which defaults to half of
//     levelerstrength; musicgain is the gain of music segments relative to
//     speech.
//   - pan defaults to "" (no panning, the track keeps its stereo image).
//   - segments has the info type "list": it is neither a switch nor a choice.
var algorithmTable = []Algorithm{
	{Key: "hipfilter", Kind: KindBool, Default: true, Scopes: singleTrack,
		DisplayName: "Filtering", Description: "Filters disturbing low frequencies and balances the sound with the chosen filter method. Also accepted as \"filtering\"."},
	{Key: "filtermethod", Kind: KindString, Default: "autoeq", BelongsTo: "hipfilter", Options: filterMethods, Scopes: ScopeSingletrack,
		DisplayName: "Filter Method", Description: "High-pass filtering only, adaptive equalization (Auto EQ), bandwidth extension or voice equalization."},
	{Key: "filtermethod", Kind: KindString, Default: "hipfilter", BelongsTo: "hipfilter", Options: filterMethods, Scopes: ScopeTrack,
		DisplayName: "Filter Method", Description: "Filter method of this track."},
	{Key: "leveler", Kind: KindBool, Default: true, Scopes: singleMaster,
		DisplayName: "Adaptive Leveler", Description: "Balances levels between speakers, music and speech, and within a speaker."},
	{Key: "levelerstrength", Kind: KindInt, Default: 100, BelongsTo: "leveler", Options: ints("%", nil, steps(0, 120, 10)...), Scopes: ScopeSingletrack,
		DisplayName: "Leveler Strength", Description: "How strongly level differences are reduced; 100% is the default, above 100% compresses harder."},
	{Key: "levelerstrength", Kind: KindInt, Default: 100, BelongsTo: "leveler", Options: ints("%", nil, steps(0, 100, 10)...), Scopes: ScopeTrack,
		DisplayName: "Leveler Strength", Description: "Leveler strength of this track."},
	{Key: "levelerstrength_speech", Kind: KindInt, DefaultFrom: "levelerstrength", BelongsTo: "leveler", Options: ints("%", nil, steps(0, 120, 10)...), Scopes: ScopeSingletrack,
		DisplayName: "Leveler Strength (Speech)", Description: "Leveler strength in speech segments; unset follows levelerstrength."},
	{Key: "levelerstrength_music", Kind: KindInt, BelongsTo: "leveler", DefaultLabel: "Half of Leveler Strength", Options: ints("%", nil, steps(0, 120, 10)...), Scopes: ScopeSingletrack,
		DisplayName: "Leveler Strength (Music)", Description: "Leveler strength in music segments; unset is half of levelerstrength, so music keeps more of its dynamics."},
	{Key: "compressor", Kind: KindString, Default: "auto", BelongsTo: "leveler", Options: compressors, Scopes: singleTrack,
		DisplayName: "Compressor", Description: "Micro-dynamics compression of short peaks."},
	{Key: "compressor_speech", Kind: KindString, DefaultFrom: "compressor", BelongsTo: "leveler", Options: compressors, Scopes: ScopeSingletrack,
		DisplayName: "Compressor (Speech)", Description: "Compressor in speech segments; unset follows compressor."},
	{Key: "compressor_music", Kind: KindString, DefaultFrom: "compressor", BelongsTo: "leveler", Options: compressors, Scopes: ScopeSingletrack,
		DisplayName: "Compressor (Music)", Description: "Compressor in music segments; unset follows compressor."},
	{Key: "musicgain", Kind: KindInt, Default: 0, BelongsTo: "leveler", Options: ints("dB", nil, steps(-6, 6, 1)...), Scopes: ScopeSingletrack,
		DisplayName: "Music Gain", Description: "Gain of music segments relative to speech after leveling."},
	{Key: "normloudness", Kind: KindBool, Default: true, Scopes: ScopeSingletrack,
		DisplayName: "Loudness Normalization", Description: "Normalizes to the loudness target and limits true peaks."},
	{Key: "loudnesstarget", Kind: KindInt, Default: -16, BelongsTo: "normloudness", Options: ints("LUFS", nil, -13, -14, -15, -16, -18, -19, -20, -23, -24, -26, -27, -31), Scopes: singleMaster,
		DisplayName: "Loudness Target", Description: "Integrated loudness of the output (EBU R128 / ITU-R BS.1770)."},
	{Key: "maxpeak", Kind: KindFloat, Default: 0.0, BelongsTo: "normloudness", Options: floats("dBTP", 0, -0.5, -1, -1.5, -2, -3, -4, -5, -6), Scopes: singleMaster,
		DisplayName: "Maximum Peak Level", Description: "True peak limit; 0 chooses a limit suited to the target."},
	{Key: "dualmono", Kind: KindBool, Default: false, BelongsTo: "normloudness", Scopes: singleMaster,
		DisplayName: "Dual Mono", Description: "Treats mono as dual-mono: measured as two channels, giving a -3 LU offset."},
	{Key: "loudnessmethod", Kind: KindString, Default: "program", BelongsTo: "normloudness", Options: strs("program", "Program Loudness", "dialog", "Dialog Loudness", "rms", "RMS"), Scopes: singleMaster,
		DisplayName: "Loudness Method", Description: "Loudness of the whole program, of the dialog only, or RMS."},
	{Key: "maxlra", Kind: KindInt, Default: 0, BelongsTo: "normloudness", Options: ints("LU", autoLU, 0, 3, 4, 5, 6, 8, 9, 10, 12, 15, 18, 20), Scopes: singleMaster,
		DisplayName: "Maximum Loudness Range", Description: "Upper limit of the loudness range (LRA); 0 chooses automatically."},
	{Key: "maxs", Kind: KindInt, Default: 0, BelongsTo: "normloudness", Options: ints("LU", autoLU, 0, 3, 4, 5, 6, 8, 9, 10, 12), Scopes: singleMaster,
		DisplayName: "Maximum Short-term Loudness", Description: "Upper limit of short-term loudness above the target; 0 chooses automatically."},
	{Key: "maxm", Kind: KindInt, Default: 0, BelongsTo: "normloudness", Options: ints("LU", autoLU, 0, 8, 9, 10, 11, 12, 15, 18, 20), Scopes: singleMaster,
		DisplayName: "Maximum Momentary Loudness", Description: "Upper limit of momentary loudness above the target; 0 chooses automatically."},
	{Key: "gate", Kind: KindBool, Default: true, Scopes: ScopeMaster,
		DisplayName: "Adaptive Noise Gate", Description: "Attenuates tracks while their speaker is silent."},
	{Key: "crossgate", Kind: KindBool, Default: true, Scopes: ScopeMaster,
		DisplayName: "Crossgate", Description: "Reduces crosstalk and bleed between the microphones of the tracks."},
	{Key: "denoise", Kind: KindBool, Default: false, Scopes: singleTrack,
		DisplayName: "Noise Reduction", Description: "Removes noise, hum, reverb and breathing according to the settings below."},
	{Key: "denoisemethod", Kind: KindString, Default: "classic", BelongsTo: "denoise", Options: denoiseMeth, Scopes: singleTrack,
		DisplayName: "Denoise Method", Description: "Classic spectral noise reduction, static or dynamic denoisers, or speech isolation."},
	{Key: "denoiseamount", Kind: KindInt, Default: 0, BelongsTo: "denoise", Options: ints("dB", autoOff, denoiseValues...), Scopes: singleTrack,
		DisplayName: "Noise Reduction Amount", Description: "Maximum noise reduction in dB; 0 estimates the amount automatically."},
	{Key: "deverbamount", Kind: KindInt, Default: 0, BelongsTo: "denoise", Options: ints("dB", fullOff, denoiseValues...), Scopes: singleTrack,
		DisplayName: "Reverb Reduction Amount", Description: "Maximum reverb reduction; needs denoisemethod static, dynamic or speech_isolation."},
	{Key: "debreathamount", Kind: KindInt, Default: -1, BelongsTo: "denoise", Options: ints("dB", offOnly, denoiseValues[1:]...), Scopes: singleTrack,
		DisplayName: "Breath Reduction Amount", Description: "Maximum breath reduction; needs denoisemethod dynamic or speech_isolation."},
	{Key: "dehum", Kind: KindInt, Default: 0, BelongsTo: "denoise", Options: ints("Hz", autoLU, 0, 50, 60), Scopes: singleTrack,
		DisplayName: "Hum Base Frequency", Description: "Base frequency of power-line hum; used with classic denoising."},
	{Key: "dehumamount", Kind: KindInt, Default: 0, BelongsTo: "denoise", Options: ints("dB", autoOff, 0, -1, 3, 6, 9, 12, 15, 18, 24, 30, 100), Scopes: singleTrack,
		DisplayName: "Hum Reduction Amount", Description: "Maximum hum reduction; 0 estimates it automatically."},
	{Key: "segments", Kind: KindSegments, BelongsTo: "denoise", Scopes: ScopeSingletrack,
		DisplayName: "Denoise Segments", Description: "Contiguous time ranges with their own denoise settings."},
	{Key: "cutter", Kind: KindBool, Default: false, Scopes: ScopeSingletrack,
		DisplayName: "Automatic Cutting", Description: "Cuts long silences and filler words (and coughs and music when switched on below); cut_start and cut_end trim whatever this says."},
	{Key: "silence_cutter", Kind: KindBool, Default: true, BelongsTo: "cutter", Scopes: ScopeSingletrack,
		DisplayName: "Silence Cutter", Description: "Shortens pauses longer than a second to a natural length. Switched on alone, it cuts without the other cutters."},
	{Key: "filler_cutter", Kind: KindBool, Default: true, BelongsTo: "cutter", Scopes: ScopeSingletrack,
		DisplayName: "Filler Cutter", Description: "Cuts filled pauses (um, uh, er). Switched on alone, it cuts without the other cutters."},
	{Key: "cough_cutter", Kind: KindBool, Default: false, BelongsTo: "cutter", Scopes: ScopeSingletrack,
		DisplayName: "Cough Cutter", Description: "Cuts coughs and similar short noise bursts."},
	{Key: "music_cutter", Kind: KindBool, Default: false, BelongsTo: "cutter", Scopes: ScopeSingletrack,
		DisplayName: "Music Cutter", Description: "Cuts music segments of five seconds and more."},
	{Key: "cut_mode", Kind: KindString, Default: "apply_cuts", BelongsTo: "cutter", Scopes: ScopeSingletrack,
		Options:     strs("apply_cuts", "Apply Cuts", "set_cuts_to_silence", "Set Cuts to Silence", "export_uncut_audio", "Export Uncut Audio and Cut List"),
		DisplayName: "Cut Mode", Description: "Remove the cuts, silence them (the length stays), or keep the audio uncut and export the cut list (a cutlist output file, and the statistics)."},
	{Key: "fadetime", Kind: KindInt, Default: 100, BelongsTo: "cutter", Options: ints("ms", map[int]string{0: "0 ms (hard cut)"}, 0, 10, 25, 50, 100, 150, 200, 300, 500), Scopes: ScopeSingletrack,
		DisplayName: "Cut Fade Time", Description: "Crossfade at each cut."},
	{Key: "backforeground", Kind: KindString, Default: "auto", Options: strs("auto", "Auto", "foreground", "Foreground Track", "background", "Background Track", "unchanged", "Unchanged (Foreground)", "ducking", "Ducking"), Scopes: ScopeTrack,
		DisplayName: "Fore/Background", Description: "Whether the track is foreground speech, background music, ducked under the others, or left unchanged."},
	{Key: "backgroundgain", Kind: KindInt, Default: -18, BelongsTo: "backforeground", Options: ints("dB", nil, -3, -6, -8, -10, -12, -14, -16, -18, -20, -22, -24, -26), Scopes: ScopeTrack,
		DisplayName: "Background Level", Description: "Level of a background or ducked track below the foreground."},
	{Key: "ducking_fadetime", Kind: KindInt, Default: 500, BelongsTo: "backforeground", Options: ints("ms", nil, 125, 250, 375, 500, 750, 1000, 1500, 2000), Scopes: ScopeTrack,
		DisplayName: "Ducking Fade Time", Description: "Fade time of ducking."},
	{Key: "gain", Kind: KindInt, Default: 0, Options: ints("dB", nil, -30, -23, -18, -15, -12, -8, -6, -5, -4, -3, -2, 0, 2, 3, 4, 5, 6), Scopes: ScopeTrack,
		DisplayName: "Track Gain", Description: "Gain applied to the track before mixing."},
	{Key: "pan", Kind: KindString, Default: "", Options: panOptions(), Scopes: ScopeTrack,
		DisplayName: "Pan", Description: "Stereo position of the track; empty keeps the track's stereo image."},
	{Key: "msclassifier", Kind: KindString, Default: "on", Options: strs("on", "On (Automatic)", "speech", "Speech Only", "music", "Music Only"), Scopes: singleTrack,
		DisplayName: "Music/Speech Classifier", Description: "Automatic speech/music classification, or treat the whole recording as speech or as music."},
	{Key: "loop_trim", Kind: KindBool, Default: false, Scopes: ScopeTrack,
		DisplayName: "Loop / Trim", Description: "Loops or trims the track to the length of the longest track without loop_trim."},
}

func panOptions() []Option {
	o := []Option{{DisplayName: "No Panning", Value: ""}}
	for _, p := range []string{"L100", "L75", "L50", "L25", "L20", "L15", "L10", "L05", "C", "R05", "R10", "R15", "R20", "R25", "R50", "R75", "R100"} {
		o = append(o, Option{DisplayName: p, Value: p})
	}
	return o
}

// algorithmAliases maps accepted alternative key names to table keys.
var algorithmAliases = map[string]string{"filtering": "hipfilter"}

// CanonicalKey returns the table key for key, resolving aliases.
func CanonicalKey(key string) string {
	if k, ok := algorithmAliases[key]; ok {
		return k
	}
	return key
}

// AlgorithmTable returns a copy of the algorithm table.
func AlgorithmTable() []Algorithm { return slices.Clone(algorithmTable) }

// LookupAlgorithm returns the row of key for scope.
func LookupAlgorithm(key string, scope Scope) (Algorithm, bool) {
	key = CanonicalKey(key)
	for _, a := range algorithmTable {
		if a.Key == key && a.Scopes&scope != 0 {
			return a, true
		}
	}
	return Algorithm{}, false
}

// anyAlgorithm returns the first row of key, whatever its scope.
func anyAlgorithm(key string) (Algorithm, bool) {
	return LookupAlgorithm(key, ScopeSingletrack|ScopeMaster|ScopeTrack)
}

// keyScopes returns the union of the scopes of every row of key.
func keyScopes(key string) Scope {
	var s Scope
	for _, a := range algorithmTable {
		if a.Key == key {
			s |= a.Scopes
		}
	}
	return s
}

// AlgorithmInfoEntry is one value of GET info/algorithms.
type AlgorithmInfoEntry struct {
	DefaultValue any      `json:"default_value"`
	Type         string   `json:"type"`
	DisplayName  string   `json:"display_name"`
	Description  string   `json:"description"`
	BelongsTo    string   `json:"belongs_to,omitempty"`
	Options      []Option `json:"options,omitempty"`
	// Scopes lists where the key may be used: singletrack,
	// multitrack_master, multitrack_track.
	Scopes []string `json:"scopes"`
	// Pending, when present, says what this server does not do yet for
	// the key: it is accepted and stored, and warned about.
	Pending string `json:"pending,omitempty"`
}

// AlgorithmInfo returns the data of GET info/algorithms, keyed by algorithm
// name, generated from the algorithm table. Keys whose options differ by
// scope show their single-track row; AlgorithmInfoFor gives a scope's view.
// default_value is null for keys that default to another key's value.
func AlgorithmInfo() map[string]AlgorithmInfoEntry {
	return algorithmInfo(ScopeSingletrack | ScopeMaster | ScopeTrack)
}

// AlgorithmInfoFor returns the algorithm info restricted to one scope.
func AlgorithmInfoFor(scope Scope) map[string]AlgorithmInfoEntry { return algorithmInfo(scope) }

func algorithmInfo(scope Scope) map[string]AlgorithmInfoEntry {
	m := make(map[string]AlgorithmInfoEntry)
	for _, a := range algorithmTable {
		if a.Scopes&scope == 0 {
			continue
		}
		if _, ok := m[a.Key]; ok {
			continue
		}
		m[a.Key] = AlgorithmInfoEntry{
			DefaultValue: a.Default,
			Type:         a.InfoType(),
			DisplayName:  a.DisplayName,
			Description:  a.Description,
			BelongsTo:    a.BelongsTo,
			Options:      slices.Clone(a.Options),
			Scopes:       (keyScopes(a.Key) & scope).Names(),
			Pending:      a.Pending,
		}
	}
	return m
}
