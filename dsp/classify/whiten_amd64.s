//go:build !purego

#include "textflag.h"

// whitenAVX is the interior of periodicity's whitening loop, four bins
// per 256-bit register: for bin i, m = (hiP[i] - loP[i]) / w and, where
// m > 0, v = pow[i] / m * taper[i] (else +0), stored as complex(v, 0).
// Each lane performs the Go loop's operations in its order (IEEE
// division and products, no fused multiply-add), so the values are
// bit-identical to it. n is a multiple of four.

// func whitenAVX(hiP, loP, pow, taper *float64, w float64, out *complex128, n int)
TEXT ·whitenAVX(SB), NOSPLIT, $0-56
	MOVQ hiP+0(FP), SI
	MOVQ loP+8(FP), DI
	MOVQ pow+16(FP), R8
	MOVQ taper+24(FP), R9
	VBROADCASTSD w+32(FP), Y15
	MOVQ out+40(FP), DX
	MOVQ n+48(FP), CX
	VXORPD Y14, Y14, Y14
	SHRQ $2, CX
	JZ   done
loop:
	VMOVUPD (SI), Y0
	VSUBPD  (DI), Y0, Y0
	VDIVPD  Y15, Y0, Y0       // m
	VCMPPD  $0x1E, Y14, Y0, Y1 // m > 0 (ordered, quiet)
	VMOVUPD (R8), Y2
	VDIVPD  Y0, Y2, Y2        // pow / m
	VMULPD  (R9), Y2, Y2      // * taper
	VANDPD  Y1, Y2, Y2        // +0 where not m > 0
	VUNPCKLPD Y14, Y2, Y3     // v0 0 | v2 0
	VUNPCKHPD Y14, Y2, Y4     // v1 0 | v3 0
	VPERM2F128 $0x20, Y4, Y3, Y5
	VPERM2F128 $0x31, Y4, Y3, Y6
	VMOVUPD Y5, (DX)
	VMOVUPD Y6, 32(DX)
	ADDQ $32, SI
	ADDQ $32, DI
	ADDQ $32, R8
	ADDQ $32, R9
	ADDQ $64, DX
	DECQ CX
	JNZ  loop
done:
	VZEROUPPER
	RET

// func normaliseAVX(ac, rw, nac *float64, r0 float64, n int)
// nac[i] = ac[i] / (r0 * rw[i]) for n values, n a multiple of four.
TEXT ·normaliseAVX(SB), NOSPLIT, $0-40
	MOVQ ac+0(FP), SI
	MOVQ rw+8(FP), DI
	MOVQ nac+16(FP), DX
	VBROADCASTSD r0+24(FP), Y15
	MOVQ n+32(FP), CX
	SHRQ $2, CX
	JZ   ndone
nloop:
	VMULPD  (DI), Y15, Y1      // r0 * rw
	VMOVUPD (SI), Y0
	VDIVPD  Y1, Y0, Y0
	VMOVUPD Y0, (DX)
	ADDQ $32, SI
	ADDQ $32, DI
	ADDQ $32, DX
	DECQ CX
	JNZ  nloop
ndone:
	VZEROUPPER
	RET
