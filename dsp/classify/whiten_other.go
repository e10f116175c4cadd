//go:build (!amd64 && !(wasm && wasmsimd)) || purego

package classify

// whitenInterior leaves every bin to the caller's loop.
func (s *spectral) whitenInterior(k0, k1, wk int) int { return k0 }

// normalise sets nac[l] = ac[l] / (r0 * rw[l]) for l in [l0, l1).
func normalise(nac, ac, rw []float64, r0 float64, l0, l1 int) {
	for l := l0; l < l1; l++ {
		nac[l] = ac[l] / (r0 * rw[l])
	}
}
