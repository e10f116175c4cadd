//go:build !purego

#include "textflag.h"
#include "fastlog2_amd64.h"

// The AVX2 kernels of gainkern.go, four bins at a time: each does its Go
// function's operations in the same order (no fused multiply-add; min and
// max as Go's for numbers that are not NaN), so the results are
// bit-identical (TestGainKernelsAreGo). R8 points at gainConsts, whose
// rows are four copies of a constant; their offsets (32 bytes a row, in
// the order of the gk constants):
#define K_One 0(R8)
#define K_Tiny 32(R8)
#define K_GammaMax 64(R8)
#define K_Alpha 96(R8)
#define K_OneMinusAlpha 128(R8)
#define K_XiMin 160(R8)
#define K_VLo 192(R8)
#define K_VHi 224(R8)
#define K_64 256(R8)
#define K_Log2C1 288(R8)
#define K_Log2C2 320(R8)
#define K_Log2C3 352(R8)
#define K_Log2C4 384(R8)
#define K_Log2C5 416(R8)
#define K_Log2C6 448(R8)
#define K_ExpBias 480(R8)
#define K_Exp2C1 512(R8)
#define K_Exp2C2 544(R8)
#define K_Exp2C3 576(R8)
#define K_Exp2C4 608(R8)
#define K_Exp2C5 640(R8)
#define K_1022 672(R8)
#define K_Log2E 704(R8)
#define K_700 736(R8)
#define K_ZetaMin 768(R8)
#define K_ZetaMax 800(R8)
#define K_ZetaLog2Min 832(R8)
#define K_ZetaInvSpan 864(R8)
#define K_QMax 896(R8)
#define K_GFloor 928(R8)
#define K_Mant46 960(R8)
#define K_LsaOff 992(R8)
#define K_Mant52 1024(R8)
#define K_OneBits 1056(R8)
#define K_Magic52 1088(R8)
#define K_1023 1120(R8)
#define K_Sign 1152(R8)

// FASTEXP2NEG sets D to fastExp2Neg(Y) (Y > -1, kept); T (XT its low
// half), A and M are clobbered.
#define FASTEXP2NEG(Y, D, T, XT, A, M) \
	VCMPPD      $0x0E, K_1022, Y, M; \
	VROUNDPD    $3, Y, T; \
	VSUBPD      T, Y, T; \
	VMULPD      K_Exp2C5, T, A; \
	VADDPD      K_Exp2C4, A, A; \
	VMULPD      T, A, A; \
	VADDPD      K_Exp2C3, A, A; \
	VMULPD      T, A, A; \
	VADDPD      K_Exp2C2, A, A; \
	VMULPD      T, A, A; \
	VADDPD      K_Exp2C1, A, A; \
	VMULPD      T, A, A; \
	VADDPD      K_One, A, A; \
	VCVTTPD2DQY Y, XT; \
	VPMOVZXDQ   XT, T; \
	VMOVDQU     K_1023, D; \
	VPSUBQ      T, D, D; \
	VPSLLQ      $52, D, D; \
	VMULPD      D, A, D; \
	VANDNPD     D, M, D

// LSAFACTOR sets D (XD its low half) to lsaFactor(V) (V kept), R9
// pointing at lsaTab: each bin's pair of neighbouring points loaded whole
// (a gather per point cost twice the rest of the pass); T, A (XA), I (XI),
// BX, DX and R13 are clobbered.
#define LSAFACTOR(V, D, XD, T, A, XA, I, XI) \
	VMAXPD       K_VLo, V, T; \
	VMINPD       K_VHi, T, T; \
	VPSRLQ       $46, T, I; \
	VPSUBQ       K_LsaOff, I, I; \
	VMOVQ        XI, BX; \
	VPEXTRQ      $1, XI, DX; \
	VEXTRACTI128 $1, I, XI; \
	VMOVQ        XI, R13; \
	VMOVUPD      (R9)(BX*8), XD; \
	VPEXTRQ      $1, XI, BX; \
	VINSERTF128  $1, (R9)(R13*8), D, D; \
	VMOVUPD      (R9)(DX*8), XA; \
	VINSERTF128  $1, (R9)(BX*8), A, A; \
	VUNPCKHPD    A, D, I; \
	VUNPCKLPD    A, D, D; \
	VSUBPD       D, I, A; \
	VPAND        K_Mant46, T, T; \
	VPOR         K_OneBits, T, T; \
	VSUBPD       K_One, T, T; \
	VMULPD       K_64, T, T; \
	VMULPD       A, T, A; \
	VADDPD       A, D, D

// ZETAL sets D to zetaLikelihood(Z) (Z kept); T, A and M are clobbered.
#define ZETAL(Z, D, T, A, M) \
	FASTLOG2(Z, D, T, A); \
	VSUBPD    K_ZetaLog2Min, D, D; \
	VMULPD    K_ZetaInvSpan, D, D; \
	VCMPPD    $0x02, K_ZetaMin, Z, M; \
	VANDNPD   D, M, D; \
	VCMPPD    $0x0D, K_ZetaMax, Z, M; \
	VBLENDVPD M, K_One, D, D

// func lsaFirstAVX2(P, noise, prevA, r, gam *float64, n int, over float64, k *[gkCount][4]uint64)
TEXT ·lsaFirstAVX2(SB), NOSPLIT, $0-64
	MOVQ P+0(FP), SI
	MOVQ noise+8(FP), DI
	MOVQ prevA+16(FP), R10
	MOVQ r+24(FP), R11
	MOVQ gam+32(FP), R12
	MOVQ n+40(FP), CX
	VBROADCASTSD over+48(FP), Y15
	MOVQ k+56(FP), R8
	SHLQ $3, CX
	XORQ AX, AX
	VXORPD Y14, Y14, Y14

first:
	VMULPD  (DI)(AX*1), Y15, Y0 // noise*over
	VMAXPD  K_Tiny, Y0, Y0
	VMOVUPD K_One, Y1
	VDIVPD  Y0, Y1, Y1          // il
	VMULPD  (SI)(AX*1), Y1, Y2
	VMINPD  K_GammaMax, Y2, Y2  // gamma
	VMOVUPD (R10)(AX*1), Y3
	VMULPD  K_Alpha, Y3, Y3
	VMULPD  Y1, Y3, Y3          // ddAlpha*prevA*il
	VSUBPD  K_One, Y2, Y4
	VMAXPD  Y14, Y4, Y4
	VMULPD  K_OneMinusAlpha, Y4, Y4
	VADDPD  Y4, Y3, Y3
	VMAXPD  K_XiMin, Y3, Y3     // xi
	VADDPD  K_One, Y3, Y4
	VDIVPD  Y4, Y3, Y4          // xi/(1+xi)
	VMOVUPD Y4, (R11)(AX*1)
	VMOVUPD Y2, (R12)(AX*1)
	ADDQ    $32, AX
	CMPQ    AX, CX
	JLT     first
	VZEROUPPER
	RET

// func lsaRefineAVX2(P, prevA, xi, r, gam *float64, n int, k *[gkCount][4]uint64, tab *float64)
TEXT ·lsaRefineAVX2(SB), NOSPLIT, $0-64
	MOVQ P+0(FP), SI
	MOVQ prevA+8(FP), R10
	MOVQ xi+16(FP), DI
	MOVQ r+24(FP), R11
	MOVQ gam+32(FP), R12
	MOVQ n+40(FP), CX
	MOVQ k+48(FP), R8
	MOVQ tab+56(FP), R9
	SHLQ $3, CX
	XORQ AX, AX

refine:
	VMOVUPD (R11)(AX*1), Y0 // r1
	VMOVUPD (R12)(AX*1), Y1 // gamma
	VMULPD  Y1, Y0, Y2
	LSAFACTOR(Y2, Y3, X3, Y4, Y5, X5, Y6, X6)
	VMULPD  Y3, Y0, Y3
	VMINPD  K_One, Y3, Y3       // g1
	VMULPD  Y3, Y3, Y3          // g1*g1
	VMULPD  (SI)(AX*1), Y3, Y4
	VMOVUPD Y4, (R10)(AX*1)     // prevA
	VMULPD  Y1, Y3, Y4
	VMAXPD  K_XiMin, Y4, Y4     // xi
	VMOVUPD Y4, (DI)(AX*1)
	VADDPD  K_One, Y4, Y5
	VDIVPD  Y5, Y4, Y5          // r2
	VMULPD  Y1, Y5, Y1          // v
	VMOVUPD Y1, (R12)(AX*1)
	LSAFACTOR(Y1, Y3, X3, Y4, Y6, X6, Y8, X8)
	VMULPD  Y3, Y5, Y3
	VMINPD  K_One, Y3, Y3
	VMOVUPD Y3, (R11)(AX*1)
	ADDQ    $32, AX
	CMPQ    AX, CX
	JLT     refine
	VZEROUPPER
	RET

// func presenceProbAVX2(pS, zw, xi, gam *float64, n int, pf float64, k *[gkCount][4]uint64)
TEXT ·presenceProbAVX2(SB), NOSPLIT, $0-56
	MOVQ pS+0(FP), SI
	MOVQ zw+8(FP), DI
	MOVQ xi+16(FP), R10
	MOVQ gam+24(FP), R11
	MOVQ n+32(FP), CX
	VBROADCASTSD pf+40(FP), Y15
	MOVQ k+48(FP), R8
	SHLQ $3, CX
	XORQ AX, AX

presence:
	VMOVUPD (SI)(AX*1), Y0
	ZETAL(Y0, Y1, Y9, Y10, Y11)
	VMOVUPD (DI)(AX*1), Y0
	ZETAL(Y0, Y2, Y9, Y10, Y11)
	VMULPD  Y2, Y1, Y1
	VMULPD  Y15, Y1, Y1
	VMOVUPD K_One, Y2
	VSUBPD  Y1, Y2, Y1
	VMINPD  K_QMax, Y1, Y1      // q
	VMOVUPD K_One, Y2
	VSUBPD  Y1, Y2, Y2          // 1-q
	VMOVUPD (R10)(AX*1), Y3
	VADDPD  K_One, Y3, Y3
	VMULPD  Y3, Y1, Y3          // q*(1+xi)
	VMOVUPD (R11)(AX*1), Y4
	VMINPD  K_700, Y4, Y4
	VMULPD  K_Log2E, Y4, Y4
	FASTEXP2NEG(Y4, Y5, Y6, X6, Y7, Y8)
	VMULPD  Y5, Y3, Y3
	VADDPD  Y3, Y2, Y3
	VDIVPD  Y3, Y2, Y3
	VMOVUPD Y3, (SI)(AX*1)
	ADDQ    $32, AX
	CMPQ    AX, CX
	JLT     presence
	VZEROUPPER
	RET

// func omLSAAVX2(G, p, lsa *float64, n int, lf, fl float64, k *[gkCount][4]uint64)
TEXT ·omLSAAVX2(SB), NOSPLIT, $0-56
	MOVQ G+0(FP), R10
	MOVQ p+8(FP), SI
	MOVQ lsa+16(FP), DI
	MOVQ n+24(FP), CX
	VBROADCASTSD lf+32(FP), Y14
	VBROADCASTSD fl+40(FP), Y15
	MOVQ k+48(FP), R8
	SHLQ $3, CX
	XORQ AX, AX

omlsa:
	VMOVUPD (DI)(AX*1), Y0
	VMAXPD  K_GFloor, Y0, Y0
	FASTLOG2(Y0, Y1, Y2, Y3)
	VMOVUPD (SI)(AX*1), Y4      // p
	VMULPD  Y1, Y4, Y1          // p*log2 g
	VMOVUPD K_One, Y5
	VSUBPD  Y4, Y5, Y5
	VMULPD  Y14, Y5, Y5         // (1-p)*lf
	VADDPD  Y5, Y1, Y1
	VXORPD  K_Sign, Y1, Y1
	FASTEXP2NEG(Y1, Y2, Y3, X3, Y5, Y6)
	VMAXPD  Y15, Y2, Y2
	VMINPD  K_One, Y2, Y2
	VMOVUPD Y2, (R10)(AX*1)
	ADDQ    $32, AX
	CMPQ    AX, CX
	JLT     omlsa
	VZEROUPPER
	RET

// func minStatAVX2(P, cur, curMax, old, oldMax, floor *float64, n int, bias, steady float64)
TEXT ·minStatAVX2(SB), NOSPLIT, $0-72
	MOVQ P+0(FP), SI
	MOVQ cur+8(FP), DI
	MOVQ curMax+16(FP), R10
	MOVQ old+24(FP), R11
	MOVQ oldMax+32(FP), R12
	MOVQ floor+40(FP), R13
	MOVQ n+48(FP), CX
	VBROADCASTSD bias+56(FP), Y14
	VBROADCASTSD steady+64(FP), Y15
	SHLQ $3, CX
	XORQ AX, AX

minstat:
	VMOVUPD (SI)(AX*1), Y0
	VMOVUPD (DI)(AX*1), Y1
	VMINPD  Y0, Y1, Y1      // c = min(cur, v)
	VMOVUPD (R10)(AX*1), Y2
	VMAXPD  Y0, Y2, Y2      // cm = max(curMax, v)
	VMOVUPD Y1, (DI)(AX*1)
	VMOVUPD Y2, (R10)(AX*1)
	VMINPD  (R11)(AX*1), Y1, Y1 // m = min(c, old)
	VMAXPD  (R12)(AX*1), Y2, Y2 // M = max(cm, oldMax)
	VMULPD  Y1, Y14, Y3     // msBias*m
	VMULPD  Y1, Y15, Y4     // msSteady*m
	VCMPPD  $0x01, Y4, Y2, Y4 // M < msSteady*m
	VANDNPD Y3, Y4, Y3
	VMOVUPD Y3, (R13)(AX*1)
	ADDQ    $32, AX
	CMPQ    AX, CX
	JLT     minstat
	VZEROUPPER
	RET

// func maxOfAVX2(dst, a, b *float64, n int)
TEXT ·maxOfAVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), R10
	MOVQ n+24(FP), CX
	SHLQ $3, CX
	XORQ AX, AX

maxof:
	VMOVUPD (SI)(AX*1), Y0
	VMAXPD  (R10)(AX*1), Y0, Y0
	VMOVUPD Y0, (DI)(AX*1)
	ADDQ    $32, AX
	CMPQ    AX, CX
	JLT     maxof
	VZEROUPPER
	RET

// func addRampAVX2(o *float64, n int, st *[4][4]float64, da4, r4 complex128)
//
// addRamp's four lanes: st holds their amplitudes' real and imaginary
// parts and their phasors', and gets them back after n frames.
TEXT ·addRampAVX2(SB), NOSPLIT, $0-56
	MOVQ o+0(FP), DI
	MOVQ n+8(FP), CX
	MOVQ st+16(FP), SI
	VMOVUPD 0(SI), Y0
	VMOVUPD 32(SI), Y1
	VMOVUPD 64(SI), Y2
	VMOVUPD 96(SI), Y3
	VBROADCASTSD da4_real+24(FP), Y4
	VBROADCASTSD da4_imag+32(FP), Y5
	VBROADCASTSD r4_real+40(FP), Y6
	VBROADCASTSD r4_imag+48(FP), Y7
	SHLQ $3, CX
	XORQ AX, AX

ramp:
	VMULPD  Y2, Y0, Y8
	VMULPD  Y3, Y1, Y9
	VSUBPD  Y9, Y8, Y8      // Re(a z)
	VADDPD  (DI)(AX*1), Y8, Y8
	VMOVUPD Y8, (DI)(AX*1)
	VADDPD  Y4, Y0, Y0      // a += 4 da
	VADDPD  Y5, Y1, Y1
	VMULPD  Y6, Y2, Y8
	VMULPD  Y7, Y3, Y9
	VSUBPD  Y9, Y8, Y8      // Re(z r^4)
	VMULPD  Y7, Y2, Y9
	VMULPD  Y6, Y3, Y10
	VADDPD  Y10, Y9, Y3     // Im(z r^4)
	VMOVAPD Y8, Y2
	ADDQ    $32, AX
	CMPQ    AX, CX
	JLT     ramp
	VMOVUPD Y0, 0(SI)
	VMOVUPD Y1, 32(SI)
	VMOVUPD Y2, 64(SI)
	VMOVUPD Y3, 96(SI)
	VZEROUPPER
	RET

// func dotTabsAVX2(x *float64, n int, t *float64, kp int, outR, outI *float64)
//
// phasorTabs.dots: four tables a block, each lane summing the even and the
// odd samples apart and then together, as dotTab does.
TEXT ·dotTabsAVX2(SB), NOSPLIT, $0-48
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ t+16(FP), DI
	MOVQ kp+24(FP), DX
	MOVQ outR+32(FP), R10
	MOVQ outI+40(FP), R11
	MOVQ DX, R12
	SHLQ $4, R12 // bytes per sample
	MOVQ DX, R13
	SHLQ $3, R13 // the imaginary parts' offset, and the end of the blocks
	XORQ BX, BX

dotblock:
	VXORPD Y0, Y0, Y0 // re, even samples
	VXORPD Y1, Y1, Y1 // im, even
	VXORPD Y2, Y2, Y2 // re, odd
	VXORPD Y3, Y3, Y3 // im, odd
	LEAQ   (DI)(BX*1), R8
	MOVQ   SI, R9
	MOVQ   CX, AX

dotpair:
	CMPQ         AX, $2
	JLT          dottail
	VBROADCASTSD 0(R9), Y4
	VBROADCASTSD 8(R9), Y5
	VMULPD       0(R8), Y4, Y6
	VADDPD       Y6, Y0, Y0
	VMULPD       (R8)(R13*1), Y4, Y7
	VADDPD       Y7, Y1, Y1
	ADDQ         R12, R8
	VMULPD       0(R8), Y5, Y8
	VADDPD       Y8, Y2, Y2
	VMULPD       (R8)(R13*1), Y5, Y9
	VADDPD       Y9, Y3, Y3
	ADDQ         R12, R8
	ADDQ         $16, R9
	SUBQ         $2, AX
	JMP          dotpair

dottail:
	TESTQ        AX, AX
	JZ           dotdone
	VBROADCASTSD 0(R9), Y4
	VMULPD       0(R8), Y4, Y6
	VADDPD       Y6, Y0, Y0
	VMULPD       (R8)(R13*1), Y4, Y7
	VADDPD       Y7, Y1, Y1

dotdone:
	VADDPD  Y2, Y0, Y0
	VADDPD  Y3, Y1, Y1
	VMOVUPD Y0, (R10)(BX*1)
	VMOVUPD Y1, (R11)(BX*1)
	ADDQ    $32, BX
	CMPQ    BX, R13
	JLT     dotblock
	VZEROUPPER
	RET

// func goertzelAVX2(coef, s1, s2 *float64, n int, ys *float64, ny int)
//
// goertzel's steps, sixteen oscillators a group (four registers of
// state each for s1 and s2, so that four recurrences overlap), every
// sample of ys per group.
TEXT ·goertzelAVX2(SB), NOSPLIT, $0-48
	MOVQ coef+0(FP), DI
	MOVQ s1+8(FP), R10
	MOVQ s2+16(FP), R11
	MOVQ n+24(FP), CX
	MOVQ ys+32(FP), SI
	MOVQ ny+40(FP), DX
	SHLQ $3, CX
	SHLQ $3, DX
	XORQ BX, BX

ggroup:
	VMOVUPD 0(R10)(BX*1), Y0
	VMOVUPD 32(R10)(BX*1), Y1
	VMOVUPD 64(R10)(BX*1), Y2
	VMOVUPD 96(R10)(BX*1), Y3
	VMOVUPD 0(R11)(BX*1), Y4
	VMOVUPD 32(R11)(BX*1), Y5
	VMOVUPD 64(R11)(BX*1), Y6
	VMOVUPD 96(R11)(BX*1), Y7
	LEAQ    (DI)(BX*1), R8
	XORQ    AX, AX

gsample:
	VBROADCASTSD (SI)(AX*1), Y8
	VMULPD       0(R8), Y0, Y9
	VMULPD       32(R8), Y1, Y10
	VMULPD       64(R8), Y2, Y11
	VMULPD       96(R8), Y3, Y12
	VADDPD       Y9, Y8, Y9
	VADDPD       Y10, Y8, Y10
	VADDPD       Y11, Y8, Y11
	VADDPD       Y12, Y8, Y12
	VSUBPD       Y4, Y9, Y9
	VSUBPD       Y5, Y10, Y10
	VSUBPD       Y6, Y11, Y11
	VSUBPD       Y7, Y12, Y12
	VMOVAPD      Y0, Y4
	VMOVAPD      Y1, Y5
	VMOVAPD      Y2, Y6
	VMOVAPD      Y3, Y7
	VMOVAPD      Y9, Y0
	VMOVAPD      Y10, Y1
	VMOVAPD      Y11, Y2
	VMOVAPD      Y12, Y3
	ADDQ         $8, AX
	CMPQ         AX, DX
	JLT          gsample
	VMOVUPD      Y0, 0(R10)(BX*1)
	VMOVUPD      Y1, 32(R10)(BX*1)
	VMOVUPD      Y2, 64(R10)(BX*1)
	VMOVUPD      Y3, 96(R10)(BX*1)
	VMOVUPD      Y4, 0(R11)(BX*1)
	VMOVUPD      Y5, 32(R11)(BX*1)
	VMOVUPD      Y6, 64(R11)(BX*1)
	VMOVUPD      Y7, 96(R11)(BX*1)
	ADDQ         $128, BX
	CMPQ         BX, CX
	JLT          ggroup
	VZEROUPPER
	RET
