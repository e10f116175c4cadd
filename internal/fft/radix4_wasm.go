//go:build wasmsimd && !purego

package fft

import "unsafe"

// The radix-4 pass of the browser build: internal/wasmsimd's radix4
// kernel, one complex128 per f64x2, the Go loop's products and sums in
// their order; so are the gathered first pass and the real split
// (internal/wasmsimd's first2, first4 and split).

const useAVX = false

// useKernels selects the kernels of the first pass and the split; the
// kernel test switches it off to compare with the Go loops.
var useKernels = true

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

//go:wasmimport audiopost_simd split
//go:noescape
func splitKernel(dst, z, tw unsafe.Pointer, m int32)

// splitPairs runs split's whole loop, k from 1 to m/2, by the kernel,
// and returns the first k it left to the Go loop.
func splitPairs(dst, z, tw []complex128, m int) int {
	if !useKernels {
		return 1
	}
	_, _, _ = dst[m-1], z[m-1], tw[m/2]
	splitKernel(unsafe.Pointer(&dst[0]), unsafe.Pointer(&z[0]), unsafe.Pointer(&tw[0]), int32(m))
	return m/2 + 1
}

//go:wasmimport audiopost_simd first2
//go:noescape
func first2Kernel(z, src unsafe.Pointer, rev *int32, h int32)

//go:wasmimport audiopost_simd first4
//go:noescape
func first4Kernel(z, src unsafe.Pointer, rev *int32, q, inverse int32)

// firstPass runs permutedFirst's loop by the kernels: z (length n) from
// src (length n) by rev, the radix-2 pass (radix2) or the trivial
// radix-4 pass.
func firstPass(z, src []complex128, rev []int32, radix2, inverse bool) bool {
	n := len(z)
	if !useKernels || n < 4 {
		return false
	}
	_, _ = src[n-1], rev[n-1]
	if radix2 {
		first2Kernel(unsafe.Pointer(&z[0]), unsafe.Pointer(&src[0]), &rev[0], int32(n/2))
		return true
	}
	var inv int32
	if inverse {
		inv = 1
	}
	first4Kernel(unsafe.Pointer(&z[0]), unsafe.Pointer(&src[0]), &rev[0], int32(n/4), inv)
	return true
}
