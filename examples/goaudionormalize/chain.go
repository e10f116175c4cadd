package main

import (
	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp"
)

// normalize is the one place this program builds audiopost nodes: the
// static gain that reaches the loudness target, then the true-peak limiter.
func normalize(src audio.Source, gainDB, ceilingDB float64) (audio.Source, error) {
	g, err := dsp.NewGain(src, gainDB)
	if err != nil {
		return nil, err
	}
	return dsp.NewLimiter(g, ceilingDB)
}
