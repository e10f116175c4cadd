package dsp

import (
	"math"

	"github.com/audiopost/audiopost/audio"
)

// Limits of the adaptive high-pass corner: below 60 Hz a 4th-order
// high-pass does not take 30 Hz rumble down by 20 dB; above 150 Hz it
// starts to thin out low male voices.
const (
	MinHighPass     = 60.0
	MaxHighPass     = 150.0
	DefaultHighPass = 80.0
	highPassOrder   = 4
)

// VoiceStart estimates the frequency where the voice's energy starts. A
// third-octave band belongs to the voice if it is at most 30 dB below the
// voiced spectrum's strongest band and clearly (6 dB) louder in voiced
// blocks than in pauses: rumble, hum and traffic are there all the time, a
// voice only when someone speaks. Without pauses to compare against, it
// walks down from the strongest band between 90 Hz and 1 kHz while the
// bands stay within 20 dB of it and do not rise again (a rise below is
// rumble). It returns 0 without a spectrum analysis or voice.
func (an *Analysis) VoiceStart() float64 {
	sp := an.Spectrum(true)
	if len(sp) == 0 {
		return 0
	}
	peak := -1
	for i, b := range sp {
		if b.Centre >= 90 && b.Centre <= 1000 && (peak < 0 || b.Level > sp[peak].Level) {
			peak = i
		}
	}
	if peak < 0 {
		return 0
	}
	if quiet := an.Spectrum(false); len(quiet) == len(sp) {
		for i := 0; i <= peak; i++ {
			if sp[i].Centre >= 40 && sp[i].Level > sp[peak].Level-30 && sp[i].Level > quiet[i].Level+6 {
				return sp[i].Centre
			}
		}
		return sp[peak].Centre
	}
	i := peak
	for i > 0 && sp[i-1].Centre >= 40 && sp[i-1].Level >= sp[peak].Level-20 && sp[i-1].Level <= sp[i].Level+1 {
		i--
	}
	return sp[i].Centre
}

// HighPassCorner is the corner frequency the adaptive high-pass uses for
// an analysis: three quarters of VoiceStart (a Butterworth corner is 3 dB
// down, so this keeps the lowest voice band intact), limited to
// MinHighPass-MaxHighPass, DefaultHighPass without a usable analysis.
func HighPassCorner(an *Analysis) float64 {
	if an == nil {
		return DefaultHighPass
	}
	vs := an.VoiceStart()
	if vs == 0 {
		return DefaultHighPass
	}
	return math.Min(math.Max(0.75*vs, MinHighPass), MaxHighPass)
}

// HighPass is the adaptive high-pass filter (the API's hipfilter): a
// 4th-order Butterworth high-pass whose corner sits just below where the
// voice starts, removing rumble, handling noise and plosive pops below it
// while leaving the voice untouched.
type HighPass struct {
	*Biquad
	corner float64
}

// NewHighPass returns src high-passed at HighPassCorner(an). an may be
// nil for the default corner.
func NewHighPass(src audio.Source, an *Analysis) (*HighPass, error) {
	return NewHighPassAt(src, HighPassCorner(an))
}

// NewHighPassAt returns src high-passed at a fixed corner in Hz.
func NewHighPassAt(src audio.Source, corner float64) (*HighPass, error) {
	fs := float64(src.Format().SampleRate)
	corner = math.Min(corner, 0.45*fs)
	b, err := NewBiquad(src, ButterworthHighPass(fs, corner, highPassOrder)...)
	if err != nil {
		return nil, err
	}
	return &HighPass{Biquad: b, corner: corner}, nil
}

// Corner returns the corner frequency in Hz.
func (h *HighPass) Corner() float64 { return h.corner }
