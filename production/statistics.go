package production

import (
	"encoding/json"
	"time"
)

// Statistics are the measurements of a finished production. Single-track
// productions fill Levels, MusicSpeech and NoiseHumReduction; multitrack
// productions fill Tracks and Master. Empty parts are omitted, so a
// production that has not been processed has statistics {}.
type Statistics struct {
	Levels            *Levels              `json:"levels,omitempty"`
	MusicSpeech       []MusicSpeechSegment `json:"music_speech,omitempty"`
	NoiseHumReduction []NoiseHumSegment    `json:"noise_hum_reduction,omitempty"`
	// Cuts are the cuts the cutters detected and the trims, in input time,
	// whatever the cut mode (not in the original interface).
	Cuts   []CutSegment      `json:"cuts,omitempty"`
	Tracks []TrackStatistics `json:"tracks,omitempty"`
	Master *MasterStatistics `json:"master,omitempty"`
}

// Levels are the input and output levels of a single-track production.
type Levels struct {
	Input  InputLevels  `json:"input"`
	Output OutputLevels `json:"output"`
}

// InputLevels are measured on the input.
type InputLevels struct {
	LRA          Level `json:"lra"`
	NoiseLevel   Level `json:"noise_level"`
	MaxMomentary Level `json:"max_momentary"`
	SignalLevel  Level `json:"signal_level"`
	SNR          Level `json:"snr"`
	MaxShortterm Level `json:"max_shortterm"`
	Loudness     Level `json:"loudness"`
}

// OutputLevels are measured on the processed output.
type OutputLevels struct {
	LRA          Level `json:"lra"`
	MaxShortterm Level `json:"max_shortterm"`
	MaxMomentary Level `json:"max_momentary"`
	GainMin      Level `json:"gain_min"`
	Peak         Level `json:"peak"`
	GainMean     Level `json:"gain_mean"`
	Loudness     Level `json:"loudness"`
	GainMax      Level `json:"gain_max"`
	// NoiseLevel and SNR are measured on the output as on the input, to
	// show what noise reduction did (not in the original interface).
	NoiseLevel *Level `json:"noise_level,omitempty"`
	SNR        *Level `json:"snr,omitempty"`
}

// TrackLevels are the levels of one multitrack track.
type TrackLevels struct {
	LRA          Level `json:"lra"`
	GainMean     Level `json:"gain_mean"`
	NoiseLevel   Level `json:"noise_level"`
	MaxMomentary Level `json:"max_momentary"`
	SignalLevel  Level `json:"signal_level"`
	GainMin      Level `json:"gain_min"`
	SNR          Level `json:"snr"`
	MaxShortterm Level `json:"max_shortterm"`
	Loudness     Level `json:"loudness"`
	GainMax      Level `json:"gain_max"`
}

// MasterLevels are the levels of a multitrack mixdown.
type MasterLevels struct {
	LRA          Level `json:"lra"`
	MaxMomentary Level `json:"max_momentary"`
	Peak         Level `json:"peak"`
	MaxShortterm Level `json:"max_shortterm"`
	Loudness     Level `json:"loudness"`
}

// MasterStatistics are the statistics of a multitrack mixdown.
type MasterStatistics struct {
	Levels MasterLevels `json:"levels"`
}

// TrackStatistics are the statistics of one multitrack track; Activity
// lists [start_sec, stop_sec] ranges where the track is active.
type TrackStatistics struct {
	MusicSpeech []MusicSpeechSegment `json:"music_speech"`
	Identifier  string               `json:"identifier"`
	Levels      TrackLevels          `json:"levels"`
	Activity    [][2]float64         `json:"activity"`
}

// MarshalJSON writes the lists as arrays.
func (t TrackStatistics) MarshalJSON() ([]byte, error) {
	type plain TrackStatistics
	q := plain(t)
	q.MusicSpeech = nonNil(t.MusicSpeech)
	q.Activity = nonNil(t.Activity)
	return json.Marshal(q)
}

// MinMusicSpeechSegment is the shortest speech or music segment listed in
// the statistics.
const MinMusicSpeechSegment = 20 * time.Second

// MusicSpeechSegment is a speech or music segment of the output.
type MusicSpeechSegment struct {
	Label string // "speech" or "music"
	Start time.Duration
	Stop  time.Duration
}

// MarshalJSON writes label, start, start_sec, stop and stop_sec.
func (s MusicSpeechSegment) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Label string `json:"label"`
		span
	}{s.Label, makeSpan(s.Start, s.Stop)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *MusicSpeechSegment) UnmarshalJSON(b []byte) error {
	var v struct {
		Label string `json:"label"`
		span
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = MusicSpeechSegment{Label: v.Label, Start: seconds(v.StartSec), Stop: seconds(v.StopSec)}
	return nil
}

// NoiseHumSegment is a range with the noise and hum reduction applied; nil
// amounts (no reduction) marshal as false, as the API shows them.
type NoiseHumSegment struct {
	Denoise *float64 // dB
	Dehum   *float64 // Hz of the removed hum base frequency
	Start   time.Duration
	Stop    time.Duration
}

// MarshalJSON implements json.Marshaler.
func (s NoiseHumSegment) MarshalJSON() ([]byte, error) {
	orFalse := func(p *float64) any {
		if p == nil {
			return false
		}
		return *p
	}
	return json.Marshal(struct {
		Denoise any `json:"denoise"`
		Dehum   any `json:"dehum"`
		span
	}{orFalse(s.Denoise), orFalse(s.Dehum), makeSpan(s.Start, s.Stop)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *NoiseHumSegment) UnmarshalJSON(b []byte) error {
	var v struct {
		Denoise any `json:"denoise"`
		Dehum   any `json:"dehum"`
		span
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	num := func(x any) *float64 {
		if f, ok := x.(float64); ok {
			return &f
		}
		return nil
	}
	*s = NoiseHumSegment{Denoise: num(v.Denoise), Dehum: num(v.Dehum), Start: seconds(v.StartSec), Stop: seconds(v.StopSec)}
	return nil
}

type span struct {
	Start    string  `json:"start"`
	StartSec float64 `json:"start_sec"`
	Stop     string  `json:"stop"`
	StopSec  float64 `json:"stop_sec"`
}

func makeSpan(a, b time.Duration) span {
	return span{FormatTimestamp(a), a.Seconds(), FormatTimestamp(b), b.Seconds()}
}

// CutSegment is a cut: why (silence, filler, cough, music, trim, or
// several joined by +) and where in the input.
type CutSegment struct {
	Reason      string
	Start, Stop time.Duration
}

// MarshalJSON writes reason, start, start_sec, stop and stop_sec.
func (c CutSegment) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Reason string `json:"reason"`
		span
	}{c.Reason, makeSpan(c.Start, c.Stop)})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (c *CutSegment) UnmarshalJSON(b []byte) error {
	var v struct {
		Reason string `json:"reason"`
		span
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*c = CutSegment{Reason: v.Reason, Start: seconds(v.StartSec), Stop: seconds(v.StopSec)}
	return nil
}
