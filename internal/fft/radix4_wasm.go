//go:build wasmsimd && !purego

package fft

import "unsafe"

// The radix-4 pass of the browser build: internal/wasmsimd's radix4
// kernel, one complex128 per f64x2, the Go loop's products and sums in
// their order. The first pass and the real split stay Go loops.

const useAVX = false

//go:wasmimport audiopost_simd radix4
//go:noescape
func radix4Kernel(z unsafe.Pointer, blocks, h int32, tw unsafe.Pointer, inverse int32)

// radix4Pass runs radix4 by the kernel.
func radix4Pass(z []complex128, h int, tw []complex128, inverse bool) {
	nb := len(z) / (4 * h)
	if nb == 0 {
		return
	}
	_ = tw[3*h-1]
	var inv int32
	if inverse {
		inv = 1
	}
	radix4Kernel(unsafe.Pointer(&z[0]), int32(nb), int32(h), unsafe.Pointer(&tw[0]), inv)
}

// splitPairs leaves every k to split's Go loop.
func splitPairs(dst, z, tw []complex128, m int) int { return 1 }

// firstPass leaves permutedFirst's loop to Go.
func firstPass(z, src []complex128, rev []int32, radix2, inverse bool) bool { return false }
