package wasmsimd

import (
	"encoding/binary"
	"math"
)

// A small WebAssembly assembler: just what the kernels use, so that the
// module is written from the Go source in this package rather than kept
// as a binary in the repository.

// Value types.
const (
	i32  = 0x7f
	f64  = 0x7c
	v128 = 0x7b
)

func uleb(b []byte, v uint64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}

func sleb(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// fn is one function of the module: its parameters (the addresses and
// counts the Go side passes, and a few floats), its locals and its code.
type fn struct {
	name   string
	params int
	// types are the parameters' value types where not all are i32.
	types  []byte
	locals []byte // value type of each local after the parameters
	code   []byte
}

// paramTypes returns the value types of f's parameters.
func (f *fn) paramTypes() []byte {
	if f.types != nil {
		return f.types
	}
	t := make([]byte, f.params)
	for i := range t {
		t[i] = i32
	}
	return t
}

// local adds a local of type t and returns its index.
func (f *fn) local(t byte) uint32 {
	f.locals = append(f.locals, t)
	return uint32(f.params + len(f.locals) - 1)
}

func (f *fn) op(b ...byte) { f.code = append(f.code, b...) }

func (f *fn) get(i uint32)   { f.op(0x20); f.code = uleb(f.code, uint64(i)) }
func (f *fn) set(i uint32)   { f.op(0x21); f.code = uleb(f.code, uint64(i)) }
func (f *fn) tee(i uint32)   { f.op(0x22); f.code = uleb(f.code, uint64(i)) }
func (f *fn) i32c(v int32)   { f.op(0x41); f.code = sleb(f.code, int64(v)) }
func (f *fn) block()         { f.op(0x02, 0x40) }
func (f *fn) loop()          { f.op(0x03, 0x40) }
func (f *fn) end()           { f.op(0x0b) }
func (f *fn) brIf(depth int) { f.op(0x0d); f.code = uleb(f.code, uint64(depth)) }
func (f *fn) br(depth int)   { f.op(0x0c); f.code = uleb(f.code, uint64(depth)) }

// memarg appends an alignment (log2) and an offset.
func (f *fn) memarg(align, off uint32) {
	f.code = uleb(f.code, uint64(align))
	f.code = uleb(f.code, uint64(off))
}

// simd appends a SIMD instruction (prefix 0xfd, LEB128 opcode).
func (f *fn) simd(op uint32) { f.op(0xfd); f.code = uleb(f.code, uint64(op)) }

func (f *fn) f64load(off uint32)  { f.op(0x2b); f.memarg(3, off) }
func (f *fn) f64store(off uint32) { f.op(0x39); f.memarg(3, off) }
func (f *fn) f32load(off uint32)  { f.op(0x2a); f.memarg(2, off) }
func (f *fn) f32store(off uint32) { f.op(0x38); f.memarg(2, off) }
func (f *fn) i64load(off uint32)  { f.op(0x29); f.memarg(3, off) }
func (f *fn) i64store(off uint32) { f.op(0x37); f.memarg(3, off) }

// v128 memory instructions; the alignment is a hint only.
func (f *fn) vload(off uint32)      { f.simd(0x00); f.memarg(3, off) }
func (f *fn) vstore(off uint32)     { f.simd(0x0b); f.memarg(3, off) }
func (f *fn) load64zero(off uint32) { f.simd(0x5d); f.memarg(3, off) }
func (f *fn) load64lane(off uint32, lane byte) {
	f.simd(0x57)
	f.memarg(3, off)
	f.op(lane)
}
func (f *fn) store64lane(off uint32, lane byte) {
	f.simd(0x5b)
	f.memarg(3, off)
	f.op(lane)
}

// f32x4 arithmetic: each lane is the scalar IEEE operation. pmax(a, b)
// is b if a < b else a, pmin(a, b) b if b < a else a: Go's "if y > hi {
// hi = y }" and "if y < lo { lo = y }", NaN and signed zeros included.
func (f *fn) f32x4add()  { f.simd(0xe4) }
func (f *fn) f32x4mul()  { f.simd(0xe6) }
func (f *fn) f32x4pmin() { f.simd(0xea) }
func (f *fn) f32x4pmax() { f.simd(0xeb) }

// f64x2abs clears the sign bits (a bit operation, NaNs included);
// i64x2gtS compares the lanes as signed integers; bitselect takes the
// bits of its first operand where its third's are set, else its
// second's.
func (f *fn) f64x2abs()  { f.simd(0xec) }
func (f *fn) i64x2gtS()  { f.simd(0xd9) }
func (f *fn) bitselect() { f.simd(0x52) }

// Conversions: load32zero loads 32 bits into lane 0 (the rest zero),
// extend16 sign-extends the low four i16 lanes to i32x4, convertLow
// converts the low two i32 lanes to f64x2 (exactly).
func (f *fn) load32zero(off uint32) { f.simd(0x5c); f.memarg(2, off) }
func (f *fn) extend16()             { f.simd(0xa7) }
func (f *fn) convertLow()           { f.simd(0xfe) }

// splatF64 pushes v in both f64x2 lanes.
func (f *fn) splatF64(v float64) {
	f.f64c(v)
	f.f64x2splat()
}

// f64x2splat, f64x2replace (lane) and the scalar f64 add and constant.
func (f *fn) f64x2splat()            { f.simd(0x14) }
func (f *fn) f64x2replace(lane byte) { f.simd(0x22); f.op(lane) }
func (f *fn) f64add()                { f.op(0xa0) }
func (f *fn) f64sub()                { f.op(0xa1) }
func (f *fn) f64mul()                { f.op(0xa2) }
func (f *fn) f64c(v float64) {
	f.op(0x44)
	f.code = binary.LittleEndian.AppendUint64(f.code, math.Float64bits(v))
}

// f64x2 comparisons (all-ones lanes where true) and v128.or.
func (f *fn) f64x2ne() { f.simd(0x48) }
func (f *fn) f64x2gt() { f.simd(0x4a) }
func (f *fn) f64x2ge() { f.simd(0x4c) }
func (f *fn) vor()     { f.simd(0x50) }
func (f *fn) vand()    { f.simd(0x4e) }
func (f *fn) vxor()    { f.simd(0x51) }

// f64x2le pushes all-ones lanes where a <= b (false for NaN);
// allTrue64 pushes 1 when every i64x2 lane is non-zero.
func (f *fn) f64x2le()   { f.simd(0x4b) }
func (f *fn) allTrue64() { f.simd(0xc3) }

// truncSatZero converts f64x2 to the low two i32x4 lanes (exact for
// integers in range), narrow16 packs two i32x4 into i16x8 (saturating).
func (f *fn) truncSatZero() { f.simd(0xfc) }
func (f *fn) narrow16()     { f.simd(0x85) }

// shuffle8 picks the bytes of the concatenation of its two operands.
func (f *fn) shuffle8(idx [16]byte) {
	f.simd(0x0d)
	f.op(idx[:]...)
}

// i32store stores an i32 (alignment 4).
func (f *fn) i32store(off uint32) { f.op(0x36); f.memarg(2, off) }

// i32 bit test: pushes flags&bit != 0.
func (f *fn) i32and() { f.op(0x71) }
func (f *fn) ifThen() { f.op(0x04, 0x40) }
func (f *fn) elseDo() { f.op(0x05) }

// vconst2 pushes the f64x2 constant (a, b); shuffle64 the lanes (i, j)
// of the concatenation of its two operands (0, 1 the first's, 2, 3 the
// second's).
func (f *fn) vconst2(a, b float64) {
	f.simd(0x0c)
	f.code = binary.LittleEndian.AppendUint64(f.code, math.Float64bits(a))
	f.code = binary.LittleEndian.AppendUint64(f.code, math.Float64bits(b))
}
func (f *fn) shuffle64(i, j byte) {
	f.simd(0x0d)
	for _, l := range []byte{i, j} {
		for b := range byte(8) {
			f.op(8*l + b)
		}
	}
}

// f64x2 arithmetic: each lane is the scalar IEEE operation.
func (f *fn) f64x2add() { f.simd(0xf0) }
func (f *fn) f64x2sub() { f.simd(0xf1) }
func (f *fn) f64x2mul() { f.simd(0xf2) }
func (f *fn) f64x2div() { f.simd(0xf3) }

// f64x2 pmin(a, b) is b if b < a else a, pmax(a, b) b if a < b else a:
// Go's "if v < lo { lo = v }" and "if v > hi { hi = v }" per lane.
func (f *fn) f64x2pmin() { f.simd(0xf6) }
func (f *fn) f64x2pmax() { f.simd(0xf7) }

// i32 arithmetic.
func (f *fn) i32add() { f.op(0x6a) }
func (f *fn) i32sub() { f.op(0x6b) }
func (f *fn) i32leS() { f.op(0x4c) }
func (f *fn) i32gtS() { f.op(0x4a) }
func (f *fn) i32shl() { f.op(0x74) }

// i32load loads an i32 (alignment 4).
func (f *fn) i32load(off uint32) { f.op(0x28); f.memarg(2, off) }

// addTo adds v to the i32 local i.
func (f *fn) addTo(i uint32, v int32) {
	f.get(i)
	f.i32c(v)
	f.i32add()
	f.set(i)
}

// module returns the binary module of fns, which imports its memory as
// env.mem and exports every function under its name.
func module(fns []*fn) []byte {
	b := []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}
	section := func(id byte, body []byte) {
		b = append(b, id)
		b = uleb(b, uint64(len(body)))
		b = append(b, body...)
	}
	str := func(b []byte, s string) []byte {
		b = uleb(b, uint64(len(s)))
		return append(b, s...)
	}
	// Types: one per function (none returns a value).
	var types []byte
	types = uleb(types, uint64(len(fns)))
	for _, f := range fns {
		types = append(types, 0x60)
		p := f.paramTypes()
		types = uleb(types, uint64(len(p)))
		types = append(types, p...)
		types = append(types, 0)
	}
	section(1, types)
	var imports []byte
	imports = uleb(imports, 1)
	imports = str(imports, "env")
	imports = str(imports, "mem")
	imports = append(imports, 0x02, 0x00, 0x00) // memory, min 0 pages, no max
	section(2, imports)
	var funcs []byte
	funcs = uleb(funcs, uint64(len(fns)))
	for i := range fns {
		funcs = uleb(funcs, uint64(i))
	}
	section(3, funcs)
	var exports []byte
	exports = uleb(exports, uint64(len(fns)))
	for i, f := range fns {
		exports = str(exports, f.name)
		exports = append(exports, 0x00)
		exports = uleb(exports, uint64(i))
	}
	section(7, exports)
	var code []byte
	code = uleb(code, uint64(len(fns)))
	for _, f := range fns {
		var body []byte
		body = uleb(body, uint64(len(f.locals)))
		for _, t := range f.locals {
			body = append(body, 1, t)
		}
		body = append(body, f.code...)
		body = append(body, 0x0b)
		code = uleb(code, uint64(len(body)))
		code = append(code, body...)
	}
	section(10, code)
	return b
}
