//go:build (!amd64 && !(wasm && wasmsimd)) || purego

package loudness

const hasStereoKernel = false

// energy2 is energy of f on l and of g on r.
func energy2(f, g *kfilter, l, r, coef []float64) (float64, float64) {
	return f.energy(l), g.energy(r)
}

// energy2Sq is energy2; the meter adds the squares itself where there is
// no stereo kernel.
func energy2Sq(f, g *kfilter, l, r, coef []float64, _ *[4]float64) (float64, float64) {
	return energy2(f, g, l, r, coef)
}
