//go:build !amd64 || purego

package spectral

func denseTanh48AVX2(w, bias, x, out *float32, nin, nout, stride int, k *[10][8]float32) {
	panic("spectral: no AVX2 kernels")
}

func binRowsAVX2(pow *float64, rows *int32, ng int, by3, lo, per float64, top int, k *[gkCount][4]uint64) {
	panic("spectral: no AVX2 kernels")
}
