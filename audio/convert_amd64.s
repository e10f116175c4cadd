//go:build !purego

#include "textflag.h"

// SSE2 kernels for the commonest PCM layout, 16-bit stereo, two frames
// per iteration. Every lane performs the Go loop's operations (the same
// multiplications and additions in the same order), so the results are
// bit-identical to it.

DATA scale16<>+0(SB)/8, $32768.0
DATA scale16<>+8(SB)/8, $32768.0
GLOBL scale16<>(SB), RODATA|NOPTR, $16
// 2^-15: dividing an integer by 32768 and multiplying it by 2^-15 give
// the same double.
DATA inv16<>+0(SB)/8, $0x3F00000000000000
DATA inv16<>+8(SB)/8, $0x3F00000000000000
GLOBL inv16<>(SB), RODATA|NOPTR, $16
DATA magic<>+0(SB)/8, $6755399441055744.0
DATA magic<>+8(SB)/8, $6755399441055744.0
GLOBL magic<>(SB), RODATA|NOPTR, $16
DATA hi16<>+0(SB)/8, $32767.0
DATA hi16<>+8(SB)/8, $32767.0
GLOBL hi16<>(SB), RODATA|NOPTR, $16
DATA lo16<>+0(SB)/8, $-32768.0
DATA lo16<>+8(SB)/8, $-32768.0
GLOBL lo16<>(SB), RODATA|NOPTR, $16

// func encodeStereo16(dst *byte, l, r *float64, n int) int
// Encodes frames in pairs while both samples of both frames round into
// range (NaN does not) and returns how many it encoded (even, <= n).
TEXT ·encodeStereo16(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ l+8(FP), SI
	MOVQ r+16(FP), DX
	MOVQ n+24(FP), CX
	ANDQ $-2, CX
	MOVUPD scale16<>(SB), X8
	MOVUPD magic<>(SB), X9
	MOVUPD hi16<>(SB), X10
	MOVUPD lo16<>(SB), X11
	XORQ AX, AX
loop:
	CMPQ AX, CX
	JGE  done
	MOVUPD (SI)(AX*8), X0
	MOVUPD (DX)(AX*8), X1
	// v = (x*32768 + magic) - magic
	MULPD X8, X0
	ADDPD X9, X0
	SUBPD X9, X0
	MULPD X8, X1
	ADDPD X9, X1
	SUBPD X9, X1
	// In range: v <= 32767 and -32768 <= v, both false for NaN.
	MOVAPD X0, X2
	CMPPD X10, X2, 2
	MOVAPD X11, X3
	CMPPD X0, X3, 2
	ANDPD X3, X2
	MOVAPD X1, X4
	CMPPD X10, X4, 2
	MOVAPD X11, X5
	CMPPD X1, X5, 2
	ANDPD X5, X4
	ANDPD X4, X2
	MOVMSKPD X2, BX
	CMPQ BX, $3
	JNE  done
	// Integers already: the conversion is exact.
	CVTPD2PL X0, X0
	CVTPD2PL X1, X1
	PUNPCKLLQ X1, X0
	PACKSSLW X0, X0
	MOVQ X0, (DI)(AX*4)
	ADDQ $2, AX
	JMP  loop
done:
	MOVQ AX, ret+32(FP)
	RET

// func decodeStereo16(l, r *float64, src *byte, n int)
// Decodes n frames, n even.
TEXT ·decodeStereo16(SB), NOSPLIT, $0-32
	MOVQ l+0(FP), DI
	MOVQ r+8(FP), DX
	MOVQ src+16(FP), SI
	MOVQ n+24(FP), CX
	MOVUPD inv16<>(SB), X8
	XORQ AX, AX
dloop:
	CMPQ AX, CX
	JGE  ddone
	MOVQ (SI)(AX*4), X0      // L0 R0 L1 R1 as int16
	PUNPCKLWL X0, X0
	PSRAL $16, X0            // as int32, sign-extended
	CVTPL2PD X0, X1          // L0 R0
	PSHUFD $0xEE, X0, X0
	CVTPL2PD X0, X2          // L1 R1
	MULPD X8, X1
	MULPD X8, X2
	MOVAPD X1, X3
	UNPCKLPD X2, X1          // L0 L1
	UNPCKHPD X2, X3          // R0 R1
	MOVUPD X1, (DI)(AX*8)
	MOVUPD X3, (DX)(AX*8)
	ADDQ $2, AX
	JMP  dloop
ddone:
	RET
