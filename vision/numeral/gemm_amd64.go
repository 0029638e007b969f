package numeral

import "golang.org/x/sys/cpu"

// hasAVX2 says madd4 may use the eight-lane form (the OS saves the wide
// registers too: cpu checks that for AVX).
var hasAVX2 = cpu.X86.HasAVX && cpu.X86.HasAVX2

// madd4AVX2 does madd4 for the first n elements, n a multiple of 8.
//
//go:noescape
func madd4AVX2(c, b0, b1, b2, b3 *float32, n int, w *[4]float32)

// dot8AVX2 does dot8 with bt[p*stride+l] for column l.
//
//go:noescape
func dot8AVX2(c, a, bt *float32, k, stride int)

// dot8 adds to c[l], l < 8, dot(a, column l of bt) — bt row-major with
// rows stride apart, k rows — each summed exactly as dot sums it: four
// partial sums over p mod 4, the rest of k into the first, then
// (s0+s1)+(s2+s3). Only with AVX2.
//
//go:norace
func dot8(c, a, bt []float32, stride int) {
	k := len(a)
	_ = c[7]
	if k == 0 {
		return
	}
	_ = bt[(k-1)*stride+7]
	dot8AVX2(&c[0], &a[0], &bt[0], k, stride)
}

// madd4 computes c[j] += w0·b0[j] + w1·b1[j] + w2·b2[j] + w3·b3[j]; each
// b must be at least as long as c.
//
//go:norace
func madd4(c, b0, b1, b2, b3 []float32, w0, w1, w2, w3 float32) {
	n := len(c) &^ 7
	if !hasAVX2 || n == 0 {
		madd4Go(c, b0, b1, b2, b3, w0, w1, w2, w3)
		return
	}
	b0, b1, b2, b3 = b0[:len(c)], b1[:len(c)], b2[:len(c)], b3[:len(c)]
	w := [4]float32{w0, w1, w2, w3}
	madd4AVX2(&c[0], &b0[0], &b1[0], &b2[0], &b3[0], n, &w)
	if n < len(c) {
		madd4Go(c[n:], b0[n:], b1[n:], b2[n:], b3[n:], w0, w1, w2, w3)
	}
}

// madd4x8AVX2 does madd4x8 unchecked.
//
//go:noescape
func madd4x8AVX2(c, a, b *float32, k, lda, ldb, n int)

// dot8x3AVX2 does dot8x3 unchecked.
//
//go:noescape
func dot8x3AVX2(c, a, bt *float32, k, n, stride int)

// madd4x8 adds to the four rows of eight columns at c (rows n apart) the
// products of four rows of a (lda apart, k long) with k rows of b (ldb
// apart), as gemmNN's rows sum them. Only with AVX2; k ≥ 1.
//
//go:norace
func madd4x8(c, a, b []float32, k, lda, ldb, n int) {
	_ = c[3*n+7]
	_ = a[3*lda+k-1]
	_ = b[(k-1)*ldb+7]
	madd4x8AVX2(&c[0], &a[0], &b[0], k, lda, ldb, n)
}

// dot8x3 is dot8 for three rows of a (each k long, one after another)
// into three rows of c (n apart). Only with AVX2; k ≥ 1.
//
//go:norace
func dot8x3(c, a, bt []float32, k, n, stride int) {
	_ = c[2*n+7]
	_ = a[3*k-1]
	_ = bt[(k-1)*stride+7]
	dot8x3AVX2(&c[0], &a[0], &bt[0], k, n, stride)
}
