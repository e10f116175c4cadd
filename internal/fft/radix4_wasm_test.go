//go:build wasmsimd && !purego

package fft

import (
	"math"
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

// The browser build's first-pass and split kernels are the Go loops to
// the last bit, signed zeros and NaNs included: the coefficients and the
// inverse of noise, of zero runs, of negative zeros and of a NaN, at odd
// and even powers of two (radix-2 and radix-4 first passes).
func TestFirstSplitKernelsAreGo(t *testing.T) {
	same := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) || a != a && b != b }
	for _, n := range []int{4, 8, 16, 32, 64, 512, 1024, 2048, 4096} {
		r := NewReal(n)
		for trial := range 4 {
			x := splitInput(n, trial)
			run := func(kernels bool) ([]complex128, []float64) {
				defer func(v bool) { useKernels = v }(useKernels)
				useKernels = kernels
				c := make([]complex128, n/2+1)
				r.Coefficients(c, x)
				seq := make([]float64, n)
				r.Sequence(seq, c)
				return c, seq
			}
			fc, fs := run(true)
			gc, gs := run(false)
			for k := range gc {
				if !same(real(fc[k]), real(gc[k])) || !same(imag(fc[k]), imag(gc[k])) {
					t.Fatalf("n %d trial %d: coefficient %d is %v by the kernels, %v in Go", n, trial, k, fc[k], gc[k])
				}
			}
			for i := range gs {
				if !same(fs[i], gs[i]) {
					t.Fatalf("n %d trial %d: sample %d is %v by the kernels, %v in Go", n, trial, i, fs[i], gs[i])
				}
			}
		}
	}
}
