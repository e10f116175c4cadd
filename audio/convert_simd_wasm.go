//go:build wasmsimd && !purego

package audio

// hasDecode16 says decode16, internal/wasmsimd's SIMD kernel of the
// browser build, decodes 16-bit stereo: the loop's arithmetic, lane by
// lane (TestStereo16IsMono under GOOS=js with the kernels linked).
const hasDecode16 = true

//go:wasmimport audiopost_simd decode16
//go:noescape
func decode16(l, r *float64, src *byte, n int32)
