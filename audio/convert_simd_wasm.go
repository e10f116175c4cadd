//go:build wasmsimd && !purego

package audio

// hasDecode16 says decode16 and encode16, internal/wasmsimd's SIMD
// kernels of the browser build, decode and encode 16-bit stereo: the
// loops' arithmetic, lane by lane (TestStereo16IsMono under GOOS=js with
// the kernels linked).
const hasDecode16 = true

//go:wasmimport audiopost_simd decode16
//go:noescape
func decode16(l, r *float64, src *byte, n int32)

//go:wasmimport audiopost_simd encode16
//go:noescape
func encode16(dst *byte, l, r *float64, n int32, done *int32)
