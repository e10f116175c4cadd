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
