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

// func madd4x8AVX2(c, a, b *float32, k, lda, ldb, n int)
//
// Four rows by eight columns of gemmNN at once: for r < 4 and l < 8,
// c[r*n+l] += Σ_p a[r*lda+p]·b[p*ldb+l], summed as gemmNN's rows sum it —
// groups of four p as madd4 does, ((a0·b0 + a1·b1) + a2·b2) + a3·b3 added
// to c, then the last k mod 4 one at a time as axpy adds them — so the
// bits are the same. The block of c stays in registers for the whole of k
// (madd4 loads and stores it once a group) and each group's rows of b are
// loaded once for the four rows rather than once a row.
TEXT ·madd4x8AVX2(SB), NOSPLIT, $0-56
	MOVQ c+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ k+24(FP), CX
	MOVQ lda+32(FP), R8
	MOVQ ldb+40(FP), R9
	MOVQ n+48(FP), R10
	SHLQ $2, R8
	SHLQ $2, R9
	SHLQ $2, R10
	LEAQ (R9)(R9*2), AX
	LEAQ (R10)(R10*2), R11
	LEAQ (SI)(R8*1), R12
	LEAQ (R12)(R8*1), R13
	LEAQ (R13)(R8*1), BX
	VMOVUPS (DI), Y0
	VMOVUPS (DI)(R10*1), Y1
	VMOVUPS (DI)(R10*2), Y2
	VMOVUPS (DI)(R11*1), Y3

// ROW4 adds one row's group of four products, a at ar, to acc.
#define ROW4(ar, acc) \
	VBROADCASTSS 0(ar), Y12 \
	VMULPS       Y4, Y12, Y8 \
	VBROADCASTSS 4(ar), Y12 \
	VMULPS       Y5, Y12, Y13 \
	VADDPS       Y13, Y8, Y8 \
	VBROADCASTSS 8(ar), Y12 \
	VMULPS       Y6, Y12, Y13 \
	VADDPS       Y13, Y8, Y8 \
	VBROADCASTSS 12(ar), Y12 \
	VMULPS       Y7, Y12, Y13 \
	VADDPS       Y13, Y8, Y8 \
	VADDPS       Y8, acc, acc

// ROW1 adds one product, a at ar, to acc.
#define ROW1(ar, acc) \
	VBROADCASTSS 0(ar), Y12 \
	VMULPS       Y4, Y12, Y13 \
	VADDPS       Y13, acc, acc

group:
	CMPQ    CX, $4
	JLT     tail
	VMOVUPS (DX), Y4
	VMOVUPS (DX)(R9*1), Y5
	VMOVUPS (DX)(R9*2), Y6
	VMOVUPS (DX)(AX*1), Y7
	ROW4(SI, Y0)
	ROW4(R12, Y1)
	ROW4(R13, Y2)
	ROW4(BX, Y3)
	ADDQ    $16, SI
	ADDQ    $16, R12
	ADDQ    $16, R13
	ADDQ    $16, BX
	LEAQ    (DX)(R9*4), DX
	SUBQ    $4, CX
	JMP     group

tail:
	CMPQ    CX, $0
	JLE     store
	VMOVUPS (DX), Y4
	ROW1(SI, Y0)
	ROW1(R12, Y1)
	ROW1(R13, Y2)
	ROW1(BX, Y3)
	ADDQ    $4, SI
	ADDQ    $4, R12
	ADDQ    $4, R13
	ADDQ    $4, BX
	ADDQ    R9, DX
	DECQ    CX
	JMP     tail

store:
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, (DI)(R10*1)
	VMOVUPS Y2, (DI)(R10*2)
	VMOVUPS Y3, (DI)(R11*1)
	VZEROUPPER
	RET

// func dot8x3AVX2(c, a, bt *float32, k, n, stride int)
//
// dot8 for three rows of a (k apart) at once, into three rows of c (n
// apart): each row of bt is loaded once for the three. Each lane sums as
// dot8AVX2 does, bit for bit. k ≥ 1.
TEXT ·dot8x3AVX2(SB), NOSPLIT, $0-48
	MOVQ c+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ bt+16(FP), DX
	MOVQ k+24(FP), CX
	MOVQ n+32(FP), R10
	MOVQ stride+40(FP), R8
	SHLQ $2, R8
	SHLQ $2, R10
	LEAQ (SI)(CX*4), R12
	LEAQ (R12)(CX*4), R13
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11

// STEP3 adds a[off/4] of each row times the bt row at DX to the rows'
// accumulators r0, r1, r2, then moves DX to the next row of bt.
#define STEP3(off, r0, r1, r2) \
	VMOVUPS      (DX), Y12 \
	VBROADCASTSS off(SI), Y13 \
	VMULPS       Y12, Y13, Y14 \
	VADDPS       Y14, r0, r0 \
	VBROADCASTSS off(R12), Y13 \
	VMULPS       Y12, Y13, Y14 \
	VADDPS       Y14, r1, r1 \
	VBROADCASTSS off(R13), Y13 \
	VMULPS       Y12, Y13, Y14 \
	VADDPS       Y14, r2, r2 \
	ADDQ         R8, DX

four3:
	CMPQ CX, $4
	JLT  one3
	STEP3(0, Y0, Y4, Y8)
	STEP3(4, Y1, Y5, Y9)
	STEP3(8, Y2, Y6, Y10)
	STEP3(12, Y3, Y7, Y11)
	ADDQ $16, SI
	ADDQ $16, R12
	ADDQ $16, R13
	SUBQ $4, CX
	JMP  four3

one3:
	CMPQ CX, $0
	JLE  sum3
	STEP3(0, Y0, Y4, Y8)
	ADDQ $4, SI
	ADDQ $4, R12
	ADDQ $4, R13
	DECQ CX
	JMP  one3

sum3:
	VADDPS  Y1, Y0, Y0
	VADDPS  Y3, Y2, Y2
	VADDPS  Y2, Y0, Y0
	VADDPS  (DI), Y0, Y0
	VMOVUPS Y0, (DI)
	VADDPS  Y5, Y4, Y4
	VADDPS  Y7, Y6, Y6
	VADDPS  Y6, Y4, Y4
	VADDPS  (DI)(R10*1), Y4, Y4
	VMOVUPS Y4, (DI)(R10*1)
	VADDPS  Y9, Y8, Y8
	VADDPS  Y11, Y10, Y10
	VADDPS  Y10, Y8, Y8
	VADDPS  (DI)(R10*2), Y8, Y8
	VMOVUPS Y8, (DI)(R10*2)
	VZEROUPPER
	RET
