//go:build !purego

package fft

import "golang.org/x/sys/cpu"

// useAVX selects the AVX radix-4 pass (radix4_amd64.s) where the CPU and
// the operating system support AVX.
var useAVX = cpu.X86.HasAVX

//go:noescape
func radix4AVX(z []complex128, h int, tw []complex128, inverse bool)

// radix4Pass runs a radix-4 pass of span h: the AVX kernel for spans of
// two and more (it takes two k at a time), the Go loop otherwise.
func radix4Pass(z []complex128, h int, tw []complex128, inverse bool) {
	if useAVX && h >= 2 {
		_ = tw[3*h-1]
		radix4AVX(z, h, tw, inverse)
		return
	}
	radix4(z, h, tw, inverse)
}

//go:noescape
func splitAVX(dstLo, dstHi, zLo, zHi, tw *complex128, n int)

// splitPairs runs split's loop for the k from 1 by the AVX kernel in
// pairs while both of a pair lie below m/2, and returns the first k it
// left to the Go loop.
func splitPairs(dst, z, tw []complex128, m int) int {
	n := (m/2 - 1) / 2
	if !useAVX || n == 0 {
		return 1
	}
	_, _, _ = dst[m-1], z[m-1], tw[2*n]
	splitAVX(&dst[1], &dst[m-2], &z[1], &z[m-2], &tw[1], n)
	return 1 + 2*n
}

//go:noescape
func firstRadix2AVX(z, src *complex128, rev *int32, h int)

//go:noescape
func firstRadix4AVX(z, src *complex128, rev *int32, q int, inverse bool)

// firstPass runs permutedFirst's loop with AVX where the CPU has it and
// reports whether it did: z (length n) from src (length n) by rev, the
// radix-2 pass (radix2) or the trivial radix-4 pass.
func firstPass(z, src []complex128, rev []int32, radix2, inverse bool) bool {
	n := len(z)
	if !useAVX || n < 4 {
		return false
	}
	_, _ = src[n-1], rev[n-1]
	if radix2 {
		firstRadix2AVX(&z[0], &src[0], &rev[0], n/2)
	} else {
		firstRadix4AVX(&z[0], &src[0], &rev[0], n/4, inverse)
	}
	return true
}
