package dsp

// maxPos is max(a, b) for operands that are not negative (or NaN, which
// it returns as max does; max(-0, +0) is the one case it would not
// follow). Go's WebAssembly compiler turns the float max builtin into a
// call of the runtime, and a call spills the loop's values to memory: in
// the limiter's per-frame loops the comparison took the node from 163 to
// 149 ns per frame of CPU time in V8 (the best of five runs each).
func maxPos(a, b float64) float64 {
	if a > b || a != a {
		return a
	}
	return b
}
