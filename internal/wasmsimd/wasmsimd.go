// Package wasmsimd writes the WebAssembly module of SIMD kernels that the
// browser build of the engine calls in place of its hottest Go loops.
//
// Go compiles no SIMD for WebAssembly, and its WebAssembly runs the
// recursive filters' loops several times slower than its amd64 code. The
// kernels here are those of the amd64 assembly (dsp's stereo biquad
// cascade, loudness's K-weighting, true-peak interpolator and largest
// |sample|, the FFT's passes and real split, the classifier's whitening,
// 16-bit decoding and encoding) and more hot loops of dsp, dsp/classify
// and production/artwork (the gain plans' ramp and constant gain, the
// limiter's per-frame peak, stretch maxima, required gain and output, the analysis's
// stereo levels, the classifier's downmix, windowing and power spectrum, the
// waveform's bounds), written for
// WebAssembly's 128-bit SIMD: the left and right samples of a frame share
// the two f64x2 lanes of the filters, four outputs the f32x4 lanes of the
// interpolator, a complex128 the two lanes of the FFT, and every lane
// performs the Go loop's IEEE operations in its order, so the results are
// bit-identical to the Go loops, as the amd64 kernels' are. One kernel
// is scalar: the classifier's decimation filter, a recursion whose states
// Go's WebAssembly keeps in memory and the kernel in locals.
//
// Each call goes from the engine through a JavaScript function to the
// kernel, about 0.2 µs under Node.js: a kernel pays off on a block of
// samples, not on a step of a few.
//
// The engine declares the kernels with //go:wasmimport under the module
// name [Import] when built with the build tag wasmsimd (the browser
// build sets it); the host instantiates this module over the engine's
// memory, exported by Go as "mem", and gives the engine functions that
// call its exports. Without the tag the engine runs its Go loops.
package wasmsimd

import (
	_ "embed"
	"math"
)

// Import is the module name under which the engine imports the kernels.
const Import = "audiopost_simd"

// Module returns the kernels as a WebAssembly binary module that imports
// its memory as env.mem and exports each kernel under the name the
// engine imports it by.
func Module() []byte {
	fns := []*fn{}
	for k := 1; k <= 4; k++ {
		fns = append(fns, stereoBiquad(k))
	}
	fns = append(fns, kweight(false), kweight(true), peaks3(), absMax(), decode16(), ramp(), limPeaks(), radix4(), whiten(), normalise(), first2(), first4(), split(), bounds(), encode16(), mono2(), antiAlias(), scaleBy(), mulTo(), needGain(), power(), levels2(), spanMax(), winSq())
	return module(fns)
}

// Names returns the exported kernels' names.
func Names() []string {
	return []string{"stereo1", "stereo2", "stereo3", "stereo4", "kstereo", "kstereoSq", "peaks3", "absMax", "decode16", "ramp", "limPeaks", "radix4", "whiten", "normalise", "first2", "first4", "split", "bounds", "encode16", "mono2", "antiAlias", "scaleBy", "mulTo", "needGain", "power", "levels2", "spanMax", "winSq"}
}

// stereoBiquad is dsp's stereoK(l, r *float64, n int, coef, z *float64):
// k biquad sections in series over a stereo block in place. coef:
// antiDenormal twice, then per section b0, b1, b2, a1, a2, each twice;
// z: per section z1 (left, right), z2 (left, right). Each section is
// y = b0*x + z1; z1 = b1*x + z2 - a1*y; z2 = b2*x - a2*y, with
// antiDenormal added to each section's input.
func stereoBiquad(k int) *fn {
	f := &fn{name: "stereo" + string(rune('0'+k)), params: 5}
	const l, r, n, coef, z = 0, 1, 2, 3, 4
	ad := f.local(v128)
	x := f.local(v128)
	y := f.local(v128)
	var c [4][5]uint32
	var s [4][2]uint32
	f.get(coef)
	f.vload(0)
	f.set(ad)
	for j := range k {
		for i := range 5 {
			c[j][i] = f.local(v128)
			f.get(coef)
			f.vload(uint32(16 + 80*j + 16*i))
			f.set(c[j][i])
		}
		for i := range 2 {
			s[j][i] = f.local(v128)
			f.get(z)
			f.vload(uint32(32*j + 16*i))
			f.set(s[j][i])
		}
	}
	f.block()
	f.get(n)
	f.i32c(0)
	f.i32leS()
	f.brIf(0)
	f.loop()
	// x = (l[i], r[i]) + antiDenormal
	f.get(r)
	f.get(l)
	f.load64zero(0)
	f.load64lane(0, 1)
	f.get(ad)
	f.f64x2add()
	f.set(x)
	for j := range k {
		if j > 0 {
			f.get(x)
			f.get(ad)
			f.f64x2add()
			f.set(x)
		}
		b0, b1, b2, a1, a2 := c[j][0], c[j][1], c[j][2], c[j][3], c[j][4]
		z1, z2 := s[j][0], s[j][1]
		// y = b0*x + z1
		f.get(x)
		f.get(b0)
		f.f64x2mul()
		f.get(z1)
		f.f64x2add()
		f.set(y)
		// z1 = (b1*x + z2) - a1*y
		f.get(x)
		f.get(b1)
		f.f64x2mul()
		f.get(z2)
		f.f64x2add()
		f.get(y)
		f.get(a1)
		f.f64x2mul()
		f.f64x2sub()
		f.set(z1)
		// z2 = b2*x - a2*y
		f.get(x)
		f.get(b2)
		f.f64x2mul()
		f.get(y)
		f.get(a2)
		f.f64x2mul()
		f.f64x2sub()
		f.set(z2)
		f.get(y)
		f.set(x)
	}
	f.get(l)
	f.get(x)
	f.store64lane(0, 0)
	f.get(r)
	f.get(x)
	f.store64lane(0, 1)
	f.addTo(l, 8)
	f.addTo(r, 8)
	f.get(n)
	f.i32c(1)
	f.i32sub()
	f.tee(n)
	f.i32c(0)
	f.i32gtS()
	f.brIf(0)
	f.end()
	f.end()
	for j := range k {
		for i := range 2 {
			f.get(z)
			f.get(s[j][i])
			f.vstore(uint32(32*j + 16*i))
		}
	}
	return f
}

// kweight is loudness's kstereo(l, r *float64, n int, coef, state, sums
// *float64), or with sq kstereoSq(..., sums, sq *float64): the
// K-weighting filter of both channels over a block, returning the sums of
// the squared outputs (and, for kstereoSq, adding the input's squares into
// sq's alternating pair of sums, which swap every frame). coef: shelf b0,
// b1, b2, a1, a2, RLB b0, a1, a2, each twice; state: x1, x2, y1, y2, z1,
// z2, each (left, right).
func kweight(sq bool) *fn {
	f := &fn{name: "kstereo", params: 6}
	if sq {
		f.name, f.params = "kstereoSq", 7
	}
	const l, r, n, coef, state, sums, sqp = 0, 1, 2, 3, 4, 5, 6
	var c [8]uint32
	for i := range c {
		c[i] = f.local(v128)
		f.get(coef)
		f.vload(uint32(16 * i))
		f.set(c[i])
	}
	var h [6]uint32 // x1, x2, y1, y2, z1, z2
	for i := range h {
		h[i] = f.local(v128)
		f.get(state)
		f.vload(uint32(16 * i))
		f.set(h[i])
	}
	x1, x2, y1, y2, z1, z2 := h[0], h[1], h[2], h[3], h[4], h[5]
	sum := f.local(v128) // zero
	v := f.local(v128)
	y := f.local(v128)
	zz := f.local(v128)
	var cur, other, t uint32
	if sq {
		cur, other, t = f.local(v128), f.local(v128), f.local(v128)
		f.get(sqp)
		f.vload(0)
		f.set(cur)
		f.get(sqp)
		f.vload(16)
		f.set(other)
	}
	f.block()
	f.get(n)
	f.i32c(0)
	f.i32leS()
	f.brIf(0)
	f.loop()
	f.get(r)
	f.get(l)
	f.load64zero(0)
	f.load64lane(0, 1)
	f.set(v)
	if sq {
		// cur += v*v, then swap cur and other
		f.get(v)
		f.get(v)
		f.f64x2mul()
		f.get(cur)
		f.f64x2add()
		f.set(t)
		f.get(other)
		f.set(cur)
		f.get(t)
		f.set(other)
	}
	// y = (((b0*v + b1*x1) + b2*x2) - a2*y2) - a1*y1
	f.get(v)
	f.get(c[0])
	f.f64x2mul()
	f.get(x1)
	f.get(c[1])
	f.f64x2mul()
	f.f64x2add()
	f.get(x2)
	f.get(c[2])
	f.f64x2mul()
	f.f64x2add()
	f.get(y2)
	f.get(c[4])
	f.f64x2mul()
	f.f64x2sub()
	f.get(y1)
	f.get(c[3])
	f.f64x2mul()
	f.f64x2sub()
	f.set(y)
	// z = ((rb0*((y+y2) - (y1+y1))) - ra2*z2) - ra1*z1
	f.get(y)
	f.get(y2)
	f.f64x2add()
	f.get(y1)
	f.get(y1)
	f.f64x2add()
	f.f64x2sub()
	f.get(c[5])
	f.f64x2mul()
	f.get(z2)
	f.get(c[7])
	f.f64x2mul()
	f.f64x2sub()
	f.get(z1)
	f.get(c[6])
	f.f64x2mul()
	f.f64x2sub()
	f.set(zz)
	// shift the histories, add z*z
	f.get(x1)
	f.set(x2)
	f.get(v)
	f.set(x1)
	f.get(y1)
	f.set(y2)
	f.get(y)
	f.set(y1)
	f.get(z1)
	f.set(z2)
	f.get(zz)
	f.set(z1)
	f.get(zz)
	f.get(zz)
	f.f64x2mul()
	f.get(sum)
	f.f64x2add()
	f.set(sum)
	f.addTo(l, 8)
	f.addTo(r, 8)
	f.get(n)
	f.i32c(1)
	f.i32sub()
	f.tee(n)
	f.i32c(0)
	f.i32gtS()
	f.brIf(0)
	f.end()
	f.end()
	if sq {
		f.get(sqp)
		f.get(cur)
		f.vstore(0)
		f.get(sqp)
		f.get(other)
		f.vstore(16)
	}
	for i, hi := range h {
		f.get(state)
		f.get(hi)
		f.vstore(uint32(16 * i))
	}
	f.get(sums)
	f.get(sum)
	f.vstore(0)
	return f
}

// LinkJS is the JavaScript that links the kernels to the engine:
// audiopostSIMD(importObject, kernels), where kernels is the compiled
// [Module], adds the imports to a Go importObject and returns the
// function to call with the engine's instance before go.run.
//
//go:embed link.js
var LinkJS []byte

// peaks3 is loudness's peaks3(wide *[3][12][8]float32, buf *float32, n
// int, hilo *[8]float32): the three branches of the 4x true-peak
// interpolator over n outputs (a multiple of four), four outputs per
// f32x4, each the twelve-tap sum of branchPeak in its tree order; hilo
// receives the lanes' largest (0..3) and smallest (4..7) outputs over
// the three branches, from +0, by branchPeak's comparisons. wide holds
// each tap eight times (for the amd64 kernel's eight lanes); four are
// loaded.
func peaks3() *fn {
	const taps = 12
	f := &fn{name: "peaks3", params: 4}
	const wide, buf, n, hilo = 0, 1, 2, 3
	var t [3][taps]uint32
	for p := range t {
		for k := range t[p] {
			t[p][k] = f.local(v128)
			f.get(wide)
			f.vload(uint32(32 * (p*taps + k)))
			f.set(t[p][k])
		}
	}
	hi, lo, y := f.local(v128), f.local(v128), f.local(v128) // +0
	var w [taps]uint32
	for k := range w {
		w[k] = f.local(v128)
	}
	f.block()
	f.get(n)
	f.i32c(0)
	f.i32leS()
	f.brIf(0)
	f.loop()
	// w[k] holds the samples at buf[i+k .. i+k+4): tap k of outputs i..i+3.
	for k := range w {
		f.get(buf)
		f.vload(uint32(4 * k))
		f.set(w[k])
	}
	for p := range t {
		pair := func(k int) { // t[k]*w[k] + t[k+1]*w[k+1]
			for _, j := range []int{k, k + 1} {
				f.get(t[p][j])
				f.get(w[j])
				f.f32x4mul()
			}
			f.f32x4add()
		}
		quad := func(k int) {
			pair(k)
			pair(k + 2)
			f.f32x4add()
		}
		// y = (quad(0) + quad(4)) + quad(8)
		quad(0)
		quad(4)
		f.f32x4add()
		quad(8)
		f.f32x4add()
		f.set(y)
		f.get(hi)
		f.get(y)
		f.f32x4pmax()
		f.set(hi)
		f.get(lo)
		f.get(y)
		f.f32x4pmin()
		f.set(lo)
	}
	f.addTo(buf, 16)
	f.get(n)
	f.i32c(4)
	f.i32sub()
	f.tee(n)
	f.i32c(0)
	f.i32gtS()
	f.brIf(0)
	f.end()
	f.end()
	f.get(hilo)
	f.get(hi)
	f.vstore(0)
	f.get(hilo)
	f.get(lo)
	f.vstore(16)
	return f
}

// absMax is loudness's absMax(x *float64, n int, out *uint64): the
// largest of the n values' bit patterns with the sign bit cleared (n
// even), absMaxGoBits's integer maximum, into *out. Cleared of their
// sign, the patterns order the same as signed integers.
func absMax() *fn {
	f := &fn{name: "absMax", params: 3}
	const x, n, out = 0, 1, 2
	m, a := f.local(v128), f.local(v128) // zero
	f.block()
	f.get(n)
	f.i32c(0)
	f.i32leS()
	f.brIf(0)
	f.loop()
	f.get(x)
	f.vload(0)
	f.f64x2abs()
	f.set(a)
	// m = a > m ? a : m, lane by lane
	f.get(a)
	f.get(m)
	f.get(a)
	f.get(m)
	f.i64x2gtS()
	f.bitselect()
	f.set(m)
	f.addTo(x, 16)
	f.get(n)
	f.i32c(2)
	f.i32sub()
	f.tee(n)
	f.i32c(0)
	f.i32gtS()
	f.brIf(0)
	f.end()
	f.end()
	f.get(out)
	f.get(m)
	f.vstore(0)
	return f
}

// decode16 is audio's decodeStereo16(l, r *float64, src *byte, n int):
// n frames of 16-bit little-endian interleaved stereo into l and r, each
// sample float64(int16) * 2^-15, as the Go loop (exact: the conversion
// and the power of two).
func decode16() *fn {
	f := &fn{name: "decode16", params: 4}
	const l, r, src, n = 0, 1, 2, 3
	scale, v := f.local(v128), f.local(v128)
	f.splatF64(1.0 / 32768)
	f.set(scale)
	f.block()
	f.get(n)
	f.i32c(0)
	f.i32leS()
	f.brIf(0)
	f.loop()
	f.get(src)
	f.load32zero(0)
	f.extend16()
	f.convertLow()
	f.get(scale)
	f.f64x2mul()
	f.set(v)
	f.get(l)
	f.get(v)
	f.store64lane(0, 0)
	f.get(r)
	f.get(v)
	f.store64lane(0, 1)
	f.addTo(l, 8)
	f.addTo(r, 8)
	f.addTo(src, 4)
	f.get(n)
	f.i32c(1)
	f.i32sub()
	f.tee(n)
	f.i32c(0)
	f.i32gtS()
	f.brIf(0)
	f.end()
	f.end()
	return f
}

// ramp is dsp's gain ramp, rampKernel(x *float64, n int, g0, step, off
// float64): x[j] *= g0 + step*(off+j) for the n values (n even), as
// PlanGain's loop computes it; off+j, an integer below 2^53, is exact in
// a float64, counted in the lanes from off and off+1 by twos.
func ramp() *fn {
	f := &fn{name: "ramp", params: 5, types: []byte{i32, i32, f64, f64, f64}}
	const x, n, g0, step, off = 0, 1, 2, 3, 4
	gv, sv, idx, two := f.local(v128), f.local(v128), f.local(v128), f.local(v128)
	f.get(g0)
	f.f64x2splat()
	f.set(gv)
	f.get(step)
	f.f64x2splat()
	f.set(sv)
	f.get(off)
	f.f64x2splat()
	f.get(off)
	f.f64c(1)
	f.f64add()
	f.f64x2replace(1)
	f.set(idx)
	f.splatF64(2)
	f.set(two)
	f.block()
	f.get(n)
	f.i32c(0)
	f.i32leS()
	f.brIf(0)
	f.loop()
	// x = x * (g0 + step*idx)
	f.get(x)
	f.get(x)
	f.vload(0)
	f.get(gv)
	f.get(sv)
	f.get(idx)
	f.f64x2mul()
	f.f64x2add()
	f.f64x2mul()
	f.vstore(0)
	f.get(idx)
	f.get(two)
	f.f64x2add()
	f.set(idx)
	f.addTo(x, 16)
	f.get(n)
	f.i32c(2)
	f.i32sub()
	f.tee(n)
	f.i32c(0)
	f.i32gtS()
	f.brIf(0)
	f.end()
	f.end()
	return f
}

// limPeaks is dsp's limiter peak loop, limPeaksKernel(in, ext, need
// *float64, n int, phases *[3][12]float64, flags int, consts
// *[4]float64{c0, c1, sp, ceiling}), for n frames (n even), two per f64x2: frame f requires
// p = |in[f]| (with flags&2, maxPos(need[f], p)), and where flags&1 or
// c0*|ext[f+5]| + c1*|ext[f+6]| + sp >= ceiling, the largest of p and the
// three interpolated values |sum_j phases[b][j]*ext[f+j]|, summed in j's
// order from +0; need[f] = p. maxPos(a, b) is a if a > b or a is NaN,
// else b, as maxpos_wasm.go.
func limPeaks() *fn {
	const taps = 12
	f := &fn{name: "limPeaks", params: 7}
	const in, ext, need, n, phases, flags, consts = 0, 1, 2, 3, 4, 5, 6
	var t [3][taps]uint32
	for b := range t {
		for j := range t[b] {
			t[b][j] = f.local(v128)
			f.get(phases)
			f.op(0xfd, 0x0a) // v128.load64_splat
			f.memarg(3, uint32(8*(b*taps+j)))
			f.set(t[b][j])
		}
	}
	vc0, vc1, vsp, vceil := f.local(v128), f.local(v128), f.local(v128), f.local(v128)
	for i, v := range []uint32{vc0, vc1, vsp, vceil} {
		f.get(consts)
		f.op(0xfd, 0x0a) // v128.load64_splat
		f.memarg(3, uint32(8*i))
		f.set(v)
	}
	p, a, s, mask, zero := f.local(v128), f.local(v128), f.local(v128), f.local(v128), f.local(v128)
	// maxPos: p = p > a || p != p ? p : a
	maxPos := func() {
		f.get(p)
		f.get(a)
		f.get(p)
		f.get(a)
		f.f64x2gt()
		f.get(p)
		f.get(p)
		f.f64x2ne()
		f.vor()
		f.bitselect()
		f.set(p)
	}
	f.block()
	f.get(n)
	f.i32c(0)
	f.i32leS()
	f.brIf(0)
	f.loop()
	f.get(in)
	f.vload(0)
	f.f64x2abs()
	f.set(p)
	f.get(flags)
	f.i32c(2)
	f.i32and()
	f.ifThen()
	// p = maxPos(need[f], p): operands swapped into p, a
	f.get(p)
	f.set(a)
	f.get(need)
	f.vload(0)
	f.set(p)
	maxPos()
	f.end()
	// mask: the frames that interpolate
	f.get(flags)
	f.i32c(1)
	f.i32and()
	f.ifThen()
	f.i32c(-1)
	f.op(0xfd, 0x11) // i32x4.splat
	f.set(mask)
	f.elseDo()
	f.get(vc0)
	f.get(ext)
	f.vload(8 * (taps/2 - 1))
	f.f64x2abs()
	f.f64x2mul()
	f.get(vc1)
	f.get(ext)
	f.vload(8 * (taps / 2))
	f.f64x2abs()
	f.f64x2mul()
	f.f64x2add()
	f.get(vsp)
	f.f64x2add()
	f.get(vceil)
	f.f64x2ge()
	f.set(mask)
	f.end()
	// q: p with the interpolated values where mask
	q := f.local(v128)
	f.get(p)
	f.set(q)
	for b := range t {
		f.get(zero)
		f.set(s)
		for j := range taps {
			f.get(s)
			f.get(t[b][j])
			f.get(ext)
			f.vload(uint32(8 * j))
			f.f64x2mul()
			f.f64x2add()
			f.set(s)
		}
		f.get(s)
		f.f64x2abs()
		f.set(a)
		maxPos()
	}
	// need[f] = mask ? p : q
	f.get(need)
	f.get(p)
	f.get(q)
	f.get(mask)
	f.bitselect()
	f.vstore(0)
	f.addTo(in, 16)
	f.addTo(ext, 16)
	f.addTo(need, 16)
	f.get(n)
	f.i32c(2)
	f.i32sub()
	f.tee(n)
	f.i32c(0)
	f.i32gtS()
	f.brIf(0)
	f.end()
	f.end()
	return f
}

// radix4 is internal/fft's radix4(z, h, tw, inverse), one radix-4 pass
// of span h over nb blocks of 4h complex128 at z, with the twiddles w1,
// w2, w3 at tw, tw+h, tw+2h: a complex128 is one f64x2 (re, im), and a
// product z*w is computed as Go computes it, re = zr*wr - zi*wi (here
// zr*wr + zi*(-wi), the same to the bit), im = zr*wi + zi*wr; times -i
// (+i with inverse) swaps the lanes and negates one (a product by -1,
// exact).
func radix4() *fn {
	f := &fn{name: "radix4", params: 5}
	const z, nb, h, tw, inverse = 0, 1, 2, 3, 4
	p0, p1, p2, p3 := f.local(i32), f.local(i32), f.local(i32), f.local(i32)
	t1, t2, t3, k := f.local(i32), f.local(i32), f.local(i32), f.local(i32)
	hb := f.local(i32)
	neg, rot := f.local(v128), f.local(v128)
	x0, b1, b2, b3, w := f.local(v128), f.local(v128), f.local(v128), f.local(v128), f.local(v128)
	a0, a1, a2, a3 := f.local(v128), f.local(v128), f.local(v128), f.local(v128)
	f.vconst2(-1, 1)
	f.set(neg)
	// rot: the factor of the swapped lanes of a3 for -i (forward) or +i.
	f.get(inverse)
	f.ifThen()
	f.vconst2(-1, 1)
	f.set(rot)
	f.elseDo()
	f.vconst2(1, -1)
	f.set(rot)
	f.end()
	f.get(h)
	f.i32c(4)
	f.op(0x74) // i32.shl: 16 bytes per complex128
	f.set(hb)
	// cmul leaves g*w on the stack, g and w addresses in locals.
	cmul := func(g, wp uint32) {
		f.get(wp)
		f.vload(0)
		f.set(w)
		// g * (wr, wr)
		f.get(g)
		f.vload(0)
		f.tee(x0) // scratch: x0 is loaded after the products
		f.get(w)
		f.get(w)
		f.shuffle64(0, 0)
		f.f64x2mul()
		// + (gi, gr) * (-wi, wi)
		f.get(x0)
		f.get(x0)
		f.shuffle64(1, 0)
		f.get(w)
		f.get(w)
		f.shuffle64(1, 1)
		f.get(neg)
		f.f64x2mul()
		f.f64x2mul()
		f.f64x2add()
	}
	f.block()
	f.get(nb)
	f.i32c(0)
	f.i32leS()
	f.brIf(0)
	f.get(z)
	f.set(p0)
	f.loop() // blocks
	f.get(p0)
	f.get(hb)
	f.i32add()
	f.tee(p1)
	f.get(hb)
	f.i32add()
	f.tee(p2)
	f.get(hb)
	f.i32add()
	f.set(p3)
	f.get(tw)
	f.tee(t1)
	f.get(hb)
	f.i32add()
	f.tee(t2)
	f.get(hb)
	f.i32add()
	f.set(t3)
	f.get(h)
	f.set(k)
	f.loop() // k
	cmul(p1, t2)
	f.set(b1)
	cmul(p2, t1)
	f.set(b2)
	cmul(p3, t3)
	f.set(b3)
	f.get(p0)
	f.vload(0)
	f.set(x0)
	f.get(x0)
	f.get(b1)
	f.f64x2add()
	f.set(a0)
	f.get(x0)
	f.get(b1)
	f.f64x2sub()
	f.set(a1)
	f.get(b2)
	f.get(b3)
	f.f64x2add()
	f.set(a2)
	// a3 = rot * swap(b2 - b3): r3
	f.get(b2)
	f.get(b3)
	f.f64x2sub()
	f.tee(a3)
	f.get(a3)
	f.shuffle64(1, 0)
	f.get(rot)
	f.f64x2mul()
	f.set(a3)
	for _, st := range []struct {
		p    uint32
		x, y uint32
		add  bool
	}{{p0, a0, a2, true}, {p1, a1, a3, true}, {p2, a0, a2, false}, {p3, a1, a3, false}} {
		f.get(st.p)
		f.get(st.x)
		f.get(st.y)
		if st.add {
			f.f64x2add()
		} else {
			f.f64x2sub()
		}
		f.vstore(0)
	}
	for _, q := range []uint32{p0, p1, p2, p3, t1, t2, t3} {
		f.addTo(q, 16)
	}
	f.get(k)
	f.i32c(1)
	f.i32sub()
	f.tee(k)
	f.i32c(0)
	f.i32gtS()
	f.brIf(0)
	f.end() // k
	// p0 has moved by h: on to the next block, 3h further.
	f.get(p3)
	f.set(p0)
	f.get(nb)
	f.i32c(1)
	f.i32sub()
	f.tee(nb)
	f.i32c(0)
	f.i32gtS()
	f.brIf(0)
	f.end() // blocks
	f.end()
	return f
}

// whiten is the interior of dsp/classify's periodicity whitening,
// whitenKernel(hiP, loP, pow, taper *float64, w int, out *complex128, n
// int), two bins per f64x2: for bin i, m = (hiP[i] - loP[i]) / w and,
// where m > 0, v = pow[i] / m * taper[i] (else +0), stored as complex(v,
// 0), each lane the Go loop's IEEE operations in its order, as
// whiten_amd64.s does four at a time. n is even.
func whiten() *fn {
	f := &fn{name: "whiten", params: 7}
	const hiP, loP, pow, taper, w, out, n = 0, 1, 2, 3, 4, 5, 6
	wv, m, v, zero := f.local(v128), f.local(v128), f.local(v128), f.local(v128)
	f.get(w)
	f.op(0xb7) // f64.convert_i32_s: exact
	f.f64x2splat()
	f.set(wv)
	f.block()
	f.get(n)
	f.i32c(0)
	f.i32leS()
	f.brIf(0)
	f.loop()
	// m = (hi - lo) / w
	f.get(hiP)
	f.vload(0)
	f.get(loP)
	f.vload(0)
	f.f64x2sub()
	f.get(wv)
	f.f64x2div()
	f.set(m)
	// v = pow / m * taper, +0 where not m > 0 (NaN included)
	f.get(pow)
	f.vload(0)
	f.get(m)
	f.f64x2div()
	f.get(taper)
	f.vload(0)
	f.f64x2mul()
	f.get(m)
	f.get(zero)
	f.f64x2gt()
	f.vand()
	f.set(v)
	// out[0] = (v0, 0), out[1] = (v1, 0)
	f.get(out)
	f.get(v)
	f.get(zero)
	f.shuffle64(0, 2)
	f.vstore(0)
	f.get(out)
	f.get(v)
	f.get(zero)
	f.shuffle64(1, 3)
	f.vstore(16)
	f.addTo(hiP, 16)
	f.addTo(loP, 16)
	f.addTo(pow, 16)
	f.addTo(taper, 16)
	f.addTo(out, 32)
	f.get(n)
	f.i32c(2)
	f.i32sub()
	f.tee(n)
	f.i32c(0)
	f.i32gtS()
	f.brIf(0)
	f.end()
	f.end()
	return f
}

// normalise is dsp/classify's normalise, normaliseKernel(ac, rw, nac,
// r0 *float64, n int): nac[i] = ac[i] / (r0 * rw[i]), two per f64x2; n
// is even. r0 goes through memory, as limPeaks's floats do.
func normalise() *fn {
	f := &fn{name: "normalise", params: 5}
	const ac, rw, nac, r0, n = 0, 1, 2, 3, 4
	rv := f.local(v128)
	f.get(r0)
	f.f64load(0)
	f.f64x2splat()
	f.set(rv)
	f.block()
	f.get(n)
	f.i32c(0)
	f.i32leS()
	f.brIf(0)
	f.loop()
	f.get(nac)
	f.get(ac)
	f.vload(0)
	f.get(rv)
	f.get(rw)
	f.vload(0)
	f.f64x2mul()
	f.f64x2div()
	f.vstore(0)
	f.addTo(ac, 16)
	f.addTo(rw, 16)
	f.addTo(nac, 16)
	f.get(n)
	f.i32c(2)
	f.i32sub()
	f.tee(n)
	f.i32c(0)
	f.i32gtS()
	f.brIf(0)
	f.end()
	f.end()
	return f
}

// signBits pushes the v128 whose lanes are -0.0 where neg says, else
// +0.0: xor with it negates those lanes as Go's unary minus does (the
// sign bit flipped, NaNs included).
func (f *fn) signBits(neg0, neg1 bool) {
	v := [2]float64{}
	for i, n := range []bool{neg0, neg1} {
		if n {
			v[i] = math.Copysign(0, -1)
		}
	}
	f.vconst2(v[0], v[1])
}

// first2 is internal/fft's first radix-2 pass, gathered,
// first2Kernel(z, src *complex128, rev *int32, h int): for i below h,
// with a = src[i], b = src[i+h] and j = rev[i], z[j] = a+b and z[j+1] =
// a-b, a complex128 per f64x2.
func first2() *fn {
	f := &fn{name: "first2", params: 4}
	const z, src, rev, h = 0, 1, 2, 3
	hi, g, a, b := f.local(i32), f.local(i32), f.local(v128), f.local(v128)
	f.get(src)
	f.get(h)
	f.i32c(4)
	f.i32shl()
	f.i32add()
	f.set(hi)
	f.block()
	f.get(h)
	f.i32c(0)
	f.i32leS()
	f.brIf(0)
	f.loop()
	f.get(src)
	f.vload(0)
	f.set(a)
	f.get(hi)
	f.vload(0)
	f.set(b)
	f.get(z)
	f.get(rev)
	f.i32load(0)
	f.i32c(4)
	f.i32shl()
	f.i32add()
	f.tee(g)
	f.get(a)
	f.get(b)
	f.f64x2add()
	f.vstore(0)
	f.get(g)
	f.get(a)
	f.get(b)
	f.f64x2sub()
	f.vstore(16)
	f.addTo(src, 16)
	f.addTo(hi, 16)
	f.addTo(rev, 4)
	f.get(h)
	f.i32c(1)
	f.i32sub()
	f.tee(h)
	f.i32c(0)
	f.i32gtS()
	f.brIf(0)
	f.end()
	f.end()
	return f
}

// first4 is internal/fft's first radix-4 pass, gathered,
// first4Kernel(z, src *complex128, rev *int32, q int, inverse int): for
// i below q, with x0..x3 = src[i], src[i+2q], src[i+q], src[i+3q],
// a0, a1 = x0+x1, x0-x1, a2, a3 = x2+x3, x2-x3, r3 = -i*a3 (forward,
// (imag, -real)) or +i*a3 (inverse, (-imag, real)) and g = z[rev[i]:],
// g[0..3] = a0+a2, a1+r3, a0-a2, a1-r3.
func first4() *fn {
	f := &fn{name: "first4", params: 5}
	const z, src, rev, q, inverse = 0, 1, 2, 3, 4
	s1, s2, s3, g := f.local(i32), f.local(i32), f.local(i32), f.local(i32)
	sign := f.local(v128)
	a0, a1, a2, a3, x0, x2 := f.local(v128), f.local(v128), f.local(v128), f.local(v128), f.local(v128), f.local(v128)
	f.get(inverse)
	f.ifThen()
	f.signBits(true, false)
	f.set(sign)
	f.elseDo()
	f.signBits(false, true)
	f.set(sign)
	f.end()
	f.get(q)
	f.i32c(4)
	f.i32shl()
	f.set(s3) // scratch: q in bytes
	f.get(src)
	f.get(s3)
	f.i32add()
	f.tee(s1)
	f.get(s3)
	f.i32add()
	f.tee(s2)
	f.get(s3)
	f.i32add()
	f.set(s3)
	f.block()
	f.get(q)
	f.i32c(0)
	f.i32leS()
	f.brIf(0)
	f.loop()
	// a0, a1 from x0 = src[i], x1 = src[i+2q]
	f.get(src)
	f.vload(0)
	f.tee(x0)
	f.get(s2)
	f.vload(0)
	f.f64x2add()
	f.set(a0)
	f.get(x0)
	f.get(s2)
	f.vload(0)
	f.f64x2sub()
	f.set(a1)
	// a2, a3 from x2 = src[i+q], x3 = src[i+3q]
	f.get(s1)
	f.vload(0)
	f.tee(x2)
	f.get(s3)
	f.vload(0)
	f.f64x2add()
	f.set(a2)
	f.get(x2)
	f.get(s3)
	f.vload(0)
	f.f64x2sub()
	f.set(a3)
	// r3 in a3: its lanes swapped, one negated
	f.get(a3)
	f.get(a3)
	f.shuffle64(1, 0)
	f.get(sign)
	f.vxor()
	f.set(a3)
	f.get(z)
	f.get(rev)
	f.i32load(0)
	f.i32c(4)
	f.i32shl()
	f.i32add()
	f.tee(g)
	f.get(a0)
	f.get(a2)
	f.f64x2add()
	f.vstore(0)
	f.get(g)
	f.get(a1)
	f.get(a3)
	f.f64x2add()
	f.vstore(16)
	f.get(g)
	f.get(a0)
	f.get(a2)
	f.f64x2sub()
	f.vstore(32)
	f.get(g)
	f.get(a1)
	f.get(a3)
	f.f64x2sub()
	f.vstore(48)
	f.addTo(src, 16)
	f.addTo(s1, 16)
	f.addTo(s2, 16)
	f.addTo(s3, 16)
	f.addTo(rev, 4)
	f.get(q)
	f.i32c(1)
	f.i32sub()
	f.tee(q)
	f.i32c(0)
	f.i32gtS()
	f.brIf(0)
	f.end()
	f.end()
	return f
}

// split is internal/fft's real split, splitKernel(dst, z, tw
// *complex128, m int), for k from 1 to m/2 in order, a complex128 per
// f64x2: with a = z[k], b = z[m-k], (er, ei) = 0.5*(a.re+b.re,
// a.im-b.im), (or, oi) = (0.5*(a.im+b.im), -0.5*(a.re-b.re)), (wr, wi) =
// tw[k], tr = wr*or - wi*oi, ti = wr*oi + wi*or, dst[k] = (er+tr, ei+ti)
// and dst[m-k] = (er-tr, ti-ei). x - y is x + (-y) in IEEE arithmetic,
// so the negated lanes add where Go subtracts.
func split() *fn {
	f := &fn{name: "split", params: 4}
	const dst, z, tw, m = 0, 1, 2, 3
	zb, db, k := f.local(i32), f.local(i32), f.local(i32)
	a, b, u, d, e, o, w, t := f.local(v128), f.local(v128), f.local(v128), f.local(v128), f.local(v128), f.local(v128), f.local(v128), f.local(v128)
	// zb, db: the addresses of z[m-k] and dst[m-k], from k = 1
	f.get(m)
	f.i32c(1)
	f.i32sub()
	f.i32c(4)
	f.i32shl()
	f.tee(k) // scratch: (m-1)*16
	f.get(z)
	f.i32add()
	f.set(zb)
	f.get(k)
	f.get(dst)
	f.i32add()
	f.set(db)
	f.addTo(z, 16)
	f.addTo(dst, 16)
	f.addTo(tw, 16)
	f.get(m)
	f.i32c(1)
	f.op(0x75) // i32.shr_s: m/2 values of k
	f.set(k)
	f.block()
	f.get(k)
	f.i32c(0)
	f.i32leS()
	f.brIf(0)
	f.loop()
	f.get(z)
	f.vload(0)
	f.set(a)
	f.get(zb)
	f.vload(0)
	f.set(b)
	f.get(a)
	f.get(b)
	f.f64x2add()
	f.set(u)
	f.get(a)
	f.get(b)
	f.f64x2sub()
	f.set(d)
	// e = 0.5 * (u.re, d.im); o = (0.5, -0.5) * (u.im, d.re)
	f.get(u)
	f.get(d)
	f.shuffle64(0, 3)
	f.vconst2(0.5, 0.5)
	f.f64x2mul()
	f.set(e)
	f.get(u)
	f.get(d)
	f.shuffle64(1, 2)
	f.vconst2(0.5, -0.5)
	f.f64x2mul()
	f.set(o)
	// t = (wr*or, wr*oi) + ((-(wi*oi)), wi*or)
	f.get(tw)
	f.vload(0)
	f.set(w)
	f.get(w)
	f.get(w)
	f.shuffle64(0, 0)
	f.get(o)
	f.f64x2mul()
	f.get(w)
	f.get(w)
	f.shuffle64(1, 1)
	f.get(o)
	f.get(o)
	f.shuffle64(1, 0)
	f.f64x2mul()
	f.signBits(true, false)
	f.vxor()
	f.f64x2add()
	f.set(t)
	// dst[k] = e + t; dst[m-k] = (e.re, t.im) - (t.re, e.im)
	f.get(dst)
	f.get(e)
	f.get(t)
	f.f64x2add()
	f.vstore(0)
	f.get(db)
	f.get(e)
	f.get(t)
	f.shuffle64(0, 3)
	f.get(t)
	f.get(e)
	f.shuffle64(0, 3)
	f.f64x2sub()
	f.vstore(0)
	f.addTo(z, 16)
	f.addTo(dst, 16)
	f.addTo(tw, 16)
	f.addTo(zb, -16)
	f.addTo(db, -16)
	f.get(k)
	f.i32c(1)
	f.i32sub()
	f.tee(k)
	f.i32c(0)
	f.i32gtS()
	f.brIf(0)
	f.end()
	f.end()
	return f
}

// bounds is production/artwork's waveform loop, boundsKernel(x
// *float64, n int, lohi *[2]float64), for even n: the even and the odd
// samples each in a lane from (lo, hi) = lohi, a lane's lo becoming v
// where v < lo and its hi where v > hi (pmin, pmax: NaNs never taken);
// lohi gets lane 0's (lo, hi) and lohi[2:4] lane 1's, which the caller
// merges.
func bounds() *fn {
	f := &fn{name: "bounds", params: 3}
	const x, n, lohi = 0, 1, 2
	lo, hi, v := f.local(v128), f.local(v128), f.local(v128)
	f.get(lohi)
	f.f64load(0)
	f.f64x2splat()
	f.set(lo)
	f.get(lohi)
	f.f64load(8)
	f.f64x2splat()
	f.set(hi)
	f.block()
	f.get(n)
	f.i32c(0)
	f.i32leS()
	f.brIf(0)
	f.loop()
	f.get(x)
	f.vload(0)
	f.set(v)
	f.get(lo)
	f.get(v)
	f.f64x2pmin()
	f.set(lo)
	f.get(hi)
	f.get(v)
	f.f64x2pmax()
	f.set(hi)
	f.addTo(x, 16)
	f.get(n)
	f.i32c(2)
	f.i32sub()
	f.tee(n)
	f.i32c(0)
	f.i32gtS()
	f.brIf(0)
	f.end()
	f.end()
	// lohi = (lo0, hi0, lo1, hi1)
	f.get(lohi)
	f.get(lo)
	f.get(hi)
	f.shuffle64(0, 2)
	f.vstore(0)
	f.get(lohi)
	f.get(lo)
	f.get(hi)
	f.shuffle64(1, 3)
	f.vstore(16)
	return f
}

// encode16 is audio's 16-bit stereo encoding, encode16Kernel(dst *byte,
// l, r *float64, n int, done *int32), two frames at a time (n even):
// each sample v = (x*32768 + magic) - magic, Go's roundScaled(x*scale16);
// while all four of a pair lie in [-32768, 32767] (NaN does not) they
// are written interleaved as little-endian int16, else the kernel stops.
// *done is how many frames it wrote.
func encode16() *fn {
	f := &fn{name: "encode16", params: 5}
	const dst, l, r, n, done = 0, 1, 2, 3, 4
	k := f.local(i32)
	lv, rv := f.local(v128), f.local(v128)
	const magic = 6755399441055744.0
	round := func(src, v uint32) {
		f.get(src)
		f.vload(0)
		f.splatF64(32768)
		f.f64x2mul()
		f.splatF64(magic)
		f.f64x2add()
		f.splatF64(magic)
		f.f64x2sub()
		f.set(v)
	}
	// inRange pushes the mask of lanes of v in [-32768, 32767].
	inRange := func(v uint32) {
		f.get(v)
		f.splatF64(32767)
		f.f64x2le()
		f.splatF64(-32768)
		f.get(v)
		f.f64x2le()
		f.vand()
	}
	f.block()
	f.loop()
	f.get(k)
	f.get(n)
	f.op(0x4e) // i32.ge_s
	f.brIf(1)
	round(l, lv)
	round(r, rv)
	inRange(lv)
	inRange(rv)
	f.vand()
	f.allTrue64()
	f.op(0x45) // i32.eqz
	f.brIf(1)
	// (l0, l1, 0, 0), (r0, r1, 0, 0) -> i16 (l0, l1, 0, 0, r0, r1, 0, 0)
	// -> l0 r0 l1 r1
	f.get(dst)
	f.get(lv)
	f.truncSatZero()
	f.get(rv)
	f.truncSatZero()
	f.narrow16()
	f.get(lv) // the second operand is not picked
	f.shuffle8([16]byte{0, 1, 8, 9, 2, 3, 10, 11, 0, 0, 0, 0, 0, 0, 0, 0})
	f.store64lane(0, 0)
	f.addTo(dst, 8)
	f.addTo(l, 16)
	f.addTo(r, 16)
	f.addTo(k, 2)
	f.br(0)
	f.end()
	f.end()
	f.get(done)
	f.get(k)
	f.i32store(0)
	return f
}

// mono2 is dsp/classify's stereo downmix, mono2Kernel(l, r, mono
// *float64, n int): mono[i] = ((0 + l[i]) + r[i]) * 0.5, two frames per
// f64x2 (n even); the 0 + l[i] is Go's sum from zero, which makes a -0
// sample +0.
func mono2() *fn {
	f := &fn{name: "mono2", params: 4}
	const l, r, mono, n = 0, 1, 2, 3
	f.block()
	f.get(n)
	f.i32c(0)
	f.i32leS()
	f.brIf(0)
	f.loop()
	f.get(mono)
	f.splatF64(0)
	f.get(l)
	f.vload(0)
	f.f64x2add()
	f.get(r)
	f.vload(0)
	f.f64x2add()
	f.splatF64(0.5)
	f.f64x2mul()
	f.vstore(0)
	f.addTo(l, 16)
	f.addTo(r, 16)
	f.addTo(mono, 16)
	f.get(n)
	f.i32c(2)
	f.i32sub()
	f.tee(n)
	f.i32c(0)
	f.i32gtS()
	f.brIf(0)
	f.end()
	f.end()
	return f
}

// antiAlias is dsp/classify's decimation filter, antiAliasKernel(x
// *float64, n int, p, q *biquad): two direct-form-I sections in series
// over x in place, scalar (a recursion), with the states in locals where
// Go's WebAssembly keeps them in memory. A biquad is b0, b1, b2, a1, a2,
// x1, x2, y1, y2 (float64s); each output is b0*v + b1*x1 + b2*x2 -
// a2*y2 - a1*y1, added left to right as Go does.
func antiAlias() *fn {
	f := &fn{name: "antiAlias", params: 4}
	const x, n, p, q = 0, 1, 2, 3
	var c [2][9]uint32
	for s, ptr := range []uint32{p, q} {
		for i := range 9 {
			c[s][i] = f.local(f64)
			f.get(ptr)
			f.f64load(uint32(8 * i))
			f.set(c[s][i])
		}
	}
	v, y := f.local(f64), f.local(f64)
	// section pushes the output of section s for input in (a local).
	section := func(s int, in uint32) {
		b0, b1, b2, a1, a2, x1, x2, y1, y2 := c[s][0], c[s][1], c[s][2], c[s][3], c[s][4], c[s][5], c[s][6], c[s][7], c[s][8]
		term := func(a, b uint32) {
			f.get(a)
			f.get(b)
			f.f64mul()
		}
		term(b0, in)
		term(b1, x1)
		f.f64add()
		term(b2, x2)
		f.f64add()
		term(a2, y2)
		f.f64sub()
		term(a1, y1)
		f.f64sub()
	}
	// shift moves the section's history on by one input and output.
	shift := func(s int, in, out uint32) {
		x1, x2, y1, y2 := c[s][5], c[s][6], c[s][7], c[s][8]
		f.get(x1)
		f.set(x2)
		f.get(in)
		f.set(x1)
		f.get(y1)
		f.set(y2)
		f.get(out)
		f.set(y1)
	}
	f.block()
	f.get(n)
	f.i32c(0)
	f.i32leS()
	f.brIf(0)
	f.loop()
	f.get(x)
	f.f64load(0)
	f.set(v)
	section(0, v)
	f.set(y)
	shift(0, v, y)
	f.get(x)
	section(1, y)
	f.tee(v) // v: the second section's output
	f.f64store(0)
	shift(1, y, v)
	f.addTo(x, 8)
	f.get(n)
	f.i32c(1)
	f.i32sub()
	f.tee(n)
	f.i32c(0)
	f.i32gtS()
	f.brIf(0)
	f.end()
	f.end()
	for s, ptr := range []uint32{p, q} {
		for i := 5; i < 9; i++ {
			f.get(ptr)
			f.get(c[s][i])
			f.f64store(uint32(8 * i))
		}
	}
	return f
}

// scaleBy is dsp's constant gain, scaleByKernel(x *float64, n int, g
// float64): x[i] *= g, two per f64x2 (n even).
func scaleBy() *fn {
	f := &fn{name: "scaleBy", params: 3, types: []byte{i32, i32, f64}}
	const x, n, g = 0, 1, 2
	gv := f.local(v128)
	f.get(g)
	f.f64x2splat()
	f.set(gv)
	f.block()
	f.get(n)
	f.i32c(0)
	f.i32leS()
	f.brIf(0)
	f.loop()
	f.get(x)
	f.get(x)
	f.vload(0)
	f.get(gv)
	f.f64x2mul()
	f.vstore(0)
	f.addTo(x, 16)
	f.get(n)
	f.i32c(2)
	f.i32sub()
	f.tee(n)
	f.i32c(0)
	f.i32gtS()
	f.brIf(0)
	f.end()
	f.end()
	return f
}

// mulTo is dsp's limiter output, mulToKernel(d, x, g *float64, n int):
// d[i] = x[i] * g[i], two per f64x2 (n even).
func mulTo() *fn {
	f := &fn{name: "mulTo", params: 4}
	const d, x, g, n = 0, 1, 2, 3
	f.block()
	f.get(n)
	f.i32c(0)
	f.i32leS()
	f.brIf(0)
	f.loop()
	f.get(d)
	f.get(x)
	f.vload(0)
	f.get(g)
	f.vload(0)
	f.f64x2mul()
	f.vstore(0)
	f.addTo(d, 16)
	f.addTo(x, 16)
	f.addTo(g, 16)
	f.get(n)
	f.i32c(2)
	f.i32sub()
	f.tee(n)
	f.i32c(0)
	f.i32gtS()
	f.brIf(0)
	f.end()
	f.end()
	return f
}

// needGain is the limiter's required gain, needGainKernel(need *float64,
// n int, ceiling float64), two per f64x2 (n even): need[i] = ceiling /
// maxPos(need[i], ceiling), and 1 where that is NaN; maxPos(a, b) is a
// where a > b or a is NaN, else b.
func needGain() *fn {
	f := &fn{name: "needGain", params: 3, types: []byte{i32, i32, f64}}
	const need, n, ceiling = 0, 1, 2
	cv, a, q := f.local(v128), f.local(v128), f.local(v128)
	f.get(ceiling)
	f.f64x2splat()
	f.set(cv)
	f.block()
	f.get(n)
	f.i32c(0)
	f.i32leS()
	f.brIf(0)
	f.loop()
	f.get(need)
	f.vload(0)
	f.set(a)
	// q = ceiling / bitselect(a, ceiling, a > ceiling | a != a)
	f.get(cv)
	f.get(a)
	f.get(cv)
	f.get(a)
	f.get(cv)
	f.f64x2gt()
	f.get(a)
	f.get(a)
	f.f64x2ne()
	f.vor()
	f.bitselect()
	f.f64x2div()
	f.set(q)
	// need = bitselect(1, q, q != q)
	f.get(need)
	f.splatF64(1)
	f.get(q)
	f.get(q)
	f.get(q)
	f.f64x2ne()
	f.bitselect()
	f.vstore(0)
	f.addTo(need, 16)
	f.get(n)
	f.i32c(2)
	f.i32sub()
	f.tee(n)
	f.i32c(0)
	f.i32gtS()
	f.brIf(0)
	f.end()
	f.end()
	return f
}

// power is dsp/classify's power spectrum, powerKernel(coef *complex128,
// pow, prefix *float64, half, n int): pow[i] = re*re + im*im of coef[i]
// for i below n (the two products in an f64x2's lanes, then their sum),
// and for i up to half the running sums prefix[i+1] = prefix[i] + pow[i]
// from 0, added in order (scalar).
func power() *fn {
	f := &fn{name: "power", params: 5}
	const coef, pow, prefix, half, n = 0, 1, 2, 3, 4
	i, p, v := f.local(i32), f.local(f64), f.local(v128)
	f.block()
	f.loop()
	f.get(i)
	f.get(n)
	f.op(0x4e) // i32.ge_s
	f.brIf(1)
	f.get(coef)
	f.vload(0)
	f.tee(v)
	f.get(v)
	f.f64x2mul()
	f.tee(v)
	f.simd(0x21) // f64x2.extract_lane 0
	f.op(0)
	f.get(v)
	f.simd(0x21)
	f.op(1)
	f.f64add()
	f.set(p)
	f.get(pow)
	f.get(p)
	f.f64store(0)
	// up to half: prefix[i+1] = prefix[i] + p, the running sum in order
	f.get(i)
	f.get(half)
	f.i32leS()
	f.ifThen()
	f.get(prefix)
	f.get(prefix)
	f.f64load(0)
	f.get(p)
	f.f64add()
	f.f64store(8)
	f.addTo(prefix, 8)
	f.end()
	f.addTo(coef, 16)
	f.addTo(pow, 8)
	f.addTo(i, 1)
	f.br(0)
	f.end()
	f.end()
	return f
}

// levels2 is dsp's analysis levels of a stereo stretch,
// levels2Kernel(l, r *float64, n int, out *float64): the sums of the
// squares of l and of r, each from +0 in order (sum + v*v, the two
// channels in the two lanes), into out[0] and out[1], and the largest
// bit patterns of each channel's samples with the sign cleared (absMax's
// maximum) into out[2] and out[3], as levels2Go computes them.
func levels2() *fn {
	f := &fn{name: "levels2", params: 4}
	const l, r, n, out = 0, 1, 2, 3
	sum, m, v, a := f.local(v128), f.local(v128), f.local(v128), f.local(v128) // zero
	f.block()
	f.get(n)
	f.i32c(0)
	f.i32leS()
	f.brIf(0)
	f.loop()
	f.get(r)
	f.get(l)
	f.load64zero(0)
	f.load64lane(0, 1)
	f.set(v)
	// sum = sum + v*v
	f.get(sum)
	f.get(v)
	f.get(v)
	f.f64x2mul()
	f.f64x2add()
	f.set(sum)
	// m = |v| > m ? |v| : m, as integers
	f.get(v)
	f.f64x2abs()
	f.set(a)
	f.get(a)
	f.get(m)
	f.get(a)
	f.get(m)
	f.i64x2gtS()
	f.bitselect()
	f.set(m)
	f.addTo(l, 8)
	f.addTo(r, 8)
	f.get(n)
	f.i32c(1)
	f.i32sub()
	f.tee(n)
	f.i32c(0)
	f.i32gtS()
	f.brIf(0)
	f.end()
	f.end()
	f.get(out)
	f.get(sum)
	f.vstore(0)
	f.get(out)
	f.get(m)
	f.vstore(16)
	return f
}

// spanMax is dsp's limiter stretch maxima, spanMaxKernel(x *float64,
// spans int, out *uint64): for each of the spans stretches of 64 values,
// the largest bit pattern of its values with the sign cleared
// (magnitudeBits), into out[j]: two values per f64x2 as absMax compares
// them, then the larger of the two lanes.
func spanMax() *fn {
	const span = 64
	f := &fn{name: "spanMax", params: 3}
	const x, spans, out = 0, 1, 2
	m, a, k := f.local(v128), f.local(v128), f.local(i32)
	f.block()
	f.get(spans)
	f.i32c(0)
	f.i32leS()
	f.brIf(0)
	f.loop()
	f.vconst2(0, 0)
	f.set(m)
	f.i32c(span / 2)
	f.set(k)
	f.loop()
	f.get(x)
	f.vload(0)
	f.f64x2abs()
	f.set(a)
	f.get(a)
	f.get(m)
	f.get(a)
	f.get(m)
	f.i64x2gtS()
	f.bitselect()
	f.set(m)
	f.addTo(x, 16)
	f.get(k)
	f.i32c(1)
	f.i32sub()
	f.tee(k)
	f.i32c(0)
	f.i32gtS()
	f.brIf(0)
	f.end()
	// out[j] = lane 0 > lane 1 ? lane 0 : lane 1
	f.get(out)
	f.get(m)
	f.simd(0x1d) // i64x2.extract_lane 0
	f.op(0)
	f.get(m)
	f.simd(0x1d) // i64x2.extract_lane 1
	f.op(1)
	f.get(m)
	f.simd(0x1d)
	f.op(0)
	f.get(m)
	f.simd(0x1d)
	f.op(1)
	f.op(0x55) // i64.gt_s
	f.op(0x1b) // select
	f.i64store(0)
	f.addTo(out, 8)
	f.get(spans)
	f.i32c(1)
	f.i32sub()
	f.tee(spans)
	f.i32c(0)
	f.i32gtS()
	f.brIf(0)
	f.end()
	f.end()
	return f
}

// winSq is dsp/classify's windowing with the energy of the frame,
// winSqKernel(x, win, in *float64, n int, out *float64): in[i] =
// x[i]*win[i] and out[j] the sum from +0 of the squares of in[i] for
// i%4 = j, each added in order (sum + a*a), four values per step in two
// f64x2; n is a multiple of four.
func winSq() *fn {
	f := &fn{name: "winSq", params: 5}
	const x, win, in, n, out = 0, 1, 2, 3, 4
	e01, e23, a := f.local(v128), f.local(v128), f.local(v128) // zero
	f.block()
	f.get(n)
	f.i32c(0)
	f.i32leS()
	f.brIf(0)
	f.loop()
	for i, e := range []uint32{e01, e23} {
		off := uint32(16 * i)
		f.get(x)
		f.vload(off)
		f.get(win)
		f.vload(off)
		f.f64x2mul()
		f.set(a)
		f.get(in)
		f.get(a)
		f.vstore(off)
		f.get(e)
		f.get(a)
		f.get(a)
		f.f64x2mul()
		f.f64x2add()
		f.set(e)
	}
	f.addTo(x, 32)
	f.addTo(win, 32)
	f.addTo(in, 32)
	f.get(n)
	f.i32c(4)
	f.i32sub()
	f.tee(n)
	f.i32c(0)
	f.i32gtS()
	f.brIf(0)
	f.end()
	f.end()
	f.get(out)
	f.get(e01)
	f.vstore(0)
	f.get(out)
	f.get(e23)
	f.vstore(16)
	return f
}
