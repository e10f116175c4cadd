//go:build !purego && (amd64 || (wasm && wasmsimd))

package loudness

// hasStereoKernel reports whether energy2 runs the kernel.
const hasStereoKernel = true

// energy2 is energy of f on l and of g on r, bit-identical to two calls,
// in about the time of one: the recursions are latency-bound, and the
// kernel (SSE2 on amd64, WebAssembly SIMD in the browser build) runs both
// channels' in the two lanes of one register. f and g
// have the same coefficients, coef is f.packStereo().
func energy2(f, g *kfilter, l, r, coef []float64) (float64, float64) {
	r = r[:len(l)]
	if len(l) == 0 {
		return 0, 0
	}
	_ = coef[15]
	state := stereoState(f, g)
	var sums [2]float64
	kstereo(&l[0], &r[0], len(l), &coef[0], &state[0], &sums[0])
	setStereoState(f, g, &state)
	return sums[0], sums[1]
}

// energy2Sq is energy2 that also adds the squares of l and r into the
// running sums of sq as sumSquares adds them: sq[0], sq[1] (left, right)
// take the first frame, sq[2], sq[3] the second, and so on alternately,
// and sq leaves with the next frame's pair first. Starting from zeros at
// a block's first frame, (sq[0]+sq[2]) and (sq[1]+sq[3]) after its last
// are sumSquares of its left and right channels to the bit.
func energy2Sq(f, g *kfilter, l, r, coef []float64, sq *[4]float64) (float64, float64) {
	r = r[:len(l)]
	if len(l) == 0 {
		return 0, 0
	}
	_ = coef[15]
	state := stereoState(f, g)
	var sums [2]float64
	kstereoSq(&l[0], &r[0], len(l), &coef[0], &state[0], &sums[0], &sq[0])
	setStereoState(f, g, &state)
	return sums[0], sums[1]
}

// stereoState interleaves the recursions' state of f (left) and g (right)
// as the kernels' lanes hold it.
func stereoState(f, g *kfilter) [12]float64 {
	return [12]float64{f.x1, g.x1, f.x2, g.x2, f.y1, g.y1, f.y2, g.y2, f.z1, g.z1, f.z2, g.z2}
}

// setStereoState gives f and g back the state a kernel left in s.
func setStereoState(f, g *kfilter, s *[12]float64) {
	f.x1, g.x1, f.x2, g.x2, f.y1, g.y1 = s[0], s[1], s[2], s[3], s[4], s[5]
	f.y2, g.y2, f.z1, g.z1, f.z2, g.z2 = s[6], s[7], s[8], s[9], s[10], s[11]
	f.flushTiny()
	g.flushTiny()
}
