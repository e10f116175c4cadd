// Package dsp holds the processing nodes of the streaming graph. Every node
// is a small struct that wraps an upstream audio.Source (the decorator
// pattern) and is itself an audio.Source, so a graph is built by nesting
// constructors. Nodes that need to know the whole recording (the adaptive
// high-pass, the auto-EQ, the leveler, the compressor presets) take the
// *Analysis of a first pass over the input; the graph then runs as a second
// pass over a fresh decoder of the same input:
//
//	an, err := dsp.Analyze(ctx, first, dsp.AnalyzerOptions{Spectrum: true})
//	src, err := dsp.NewHighPass(second, an)
//	src, err = dsp.NewLeveler(src, an, dsp.LevelerOptions{Strength: 1})
//	p, err := dsp.CompressorPreset(dsp.Medium, an.SpeechRMS())
//	src, err = dsp.NewCompressor(src, p)
//	src, err = dsp.NewLimiter(src, -1)
//	defer src.Close() // closes second: a graph owns its inputs
//
// (Example shows it whole.) Graphs branch and join with Mix (N sources with
// gain, constant-power pan and sample-accurate offsets), Tee (a meter or an
// encoder mid-graph), Normalize (the second pass of loudness normalization)
// and Resampler (a polyphase windowed-sinc sample-rate converter).
//
// Every constructor is NewX(upstream, options)
// returning the node and an error wrapping ErrInvalidParameter for values
// outside the node's domain. Every node produces the same samples whatever
// block size it is read with, has no latency visible from outside
// (lookahead is compensated inside the node, and the output has exactly as
// many frames as the input), allocates nothing per Read once constructed,
// and closes its upstream sources when it is closed.
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
func DBToGain(db float64) float64 { return pow10(db / 20) }

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
