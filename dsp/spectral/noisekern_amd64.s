//go:build !purego

#include "textflag.h"
#include "fastlog2_amd64.h"

// denseTanh48AVX2 (staticnoise_fast.go): for each unit, 48 bands in six
// registers of eight (rows of x and out stride bytes apart), the inputs' products rounded and then added in
// denseTanh48Go's order, then tanh32's operations in its order. R8 points
// at isoTanhK, a row of eight copies of a constant every 32 bytes.
#define K_378 0(R8)
#define K_17325 32(R8)
#define K_135135 64(R8)
#define K_28 96(R8)
#define K_3150 128(R8)
#define K_62370 160(R8)
#define K_Hi 192(R8)
#define K_Lo 224(R8)
#define K_One 256(R8)
#define K_MinusOne 288(R8)

// TANH32 sets A to tanh32(A); X2, N, D and M are clobbered.
#define TANH32(A, X2, N, D, M) \
	VMULPS    A, A, X2; \
	VADDPS    K_378, X2, N; \
	VMULPS    N, X2, N; \
	VADDPS    K_17325, N, N; \
	VMULPS    N, X2, N; \
	VADDPS    K_135135, N, N; \
	VMULPS    N, A, N; \
	VMULPS    K_28, X2, D; \
	VADDPS    K_3150, D, D; \
	VMULPS    D, X2, D; \
	VADDPS    K_62370, D, D; \
	VMULPS    D, X2, D; \
	VADDPS    K_135135, D, D; \
	VDIVPS    D, N, N; \
	VCMPPS    $0x0E, K_Hi, A, M; \
	VBLENDVPS M, K_One, N, N; \
	VCMPPS    $0x01, K_Lo, A, M; \
	VBLENDVPS M, K_MinusOne, N, A

// func denseTanh48AVX2(w, bias, x, out *float32, nin, nout, stride int, k *[10][8]float32)
TEXT ·denseTanh48AVX2(SB), NOSPLIT, $0-64
	MOVQ w+0(FP), SI
	MOVQ bias+8(FP), DX
	MOVQ x+16(FP), DI
	MOVQ out+24(FP), R9
	MOVQ nin+32(FP), CX
	MOVQ nout+40(FP), BX
	MOVQ stride+48(FP), R12
	MOVQ k+56(FP), R8

unit:
	VBROADCASTSS (DX), Y0
	VMOVUPS      Y0, Y1
	VMOVUPS      Y0, Y2
	VMOVUPS      Y0, Y3
	VMOVUPS      Y0, Y4
	VMOVUPS      Y0, Y5
	MOVQ         DI, R10
	MOVQ         CX, R11

input:
	VBROADCASTSS (SI), Y6
	VMULPS       0(R10), Y6, Y7
	VADDPS       Y7, Y0, Y0
	VMULPS       32(R10), Y6, Y8
	VADDPS       Y8, Y1, Y1
	VMULPS       64(R10), Y6, Y9
	VADDPS       Y9, Y2, Y2
	VMULPS       96(R10), Y6, Y10
	VADDPS       Y10, Y3, Y3
	VMULPS       128(R10), Y6, Y11
	VADDPS       Y11, Y4, Y4
	VMULPS       160(R10), Y6, Y12
	VADDPS       Y12, Y5, Y5
	ADDQ         $4, SI
	ADDQ         R12, R10
	DECQ         R11
	JNZ          input

	TANH32(Y0, Y6, Y7, Y8, Y9)
	TANH32(Y1, Y10, Y11, Y12, Y13)
	TANH32(Y2, Y6, Y7, Y8, Y9)
	TANH32(Y3, Y10, Y11, Y12, Y13)
	TANH32(Y4, Y6, Y7, Y8, Y9)
	TANH32(Y5, Y10, Y11, Y12, Y13)
	VMOVUPS Y0, 0(R9)
	VMOVUPS Y1, 32(R9)
	VMOVUPS Y2, 64(R9)
	VMOVUPS Y3, 96(R9)
	VMOVUPS Y4, 128(R9)
	VMOVUPS Y5, 160(R9)
	ADDQ    $4, DX
	ADDQ    R12, R9
	DECQ    BX
	JNZ     unit
	VZEROUPPER
	RET

// func binRowsAVX2(pow *float64, rows *int32, ng int, by3, lo, per float64, top int, k *[gkCount][4]uint64)
TEXT ·binRowsAVX2(SB), NOSPLIT, $0-64
	MOVQ         pow+0(FP), SI
	MOVQ         rows+8(FP), DI
	MOVQ         ng+16(FP), CX
	VBROADCASTSD by3+24(FP), Y12
	VBROADCASTSD lo+32(FP), Y13
	VBROADCASTSD per+40(FP), Y14
	VPBROADCASTD top+48(FP), X11
	MOVQ         k+56(FP), R8
	VXORPD       Y15, Y15, Y15
	ADDQ         $4, DI

group:
	// s = (pow[k-1] + pow[k] + pow[k+1]) * by3, k = 1.. four at a time.
	VMOVUPD   0(SI), Y0
	VADDPD    8(SI), Y0, Y0
	VADDPD    16(SI), Y0, Y0
	VMULPD    Y12, Y0, Y0
	VCMPPD    $0x0E, Y15, Y0, Y5
	FASTLOG2(Y0, Y1, Y2, Y3)
	VSUBPD    Y13, Y1, Y1
	VMULPD    Y14, Y1, Y1
	VANDPD    Y5, Y1, Y1
	VCVTTPD2DQY Y1, X1
	VPMAXSD   X15, X1, X1
	VPMINSD   X11, X1, X1
	VMOVDQU   X1, (DI)
	ADDQ      $32, SI
	ADDQ      $16, DI
	DECQ      CX
	JNZ       group
	VZEROUPPER
	RET
