package benchmarks

import (
	"math"
	"testing"
)

func TestWER(t *testing.T) {
	for _, c := range []struct {
		ref, hyp string
		want     float64
	}{
		{"Please press 1, then #.", "please press one then pound", 0},
		{"the quick brown fox", "the quick brown fox", 0},
		{"the quick brown fox", "the brown fox", 0.25},             // a deletion
		{"the quick brown fox", "the quick brown fox jumps", 0.25}, // an insertion
		{"the quick brown fox", "a quick round fox", 0.5},          // two substitutions
		{"hello world", "<s> hello(2) world </s>", 0},
	} {
		if got := wer(c.ref, c.hyp); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("wer(%q, %q) = %g, want %g", c.ref, c.hyp, got, c.want)
		}
	}
}
