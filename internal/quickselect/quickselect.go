// Package quickselect finds order statistics (the median, a percentile)
// of a slice in linear expected time, without sorting it.
package quickselect

import "cmp"

// Nth returns the value slices.Sort would put at index k of x (NaNs
// before all numbers), reordering x: quickselect, in linear expected time.
// Values equal under that order (a number and itself, +0 and -0, NaNs)
// may come from either element.
func Nth(x []float64, k int) float64 {
	lo, hi := 0, len(x)-1
	for lo < hi {
		// Median of three as the pivot, then Hoare's partition.
		m := lo + (hi-lo)/2
		if cmp.Less(x[m], x[lo]) {
			x[m], x[lo] = x[lo], x[m]
		}
		if cmp.Less(x[hi], x[lo]) {
			x[hi], x[lo] = x[lo], x[hi]
		}
		if cmp.Less(x[hi], x[m]) {
			x[hi], x[m] = x[m], x[hi]
		}
		p := x[m]
		i, j := lo, hi
		for i <= j {
			for cmp.Less(x[i], p) {
				i++
			}
			for cmp.Less(p, x[j]) {
				j--
			}
			if i <= j {
				x[i], x[j] = x[j], x[i]
				i++
				j--
			}
		}
		// x[lo..j] <= p <= x[i..hi], and x[j+1..i-1] equal p.
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return x[k]
		}
	}
	return x[k]
}
