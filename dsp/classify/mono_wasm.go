//go:build wasmsimd && !purego

package classify

//go:wasmimport audiopost_simd mono2
//go:noescape
func mono2Kernel(l, r, mono *float64, n int32)

// mono2 is mono2Go, the leading even number of frames by
// internal/wasmsimd's mono2 kernel, the loop's sums and product lane by
// lane (unless the kernel test switches useKernel off).
func mono2(mono, l, r []float64) {
	m := len(mono) &^ 1
	if useKernel && m > 0 {
		_, _ = l[m-1], r[m-1]
		mono2Kernel(&l[0], &r[0], &mono[0], int32(m))
	} else {
		m = 0
	}
	mono2Go(mono[m:], l[m:], r[m:])
}
