package local

import (
	"encoding/json"
	"slices"

	"github.com/audiopost/audiopost/production"
)

// Description is what a page needs to offer the settings: the
// single-track algorithms in the order of the API's table, the output
// formats (those a production without a server cannot make with the
// reason), the built-in presets and the loudness chart's legend.
type Description struct {
	Algorithms []AlgorithmInfo `json:"algorithms"`
	Formats    []FormatInfo    `json:"formats"`
	Presets    []BuiltinPreset `json:"presets"`
	// Chart is the legend of the loudness chart for each loudness target
	// the algorithm table allows, by target.
	Chart map[int]ChartLegend `json:"chart"`
}

// AlgorithmInfo is one algorithm key as GET /api/info/algorithms
// describes it, with its key.
type AlgorithmInfo struct {
	Key string `json:"key"`
	production.AlgorithmInfoEntry
}

// FormatInfo is one output format; Unavailable says why it cannot be
// made here (empty when it can).
type FormatInfo struct {
	Name        string                `json:"name"`
	Type        production.FormatType `json:"type"`
	DisplayName string                `json:"display_name"`
	Unavailable string                `json:"unavailable,omitempty"`
}

// BuiltinPreset is a preset offered to everyone: Preset is a preset
// request (the fields of POST /api/presets.json), Description says in
// plain words what it is for.
type BuiltinPreset struct {
	Preset      json.RawMessage `json:"preset"`
	Description string          `json:"description"`
}

// Builtins are the presets a page offers when no server has presets of
// the user's: common destinations, each with the loudness they expect.
var Builtins = []BuiltinPreset{
	{json.RawMessage(`{"preset_name": "Podcast", "output_files": [{"format": "flac"}],
		"algorithms": {"loudnesstarget": -16, "maxpeak": -1}}`),
		"Speech for podcast apps and streaming: as loud as most podcasts (-16 LUFS), peaks 1 dB below the maximum."},
	{json.RawMessage(`{"preset_name": "Broadcast (EBU R128)", "output_files": [{"format": "wav-24bit"}],
		"algorithms": {"loudnesstarget": -23, "maxpeak": -1}}`),
		"Radio and television in Europe: the quieter level broadcasters require (-23 LUFS)."},
	{json.RawMessage(`{"preset_name": "Audiobook (ACX)", "output_files": [{"format": "flac"}],
		"algorithms": {"loudnessmethod": "rms", "loudnesstarget": -20, "maxpeak": -3, "denoise": true}}`),
		"Audiobook stores (ACX, Audible): an average (RMS) level of -20 dB, peaks at most -3 dB, background noise reduced."},
	{json.RawMessage(`{"preset_name": "Noisy interview", "output_files": [{"format": "flac"}],
		"algorithms": {"loudnesstarget": -16, "maxpeak": -1, "denoise": true, "denoisemethod": "dynamic"}}`),
		"A conversation recorded with background noise: the noise is reduced, then leveled like a podcast (-16 LUFS)."},
	{json.RawMessage(`{"preset_name": "Music", "output_files": [{"format": "flac"}],
		"algorithms": {"loudnesstarget": -14, "maxpeak": -1, "msclassifier": "music", "hipfilter": false}}`),
		"Music for streaming services (-14 LUFS): no speech filter, the dynamics mostly kept."},
}

// Describe returns the Description of what can be processed here.
func Describe() Description {
	var d Description
	info := production.AlgorithmInfoFor(production.ScopeSingletrack)
	seen := map[string]bool{}
	for _, a := range production.AlgorithmTable() {
		e, ok := info[a.Key]
		if !ok || seen[a.Key] || e.Pending != "" {
			continue
		}
		seen[a.Key] = true
		d.Algorithms = append(d.Algorithms, AlgorithmInfo{Key: a.Key, AlgorithmInfoEntry: e})
	}
	for _, f := range production.OutputFormats() {
		fi := FormatInfo{Name: f.Name, Type: f.Type, DisplayName: f.DisplayName}
		if !slices.Contains(Offered, f.Name) {
			fi.Unavailable = notOffered(f)
		}
		d.Formats = append(d.Formats, fi)
	}
	d.Presets = slices.Clone(Builtins)
	d.Chart = map[int]ChartLegend{}
	if a, ok := production.LookupAlgorithm("loudnesstarget", production.ScopeSingletrack); ok {
		for _, o := range a.Options {
			if t, ok := o.Value.(int); ok {
				d.Chart[t] = Legend(t)
			}
		}
	}
	return d
}
