package spectral

import (
	"flag"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

var isoPauseCeil = flag.String("isopause", "", "TestIsoPauseCeiling: comma-separated gates to measure: net (the product), pause<T>h<H>a<A>[*m|>x] (an oracle gate: frames where the clean target is T dB under its 90th percentile frame for H frames before and A after; the product's gains to the floor, times m, or those over x to the floor), b... and bp... (blind gates, isoPauseBlindRe)")

// isoPauseGateRe parses an oracle gate's name (isoPauseCeil).
var isoPauseGateRe = regexp.MustCompile(`^pause(\d+)h(\d+)a(\d+)(?:([*>])([0-9.]+))?$`)

// isoPauseBlindRe parses a blind gate's name (isoPauseCeil): b (the
// level gate) or bp (the pass gate), then any of q<percentile> o<dB over> r<ramp dB> h<hang> a<ahead>
// d<depth> w<window s>, the rest isoPause's defaults (depth 1).
var isoPauseBlindRe = regexp.MustCompile(`^b(p)?(?:q([0-9.]+))?(?:o(-?[0-9.]+))?(?:r([0-9.]+))?(?:h(\d+))?(?:a(\d+))?(?:d([0-9.]+))?(?:w([0-9.]+))?$`)

// blindPause returns the blind gate name sets (nil if name is not one),
// for frames of n every hop at fs, gating frame o once o+ahd has been
// pushed.
func blindPause(name string, n, hop, ahd int) *isoPause {
	m := isoPauseBlindRe.FindStringSubmatch(name)
	if m == nil {
		return nil
	}
	s := newIsoPause(fs, n, hop, ahd)
	s.depth = 1
	if m[1] == "p" {
		s.pass, s.q, s.over = true, 0.9, -25
	}
	m = m[1:]
	f := func(i int, dst *float64, scale float64) {
		if m[i] != "" {
			v, _ := strconv.ParseFloat(m[i], 64)
			*dst = v * scale
		}
	}
	in := func(i int, dst *int) {
		if m[i] != "" {
			*dst, _ = strconv.Atoi(m[i])
		}
	}
	f(1, &s.q, 0.01)
	f(2, &s.over, 1)
	f(3, &s.ramp, 1)
	in(4, &s.hang)
	in(5, &s.ahead)
	f(6, &s.depth, 1)
	if m[7] != "" {
		var sec float64
		f(7, &sec, 1)
		s.win = ahd + int(math.Round(sec*fs/float64(hop)))
		s.lv = make([]float64, s.win+1)
		s.sorted = make([]float64, 0, s.win+1)
	}
	return s
}

// oraclePauses marks the frames of mf where the clean target is silent:
// its power (over the bins, smoothed over 3 frames) under its 90th
// percentile frame's by underDB dB in every frame from f-hang to
// f+ahead, so that a decay survives hang frames and an onset's window
// ahead frames.
func (mf *isoMixFrames) oraclePauses(underDB float64, hang, ahead int) []bool {
	e := make([]float64, mf.frames)
	for f := range e {
		for _, p := range mf.s[f] {
			e[f] += p
		}
	}
	sm := make([]float64, len(e))
	for f := range e {
		sm[f] = (e[max(f-1, 0)] + e[f] + e[min(f+1, len(e)-1)]) / 3
	}
	srt := slices.Clone(e)
	slices.Sort(srt)
	thr := srt[int(0.9*float64(len(srt)-1))] * math.Pow(10, -underDB/10)
	pause := make([]bool, len(e))
	for f := range pause {
		pause[f] = true
		for j := max(f-hang, 0); j <= min(f+ahead, len(e)-1); j++ {
			if sm[j] >= thr {
				pause[f] = false
				break
			}
		}
	}
	return pause
}

// TestIsoPauseCeiling measures, as TestIsolationCeiling does (through the
// product, on the mixes its flags choose: -isoceilval, -isoceilfold), what
// gating the product's gains in the target's pauses is worth: an oracle
// gate from the clean target's own level, and blind gates (isoPause)
// streamed as the isolator would run them (-isopause names the gates):
//
//	go test ./dsp/spectral -run TestIsoPauseCeiling -v -args -isopause net,pause30h5a2,b,bp -isoceilval
//
// Measured: isolate.go's isolator records the figures.
func TestIsoPauseCeiling(t *testing.T) {
	if *isoPauseCeil == "" {
		t.Skip("measures gates of speech isolation's gains in the target's pauses with -isopause")
	}
	names := strings.Split(*isoPauseCeil, ",")
	masks := map[string]func(mf *isoMixFrames) [][]float64{}
	type gate struct {
		under     float64
		hang, ahd int
		op        string
		arg       float64
	}
	gates := map[string]gate{}
	blind := map[string]bool{}
	for _, n := range names {
		masks[n] = nil
		if n == "net" {
			continue
		}
		if blindPause(n, 2048, 512, 48) != nil {
			blind[n] = true
			continue
		}
		m := isoPauseGateRe.FindStringSubmatch(n)
		if m == nil {
			t.Fatalf("-isopause: no gate %q", n)
		}
		var g gate
		g.under, _ = strconv.ParseFloat(m[1], 64)
		g.hang, _ = strconv.Atoi(m[2])
		g.ahd, _ = strconv.Atoi(m[3])
		g.op = m[4]
		g.arg, _ = strconv.ParseFloat(m[5], 64)
		gates[n] = g
	}
	mixes := isoCeilingChosen(t)
	// How the blind gates' pauses meet the oracle's (pause30h5a2): of the
	// oracle's pause frames, the gate's (closed more than half); of the
	// frames of speech, the gate's.
	var mu sync.Mutex
	hits := map[string]*[4]int{} // pause gated, pause, speech gated, speech
	isoCeilingRun(t, mixes, nil, names, masks, func(name string, iso *isolator, mf *isoMixFrames) {
		if blind[name] {
			gate, pushed := blindPause(name, iso.n, iso.hop, iso.L), 0
			iso.mask = func(o int64, dst []float64) {
				for ; pushed <= int(o)+iso.L && pushed < mf.frames; pushed++ {
					gate.push(mf.x[pushed])
				}
				gate.gate(o, dst)
			}
			if gate.pass {
				return // its cue needs the product's gains
			}
			orc := mf.oraclePauses(30, 5, 2)
			sim := blindPause(name, iso.n, iso.hop, iso.L)
			var h [4]int
			one := []float64{1}
			for f := range mf.frames {
				sim.push(mf.x[f])
				if o := f - iso.L; o >= 0 {
					one[0] = 1
					sim.gate(int64(o), one)
					i := 2
					if orc[o] {
						i = 0
					}
					h[i+1]++
					if one[0] < 0.5 {
						h[i]++
					}
				}
			}
			mu.Lock()
			if hits[name] == nil {
				hits[name] = new([4]int)
			}
			for i, v := range h {
				hits[name][i] += v
			}
			mu.Unlock()
			return
		}
		g, ok := gates[name]
		if !ok {
			return
		}
		pause := mf.oraclePauses(g.under, g.hang, g.ahd)
		n := 0
		for _, p := range pause {
			if p {
				n++
			}
		}
		if name == names[len(names)-1] {
			t.Logf("%s: pauses %.0f%% of %d frames", name, 100*float64(n)/float64(len(pause)), len(pause))
		}
		iso.mask = func(o int64, dst []float64) {
			if int(o) >= len(pause) || !pause[o] {
				return
			}
			for k, v := range dst {
				switch {
				case g.op == "*":
					dst[k] = v * g.arg
				case g.op == ">" && v <= g.arg:
				default:
					dst[k] = 0
				}
			}
		}
	})
	for _, n := range names {
		if h := hits[n]; h != nil {
			t.Logf("%-24s gates %.0f%% of the oracle's pause frames, %.1f%% of its speech frames", n, 100*float64(h[0])/float64(max(h[1], 1)), 100*float64(h[2])/float64(max(h[3], 1)))
		}
	}
}

var isoPauseCues = flag.Bool("isopausecues", false, "TestIsoPauseCues: how well cues of the product's gains tell the oracle's pauses")

// TestIsoPauseCues tells, on the mixes TestIsolationCeiling's flags
// choose, how well cues from the product's own per-bin gains g and the
// mixture's power x over 300 Hz - 4 kHz tell the target's pauses
// (oraclePauses 30 dB, hangover 5, 2 ahead): each cue, taken at its
// highest over the frames o-hang..o+1 (the gains are known one frame
// ahead), against thresholds that take 1, 2, 5 and 10% of the frames of
// speech: the share of the pause frames taken.
func TestIsoPauseCues(t *testing.T) {
	if !*isoPauseCues {
		t.Skip("measures pause cues with -isopausecues")
	}
	mixes := isoCeilingChosen(t)
	var mu sync.Mutex
	type rec struct {
		mf *isoMixFrames
		g  [][]float64
	}
	var recs []rec
	names := []string{"net"}
	isoCeilingRun(t, mixes, nil, names, map[string]func(*isoMixFrames) [][]float64{"net": nil}, func(name string, iso *isolator, mf *isoMixFrames) {
		r := rec{mf: mf, g: make([][]float64, mf.frames)}
		iso.mask = func(o int64, g []float64) {
			if int(o) < len(r.g) {
				r.g[o] = slices.Clone(g)
			}
		}
		mu.Lock()
		recs = append(recs, r)
		mu.Unlock()
	})
	hz := float64(fs) / float64(FFTSize(fs))
	k0, k1 := int(math.Ceil(300/hz)), int(4000/hz)
	cues := map[string]func(g, x []float64) float64{
		// the share of the mixture's power the gains pass, dB
		"pass": func(g, x []float64) float64 {
			var a, b float64
			for k := k0; k <= k1; k++ {
				a += g[k] * g[k] * x[k]
				b += x[k]
			}
			return 10 * math.Log10(a/(b+1e-30)+1e-30)
		},
		// the level the gains pass, dB
		"passlvl": func(g, x []float64) float64 {
			var a float64
			for k := k0; k <= k1; k++ {
				a += g[k] * g[k] * x[k]
			}
			return 10 * math.Log10(a+1e-30)
		},
		// the mixture's level, dB
		"mixlvl": func(g, x []float64) float64 {
			var a float64
			for k := k0; k <= k1; k++ {
				a += x[k]
			}
			return 10 * math.Log10(a+1e-30)
		},
		// the mean gain
		"mean": func(g, x []float64) float64 {
			var a float64
			for k := k0; k <= k1; k++ {
				a += g[k]
			}
			return a / float64(k1-k0+1)
		},
		// the share of bins with a gain over 0.5
		"over": func(g, x []float64) float64 {
			var a float64
			for k := k0; k <= k1; k++ {
				if g[k] > 0.5 {
					a++
				}
			}
			return a / float64(k1-k0+1)
		},
	}
	// Levels relative to their own running percentile over the 3 s
	// before: name's base cue and the percentile.
	rel := map[string]struct {
		base string
		q    float64
	}{"passhi": {"passlvl", 0.9}, "passmid": {"passlvl", 0.5}, "mixhi": {"mixlvl", 0.9}, "mixlo": {"mixlvl", 0.1}}
	for n := range rel {
		cues[n] = nil
	}
	// Cues of the mixture's pitch (isoFront's, per frame): its
	// harmonicity, and how near its pitch is to the median pitch of the
	// harmonic frames (over 0.5) of the 3 s before (the target's, if it
	// is the dominant voice most of the time); 0 on a frame without one.
	whole := map[string]func(mf *isoMixFrames) []float64{
		"harm": func(mf *isoMixFrames) []float64 { return slices.Clone(mf.harm) },
		"pitchnear": func(mf *isoMixFrames) []float64 {
			v := make([]float64, mf.frames)
			for o := range v {
				if mf.lag[o] == 0 || mf.harm[o] < 0.5 {
					continue
				}
				var past []float64
				for j := max(o-281, 0); j < o; j++ {
					if mf.lag[j] > 0 && mf.harm[j] >= 0.5 {
						past = append(past, math.Log2(float64(mf.lag[j])))
					}
				}
				if len(past) < 20 {
					continue
				}
				slices.Sort(past)
				v[o] = -math.Abs(math.Log2(float64(mf.lag[o])) - past[len(past)/2])
			}
			return v
		},
	}
	for n := range whole {
		cues[n] = nil
	}
	const past = 281
	for _, kind := range []string{"babble", "music"} {
		for _, name := range slices.Sorted(maps.Keys(cues)) {
			for _, hang := range []int{5, 9} {
				var sp, pa []float64
				for _, r := range recs {
					if r.mf.kind != kind {
						continue
					}
					orc := r.mf.oraclePauses(30, 5, 2)
					v := make([]float64, r.mf.frames)
					cue := cues[name]
					if rl, ok := rel[name]; ok {
						cue = cues[rl.base]
					}
					for o := range v {
						v[o] = math.Inf(-1)
						if r.g[o] != nil && cue != nil {
							v[o] = cue(r.g[o], r.mf.x[o])
						}
					}
					if wc := whole[name]; wc != nil {
						v = wc(r.mf)
					}
					if rl, ok := rel[name]; ok {
						raw := slices.Clone(v)
						for o := range v {
							w := slices.Clone(raw[max(o-past, 0):min(o+2, len(raw))])
							slices.Sort(w)
							v[o] = raw[o] - w[int(rl.q*float64(len(w)-1))]
						}
					}
					for o := range v {
						m := math.Inf(-1)
						for j := max(o-hang, 0); j <= min(o+1, len(v)-1); j++ {
							m = max(m, v[j])
						}
						if r.g[o] == nil {
							continue
						}
						if orc[o] {
							pa = append(pa, m)
						} else {
							sp = append(sp, m)
						}
					}
				}
				slices.Sort(sp)
				var parts []string
				for _, share := range []float64{0.01, 0.02, 0.05, 0.1} {
					thr := sp[int(share*float64(len(sp)-1))]
					n := 0
					for _, v := range pa {
						if v < thr {
							n++
						}
					}
					parts = append(parts, fmt.Sprintf("%g%%: %.3g takes %.0f%%", 100*share, thr, 100*float64(n)/float64(max(len(pa), 1))))
				}
				t.Logf("%s %-5s hang %d (%d pause, %d speech frames): %s", kind, name, hang, len(pa), len(sp), strings.Join(parts, ", "))
			}
		}
	}
}

// isoPause is a blind gate of the product's gains in the target's pauses,
// streamed as the isolator would run it: frames are pushed as the
// isolator takes them (their power, the mean of the channels) and frame
// o is gated once frame o+ahd has been pushed, between the per-bin
// stage and the floor (TestIsoPauseCeiling sets it as the isolator's
// mask). Its cue is either the mixture's level over 300 Hz - 4 kHz
// against the bed (the q-th percentile of the levels of the window, 3 s
// before and the look-ahead), or (pass) the level the product's gains
// pass against its own q-th percentile over the window's past (the
// target's active level). Neither was kept: isolate.go's isolator
// records the figures.
type isoPause struct {
	k0, k1      int     // the bins of the level: 300 Hz to 4 kHz
	win         int     // frames of the bed's window, up to the newest
	q           float64 // the bed's percentile, 0 to 1
	over, ramp  float64 // dB over the bed where the gate starts to open, and the dB more to open in full
	hang, ahead int     // frames the gate stays open after a frame of speech, and opens before one
	depth       float64 // the share of the gains a pause takes
	ahd         int     // frames known after the frame gated
	// pass: the cue is the level the gains pass (300 Hz - 4 kHz) against
	// its q-th percentile over the window's past, not the mixture's
	// level against the bed.
	pass        bool
	x           [][]float64 // ring: the frames' power, bins k0..k1
	pl, psorted []float64   // ring: the level the gains passed; the window's, sorted
	lv          []float64
	sorted      []float64
	next        int64
	open        []float64 // scratch: each frame's openness from o-hang-1 to o+ahead+1
}

// newIsoPause returns the gate for frames of n at sampleRate every hop,
// whose frame o is gated once frame o+ahd has been pushed.
func newIsoPause(sampleRate, n, hop, ahd int) *isoPause {
	hz := float64(sampleRate) / float64(n)
	fps := float64(sampleRate) / float64(hop)
	s := &isoPause{
		k0: int(math.Ceil(300 / hz)), k1: min(n/2, int(4000/hz)),
		q: 0.1, over: 3, ramp: 3, hang: 8, ahead: 2, depth: 0, ahd: ahd,
	}
	s.win = ahd + int(math.Round(3*fps))
	s.lv = make([]float64, s.win+1)
	s.sorted = make([]float64, 0, s.win+1)
	return s
}

// push enters the next frame's power spectrum.
func (s *isoPause) push(p []float64) {
	var e float64
	for _, v := range p[s.k0 : s.k1+1] {
		e += v
	}
	l := 10 * math.Log10(e+1e-30)
	R := int64(len(s.lv))
	if s.next >= int64(s.win) {
		old := s.lv[(s.next-int64(s.win))%R]
		i, _ := slices.BinarySearch(s.sorted, old)
		s.sorted = slices.Delete(s.sorted, i, i+1)
	}
	s.lv[s.next%R] = l
	if s.pass {
		if s.x == nil {
			s.x = make([][]float64, R)
			s.pl = make([]float64, R)
		}
		s.x[s.next%R] = append(s.x[s.next%R][:0], p[s.k0:s.k1+1]...)
	}
	i, _ := slices.BinarySearch(s.sorted, l)
	s.sorted = slices.Insert(s.sorted, i, l)
	s.next++
}

// level is frame j's level smoothed over three frames (the frames before
// the first are digital silence).
func (s *isoPause) level(j int64) float64 {
	R := int64(len(s.lv))
	var e float64
	for i := j - 1; i <= j+1; i++ {
		if i >= 0 {
			e += math.Pow(10, s.lv[i%R]/10)
		}
	}
	return 10 * math.Log10(e/3+1e-30)
}

// gate scales the gains g of frame o towards 0 in a pause.
func (s *isoPause) gate(o int64, g []float64) {
	if s.depth <= 0 {
		return
	}
	if s.pass {
		s.gatePass(o, g)
		return
	}
	bed := s.sorted[int(s.q*float64(len(s.sorted)-1))]
	n := s.hang + s.ahead + 3
	if cap(s.open) < n {
		s.open = make([]float64, n)
	}
	op := s.open[:n]
	for i := range op {
		j := o - int64(s.hang) - 1 + int64(i)
		op[i] = min(1, max(0, (s.level(j)-bed-s.over)/s.ramp))
	}
	// The gate of o-1, o and o+1, each the most open over its hangover
	// and look-ahead, averaged: a crossfade over three frames.
	var w float64
	for d := range 3 {
		m := 0.0
		for _, v := range op[d : d+s.hang+s.ahead+1] {
			m = max(m, v)
		}
		w += m / 3
	}
	if w >= 1 {
		return
	}
	k := 1 - s.depth*(1-w)
	for i := range g {
		g[i] *= k
	}
}

// gatePass is gate by the level the gains pass.
func (s *isoPause) gatePass(o int64, g []float64) {
	R := int64(len(s.lv))
	var e float64
	for i, v := range s.x[o%R] {
		k := s.k0 + i
		e += g[k] * g[k] * v
	}
	l := 10 * math.Log10(e+1e-30)
	if o >= int64(s.win) {
		old := s.pl[(o-int64(s.win))%R]
		i, _ := slices.BinarySearch(s.psorted, old)
		s.psorted = slices.Delete(s.psorted, i, i+1)
	}
	s.pl[o%R] = l
	i, _ := slices.BinarySearch(s.psorted, l)
	s.psorted = slices.Insert(s.psorted, i, l)
	top := s.psorted[int(s.q*float64(len(s.psorted)-1))]
	w := 0.0
	for j := max(o-int64(s.hang), 0); j <= o; j++ {
		w = max(w, min(1, max(0, (s.pl[j%R]-top-s.over)/s.ramp)))
	}
	k := 1 - s.depth*(1-w)
	for i := range g {
		g[i] *= k
	}
}
