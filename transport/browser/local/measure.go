package local

import (
	"context"
	"math"

	"github.com/audiopost/audiopost/audio"
	_ "github.com/audiopost/audiopost/audio/flac" // the decoders a recording may need without ffmpeg
	_ "github.com/audiopost/audiopost/audio/mp3"
	_ "github.com/audiopost/audiopost/audio/wav"
	"github.com/audiopost/audiopost/loudness"
)

// Measurement is the EBU R128 measurement of one recording, with the
// fields of `audiopost measure -json` (null where a reading is undefined,
// such as the loudness of silence) and the recording's format.
type Measurement struct {
	File             string   `json:"file"`
	IntegratedLUFS   *float64 `json:"integrated_lufs"`
	LRALU            *float64 `json:"lra_lu"`
	TruePeakDBTP     *float64 `json:"true_peak_dbtp"`
	SamplePeakDBFS   *float64 `json:"sample_peak_dbfs"`
	MaxMomentaryLUFS *float64 `json:"max_momentary_lufs"`
	MaxShortTermLUFS *float64 `json:"max_shortterm_lufs"`
	// Seconds is the length, Format the codec ("wav", "flac", "mp3"),
	// SampleRate and Channels the stream's.
	Seconds    float64 `json:"seconds"`
	Format     string  `json:"format"`
	SampleRate int     `json:"samplerate"`
	Channels   int     `json:"channels"`
}

// Measure decodes the recording and measures its loudness (integrated,
// range, true and sample peak, loudest momentary and short-term)
// as package loudness does for EBU R128. progress (may be nil) hears how
// much of the recording has been read, 0 to 1, every half percent.
func Measure(ctx context.Context, in Input, progress func(read float64)) (Measurement, error) {
	m := Measurement{File: in.Name}
	last := -1.0
	fsys := &inputFS{in: in, name: "recording", seen: func(r *reader) {
		if d := r.done(); progress != nil && (d-last >= progressEvery || d == 1) {
			last = d
			progress(d)
		}
	}}
	f, err := fsys.Open(fsys.name)
	if err != nil {
		return m, err
	}
	d, err := audio.Decode(ctx, f.(*reader))
	if err != nil {
		return m, formatError(err)
	}
	defer d.Close()
	info := d.Info()
	m.Format, m.SampleRate, m.Channels = info.Format, d.Format().SampleRate, d.Format().Channels
	if m.Format == "" {
		m.Format = info.Container
	}
	r, err := loudness.Measure(ctx, d, loudness.Options{Mode: loudness.ModeEBU})
	if err != nil {
		return m, err
	}
	m.Seconds = r.Duration()
	m.IntegratedLUFS, m.LRALU, m.TruePeakDBTP = reading(r.Integrated), reading(r.LRA), reading(r.TruePeak)
	m.SamplePeakDBFS, m.MaxMomentaryLUFS, m.MaxShortTermLUFS = reading(r.SamplePeak), reading(r.MaxMomentary), reading(r.MaxShortTerm)
	return m, nil
}

// reading rounds a reading to 0.01 and maps an undefined one to nil.
func reading(v float64) *float64 {
	if !loudness.Defined(v) {
		return nil
	}
	r := math.Round(v*100) / 100
	return &r
}
