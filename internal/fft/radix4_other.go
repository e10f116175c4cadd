//go:build (!amd64 && !(wasm && wasmsimd)) || purego

package fft

const useAVX = false

func radix4Pass(z []complex128, h int, tw []complex128, inverse bool) { radix4(z, h, tw, inverse) }

// splitPairs leaves every k to split's Go loop.
func splitPairs(dst, z, tw []complex128, m int) int { return 1 }

// firstPass leaves permutedFirst's loop to Go.
func firstPass(z, src []complex128, rev []int32, radix2, inverse bool) bool { return false }
