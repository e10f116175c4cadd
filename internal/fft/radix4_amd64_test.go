//go:build !purego

package fft

import (
	"math"
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

// The AVX split is the Go loop to the last bit, signed zeros included
// (inputs with zero runs make zero and negative-zero coefficients).
func TestSplitAVXIsGo(t *testing.T) {
	if !useAVX {
		t.Skip("no AVX")
	}
	for _, n := range []int{4, 8, 16, 32, 64, 512, 1024, 2048, 4096} {
		r := NewReal(n)
		for trial := range 3 {
			x := splitInput(n, trial)
			run := func(avx bool) []complex128 {
				defer func(v bool) { useAVX = v }(useAVX)
				useAVX = avx
				c := make([]complex128, n/2+1)
				r.Coefficients(c, x)
				return c
			}
			fast, ref := run(true), run(false)
			for k := range ref {
				if math.Float64bits(real(fast[k])) != math.Float64bits(real(ref[k])) || math.Float64bits(imag(fast[k])) != math.Float64bits(imag(ref[k])) {
					t.Fatalf("n %d trial %d: coefficient %d is %v with AVX, %v in Go", n, trial, k, fast[k], ref[k])
				}
			}
		}
	}
}
