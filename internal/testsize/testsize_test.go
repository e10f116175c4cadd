package testsize

import (
	"fmt"
	"slices"
	"testing"
)

func TestSpread(t *testing.T) {
	t.Setenv(Env, "")
	all := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}
	for _, tc := range []struct {
		n    int
		want []int
	}{
		{0, []int{}},
		{1, []int{0}},
		{2, []int{0, 9}},
		{3, []int{0, 4, 9}},
		{4, []int{0, 3, 6, 9}},
		{10, all},
		{12, all},
	} {
		if got := Spread(all, tc.n); !slices.Equal(got, tc.want) {
			t.Errorf("Spread(0..9, %d) = %v, want %v", tc.n, got, tc.want)
		}
	}
	t.Setenv(Env, "1")
	if got := Spread(all, 3); !slices.Equal(got, all) {
		t.Errorf("with %s=1: Spread(0..9, 3) = %v, want every point", Env, got)
	}
}

func TestLong(t *testing.T) {
	for v, want := range map[string]bool{"": false, "0": false, "false": false, "1": true, "true": true, "yes": false} {
		t.Setenv(Env, v)
		if Long() != want {
			t.Errorf("%s=%q: Long() = %v, want %v", Env, v, !want, want)
		}
	}
}

// A sweep of twelve loudness targets checked on four: both ends and two
// between. Spread does the same unless AUDIOPOST_LONG=1.
func ExamplePick() {
	targets := []float64{-13, -14, -15, -16, -18, -19, -20, -23, -24, -26, -27, -31}
	fmt.Println(Pick(targets, 4))
	// Output: [-13 -16 -23 -31]
}

func TestSkipRace(t *testing.T) {
	ran := false
	t.Run("sub", func(t *testing.T) {
		SkipRace(t, "under the race detector")
		ran = true
	})
	if ran == Race {
		t.Errorf("SkipRace let the test run: %v, built with -race: %v", ran, Race)
	}
}
