package production

import (
	"context"
	"io"
	"math"
	"strings"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp/chain"
	"github.com/audiopost/audiopost/loudness"
)

// Opener opens a fresh decoder of the main input, positioned at its start.
// A Processor may call it once per pass; the Engine closes what it opened
// when the run ends.
type Opener func(ctx context.Context) (audio.Source, error)

// Processor is the processing step of the pipeline (analysis, processing
// chain, loudness normalization): it turns the decoded input into the
// processed signal. The Engine reads Processed.Source exactly once, to its
// end, feeding every encoder from that single pass.
type Processor interface {
	Process(ctx context.Context, open Opener, job ProcessJob) (*Processed, error)
}

// ProcessJob is what a Processor gets to know about the production.
type ProcessJob struct {
	// Algorithms are the single-track algorithms with defaults applied.
	Algorithms Algorithms
	// Set holds the algorithm keys the production set explicitly, for
	// processors whose defaults for an unset key differ from the typed
	// view's (levelerstrength_music follows levelerstrength there).
	Set AlgorithmValues
	// Lossy is true when some output is encoded lossily, so the limiter
	// should leave headroom for decoder overshoot.
	Lossy bool
	// LossyHeadroomDB, when > 0, replaces the processor's default lossy
	// headroom: the Engine raises it when a decoded lossy output still
	// overshoots maxpeak.
	LossyHeadroomDB float64
}

// Processed is the result of a Processor.
type Processed struct {
	// Source yields the processed audio, as many frames as the input
	// minus Cuts.
	Source audio.Source
	// Cuts are the removed ranges of the input, in input seconds.
	Cuts []Cut
	// Stats is called once Source has reached io.EOF.
	Stats func() ProcessStats
	// Measured, when not nil, returns the loudness of Source as the
	// processor measured it while rendering (complete at io.EOF, with at
	// least the modes of loudness.ModeEBU). The Engine then does not
	// measure the stream again unless intros or outros are added to it.
	Measured func() loudness.Result
}

// ProcessStats are the processor's contribution to the statistics.
type ProcessStats struct {
	Input                      InputLevels
	GainMin, GainMean, GainMax Level
	MusicSpeech                []MusicSpeechSegment
	NoiseHum                   []NoiseHumSegment
	// Warnings name every setting the processor could not honour.
	Warnings []string
}

// ChainProcessor is the Processor of package dsp/chain: filtering,
// leveler, compressor, loudness normalization and true-peak limiting,
// each pass re-reading the input.
type ChainProcessor struct{}

// Process implements Processor.
func (ChainProcessor) Process(ctx context.Context, open Opener, job ProcessJob) (*Processed, error) {
	cfg := ChainConfig(job.Algorithms, job.Set)
	cfg.Lossy = job.Lossy
	cfg.LossyHeadroomDB = job.LossyHeadroomDB
	pl, err := chain.New(ctx, chain.Opener(open), cfg)
	if err != nil {
		return nil, err
	}
	return &Processed{
		Source:   &closeAtEOF{Source: pl, c: pl},
		Stats:    func() ProcessStats { return chainStats(pl.Stats()) },
		Measured: pl.OutputLoudness,
	}, nil
}

// ChainConfig maps the typed algorithms to the chain's configuration.
// Keys in set that are absent get the chain's own "unset" defaults.
func ChainConfig(a Algorithms, set AlgorithmValues) chain.Config {
	cfg := chain.DefaultConfig()
	cfg.Filtering = a.Filtering
	cfg.FilterMethod = a.FilterMethod
	cfg.Leveler = a.Leveler
	cfg.LevelerStrength = a.LevelerStrength
	if _, ok := set["levelerstrength_speech"]; ok {
		cfg.LevelerStrengthSpeech = a.LevelerStrengthSpeech
	}
	if _, ok := set["levelerstrength_music"]; ok {
		cfg.LevelerStrengthMusic = a.LevelerStrengthMusic
	}
	cfg.Compressor = a.Compressor
	if _, ok := set["compressor_speech"]; ok {
		cfg.CompressorSpeech = a.CompressorSpeech
	}
	if _, ok := set["compressor_music"]; ok {
		cfg.CompressorMusic = a.CompressorMusic
	}
	cfg.MusicGain = a.MusicGain
	cfg.NormLoudness = a.NormLoudness
	cfg.LoudnessTarget = a.LoudnessTarget
	cfg.MaxPeak = maxPeakFor(a)
	cfg.DualMono = a.DualMono
	cfg.LoudnessMethod = a.LoudnessMethod
	cfg.MaxLRA, cfg.MaxS, cfg.MaxM = max(a.MaxLRA, 0), max(a.MaxS, 0), max(a.MaxM, 0)
	return cfg
}

// maxPeakFor is the true-peak ceiling every output must meet. The spec
// marks 0 as "auto" for maxlra, maxs and maxm but not for maxpeak: there 0
// is a ceiling of 0 dBTP like any other value. Lossy outputs get extra
// headroom from the chain and are verified after encoding.
func maxPeakFor(a Algorithms) float64 { return a.MaxPeak }

// ceiling is the true-peak ceiling the processed audio of job is limited
// to: maxpeak, less the lossy headroom when a lossy output will be encoded.
func (job ProcessJob) ceiling() float64 {
	c := maxPeakFor(job.Algorithms)
	if job.Lossy {
		h := job.LossyHeadroomDB
		if h <= 0 {
			h = chain.LossyHeadroom
		}
		c -= h
	}
	return c
}

func level(v chain.Value) Level { return Level{Value: v.V, Unit: v.Unit} }

func chainStats(s chain.Stats) ProcessStats {
	in, out := s.Levels.Input, s.Levels.Output
	ps := ProcessStats{
		Input: InputLevels{
			LRA: level(in.LRA), NoiseLevel: level(in.NoiseLevel), MaxMomentary: level(in.MaxMomentary),
			SignalLevel: level(in.SignalLevel), SNR: level(in.SNR), MaxShortterm: level(in.MaxShortTerm), Loudness: level(in.Loudness),
		},
		GainMin: level(out.GainMin), GainMean: level(out.GainMean), GainMax: level(out.GainMax),
		Warnings: s.Warnings,
	}
	for _, seg := range s.MusicSpeech {
		ps.MusicSpeech = append(ps.MusicSpeech, MusicSpeechSegment{Label: seg.Label, Start: seconds(seg.StartSec), Stop: seconds(seg.StopSec)})
	}
	return ps
}

// closeAtEOF closes a source's resources as soon as it is drained.
type closeAtEOF struct {
	audio.Source
	c    io.Closer
	done bool
}

func (s *closeAtEOF) Read(dst audio.Buffer) (int, error) {
	n, err := s.Source.Read(dst)
	if err != nil && !s.done {
		s.done = true
		s.c.Close()
	}
	return n, err
}

// Close releases the resources of a source abandoned before its end.
func (s *closeAtEOF) Close() error {
	if s.done {
		return nil
	}
	s.done = true
	return s.c.Close()
}

// statistics combines the processor's statistics with the levels measured
// on the encoded stream (intros and outros included).
func (pr *Processed) statistics(out loudness.Result, method string) (Statistics, []string) {
	var ps ProcessStats
	if pr.Stats != nil {
		ps = pr.Stats()
	}
	loud := Level{out.Integrated, UnitLUFS}
	if method == "rms" {
		loud = Level{out.RMS, UnitDB}
	} else if method == "dialog" {
		if v, err := out.Loudness(loudness.Dialog); err == nil {
			loud = Level{v, UnitLUFS}
		}
	}
	lv := &Levels{
		Input: ps.Input,
		Output: OutputLevels{
			LRA: Level{round2(out.LRA), UnitLU}, MaxShortterm: Level{round2(out.MaxShortTerm), UnitLUFS},
			MaxMomentary: Level{round2(out.MaxMomentary), UnitLUFS}, Peak: Level{round2(out.TruePeak), UnitDBTP},
			Loudness: Level{round2(loud.Value), loud.Unit},
			GainMin:  ps.GainMin, GainMean: ps.GainMean, GainMax: ps.GainMax,
		},
	}
	var ms []MusicSpeechSegment
	for _, s := range ps.MusicSpeech {
		if s.Stop-s.Start >= MinMusicSpeechSegment {
			ms = append(ms, s)
		}
	}
	return Statistics{Levels: lv, MusicSpeech: ms, NoiseHumReduction: ps.NoiseHum}, ps.Warnings
}

func round2(x float64) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	return math.Round(x*100) / 100
}

// lossyOutputs reports whether any output of p is encoded lossily.
func lossyOutputs(p *Production) bool {
	for _, o := range p.OutputFiles {
		f, ok := LookupFormat(o.Format)
		if ok && (f.Lossy() || f.Type == TypeVideo) {
			return true
		}
	}
	return false
}

func joinWarnings(w []string) string { return strings.Join(w, "; ") }
