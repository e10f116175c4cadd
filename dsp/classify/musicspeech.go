package classify

import (
	"math"

	"github.com/audiopost/audiopost/internal/quickselect"
)

// Speech/music classification.
//
// Every block gets evidence from the three seconds around it: the
// features of that window (msfeatures.go) go through a small network
// (msNet, weights in msmodel.go, fitted on the tuning half of the
// real-recording corpus by TestFitSpeechMusic) whose output is the
// log-odds of music. Positive evidence is speech, negative music, zero
// (silence, too little sound) neither. A two-state Viterbi path through
// the evidence with a switching cost turns it into segments that do not
// flip inside a sentence: a switch has to be paid for by seconds of
// contrary evidence. Each switch then moves to where a window of a
// second on each side looks most like what the path says lies there
// (refineSwitch), and from there, within 0.6 s, to the change point of
// the dips (snapSwitch): a pause between speech and music dips, so the
// switch lands on the music's edge, the pause belongs to the speech, and
// a cut of the music takes exactly the music. A second model (msEdge,
// msedge.go) reads how much music each of those windows holds; where the
// switch its shares say lies more than 0.3 s from that one, the rules
// were led astray and the shares' switch is taken.

// Evidence parameters.
const (
	evidenceHalf = 15   // blocks each side of the evidence window
	dipDB        = 12.0 // a dip is this far below the window's 90th percentile
	steadyCents  = 3.0  // pitch change per 10 ms of a held note
	minActive    = 20   // sub-blocks with sound a window needs to count
	evidenceCap  = 3.0  // the most one block's evidence counts
	// evidenceStride is the number of blocks one window's evidence
	// serves.
	evidenceStride = 2
	switchPenalty  = 15.0
	// silentPenalty is what a switch costs inside silence: music that
	// stops for a second or more and speech that starts out of it may
	// well be different things, and a few spoken words between silences
	// then suffice.
	silentPenalty = 5.0
)

// Switch refinement parameters, in sub-blocks.
const (
	sideLen   = 150 // the window on each side of a candidate switch
	sideReach = 250 // how far a switch may move
	sideStep  = 4   // the coarse grid of candidates, refined to one sub-block
	snapReach = 15  // how far the dip change point may move it after
	// pauseReach is how far a switch may then move to the music's edge
	// of a pause it lies in.
	pauseReach = 150
	// gapMin is the shortest pause nearPause moves a switch to the
	// music's edge of, and gapReach how far from the switch the pause may
	// lie.
	gapMin   = 20
	gapReach = 80
)

// sideCap bounds the evidence of a side window: far above what one
// block's evidence counts on the path, so that the score does not
// plateau over a second or more around the switch.
const sideCap = 6.0

// plateauTol is how far under the best a candidate switch's score may lie
// and still count as level with it.
const plateauTol = 0.5

// msHidden is the number of hidden units of msNet.
const msHidden = 8

// msNet is the speech/music model, its output the log-odds of music: a
// linear function of the standardised features plus one hidden layer of
// tanh units. The hidden units are bounded, so far from anything the model
// was fitted on (a synthetic drum loop, say) the linear part decides,
// and a window that never dips is music whatever else it does.
type msNet struct {
	mean, scale [nMSFeatures]float64
	lin         [nMSFeatures]float64
	w1          [msHidden][nMSFeatures]float64
	b1          [msHidden]float64
	w2          [msHidden]float64
	b2          float64
}

// logit returns the log-odds of music for the features x.
func (m *msNet) logit(x *[nMSFeatures]float64) float64 {
	var z [nMSFeatures]float64
	for i, v := range x {
		z[i] = (v - m.mean[i]) / m.scale[i]
	}
	s := m.b2
	for i, v := range z {
		s += m.lin[i] * v
	}
	for h := range m.w1 {
		a := m.b1[h]
		for i, v := range z {
			a += m.w1[h][i] * v
		}
		s += m.w2[h] * math.Tanh(a)
	}
	return s
}

// evidence returns the speech (positive) or music (negative) evidence of
// every block.
func (r *Result) evidence(nb int) []float64 {
	ev := make([]float64, nb)
	ns := r.feats.len()
	w := &msWindow{r: r}
	// The windows of neighbouring blocks share all but a tenth of their
	// sub-blocks: one window serves evidenceStride blocks, which halves
	// the classifier's cost, and the switches are placed by refineSwitch
	// to the sub-block anyway.
	for b0 := 0; b0 < nb; b0 += evidenceStride {
		e, done := 0.0, false
		for b := b0; b < min(nb, b0+evidenceStride); b++ {
			if !r.sounds(b) {
				continue // silence: no evidence of either
			}
			if !done {
				c := b0 + evidenceStride/2 // the window's centre block
				lo, hi := max(0, (c-evidenceHalf)*SubBlocks), min(ns, (c+evidenceHalf+1)*SubBlocks)
				if x, ok := w.features(lo, hi); ok {
					e = clamp(-msModel.logit(&x), -evidenceCap, evidenceCap)
				}
				done = true
			}
			ev[b] = e
		}
	}
	return ev
}

// sounds reports whether block b holds sound: three of its sub-blocks
// above absoluteGate.
func (r *Result) sounds(b int) bool {
	n := 0
	for j := b * SubBlocks; j < min(r.feats.len(), (b+1)*SubBlocks); j++ {
		if r.feat(j).band > absoluteGate {
			n++
		}
	}
	return n >= 3
}

func clamp(x, lo, hi float64) float64 { return max(lo, min(hi, x)) }

// viterbi returns the cheapest speech/music path through the evidence: a
// block costs |e| when its label disagrees with the sign of its evidence,
// and a switch into block i costs penalty[i]. true is music.
func viterbi(ev []float64, penalty []float64) []bool {
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
			stay, sw := cost[s], cost[1-s]+penalty[i]
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
		music = r.path(nb)
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

// path returns the Viterbi path through the blocks' evidence (true is
// music), a switch costing less inside silence.
func (r *Result) path(nb int) []bool {
	pen := make([]float64, nb)
	for i := range pen {
		pen[i] = switchPenalty
		if i > 0 && !r.sounds(i-1) && !r.sounds(i) {
			pen[i] = silentPenalty
		}
	}
	return viterbi(r.evidence(nb), pen)
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
	w := &msWindow{r: r}
	for i := 1; i <= len(music); i++ {
		if i < len(music) && music[i] == music[i-1] {
			continue
		}
		end := r.Frames
		if i < len(music) {
			end = r.refineSwitch(w, i, music[i])
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
// evidence windows blur a switch over a second or two. Within sideReach of
// it, the switch goes where the window of sideLen before it looks most
// like what comes before the switch and the one after it most like what
// comes after (the difference of the two windows' evidence), and from
// there to the change point of the dips (sideSwitch). msEdge reads the
// music share of the same windows and places the switch where their shares
// say (edgeSwitch, then to the edge of a bed). Where the two lie within
// agreeReach of each other, the first stands: pauses, dips and levels put
// it on the very edge of the music. Where they do not, the rules were led
// astray by what they take for a pause or a change, and the shares decide.
func (r *Result) refineSwitch(w *msWindow, b int, toMusic bool) int64 {
	win := &sideWindows{w: w, ns: r.feats.len(), memo: map[int]int{}}
	j0 := b * SubBlocks
	side := r.sideSwitch(win, j0, toMusic)
	edge, ok := r.edgeSwitch(win, j0, sideReach, toMusic)
	if !ok {
		return r.SubBlockStart(side)
	}
	if edge = r.bedEdge(edge, toMusic); abs(edge-side) > agreeReach {
		return r.SubBlockStart(edge)
	}
	return r.SubBlockStart(side)
}

// agreeReach is how far apart, in sub-blocks, the switches of the side
// windows and of msEdge may lie for the first to stand. On the tuning
// half's programmes, where the two lie within 0.3 s, the first is within
// 0.1 s of the true switch more often than msEdge's (its median error 0.03
// s against 0.15 s); past 0.4 s the first is the one far off more often.
// A variable so that TestFitSwitchEdge can measure the side windows alone.
var agreeReach = 30

// sideWindows holds the features of the windows of sideLen a switch's
// placement reads, each computed once: the window after one candidate is
// the window before another sideLen later, and msEdge reads them all
// again.
type sideWindows struct {
	w    *msWindow
	ns   int
	memo map[int]int // window start -> index into wins
	wins []sideWindow
}

// sideWindow is one window: its sub-blocks [a, b) (cut short at the ends
// of the recording) and its features, when it holds sound enough.
type sideWindow struct {
	a, b int
	x    [nMSFeatures]float64
	ok   bool
}

// at returns the window of sideLen starting at sub-block lo.
func (s *sideWindows) at(lo int) sideWindow {
	if k, ok := s.memo[lo]; ok {
		return s.wins[k]
	}
	v := sideWindow{a: max(0, lo), b: min(s.ns, lo+sideLen)}
	v.x, v.ok = s.w.features(v.a, v.b)
	s.memo[lo] = len(s.wins)
	s.wins = append(s.wins, v)
	return v
}

// sideSwitch returns the sub-block where the side windows place a switch
// at sub-block j0, moved to the change point of the dips (snapSwitch).
func (r *Result) sideSwitch(win *sideWindows, j0 int, toMusic bool) int {
	ns := win.ns
	side := func(lo int) float64 {
		v := win.at(lo)
		if !v.ok {
			return 0
		}
		return clamp(-msModel.logit(&v.x), -sideCap, sideCap)
	}
	score := func(p int) float64 {
		d := side(p-sideLen) - side(p) // speech before, music after
		if !toMusic {
			d = -d
		}
		return d
	}
	lo, hi := max(1, j0-sideReach), min(ns-1, j0+sideReach)
	var scores []float64
	best, at := math.Inf(-1), 0
	for p := lo; p <= hi; p += sideStep {
		s := score(p)
		if s > best {
			best, at = s, len(scores)
		}
		scores = append(scores, s)
	}
	if len(scores) == 0 {
		return j0
	}
	// Where the sides are clear, the score is level over a stretch:
	// take its middle.
	a, e := at, at
	for a > 0 && scores[a-1] >= best-plateauTol {
		a--
	}
	for e+1 < len(scores) && scores[e+1] >= best-plateauTol {
		e++
	}
	bestP := lo + (a+e)/2*sideStep
	coarse := best
	best = math.Inf(-1)
	c := bestP
	for p := max(lo, c-sideStep+1); p <= min(hi, c+sideStep-1); p++ {
		if s := score(p); s > best {
			best, bestP = s, p
		}
	}
	// Where the side windows cannot tell candidates apart, the sound
	// itself changes at the switch.
	a, e = at, at
	for a > 0 && scores[a-1] >= coarse-splitTol {
		a--
	}
	for e+1 < len(scores) && scores[e+1] >= coarse-splitTol {
		e++
	}
	if qlo, qhi := lo+a*sideStep, lo+e*sideStep; qhi > qlo {
		bestP = r.changePoint(max(0, qlo-sideLen), min(ns, qhi+sideLen), qlo, qhi)
	}
	return r.snapSwitch(bestP, snapReach, toMusic)
}

// snapSwitch returns the sub-block of the change point of the dip indicator
// within reach sub-blocks of sub-block j0 (a sub-block is a dip when it is
// inactive or 12 dB below the loudest sub-block within 250 ms): the point
// that best splits the stretch into a dipping (speech) and a steady
// (music) part. A pause between speech and music dips, so the switch
// lands at the music's edge and the pause stays with the speech.
func (r *Result) snapSwitch(j0, reach int, toMusic bool) int {
	const localHalf = 25
	act := r.Activity
	lo, hi := max(0, j0-reach), min(len(act), j0+reach)
	if hi-lo < 2 {
		return j0
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
	// A pause at the switch belongs to the speech: the switch goes to
	// the music's edge of it.
	pause := r.pauses(j0)
	moved := false
	for k := 0; k < pauseReach; k++ {
		if toMusic && bestP < len(act) && pause(bestP) {
			bestP++
		} else if !toMusic && bestP > 0 && pause(bestP-1) {
			bestP--
		} else {
			break
		}
		moved = true
	}
	if !moved {
		bestP = r.nearPause(bestP, toMusic, pause)
	}
	return r.bedEdge(bestP, toMusic)
}

// Bed edge parameters, in sub-blocks and dB.
const (
	bedReach = 200 // how far the music's edge may lie from the switch
	bedRef   = 100 // the stretch of music whose level the bed is held to
	bedMin   = 10  // the shortest bed
	bedStep  = 9.0 // how far the bed's loud parts lie under the music's
	// bedHeld is the share of a bed's sub-blocks that hold sound: a bed
	// goes on under the speech, where the hits of sparse music fall
	// silent between them.
	bedHeld = 0.9
)

// held reports whether bedHeld of the sub-blocks [a, b) hold sound.
func (r *Result) held(a, b int) bool {
	n := 0
	for k := a; k < b; k++ {
		if r.feat(k).band > absoluteGate {
			n++
		}
	}
	return float64(n) >= bedHeld*float64(b-a)
}

// bedEdge returns the music's edge of a quiet stretch next to switch j: a
// bed of music under speech starts where the music drops well under its
// level before (or ends where the music rises from it), and a speech
// clip's lead-in or tail often holds the bed alone. With the bed at least
// bedStep under the music, the bed belongs to the speech it carries, as a
// pause does; otherwise j stays.
//
// A bed goes on under the speech it carries: the speech next to the switch
// holds sound (bedHeld of its sub-blocks over bedRef), where plain speech
// falls silent between phrases. Without that, the quiet stretch is the
// music's own (a piece that ends or starts softly), and j stays. On the
// tuning half's programmes, every bed that moved a switch the right way
// lay next to speech with sound in 92% or more of its sub-blocks; three
// quiet ends of music that moved switches the wrong way (0.3, 0.6 and
// 2.0 s off after) lay next to speech with sound in 44 to 67%.
func (r *Result) bedEdge(j int, toMusic bool) int {
	ns := r.feats.len()
	if toMusic && !r.held(max(0, j-bedRef), j) || !toMusic && !r.held(j, min(ns, j+bedRef)) {
		return j
	}
	level := func(k int) float64 { return float64(r.feat(k).band) }
	// The bed's loud level, that of the 90th percentile, over [a, b).
	var buf []float64
	top := func(a, b int) float64 {
		buf = buf[:0]
		for k := a; k < b; k++ {
			buf = append(buf, level(k))
		}
		return quickselect.Nth(buf, int(0.9*float64(len(buf)-1)))
	}
	best := j
	for d := bedMin; d <= bedReach; d++ {
		var q, bedLo, bedHi, refLo, refHi int
		if toMusic { // bed [j, q), then the music
			q = j + d
			bedLo, bedHi, refLo, refHi = j, q, q, q+bedRef
		} else { // the music, then the bed [q, j)
			q = j - d
			bedLo, bedHi, refLo, refHi = q, j, q-bedRef, q
		}
		if refLo < 0 || refHi > ns {
			break
		}
		if top(bedLo, bedHi) <= top(refLo, refHi)-bedStep && r.held(bedLo, bedHi) {
			best = q
		}
	}
	return best
}

// pauseDB is how far under the loud level around a switch a sub-block
// without voice activity must lie to be a pause: a held note of music
// dies away without activity too, and a switch must not move across it.
const pauseDB = 30.0

// pauseNoiseDB: in a noisy recording a pause lies on the noise floor,
// less than pauseDB under the loud level: a sub-block this close to the
// quietest twentieth around the switch is a pause too.
const pauseNoiseDB = 3.0

// pauses returns whether a sub-block is a pause, near the switch at
// sub-block j: without voice activity and pauseDB under the 90th
// percentile of the levels within sideLen of j, or within pauseNoiseDB of
// their 5th percentile.
func (r *Result) pauses(j int) func(int) bool {
	lo, hi := max(0, j-sideLen), min(r.feats.len(), j+sideLen)
	var lv []float64
	for k := lo; k < hi; k++ {
		lv = append(lv, float64(r.feat(k).band))
	}
	floor := math.Inf(1)
	if n := float64(len(lv) - 1); n >= 0 {
		top := quickselect.Nth(lv, int(0.9*n))
		bottom := quickselect.Nth(lv, int(0.05*n))
		floor = max(top-pauseDB, bottom+pauseNoiseDB)
	}
	return func(k int) bool {
		return !r.Activity[k] && float64(r.feat(k).band) < floor
	}
}

// nearPause returns the music's edge of the pause of gapMin sub-blocks or
// more nearest to sub-block j, when the pause lies within gapReach of it,
// and j otherwise. The side windows judge a window that holds a pause and a
// little of what follows it poorly (the pause alone looks like neither),
// so their switch can land a few tenths of a second inside the speech next
// to the pause that truly separates speech and music.
func (r *Result) nearPause(j int, toMusic bool, pause func(int) bool) int {
	act := r.Activity
	lo, hi := max(0, j-gapReach-gapMin), min(len(act), j+gapReach+gapMin)
	best, at := gapReach+1, j
	for k := lo; k < hi; {
		if !pause(k) {
			k++
			continue
		}
		e := k
		for e < len(act) && pause(e) {
			e++
		}
		if e-k >= gapMin {
			edge := k // the music lies before the pause
			if toMusic {
				edge = e
			}
			d := 0 // how far j lies from the pause
			if j < k {
				d = k - j
			} else if j > e {
				d = j - e
			}
			if d < best {
				best, at = d, edge
			}
		}
		k = e
	}
	return at
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
