//go:build !purego

#include "textflag.h"

// radix4AVX is radix4 with AVX: two complex values per 256-bit register,
// so each butterfly instruction serves two k. The complex products are
// Go's (re = ar*br - ai*bi, im = ar*bi + ai*br, no fused multiply-add) and
// every other operation is the Go loop's, so the results are bit-identical
// to it.

// Sign masks for the product with -i (forward: (im, -re)) and with +i
// (inverse: (-im, re)) after the real and imaginary parts are swapped.
DATA negodd<>+0(SB)/8, $0x0000000000000000
DATA negodd<>+8(SB)/8, $0x8000000000000000
DATA negodd<>+16(SB)/8, $0x0000000000000000
DATA negodd<>+24(SB)/8, $0x8000000000000000
GLOBL negodd<>(SB), RODATA|NOPTR, $32
DATA negeven<>+0(SB)/8, $0x8000000000000000
DATA negeven<>+8(SB)/8, $0x0000000000000000
DATA negeven<>+16(SB)/8, $0x8000000000000000
DATA negeven<>+24(SB)/8, $0x0000000000000000
GLOBL negeven<>(SB), RODATA|NOPTR, $32

// CMUL sets D to A times B (complex, two per register); T1, T2 are
// clobbered.
#define CMUL(A, B, D, T1, T2) \
	VMOVDDUP  B, T1; \
	VPERMILPD $0xF, B, T2; \
	VMULPD    T1, A, T1; \
	VPERMILPD $0x5, A, D; \
	VMULPD    T2, D, T2; \
	VADDSUBPD T2, T1, D

// func radix4AVX(z []complex128, h int, tw []complex128, inverse bool)
TEXT ·radix4AVX(SB), NOSPLIT, $0-57
	MOVQ z_base+0(FP), SI
	MOVQ z_len+8(FP), DX
	MOVQ h+24(FP), CX
	MOVQ tw_base+32(FP), R8
	MOVBQZX inverse+56(FP), AX
	VMOVUPD negodd<>(SB), Y15
	TESTQ AX, AX
	JZ    forward
	VMOVUPD negeven<>(SB), Y15
forward:
	SHLQ $4, DX        // bytes of z
	SHLQ $4, CX        // hb: bytes of a quarter group
	MOVQ CX, R11
	LEAQ (CX)(CX*1), R12
	LEAQ (R12)(CX*1), R13
	LEAQ (R12)(R12*1), R14 // 4hb: bytes of a group
	XORQ R9, R9        // j, bytes

groups:
	CMPQ R9, DX
	JGE  done
	XORQ R10, R10      // k, bytes

butterflies:
	LEAQ (SI)(R9*1), BX
	ADDQ R10, BX
	LEAQ (R8)(R10*1), DI
	VMOVUPD (BX), Y0
	VMOVUPD (BX)(R11*1), Y1
	VMOVUPD (BX)(R12*1), Y2
	VMOVUPD (BX)(R13*1), Y3
	VMOVUPD (DI), Y4          // W^k
	VMOVUPD (DI)(R11*1), Y5   // W^2k
	VMOVUPD (DI)(R12*1), Y6   // W^3k
	CMUL(Y1, Y5, Y7, Y8, Y9)  // b1 = g1*W^2k
	CMUL(Y2, Y4, Y10, Y8, Y9) // b2 = g2*W^k
	CMUL(Y3, Y6, Y11, Y8, Y9) // b3 = g3*W^3k
	VADDPD Y7, Y0, Y1         // a0
	VSUBPD Y7, Y0, Y2         // a1
	VADDPD Y11, Y10, Y3       // a2
	VSUBPD Y11, Y10, Y4       // a3
	VPERMILPD $0x5, Y4, Y4
	VXORPD Y15, Y4, Y4        // r3 = -i*a3 (forward), +i*a3 (inverse)
	VADDPD Y3, Y1, Y5
	VMOVUPD Y5, (BX)
	VADDPD Y4, Y2, Y5
	VMOVUPD Y5, (BX)(R11*1)
	VSUBPD Y3, Y1, Y5
	VMOVUPD Y5, (BX)(R12*1)
	VSUBPD Y4, Y2, Y5
	VMOVUPD Y5, (BX)(R13*1)
	ADDQ $32, R10
	CMPQ R10, CX
	JLT  butterflies
	ADDQ R14, R9
	JMP  groups

done:
	VZEROUPPER
	RET

DATA halves<>+0(SB)/8, $0.5
DATA halves<>+8(SB)/8, $0.5
DATA halves<>+16(SB)/8, $0.5
DATA halves<>+24(SB)/8, $0.5
GLOBL halves<>(SB), RODATA|NOPTR, $32
DATA pmhalves<>+0(SB)/8, $0.5
DATA pmhalves<>+8(SB)/8, $-0.5
DATA pmhalves<>+16(SB)/8, $0.5
DATA pmhalves<>+24(SB)/8, $-0.5
GLOBL pmhalves<>(SB), RODATA|NOPTR, $32

// splitAVX is Real.split's loop for n pairs of k (k, k+1 per register,
// from the k of zLo and dstLo on; zHi and dstHi point at z[m-k-1] and
// dst[m-k-1]). Per lane it computes Go's expressions: E = (0.5*(ar+br),
// 0.5*(ai-bi)), O = (0.5*(ai+bi), -0.5*(ar-br)), T = W*O as Go's complex
// product (CMUL), dst[k] = E+T and dst[m-k] = (er-tr, ti-ei).

// func splitAVX(dstLo, dstHi, zLo, zHi, tw *complex128, n int)
TEXT ·splitAVX(SB), NOSPLIT, $0-48
	MOVQ dstLo+0(FP), DI
	MOVQ dstHi+8(FP), DX
	MOVQ zLo+16(FP), SI
	MOVQ zHi+24(FP), BX
	MOVQ tw+32(FP), R8
	MOVQ n+40(FP), CX
	VMOVUPD halves<>(SB), Y14
	VMOVUPD pmhalves<>(SB), Y15
	TESTQ CX, CX
	JZ    sdone
sloop:
	VMOVUPD (SI), Y0               // a(k), a(k+1)
	VMOVUPD (BX), Y1               // b(k+1), b(k)
	VPERM2F128 $0x01, Y1, Y1, Y1   // b(k), b(k+1)
	VADDPD Y1, Y0, Y2              // S = a+b
	VSUBPD Y1, Y0, Y3              // D = a-b
	VBLENDPD $0x0A, Y3, Y2, Y4     // (S.re, D.im)
	VMULPD Y14, Y4, Y4             // E = (er, ei)
	VBLENDPD $0x05, Y3, Y2, Y5     // (D.re, S.im)
	VPERMILPD $0x5, Y5, Y5         // (S.im, D.re)
	VMULPD Y15, Y5, Y5             // O = (or, oi)
	VMOVUPD (R8), Y6               // W
	CMUL(Y5, Y6, Y7, Y8, Y9)       // T = (tr, ti)
	VADDPD Y7, Y4, Y10             // dst[k] = E+T
	VMOVUPD Y10, (DI)
	VBLENDPD $0x0A, Y7, Y4, Y11    // (er, ti)
	VBLENDPD $0x0A, Y4, Y7, Y12    // (tr, ei)
	VSUBPD Y12, Y11, Y13           // (er-tr, ti-ei)
	VPERM2F128 $0x01, Y13, Y13, Y13
	VMOVUPD Y13, (DX)              // dst[m-k-1], dst[m-k]
	ADDQ $32, DI
	SUBQ $32, DX
	ADDQ $32, SI
	SUBQ $32, BX
	ADDQ $32, R8
	DECQ CX
	JNZ  sloop
sdone:
	VZEROUPPER
	RET

// firstRadix2AVX is permutedFirst's radix-2 loop: for i < h, a = src[i],
// b = src[i+h], and z[rev[i]], z[rev[i]+1] = a+b, a-b (Go's complex sum
// and difference, per part).

// func firstRadix2AVX(z, src *complex128, rev *int32, h int)
TEXT ·firstRadix2AVX(SB), NOSPLIT, $0-32
	MOVQ z+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ rev+16(FP), R8
	MOVQ h+24(FP), CX
	MOVQ CX, DX
	SHLQ $4, DX                 // h in bytes
	TESTQ CX, CX
	JZ    r2done
r2loop:
	MOVLQSX (R8), AX
	SHLQ $4, AX
	VMOVUPD (SI), X0            // a
	VMOVUPD (SI)(DX*1), X1      // b
	VADDPD X1, X0, X2
	VSUBPD X1, X0, X3
	VINSERTF128 $1, X3, Y2, Y2
	VMOVUPD Y2, (DI)(AX*1)
	ADDQ $4, R8
	ADDQ $16, SI
	DECQ CX
	JNZ  r2loop
r2done:
	VZEROUPPER
	RET

DATA negim<>+0(SB)/8, $0x0000000000000000
DATA negim<>+8(SB)/8, $0x8000000000000000
GLOBL negim<>(SB), RODATA|NOPTR, $16
DATA negre<>+0(SB)/8, $0x8000000000000000
DATA negre<>+8(SB)/8, $0x0000000000000000
GLOBL negre<>(SB), RODATA|NOPTR, $16

// firstRadix4AVX is permutedFirst's radix-4 loop (span 1): for i < q,
// x0..x3 = src[i], src[i+2q], src[i+q], src[i+3q], the trivial
// butterfly of radix4Trivial stored at z[rev[i]..rev[i]+3]. r3 is a3
// with its parts swapped and one negated: -i*a3 = (im, -re) forward,
// +i*a3 = (-im, re) inverse, as Go's complex(imag, -real) and its
// negation give them.

// func firstRadix4AVX(z, src *complex128, rev *int32, q int, inverse bool)
TEXT ·firstRadix4AVX(SB), NOSPLIT, $0-33
	MOVQ z+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ rev+16(FP), R8
	MOVQ q+24(FP), CX
	MOVBQZX inverse+32(FP), AX
	VMOVUPD negim<>(SB), X15
	TESTQ AX, AX
	JZ    r4fwd
	VMOVUPD negre<>(SB), X15
r4fwd:
	MOVQ CX, DX
	SHLQ $4, DX                 // q in bytes
	LEAQ (DX)(DX*1), R9         // 2q
	LEAQ (R9)(DX*1), R10        // 3q
	TESTQ CX, CX
	JZ    r4done
r4loop:
	MOVLQSX (R8), AX
	SHLQ $4, AX
	VMOVUPD (SI), X0            // x0
	VMOVUPD (SI)(R9*1), X1      // x1 = src[i+2q]
	VMOVUPD (SI)(DX*1), X2      // x2 = src[i+q]
	VMOVUPD (SI)(R10*1), X3     // x3 = src[i+3q]
	VADDPD X1, X0, X4           // a0
	VSUBPD X1, X0, X5           // a1
	VADDPD X3, X2, X6           // a2
	VSUBPD X3, X2, X7           // a3
	VPERMILPD $0x1, X7, X7
	VXORPD X15, X7, X7          // r3
	VADDPD X6, X4, X8           // a0+a2
	VADDPD X7, X5, X9           // a1+r3
	VSUBPD X6, X4, X10          // a0-a2
	VSUBPD X7, X5, X11          // a1-r3
	VINSERTF128 $1, X9, Y8, Y8
	VINSERTF128 $1, X11, Y10, Y10
	VMOVUPD Y8, (DI)(AX*1)
	VMOVUPD Y10, 32(DI)(AX*1)
	ADDQ $4, R8
	ADDQ $16, SI
	DECQ CX
	JNZ  r4loop
r4done:
	VZEROUPPER
	RET
