package chain

import (
	"math"

	"github.com/audiopost/audiopost/audio"
	"github.com/audiopost/audiopost/dsp"
	"github.com/audiopost/audiopost/dsp/spectral"
	"github.com/audiopost/audiopost/loudness"
)

// plan decides the leveler curve and the compressors from the analysis.
func (pr *processing) plan() {
	c, an := pr.cfg, pr.an
	// The compressor works on fully leveled speech (so it shapes the
	// dynamics within phrases, never the balance between speakers, which
	// is the leveler's job alone); the difference to the leveling the user
	// asked for is applied after it. Plans are constant within phrases, so
	// moving gain across the compressor this way is exact up to the
	// compressor's own action.
	pr.full = dsp.LevelerPlan(an, dsp.LevelerOptions{Strength: 1, MusicStrength: 1})
	user := dsp.GainPlan{BlockLen: an.BlockLen, DB: make([]float64, len(an.Energy))}
	if c.Leveler {
		user = dsp.LevelerPlan(an, dsp.LevelerOptions{
			Strength: c.SpeechStrength, MusicStrength: c.MusicStrength, MusicGainDB: c.MusicGainDB,
		})
	} else {
		for i, m := range an.Music {
			if m {
				user.DB[i] = c.MusicGainDB // the music gain applies even without leveling
			}
		}
	}
	pr.leveler = user
	pr.rest = dsp.GainPlan{BlockLen: an.BlockLen, DB: make([]float64, len(user.DB))}
	for i := range user.DB {
		pr.rest.DB[i] = user.DB[i] - pr.full.DB[i]
	}
	pr.comp = c.SpeechCompression
	if pr.comp == CompressionAuto {
		switch dsp.AutoCompressor(an, pr.full) {
		case dsp.Soft:
			pr.comp = CompressionSoft
		case dsp.Medium:
			pr.comp = CompressionMedium
		default:
			pr.comp = CompressionHard
		}
	}
	pr.compMusic = c.MusicCompression
	if pr.compMusic == CompressionAuto {
		pr.compMusic = CompressionSoft
	}
	// The presets' reference: the speech RMS level after the leveler.
	var s float64
	n := 0
	for i, v := range an.Voiced {
		if v && !an.Music[i] {
			g := 0.0
			if i < len(pr.full.DB) {
				g = pr.full.DB[i]
			}
			s += an.Raw[i] * math.Pow(10, g/10)
			n++
		}
	}
	pr.compRef = an.SpeechRMS()
	if n > 0 && s > 0 {
		pr.compRef = 10 * math.Log10(s/float64(n))
	}
	pr.settings = Settings{Filter: c.Filter, SpeechCompression: pr.comp, MusicCompression: pr.compMusic}
	if c.Filter != dsp.FilterOff {
		pr.settings.CornerHz = dsp.HighPassCorner(an)
	}
	switch c.Filter {
	case dsp.FilterAutoEQ, dsp.FilterStudioVoice:
		pr.settings.EQBands = len(dsp.AutoEQBands(an))
	case dsp.FilterBWE:
		if an.BandLimited() {
			pr.settings.BWECutoffHz = an.Bandwidth()
		}
	}
}

func compParams(c Compression, ref float64) (dsp.CompressorParams, bool, error) {
	if c == CompressionOff {
		return dsp.Off, false, nil
	}
	p, err := dsp.CompressorPreset(c.kind(), ref)
	return p, true, err
}

// build wraps src in the processing chain: filter, leveler, compressor,
// loudness control.
func (pr *processing) build(src audio.Source, st *stages) (audio.Source, error) {
	return pr.buildWith(src, st, buildOptions{})
}

// buildOptions say where a chain is built and for which pass.
type buildOptions struct {
	// gainDB is more gain on the loudness control: the render's
	// normalization gain rides on the control plan's node, which scales
	// every sample anyway, instead of a node of its own that would read
	// and write the whole signal once more.
	gainDB float64
	// start is the frame of the input that src begins at (a pass split
	// in time, see measureSplit).
	start int64
	// render: the chain feeds the limiter, not a meter (see core).
	render bool
}

// buildWith is build as o says.
func (pr *processing) buildWith(src audio.Source, st *stages, o buildOptions) (audio.Source, error) {
	gainDB, start := o.gainDB, o.start
	s := src
	if _, ok := src.(*spillReader); !ok {
		var err error
		if s, err = pr.core(src, st, o); err != nil {
			return nil, err
		}
		s = pr.spill.tee(s, knownFrames(src))
	}
	db := pr.control
	switch {
	case gainDB != 0 && len(pr.control) > 0:
		db = make([]float64, len(pr.control))
		for i, c := range pr.control {
			db[i] = c + gainDB
		}
	case gainDB != 0:
		return dsp.NewGain(s, gainDB)
	case !nonZero(pr.control):
		return s, nil
	}
	g, err := dsp.NewPlanGain(s, dsp.GainPlan{BlockLen: pr.an.BlockLen, DB: db})
	if err != nil {
		return nil, err
	}
	g.StartAt(start)
	return g, nil
}

// core is the processing before the loudness control: filter,
// restoration, leveler and compressors, which the loudness passes do not
// change (see spill).
func (pr *processing) core(src audio.Source, st *stages, o buildOptions) (audio.Source, error) {
	c, an, start := pr.cfg, pr.an, o.start
	var err error
	s := src
	if c.Filter != dsp.FilterOff {
		if s, err = dsp.NewFilter(s, an, c.Filter); err != nil {
			return nil, err
		}
		// A render's stages are balanced with the filter beside the
		// compressor, [decoder, filter, compressor] | [limiter] |
		// [meters, encoders]: one hand-off fewer than with a stage for
		// the filter made the render 0.159 -> 0.154 s on five minutes of
		// speech, 12 ms less CPU, in alternating runs. A loudness pass,
		// whose last stage is the analyzer, and the denoiser, which
		// needs a core to itself, keep the filter's stage.
		if !o.render || c.Restoration != nil {
			s = st.split(s)
		}
	}
	if r := c.Restoration; r != nil {
		d, err := spectral.NewDenoiser(s, pr.denoiserOptions(r, s.Format().SampleRate))
		if err != nil {
			return nil, err
		}
		pr.den = d
		s = st.split(d)
	}
	sp, onS, err := compParams(pr.comp, pr.compRef)
	if err != nil {
		return nil, err
	}
	mp, onM, err := compParams(pr.compMusic, pr.compRef)
	if err != nil {
		return nil, err
	}
	hasMusic := false
	for _, m := range an.Music {
		hasMusic = hasMusic || m
	}
	compress := onS || (hasMusic && onM)
	if compress && nonZero(pr.full.DB) {
		g, err := dsp.NewPlanGain(s, pr.full)
		if err != nil {
			return nil, err
		}
		g.StartAt(start)
		s = g
	}
	var comp *dsp.Compressor
	switch {
	case hasMusic && (onS || onM) && (sp != mp):
		comp, err = dsp.NewSpeechMusicCompressor(s, an, sp, mp)
	case onS:
		comp, err = dsp.NewCompressor(s, sp)
	case hasMusic && onM:
		comp, err = dsp.NewCompressor(s, mp)
	}
	if err != nil {
		return nil, err
	}
	if comp != nil {
		comp.StartAt(start)
		s = comp
	}
	after := pr.leveler
	if compress {
		after = pr.rest
	}
	if nonZero(after.DB) {
		g, err := dsp.NewPlanGain(s, after)
		if err != nil {
			return nil, err
		}
		g.StartAt(start)
		return g, nil
	}
	return s, nil
}

// denoiserOptions turns the restoration settings into the node's options.
func (pr *processing) denoiserOptions(r *spectral.Restoration, rate int) spectral.DenoiserOptions {
	o := spectral.DenoiserOptions{Settings: r.Settings, Profile: pr.profile}
	for _, sg := range r.Segments {
		o.Segments = append(o.Segments, spectral.Segment{Start: int64(math.Round(sg.Start * float64(rate))), Settings: sg.Settings})
	}
	if r.Dehum != nil {
		d := *r.Dehum
		d.Profile = pr.profile
		o.Dehum = &d
	}
	return o
}

func nonZero(x []float64) bool {
	for _, v := range x {
		if v != 0 {
			return true
		}
	}
	return false
}

// constrain checks the processed measurement against the loudness range
// and the short-term and momentary limits and, where one is exceeded, adds
// gain curves to the control plan. It reports whether it changed the plan
// (another pass is needed).
func (pr *processing) constrain(a *dsp.Analysis, loud float64) bool {
	c := pr.cfg
	if math.IsInf(loud, 0) || math.IsNaN(loud) {
		return false
	}
	changed := false
	lv := a.Loudness
	n := len(pr.control)
	if c.MaxLRA > 0 && lv.LRA > c.MaxLRA {
		// Scale every short-term deviation from the programme loudness so
		// the range lands half an LU under the limit.
		k := (c.MaxLRA - 0.5) / lv.LRA
		st := loudness.WindowLoudness(a.Energy, loudness.ShortTermSteps)
		g := make([]float64, n)
		for b := range g {
			j := min(max(b-15, 0), len(st)-1)
			if j < 0 {
				break
			}
			if s := st[j]; s > lv.Integrated-20 {
				g[b] = math.Max(-15, math.Min(15, (k-1)*(s-lv.Integrated)))
			}
		}
		g = movingAverage(g, 10)
		for b := range g {
			pr.control[b] += g[b]
		}
		changed = true
	}
	limit := func(series []float64, window int, maxAbove float64) {
		// Each window over the limit needs all its blocks lowered by the
		// excess; a sliding maximum spreads that over the window and a
		// max-then-average smoothing keeps every block at least that low.
		need := make([]float64, n)
		over := false
		for j, s := range series {
			e := s - loud - (maxAbove - 0.3)
			if !(e > 0) {
				continue
			}
			over = true
			for b := j; b < j+window && b < n; b++ {
				need[b] = math.Max(need[b], e)
			}
		}
		if !over {
			return
		}
		need = movingAverage(slidingMax(need, 3), 3)
		for b := range need {
			pr.control[b] -= need[b]
		}
		changed = true
	}
	if c.MaxShortTerm > 0 && lv.MaxShortTerm-loud > c.MaxShortTerm {
		limit(loudness.WindowLoudness(a.Energy, loudness.ShortTermSteps), loudness.ShortTermSteps, c.MaxShortTerm)
	}
	if c.MaxMomentary > 0 && lv.MaxMomentary-loud > c.MaxMomentary {
		limit(loudness.WindowLoudness(a.Energy, loudness.MomentarySteps), loudness.MomentarySteps, c.MaxMomentary)
	}
	return changed
}

func movingAverage(x []float64, half int) []float64 {
	out := make([]float64, len(x))
	var s float64
	lo, hi := 0, 0 // window [lo, hi)
	for i := range x {
		for hi < len(x) && hi <= i+half {
			s += x[hi]
			hi++
		}
		for lo < i-half {
			s -= x[lo]
			lo++
		}
		out[i] = s / float64(hi-lo)
	}
	return out
}

func slidingMax(x []float64, half int) []float64 {
	out := make([]float64, len(x))
	for i := range x {
		m := x[i]
		for j := max(0, i-half); j <= min(len(x)-1, i+half); j++ {
			m = math.Max(m, x[j])
		}
		out[i] = m
	}
	return out
}

// levelPauses makes the gain of every pause follow the speech around it.
// The leveler plans pause gains from its own phrase gains, but what the
// listener hears is the speech's level after the compressor too, which
// lowers speech and leaves pauses alone: without this correction the
// noise floor comes up against the speech (the speech-to-pause ratio
// falls), and its level depends on which speaker it sits between. So each
// pause gets the smaller of the effective gains (energy-weighted, from
// input and processed block energies on the same grid) of the phrases
// before and after it: a constant background stays constant across
// speakers, the ratio of speech to background stays what it was, and a
// pause is never lifted above the speech next to it. It reports whether it
// changed the control plan.
func (pr *processing) levelPauses(in, proc *dsp.Analysis) bool {
	n := min(len(in.Energy), len(proc.Energy), len(pr.control))
	voiced := in.Voiced
	type run struct {
		a, b int     // blocks [a, b)
		g    float64 // effective gain, dB
	}
	var phrases []run
	for i := 0; i < n; {
		if !voiced[i] {
			i++
			continue
		}
		j := i
		var ei, ep float64
		for j < n && voiced[j] {
			ei += in.Energy[j]
			ep += proc.Energy[j]
			j++
		}
		if ei > 0 && ep > 0 {
			phrases = append(phrases, run{i, j, 10 * math.Log10(ep/ei)})
		}
		i = j
	}
	if len(phrases) == 0 {
		return false
	}
	changed := false
	for k := 0; k <= len(phrases); k++ {
		a, b := 0, n
		target := math.Inf(1)
		if k > 0 {
			a = phrases[k-1].b
			target = phrases[k-1].g
		}
		if k < len(phrases) {
			b = phrases[k].a
			target = math.Min(target, phrases[k].g)
		}
		// The silence before the first phrase and after the last has one
		// neighbour; the one beyond it keeps the background where the
		// dialogue left it.
		if k == 0 && len(phrases) > 1 {
			target = math.Min(target, phrases[1].g)
		}
		if k == len(phrases) && len(phrases) > 1 {
			target = math.Min(target, phrases[k-2].g)
		}
		for i := a; i < b; i++ {
			if voiced[i] || in.Energy[i] <= 0 || proc.Energy[i] <= 0 {
				continue
			}
			if c := target - 10*math.Log10(proc.Energy[i]/in.Energy[i]); math.Abs(c) > 0.05 {
				pr.control[i] += c
				changed = true
			}
		}
	}
	return changed
}

// lowerPauses lowers every pause block by db: the loudness the limiter took
// off the speech, which it never takes off the pauses.
func (pr *processing) lowerPauses(db float64) {
	for i := range pr.control {
		if i < len(pr.an.Voiced) && !pr.an.Voiced[i] {
			pr.control[i] -= db
		}
	}
}

// predict returns the measurement a, taken with the control plan before,
// as it would read with the control plan now, without rendering again:
// PlanGain's gain curves of both plans give the ratio of the gains at
// every frame, and each 10 ms hop's energy (pr.hops) scales by the mean
// square of that ratio over the hop. Only blocks whose gain changed are
// recomputed; a block's peak scales by the largest ratio in it (a bound),
// and the integrated loudness moves by what the gated integration of the
// block energies says. The other readings (range, maxima, RMS, dialog)
// and Raw are those of the measurement. pr.hops and pr.hopPeaks become
// the hops' predicted energies and peaks (a peak scales by the largest
// ratio at the hop's ends and middle). On the acceptance tests the
// predicted integrated loudness is within 0.001 LU of a measurement: the
// hops are short against the gain's ramps, and the K-weighting's memory
// is shorter still.
func (pr *processing) predict(a *dsp.Analysis, before []float64) *dsp.Analysis {
	now := pr.control
	blk := a.BlockLen
	curve := func(plan []float64) func(t int64) float64 {
		// PlanGain's curve: linear in amplitude between block centres,
		// the first and last values held beyond them. The gains are
		// converted once: the hops below read each a few hundred times.
		half := int64(blk / 2)
		gains := make([]float64, len(plan))
		for k, db := range plan {
			gains[k] = dsp.DBToGain(db)
		}
		at := func(k int64) float64 {
			return gains[min(max(k, 0), int64(len(gains)-1))]
		}
		return func(t int64) float64 {
			rel := t - half
			if rel < 0 {
				return at(0)
			}
			k := rel / int64(blk)
			g0, g1 := at(k), at(k+1)
			return g0 + (g1-g0)/float64(blk)*float64(rel-k*int64(blk))
		}
	}
	g0, g1 := curve(before), curve(now)
	ratio := func(t int64) float64 { return g1(t) / g0(t) }
	// meanSquare is the mean of the squared ratio over [t0, t1) by the
	// midpoint rule (the ratio is smooth over a hop).
	meanSquare := func(t0, t1 int64) float64 {
		const n = 8
		var s float64
		for j := int64(0); j < n; j++ {
			r := ratio(t0 + (2*j+1)*(t1-t0)/(2*n))
			s += r * r
		}
		return s / n
	}
	out := *a
	out.Energy = append([]float64(nil), a.Energy...)
	out.Peak = append([]float32(nil), a.Peak...)
	changed := func(b int) bool {
		for k := max(b-1, 0); k <= min(b+1, len(now)-1); k++ {
			if k < len(before) && now[k] != before[k] {
				return true
			}
		}
		return false
	}
	rate := a.Format.SampleRate
	// The hops and their peaks move with the plan too (the limiter model
	// reads them), in place: each is read once, then written.
	h, hp := pr.hops, pr.hopPeaks
	pw := hopPowers()
	if len(hp) != len(h) {
		hp = nil
	}
	for b := range out.Energy {
		if !changed(b) {
			continue
		}
		start := int64(b) * int64(blk)
		if (b+1)*loudness.StepHops <= len(h) {
			var e float64
			for k := 0; k < loudness.StepHops; k++ {
				t0 := start + int64(loudness.HopStart(rate, k))
				t1 := start + int64(loudness.HopStart(rate, k+1))
				i := b*loudness.StepHops + k
				eh := float64(pw[h[i]]) * meanSquare(t0, t1)
				e += eh
				h[i] = toHopLevel(eh)
				if hp != nil {
					r := max(ratio(t0), ratio((t0+t1)/2), ratio(t1-1))
					hp[i] = toHopLevel(float64(pw[hp[i]]) * r * r)
				}
			}
			out.Energy[b] = e / float64(blk)
		} else {
			out.Energy[b] *= meanSquare(start, start+int64(blk)) // the trailing partial block
		}
		r := max(ratio(start), ratio(start+int64(blk/2)), ratio(start+int64(blk)-1))
		out.Peak[b] = float32(float64(a.Peak[b]) * r)
	}
	if l := a.Loudness.Integrated; !math.IsInf(l, 0) && !math.IsNaN(l) {
		out.Loudness.Integrated = l + loudness.IntegratedFromSteps(out.Energy) - loudness.IntegratedFromSteps(a.Energy)
	}
	return &out
}
