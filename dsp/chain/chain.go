package chain

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp"
	"github.com/audiopost/audiopost/dsp/classify"
	"github.com/audiopost/audiopost/dsp/spectral"
	"github.com/audiopost/audiopost/loudness"
)

// Limits of the loudness control loops.
const (
	maxConstraintPasses = 4    // processing passes to meet the loudness limits
	maxVerifyPasses     = 4    // passes to correct for the limiter's loudness loss
	limiterLossTrigger  = 0.05 // LU of estimated loss that asks for a check
)

// Pipeline is the processed single-track programme: an audio.Source that
// yields the final output (the caller writes it to encoders) and the
// statistics of the run. The analysis and loudness passes have already run
// when New returns; the output is rendered while it is read.
type Pipeline struct {
	ctx    context.Context
	stages *stages // of the final render
	cfg    Config
	format audio.Format
	src    audio.Source
	closer io.Closer
	meter  *loudness.Meter
	view   audio.Buffer
	stats  Stats
	gainDB float64
	done   bool
	err    error

	in    *dsp.Analysis
	pr    *processing
	spans []audio.Span // speech in input frames
	// outSpans is speech in output time: spans moved by applied cuts.
	outSpans []audio.Span
	// cheapSkip: reading up to the middle of the input costs little next
	// to processing it (see splitAt).
	cheapSkip bool
}

// processing holds what the analysis decided for the chain.
type processing struct {
	an        *dsp.Analysis
	cfg       Config
	leveler   dsp.GainPlan // the leveling the user asked for
	full      dsp.GainPlan // full leveling: what the compressor sees
	rest      dsp.GainPlan // leveler minus full, applied after the compressor
	comp      Compression  // resolved speech compressor
	compMusic Compression  // resolved music compressor
	compRef   float64
	control   []float64 // loudness-control plan (range, short-term, momentary), dB per block
	// hops are the K-weighted sums of the 10 ms hops of the latest
	// measurement (loudness.Options.OnHop) and hopPeaks their sample
	// peaks, kept where predict and the limiter model may use them.
	hops     []hopLevel
	hopPeaks []hopLevel // squared
	settings Settings
	profile  *spectral.Profile  // noise profile for the restoration stage
	den      *spectral.Denoiser // the restoration node of the latest build
	// applied are the cuts the output leaves out, silenced those it
	// silences, in input frames.
	applied, silenced classify.Cuts
	// spill keeps the output of core for the passes after the first.
	spill *spill
}

// New analyses the input, runs the loudness passes and returns the
// pipeline ready to render. ctx cancels every pass between blocks and the
// final render.
func New(ctx context.Context, open audio.Opener, cfg Config) (*Pipeline, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p := &Pipeline{ctx: ctx, cfg: cfg}

	// Pass 1: analysis of the input. Its source shows what kind of input
	// this is.
	first := func(ctx context.Context) (audio.Source, error) {
		s, err := open(ctx)
		if err == nil {
			p.cheapSkip = cheapToSkip(s)
		}
		return s, err
	}
	var an *dsp.Analysis
	err := runPass(ctx, cfg, first, nil, func(f audio.Format, frames int64, st *stages) ([]audio.Sink, error) {
		p.format = f
		// Without cutting the features only the cutters read are dropped
		// after the analysis (DropFeatures below): not kept at all.
		a, err := dsp.NewAnalyzer(f, dsp.AnalyzerOptions{Spectrum: true, Loudness: loudness.Options{DualMono: cfg.DualMono}, Classifier: cfg.Classifier,
			ClassifyApart: st != nil, ClassifyOnly: !cfg.Cutting.active(), Blocks: blocksOf(frames, f.SampleRate)})
		if err != nil {
			return nil, err
		}
		an = nil
		if c := a.Classifier(); c != nil {
			// With two cores the classifier's spectral analysis, the
			// larger half of the pass, runs beside everything else.
			c.Concurrent()
			st.closeAtEnd(c)
			return []audio.Sink{audio.MultiSink(a, c), finisher(func() { an = a.Finish() })}, nil
		}
		return []audio.Sink{a, finisher(func() { an = a.Finish() })}, nil
	})
	if err != nil {
		return nil, fmt.Errorf("analysis pass: %w", err)
	}
	p.in = an
	p.spans = speechSpans(an)
	p.stats.Input = an.Loudness
	p.stats.Segments = an.Classes.Segments
	if !cfg.Cutting.active() {
		an.Classes.DropFeatures() // only the cutters read them
	}
	p.stats.InputSteps = an.Energy

	var profile *spectral.Profile
	if cfg.Restoration != nil {
		if profile, err = p.learnNoise(ctx, open); err != nil {
			return nil, fmt.Errorf("noise profile pass: %w", err)
		}
		p.stats.Hum = profile.Hum
	}
	return p.prepare(ctx, open, profile)
}

// WithHeadroom returns a new pipeline over the same input with
// Config.Headroom set to headroom: what a lossy output that overshot needs
// to be rendered again. It reuses p's analysis of the input (and noise
// profile), so only the loudness passes and the render run again; p is
// not changed and may be closed first.
func (p *Pipeline) WithHeadroom(ctx context.Context, open audio.Opener, headroom float64) (*Pipeline, error) {
	cfg := p.cfg
	cfg.Headroom = headroom
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	q := &Pipeline{ctx: ctx, cfg: cfg, format: p.format, in: p.in, spans: p.spans, cheapSkip: p.cheapSkip}
	q.stats = Stats{Input: p.stats.Input, Segments: p.stats.Segments, InputSteps: p.stats.InputSteps, Hum: p.stats.Hum}
	return q.prepare(ctx, open, p.pr.profile)
}

// prepare plans the processing from the input's analysis (p.in), runs the
// loudness passes and makes the pipeline ready to render.
func (p *Pipeline) prepare(ctx context.Context, input audio.Opener, profile *spectral.Profile) (_ *Pipeline, err error) {
	cfg, an := p.cfg, p.in
	pr := &processing{an: an, cfg: cfg, control: make([]float64, len(an.Energy)), profile: profile, spill: newSpill(cfg)}
	p.pr = pr
	defer func() {
		if err != nil {
			pr.spill.close()
		}
	}()
	open := pr.source(input)
	pr.plan()
	p.outSpans = p.spans
	if cfg.Cutting.active() {
		cuts := an.Classes.Cuts(cfg.Cutting.Detect)
		if d := cfg.Cutting.Detect; (d.Silence || d.Filler || d.Cough || d.Music) && cuts.Removed() > an.Frames()-int64(p.format.SampleRate) {
			// Nothing the classifier calls foreground would be left: a
			// recording of tones or noise, not of speech. Cutting it all
			// helps nobody; keep the trims only.
			cuts = an.Classes.Cuts(classify.CutOptions{TrimStart: d.TrimStart, TrimEnd: d.TrimEnd})
			p.stats.Warnings = append(p.stats.Warnings, "the cutters found nothing to keep (no speech or music); nothing was cut")
		}
		if cfg.Cutting.Refine != nil {
			cuts = cfg.Cutting.Refine(cuts)
			if err = cuts.Validate(); err != nil {
				return nil, fmt.Errorf("refined cuts: %w", err)
			}
		}
		p.stats.Cuts = cuts
		// Trims are cut whatever the mode: cut_start and cut_end ask for
		// a shorter output, not for a cut list.
		for _, c := range cuts {
			switch {
			case cfg.Cutting.Mode == classify.ApplyCuts || c.Reason&classify.CutTrim != 0:
				pr.applied = append(pr.applied, c)
			case cfg.Cutting.Mode == classify.SilenceCuts:
				pr.silenced = append(pr.silenced, c)
			}
		}
		p.stats.Applied = pr.applied
		if len(pr.applied) > 0 {
			if p.outSpans, err = cutSpans(p.spans, pr.applied, p.format.SampleRate); err != nil {
				return nil, err
			}
		}
	}

	// Pass 2 (repeated while a limit needs more control): measure the
	// processed signal before normalization.
	var proc *dsp.Analysis
	for iter := 0; ; iter++ {
		proc, err = p.measure(ctx, open, pr)
		if err != nil {
			return nil, fmt.Errorf("loudness pass: %w", err)
		}
		if iter == maxConstraintPasses-1 || !pr.constrain(proc, p.measured(proc.Loudness)) {
			break
		}
	}
	before := append([]float64(nil), pr.control...)
	if cfg.Leveler && pr.levelPauses(an, proc) {
		// The pauses changed, which the gain statistics and the
		// normalization must see (pauses hardly move the gated loudness,
		// but RMS and dialog methods see them). The programme loudness is
		// predicted from the measurement's 10 ms energies to within a
		// thousandth of an LU; the other methods measure again.
		if cfg.Method == loudness.Program && pr.hops != nil {
			proc = pr.predict(proc, before)
		} else if proc, err = p.measure(ctx, open, pr); err != nil {
			return nil, fmt.Errorf("loudness pass: %w", err)
		}
	}

	// Normalization gain, corrected for what the limiter will take off.
	if cfg.Normalize {
		p.gainDB = cfg.TargetLUFS - p.measured(proc.Loudness)
		if math.IsInf(p.gainDB, 0) || math.IsNaN(p.gainDB) {
			p.gainDB = 0
			p.stats.Warnings = append(p.stats.Warnings, "input is silent: loudness not normalized")
		}
		// The limiter takes loudness off programmes whose peaks stand far
		// above their loudness, and cuts change what is measured. Without
		// cuts, the programme loudness of the limited output is predicted
		// from the measurement's hops (limiterModel); passes that render
		// the output correct the gain (dsp.FitGain) where the model's
		// correction is too large to trust, where cuts apply, and, for the
		// other methods, where a rougher estimate finds the limiter at
		// work.
		cut := len(pr.applied)+len(pr.silenced) > 0
		first := p.gainDB
		var render bool
		if loud := p.measured(proc.Loudness); !cut && cfg.Method == loudness.Program && first == cfg.TargetLUFS-loud &&
			len(pr.hops) > 0 && len(pr.hopPeaks) == len(pr.hops) {
			p.gainDB = newLimiterModel(pr.hops, pr.hopPeaks, p.format.SampleRate).fit(loud, cfg.TargetLUFS, cfg.ceiling())
			render = p.gainDB-first > modelTrust
		} else {
			render = cut || limiterLoss(proc, p.gainDB, cfg.ceiling()) >= limiterLossTrigger
		}
		if render {
			p.gainDB, err = dsp.FitGain(p.gainDB, cfg.TargetLUFS, maxVerifyPasses, func(g float64) (float64, error) {
				p.gainDB = g
				return p.verify(ctx, open, pr)
			})
			if err != nil {
				return nil, fmt.Errorf("limiter check pass: %w", err)
			}
		}
		// What the limiter took off the speech the gain now makes up
		// everywhere; the pauses, which it never touched, give it back,
		// so the background stays where it was against the speech. Cuts
		// change the loudness too, so only limiting counts.
		if loss := p.gainDB - first; cfg.Leveler && len(pr.applied) == 0 && loss > 0.05 {
			pr.lowerPauses(loss)
		}
	}
	// The processed signal's analysis ends here: the render does not keep
	// its per-block arrays (2.4 MB for three hours) or its hops.
	pr.hops, pr.hopPeaks = nil, nil
	p.gainStats(proc)
	p.stats.Settings = pr.settings
	p.stats.Settings.NormalizationGainDB = p.gainDB
	p.stats.Settings.CeilingDBTP = cfg.ceiling()

	// The final render.
	src, err := open(ctx)
	if err != nil {
		return nil, err
	}
	if c, ok := src.(io.Closer); ok {
		p.closer = c
	}
	p.stages = newStages(ctx, cfg)
	out, err := p.output(src, pr, p.stages)
	if err != nil {
		p.Close()
		return nil, err
	}
	p.src = out
	mo := p.outputMeterOptions(loudness.ModeEBU | loudness.ModeRMS | loudness.ModeLevels)
	// Room for every step, so that recording them allocates nothing.
	p.stats.OutputSteps = make([]float64, 0, len(an.Energy)+1)
	mo.OnStep = func(e float64) { p.stats.OutputSteps = append(p.stats.OutputSteps, e) }
	p.meter, err = loudness.NewMeter(p.format, mo)
	if err != nil {
		p.Close()
		return nil, err
	}
	p.view = make(audio.Buffer, p.format.Channels)
	return p, nil
}

// meterOptions are the options of the meters of the processed signal
// before cuts: dialog loudness over the input's speech, dual mono as
// configured.
func (p *Pipeline) meterOptions(mode loudness.Mode) loudness.Options {
	return loudness.Options{Mode: mode, DualMono: p.cfg.DualMono, Speech: p.spans}
}

// outputMeterOptions are meterOptions for the output, after cuts.
func (p *Pipeline) outputMeterOptions(mode loudness.Mode) loudness.Options {
	o := p.meterOptions(mode)
	o.Speech = p.outSpans
	return o
}

// source is the opener of the passes after the analysis: the spill once
// it holds the processed signal, else the input. A spill whose writing
// pass failed is written again.
func (pr *processing) source(input audio.Opener) audio.Opener {
	return func(ctx context.Context) (audio.Source, error) {
		pr.spill.reset()
		if pr.spill.ready() {
			return pr.spill.open(), nil
		}
		return input(ctx)
	}
}

// learnNoise runs the restoration stage's analysis pass: the noise
// profile, hum and reverberation of the input, learnt from the blocks the
// classifier found free of voice.
func (p *Pipeline) learnNoise(ctx context.Context, open audio.Opener) (*spectral.Profile, error) {
	var prof *spectral.Profile
	err := runPass(ctx, p.cfg, open, nil, func(f audio.Format, _ int64, _ *stages) ([]audio.Sink, error) {
		vad := p.in.Voiced
		if spectral.BlockFrames(f.SampleRate) != p.in.BlockLen {
			vad = nil // another grid: the analyzer estimates activity itself
		}
		a, err := spectral.NewProfiler(f, spectral.ProfilerOptions{VAD: vad, NoRoom: !p.cfg.Restoration.ReducesReverb()})
		if err != nil {
			return nil, err
		}
		return []audio.Sink{a, finisher(func() { prof = a.Finish() })}, nil
	})
	return prof, err
}

// cutSpans moves speech spans to output time: a span keeps what the cuts
// leave of it.
func cutSpans(spans []audio.Span, cuts classify.Cuts, rate int) ([]audio.Span, error) {
	m, err := classify.NewTimeMap(cuts, rate)
	if err != nil {
		return nil, err
	}
	var out []audio.Span
	for _, sp := range spans {
		a, b := m.Frame(sp.Start), m.Frame(sp.End)
		if b <= a {
			continue
		}
		if n := len(out); n > 0 && a <= out[n-1].End {
			out[n-1].End = max(out[n-1].End, b)
			continue
		}
		out = append(out, audio.Span{Start: a, End: b})
	}
	return out, nil
}

// measured is the loudness by the configured method.
func (p *Pipeline) measured(r loudness.Result) float64 {
	v, _ := r.Loudness(p.cfg.Method)
	return v
}

// measureMode is what the loudness passes measure of the processed
// signal.
const measureMode = loudness.ModeM | loudness.ModeS | loudness.ModeI | loudness.ModeLRA | loudness.ModeRMS

// keepsHops reports whether the loudness passes keep the hops: they
// serve predict (leveling) and the limiter model (normalization), both of
// the programme loudness.
func keepsHops(cfg Config) bool {
	return cfg.Method == loudness.Program && (cfg.Leveler || cfg.Normalize)
}

// measureAnalyzer returns the analyzer of a loudness pass over blocks
// blocks from frame offset of the input, which keeps the hops and their
// peaks in *hops and *peaks (nil where keepsHops says no).
func (p *Pipeline) measureAnalyzer(offset int64, blocks int, hops, peaks *[]hopLevel) (*dsp.Analyzer, error) {
	mo := p.meterOptions(measureMode)
	mo.Offset = offset
	o := dsp.AnalyzerOptions{NoClasses: true, Blocks: blocks}
	*hops, *peaks = nil, nil
	if keepsHops(p.cfg) {
		n := (blocks + 1) * loudness.StepHops
		*hops, *peaks = make([]hopLevel, 0, n), make([]hopLevel, 0, n)
		mo.OnHop = func(s float64) { *hops = append(*hops, toHopLevel(s)) }
		o.OnHopPeak = func(pk float64) { *peaks = append(*peaks, toHopLevel(pk*pk)) }
	}
	o.Loudness = mo
	return dsp.NewAnalyzer(p.format, o)
}

// measure runs the processing chain into a level analysis.
func (p *Pipeline) measure(ctx context.Context, open audio.Opener, pr *processing) (res *dsp.Analysis, err error) {
	if split := p.splitAt(); split > 0 {
		res, err = p.measureSplit(ctx, open, pr, split)
	} else {
		err = runPass(ctx, p.cfg, open, pr.build, func(audio.Format, int64, *stages) ([]audio.Sink, error) {
			a, err := p.measureAnalyzer(0, len(p.in.Energy), &pr.hops, &pr.hopPeaks)
			if err != nil {
				return nil, err
			}
			return []audio.Sink{a, finisher(func() { res = a.Finish() })}, nil
		})
	}
	if err != nil {
		return nil, err
	}
	// Voice activity and labels come from the input analysis (the same
	// block grid); the processed signal's own would be skewed by leveling.
	res.Voiced = fitBools(p.in.Voiced, len(res.Energy))
	res.Music = fitBools(p.in.Music, len(res.Energy))
	return res, nil
}

// verify renders gain and limiter and measures the result.
func (p *Pipeline) verify(ctx context.Context, open audio.Opener, pr *processing) (float64, error) {
	var got float64
	err := runPass(ctx, p.cfg, open, func(src audio.Source, st *stages) (audio.Source, error) { return p.output(src, pr, st) },
		func(f audio.Format, _ int64, _ *stages) ([]audio.Sink, error) {
			m, err := loudness.NewMeter(f, p.outputMeterOptions(loudness.ModeI|loudness.ModeRMS))
			if err != nil {
				return nil, err
			}
			return []audio.Sink{m, finisher(func() { got = p.measured(m.Result()) })}, nil
		})
	return got, err
}

// output is the processing chain plus normalization gain, cuts and
// limiter. The gain comes before the cuts, whose fades and silences it
// passes unchanged.
func (p *Pipeline) output(src audio.Source, pr *processing, st *stages) (audio.Source, error) {
	s, err := pr.buildWith(src, st, buildOptions{gainDB: p.gainDB, render: true})
	if err != nil {
		return nil, err
	}
	for _, c := range []struct {
		cuts classify.Cuts
		mode classify.CutMode
	}{{pr.silenced, classify.SilenceCuts}, {pr.applied, classify.ApplyCuts}} {
		if len(c.cuts) == 0 {
			continue
		}
		if s, err = classify.NewCutter(s, c.cuts, classify.CutterOptions{Mode: c.mode, Fade: p.cfg.Cutting.Fade}); err != nil {
			return nil, err
		}
	}
	l, err := dsp.NewLimiter(st.split(s), p.cfg.ceiling())
	if err != nil {
		return nil, err
	}
	// The limiter is the costliest node: a stage of its own, so that the
	// caller's goroutine only meters and encodes.
	return st.split(l), nil
}

// Format implements audio.Source.
func (p *Pipeline) Format() audio.Format { return p.format }

// Read implements audio.Source: it renders the next block of the output.
func (p *Pipeline) Read(dst audio.Buffer) (int, error) {
	if p.err != nil {
		return 0, p.err
	}
	if err := p.ctx.Err(); err != nil {
		p.err = err
		return 0, err
	}
	n, err := p.src.Read(dst)
	if n > 0 {
		if werr := p.meter.Write(dst.SliceInto(p.view, 0, n)); werr != nil {
			p.err = werr
			return 0, werr
		}
		return n, nil
	}
	if errors.Is(err, io.EOF) && !p.done {
		p.done = true
		p.finish()
	}
	if err != nil {
		p.err = err
	}
	return n, err
}

// errClosed is what Read returns after Close.
var errClosed = errors.New("chain: read after Close")

// Close stops the final render's stages and releases the input opened
// for it. Reading after Close is an error.
func (p *Pipeline) Close() error {
	p.stages.close()
	if p.pr != nil {
		p.pr.spill.close()
		// The render's nodes and plans (3.5 MB for three hours) go;
		// WithHeadroom, which may follow, needs only the noise profile.
		p.pr = &processing{profile: p.pr.profile, den: p.pr.den}
		p.src = nil
		if p.err == nil {
			p.err = errClosed
		}
	}
	if p.closer != nil {
		c := p.closer
		p.closer = nil
		return c.Close()
	}
	return nil
}

// Stats returns the statistics. Output levels are complete once the
// output has been read to io.EOF; before that they are -Inf.
func (p *Pipeline) Stats() Stats { return p.stats }

// Frames returns the length of the output in frames: the input's, less
// the cuts it leaves out.
func (p *Pipeline) Frames() int64 { return p.in.Frames() - p.stats.Applied.Removed() }

// Analysis returns the analysis of the input.
func (p *Pipeline) Analysis() *dsp.Analysis { return p.in }

func (p *Pipeline) finish() {
	r := p.meter.Result()
	p.stats.Output = r
	if p.pr.den != nil {
		p.stats.Restoration = p.pr.den.Stats()
	}
	c := p.cfg
	got := p.measured(r)
	w := &p.stats.Warnings
	if c.Normalize && math.Abs(got-c.TargetLUFS) > 0.5 {
		*w = append(*w, fmt.Sprintf("loudness target %g not met: output %.1f by the %s method", c.TargetLUFS, got, c.Method))
	}
	if c.MaxLRA > 0 && r.LRA > c.MaxLRA+1 {
		*w = append(*w, fmt.Sprintf("loudness range limit %g LU not met: output loudness range %.1f LU", c.MaxLRA, r.LRA))
	}
	if c.MaxShortTerm > 0 && r.MaxShortTerm > c.TargetLUFS+c.MaxShortTerm+0.5 {
		*w = append(*w, fmt.Sprintf("short-term limit %g LU not met: short-term loudness reaches %.1f LU above the target", c.MaxShortTerm, r.MaxShortTerm-c.TargetLUFS))
	}
	if c.MaxMomentary > 0 && r.MaxMomentary > c.TargetLUFS+c.MaxMomentary+0.5 {
		*w = append(*w, fmt.Sprintf("momentary limit %g LU not met: momentary loudness reaches %.1f LU above the target", c.MaxMomentary, r.MaxMomentary-c.TargetLUFS))
	}
	if r.TruePeak > c.MaxTruePeak+0.1 {
		*w = append(*w, fmt.Sprintf("true-peak ceiling %.1f dBTP not met: output true peak %.2f dBTP", c.MaxTruePeak, r.TruePeak))
	}
}

// gainStats fills the gain statistics: the level change from input to
// output over voiced blocks (leveler, compressor, control and
// normalization together; the limiter's few dB on peaks are not counted),
// from proc, the analysis of the processed signal before normalization.
func (p *Pipeline) gainStats(proc *dsp.Analysis) {
	var sum float64
	lo, hi := math.Inf(1), math.Inf(-1)
	n := 0
	for i, v := range p.in.Voiced {
		// Blocks near silence (below the -70 LUFS gate) have no meaningful
		// gain: their level is the filters' and the dither's.
		if !v || i >= len(proc.Energy) || p.in.BlockDB(i) < -70 || proc.Energy[i] <= 0 {
			continue
		}
		g := 10*math.Log10(proc.Energy[i]/p.in.Energy[i]) + p.gainDB
		sum += g
		lo, hi = math.Min(lo, g), math.Max(hi, g)
		n++
	}
	if n == 0 {
		lo, hi, sum, n = p.gainDB, p.gainDB, p.gainDB, 1
	}
	p.stats.GainMinDB, p.stats.GainMaxDB, p.stats.GainMeanDB = lo, hi, sum/float64(n)
}

// runPass opens the input, builds the chain over it (build may be nil)
// and copies it into the sinks made by sinks, checking ctx between blocks.
// Sinks that implement finisher are called after the last block.
func runPass(ctx context.Context, cfg Config, open audio.Opener, build func(audio.Source, *stages) (audio.Source, error), sinks func(f audio.Format, frames int64, st *stages) ([]audio.Sink, error)) error {
	src, err := open(ctx)
	if err != nil {
		return err
	}
	if c, ok := src.(io.Closer); ok {
		defer c.Close()
	}
	if err := src.Format().Validate(); err != nil {
		return err
	}
	st := newStages(ctx, cfg)
	defer st.close() // before the input is closed: stages may still read it
	ss, err := sinks(src.Format(), knownFrames(src), st)
	if err != nil {
		return err
	}
	s := src
	if build != nil {
		if s, err = build(src, st); err != nil {
			return err
		}
	}
	var plain []audio.Sink
	var fins []finisher
	for _, k := range ss {
		if f, ok := k.(finisher); ok {
			fins = append(fins, f)
		} else {
			plain = append(plain, k)
		}
	}
	if build != nil {
		// The sinks (meters, analyzers) on the calling goroutine, the
		// chain in the stages upstream.
		s = st.split(s)
	}
	if _, err := audio.Copy(ctx, st.fanOut(plain), s); err != nil {
		return err
	}
	if err := st.drain(); err != nil {
		return err
	}
	for _, f := range fins {
		f()
	}
	return nil
}

// knownFrames is the length of src in frames when its header states it
// (audio.Decoder's Info), else -1.
func knownFrames(src audio.Source) int64 {
	if d, ok := src.(interface{ Info() audio.Info }); ok {
		if n := d.Info().Frames; n > 0 {
			return n
		}
	}
	return -1
}

// blocksOf is AnalyzerOptions.Blocks for a stream of frames frames (-1 if
// unknown), so that the analysis arrays are not grown by doubling, which
// for three hours leaves megabytes of garbage. A header's claim beyond a
// day is not believed.
func blocksOf(frames int64, rate int) int {
	const day = 24 * 3600
	if frames <= 0 || frames > day*int64(rate) {
		return 0
	}
	return int(frames / int64(loudness.StepFrames(rate)))
}

// finisher is a pseudo-sink: a function runPass calls after the last block.
type finisher func()

func (finisher) Write(audio.Buffer) error { return nil }

func fitBools(b []bool, n int) []bool {
	out := make([]bool, n)
	copy(out, b)
	return out
}

// speechSpans turns the voiced speech blocks into the meter's spans.
func speechSpans(an *dsp.Analysis) []audio.Span {
	var out []audio.Span
	blk := int64(an.BlockLen)
	for i := 0; i < len(an.Voiced); {
		if !an.Voiced[i] || an.Music[i] {
			i++
			continue
		}
		j := i
		for j < len(an.Voiced) && an.Voiced[j] && !an.Music[j] {
			j++
		}
		out = append(out, audio.Span{Start: int64(i) * blk, End: int64(j) * blk})
		i = j
	}
	return out
}

// limiterLoss estimates, in LU, how much the limiter will lower the
// integrated loudness at a normalization gain: blocks whose peak (plus a
// true-peak allowance) would exceed the ceiling lose part of their energy
// for the time the gain is reduced (about a fifth of a block per peak).
func limiterLoss(a *dsp.Analysis, gainDB, ceiling float64) float64 {
	g := math.Pow(10, gainDB/10)
	before := make([]float64, len(a.Energy))
	after := make([]float64, len(a.Energy))
	any := false
	for i, e := range a.Energy {
		before[i] = e * g
		after[i] = before[i]
		over := 20*math.Log10(float64(a.Peak[i])) + gainDB + 0.5 - ceiling
		if over > 0 {
			after[i] *= 1 - 0.2*(1-math.Pow(10, -over/10))
			any = true
		}
	}
	if !any {
		return 0
	}
	return loudness.IntegratedFromSteps(before) - loudness.IntegratedFromSteps(after)
}
