//go:build !wasm

package dsp

// maxPos is max(a, b) for operands that are not negative (or NaN): the
// builtin, one instruction here (see maxpos_wasm.go).
func maxPos(a, b float64) float64 { return max(a, b) }
