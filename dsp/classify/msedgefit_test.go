package classify

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/audiopost/audiopost/internal/realaudio"
)

// Fitting the switch-placing model. msedgemodel.go is written by
//
//	go test ./dsp/classify -run TestFitSwitchEdge -fitedge
//
// from the tuning half only, from the same programmes TestFitSpeechMusic
// fits msModel on (its speech plain or over a bed of its music, ten kinds
// of excerpt starting anywhere in a piece, sparse starts included, two
// pieces at once, low-passed, under noise): every window of edgeLen that
// starts up to edgeLen/2 before a switch's side windows and ends up to
// edgeLen/2 after them, every third sub-block, with the share of the
// window that is music as its target. Before the final fit, a model
// fitted on each half of the material places the switches of the other
// half's programmes: the cross-validated figures the fit logs, beside the
// side windows' on the same programmes.

var fitEdge = flag.Bool("fitedge", false, "TestFitSwitchEdge: fit the switch-placing model on the tuning half and write msedgemodel.go")

// edgeExamples analyses the programmes and returns the windows across
// their switches with their music shares.
func edgeExamples(t testing.TB, ps []fitProgramme) fitSet {
	var set fitSet
	for _, p := range ps {
		r := analyse(t, p.x, Auto)
		w := &msWindow{r: r}
		ns := r.feats.len()
		music := make([]bool, ns)
		for j := range music {
			mid := (r.SubBlockStart(j) + r.SubBlockStart(j+1)) / 2
			music[j] = labelAt(p.spans, int(mid)) == "music"
		}
		for _, s := range p.switches {
			sj := int(s * SubBlocks / int64(r.BlockLen))
			for lo := sj - 3*edgeLen/2; lo <= sj+edgeLen/2; lo += 3 {
				if lo < 0 || lo+edgeLen > ns {
					continue
				}
				x, ok := w.features(lo, lo+edgeLen)
				if !ok {
					continue
				}
				n := 0
				for _, m := range music[lo : lo+edgeLen] {
					if m {
						n++
					}
				}
				set.x = append(set.x, x)
				set.y = append(set.y, float64(n)/edgeLen)
			}
		}
	}
	return set
}

// withEdge runs f with m as the switch-placing model and agree as
// agreeReach.
func withEdge(m msNet, agree int, f func()) {
	saved, savedAgree := msEdge, agreeReach
	msEdge, agreeReach = m, agree
	defer func() { msEdge, agreeReach = saved, savedAgree }()
	f()
}

// switchSummary sums up switch errors (seconds): how many, how many over
// 1 s and over 0.7 s, the 90th percentile and the worst.
func switchSummary(errs []float64) string {
	e := slices.Clone(errs)
	slices.Sort(e)
	over := func(x float64) int { return len(e) - sort.SearchFloat64s(e, x+1e-9) }
	return fmt.Sprintf("%d switches, %d over 1 s, %d over 0.7 s, 90th percentile %.2f s, worst %.2f s",
		len(e), over(1), over(0.7), e[len(e)*9/10], e[len(e)-1])
}

func TestFitSwitchEdge(t *testing.T) {
	if !*fitEdge {
		t.Skip("fits the switch-placing model and writes msedgemodel.go with -fitedge")
	}
	c := realaudio.Load(t, realaudio.Tuning)
	halves := fitHalves(c)
	var check [2][]fitProgramme
	var sets [2]fitSet
	for k := range halves {
		sets[k] = edgeExamples(t, fitProgrammes(halves[k], 12, uint64(k+1), true))
		check[k] = fitProgrammes(halves[k], 6, uint64(k+11), false)
	}
	all := fitSet{x: append(slices.Clone(sets[0].x), sets[1].x...), y: append(slices.Clone(sets[0].y), sets[1].y...)}
	var cv []string
	for k := range 2 {
		var side, edge []float64
		// Switches of the side windows alone: msEdge's never lie that far
		// from theirs.
		withEdge(msEdge, 4*sideReach, func() {
			for _, p := range check[k] {
				side = append(side, switchErrors(analyse(t, p.x, Auto), p.switches)...)
			}
		})
		withEdge(fitNet(sets[1-k], 1), agreeReach, func() {
			for _, p := range check[k] {
				edge = append(edge, switchErrors(analyse(t, p.x, Auto), p.switches)...)
			}
		})
		t.Logf("half %d: side windows %s", k, switchSummary(side))
		t.Logf("half %d: edge model  %s", k, switchSummary(edge))
		cv = append(cv, fmt.Sprintf("%s (the side windows alone: %s)", switchSummary(edge), switchSummary(side)))
	}
	m := fitNet(all, 1)
	doc := fmt.Sprintf("msEdge was fitted on %d windows across the switches of programmes made\nfrom the tuning half of the real-recording corpus (internal/realaudio).\nPlacing the switches of programmes made from each half of that material,\nfitted on the other: %s.", len(all.x), strings.Join(cv, "; "))
	if err := os.WriteFile("msedgemodel.go", modelSource("msEdge", "TestFitSwitchEdge -fitedge", doc, m), 0o644); err != nil {
		t.Fatal(err)
	}
}
