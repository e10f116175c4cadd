// Package fft is the module's fast Fourier transform: complex and real
// sequences of power-of-two length, with the plan (twiddles, permutation)
// computed once so that transforms allocate nothing.
//
// The complex transform is an in-place radix-4 decimation in time over
// bit-reversed input (one radix-2 pass first when the length is an odd
// power of two), with each pass's twiddles laid out in the order its loop
// reads them. The real transform of n samples packs them into n/2 complex
// values (even samples real, odd imaginary), transforms those and
// separates the spectrum by conjugate symmetry; it packs the samples
// straight into bit-reversed order. On amd64 with AVX the radix-4 passes
// run two butterflies per instruction, bit-identical to the Go loop
// (radix4_amd64.s). A 1024-point real transform takes about a sixth of the
// time of gonum's fftpack, which the classifier and the analyzer called
// tens of thousands of times a minute of audio.
package fft

import (
	"fmt"
	"math"
	"math/bits"
	"unsafe"
)

// Complex is the plan of a complex transform of one power-of-two length.
// A plan holds no state between calls: one plan may serve goroutines
// concurrently.
type Complex struct {
	n      int
	rev    []int32      // the bit-reversed index of each index
	swaps  []int32      // pairs of indices the bit reversal exchanges
	radix2 bool         // one radix-2 pass before the radix-4 passes
	passes []pass       // the radix-4 passes, shortest span first
	tw     []complex128 // forward twiddles of every pass, see pass
	twInv  []complex128 // their conjugates, for the inverse
}

// pass is one radix-4 pass: butterflies over groups of 4h values, with
// the twiddles W^k, W^2k, W^3k (W = exp(-2 pi i/4h)) of k = 0..h-1 at
// tw[off+k], tw[off+h+k] and tw[off+2h+k].
type pass struct{ h, off int }

// NewComplex returns the plan of a complex transform of length n, a power
// of two.
func NewComplex(n int) *Complex {
	if n < 1 || n&(n-1) != 0 {
		panic(fmt.Sprintf("fft: length %d is not a power of two", n))
	}
	p := &Complex{n: n}
	lg := bits.TrailingZeros(uint(n))
	p.rev = make([]int32, n)
	for i := 0; i < n; i++ {
		j := 0
		if lg > 0 {
			j = int(bits.Reverse(uint(i)) >> (bits.UintSize - lg))
		}
		p.rev[i] = int32(j)
		if i < j {
			p.swaps = append(p.swaps, int32(i), int32(j))
		}
	}
	h := 1
	if lg%2 == 1 {
		p.radix2 = true
		h = 2
	}
	for ; 4*h <= n; h *= 4 {
		p.passes = append(p.passes, pass{h: h, off: len(p.tw)})
		for m := 1; m <= 3; m++ {
			for k := 0; k < h; k++ {
				s, c := math.Sincos(-2 * math.Pi * float64(m*k) / float64(4*h))
				p.tw = append(p.tw, complex(c, s))
			}
		}
	}
	p.twInv = make([]complex128, len(p.tw))
	for i, w := range p.tw {
		p.twInv[i] = complex(real(w), -imag(w))
	}
	return p
}

// Len returns the length of the transform.
func (p *Complex) Len() int { return p.n }

// Forward replaces z (length Len) by its discrete Fourier transform,
// Z[k] = sum x[j] exp(-2 pi i jk/n).
func (p *Complex) Forward(z []complex128) { p.transform(z, p.tw, false) }

// Inverse replaces z by its unnormalized inverse transform (the sum with
// exp(+2 pi i jk/n)): Forward then Inverse multiplies by Len.
func (p *Complex) Inverse(z []complex128) { p.transform(z, p.twInv, true) }

func (p *Complex) transform(z []complex128, tw []complex128, inverse bool) {
	n := p.n
	if len(z) != n {
		panic(fmt.Sprintf("fft: %d values for a transform of %d", len(z), n))
	}
	sw := p.swaps
	for i := 0; i+1 < len(sw); i += 2 {
		a, b := sw[i], sw[i+1]
		z[a], z[b] = z[b], z[a]
	}
	p.passesFrom(z, tw, inverse)
}

// passesFrom transforms z, already in bit-reversed order.
func (p *Complex) passesFrom(z []complex128, tw []complex128, inverse bool) {
	n := p.n
	if p.radix2 {
		for j := 0; j+1 < n; j += 2 {
			a, b := z[j], z[j+1]
			z[j], z[j+1] = a+b, a-b
		}
	}
	p.radix4Passes(z, tw, inverse, false)
}

// radix4Passes runs the radix-4 passes, without the first (h = 1) when
// the caller has done it.
func (p *Complex) radix4Passes(z []complex128, tw []complex128, inverse, firstDone bool) {
	for _, ps := range p.passes {
		if ps.h == 1 {
			if !firstDone {
				radix4Trivial(z, inverse)
			}
			continue
		}
		radix4Pass(z, ps.h, tw[ps.off:ps.off+3*ps.h], inverse)
	}
}

// permutedFirst sets z (length Len, at least 2) to src (the same
// length) in bit-reversed order with the first pass (radix-2, or
// radix-4 of span 1) already run, and returns whether it was the radix-4
// one. Each group of that pass is one gather: at j = rev[i], i below
// Len/2 (or Len/4), the bit reversal puts i and i+Len/2 (i, i+Len/2,
// i+Len/4, i+3Len/4), so the pass costs no sweep of its own. The
// butterflies are those of passesFrom and radix4Trivial, operation for
// operation.
func (p *Complex) permutedFirst(z, src []complex128, inverse bool) bool {
	n := p.n
	rev := p.rev[:n:n]
	src = src[:n:n]
	if firstPass(z[:n:n], src, rev, p.radix2, inverse) {
		return !p.radix2
	}
	if p.radix2 {
		h := n / 2
		lo, hi := src[:h:h], src[h:n:n]
		for i, a := range lo {
			b := hi[i]
			j := rev[i]
			z[j], z[j+1] = a+b, a-b
		}
		return false
	}
	q := n / 4
	s0, s1, s2, s3 := src[:q:q], src[q:2*q:2*q], src[2*q:3*q:3*q], src[3*q:n:n]
	for i, x0 := range s0 {
		x1, x2, x3 := s2[i], s1[i], s3[i]
		a0, a1 := x0+x1, x0-x1
		a2, a3 := x2+x3, x2-x3
		r3 := complex(imag(a3), -real(a3))
		if inverse {
			r3 = -r3
		}
		g := z[rev[i] : rev[i]+4 : rev[i]+4]
		g[0], g[1], g[2], g[3] = a0+a2, a1+r3, a0-a2, a1-r3
	}
	return true
}

// radix4Trivial is the first radix-4 pass (h = 1), whose twiddles are all
// one.
func radix4Trivial(z []complex128, inverse bool) {
	for j := 0; j+3 < len(z); j += 4 {
		g := z[j : j+4 : j+4]
		x0, x1, x2, x3 := g[0], g[1], g[2], g[3]
		a0, a1 := x0+x1, x0-x1
		a2, a3 := x2+x3, x2-x3
		// -i*a3 forward, +i*a3 inverse.
		r3 := complex(imag(a3), -real(a3))
		if inverse {
			r3 = -r3
		}
		g[0], g[1], g[2], g[3] = a0+a2, a1+r3, a0-a2, a1-r3
	}
}

// radix4 runs one pass of span h over z.
func radix4(z []complex128, h int, tw []complex128, inverse bool) {
	w1, w2, w3 := tw[:h:h], tw[h:2*h:2*h], tw[2*h:3*h:3*h]
	for j := 0; j+4*h <= len(z); j += 4 * h {
		g0 := z[j : j+h : j+h]
		// Slices of g0's length, which the compiler then knows: the loops
		// below check no index (bounds checks cost WebAssembly, where this
		// loop runs, a fifth of its time).
		g1 := z[j+h : j+2*h : j+2*h][:len(g0)]
		g2 := z[j+2*h : j+3*h : j+3*h][:len(g0)]
		g3 := z[j+3*h : j+4*h : j+4*h][:len(g0)]
		w1, w2, w3 := w1[:len(g0)], w2[:len(g0)], w3[:len(g0)]
		if inverse {
			for k := range g0 {
				x0 := g0[k]
				b1 := g1[k] * w2[k]
				b2 := g2[k] * w1[k]
				b3 := g3[k] * w3[k]
				a0, a1 := x0+b1, x0-b1
				a2, a3 := b2+b3, b2-b3
				r3 := complex(-imag(a3), real(a3)) // +i*a3
				g0[k], g1[k], g2[k], g3[k] = a0+a2, a1+r3, a0-a2, a1-r3
			}
			continue
		}
		for k := range g0 {
			x0 := g0[k]
			b1 := g1[k] * w2[k]
			b2 := g2[k] * w1[k]
			b3 := g3[k] * w3[k]
			a0, a1 := x0+b1, x0-b1
			a2, a3 := b2+b3, b2-b3
			r3 := complex(imag(a3), -real(a3)) // -i*a3
			g0[k], g1[k], g2[k], g3[k] = a0+a2, a1+r3, a0-a2, a1-r3
		}
	}
}

// Real is the plan of a transform of real sequences of one even
// power-of-two length n: n/2+1 coefficients. It holds scratch space, so a
// Real serves one goroutine at a time.
type Real struct {
	n  int
	c  *Complex
	z  []complex128 // n/2 packed samples
	zr []complex128 // Sequence: the merged spectrum before its permutation
	tw []complex128 // exp(-2 pi i k/n), k = 0..n/4
}

// NewReal returns the plan of a real transform of length n, a power of two
// from 2 up.
func NewReal(n int) *Real {
	if n < 2 || n&(n-1) != 0 {
		panic(fmt.Sprintf("fft: real length %d is not a power of two from 2", n))
	}
	r := &Real{n: n, c: NewComplex(n / 2), z: make([]complex128, n/2), zr: make([]complex128, n/2), tw: make([]complex128, n/4+1)}
	for k := range r.tw {
		s, c := math.Sincos(-2 * math.Pi * float64(k) / float64(n))
		r.tw[k] = complex(c, s)
	}
	return r
}

// Len returns the length of the real sequences.
func (r *Real) Len() int { return r.n }

// Coefficients sets dst (length n/2+1) to the transform of the real
// sequence x (length n): dst[k] = sum x[j] exp(-2 pi i jk/n), as gonum's
// fourier.FFT.Coefficients.
func (r *Real) Coefficients(dst []complex128, x []float64) {
	m := r.n / 2
	if len(x) != r.n || len(dst) != m+1 {
		panic(fmt.Sprintf("fft: real transform of %d: %d samples, %d coefficients", r.n, len(x), len(dst)))
	}
	z := r.z[:m:m]
	if m >= 2 {
		// Packed straight into bit-reversed order, through the first pass.
		// x[2i], x[2i+1] as one complex128 (real part first) is the
		// packed value i.
		packed := unsafe.Slice((*complex128)(unsafe.Pointer(unsafe.SliceData(x))), m)
		first := r.c.permutedFirst(z, packed, false)
		r.c.radix4Passes(z, r.c.tw, false, first)
	} else {
		z[0] = complex(x[0], x[1])
	}
	r.split(dst, z)
}

// split separates the spectrum of the real sequence from the transform z
// of its packed samples. With E and O the spectra of the even and odd
// samples, Z[k] = E[k] + iO[k] and conj(Z[m-k]) = E[k] - iO[k], so
// X[k] = E[k] + W^k O[k] and X[m-k] = conj(E[k]) - conj(W^k O[k]).
func (r *Real) split(dst, z []complex128) {
	m := len(z)
	dst = dst[: m+1 : m+1]
	dst[0] = complex(real(z[0])+imag(z[0]), 0)
	dst[m] = complex(real(z[0])-imag(z[0]), 0)
	if m < 2 {
		return
	}
	tw := r.tw[: m/2+1 : m/2+1]
	for k := splitPairs(dst, z, tw, m); k <= m/2; k++ {
		a, b := z[k], z[m-k]
		er, ei := 0.5*(real(a)+real(b)), 0.5*(imag(a)-imag(b))
		or, oi := 0.5*(imag(a)+imag(b)), -0.5*(real(a)-real(b))
		w := tw[k]
		wr, wi := real(w), imag(w)
		tr, ti := wr*or-wi*oi, wr*oi+wi*or
		dst[k] = complex(er+tr, ei+ti)
		dst[m-k] = complex(er-tr, ti-ei)
	}
}

// Sequence sets dst (length n) to the unnormalized inverse transform of
// the coefficients coef (length n/2+1) of a real sequence: n times the
// sequence, as gonum's fourier.FFT.Sequence. The imaginary parts of
// coef[0] and coef[n/2] are ignored.
func (r *Real) Sequence(dst []float64, coef []complex128) {
	m := r.n / 2
	if len(dst) != r.n || len(coef) != m+1 {
		panic(fmt.Sprintf("fft: real transform of %d: %d samples, %d coefficients", r.n, len(dst), len(coef)))
	}
	z := r.z[:m:m]
	zr := r.zr[:m:m]
	r.merge(zr, coef)
	if m >= 2 {
		first := r.c.permutedFirst(z, zr, true)
		r.c.radix4Passes(z, r.c.twInv, true, first)
	} else {
		z[0] = zr[0]
	}
	// The real and imaginary parts in order are the sequence.
	copy(dst[:2*m:2*m], unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(z))), 2*m))
}

// merge is split backwards: E[k] = X[k] + conj X[m-k] and
// O[k] = (X[k] - conj X[m-k]) conj W^k, twice each, Z[k] = E[k] + iO[k]
// and, since E[m-k] = conj E[k] and O[m-k] = conj O[k], Z[m-k] =
// conj E[k] + i conj O[k]. The half-length inverse of the doubled Z is n
// times the sequence.
func (r *Real) merge(z, coef []complex128) {
	m := len(z)
	coef = coef[: m+1 : m+1]
	x0, xm := real(coef[0]), real(coef[m])
	z[0] = complex(x0+xm, x0-xm)
	if m < 2 {
		return
	}
	tw := r.tw[: m/2+1 : m/2+1]
	for k := 1; k <= m/2; k++ {
		a, b := coef[k], coef[m-k]
		er, ei := real(a)+real(b), imag(a)-imag(b)
		dr, di := real(a)-real(b), imag(a)+imag(b)
		w := tw[k]
		wr, wi := real(w), -imag(w)
		or, oi := dr*wr-di*wi, dr*wi+di*wr
		z[k] = complex(er-oi, ei+or)
		z[m-k] = complex(er+oi, or-ei)
	}
}
