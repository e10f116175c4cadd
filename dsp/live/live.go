// Package live is the one-pass (causal) processing of a live stream: the
// graph of package dsp run on audio that arrives as it is played, where
// nothing can be analysed before it is processed. Every node decides from
// the past and a short look-ahead, and the whole graph delays the audio
// by less than 100 ms:
//
//	high-pass -> dehum -> denoise -> leveler and loudness control -> compressor -> peak stage -> true-peak limiter
//
// The high-pass filter has a fixed corner (there is no analysis to adapt
// it to), Dehum follows each mains harmonic from the past two seconds,
// the denoiser (package spectral) tracks the noise from the past, the
// Leveler
// measures the gated K-weighted loudness of the last seconds of speech
// and moves toward the loudness target, freezing in pauses, the
// PeakStage lowers the short peaks of peaky voices to the ceiling with a
// release quick enough to leave their level alone, and the limiter
// (dsp.Limiter) holds the true peak under the ceiling.
//
// A Processor is an audio.Source over its input: read it as fast as the
// input delivers. It measures its output with a loudness.Meter (momentary,
// short-term and integrated loudness, true peak), which also feeds the
// leveler's slow loudness trim, and Stats may be called from any
// goroutine while it runs.
package live

import (
	"fmt"
	"io"
	"math"
	"sync"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp"
	"github.com/audiopost/audiopost/dsp/spectral"
	"github.com/audiopost/audiopost/loudness"
)

// Config holds the settings of the live graph. Start from DefaultConfig.
type Config struct {
	// HighPass is the corner in Hz of the 4th-order Butterworth high-pass
	// filter; 0 leaves the low end alone.
	HighPass float64
	// Dehum, when not nil, removes mains hum (causally: see Dehum).
	Dehum *DehumOptions
	// Denoise, when not nil, reduces noise tracked from the past:
	// Method and ReductionDB as in spectral.Settings (0: 24 dB, there is
	// no measured SNR to choose from). Reverb and breath reduction need
	// seconds of look-ahead and are refused.
	Denoise *spectral.Settings
	// Leveler switches the leveler; LevelerStrength scales it (0-2).
	Leveler         bool
	LevelerStrength float64
	// Normalize steers the loudness toward TargetLUFS.
	Normalize  bool
	TargetLUFS float64
	// Compressor, when not empty, compresses after the leveler with the
	// preset's parameters relative to the level the leveler delivers.
	Compressor dsp.CompressorKind
	// MaxTruePeak is the limiter's ceiling in dBTP, and Headroom is kept
	// below it for encoders that raise peaks (lossy codecs).
	MaxTruePeak float64
	Headroom    float64
	// Lookahead is the leveler's look-ahead in seconds (0: DefaultLookahead).
	Lookahead float64
	// DualMono measures a mono stream as two channels (+3 LU).
	DualMono bool
}

// DefaultConfig returns the live defaults: an 80 Hz high-pass, the leveler
// at full strength, -16 LUFS, a 0 dBTP ceiling and no compressor.
func DefaultConfig() Config {
	return Config{HighPass: dsp.DefaultHighPass, Leveler: true, LevelerStrength: 1, Normalize: true, TargetLUFS: -16}
}

// Validate reports settings outside the graph's domain, wrapping
// dsp.ErrInvalidParameter.
func (c Config) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: live: "+format, append([]any{dsp.ErrInvalidParameter}, args...)...)
	}
	switch {
	case !(c.HighPass >= 0 && c.HighPass <= 1000):
		return bad("high-pass corner %v Hz", c.HighPass)
	case !(c.LevelerStrength >= 0 && c.LevelerStrength <= 2):
		return bad("leveler strength %v outside 0-2", c.LevelerStrength)
	case c.Normalize && !(c.TargetLUFS <= 0 && c.TargetLUFS >= -70):
		return bad("loudness target %v LUFS", c.TargetLUFS)
	case !(c.MaxTruePeak <= 0 && c.MaxTruePeak >= -20):
		return bad("true-peak ceiling %v dBTP", c.MaxTruePeak)
	case !(c.Headroom >= 0 && c.Headroom <= 12):
		return bad("headroom %v dB", c.Headroom)
	case !(c.Lookahead >= 0 && c.Lookahead <= 0.05):
		return bad("look-ahead %v s outside 0-0.05", c.Lookahead)
	}
	if c.Compressor != "" {
		if _, err := dsp.CompressorPreset(c.Compressor, 0); err != nil {
			return err
		}
	}
	if d := c.Denoise; d != nil {
		if d.DeverbDB >= 0 {
			return bad("reverb reduction needs seconds of look-ahead; set it off (negative) for a live stream")
		}
		if d.DebreathDB > 0 {
			return bad("breath reduction needs 1.2 s of look-ahead; set it off for a live stream")
		}
	}
	return nil
}

// Stats are the figures of a running Processor.
type Stats struct {
	// Frames is the number of frames output so far, SampleRate their rate.
	Frames     int64
	SampleRate int
	// Momentary (400 ms), ShortTerm (3 s) and Integrated loudness of the
	// output in LUFS, -Inf while undefined.
	Momentary, ShortTerm, Integrated float64
	// TruePeak is the output's highest true peak so far in dBTP, and
	// PeakDB the highest sample peak of the latest 100 ms step in dBFS.
	TruePeak, PeakDB float64
	// GainDB is the leveler's and loudness control's gain, LimiterDB the
	// limiter's current gain (<= 0), LevelLUFS the input's speech level.
	GainDB, LimiterDB, LevelLUFS float64
	// Speech is false while the input is in a pause (the gain is frozen).
	Speech bool
}

// Processor is the live graph over one input. Read it from one goroutine;
// Stats and Latency may be called from any.
type Processor struct {
	src     audio.Source // the input, closed by Close
	out     audio.Source // the graph's output
	lev     *Leveler
	lim     *dsp.Limiter
	den     *spectral.Denoiser
	meter   *loudness.Meter
	latency int

	stepPeak float64
	steps    int64

	mu    sync.Mutex
	stats Stats
}

// New returns the live graph over src with settings c.
func New(src audio.Source, c Config) (*Processor, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	f := src.Format()
	if err := f.Validate(); err != nil {
		return nil, err
	}
	p := &Processor{src: src}
	s := src
	if c.HighPass > 0 {
		hp, err := dsp.NewHighPassAt(s, c.HighPass)
		if err != nil {
			return nil, err
		}
		s = hp
	}
	if c.Dehum != nil {
		dh, err := NewDehum(s, *c.Dehum)
		if err != nil {
			return nil, err
		}
		s = dh
	}
	if c.Denoise != nil {
		d, err := spectral.NewDenoiser(s, spectral.DenoiserOptions{Settings: *c.Denoise, Causal: true})
		if err != nil {
			return nil, err
		}
		p.den = d
		p.latency += d.Latency()
		s = d
	}
	strength := c.LevelerStrength
	if !c.Leveler {
		strength = 0
	}
	if c.Leveler || c.Normalize {
		lv, err := NewLeveler(s, LevelerOptions{Strength: strength, Normalize: c.Normalize, TargetLUFS: c.TargetLUFS, Lookahead: c.Lookahead, DualMono: c.DualMono})
		if err != nil {
			return nil, err
		}
		p.lev = lv
		p.latency += lv.Latency()
		s = lv
	}
	if c.Compressor != "" {
		// After the leveler speech sits near the target (K-weighted
		// loudness and RMS of speech agree within a dB or two); without
		// a target, near -20 dBFS.
		ref := -20.0
		if c.Normalize {
			ref = c.TargetLUFS
		}
		pr, err := dsp.CompressorPreset(c.Compressor, ref)
		if err != nil {
			return nil, err
		}
		cp, err := dsp.NewCompressor(s, pr)
		if err != nil {
			return nil, err
		}
		s = cp
	}
	ps, err := NewPeakStage(s, c.MaxTruePeak-c.Headroom)
	if err != nil {
		return nil, err
	}
	p.latency += ps.Latency()
	s = ps
	lim, err := dsp.NewLimiter(s, c.MaxTruePeak-c.Headroom)
	if err != nil {
		return nil, err
	}
	p.lim = lim
	p.latency += lim.Latency()
	p.out = lim
	opts := loudness.Options{Mode: loudness.ModeM | loudness.ModeS | loudness.ModeI | loudness.ModeTruePeak, DualMono: c.DualMono, OnStep: p.onStep}
	if p.lev != nil {
		opts.OnHop = p.lev.Observe
	}
	if p.meter, err = loudness.NewMeter(f, opts); err != nil {
		return nil, err
	}
	inf := math.Inf(-1)
	p.stats = Stats{SampleRate: f.SampleRate, Momentary: inf, ShortTerm: inf, Integrated: inf, TruePeak: inf, PeakDB: inf, LevelLUFS: inf}
	return p, nil
}

// Format implements audio.Source.
func (p *Processor) Format() audio.Format { return p.src.Format() }

// Latency is the look-ahead of the graph in frames: how far the input
// must be ahead of an output frame (the denoiser's STFT, the leveler's
// look-ahead, the peak stage's and the limiter's). Nodes that work in hops (the denoiser)
// add up to one hop of waiting on top.
func (p *Processor) Latency() int { return p.latency }

// Read implements audio.Source.
func (p *Processor) Read(dst audio.Buffer) (int, error) {
	n, err := p.out.Read(dst)
	if n > 0 {
		b := dst
		if n < dst.Frames() {
			b = dst.Slice(0, n)
		}
		// In a local: a field written every sample kept the loop from
		// running in registers (a quarter of the graph's time).
		pk := p.stepPeak
		for c := range b {
			for _, v := range b[c] {
				pk = max(pk, math.Abs(v))
			}
		}
		p.stepPeak = pk
		if werr := p.meter.Write(b); werr != nil {
			return 0, werr
		}
		p.mu.Lock()
		p.stats.Frames += int64(n)
		p.stats.Momentary = p.meter.Momentary()
		p.stats.ShortTerm = p.meter.ShortTerm()
		p.stats.LimiterDB = p.lim.GainDB()
		if p.lev != nil {
			p.stats.GainDB = p.lev.GainDB()
			p.stats.LevelLUFS = p.lev.LevelLUFS()
			p.stats.Speech = p.lev.Active()
		}
		p.mu.Unlock()
	}
	return n, err
}

// onStep is the output meter's callback every 100 ms: the loudness
// trim's feedback, and the figures that need not change more often.
func (p *Processor) onStep(energy float64) {
	if p.lev != nil {
		p.lev.Feedback(energy)
	}
	p.steps++
	peak := dsp.GainToDB(p.stepPeak)
	p.stepPeak = 0
	var integrated, tp float64
	refresh := p.steps%10 == 0
	if refresh {
		r := p.meter.Result()
		integrated, tp = r.Integrated, r.TruePeak
	}
	p.mu.Lock()
	p.stats.PeakDB = peak
	if refresh {
		p.stats.Integrated, p.stats.TruePeak = integrated, tp
	}
	p.mu.Unlock()
}

// Stats returns the current figures. The integrated loudness and the true
// peak are refreshed every second of output.
func (p *Processor) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}

// Result returns the output meter's full reading (call it from the
// goroutine that reads, or after the stream has ended).
func (p *Processor) Result() loudness.Result { return p.meter.Result() }

// Close closes the input.
func (p *Processor) Close() error {
	if c, ok := p.src.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
