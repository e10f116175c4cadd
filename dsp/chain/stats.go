package chain

import (
	"github.com/audiopost/audiopost/dsp"
	"github.com/audiopost/audiopost/dsp/classify"
	"github.com/audiopost/audiopost/dsp/spectral"
	"github.com/audiopost/audiopost/loudness"
)

// Settings record what the automatic choices were.
type Settings struct {
	// Filter is the filter stage that ran; CornerHz its high-pass corner,
	// EQBands the number of equalizer bands and BWECutoffHz the cutoff
	// above which bandwidth was extended (0 when not extended).
	Filter      dsp.FilterMethod
	CornerHz    float64
	EQBands     int
	BWECutoffHz float64
	// SpeechCompression and MusicCompression are the resolved compressors
	// (never CompressionAuto).
	SpeechCompression, MusicCompression Compression
	// NormalizationGainDB is the gain before the limiter; CeilingDBTP the
	// limiter's ceiling.
	NormalizationGainDB, CeilingDBTP float64
}

// Stats are what a run measured and decided, in DSP units. Warnings name
// every constraint that was not met: the pipeline never silently switches
// to another mode.
type Stats struct {
	// Input is the input's loudness (every measurement of loudness.ModeAll).
	Input loudness.Result
	// Output is the rendered output's loudness, complete at io.EOF: the
	// EBU measurements, RMS, and dialog loudness over the input's speech.
	Output loudness.Result
	// GainMinDB, GainMeanDB and GainMaxDB are the level change from input
	// to output over the voiced blocks (leveler, compressor, loudness
	// control and normalization together; the limiter's few dB on peaks
	// are not counted).
	GainMinDB, GainMeanDB, GainMaxDB float64
	// Segments are the classifier's speech and music segments of the
	// input, covering it from start to end.
	Segments []classify.Segment
	// InputSteps and OutputSteps are the 100 ms step energies of input
	// and output (loudness.Options.OnStep): loudness over time, what
	// pictures of the processing are drawn from. OutputSteps is complete
	// at io.EOF.
	InputSteps, OutputSteps []float64
	Settings                Settings
	// Restoration reports what the restoration stage did per segment
	// (complete at io.EOF), and Hum the mains hum it detected.
	Restoration []spectral.SegmentStats
	Hum         spectral.Hum
	// Cuts are the cuts detected and the trims, in input frames, whatever
	// the cut mode; Applied are those the output leaves out (every cut
	// with ApplyCuts, the trims alone otherwise).
	Cuts, Applied classify.Cuts
	Warnings      []string
}
