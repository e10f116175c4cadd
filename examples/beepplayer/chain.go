package main

import (
	"context"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp"
)

// This file is the one place the program builds audiopost nodes.

// analyze is the first pass: it reads src to the end through an Analyzer.
func analyze(ctx context.Context, src audio.Source) (*dsp.Analysis, error) {
	return dsp.Analyze(ctx, src, dsp.AnalyzerOptions{Spectrum: true})
}

// process is the second pass: the leveler with the first pass's analysis,
// then the true-peak limiter.
func process(src audio.Source, an *dsp.Analysis, strength, ceilingDB float64) (audio.Source, error) {
	lev, err := dsp.NewLeveler(src, an, dsp.LevelerOptions{Strength: strength})
	if err != nil {
		return nil, err
	}
	return dsp.NewLimiter(lev, ceilingDB)
}
