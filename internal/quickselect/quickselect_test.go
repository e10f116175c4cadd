package quickselect

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestNthIsSorted: every index of random slices, with duplicates, gives
// the value sorting puts there.
func TestNthIsSorted(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		x := make([]float64, 1+r.IntN(60))
		for i := range x {
			x[i] = float64(r.IntN(12)) - 6
			if trial%2 == 0 {
				x[i] = r.NormFloat64()
			}
		}
		sorted := slices.Sorted(slices.Values(x))
		for k := range x {
			if got := Nth(slices.Clone(x), k); got != sorted[k] {
				t.Fatalf("trial %d: Nth(%d) = %v, sorted %v", trial, k, got, sorted[k])
			}
		}
	}
}

func ExampleNth() {
	x := []float64{7, 1, 9, 3, 5}
	fmt.Println(Nth(x, len(x)/2))
	// Output: 5
}
