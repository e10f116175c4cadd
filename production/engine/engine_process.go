package engine

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/audiopost/audiopost/dsp"
	"github.com/audiopost/audiopost/production"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp/chain"
	"github.com/audiopost/audiopost/dsp/classify"
	"github.com/audiopost/audiopost/dsp/mixdown"
	"github.com/audiopost/audiopost/dsp/spectral"
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
	cfg := ChainConfig(job.Algorithms)
	cfg.Headroom, cfg.TempDir = job.Headroom, job.TempDir
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

// The API's choices as the DSP's types.
var (
	chainFilters = map[string]dsp.FilterMethod{"hipfilter": dsp.FilterHighPass, "autoeq": dsp.FilterAutoEQ,
		"bwe": dsp.FilterBWE, "studiovoice": dsp.FilterStudioVoice}
	chainCompressions = map[string]chain.Compression{"auto": chain.CompressionAuto, "off": chain.CompressionOff,
		"soft": chain.CompressionSoft, "medium": chain.CompressionMedium, "hard": chain.CompressionHard}
	classifierModes = map[string]classify.Mode{"on": classify.Auto, "speech": classify.SpeechOnly, "music": classify.MusicOnly}
	denoiseMethods  = map[string]spectral.Method{"classic": spectral.Classic, "static": spectral.Static,
		"dynamic": spectral.Dynamic, "speech_isolation": spectral.SpeechIsolation}
	cutModes = map[string]classify.CutMode{"apply_cuts": classify.ApplyCuts,
		"set_cuts_to_silence": classify.SilenceCuts, "export_uncut_audio": classify.ExportCuts}
	cutters = []string{"silence_cutter", "filler_cutter", "cough_cutter", "music_cutter"}
)

// ChainConfig maps single-track algorithms onto the chain's settings: the
// one place where the API's keys meet the DSP. A new key is a row of the
// algorithm table and a line here.
func ChainConfig(a production.AlgorithmView) chain.Config {
	c := chain.DefaultConfig()
	c.Filter = dsp.FilterOff
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
	c.Classifier = classifierModes[a.String("msclassifier")]
	if a.Bool("denoise") {
		c.Restoration = restoration(a)
	}
	c.Cutting = cutting(a)
	return c
}

// restoration maps the denoise family. The amounts keep the API's
// conventions, which spectral.Settings shares: 0 automatic (full for
// deverb), -1 off, 3..100 a cap in dB. Dehum runs with every method, not
// only classic: hum is as unwanted under the other methods.
func restoration(a production.AlgorithmView) *chain.Restoration {
	settings, dehum := denoiseSettings(a)
	method := settings.Method
	r := &chain.Restoration{Settings: settings, Dehum: dehum}
	for _, sg := range a.Segments("segments") {
		s := settings
		switch sg.DenoiseMethod {
		case "speech":
			// The production's method when it models speech.
			if method == spectral.Classic {
				s.Method = spectral.Static
			}
		case "music":
			s.Method = spectral.Music
		case "classic":
			s.Method = spectral.Classic
		case "off":
			s.Method = spectral.Off
		}
		for _, v := range []struct {
			set *int
			dst *float64
		}{{sg.DenoiseAmount, &s.ReductionDB}, {sg.DeverbAmount, &s.DeverbDB}, {sg.DebreathAmount, &s.DebreathDB}} {
			if v.set != nil {
				*v.dst = float64(*v.set)
			}
		}
		r.Segments = append(r.Segments, chain.RestorationSegment{Start: sg.Start, Settings: s})
	}
	return r
}

// denoiseSettings maps the keys a single-track production and a
// multitrack track share: method, amounts and dehum.
func denoiseSettings(a production.AlgorithmView) (spectral.Settings, *spectral.DehumOptions) {
	method := denoiseMethods[a.String("denoisemethod")]
	settings := spectral.Settings{Method: method, ReductionDB: float64(a.Int("denoiseamount")),
		DeverbDB: float64(a.Int("deverbamount")), DebreathDB: float64(a.Int("debreathamount"))}
	if method == spectral.Classic {
		settings.DeverbDB = -1 // classic has no reverb reduction (0, "full", is tolerated there)
	}
	var dehum *spectral.DehumOptions
	if amount := a.Int("dehumamount"); amount != -1 {
		dehum = &spectral.DehumOptions{Base: a.Int("dehum"), ReductionDB: float64(amount)}
	}
	return settings, dehum
}

// MasterConfig maps a multitrack production's master algorithms onto the
// chain that finishes the mix: loudness control, normalisation and the
// true-peak limit. Filtering, leveling and compression happened per track
// in the mixdown, so they are off here.
func MasterConfig(a production.AlgorithmView) chain.Config {
	c := chain.DefaultConfig()
	c.Filter = dsp.FilterOff
	c.Leveler = false
	c.SpeechCompression, c.MusicCompression = chain.CompressionOff, chain.CompressionOff
	c.Normalize = true
	c.TargetLUFS = float64(a.Int("loudnesstarget"))
	c.Method = loudness.Method(a.String("loudnessmethod"))
	c.DualMono = a.Bool("dualmono")
	c.MaxLRA = float64(a.Int("maxlra"))
	c.MaxShortTerm = float64(a.Int("maxs"))
	c.MaxMomentary = float64(a.Int("maxm"))
	c.MaxTruePeak = a.Float("maxpeak")
	return c
}

// MixdownSettings maps a multitrack production's master algorithms and
// its tracks (the multitrack inputs, in order, with the opener of each)
// onto the mixdown's settings.
func MixdownSettings(master production.AlgorithmView, tracks []production.MultiInputFile, open []audio.Opener) (mixdown.Settings, error) {
	s := mixdown.Settings{Leveler: master.Bool("leveler"), Gate: master.Bool("gate"), Crossgate: master.Bool("crossgate")}
	for i, m := range tracks {
		a := m.Algorithms.In(production.ScopeTrack)
		t := mixdown.DefaultTrack(open[i])
		t.Offset = time.Duration(m.Offset * float64(time.Second))
		t.Filter = dsp.FilterOff
		if a.Bool("hipfilter") {
			t.Filter = chainFilters[a.String("filtermethod")]
		}
		t.Classifier = classifierModes[a.String("msclassifier")]
		if a.Bool("denoise") {
			settings, dehum := denoiseSettings(a)
			t.Restoration = &mixdown.Restoration{Settings: settings, Dehum: dehum}
		}
		var err error
		if t.Role, err = mixdown.ParseRole(a.String("backforeground")); err != nil {
			return s, fmt.Errorf("track %s: %w", m.ID, err)
		}
		if t.Pan, err = mixdown.ParsePan(a.String("pan")); err != nil {
			return s, fmt.Errorf("track %s: %w", m.ID, err)
		}
		t.BackgroundGainDB = float64(a.Int("backgroundgain"))
		t.FadeTime = time.Duration(a.Int("ducking_fadetime")) * time.Millisecond
		t.GainDB = float64(a.Int("gain"))
		t.LevelerStrength = float64(a.Int("levelerstrength")) / 100
		t.LoopTrim = a.Bool("loop_trim")
		if c := a.String("compressor"); c != "off" {
			t.Compressor = dsp.CompressorKind(c) // auto, soft, medium, hard: the same names
		}
		s.Tracks = append(s.Tracks, t)
	}
	return s, nil
}

// cutting maps the cutters. cutter on takes every cutter's own setting
// (silences and fillers by default); a cutter switched on explicitly while
// cutter is unset cuts alone.
func cutting(a production.AlgorithmView) chain.Cutting {
	on := func(k string) bool { return a.Bool(k) }
	if !a.Bool("cutter") {
		on = func(k string) bool { return a.Set(k) && a.Bool(k) }
	}
	c := chain.Cutting{Mode: cutModes[a.String("cut_mode")], Fade: float64(a.Int("fadetime")) / 1000}
	c.Detect.Silence, c.Detect.Filler, c.Detect.Cough, c.Detect.Music = on(cutters[0]), on(cutters[1]), on(cutters[2]), on(cutters[3])
	return c
}

// ceiling is the true-peak ceiling the processed audio of job is limited
// to: maxpeak, less the lossy headroom.
func (job ProcessJob) ceiling() float64 { return job.Algorithms.Float("maxpeak") - job.Headroom }

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
