//go:build wasmsimd && !purego

package fft

import (
	"math/cmplx"
	"testing"
)

// The browser build's radix-4 kernel is the Go pass to the last bit.
func TestRadix4KernelIsGo(t *testing.T) {
	for _, n := range []int{8, 32, 128, 256, 512, 2048} {
		p := NewComplex(n)
		re, im := noise(n, uint64(n)), noise(n, uint64(n)+1)
		for _, inverse := range []bool{false, true} {
			for _, ps := range p.passes {
				tw := p.tw
				if inverse {
					tw = p.twInv
				}
				x := make([]complex128, n)
				for i := range x {
					x[i] = complex(re[i], im[i])
				}
				ref := append([]complex128(nil), x...)
				radix4(ref, ps.h, tw[ps.off:ps.off+3*ps.h], inverse)
				radix4Pass(x, ps.h, tw[ps.off:ps.off+3*ps.h], inverse)
				for i := range ref {
					if x[i] != ref[i] && !(cmplx.IsNaN(x[i]) && cmplx.IsNaN(ref[i])) {
						t.Fatalf("n %d h %d inverse %v: bin %d is %v by the kernel, %v in Go", n, ps.h, inverse, i, x[i], ref[i])
					}
				}
			}
		}
	}
}
