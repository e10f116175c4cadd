// Package wasmsimd writes the WebAssembly module of SIMD kernels that the
// browser build of the engine calls in place of its hottest Go loops.
//
// Go compiles no SIMD for WebAssembly, and its WebAssembly runs the
// recursive filters' loops several times slower than its amd64 code. The
// kernels here are those of the amd64 assembly (dsp's stereo biquad
// cascade, loudness's K-weighting), written for WebAssembly's 128-bit
// SIMD: the left and right samples of a frame share the two f64x2 lanes,
// and every lane performs the Go loop's IEEE operations in its order, so
// the results are bit-identical to the Go loops, as the amd64 kernels'
// are.
//
// The engine declares the kernels with //go:wasmimport under the module
// name [Import] when built with the build tag wasmsimd (the browser
// build sets it); the host instantiates this module over the engine's
// memory, exported by Go as "mem", and gives the engine functions that
// call its exports. Without the tag the engine runs its Go loops.
package wasmsimd

import _ "embed"

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
	fns = append(fns, kweight(false), kweight(true))
	return module(fns)
}

// Names returns the exported kernels' names.
func Names() []string {
	return []string{"stereo1", "stereo2", "stereo3", "stereo4", "kstereo", "kstereoSq"}
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
