#include "textflag.h"

// func madd4AVX2(c, b0, b1, b2, b3 *float32, n int, w *[4]float32)
//
// c[j] += ((w0*b0[j] + w1*b1[j]) + w2*b2[j]) + w3*b3[j] for j < n (a
// multiple of 8), eight lanes at a time: separate multiplies and adds in
// the order the Go loop uses, so the sums are the same bit for bit.
TEXT ·madd4AVX2(SB), NOSPLIT, $0-56
	MOVQ c+0(FP), DI
	MOVQ b0+8(FP), SI
	MOVQ b1+16(FP), R8
	MOVQ b2+24(FP), R9
	MOVQ b3+32(FP), R10
	MOVQ n+40(FP), CX
	MOVQ w+48(FP), AX
	VBROADCASTSS 0(AX), Y0
	VBROADCASTSS 4(AX), Y1
	VBROADCASTSS 8(AX), Y2
	VBROADCASTSS 12(AX), Y3
	SHLQ $2, CX
	XORQ BX, BX

loop:
	CMPQ BX, CX
	JGE  done
	VMULPS (SI)(BX*1), Y0, Y4
	VMULPS (R8)(BX*1), Y1, Y5
	VADDPS Y5, Y4, Y4
	VMULPS (R9)(BX*1), Y2, Y5
	VADDPS Y5, Y4, Y4
	VMULPS (R10)(BX*1), Y3, Y5
	VADDPS Y5, Y4, Y4
	VADDPS (DI)(BX*1), Y4, Y4
	VMOVUPS Y4, (DI)(BX*1)
	ADDQ $32, BX
	JMP  loop

done:
	VZEROUPPER
	RET
