package fft

import (
	"fmt"
	"math"
	"math/cmplx"
	"testing"

	"gonum.org/v1/gonum/dsp/fourier"
)

// dft is the transform by its definition.
func dft(x []complex128, sign float64) []complex128 {
	n := len(x)
	out := make([]complex128, n)
	for k := range out {
		var s complex128
		for j, v := range x {
			s += v * cmplx.Rect(1, sign*2*math.Pi*float64(j*k%n)/float64(n))
		}
		out[k] = s
	}
	return out
}

func noise(n int, seed uint64) []float64 {
	x := make([]float64, n)
	for i := range x {
		seed ^= seed << 13
		seed ^= seed >> 7
		seed ^= seed << 17
		x[i] = float64(seed>>11)/float64(1<<52) - 1
	}
	return x
}

// splitInput is trial input of length n for the tests that hold a kernel
// of the real transform to its Go loop bit for bit: 0 noise, 1 noise with
// zero runs (zero and negative-zero coefficients), 2 negative zeros with
// one 1, 3 noise with a NaN.
func splitInput(n, trial int) []float64 {
	x := noise(n, uint64(n+trial))
	switch trial {
	case 1:
		for i := range x {
			if i%3 != 0 {
				x[i] = 0
			}
		}
	case 2:
		for i := range x {
			x[i] = math.Copysign(0, -1)
		}
		x[n/2] = 1
	case 3:
		x[n/3] = math.NaN()
	}
	return x
}

// maxErr is the largest difference relative to the largest magnitude.
func maxErr(got, want []complex128) float64 {
	var e, m float64
	for i := range want {
		e = max(e, cmplx.Abs(got[i]-want[i]))
		m = max(m, cmplx.Abs(want[i]))
	}
	return e / m
}

func TestComplexMatchesDFT(t *testing.T) {
	for _, n := range []int{1, 2, 4, 8, 16, 32, 64, 128, 512} {
		re, im := noise(n, uint64(n)), noise(n, uint64(3*n+1))
		x := make([]complex128, n)
		for i := range x {
			x[i] = complex(re[i], im[i])
		}
		p := NewComplex(n)
		for _, sign := range []float64{-1, 1} {
			z := append([]complex128(nil), x...)
			if sign < 0 {
				p.Forward(z)
			} else {
				p.Inverse(z)
			}
			if e := maxErr(z, dft(x, sign)); !(e < 1e-13) {
				t.Errorf("n %d sign %v: relative error %g", n, sign, e)
			}
		}
	}
}

func TestRealMatchesGonum(t *testing.T) {
	for _, n := range []int{2, 4, 8, 16, 64, 256, 1024, 2048, 4096} {
		x := noise(n, uint64(n)+5)
		r := NewReal(n)
		g := fourier.NewFFT(n)
		got := make([]complex128, n/2+1)
		r.Coefficients(got, x)
		want := g.Coefficients(nil, x)
		if e := maxErr(got, want); !(e < 1e-13) {
			t.Errorf("n %d: coefficients relative error %g", n, e)
		}
		seq := make([]float64, n)
		r.Sequence(seq, want)
		ref := g.Sequence(nil, want)
		var e, m float64
		for i := range ref {
			e = max(e, math.Abs(seq[i]-ref[i]))
			m = max(m, math.Abs(ref[i]))
		}
		if !(e/m < 1e-13) {
			t.Errorf("n %d: sequence relative error %g", n, e/m)
		}
		// The round trip is n times the input.
		for i := range seq {
			if d := math.Abs(seq[i]/float64(n) - x[i]); d > 1e-13 {
				t.Fatalf("n %d: round trip %d off by %g", n, i, d)
			}
		}
	}
}

func TestRealAllocatesNothing(t *testing.T) {
	r := NewReal(1024)
	x := noise(1024, 9)
	c := make([]complex128, 513)
	if a := testing.AllocsPerRun(10, func() { r.Coefficients(c, x); r.Sequence(x, c) }); a != 0 {
		t.Errorf("%v allocations per transform pair", a)
	}
}

// BenchmarkReal compares the real transform with gonum's fftpack at the
// classifier's and the analyzer's lengths:
//
//	go test -run '^$' -bench . ./internal/fft
func BenchmarkReal(b *testing.B) {
	for _, n := range []int{512, 1024, 4096} {
		x := noise(n, 1)
		c := make([]complex128, n/2+1)
		b.Run(fmt.Sprintf("fft/%d", n), func(b *testing.B) {
			r := NewReal(n)
			for b.Loop() {
				r.Coefficients(c, x)
			}
		})
		b.Run(fmt.Sprintf("gonum/%d", n), func(b *testing.B) {
			g := fourier.NewFFT(n)
			for b.Loop() {
				g.Coefficients(c, x)
			}
		})
		b.Run(fmt.Sprintf("fft-inverse/%d", n), func(b *testing.B) {
			r := NewReal(n)
			for b.Loop() {
				r.Sequence(x, c)
			}
		})
		b.Run(fmt.Sprintf("gonum-inverse/%d", n), func(b *testing.B) {
			g := fourier.NewFFT(n)
			for b.Loop() {
				g.Sequence(x, c)
			}
		})
	}
}

// Coefficients and Sequence, which gather their input straight into the
// first pass, are the plain sequence (permutation, then every pass) to
// the last bit, at odd and even powers of two.
func TestRealFirstPassIsExact(t *testing.T) {
	for _, n := range []int{2, 4, 8, 16, 32, 512, 1024, 2048} {
		r := NewReal(n)
		m := n / 2
		x := noise(n, uint64(n)+11)
		got := make([]complex128, m+1)
		r.Coefficients(got, x)
		z := make([]complex128, m)
		for i, j := range r.c.rev {
			z[j] = complex(x[2*i], x[2*i+1])
		}
		r.c.passesFrom(z, r.c.tw, false)
		want := make([]complex128, m+1)
		r.split(want, z)
		for k := range want {
			if got[k] != want[k] {
				t.Fatalf("n %d: coefficient %d is %v, plainly %v", n, k, got[k], want[k])
			}
		}
		seq := make([]float64, n)
		r.Sequence(seq, want)
		zr := make([]complex128, m)
		r.merge(zr, want)
		for i, j := range r.c.rev {
			z[j] = zr[i]
		}
		r.c.passesFrom(z, r.c.twInv, true)
		for i, v := range z {
			if seq[2*i] != real(v) || seq[2*i+1] != imag(v) {
				t.Fatalf("n %d: samples %d, %d are %v, %v, plainly %v", n, 2*i, 2*i+1, seq[2*i], seq[2*i+1], v)
			}
		}
	}
}
