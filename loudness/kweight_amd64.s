//go:build !purego

#include "textflag.h"

// kstereo is kfilter.energy for two channels at once: the left and right
// samples of a frame share one SSE2 register, so each operation of the Go
// loop runs once for both. Every lane performs the Go loop's operations in
// its order (Go does not fuse multiply-adds on amd64), so the outputs and
// sums are bit-identical to two calls of energy.
//
// coef (16-byte aligned): b0, b1, b2, a1, a2 of the shelf, then b0, a1, a2
// of the RLB high-pass, each twice. state: x1, x2, y1, y2, z1, z2, each as
// (left, right). sums receives the two sums of squares.

// func kstereo(l, r *float64, n int, coef, state, sums *float64)
TEXT ·kstereo(SB), NOSPLIT, $0-48
	MOVQ l+0(FP), SI
	MOVQ r+8(FP), DI
	MOVQ n+16(FP), DX
	MOVQ coef+24(FP), CX
	MOVQ state+32(FP), BX
	MOVUPD 0(BX), X1
	MOVUPD 16(BX), X2
	MOVUPD 32(BX), X3
	MOVUPD 48(BX), X4
	MOVUPD 64(BX), X5
	MOVUPD 80(BX), X6
	XORPD  X7, X7
	XORQ   AX, AX
	CMPQ   DX, $0
	JLE    done

loop:
	MOVSD  (SI)(AX*8), X0
	MOVHPD (DI)(AX*8), X0
	// y = (b0*v + b1*x1 + b2*x2 - a2*y2) - a1*y1
	MOVAPD X0, X8
	MULPD  0(CX), X8
	MOVAPD X1, X9
	MULPD  16(CX), X9
	ADDPD  X9, X8
	MOVAPD X2, X9
	MULPD  32(CX), X9
	ADDPD  X9, X8
	MOVAPD X4, X9
	MULPD  64(CX), X9
	SUBPD  X9, X8
	MOVAPD X3, X9
	MULPD  48(CX), X9
	SUBPD  X9, X8
	// z = (rb0*((y+y2) - 2*y1) - ra2*z2) - ra1*z1
	MOVAPD X8, X10
	ADDPD  X4, X10
	MOVAPD X3, X9
	ADDPD  X3, X9
	SUBPD  X9, X10
	MULPD  80(CX), X10
	MOVAPD X6, X9
	MULPD  112(CX), X9
	SUBPD  X9, X10
	MOVAPD X5, X9
	MULPD  96(CX), X9
	SUBPD  X9, X10
	// shift the histories, add z*z
	MOVAPD X1, X2
	MOVAPD X0, X1
	MOVAPD X3, X4
	MOVAPD X8, X3
	MOVAPD X5, X6
	MOVAPD X10, X5
	MULPD  X10, X10
	ADDPD  X10, X7
	INCQ   AX
	CMPQ   AX, DX
	JLT    loop

done:
	MOVUPD X1, 0(BX)
	MOVUPD X2, 16(BX)
	MOVUPD X3, 32(BX)
	MOVUPD X4, 48(BX)
	MOVUPD X5, 64(BX)
	MOVUPD X6, 80(BX)
	MOVQ   sums+40(FP), BX
	MOVUPD X7, 0(BX)
	RET

// kstereoSq is kstereo that also adds each frame's squared samples into
// the running sums of its parity, as sumSquares does: sq holds (left,
// right) of the sums the next frame goes to, then of the other parity;
// the two swap every frame.

// func kstereoSq(l, r *float64, n int, coef, state, sums, sq *float64)
TEXT ·kstereoSq(SB), NOSPLIT, $0-56
	MOVQ l+0(FP), SI
	MOVQ r+8(FP), DI
	MOVQ n+16(FP), DX
	MOVQ coef+24(FP), CX
	MOVQ state+32(FP), BX
	MOVUPD 0(BX), X1
	MOVUPD 16(BX), X2
	MOVUPD 32(BX), X3
	MOVUPD 48(BX), X4
	MOVUPD 64(BX), X5
	MOVUPD 80(BX), X6
	XORPD  X7, X7
	MOVQ   sq+48(FP), R8
	MOVUPD 0(R8), X11
	MOVUPD 16(R8), X12
	XORQ   AX, AX
	CMPQ   DX, $0
	JLE    sqdone

sqloop:
	// the squares into the current parity's sums, then swap parities
	MOVSD  (SI)(AX*8), X0
	MOVHPD (DI)(AX*8), X0
	MOVAPD X0, X13
	MULPD  X13, X13
	ADDPD  X13, X11
	MOVAPD X11, X13
	MOVAPD X12, X11
	MOVAPD X13, X12
	// y = (b0*v + b1*x1 + b2*x2 - a2*y2) - a1*y1
	MOVAPD X0, X8
	MULPD  0(CX), X8
	MOVAPD X1, X9
	MULPD  16(CX), X9
	ADDPD  X9, X8
	MOVAPD X2, X9
	MULPD  32(CX), X9
	ADDPD  X9, X8
	MOVAPD X4, X9
	MULPD  64(CX), X9
	SUBPD  X9, X8
	MOVAPD X3, X9
	MULPD  48(CX), X9
	SUBPD  X9, X8
	// z = (rb0*((y+y2) - 2*y1) - ra2*z2) - ra1*z1
	MOVAPD X8, X10
	ADDPD  X4, X10
	MOVAPD X3, X9
	ADDPD  X3, X9
	SUBPD  X9, X10
	MULPD  80(CX), X10
	MOVAPD X6, X9
	MULPD  112(CX), X9
	SUBPD  X9, X10
	MOVAPD X5, X9
	MULPD  96(CX), X9
	SUBPD  X9, X10
	// shift the histories, add z*z
	MOVAPD X1, X2
	MOVAPD X0, X1
	MOVAPD X3, X4
	MOVAPD X8, X3
	MOVAPD X5, X6
	MOVAPD X10, X5
	MULPD  X10, X10
	ADDPD  X10, X7
	INCQ   AX
	CMPQ   AX, DX
	JLT    sqloop

sqdone:
	MOVUPD X11, 0(R8)
	MOVUPD X12, 16(R8)
	MOVUPD X1, 0(BX)
	MOVUPD X2, 16(BX)
	MOVUPD X3, 32(BX)
	MOVUPD X4, 48(BX)
	MOVUPD X5, 64(BX)
	MOVUPD X6, 80(BX)
	MOVQ   sums+40(FP), BX
	MOVUPD X7, 0(BX)
	RET
