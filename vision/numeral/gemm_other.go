//go:build !amd64

package numeral

// hasAVX2 is false: the plain loops serve.
const hasAVX2 = false

// dot8 is never called without AVX2.
func dot8(c, a, bt []float32, stride int) { panic("numeral: dot8 without AVX2") }

// madd4 computes c[j] += w0·b0[j] + w1·b1[j] + w2·b2[j] + w3·b3[j]; each
// b must be at least as long as c.
//
//go:norace
func madd4(c, b0, b1, b2, b3 []float32, w0, w1, w2, w3 float32) {
	madd4Go(c, b0, b1, b2, b3, w0, w1, w2, w3)
}

// madd4x8 is never called without AVX2.
func madd4x8(c, a, b []float32, k, lda, ldb, n int) { panic("numeral: madd4x8 without AVX2") }

// dot8x3 is never called without AVX2.
func dot8x3(c, a, bt []float32, k, n, stride int) { panic("numeral: dot8x3 without AVX2") }
