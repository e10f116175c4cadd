package classify

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/audiopost/audiopost/internal/realaudio"
)

// msTuning makes TestSpeechMusicHeldOut measure the tuning half, and more
// programmes made from it, instead of the held-out half:
//
//	go test ./dsp/classify -run TestSpeechMusicHeldOut -v -tuning
var msTuning = flag.Bool("tuning", false, "TestSpeechMusicHeldOut: measure the tuning half instead (to tune on)")

// TestSpeechMusicHeldOut is issue 30's acceptance of the classifier on
// recordings nobody here made: over the held-out half's programmes (real
// speech alternating with real or sampled music of five kinds, some of
// the speech over a music bed 15 dB down, which counts as speech), 95% of
// whole seconds labelled right, and every true switch found within 1 s
// (the nearest switch found). With -switches it logs every switch with its
// material. It skips when the corpus's Debian packages are missing
// (failing under CI).
func TestSpeechMusicHeldOut(t *testing.T) {
	if testing.Short() {
		t.Skip("classifies the held-out programmes; not in -short")
	}
	half := realaudio.HeldOut
	if *msTuning {
		half = realaudio.Tuning
	}
	c := realaudio.Load(t, half)
	acc, all, wrong, switchErrs := programmeScore(t, c)
	worst := slices.Max(switchErrs)
	t.Logf("%s: %.1f%% of %d seconds right (wrong: %s); %d switches, the worst found %.2f s off",
		half, 100*acc, all, wrong, len(switchErrs), worst)
	if *msTuning {
		// More of the same from the tuning half: the measure to tune on.
		// Six programmes alone were a lucky draw (4 switches more than 1 s
		// off of 114, where twelve more programmes have 8 of 228).
		secs, errs := bedScore(t, append(bedProgrammes(c, 6, 1), bedProgrammes(c, 12, 7)...))
		slices.Sort(errs)
		over := len(errs) - sort.SearchFloat64s(errs, 1.0000001)
		t.Logf("tuning, 18 more programmes: %.1f%% of seconds right; %d switches, %d of them more than 1 s off, the 90th percentile %.2f s, the worst %.2f s",
			100*secs, len(errs), over, errs[len(errs)*9/10], errs[len(errs)-1])
	}
	if acc < 0.95 {
		t.Errorf("%.1f%% of seconds right, want >= 95%%", 100*acc)
	}
	if worst > 1 {
		t.Errorf("the worst switch found %.2f s off, want <= 1 s", worst)
	}
}

// programmeScore classifies the corpus half's programmes and returns the
// share of whole seconds right, the number of seconds, the seconds wrong
// by what truly plays, and how far from every true switch the nearest
// switch found lies, in seconds.
func programmeScore(t testing.TB, c *realaudio.Corpus) (acc float64, all int, wrong string, switchErrs []float64) {
	right := 0
	wrongBy := map[string]int{}
	for _, p := range c.Programmes() {
		r := analyse(t, p.Input, Auto)
		truth := make([]bool, len(p.Labels))
		for s, l := range p.Labels {
			truth[s] = l == "music"
		}
		ok, wrong := secondsRight(r, truth)
		right += ok
		all += len(truth)
		for _, s := range wrong {
			mid := s*realaudio.Rate + realaudio.Rate/2
			for _, g := range p.Segments {
				if g.Start <= mid && mid < g.End {
					wrongBy[g.What]++
				}
			}
		}
		var switches []int64
		var parts []string
		for _, g := range p.Segments {
			parts = append(parts, g.What+" "+g.ID)
		}
		for _, g := range p.Segments[1:] {
			switches = append(switches, int64(g.Start))
		}
		switchErrs = append(switchErrs, switchErrors(r, switches)...)
		if *msSwitchLog {
			for _, l := range switchLines(r, switches, parts) {
				t.Logf("%s %s", p.ID, l)
			}
		}
	}
	var kinds []string
	for k, n := range wrongBy {
		kinds = append(kinds, fmt.Sprintf("%s %d s", k, n))
	}
	sort.Strings(kinds)
	return float64(right) / float64(all), all, strings.Join(kinds, ", "), switchErrs
}

// bedProgrammes makes n programmes like the corpus's (Programmes) from
// c's material with the seed: ten speech clips alternating with ten
// excerpts of its music, and half the clips over the piece before them
// going on BedBelowDB under the voice, as a music bed under a lead-in does.
func bedProgrammes(c *realaudio.Corpus, n int, seed uint64) []fitProgramme {
	const fs = realaudio.Rate
	r := rand.New(rand.NewPCG(seed, 0xbed))
	clips := c.Clips()
	var out []fitProgramme
	for range n {
		var x []float64
		var spans []span
		add := func(part []float64, label string) {
			fadeIO(part, fs/50)
			spans = append(spans, span{len(x), len(x) + len(part), label})
			x = append(x, part...)
		}
		var prev realaudio.Music
		prevEnd := 0
		var parts []string
		for i := range 10 {
			cl := clips[r.IntN(len(clips))]
			sp := slices.Clone(cl.Samples)
			what := "speech " + cl.ID
			if i > 0 && r.IntN(2) == 0 {
				what = "speech+bed " + cl.ID + " over " + prev.Kind + " " + prev.ID
				bed := loopFrom(prev.Samples, len(sp), prevEnd)
				g := math.Sqrt(realaudio.ActiveLevel(sp) * math.Pow(10, -realaudio.BedBelowDB/10) / meanSquare(bed))
				for j := range sp {
					sp[j] += g * bed[j]
				}
			}
			add(sp, "speech")
			mu := c.Music[r.IntN(len(c.Music))]
			parts = append(parts, what, mu.Kind+" "+mu.ID)
			off, n := r.IntN(len(mu.Samples)), int((10+5*r.Float64())*fs)
			part := loopFrom(mu.Samples, n, off)
			g := math.Sqrt(math.Pow(10, (realaudio.SpeechDB+6*(r.Float64()-0.5))/10) / realaudio.ActiveLevel(part))
			for j := range part {
				part[j] *= g
			}
			prev, prevEnd = mu, (off+n)%len(mu.Samples)
			add(part, "music")
		}
		p := fitProgramme{x: x, parts: parts}
		p.setTruth(spans)
		out = append(out, p)
	}
	return out
}

// bedScore classifies the programmes and returns the share of seconds
// right and how far from every true switch the nearest found lies.
func bedScore(t testing.TB, ps []fitProgramme) (secs float64, errs []float64) {
	right, all := 0, 0
	for k, p := range ps {
		r := analyse(t, p.x, Auto)
		ok, _ := secondsRight(r, p.seconds)
		right += ok
		all += len(p.seconds)
		errs = append(errs, switchErrors(r, p.switches)...)
		if *msSwitchLog && p.parts != nil {
			for _, l := range switchLines(r, p.switches, p.parts) {
				t.Logf("bed%d %s", k, l)
			}
		}
	}
	return float64(right) / float64(all), errs
}

// msSwitchLog makes TestSpeechMusicHeldOut log every true switch: what
// plays either side, where the switch found lies, where the Viterbi path
// switched before refineSwitch moved it, and how much of the 8 s around it
// is labelled wrong (a switch placed late, or a stretch mislabelled).
var msSwitchLog = flag.Bool("switches", false, "TestSpeechMusicHeldOut: log every switch with its error and material")

// switchLines describes how r found each true switch (frames) between the
// material parts[i] and parts[i+1] (music on the side whose name is not
// speech): the signed error of the switch found nearest (positive: late),
// of the path's switch nearest, and the seconds labelled wrong within 4 s.
func switchLines(r *Result, switches []int64, parts []string) []string {
	fs := float64(r.SampleRate)
	nb := len(r.Labels)
	path := r.path(nb)
	var raw []int64
	for b := 1; b < nb; b++ {
		if path[b] != path[b-1] {
			raw = append(raw, int64(b)*int64(r.BlockLen))
		}
	}
	nearest := func(s int64, at []int64) float64 {
		best := math.Inf(1)
		for _, f := range at {
			if d := float64(f-s) / fs; math.Abs(d) < math.Abs(best) {
				best = d
			}
		}
		return best
	}
	var found []int64
	for _, g := range r.Segments[1:] {
		found = append(found, g.Start)
	}
	isMusic := func(part string) bool { return !strings.HasPrefix(part, "speech") }
	labelAt := func(i int64) bool {
		for _, g := range r.Segments {
			if g.Start <= i && i < g.End {
				return g.Label == Music
			}
		}
		return false
	}
	var out []string
	for k, s := range switches {
		before, after := parts[k], parts[k+1]
		wrong := 0
		step := int64(r.SampleRate / 100)
		for i := max(0, s-4*int64(r.SampleRate)); i < min(r.Frames, s+4*int64(r.SampleRate)); i += step {
			want := isMusic(after)
			if i < s {
				want = isMusic(before)
			}
			if labelAt(i) != want {
				wrong++
			}
		}
		out = append(out, fmt.Sprintf("%7.2f s  found %+6.2f  path %+6.2f  wrong %4.2f s of 8  %s -> %s",
			float64(s)/fs, nearest(s, found), nearest(s, raw), float64(wrong)/100, before, after))
	}
	return out
}
