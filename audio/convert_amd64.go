//go:build !purego

package audio

// The SSE2 kernels of convert_amd64.s. SSE2 is part of the amd64
// baseline, so they need no feature check.

//go:noescape
func encodeStereo16(dst *byte, l, r *float64, n int) int

//go:noescape
func decodeStereo16(l, r *float64, src *byte, n int)

// encodeStereo16Fast encodes the leading frames of l and r as 16-bit
// interleaved PCM into dst for as long as no sample needs saturation and
// returns how many frames it encoded; the caller's loop does the rest.
func encodeStereo16Fast(dst []byte, l, r []float64) int {
	n := min(len(l), len(r), len(dst)/4)
	if n < 2 {
		return 0
	}
	return encodeStereo16(&dst[0], &l[0], &r[0], n)
}

// decodeStereo16Fast decodes the leading frames of 16-bit interleaved
// src into l and r, an even number of them, and returns how many.
func decodeStereo16Fast(l, r []float64, src []byte) int {
	n := min(len(l), len(r), len(src)/4) &^ 1
	if n == 0 {
		return 0
	}
	decodeStereo16(&l[0], &r[0], &src[0], n)
	return n
}
