package engine

import (
	"context"
	"io"
	"math"
	"strings"

	"github.com/audiopost/audiopost/production"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp/chain"
	"github.com/audiopost/audiopost/loudness"
)

// Processor is the processing step of the pipeline (analysis, processing
// chain, loudness normalization): it turns the decoded input into the
// processed signal. The Engine reads Processed.Source exactly once, to its
// end, feeding every encoder from that single pass.
type Processor interface {
	Process(ctx context.Context, open audio.Opener, job ProcessJob) (*Processed, error)
}

// ProcessJob is what a Processor gets to know about the production.
type ProcessJob struct {
	// Algorithms are the single-track algorithms.
	Algorithms production.AlgorithmView
	// Headroom is kept below maxpeak, in dB, because some output is encoded
	// lossily and its decoder overshoots the true peak it was given.
	Headroom float64
}

// Processed is the result of a Processor.
type Processed struct {
	// Source yields the processed audio, as many frames as the input
	// minus Cuts.
	Source audio.Source
	// Cuts are the removed ranges of the input, in input seconds.
	Cuts []production.Cut
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
	Input                      production.InputLevels
	GainMin, GainMean, GainMax production.Level
	MusicSpeech                []production.MusicSpeechSegment
	NoiseHum                   []production.NoiseHumSegment
	// InputSteps and OutputSteps are the 100 ms loudness steps of input
	// and processed output, for the loudness chart; nil when unknown.
	InputSteps, OutputSteps []float64
	// Warnings name every setting the processor could not honour.
	Warnings []string
}

// ChainProcessor is the Processor of package dsp/chain: filtering,
// leveler, compressor, loudness normalization and true-peak limiting,
// each pass re-reading the input.
type ChainProcessor struct{}

// Process implements Processor.
func (ChainProcessor) Process(ctx context.Context, open audio.Opener, job ProcessJob) (*Processed, error) {
	cfg := ChainConfig(job.Algorithms)
	cfg.Headroom = job.Headroom
	pl, err := chain.New(ctx, open, cfg)
	if err != nil {
		return nil, err
	}
	return &Processed{
		Source:   &closeAtEOF{Source: pl, c: pl},
		Stats:    func() ProcessStats { return chainStats(pl.Stats()) },
		Measured: func() loudness.Result { return pl.Stats().Output },
	}, nil
}

// The API's choices as the chain's types.
var (
	chainFilters = map[string]chain.FilterMethod{"hipfilter": chain.FilterHighPass, "autoeq": chain.FilterAutoEQ,
		"bwe": chain.FilterBWE, "studiovoice": chain.FilterStudioVoice}
	chainCompressions = map[string]chain.Compression{"auto": chain.CompressionAuto, "off": chain.CompressionOff,
		"soft": chain.CompressionSoft, "medium": chain.CompressionMedium, "hard": chain.CompressionHard}
)

// ChainConfig maps single-track algorithms onto the chain's settings: the
// one place where the API's keys meet the DSP. A new key is a row of the
// algorithm table and a line here.
func ChainConfig(a production.AlgorithmView) chain.Config {
	c := chain.DefaultConfig()
	c.Filter = chain.FilterOff
	if a.Bool("hipfilter") {
		c.Filter = chainFilters[a.String("filtermethod")]
	}
	c.Leveler = a.Bool("leveler")
	c.SpeechStrength = float64(a.Int("levelerstrength_speech")) / 100
	c.MusicStrength = float64(a.Int("levelerstrength")) / 200
	if a.Set("levelerstrength_music") {
		c.MusicStrength = float64(a.Int("levelerstrength_music")) / 100
	}
	c.MusicGainDB = float64(a.Int("musicgain"))
	c.SpeechCompression = chainCompressions[a.String("compressor_speech")]
	c.MusicCompression = chainCompressions[a.String("compressor_music")]
	c.Normalize = a.Bool("normloudness")
	c.TargetLUFS = float64(a.Int("loudnesstarget"))
	c.Method = loudness.Method(a.String("loudnessmethod"))
	c.DualMono = a.Bool("dualmono")
	c.MaxLRA = float64(a.Int("maxlra"))
	c.MaxShortTerm = float64(a.Int("maxs"))
	c.MaxMomentary = float64(a.Int("maxm"))
	c.MaxTruePeak = a.Float("maxpeak")
	return c
}

// ceiling is the true-peak ceiling the processed audio of job is limited
// to: maxpeak, less the lossy headroom.
func (job ProcessJob) ceiling() float64 { return job.Algorithms.Float("maxpeak") - job.Headroom }

func chainStats(s chain.Stats) ProcessStats {
	in := s.Input
	ps := ProcessStats{
		Input: production.InputLevels{
			LRA: production.LU(in.LRA), NoiseLevel: production.DB(in.NoiseLevel), MaxMomentary: production.LUFS(in.MaxMomentary),
			SignalLevel: production.DB(in.SignalLevel), SNR: production.DB(in.SNR), MaxShortterm: production.LUFS(in.MaxShortTerm), Loudness: production.LUFS(in.Integrated),
		},
		GainMin: production.DB(s.GainMinDB), GainMean: production.DB(s.GainMeanDB), GainMax: production.DB(s.GainMaxDB),
		Warnings: s.Warnings, InputSteps: s.InputSteps, OutputSteps: s.OutputSteps,
	}
	for _, seg := range s.Segments {
		label := "speech"
		if seg.Music {
			label = "music"
		}
		ps.MusicSpeech = append(ps.MusicSpeech, production.MusicSpeechSegment{Label: label, Start: seg.Start, Stop: seg.End})
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
func (pr *Processed) statistics(out loudness.Result, method string) (production.Statistics, ProcessStats) {
	var ps ProcessStats
	if pr.Stats != nil {
		ps = pr.Stats()
	}
	loud := production.LUFS(out.Integrated)
	if method == "rms" {
		loud = production.DB(out.RMS)
	} else if method == "dialog" {
		if v, err := out.Loudness(loudness.Dialog); err == nil {
			loud = production.LUFS(v)
		}
	}
	lv := &production.Levels{
		Input: ps.Input,
		Output: production.OutputLevels{
			LRA: production.LU(out.LRA), MaxShortterm: production.LUFS(out.MaxShortTerm),
			MaxMomentary: production.LUFS(out.MaxMomentary), Peak: production.DBTP(out.TruePeak),
			Loudness: loud, GainMin: ps.GainMin, GainMean: ps.GainMean, GainMax: ps.GainMax,
		},
	}
	var ms []production.MusicSpeechSegment
	for _, s := range ps.MusicSpeech {
		if s.Stop-s.Start >= production.MinMusicSpeechSegment {
			ms = append(ms, s)
		}
	}
	return production.Statistics{Levels: lv, MusicSpeech: ms, NoiseHumReduction: ps.NoiseHum}, ps
}

func round2(x float64) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	return math.Round(x*100) / 100
}

// lossyOutputs reports whether any output of p is encoded lossily.
func lossyOutputs(p *production.Production) bool {
	for _, o := range p.OutputFiles {
		f, ok := production.LookupFormat(o.Format)
		if ok && (f.Lossy() || f.Type == production.TypeVideo) {
			return true
		}
	}
	return false
}

func joinWarnings(w []string) string { return strings.Join(w, "; ") }
