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

// func dot8AVX2(c, a, bt *float32, k, stride int)
//
// For the eight lanes l: c[l] += (s0+s1)+(s2+s3), s_r the sum over p ≡ r
// (mod 4) of a[p]*bt[p*stride+l], the last k mod 4 terms into s0 — dot's
// order, with separate multiplies and adds. k ≥ 1.
TEXT ·dot8AVX2(SB), NOSPLIT, $0-40
	MOVQ c+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ bt+16(FP), DX
	MOVQ k+24(FP), CX
	MOVQ stride+32(FP), R8
	SHLQ $2, R8
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

// STEP adds a[off/4] * bt row (at DX) to accumulator acc, then moves DX to
// the next row.
#define STEP(off, acc) \
	VBROADCASTSS off(SI), Y4 \
	VMULPS       (DX), Y4, Y5 \
	VADDPS       Y5, acc, acc \
	ADDQ         R8, DX

four:
	CMPQ CX, $4
	JLT  one
	STEP(0, Y0)
	STEP(4, Y1)
	STEP(8, Y2)
	STEP(12, Y3)
	ADDQ $16, SI
	SUBQ $4, CX
	JMP  four

one:
	CMPQ CX, $0
	JLE  sum
	STEP(0, Y0)
	ADDQ $4, SI
	DECQ CX
	JMP  one

sum:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	VADDPS (DI), Y0, Y0
	VMOVUPS Y0, (DI)
	VZEROUPPER
	RET
