package main

import (
	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp"
)

// normalize is the one place this program builds audiopost nodes: the
// static gain that reaches the loudness target, then the true-peak limiter.
// (The dsp constructors are about to return (node, error); only this
// function will change.)
func normalize(src audio.Source, gainDB, ceilingDB float64) (audio.Source, error) {
	return dsp.NewLimiter(dsp.NewGain(src, gainDB), ceilingDB), nil
}
