package classify

import (
	"math"
	"slices"
)

// CutOptions choose the cut detectors and their settings. The zero value
// detects nothing; numeric settings left at 0 take the defaults below.
type CutOptions struct {
	// Silence shortens pauses longer than MaxPause to KeepPause (the
	// API's silence_cutter).
	Silence bool
	// Filler removes filled pauses: um, uh, er (filler_cutter).
	Filler bool
	// Cough removes coughs and similar noise bursts (cough_cutter).
	Cough bool
	// Music removes music segments of MinMusic or longer (music_cutter).
	Music bool

	// MaxPause is the longest pause left alone, seconds (default 1.0).
	MaxPause float64
	// KeepPause is what a longer pause is shortened to, seconds (default
	// 0.7, at most MaxPause). Half stays after the words before the
	// pause, half before the words after it, so no word is clipped. A
	// pause with noise in it (not digital silence or a room tone under
	// the voice activity's notice) keeps 0.1 s more at each end, up to
	// MaxPause: see noiseHang.
	KeepPause float64
	// MinMusic is the shortest music segment the music cutter removes,
	// seconds (default 5): shorter ones are jingles and stings more often
	// than songs.
	MinMusic float64

	// TrimStart and TrimEnd remove seconds from the start and the end
	// (the API's cut_start and cut_end).
	TrimStart, TrimEnd float64
}

// Defaults of CutOptions.
const (
	DefaultMaxPause  = 1.0
	DefaultKeepPause = 0.7
	DefaultMinMusic  = 5.0
)

// Filler and cough detection limits, in sub-blocks.
const (
	fillerMin = 20  // 200 ms
	fillerMax = 150 // 1.5 s
	coughMin  = 8   // 80 ms
	coughMax  = 70  // 700 ms
)

// Cuts returns the cut list of the enabled detectors, normalised: the
// list a Cutter renders, a TimeMap maps and the exporters write.
//
// Fillers, coughs and music are removed whole. The pauses around them
// are treated as one pause with them: a filler between two pauses leaves
// one pause as long as the longer of the two; with the silence cutter on,
// a pause with a filler (or a cough, or music) in it that is longer than
// MaxPause as a whole is shortened to KeepPause in one cut that takes the
// filler along.
func (r *Result) Cuts(o CutOptions) Cuts {
	if o.MaxPause <= 0 {
		o.MaxPause = DefaultMaxPause
	}
	if o.KeepPause <= 0 {
		o.KeepPause = DefaultKeepPause
	}
	o.KeepPause = min(o.KeepPause, o.MaxPause)
	if o.MinMusic <= 0 {
		o.MinMusic = DefaultMinMusic
	}
	ns := len(r.Activity)
	// forced marks the sub-blocks a detector wants removed.
	forced := make([]Reason, ns)
	mark := func(spans []subSpan, why Reason) {
		for _, s := range spans {
			for j := s.lo; j < s.hi; j++ {
				forced[j] |= why
			}
		}
	}
	if o.Filler {
		mark(r.fillers(), CutFiller)
	}
	if o.Cough {
		mark(r.coughs(), CutCough)
	}
	if o.Music {
		mark(r.musicSpans(o.MinMusic), CutMusic)
	}
	fs := float64(r.SampleRate)
	maxPause := int64(math.Round(o.MaxPause * fs))
	keep := int64(math.Round(o.KeepPause * fs))

	words := r.Activity
	if o.Silence {
		words = r.words()
	}
	var cuts []Cut
	// Walk the runs of removable sub-blocks: pauses and forced ones.
	for j := 0; j < ns; {
		if words[j] && forced[j] == 0 {
			j++
			continue
		}
		k := j
		for k < ns && (!words[k] || forced[k] != 0) {
			k++
		}
		cuts = append(cuts, r.pauseCuts(j, k, forced, o.Silence, maxPause, keep)...)
		j = k
	}
	cuts = append(cuts, Trim(r.Frames, r.SampleRate, o.TrimStart, o.TrimEnd)...)
	// Cuts closer than 50 ms merge: the sliver between them would be two
	// joins for nothing.
	return Normalize(cuts, int64(0.05*fs))
}

// words returns Activity without, inside speech, its islands of unvoiced
// sound (runs of active sub-blocks fewer than minVowel of which are
// voiced) and the unvoiced ends of its words beyond maxUnvoiced. A word has a
// vowel, and its unvoiced consonants join the vowel's run; an island
// without one is a
// click, a breath, or room noise that changes in a pause (a fan, a room
// tone above the digital silence of an edited recording), and the
// silence cutter takes it as part of the pause around it.
func (r *Result) words() []bool {
	if r.feats == nil {
		if r.wordsKept != nil {
			return r.wordsKept
		}
		return r.Activity
	}
	out := slices.Clone(r.Activity)
	// Music keeps its activity: a drum, a bowed chord need no vowel.
	speech := make([]bool, len(out))
	for _, g := range r.Segments {
		if g.Label == Speech {
			for j := r.subAt(g.Start); j < min(len(out), r.subAt(g.End)); j++ {
				speech[j] = true
			}
		}
	}
	// Speech's pauses on the recording's own floor are pauses, though
	// activity found sound there (floorPauses).
	for j, p := range r.floorPauses() {
		if p && speech[j] {
			out[j] = false
		}
	}
	for j := 0; j < len(out); {
		if !out[j] || !speech[j] {
			j++
			continue
		}
		k, voiced, first, last := j, 0, 0, 0
		for k < len(out) && out[k] && speech[k] {
			if r.feat(k).voicing > voicedAt {
				if voiced == 0 {
					first = k
				}
				voiced++
				last = k
			}
			k++
		}
		if voiced < minVowel {
			clear(out[j:k])
		} else {
			clear(out[j:max(j, first-maxUnvoiced)])
			clear(out[min(k, last+1+maxUnvoiced):k])
		}
		j = k
	}
	return out
}

// maxUnvoiced is the most unvoiced sound, in sub-blocks, a word keeps
// before its first voiced sub-block and after its last: a consonant
// cluster, a final fricative. What lies beyond is the room's noise run
// into the word, and counts as pause; the cut leaves half of KeepPause of
// the pause next to the word besides.
const maxUnvoiced = 20

// noiseHang is how much more of a pause, seconds, a cut leaves at each
// end when the pause holds sound (found by floorPauses, under a noise):
// there the pause's edges lie where the level falls 20 dB under the
// voice, still above the noise, and what the cut keeps starts inside a
// word's decay. Under a real steady noise 30 dB down, cuts that kept
// only KeepPause from those edges left the held-out phrases' words
// intact (no 10 ms within 30 dB of a phrase's loudest cut) but raised
// PocketSphinx's word error rate by 5.6 points, where the recogniser
// wants some noise alone around a word; on the tuning half the
// hangover moves the nearest cut from 131 to 231 ms away from any of
// the phrases' sound within 30 dB of their loudest.
const noiseHang = 0.1

// minVowel is the least number of voiced sub-blocks a run of activity
// holds when it is a word: 30 ms, shorter than any vowel.
const minVowel = 3

// subSpan is a range of sub-blocks [lo, hi).
type subSpan struct{ lo, hi int }

// pauseCuts returns the cuts of the removable run of sub-blocks [j, k).
func (r *Result) pauseCuts(j, k int, forced []Reason, silence bool, maxPause, keep int64) []Cut {
	ps, pe := r.SubBlockStart(j), r.SubBlockStart(k)
	// The forced parts of the run, with their reasons.
	var parts []subSpan
	var why Reason
	for i := j; i < k; {
		if forced[i] == 0 {
			i++
			continue
		}
		e := i
		for e < k && forced[e] != 0 {
			why |= forced[e]
			e++
		}
		parts = append(parts, subSpan{i, e})
		i = e
	}
	if silence && pe-ps > maxPause {
		// A pause with sound in it keeps noiseHang more at each end.
		if slices.Contains(r.Activity[j:k], true) {
			keep = min(maxPause, keep+2*int64(noiseHang*float64(r.SampleRate)))
		}
		// One cut keeps keep frames of the run, half at each end, but
		// never keeps a forced part.
		left, right := keep/2, keep-keep/2
		if len(parts) > 0 {
			fs, fe := r.SubBlockStart(parts[0].lo), r.SubBlockStart(parts[len(parts)-1].hi)
			left = min(left, fs-ps)
			right = min(keep-left, pe-fe)
			left = min(keep-right, fs-ps)
		}
		// A run at the start or end of the recording keeps only the
		// half that leads into or out of the words.
		if j == 0 {
			left = 0
			right = min(right, keep/2)
		}
		if k == len(r.Activity) {
			right = 0
			left = min(left, keep/2)
		}
		if ps+left < pe-right {
			return []Cut{{ps + left, pe - right, why | CutSilence}}
		}
		return nil
	}
	// Remove each forced part, and enough of the pause around it that
	// what remains is as long as the longer pause next to it.
	var cuts []Cut
	for i, p := range parts {
		fs, fe := r.SubBlockStart(p.lo), r.SubBlockStart(p.hi)
		before, after := ps, pe // the pause on each side
		if i > 0 {
			before = r.SubBlockStart(parts[i-1].hi)
		}
		if i+1 < len(parts) {
			after = r.SubBlockStart(parts[i+1].lo)
		}
		pb, pa := fs-before, after-fe
		rest := max(pb, pa)
		l := min(pb, rest/2)
		rr := min(pa, rest-l)
		l = min(pb, rest-rr)
		var why Reason
		for _, w := range forced[p.lo:p.hi] {
			why |= w
		}
		cuts = append(cuts, Cut{fs - (pb - l), fe + (pa - rr), why})
	}
	return cuts
}

// musicSpans returns the music segments at least minSec long.
func (r *Result) musicSpans(minSec float64) []subSpan {
	var out []subSpan
	for _, s := range r.Segments {
		if s.Label != Music || float64(s.End-s.Start) < minSec*float64(r.SampleRate) {
			continue
		}
		lo, hi := r.subAt(s.Start), r.subAt(s.End)
		if hi > lo {
			out = append(out, subSpan{lo, hi})
		}
	}
	return out
}

// subAt returns the first sub-block starting at or after frame f.
func (r *Result) subAt(f int64) int {
	lo, hi := 0, len(r.Activity)
	for lo < hi {
		m := (lo + hi) / 2
		if r.SubBlockStart(m) < f {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// islands returns the runs of activity whose length is within [minLen,
// maxLen] sub-blocks.
func (r *Result) islands(minLen, maxLen int) []subSpan {
	var out []subSpan
	act := r.Activity
	for j := 0; j < len(act); {
		if !act[j] {
			j++
			continue
		}
		k := j
		for k < len(act) && act[k] {
			k++
		}
		if k-j >= minLen && k-j <= maxLen {
			out = append(out, subSpan{j, k})
		}
		j = k
	}
	return out
}

// fillers finds filled pauses: islands of activity (bounded by pauses)
// from 200 ms to 1.5 s that are one syllable, mostly one held, voiced
// sound: periodic throughout, with a pitch that may glide but never
// jumps, a spectrum that barely changes and a flat envelope. A word is a
// string of different sounds, each with its transitions, and two words
// are two syllables with a dip of the level between them; a hesitation
// is one vowel (and perhaps a nasal) held while the speaker thinks. The
// nasal of "um" is a second steady part at the same pitch and a lower
// level, so steady stretches that continue each other's pitch are taken
// together and the envelope may step down once.
func (r *Result) fillers() []subSpan {
	if !r.feats.full() {
		return nil // DropFeatures or ClassifyOnly
	}
	var out []subSpan
	for _, is := range r.islands(fillerMin, fillerMax) {
		if r.isFiller(is) {
			// From 30 ms before the core: what comes earlier in the island
			// may be the decay of the word before.
			out = append(out, subSpan{max(is.lo, r.core(is).lo-3), is.hi})
		}
	}
	return out
}

// Filler thresholds.
const (
	fillerVoicing      = 0.45  // periodicity of a voiced sub-block
	fillerFlux         = 4.0   // dB per 30 ms of a held sound
	fillerStepCent     = 50.0  // pitch step per 10 ms inside a held sound
	fillerMeanCent     = 30.0  // median pitch step of a held sound
	fillerCover        = 0.7   // share of the island the held sound covers
	fillerBridge       = 15    // longest break inside a held sound, sub-blocks
	fillerBridgeCent   = 300.0 // pitch change across such a break
	fillerLevelSD      = 3.0   // dB, standard deviation of the band level around one step down
	fillerDip          = 6.0   // dB, deepest dip of the level between two louder parts
	fillerCentroidRate = 0.2   // octaves per 30 ms: 75th percentile of the centroid movement
	fillerMedian       = 2     // half width of the pitch track's median filter, sub-blocks
)

func (r *Result) isFiller(is subSpan) bool {
	st := r.fillerStats(is)
	return st.held >= fillerMin && float64(st.held) >= fillerCover*float64(st.n) &&
		st.meanCents <= fillerMeanCent && st.levelSD <= fillerLevelSD && st.dip <= fillerDip &&
		st.centroidRate <= fillerCentroidRate
}

// fillerStats are the measurements isFiller decides on.
type fillerStats struct {
	n         int     // sub-blocks in the island's core
	held      int     // sub-blocks in its longest held sound
	meanCents float64 // median pitch step over the held sound
	// levelSD is the standard deviation of the band level over the held
	// sound around its best fit by two constant levels, the second lower
	// (dB): a vowel and the quieter nasal that closes it each hold their
	// own level.
	levelSD float64
	// dip is the deepest dip of the band level below the lower of the
	// loudest levels before and after it, over the core (dB): the
	// boundary of two syllables.
	dip float64
	// centroidRate is how fast the centroid of the loud part moves,
	// octaves per 30 ms (75th percentile).
	centroidRate float64
}

func (r *Result) fillerStats(is subSpan) fillerStats {
	f := r.island(is)
	is = r.core(is)
	n := is.hi - is.lo
	pitch := heldPitch(f, is)
	steady := make([]bool, n)
	for i := range steady {
		j := is.lo + i
		if f(j).voicing < fillerVoicing || f(j).flux > fillerFlux {
			continue
		}
		if i > 0 && pitch[i-1] > 0 && pitchStep(pitch[i], pitch[i-1]) > fillerStepCent {
			continue
		}
		steady[i] = true
	}
	// Close short breaks (a transition into a nasal, a glitch of the
	// pitch tracker) when the pitch on both sides agrees within three
	// semitones.
	last := -1
	for i, s := range steady {
		if !s {
			continue
		}
		if last >= 0 && i-last > 1 && i-last <= fillerBridge &&
			pitchStep(pitch[i], pitch[last]) < fillerBridgeCent {
			for k := last + 1; k < i; k++ {
				steady[k] = true
			}
		}
		last = i
	}
	// The longest steady run must cover most of the island.
	bestLo, bestLen := 0, 0
	for i := 0; i < n; {
		if !steady[i] {
			i++
			continue
		}
		k := i
		for k < n && steady[k] {
			k++
		}
		if k-i > bestLen {
			bestLo, bestLen = i, k-i
		}
		i = k
	}
	st := fillerStats{n: n, held: bestLen, meanCents: math.Inf(1)}
	// Over that run: the pitch holds and the envelope is flat.
	var steps, lv []float64
	for i := bestLo; i < bestLo+bestLen; i++ {
		lv = append(lv, float64(f(is.lo+i).band))
		if i > bestLo && pitch[i] > 0 && pitch[i-1] > 0 {
			steps = append(steps, pitchStep(pitch[i], pitch[i-1]))
		}
	}
	if len(steps) > 0 {
		slices.Sort(steps)
		st.meanCents = steps[len(steps)/2]
	}
	st.levelSD = stepSD(lv)
	st.dip = dip(f, is)
	// The loud part (within 8 dB of the peak) is one vowel, perhaps
	// followed by a nasal: its formants, and with them the spectral
	// centroid, hardly move, except at the one transition. A phrase's
	// loud part runs through several vowels. The movement is measured
	// over 30 ms, and its 75th percentile counts: a glide or a transition
	// into the nasal is a minority of the steps.
	top := math.Inf(-1)
	for j := is.lo; j < is.hi; j++ {
		top = max(top, float64(f(j).band))
	}
	var rates []float64
	for j := is.lo + 3; j < is.hi; j++ {
		if float64(f(j).band) > top-8 && float64(f(j-3).band) > top-8 && f(j).centroid > 0 && f(j-3).centroid > 0 {
			rates = append(rates, math.Abs(math.Log2(float64(f(j).centroid/f(j-3).centroid))))
		}
	}
	st.centroidRate = math.Inf(1)
	if len(rates) > 0 {
		slices.Sort(rates)
		st.centroidRate = rates[len(rates)*3/4]
	}
	return st
}

// heldPitch returns the pitch of the sub-blocks of is, 0 where they are
// not voiced, each voiced one replaced by the median over the voiced
// sub-blocks within fillerMedian of it. The tracker sometimes takes one
// or two sub-blocks of a low voice at a lag that is no multiple of the
// period (one sub-block in two of a voice at 83 Hz came out at 472 Hz):
// such a glitch breaks the held sound and makes steps of thousands of
// cents. The median removes outliers up to two sub-blocks long and keeps
// real jumps, which last.
func heldPitch(f func(int) feature, is subSpan) []float32 {
	n := is.hi - is.lo
	raw := make([]float32, 2*n)
	for i := range n {
		if v := f(is.lo + i); v.voicing >= fillerVoicing {
			raw[i] = v.pitch
		}
	}
	out := raw[n:]
	var win [2*fillerMedian + 1]float32
	for i := range n {
		if raw[i] == 0 {
			continue
		}
		w := win[:0]
		for _, p := range raw[max(0, i-fillerMedian):min(n, i+fillerMedian+1)] {
			if p > 0 {
				w = append(w, p)
			}
		}
		slices.Sort(w)
		out[i] = w[len(w)/2]
	}
	return out
}

// stepSD returns the standard deviation of x around its best fit by one
// constant up to some index and a lower constant after it (or one
// constant throughout).
func stepSD(x []float64) float64 {
	m := len(x)
	if m < 2 {
		return 0
	}
	var s, ss float64
	for _, v := range x {
		s += v
		ss += v * v
	}
	best := ss - s*s/float64(m)
	var ls, lss float64
	for k := 1; k < m; k++ {
		ls += x[k-1]
		lss += x[k-1] * x[k-1]
		a, b := ls/float64(k), (s-ls)/float64(m-k)
		if b > a {
			continue
		}
		best = min(best, lss-ls*a+(ss-lss)-(s-ls)*b)
	}
	return math.Sqrt(max(0, best) / float64(m))
}

// dip returns how far the band level of is falls, at its deepest, below
// the lower of its loudest levels before and after that point, dB.
func dip(f func(int) feature, is subSpan) float64 {
	n := is.hi - is.lo
	if n == 0 {
		return 0
	}
	// after[i] is the loudest level from i to the end.
	after := make([]float32, n)
	after[n-1] = f(is.hi - 1).band
	for i := n - 2; i >= 0; i-- {
		after[i] = max(after[i+1], f(is.lo+i).band)
	}
	before := float32(math.Inf(-1))
	var d float32
	for i := range n {
		b := f(is.lo + i).band
		before = max(before, b)
		d = max(d, min(before, after[i])-b)
	}
	return float64(d)
}

// coreDB is how far below its loudest sub-block an island's core ends:
// what lies further down is onset, decay, echo or reverberation, which
// says nothing about what was said.
const coreDB = 20.0

// core returns the island without its quiet edges: from the first to
// the last sub-block within coreDB of its loudest.
func (r *Result) core(is subSpan) subSpan {
	top := math.Inf(-1)
	for j := is.lo; j < is.hi; j++ {
		top = max(top, float64(r.feat(j).band))
	}
	lo, hi := is.lo, is.hi
	for lo < hi && float64(r.feat(lo).band) < top-coreDB {
		lo++
	}
	for hi > lo && float64(r.feat(hi-1).band) < top-coreDB {
		hi--
	}
	return subSpan{lo, hi}
}

func cents(a, b float32) float64 {
	if a <= 0 || b <= 0 {
		return math.Inf(1)
	}
	return 1200 * math.Log2(float64(a)/float64(b))
}

// pitchStep returns the size in cents of the step from pitch b to pitch a,
// forgiving the pitch tracker's octave and twelfth errors: the step is
// measured against b, 2b, 3b, b/2 and b/3 and the smallest counts. A voice
// that alternates between two pulse shapes really does repeat at twice
// its period, so a tracker jumps between the two; a jump of exactly an
// octave between 10 ms frames is never the voice.
func pitchStep(a, b float32) float64 {
	c := cents(a, b)
	if math.IsInf(c, 0) {
		return c
	}
	best := math.Abs(c)
	for _, h := range [...]float64{1200, 1901.955, -1200, -1901.955} {
		best = min(best, math.Abs(c-h))
	}
	return best
}

// coughs finds coughs: islands of activity from 80 to 700 ms that start
// with a burst (the level reaches its peak within 40 ms of the start and
// in the first third of the island), sound like noise (flat spectrum,
// little periodicity) and decay. Speech between pauses has voiced parts;
// a breath rises slowly.
func (r *Result) coughs() []subSpan {
	if !r.feats.full() {
		return nil // DropFeatures or ClassifyOnly
	}
	var out []subSpan
	for _, is := range r.islands(coughMin, coughMax) {
		if r.isCough(is) {
			out = append(out, is)
		}
	}
	return out
}

// Cough thresholds.
const (
	coughFlat    = 0.25 // mean flatness of a noise burst
	coughVoiced  = 0.3  // largest share of periodic sub-blocks
	coughAttack  = 4    // sub-blocks from the start to the peak
	coughRiseDB  = 15.0 // rise from the floor to the peak
	coughVoicing = 0.5
)

func (r *Result) isCough(is subSpan) bool {
	f := r.island(is)
	n := is.hi - is.lo
	peak, peakAt := math.Inf(-1), 0
	var flat float64
	voiced := 0
	for i := 0; i < n; i++ {
		j := is.lo + i
		if l := float64(f(j).level); l > peak {
			peak, peakAt = l, i
		}
		flat += float64(f(j).flat)
		if f(j).voicing >= coughVoicing {
			voiced++
		}
	}
	if float64(voiced) > coughVoiced*float64(n) || flat/float64(n) < coughFlat {
		return false
	}
	// The island starts 20 ms before the sound (activity hangover), so the
	// peak is counted from the first sub-block above the floor.
	start := 0
	for start < n && float64(f(is.lo+start).band) < float64(r.floorAt(is.lo+start))+activeDB {
		start++
	}
	if peakAt-start > coughAttack || float64(peakAt) > float64(n)/3 {
		return false
	}
	var top float64 = -200
	for j := is.lo; j < is.hi; j++ {
		top = max(top, float64(f(j).band)-float64(r.floorAt(j)))
	}
	if top < coughRiseDB {
		return false
	}
	// Decay: the last third is well below the peak.
	tail := math.Inf(-1)
	for j := is.lo + 2*n/3; j < is.hi; j++ {
		tail = max(tail, float64(f(j).level))
	}
	return tail < peak-6
}

// island returns the features of the sub-blocks of is and the one before
// it, unpacked, as a function of the sub-block index.
func (r *Result) island(is subSpan) func(int) feature {
	base := max(0, is.lo-1)
	u := make([]feature, is.hi-base)
	for j := range u {
		u[j] = r.feat(base + j)
	}
	return func(j int) feature { return u[j-base] }
}
