package chain

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/audiopost/audiopost/dsp"
	"github.com/audiopost/audiopost/loudness"
)

// Value is a statistics value: the API writes it as [number, unit]. An
// undefined reading (silence) is written as null.
type Value struct {
	V    float64
	Unit string
}

// MarshalJSON implements json.Marshaler.
func (v Value) MarshalJSON() ([]byte, error) {
	if v.Unit == "" {
		return []byte("null"), nil
	}
	if math.IsInf(v.V, 0) || math.IsNaN(v.V) {
		return json.Marshal([]any{nil, v.Unit})
	}
	return json.Marshal([]any{v.V, v.Unit})
}

// UnmarshalJSON implements json.Unmarshaler.
func (v *Value) UnmarshalJSON(b []byte) error {
	var pair []any
	if err := json.Unmarshal(b, &pair); err != nil || pair == nil {
		return err
	}
	if len(pair) != 2 {
		return fmt.Errorf("chain: statistics value %s is not a [number, unit] pair", b)
	}
	u, _ := pair[1].(string)
	f, ok := pair[0].(float64)
	if !ok {
		f = math.Inf(-1)
	}
	*v = Value{V: f, Unit: u}
	return nil
}

// InputLevels are the measurements of the unprocessed input.
type InputLevels struct {
	LRA          Value `json:"lra"`
	NoiseLevel   Value `json:"noise_level"`
	MaxMomentary Value `json:"max_momentary"`
	SignalLevel  Value `json:"signal_level"`
	SNR          Value `json:"snr"`
	MaxShortTerm Value `json:"max_shortterm"`
	Loudness     Value `json:"loudness"`
}

// OutputLevels are the measurements of the output. Loudness is measured
// by the configured loudness method; the gains are the level change from
// input to output over the voiced blocks.
type OutputLevels struct {
	LRA          Value `json:"lra"`
	MaxShortTerm Value `json:"max_shortterm"`
	MaxMomentary Value `json:"max_momentary"`
	GainMin      Value `json:"gain_min"`
	Peak         Value `json:"peak"`
	GainMean     Value `json:"gain_mean"`
	Loudness     Value `json:"loudness"`
	GainMax      Value `json:"gain_max"`
}

// Segment is a speech or music segment of the music_speech statistics.
type Segment struct {
	Label    string  `json:"label"`
	Start    string  `json:"start"`
	StartSec float64 `json:"start_sec"`
	Stop     string  `json:"stop"`
	StopSec  float64 `json:"stop_sec"`
}

// Settings records what the automatic choices were.
type Settings struct {
	Filter            string  `json:"filter"`
	Compressor        string  `json:"compressor"`
	CompressorMusic   string  `json:"compressor_music"`
	NormalizationGain float64 `json:"normalization_gain_db"`
	Ceiling           float64 `json:"limiter_ceiling_dbtp"`
	LoudnessMethod    string  `json:"loudness_method"`
	Target            float64 `json:"loudness_target"`
}

// Stats are the single-track statistics in the API's shape, plus the
// automatic settings and warnings for every constraint that was not met
// (the pipeline never silently switches to another mode).
type Stats struct {
	Levels struct {
		Input  InputLevels  `json:"input"`
		Output OutputLevels `json:"output"`
	} `json:"levels"`
	MusicSpeech []Segment `json:"music_speech"`
	Settings    Settings  `json:"settings"`
	Warnings    []string  `json:"warnings,omitempty"`
}

func round2(x float64) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	return math.Round(x*100) / 100
}

func lu(x float64) Value   { return Value{round2(x), "LU"} }
func lufs(x float64) Value { return Value{round2(x), "LUFS"} }
func db(x float64) Value   { return Value{round2(x), "dB"} }

func inputLevels(r loudness.Result) InputLevels {
	return InputLevels{
		LRA:          lu(r.LRA),
		NoiseLevel:   db(r.NoiseLevel),
		MaxMomentary: lufs(r.MaxMomentary),
		SignalLevel:  db(r.SignalLevel),
		SNR:          db(r.SNR),
		MaxShortTerm: lufs(r.MaxShortTerm),
		Loudness:     lufs(r.Integrated),
	}
}

// musicSpeech lists the speech and music segments longer than 20 s.
func musicSpeech(an *dsp.Analysis) []Segment {
	out := []Segment{}
	bs := float64(an.BlockLen) / float64(an.Format.SampleRate)
	for i := 0; i < len(an.Music); {
		j := i
		for j < len(an.Music) && an.Music[j] == an.Music[i] {
			j++
		}
		if float64(j-i)*bs > 20 {
			label := "speech"
			if an.Music[i] {
				label = "music"
			}
			s, e := float64(i)*bs, float64(j)*bs
			out = append(out, Segment{Label: label, Start: clock(s), StartSec: round2(s), Stop: clock(e), StopSec: round2(e)})
		}
		i = j
	}
	return out
}

func clock(sec float64) string {
	ms := int64(math.Round(sec * 1000))
	return fmt.Sprintf("%02d:%02d:%02d.%03d", ms/3600000, ms/60000%60, ms/1000%60, ms%1000)
}
