//go:build !purego

package loudness

// The SSE2 stereo kernel of kweight_amd64.s. SSE2 is part of the amd64
// baseline, so it needs no feature check.

//go:noescape
func kstereo(l, r *float64, n int, coef, state, sums *float64)

//go:noescape
func kstereoSq(l, r *float64, n int, coef, state, sums, sq *float64)
