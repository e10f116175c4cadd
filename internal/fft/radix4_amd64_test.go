//go:build !purego

package fft

import (
	"math/cmplx"
	"testing"
)

// The AVX pass is the Go pass to the last bit.
func TestRadix4AVXIsGo(t *testing.T) {
	if !useAVX {
		t.Skip("no AVX")
	}
	for _, n := range []int{8, 32, 128, 256, 512, 2048} {
		p := NewComplex(n)
		re, im := noise(n, uint64(n)), noise(n, uint64(n)+1)
		x := make([]complex128, n)
		for i := range x {
			x[i] = complex(re[i], im[i])
		}
		for _, inverse := range []bool{false, true} {
			run := func(avx bool) []complex128 {
				defer func(v bool) { useAVX = v }(useAVX)
				useAVX = avx
				z := append([]complex128(nil), x...)
				if inverse {
					p.Inverse(z)
				} else {
					p.Forward(z)
				}
				return z
			}
			fast, ref := run(true), run(false)
			for i := range ref {
				if fast[i] != ref[i] && !(cmplx.IsNaN(fast[i]) && cmplx.IsNaN(ref[i])) {
					t.Fatalf("n %d inverse %v: bin %d is %v with AVX, %v in Go", n, inverse, i, fast[i], ref[i])
				}
			}
		}
	}
}
