//go:build !purego

package spectral

// denseTanh48AVX2 is denseTanhGo for 48 bands from x and out (rows of
// stride bytes), nout units of nin inputs, bit-identical; k is isoTanhK.
//
//go:noescape
func denseTanh48AVX2(w, bias, x, out *float32, nin, nout, stride int, k *[10][8]float32)

// binRowsAVX2 is binRows' loop over ng groups of four bins from bin 1,
// bit-identical: lo is binLowLog2, per binRowsPerOctave, top the last row;
// k is gainConsts (its fastLog2 constants).
//
//go:noescape
func binRowsAVX2(pow *float64, rows *int32, ng int, by3, lo, per float64, top int, k *[gkCount][4]uint64)
