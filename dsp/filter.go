package dsp

import (
	"fmt"

	"github.com/audiopost/audiopost/audio"
)

// FilterMethod selects a filter stage built from an Analysis of its input:
// the API's filtermethod, shared by the single-track chain and the
// multitrack tracks.
type FilterMethod int

// The filter stages.
const (
	// FilterOff skips filtering.
	FilterOff FilterMethod = iota
	// FilterHighPass is the adaptive high-pass below the voice.
	FilterHighPass
	// FilterAutoEQ is the high-pass plus an equalizer toward a neutral
	// speech spectrum.
	FilterAutoEQ
	// FilterBWE is the high-pass plus bandwidth extension of band-limited
	// input.
	FilterBWE
	// FilterStudioVoice is the auto-EQ plus gentle voice compression.
	FilterStudioVoice
)

var filterNames = [...]string{"off", "high-pass", "auto-EQ", "bandwidth extension", "studio voice"}

func (m FilterMethod) String() string {
	if m < 0 || int(m) >= len(filterNames) {
		return fmt.Sprintf("FilterMethod(%d)", int(m))
	}
	return filterNames[m]
}

// NewFilter wraps src in the filter stage m, tuned by an (an analysis of
// src with its spectrum). FilterOff returns src itself.
func NewFilter(src audio.Source, an *Analysis, m FilterMethod) (audio.Source, error) {
	switch m {
	case FilterOff:
		return src, nil
	case FilterHighPass:
		return NewHighPass(src, an)
	case FilterAutoEQ:
		return NewAutoEQ(src, an)
	case FilterBWE:
		hp, err := NewHighPass(src, an)
		if err != nil {
			return nil, err
		}
		return NewBWE(hp, an)
	case FilterStudioVoice:
		return NewStudioVoice(src, an)
	}
	return nil, fmt.Errorf("%w: filter method %v", ErrInvalidParameter, m)
}
