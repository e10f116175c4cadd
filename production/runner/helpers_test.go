package runner_test

import (
	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/loudness"
)

func loudnessOf(b audio.Buffer, rate int) (float64, error) {
	r, err := loudness.MeasureBuffer(b, rate, loudness.Options{Mode: loudness.ModeI})
	if err != nil {
		return 0, err
	}
	return r.Integrated, r.Err
}
