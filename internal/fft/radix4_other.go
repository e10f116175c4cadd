//go:build !amd64 || purego

package fft

const useAVX = false

func radix4Pass(z []complex128, h int, tw []complex128, inverse bool) { radix4(z, h, tw, inverse) }
