//go:build !wasmsimd && !purego

package audio

// Without the build tag wasmsimd there are no SIMD kernels: the Go loop
// decodes.
const hasDecode16 = false

func decode16(l, r *float64, src *byte, n int32) {
	panic("audio: no decode16 kernel without the build tag wasmsimd")
}

func encode16(dst *byte, l, r *float64, n int32, done *int32) {
	panic("audio: no encode16 kernel without the build tag wasmsimd")
}
