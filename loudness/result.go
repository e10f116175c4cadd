package loudness

import (
	"context"
	"fmt"
	"math"

	"github.com/audiopost/audiopost/audio"
)

// Result holds a meter's readings. Loudness values are in LUFS, ranges in
// LU, peaks in dBFS/dBTP. A value that is undefined (silence, input shorter
// than the window, measurement not asked for) is -Inf, never NaN; Err tells
// why the main readings are undefined.
type Result struct {
	// Frames is the number of frames measured; SampleRate their rate.
	Frames     int64
	SampleRate int

	// Integrated is the gated programme loudness (BS.1770-5, EBU R128).
	Integrated float64
	// Dialog is the gated loudness of the blocks inside Options.Speech.
	Dialog float64
	// RMS is the ungated, unweighted RMS level in dBFS (see the package
	// documentation).
	RMS float64
	// LRA is the loudness range (EBU Tech 3342) in LU, between the 10th
	// percentile LRALow and the 95th percentile LRAHigh in LUFS.
	LRA, LRALow, LRAHigh float64
	// MaxMomentary and MaxShortTerm are the maxima of the 400 ms and 3 s
	// loudness, evaluated every 10 ms.
	MaxMomentary, MaxShortTerm float64
	// SamplePeak (dBFS) and TruePeak (dBTP) over all channels.
	SamplePeak, TruePeak float64
	// NoiseLevel, SignalLevel (LUFS) and SNR (dB): see the package
	// documentation for their definitions.
	NoiseLevel, SignalLevel, SNR float64

	// Err is nil when Integrated is defined, ErrTooShort when the input is
	// shorter than one 400 ms block, ErrSilence when no block passed the
	// absolute gate. It is nil when ModeI was not asked for.
	Err error
}

// Duration returns the measured length in seconds.
func (r Result) Duration() float64 {
	if r.SampleRate == 0 {
		return 0
	}
	return float64(r.Frames) / float64(r.SampleRate)
}

// Defined reports whether a reading holds a value (is not -Inf).
func Defined(v float64) bool { return !math.IsInf(v, -1) && !math.IsNaN(v) }

// Method is a loudness normalisation method of the API.
type Method string

// The loudness methods.
const (
	// Program is the BS.1770 gated integrated loudness of everything.
	Program Method = "program"
	// Dialog is the gated loudness over the speech ranges only.
	Dialog Method = "dialog"
	// RMS is the ungated, unweighted RMS level.
	RMS Method = "rms"
)

// Loudness returns the reading the method normalises on. Dialog falls back
// to Program when no speech block was measured, as a programme without
// speech has no dialog level to honour.
func (r Result) Loudness(m Method) (float64, error) {
	switch m {
	case Program, "":
		return r.Integrated, r.Err
	case Dialog:
		if Defined(r.Dialog) {
			return r.Dialog, nil
		}
		return r.Integrated, r.Err
	case RMS:
		if !Defined(r.RMS) {
			return r.RMS, ErrSilence
		}
		return r.RMS, nil
	}
	return math.Inf(-1), fmt.Errorf("loudness: unknown method %q (want program, dialog or rms)", string(m))
}

var ninf = math.Inf(-1)

func toDB(lin float64) float64 {
	if lin <= 0 {
		return ninf
	}
	return 20 * math.Log10(lin)
}

// Result returns the readings so far. It may be called at any time and does
// not disturb the measurement; it allocates nothing.
func (m *Meter) Result() Result {
	r := Result{
		Frames: m.frames, SampleRate: m.format.SampleRate,
		Integrated: ninf, Dialog: ninf, RMS: ninf, LRA: ninf, LRALow: ninf, LRAHigh: ninf,
		MaxMomentary: ninf, MaxShortTerm: ninf, SamplePeak: ninf, TruePeak: ninf,
		NoiseLevel: ninf, SignalLevel: ninf, SNR: ninf,
	}
	if m.mode&ModeM != 0 {
		r.MaxMomentary = energyToLUFS(m.maxM)
	}
	if m.mode&ModeS != 0 {
		r.MaxShortTerm = energyToLUFS(m.maxS)
	}
	if m.blocks != nil {
		r.Integrated = m.blocks.gated(-10)
		switch {
		case m.blocks.n == 0:
			r.Err = ErrTooShort
		case !Defined(r.Integrated):
			r.Err = ErrSilence
		}
	}
	if m.dialog != nil {
		r.Dialog = m.dialog.gated(-10)
	}
	if m.short != nil {
		if n, sum := m.short.above(absoluteGate); n > 0 {
			var pc [2]float64
			if m.short.percentiles(max(energyToLUFS(sum/n)-20, absoluteGate), []float64{0.10, 0.95}, pc[:]) {
				r.LRALow, r.LRAHigh = pc[0], pc[1]
				r.LRA = pc[1] - pc[0]
			}
		}
	}
	if m.peak != nil {
		r.SamplePeak = toDB(absMax(m.peak))
	}
	if m.tp != nil {
		tp := m.tpMax
		for c := range m.tpPeak {
			tp = max(tp, m.tp.Pending(c))
		}
		if m.peak != nil {
			// The detector works in float32: never let its rounding put
			// the true peak below the sample peak.
			tp = max(tp, absMax(m.peak))
		}
		r.TruePeak = toDB(tp)
	}
	if m.mode&ModeRMS != 0 && m.frames > 0 {
		ms := m.rmsSum / float64(m.frames) / float64(m.rmsCh)
		if ms > 0 {
			r.RMS = 10 * math.Log10(ms)
		}
	}
	if m.mode&ModeLevels != 0 {
		var pc [2]float64
		if m.blocks.percentiles(silenceFloor, []float64{noisePercentile, signalPercentile}, pc[:]) {
			r.NoiseLevel, r.SignalLevel = pc[0], pc[1]
			r.SNR = pc[1] - pc[0]
		}
	}
	return r
}

// The percentiles of the 400 ms block loudness that define the noise and
// signal levels.
const (
	noisePercentile  = 0.10
	signalPercentile = 0.95
)

// Measure reads src to the end through a new Meter and returns the result.
func Measure(ctx context.Context, src audio.Source, opts Options) (Result, error) {
	m, err := NewMeter(src.Format(), opts)
	if err != nil {
		return Result{}, err
	}
	if _, err := audio.Copy(ctx, m, src); err != nil {
		return Result{}, err
	}
	return m.Result(), nil
}

// MeasureBuffer measures b, a whole programme at the sample rate.
func MeasureBuffer(b audio.Buffer, sampleRate int, opts Options) (Result, error) {
	m, err := NewMeter(audio.Format{SampleRate: sampleRate, Channels: len(b)}, opts)
	if err != nil {
		return Result{}, err
	}
	if err := m.Write(b); err != nil {
		return Result{}, err
	}
	return m.Result(), nil
}
