// Package chain is the single-track processing pipeline: analysis, the
// processing graph (filter, leveler, compressor) and loudness
// normalization with a true-peak limiter, streaming. Each pass re-opens
// the input (audio.Opener) instead of storing audio, so memory is bounded
// by the graph, not by the length of the file.
//
// The package speaks DSP: frequencies in Hz, levels in dB, LUFS and dBTP,
// strengths as factors, choices as Go types. Which API keys and values
// produce a Config is the business of package production.
package chain

import (
	"fmt"
	"math"

	"github.com/audiopost/audiopost/dsp"
	"github.com/audiopost/audiopost/dsp/classify"
	"github.com/audiopost/audiopost/dsp/spectral"
	"github.com/audiopost/audiopost/loudness"
)

// Compression selects the compressor of one class of material (speech or
// music).
type Compression int

// The compression settings.
const (
	// CompressionAuto chooses from the analysed dynamics for speech
	// (dsp.AutoCompressor) and is soft for music, which keeps more of its
	// dynamics.
	CompressionAuto Compression = iota
	// CompressionOff does not compress.
	CompressionOff
	// CompressionSoft, CompressionMedium and CompressionHard are the
	// dsp.CompressorPreset presets.
	CompressionSoft
	CompressionMedium
	CompressionHard
)

var compressionNames = [...]string{"auto", "off", "soft", "medium", "hard"}

func (c Compression) String() string {
	if c < 0 || int(c) >= len(compressionNames) {
		return fmt.Sprintf("Compression(%d)", int(c))
	}
	return compressionNames[c]
}

func (c Compression) kind() dsp.CompressorKind {
	switch c {
	case CompressionSoft:
		return dsp.Soft
	case CompressionMedium:
		return dsp.Medium
	case CompressionHard:
		return dsp.Hard
	}
	return ""
}

// Config holds the settings of the single-track pipeline. Start from
// DefaultConfig.
type Config struct {
	// Filter is the filter stage.
	Filter dsp.FilterMethod
	// Leveler switches the adaptive leveler.
	Leveler bool
	// SpeechStrength and MusicStrength scale the leveler's correction of
	// speech and music (0 leaves levels alone, 1 evens them fully, up to
	// 1.2 over-corrects slightly).
	SpeechStrength, MusicStrength float64
	// MusicGainDB is added to music segments (also without the leveler).
	MusicGainDB float64
	// SpeechCompression and MusicCompression choose the compressors.
	SpeechCompression, MusicCompression Compression
	// Normalize switches loudness normalization to TargetLUFS by Method.
	// Without it the true-peak limiter still enforces MaxTruePeak.
	Normalize  bool
	TargetLUFS float64
	Method     loudness.Method
	// DualMono measures mono as if played on two loudspeakers (+3 LU).
	DualMono bool
	// MaxLRA, MaxShortTerm and MaxMomentary are limits in LU (0: none):
	// the loudness range, and the short-term and momentary loudness above
	// the target.
	MaxLRA, MaxShortTerm, MaxMomentary float64
	// MaxTruePeak is the true-peak ceiling in dBTP every output must meet.
	MaxTruePeak float64
	// Headroom is kept below MaxTruePeak, in dB, for outputs whose encoders
	// overshoot the true peak of what they are given (lossy codecs); the
	// caller knows the codecs, the chain only limits lower.
	Headroom float64
	// Classifier is the speech/music classifier's mode: automatic, or the
	// whole programme known to be speech or music.
	Classifier classify.Mode
	// Restoration, when not nil, is the noise, hum, reverb and breath
	// reduction after the filter (package spectral).
	Restoration *spectral.Restoration
	// Cutting says what to cut and how; the zero value cuts nothing.
	Cutting Cutting
	// Sequential keeps every pass on the calling goroutine. By default,
	// when more than one CPU is available (GOMAXPROCS), each pass runs as
	// stages in goroutines of their own with bit-identical results, and
	// the loudness pass over a minute or more of WAV is split in time, its
	// halves run at once (results within 1e-9 of one pass's).
	Sequential bool
	// SpillBytes bounds the temporary file in which, with Restoration,
	// the first loudness pass keeps the processed signal for the passes
	// after it, which then neither decode nor filter, denoise or compress
	// the input again: 0 means DefaultSpillBytes, a negative value keeps
	// nothing. A longer programme is processed again in every pass.
	SpillBytes int64
	// TempDir is where that file is made (default os.TempDir).
	TempDir string
}

// Cutting configures the cutters: which cuts the classifier's detection
// makes (and trims), and what the render does with them.
type Cutting struct {
	Detect classify.CutOptions
	// Refine, when set, sees the detected cuts (and trims) and returns
	// the cuts to make, sorted and valid: a speech recognizer's word
	// timings add the filler words it heard and veto acoustic fillers
	// that are words. Nil keeps the detection as it is.
	Refine func(classify.Cuts) classify.Cuts
	// Mode applies the cuts, silences them, or only reports them.
	Mode classify.CutMode
	// Fade is the crossfade at each join in seconds.
	Fade float64
}

// active reports whether anything is cut or trimmed.
func (c Cutting) active() bool {
	d := c.Detect
	return d.Silence || d.Filler || d.Cough || d.Music || d.TrimStart > 0 || d.TrimEnd > 0
}

// DefaultConfig returns the pipeline's defaults: high-pass filter, full
// leveling of speech and half of music, automatic compression, -16 LUFS
// programme loudness with a 0 dBTP ceiling.
func DefaultConfig() Config {
	return Config{
		Filter: dsp.FilterHighPass, Leveler: true, SpeechStrength: 1, MusicStrength: 0.5,
		Normalize: true, TargetLUFS: -16, Method: loudness.Program,
	}
}

// Validate reports settings outside the pipeline's domain, as errors
// wrapping dsp.ErrInvalidParameter.
func (c Config) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: chain: "+format, append([]any{dsp.ErrInvalidParameter}, args...)...)
	}
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	switch {
	case c.Filter < dsp.FilterOff || c.Filter > dsp.FilterStudioVoice:
		return bad("unknown filter method %d", int(c.Filter))
	case c.SpeechCompression < CompressionAuto || c.SpeechCompression > CompressionHard,
		c.MusicCompression < CompressionAuto || c.MusicCompression > CompressionHard:
		return bad("unknown compression %d/%d", int(c.SpeechCompression), int(c.MusicCompression))
	case !(c.SpeechStrength >= 0 && c.SpeechStrength <= 2), !(c.MusicStrength >= 0 && c.MusicStrength <= 2):
		return bad("leveler strengths %v/%v outside 0-2", c.SpeechStrength, c.MusicStrength)
	case !finite(c.MusicGainDB) || math.Abs(c.MusicGainDB) > 24:
		return bad("music gain %v dB", c.MusicGainDB)
	case c.Normalize && !(c.TargetLUFS <= 0 && c.TargetLUFS >= -70):
		return bad("loudness target %v LUFS", c.TargetLUFS)
	case c.Method != loudness.Program && c.Method != loudness.Dialog && c.Method != loudness.RMS:
		return bad("loudness method %q", c.Method)
	case !(c.MaxLRA >= 0 && c.MaxShortTerm >= 0 && c.MaxMomentary >= 0) || !finite(c.MaxLRA+c.MaxShortTerm+c.MaxMomentary):
		return bad("loudness limits %v/%v/%v LU", c.MaxLRA, c.MaxShortTerm, c.MaxMomentary)
	case !(c.MaxTruePeak <= 0 && c.MaxTruePeak >= -20):
		return bad("true-peak ceiling %v dBTP", c.MaxTruePeak)
	case !(c.Headroom >= 0 && c.Headroom <= 12):
		return bad("headroom %v dB", c.Headroom)
	case !(c.Cutting.Fade >= 0 && c.Cutting.Fade <= 5):
		return bad("cut fade %v s", c.Cutting.Fade)
	case !(c.Cutting.Detect.TrimStart >= 0 && c.Cutting.Detect.TrimEnd >= 0):
		return bad("trims %v/%v s", c.Cutting.Detect.TrimStart, c.Cutting.Detect.TrimEnd)
	}
	if r := c.Restoration; r != nil {
		for i, sg := range r.Segments {
			if !(sg.Start >= 0) || (i > 0 && sg.Start < r.Segments[i-1].Start) {
				return bad("restoration segment %d starts at %v s", i, sg.Start)
			}
		}
	}
	return nil
}

// ceiling is the limiter's true-peak ceiling.
func (c Config) ceiling() float64 { return c.MaxTruePeak - c.Headroom }
