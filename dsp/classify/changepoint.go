package classify

import "math"

// Placing a switch where the sound changes.
//
// The side windows of refineSwitch hold a second and a half each, and a
// window that holds a few tenths of a second of speech already reads as
// speech (the dips of a few syllables are evidence enough), where one
// that holds as much music does not read as music. Around a switch, the
// score of the two windows is therefore level, within a point or so, over
// a stretch that reaches into the music, and its middle lies in the music:
// on the tuning half's programmes, the switches more than 0.7 s off were
// nearly all music labelled speech next to the switch, from speech to
// music and back alike. The recordings on either side of a switch differ
// as sounds, though: their levels, flatness, flux and voicing have other
// means and spreads. Within the stretch the side windows cannot decide,
// the switch goes to the sub-block that best splits the sound around it
// into two such parts.

// splitTol is how far under the best side-window score a candidate switch
// may lie and still count as one the side windows cannot tell from it.
const splitTol = 1.0

// minSplit is the fewest sub-blocks either part of a split holds.
const minSplit = 30

// changePoint returns the sub-block q in [qlo, qhi] that best splits the
// sub-blocks [lo, hi) in two, each part's speech-band level (floored at
// absoluteGate), flatness, flux and voicing taken as independent Gaussians
// with their own mean and variance: the q of the largest gain in
// log-likelihood over one part.
func (r *Result) changePoint(lo, hi, qlo, qhi int) int {
	const nd = 4
	n := hi - lo
	// Running sums and sums of squares of the features.
	s1 := make([][nd]float64, n+1)
	s2 := make([][nd]float64, n+1)
	for j := range n {
		f := r.feat(lo + j)
		x := [nd]float64{max(float64(f.band), absoluteGate), float64(f.flat), float64(f.flux), float64(f.voicing)}
		for d, v := range x {
			s1[j+1][d] = s1[j][d] + v
			s2[j+1][d] = s2[j][d] + v*v
		}
	}
	// cost is the negative log-likelihood of [a, b) as one part, up to
	// terms that do not depend on the split.
	cost := func(a, b int) float64 {
		m := float64(b - a)
		c := 0.0
		for d := range nd {
			mu := (s1[b][d] - s1[a][d]) / m
			v := (s2[b][d]-s2[a][d])/m - mu*mu
			c += math.Log(max(v, 1e-4))
		}
		return m / 2 * c
	}
	best, at := math.Inf(-1), qlo
	whole := cost(0, n)
	for q := max(qlo, lo+minSplit); q <= min(qhi, hi-minSplit); q++ {
		if g := whole - cost(0, q-lo) - cost(q-lo, n); g > best {
			best, at = g, q
		}
	}
	return at
}
