//go:build !purego

#include "textflag.h"

// The stereo biquad kernels keep the left and right samples of a frame in
// the two lanes of one SSE2 register, so both channels cost one packed
// instruction, and run up to four sections per sample with every state in
// a register: the sections' recurrences then overlap in the pipeline.
// Every lane performs exactly the operations of the scalar Go loops, in
// the same order, so the results are bit-identical to them.
//
// Coefficient block (16-byte aligned, see packStereo): antiDenormal twice,
// then per section b0,b0, b1,b1, b2,b2, a1,a1, a2,a2. State block: per
// section z1 (left, right), z2 (left, right).

// SECTION filters X0 (the section's input, antiDenormal already added)
// into X0, with states Z1, Z2 and coefficients at OFF(CX). Z1 takes Z2
// before the feedback product, as in the Go loops (see single).
#define SECTION(Z1, Z2, OFF) \
	MOVAPD X0, X1; \
	MULPD  (OFF+0)(CX), X1; \
	ADDPD  Z1, X1; \
	MOVAPD X0, Z1; \
	MULPD  (OFF+16)(CX), Z1; \
	ADDPD  Z2, Z1; \
	MOVAPD X1, X2; \
	MULPD  (OFF+48)(CX), X2; \
	SUBPD  X2, Z1; \
	MOVAPD X0, Z2; \
	MULPD  (OFF+32)(CX), Z2; \
	MOVAPD X1, X2; \
	MULPD  (OFF+64)(CX), X2; \
	SUBPD  X2, Z2; \
	MOVAPD X1, X0

#define PROLOGUE \
	MOVQ   l+0(FP), SI; \
	MOVQ   r+8(FP), DI; \
	MOVQ   n+16(FP), DX; \
	MOVQ   coef+24(FP), CX; \
	MOVQ   z+32(FP), BX; \
	MOVUPD 0(CX), X15; \
	XORQ   AX, AX

#define LOAD \
	MOVSD  (SI)(AX*8), X0; \
	MOVHPD (DI)(AX*8), X0; \
	ADDPD  X15, X0

#define STORE \
	MOVLPD X0, (SI)(AX*8); \
	MOVHPD X0, (DI)(AX*8); \
	INCQ   AX; \
	CMPQ   AX, DX

// func stereo1(l, r *float64, n int, coef, z *float64)
TEXT ·stereo1(SB), NOSPLIT, $0-40
	PROLOGUE
	MOVUPD 0(BX), X3
	MOVUPD 16(BX), X4
	CMPQ   DX, $0
	JLE    done1
loop1:
	LOAD
	SECTION(X3, X4, 16)
	STORE
	JLT loop1
done1:
	MOVUPD X3, 0(BX)
	MOVUPD X4, 16(BX)
	RET

// func stereo2(l, r *float64, n int, coef, z *float64)
TEXT ·stereo2(SB), NOSPLIT, $0-40
	PROLOGUE
	MOVUPD 0(BX), X3
	MOVUPD 16(BX), X4
	MOVUPD 32(BX), X5
	MOVUPD 48(BX), X6
	CMPQ   DX, $0
	JLE    done2
loop2:
	LOAD
	SECTION(X3, X4, 16)
	ADDPD X15, X0
	SECTION(X5, X6, 96)
	STORE
	JLT loop2
done2:
	MOVUPD X3, 0(BX)
	MOVUPD X4, 16(BX)
	MOVUPD X5, 32(BX)
	MOVUPD X6, 48(BX)
	RET

// func stereo3(l, r *float64, n int, coef, z *float64)
TEXT ·stereo3(SB), NOSPLIT, $0-40
	PROLOGUE
	MOVUPD 0(BX), X3
	MOVUPD 16(BX), X4
	MOVUPD 32(BX), X5
	MOVUPD 48(BX), X6
	MOVUPD 64(BX), X7
	MOVUPD 80(BX), X8
	CMPQ   DX, $0
	JLE    done3
loop3:
	LOAD
	SECTION(X3, X4, 16)
	ADDPD X15, X0
	SECTION(X5, X6, 96)
	ADDPD X15, X0
	SECTION(X7, X8, 176)
	STORE
	JLT loop3
done3:
	MOVUPD X3, 0(BX)
	MOVUPD X4, 16(BX)
	MOVUPD X5, 32(BX)
	MOVUPD X6, 48(BX)
	MOVUPD X7, 64(BX)
	MOVUPD X8, 80(BX)
	RET

// func stereo4(l, r *float64, n int, coef, z *float64)
TEXT ·stereo4(SB), NOSPLIT, $0-40
	PROLOGUE
	MOVUPD 0(BX), X3
	MOVUPD 16(BX), X4
	MOVUPD 32(BX), X5
	MOVUPD 48(BX), X6
	MOVUPD 64(BX), X7
	MOVUPD 80(BX), X8
	MOVUPD 96(BX), X9
	MOVUPD 112(BX), X10
	CMPQ   DX, $0
	JLE    done4
loop4:
	LOAD
	SECTION(X3, X4, 16)
	ADDPD X15, X0
	SECTION(X5, X6, 96)
	ADDPD X15, X0
	SECTION(X7, X8, 176)
	ADDPD X15, X0
	SECTION(X9, X10, 256)
	STORE
	JLT loop4
done4:
	MOVUPD X3, 0(BX)
	MOVUPD X4, 16(BX)
	MOVUPD X5, 32(BX)
	MOVUPD X6, 48(BX)
	MOVUPD X7, 64(BX)
	MOVUPD X8, 80(BX)
	MOVUPD X9, 96(BX)
	MOVUPD X10, 112(BX)
	RET
