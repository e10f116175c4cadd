// Package dsp holds the processing nodes of the streaming graph. Every node
// is a small struct that wraps an upstream audio.Source (the decorator
// pattern) and is itself an audio.Source, so a chain is built by nesting
// constructors:
//
//	src = dsp.NewHighPass(src, an.VoiceStart())
//	src = dsp.NewLeveler(src, an, dsp.LevelerOptions{Strength: 1})
//	src = dsp.NewCompressor(src, dsp.CompressorPreset(dsp.Medium, an.SpeechLevel()))
//	src = dsp.NewLimiter(src, -1)
//
// Nodes that need to know the whole recording (the adaptive high-pass, the
// auto-EQ, the leveler, the compressor's auto mode) take an *Analysis, which
// an Analyzer fills in a first pass over the input. Every node produces the
// same samples whatever block size it is read with, has no latency visible
// from outside (lookahead is compensated inside the node, and the output has
// exactly as many frames as the input), and allocates nothing per Read once
// constructed.
package dsp

import (
	"errors"
	"fmt"
	"math"

	"github.com/audiopost/audiopost/audio"
)

// ErrInvalidParameter means a node was configured with a value outside its
// domain (a cutoff above Nyquist, a negative ratio, ...).
var ErrInvalidParameter = errors.New("dsp: invalid parameter")

// DBToGain converts decibels to a linear amplitude factor.
func DBToGain(db float64) float64 { return math.Pow(10, db/20) }

// GainToDB converts a linear amplitude factor to decibels; 0 gives -Inf.
func GainToDB(g float64) float64 { return 20 * math.Log10(g) }

// PowerToDB converts a mean-square value to decibels; 0 gives -Inf.
func PowerToDB(p float64) float64 { return 10 * math.Log10(p) }

// checkShape validates dst against the stream's channel count; it is the
// first thing every Read does so that a wrongly shaped buffer is an error,
// not an index panic deep inside a filter.
func checkShape(dst audio.Buffer, channels int) error {
	if len(dst) != channels {
		return fmt.Errorf("%w: %d channels for a %d-channel stream", audio.ErrFormatMismatch, len(dst), channels)
	}
	return nil
}
