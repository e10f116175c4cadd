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
