package classify

import (
	"math"

	"github.com/audiopost/audiopost/internal/quickselect"
)

// Speech/music classification.
//
// Every block gets evidence from the two seconds around it, counted over
// its active sub-blocks only:
//
//   - dips: the share of active sub-blocks more than 12 dB below the
//     loudest tenth of the window. Speech dips between syllables and in
//     every stop consonant; music, held together by sustained notes,
//     reverb and accompaniment, hardly ever does.
//   - steadiness: the share of consecutive periodic sub-blocks whose pitch
//     changes by less than 3 cents in 10 ms (octave errors forgiven). A
//     note holds its pitch; a voice glides all the time. It counts in
//     proportion to how much of the window is periodic.
//
// Positive evidence is speech, negative music, zero (silence, too little
// activity) neither. A two-state Viterbi path through the evidence with a
// switching cost turns it into segments that do not flip inside a
// sentence: a switch has to be paid for by several seconds of contrary
// evidence. Each switch then moves, within 1.5 s, to the change point of
// the dips (see refineSwitch): a pause between speech and music dips, so
// the switch lands on the music's edge, the pause belongs to the speech,
// and a cut of the music takes exactly the music.

// Evidence parameters.
const (
	evidenceHalf  = 10   // blocks each side of the evidence window
	dipDB         = 12.0 // a dip is this far below the window's 90th percentile
	dipSplit      = 0.09 // dip share between music (below) and speech
	dipScale      = 0.05
	steadyCents   = 3.0 // pitch change per 10 ms of a held note
	steadySplit   = 0.5 // steady share between speech (below) and music
	steadyScale   = 0.15
	steadyPairs   = 60 // voiced pairs for full pitch evidence
	minActive     = 20 // active sub-blocks a window needs to count
	switchPenalty = 15.0
)

// evidence returns the speech (positive) or music (negative) evidence of
// every block.
func (r *Result) evidence(nb int) []float64 {
	ev := make([]float64, nb)
	ns := r.feats.len()
	// Which sub-blocks j end a voiced pair (j-1, j), and a steady one:
	// the windows of neighbouring blocks overlap by all but a tenth, so
	// each pair is judged once and the windows count them.
	const pairBit, steadyBit = 1, 2
	flags := make([]uint8, ns)
	for j := 1; j < ns; j++ {
		if !r.Activity[j] || !r.Activity[j-1] {
			continue
		}
		f, g := r.feat(j), r.feat(j-1)
		if f.voicing > 0.5 && g.voicing > 0.5 {
			flags[j] = pairBit
			if pitchStep(f.pitch, g.pitch) < steadyCents {
				flags[j] |= steadyBit
			}
		}
	}
	var bands []float64
	for b := range ev {
		if !r.Voiced[b] {
			continue
		}
		lo, hi := max(0, (b-evidenceHalf)*SubBlocks), min(ns, (b+evidenceHalf+1)*SubBlocks)
		bands = bands[:0]
		steady, pairs := 0, 0
		for j := lo; j < hi; j++ {
			if !r.Activity[j] {
				continue
			}
			bands = append(bands, float64(float32(r.feats.at(j).band)/100)) // unpack's band
			if j > lo && flags[j]&pairBit != 0 {
				pairs++
				if flags[j]&steadyBit != 0 {
					steady++
				}
			}
		}
		if len(bands) < minActive {
			continue
		}
		// The 90th percentile and the count of the values sorting below
		// top-dipDB (NaNs first, as slices.Sort orders them): what the
		// sorted window would give, without sorting it.
		top := quickselect.Nth(bands, int(0.9*float64(len(bands)-1)))
		dips := 0
		for _, v := range bands {
			if !(v >= top-dipDB) {
				dips++
			}
		}
		e := clamp((float64(dips)/float64(len(bands))-dipSplit)/dipScale, -3, 3)
		// Pitch evidence counts in proportion to how much of the window
		// is periodic: a few voiced pairs in a drum track say little.
		if pairs >= 10 {
			w := min(1, float64(pairs)/steadyPairs)
			e += w * clamp((steadySplit-float64(steady)/float64(pairs))/steadyScale, -3, 3)
		}
		ev[b] = e
	}
	return ev
}

func clamp(x, lo, hi float64) float64 { return max(lo, min(hi, x)) }

// viterbi returns the cheapest speech/music path through the evidence: a
// block costs |e| when its label disagrees with the sign of its evidence,
// and every switch costs penalty. true is music.
func viterbi(ev []float64, penalty float64) []bool {
	n := len(ev)
	if n == 0 {
		return nil
	}
	// cost[s] is the cheapest path ending in state s (0 speech, 1 music).
	back := make([][2]bool, n) // back[i][s]: previous state was the other one
	var cost [2]float64
	for i, e := range ev {
		c := [2]float64{max(0, -e), max(0, e)} // speech pays for music evidence
		var nc [2]float64
		for s := 0; s < 2; s++ {
			stay, sw := cost[s], cost[1-s]+penalty
			if i == 0 {
				stay, sw = 0, math.Inf(1)
			}
			if sw < stay {
				nc[s] = sw + c[s]
				back[i][s] = true
			} else {
				nc[s] = stay + c[s]
			}
		}
		cost = nc
	}
	out := make([]bool, n)
	s := 0
	if cost[1] < cost[0] {
		s = 1
	}
	for i := n - 1; i >= 0; i-- {
		out[i] = s == 1
		if back[i][s] {
			s = 1 - s
		}
	}
	return out
}

// classify labels the blocks and finds the segments.
func (r *Result) classify(nb int) {
	music := make([]bool, nb)
	switch r.Mode {
	case MusicOnly:
		for i := range music {
			music[i] = true
		}
	case Auto:
		music = viterbi(r.evidence(nb), switchPenalty)
	}
	r.Segments = r.segments(music)
	r.Labels = make([]Label, nb)
	k := 0
	for i, v := range r.Voiced {
		if !v {
			continue
		}
		c := r.BlockStart(i) + int64(r.BlockLen/2)
		for k+1 < len(r.Segments) && r.Segments[k].End <= c {
			k++
		}
		r.Labels[i] = r.Segments[k].Label
	}
}

// segments turns the per-block path into segments covering the recording,
// with each switch moved to the edge of the music when a pause is near.
func (r *Result) segments(music []bool) []Segment {
	if r.Frames == 0 {
		return nil
	}
	label := func(m bool) Label {
		if m {
			return Music
		}
		return Speech
	}
	var segs []Segment
	start := int64(0)
	for i := 1; i <= len(music); i++ {
		if i < len(music) && music[i] == music[i-1] {
			continue
		}
		end := r.Frames
		if i < len(music) {
			end = r.refineSwitch(i, music[i])
		}
		if end > start {
			segs = append(segs, Segment{Label: label(music[i-1]), Start: start, End: end})
			start = end
		}
	}
	if len(segs) == 0 {
		segs = append(segs, Segment{Label: label(len(music) > 0 && music[0]), End: r.Frames})
	} else {
		segs[len(segs)-1].End = r.Frames
	}
	return segs
}

// refineSwitch returns the frame where a switch at block b belongs. The
// evidence windows blur a switch over a second or two; within 1.5 s of it
// the switch goes to the change point of the dip indicator (a sub-block is
// a dip when it is inactive or 12 dB below the loudest sub-block within
// 250 ms): the point that best splits the stretch into a dipping (speech)
// and a steady (music) part. A pause between speech and music dips, so the
// switch lands at the music's edge and the pause stays with the speech.
func (r *Result) refineSwitch(b int, toMusic bool) int64 {
	const reach = 15 * SubBlocks
	const localHalf = 25
	act := r.Activity
	j0 := b * SubBlocks
	lo, hi := max(0, j0-reach), min(len(act), j0+reach)
	if hi-lo < 2 {
		return r.SubBlockStart(j0)
	}
	// Local maxima of the band level over +-localHalf sub-blocks.
	neg := make([]float64, 0, hi-lo+2*localHalf)
	base := max(0, lo-localHalf)
	for j := base; j < min(len(act), hi+localHalf); j++ {
		neg = append(neg, -float64(r.feat(j).band))
	}
	mx := slidingMin(neg, localHalf)
	d := make([]float64, hi-lo)
	var mean float64
	for j := lo; j < hi; j++ {
		if !act[j] || float64(r.feat(j).band) < -mx[j-base]-dipDB {
			d[j-lo] = 1
		}
		mean += d[j-lo]
	}
	mean /= float64(len(d))
	// CUSUM: speech before music peaks at the change point, music before
	// speech bottoms out there.
	best, bestP := 0.0, j0
	var s float64
	for p := lo; p <= hi; p++ {
		v := s
		if toMusic {
			v = -s
		}
		if p == lo || v < best || (v == best && abs(p-j0) < abs(bestP-j0)) {
			best, bestP = v, p
		}
		if p < hi {
			s += d[p-lo] - mean
		}
	}
	return r.SubBlockStart(bestP)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
