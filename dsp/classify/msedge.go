package classify

import "math"

// Placing a switch by the music share of the windows across it.
//
// msModel was fitted on windows that hold one thing only, so across a
// switch its output says what a window mostly sounds like, not how much
// of each it holds: a window with a few tenths of a second of speech in it
// already reads as speech (the dips of a few syllables suffice), and one
// that holds the sparse first notes of a guitar reads as speech too. The
// side windows then agree on a switch placed a second into the music.
//
// msEdge is the same kind of network, fitted (TestFitSwitchEdge) on
// windows of edgeLen that straddle the switches of programmes made from
// the tuning half, its target the share of the window that is music. Its
// output over a row of windows across a switch is a ramp from one side's
// share to the other's, and where the ramp lies says where the switch
// lies: edgeSwitch places the switch where the shares a single switch
// would give the windows best match the shares the model reads (least
// squares), every window that holds sound taking part.

// edgeLen is the window of msEdge, in sub-blocks: the side windows',
// since msEdge reads the very windows sideSwitch computed (and TestFitSwitchEdge
// fits it on windows of that length).
const edgeLen = sideLen

// edgeSwitch returns the sub-block within reach of j0 where a switch (to
// music when toMusic) best explains the music shares msEdge reads over the
// windows sideSwitch read around it (stepFit). It returns j0 and false
// when no window there holds sound.
func (r *Result) edgeSwitch(win *sideWindows, j0, reach int, toMusic bool) (int, bool) {
	lo, hi := max(1, j0-reach), min(win.ns-1, j0+reach)
	var reads []shareRead
	for _, v := range win.wins {
		// Windows that end before the reach or start after it would
		// hold the same share whatever the candidate.
		if v.ok && v.b > lo && v.a < hi && v.b-v.a >= edgeLen/2 {
			reads = append(reads, shareRead{v.a, v.b, 1 / (1 + math.Exp(-msEdge.logit(&v.x)))})
		}
	}
	if len(reads) == 0 {
		return j0, false
	}
	return stepFit(reads, lo, hi, j0, toMusic), true
}

// shareRead is the music share read over the sub-blocks [a, b).
type shareRead struct {
	a, b  int
	share float64
}

// stepFit returns the sub-block p in [lo, hi] of the one switch (to music
// when toMusic) that best explains the reads: a window [a, b) would hold
// the share (b-p)/(b-a) of music after a switch at p (clamped to [0, 1];
// one minus that from music to speech), and the p of the least squared
// difference wins, the one nearest j0 on a tie.
func stepFit(reads []shareRead, lo, hi, j0 int, toMusic bool) int {
	best, at := math.Inf(1), j0
	for p := lo; p <= hi; p++ {
		var c float64
		for _, rd := range reads {
			share := clamp(float64(rd.b-p)/float64(rd.b-rd.a), 0, 1) // music after p
			if !toMusic {
				share = 1 - share
			}
			d := rd.share - share
			c += d * d
		}
		if c < best || (c == best && abs(p-j0) < abs(at-j0)) {
			best, at = c, p
		}
	}
	return at
}
