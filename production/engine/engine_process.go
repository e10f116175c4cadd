package engine

import (
	"context"
	"io"
	"math"
	"strings"
	"time"

	"github.com/audiopost/audiopost/production"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp/chain"
	"github.com/audiopost/audiopost/dsp/classify"
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
	// Settings are the production's algorithms as the DSP's settings;
	// a single-track production is processed by Settings.Chain.
	Settings Settings
	// CutStart and CutEnd trim seconds from the input's start and end.
	CutStart, CutEnd float64
	// Headroom is kept below maxpeak, in dB, because some output is encoded
	// lossily and its decoder overshoots the true peak it was given.
	Headroom float64
	// RefineCuts, when set, adjusts the detected cuts before they are
	// made: the filler words of a speech recognition (chain.Cutting.Refine).
	RefineCuts func(classify.Cuts) classify.Cuts
	// TempDir is where the processor may make temporary files (the
	// Engine's TempDir).
	TempDir string
	// SpillBytes bounds the temporary file in which the processor may
	// keep the processed signal between its passes (chain.Config's
	// SpillBytes; negative: none): what Limits.Disk leaves beside the
	// planned decodes and encoders' files. The file only saves time, so
	// it gives way to them rather than counting in the plan.
	SpillBytes int64
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
	// Again, when not nil, processes the input once more for a job that
	// differs only in Headroom (the lossy verification's), reusing what
	// does not depend on it, such as the analysis of the input. The Engine
	// calls it instead of Process after the first render has been read
	// to its end; without it, it calls Process again. A Processor that
	// changes another's Processed (its Source, say) must change what
	// Again returns alike, or set Again to nil.
	Again func(ctx context.Context, job ProcessJob) (*Processed, error)
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
	// Cuts are the cuts detected and the trims, whatever the cut mode.
	Cuts []production.CutSegment
	// OutputNoise and OutputSNR are the noise level and SNR of the
	// processed output (not measured: nil).
	OutputNoise, OutputSNR *production.Level
	// Warnings name every setting the processor could not honour.
	Warnings []string
	// Tracks are a multitrack production's per-track statistics; with
	// them the output levels become the master's.
	Tracks []production.TrackStatistics
}

// ChainProcessor is the Processor of package dsp/chain: filtering,
// leveler, compressor, loudness normalization and true-peak limiting,
// each pass re-reading the input.
type ChainProcessor struct{}

// Process implements Processor.
func (ChainProcessor) Process(ctx context.Context, open audio.Opener, job ProcessJob) (*Processed, error) {
	cfg := job.Settings.Chain
	cfg.Headroom, cfg.TempDir, cfg.SpillBytes = job.Headroom, job.TempDir, job.SpillBytes
	cfg.Cutting.Detect.TrimStart, cfg.Cutting.Detect.TrimEnd = job.CutStart, job.CutEnd
	if cfg.Cutting.Detect.Filler {
		cfg.Cutting.Refine = job.RefineCuts
	}
	pl, err := chain.New(ctx, open, cfg)
	if err != nil {
		return nil, err
	}
	return chainProcessed(pl, open), nil
}

// chainProcessed is the Processed of a chain pipeline. Its Again renders
// with another headroom from the same analysis of the input.
func chainProcessed(pl *chain.Pipeline, open audio.Opener) *Processed {
	rate := pl.Format().SampleRate
	var cuts []production.Cut
	for _, c := range pl.Stats().Applied {
		cuts = append(cuts, production.Cut{Start: frameSeconds(c.Start, rate), Stop: frameSeconds(c.End, rate)})
	}
	return &Processed{
		Source:   &closeAtEOF{Source: pl, c: pl},
		Cuts:     cuts,
		Stats:    func() ProcessStats { return chainStats(pl.Stats(), rate) },
		Measured: func() loudness.Result { return pl.Stats().Output },
		Again: func(ctx context.Context, job ProcessJob) (*Processed, error) {
			again, err := pl.WithHeadroom(ctx, open, job.Headroom)
			if err != nil {
				return nil, err
			}
			return chainProcessed(again, open), nil
		},
	}
}

// ceiling is the true-peak ceiling the processed audio of job is limited
// to: maxpeak, less the lossy headroom.
func (job ProcessJob) ceiling() float64 { return job.Settings.Chain.MaxTruePeak - job.Headroom }

func frameSeconds(f int64, rate int) float64 { return float64(f) / float64(rate) }

func frameTime(f int64, rate int) time.Duration {
	return time.Duration(float64(f) / float64(rate) * float64(time.Second))
}

func chainStats(s chain.Stats, rate int) ProcessStats {
	in := s.Input
	ps := ProcessStats{
		Input: production.InputLevels{
			LRA: production.LU(in.LRA), NoiseLevel: production.DB(in.NoiseLevel), MaxMomentary: production.LUFS(in.MaxMomentary),
			SignalLevel: production.DB(in.SignalLevel), SNR: production.DB(in.SNR), MaxShortterm: production.LUFS(in.MaxShortTerm), Loudness: production.LUFS(in.Integrated),
		},
		GainMin: production.DB(s.GainMinDB), GainMean: production.DB(s.GainMeanDB), GainMax: production.DB(s.GainMaxDB),
		Warnings: s.Warnings, InputSteps: s.InputSteps, OutputSteps: s.OutputSteps,
	}
	if out := s.Output; loudness.Defined(out.NoiseLevel) {
		n, snr := production.DB(out.NoiseLevel), production.DB(out.SNR)
		ps.OutputNoise, ps.OutputSNR = &n, &snr
	}
	for _, c := range s.Cuts {
		ps.Cuts = append(ps.Cuts, production.CutSegment{Reason: c.Reason.String(), Start: frameTime(c.Start, rate), Stop: frameTime(c.End, rate)})
	}
	for _, r := range s.Restoration {
		seg := production.NoiseHumSegment{Start: frameTime(r.Start, rate), Stop: frameTime(r.End, rate)}
		if r.ReductionDB > 0 {
			v := r.ReductionDB
			seg.Denoise = &v
		}
		if r.DehumHz > 0 {
			v := r.DehumHz
			seg.Dehum = &v
		}
		ps.NoiseHum = append(ps.NoiseHum, seg)
	}
	for _, seg := range classify.MergeSegments(s.Segments, int64(production.MinMusicSpeechSegment.Seconds()*float64(rate))) {
		ps.MusicSpeech = append(ps.MusicSpeech, production.MusicSpeechSegment{Label: seg.Label.String(),
			Start: frameTime(seg.Start, rate), Stop: frameTime(seg.End, rate)})
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
			NoiseLevel: ps.OutputNoise, SNR: ps.OutputSNR,
		},
	}
	if ps.Tracks != nil {
		// A multitrack production reports its tracks and the master.
		o := lv.Output
		return production.Statistics{Tracks: ps.Tracks, Master: &production.MasterStatistics{Levels: production.MasterLevels{
			LRA: o.LRA, MaxMomentary: o.MaxMomentary, Peak: o.Peak, MaxShortterm: o.MaxShortterm, Loudness: o.Loudness,
		}}}, ps
	}
	var ms []production.MusicSpeechSegment
	for _, s := range ps.MusicSpeech {
		if s.Stop-s.Start >= production.MinMusicSpeechSegment {
			ms = append(ms, s)
		}
	}
	return production.Statistics{Levels: lv, MusicSpeech: ms, NoiseHumReduction: ps.NoiseHum, Cuts: ps.Cuts}, ps
}

func round2(x float64) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	return math.Round(x*100) / 100
}

func joinWarnings(w []string) string { return strings.Join(w, "; ") }
