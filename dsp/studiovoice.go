package dsp

import "github.com/audiopost/audiopost/audio"

// StudioVoiceCompression is the gentle compression of StudioVoice, with
// its threshold relative to the speech RMS level: 2.5:1 from 4 dB above
// it, 6 dB knee, 8 ms attack, 150 ms release.
var StudioVoiceCompression = CompressorParams{ThresholdDB: 4, Ratio: 2.5, KneeDB: 6, Attack: 0.008, Release: 0.150}

// StudioVoice (filtermethod studiovoice) is a fixed combination of our own
// filters, no external model: the adaptive high-pass, the auto-EQ toward
// the neutral speech spectrum, and StudioVoiceCompression, which together
// give a close, even, "studio" voice.
type StudioVoice struct {
	audio.Source
	eq   *AutoEQ
	comp *Compressor
}

// NewStudioVoice returns src processed according to an.
func NewStudioVoice(src audio.Source, an *Analysis) (*StudioVoice, error) {
	eq, err := NewAutoEQ(src, an)
	if err != nil {
		return nil, err
	}
	p := StudioVoiceCompression
	p.ThresholdDB += an.SpeechRMS()
	comp, err := NewCompressor(eq, p)
	if err != nil {
		return nil, err
	}
	return &StudioVoice{Source: comp, eq: eq, comp: comp}, nil
}

// Bands returns the equalizer bands in use.
func (s *StudioVoice) Bands() []EQBand { return s.eq.Bands() }

// Corner returns the high-pass corner in Hz.
func (s *StudioVoice) Corner() float64 { return s.eq.Corner() }
