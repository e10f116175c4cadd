package classify

import (
	"math/rand/v2"
	"testing"
)

// TestStepFit: windows read across one switch with shares a little off
// (as msEdge's are) place it within a few sub-blocks, in both directions;
// windows that all read music only place a switch to music at the start
// of the reach.
func TestStepFit(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 0))
	for _, toMusic := range []bool{true, false} {
		for _, truth := range []int{420, 500, 577} {
			var reads []shareRead
			for a := 200; a < 800; a += 4 {
				b := a + sideLen
				share := clamp(float64(b-truth)/sideLen, 0, 1)
				if !toMusic {
					share = 1 - share
				}
				share = clamp(share+0.1*(r.Float64()-0.5), 0, 1)
				reads = append(reads, shareRead{a, b, share})
			}
			got := stepFit(reads, 250, 750, 500, toMusic)
			if got < truth-5 || got > truth+5 {
				t.Errorf("toMusic %v, switch at %d: placed at %d", toMusic, truth, got)
			}
		}
	}
	// Every window reads all music: a switch to music lies before them.
	var reads []shareRead
	for a := 200; a < 800; a += 4 {
		reads = append(reads, shareRead{a, a + sideLen, 1})
	}
	if got := stepFit(reads, 250, 750, 500, true); got != 250 {
		t.Errorf("every window all music: a switch to music placed at %d, want 250 (the reach's start)", got)
	}
}
