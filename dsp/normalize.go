package dsp

import (
	"context"
	"fmt"
	"math"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/loudness"
)

// NormalizeOptions configure a Normalize.
type NormalizeOptions struct {
	// TargetLUFS is the loudness to reach: -16 for podcasts, -23 for EBU
	// R 128 broadcast, -14 for music streaming. It must be below 0 and
	// not below -70. With the RMS method it is an RMS level in dBFS.
	TargetLUFS float64

	// The loudness of the input, measured in a previous pass: either
	// MeasuredLUFS, or Measurement read with Method (loudness.Program when
	// empty, loudness.Dialog, loudness.RMS). MeasuredLUFS 0 means "not
	// given" (a forgotten field must not pass for a measurement of 0
	// LUFS); give a Measurement to normalise something that loud.
	MeasuredLUFS float64
	Measurement  *loudness.Result
	Method       loudness.Method

	// CeilingDBTP is the true-peak ceiling the output stays under, in
	// dBTP (-1 is the usual one, -2 before lossy encoders at low bit
	// rates); zero means 0 dBTP. It must not be above 0.
	CeilingDBTP float64
}

// Normalize brings a stream to a loudness target in the second pass of a
// two-pass normalisation: the first pass measures (loudness.Meter, or a
// Tee into one), Normalize applies the one gain that moves the measured
// loudness to the target and then a true-peak limiter (NewLimiter) so
// that the gain cannot push peaks over the ceiling.
//
// The target is met exactly (the limiter passes everything below the
// ceiling untouched) as long as the programme's peak-to-loudness ratio
// (true peak minus loudness) is no more than the distance from target to
// ceiling, less the limiter's LimiterMargin. Beyond that the ceiling wins: the limiter takes the excess off
// the peaks and the loudness falls short of the target (in the tests,
// synthetic speech peaking 18.7 dB over its loudness, normalised to -16
// LUFS under -1 dBTP, ends 0.8 LU short). NormalizeStream meets the target
// in that case too, by measuring the limited output and correcting the
// gain. Like every node Normalize has no latency visible from
// outside and keeps the frame count.
type Normalize struct {
	src    audio.Source
	gainDB float64
	lim    *Limiter
}

// NewNormalize returns src normalised as opts say. It fails with
// ErrInvalidParameter for a target, ceiling or measurement out of range,
// and when the measurement holds no loudness (silence, too short), with
// the loudness package's reason wrapped too.
func NewNormalize(src audio.Source, opts NormalizeOptions) (*Normalize, error) {
	gain, err := normalizeGain(opts)
	if err != nil {
		return nil, err
	}
	if err := src.Format().Validate(); err != nil {
		return nil, fmt.Errorf("%w: normalize input: %w", ErrInvalidParameter, err)
	}
	return newNormalize(src, gain, opts.CeilingDBTP)
}

// normalizeGain checks opts and returns the gain they call for.
func normalizeGain(opts NormalizeOptions) (float64, error) {
	if !(opts.TargetLUFS < 0 && opts.TargetLUFS >= -70) {
		return 0, fmt.Errorf("%w: loudness target %v LUFS outside [-70, 0)", ErrInvalidParameter, opts.TargetLUFS)
	}
	if !(opts.CeilingDBTP <= 0) || math.IsInf(opts.CeilingDBTP, -1) {
		return 0, fmt.Errorf("%w: true-peak ceiling %v dBTP above 0 or not finite", ErrInvalidParameter, opts.CeilingDBTP)
	}
	measured := opts.MeasuredLUFS
	switch {
	case opts.Measurement != nil && opts.MeasuredLUFS != 0:
		return 0, fmt.Errorf("%w: both MeasuredLUFS and Measurement given", ErrInvalidParameter)
	case opts.Measurement != nil:
		m, err := opts.Measurement.Loudness(opts.Method)
		if err != nil {
			return 0, fmt.Errorf("%w: measured loudness: %w", ErrInvalidParameter, err)
		}
		measured = m
	case opts.MeasuredLUFS == 0:
		return 0, fmt.Errorf("%w: no measured loudness (MeasuredLUFS or Measurement)", ErrInvalidParameter)
	}
	if math.IsNaN(measured) || math.IsInf(measured, 0) {
		return 0, fmt.Errorf("%w: measured loudness %v", ErrInvalidParameter, measured)
	}
	return opts.TargetLUFS - measured, nil
}

func newNormalize(src audio.Source, gainDB, ceilingDB float64) (*Normalize, error) {
	n := &Normalize{src: src, gainDB: gainDB}
	g, err := NewGain(src, gainDB)
	if err != nil {
		return nil, err
	}
	if n.lim, err = NewLimiter(g, ceilingDB); err != nil {
		return nil, err
	}
	return n, nil
}

// GainDB returns the gain Normalize applies before the limiter: the
// target minus the measured loudness.
func (n *Normalize) GainDB() float64 { return n.gainDB }

// LimiterReductionDB returns the deepest gain reduction the limiter has
// applied so far (<= 0 dB); 0 means the ceiling never came into play.
func (n *Normalize) LimiterReductionDB() float64 { return n.lim.MaxReductionDB() }

// Format implements audio.Source.
func (n *Normalize) Format() audio.Format { return n.src.Format() }

// Close closes the source.
func (n *Normalize) Close() error { return closeSources(n.src) }

// Read implements audio.Source.
func (n *Normalize) Read(dst audio.Buffer) (int, error) { return n.lim.Read(dst) }

// FitGain finds the gain in dB before a true-peak limiter that brings the
// limited stream to target, by measure(gainDB), the loudness of the stream
// rendered with that gain. Loudness after limiting grows monotonically but
// sub-linearly with the gain, so secant steps from the measured points
// reach the target within 0.05 LU in two or three passes even when the
// limiter works hard; it stops after maxPasses measurements and returns the
// last gain. gainDB is the first guess (target minus the unlimited
// loudness).
func FitGain(gainDB, target float64, maxPasses int, measure func(gainDB float64) (float64, error)) (float64, error) {
	prevG, prevL := math.NaN(), math.NaN()
	for range maxPasses {
		got, err := measure(gainDB)
		if err != nil {
			return gainDB, err
		}
		corr := target - got
		if math.Abs(corr) < 0.05 || math.IsInf(corr, 0) || math.IsNaN(corr) {
			break
		}
		step := corr
		if !math.IsNaN(prevG) && got != prevL {
			slope := (got - prevL) / (gainDB - prevG)
			step = corr / math.Max(slope, 0.1)
		}
		prevG, prevL = gainDB, got
		gainDB += math.Max(-20, math.Min(20, step))
	}
	return gainDB, nil
}

// NormalizeStream is two-pass normalisation that meets its target whatever
// the peaks: it measures the stream that open opens (unless opts carries
// a measurement), renders the gain and limiter into a meter and corrects
// the gain with FitGain (at most four passes more), and returns the
// Normalize for the final pass, reading a fresh stream from open. Use it
// where the graph can be run again; NewNormalize where it cannot.
func NormalizeStream(ctx context.Context, open audio.Opener, opts NormalizeOptions) (*Normalize, error) {
	pass := func(gainDB float64, meter loudness.Options) (loudness.Result, error) {
		src, err := open(ctx)
		if err != nil {
			return loudness.Result{}, err
		}
		defer closeSources(src)
		if !math.IsNaN(gainDB) {
			g, err := NewGain(src, gainDB)
			if err != nil {
				return loudness.Result{}, err
			}
			if src, err = NewLimiter(g, opts.CeilingDBTP); err != nil {
				return loudness.Result{}, err
			}
		}
		return loudness.Measure(ctx, src, meter)
	}
	mode := loudness.ModeI | loudness.ModeRMS
	if opts.Measurement == nil && opts.MeasuredLUFS == 0 {
		r, err := pass(math.NaN(), loudness.Options{Mode: mode})
		if err != nil {
			return nil, err
		}
		opts.Measurement = &r
	}
	gain, err := normalizeGain(opts)
	if err != nil {
		return nil, err
	}
	gain, err = FitGain(gain, opts.TargetLUFS, 4, func(g float64) (float64, error) {
		r, err := pass(g, loudness.Options{Mode: mode})
		if err != nil {
			return 0, err
		}
		v, _ := r.Loudness(opts.Method)
		return v, nil
	})
	if err != nil {
		return nil, err
	}
	src, err := open(ctx)
	if err != nil {
		return nil, err
	}
	n, err := newNormalize(src, gain, opts.CeilingDBTP)
	if err != nil {
		closeSources(src)
	}
	return n, err
}
