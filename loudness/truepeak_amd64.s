//go:build !purego

#include "textflag.h"

// peaks3AVX is branchPeak of the three branches of the 4x interpolator
// at once, eight outputs per 256-bit register: each lane computes the Go
// loop's products and its tree of sums in the same order (float32, no
// fused multiply-add), so every output is bit-identical to branchPeak's,
// and the comparisons are branchPeak's (a NaN output changes neither
// extreme). The windows of eight neighbouring outputs are one unaligned
// load per tap, shared by the three branches.
//
// taps (32-byte aligned not required): per branch and tap the tap eight
// times. hilo receives the eight lanes' largest and smallest outputs,
// starting from the values it holds.

// TAP multiplies the window of tap J (buf + 4*J) by branch P's tap into R.
#define TAP(P, J, R) \
	VMOVUPS (4*J)(SI), R; \
	VMULPS  ((P*12+J)*32)(CX), R, R

// BRANCH sets Y0 to branch P's eight outputs, as branchPeak sums them:
// ((t0w0+t1w1)+(t2w2+t3w3)) + ((t4w4+t5w5)+(t6w6+t7w7)) +
// ((t8w8+t9w9)+(t10w10+t11w11)), and updates the extremes Y14, Y15.
#define BRANCH(P) \
	TAP(P, 0, Y0); \
	TAP(P, 1, Y1); \
	VADDPS Y1, Y0, Y0; \
	TAP(P, 2, Y1); \
	TAP(P, 3, Y2); \
	VADDPS Y2, Y1, Y1; \
	VADDPS Y1, Y0, Y0; \
	TAP(P, 4, Y1); \
	TAP(P, 5, Y2); \
	VADDPS Y2, Y1, Y1; \
	TAP(P, 6, Y2); \
	TAP(P, 7, Y3); \
	VADDPS Y3, Y2, Y2; \
	VADDPS Y2, Y1, Y1; \
	VADDPS Y1, Y0, Y0; \
	TAP(P, 8, Y1); \
	TAP(P, 9, Y2); \
	VADDPS Y2, Y1, Y1; \
	TAP(P, 10, Y2); \
	TAP(P, 11, Y3); \
	VADDPS Y3, Y2, Y2; \
	VADDPS Y2, Y1, Y1; \
	VADDPS Y1, Y0, Y0; \
	VMAXPS Y14, Y0, Y14; \
	VMINPS Y15, Y0, Y15

// func peaks3AVX(taps *[3][12][8]float32, buf *float32, n int, hilo *[16]float32)
TEXT ·peaks3AVX(SB), NOSPLIT, $0-32
	MOVQ taps+0(FP), CX
	MOVQ buf+8(FP), SI
	MOVQ n+16(FP), DX
	MOVQ hilo+24(FP), BX
	VMOVUPS 0(BX), Y14
	VMOVUPS 32(BX), Y15
	SHRQ $3, DX
	JZ   done

loop:
	BRANCH(0)
	BRANCH(1)
	BRANCH(2)
	ADDQ $32, SI
	DECQ DX
	JNZ  loop

done:
	VMOVUPS Y14, 0(BX)
	VMOVUPS Y15, 32(BX)
	VZEROUPPER
	RET

DATA absmask<>+0(SB)/8, $0x7FFFFFFFFFFFFFFF
GLOBL absmask<>(SB), RODATA|NOPTR, $8

// func absMaxAVX2(x *float64, n int) uint64
// The largest bit pattern of |x[i]| over n values, n a multiple of 8: the
// patterns (below 2^63 once the sign is cleared) compare as signed
// integers like the magnitudes, a NaN above every number, as absMax's.
TEXT ·absMaxAVX2(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VPBROADCASTQ absmask<>(SB), Y15
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	SHRQ $3, CX
	JZ   amdone
amloop:
	VPAND (SI), Y15, Y2
	VPAND 32(SI), Y15, Y3
	VPCMPGTQ Y0, Y2, Y4
	VBLENDVPD Y4, Y2, Y0, Y0
	VPCMPGTQ Y1, Y3, Y5
	VBLENDVPD Y5, Y3, Y1, Y1
	ADDQ $64, SI
	DECQ CX
	JNZ  amloop
amdone:
	VPCMPGTQ Y0, Y1, Y4
	VBLENDVPD Y4, Y1, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPCMPGTQ X0, X1, X4
	VBLENDVPD X4, X1, X0, X0
	VPSHUFD $0xEE, X0, X1
	VPCMPGTQ X0, X1, X4
	VBLENDVPD X4, X1, X0, X0
	VMOVQ X0, AX
	MOVQ AX, ret+16(FP)
	VZEROUPPER
	RET
