//go:build !amd64 || purego

package loudness

const hasStereoKernel = false

// energy2 is energy of f on l and of g on r.
func energy2(f, g *kfilter, l, r, coef []float64) (float64, float64) {
	return f.energy(l), g.energy(r)
}
