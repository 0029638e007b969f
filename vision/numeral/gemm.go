package numeral

// Dense float32 kernels for the network, row-major. Their cores are madd4,
// c[j] += w0·b0[j] + w1·b1[j] + w2·b2[j] + w3·b3[j], and dot (dot8 for
// eight columns at once), which on amd64 with AVX2 run eight lanes at a
// time (gemm_amd64.s) and elsewhere are plain loops the compiler keeps
// free of bounds checks. Both forms add in the same order without fused
// multiply-adds, so a model reads and trains alike, bit for bit, either
// way. The kernels touch only the slices they are given, so callers
// own concurrency; //go:norace keeps the race detector from slowing the
// arithmetic tenfold under `go test -race` while the code that shares
// buffers between goroutines stays instrumented.

// gemmNN computes c += a·b with a m×k, b k×n, c m×n.
//
//go:norace
func gemmNN(m, n, k int, a, b, c []float32) {
	for i := 0; i < m; i++ {
		ci := c[i*n : i*n+n]
		ai := a[i*k : i*k+k]
		p := 0
		for ; p+4 <= k; p += 4 {
			madd4(ci, b[p*n:p*n+n], b[(p+1)*n:(p+1)*n+n], b[(p+2)*n:(p+2)*n+n], b[(p+3)*n:(p+3)*n+n],
				ai[p], ai[p+1], ai[p+2], ai[p+3])
		}
		for ; p < k; p++ {
			axpy(ai[p], b[p*n:p*n+n], ci)
		}
	}
}

// gemmTN computes c += aᵀ·b with a k×m, b k×n, c m×n.
//
//go:norace
func gemmTN(m, n, k int, a, b, c []float32) {
	for i := 0; i < m; i++ {
		ci := c[i*n : i*n+n]
		p := 0
		for ; p+4 <= k; p += 4 {
			madd4(ci, b[p*n:p*n+n], b[(p+1)*n:(p+1)*n+n], b[(p+2)*n:(p+2)*n+n], b[(p+3)*n:(p+3)*n+n],
				a[p*m+i], a[(p+1)*m+i], a[(p+2)*m+i], a[(p+3)*m+i])
		}
		for ; p < k; p++ {
			axpy(a[p*m+i], b[p*n:p*n+n], ci)
		}
	}
}

// gemmNT computes c += a·bᵀ with a m×k, b n×k, c m×n: each element a
// dot product, as dot sums it. With AVX2, eight columns at a time
// (dot8) through bᵀ written into scratch (at least k×n long).
//
//go:norace
func gemmNT(m, n, k int, a, b, c, scratch []float32) {
	n8 := 0
	if hasAVX2 && n >= 8 {
		n8 = n &^ 7
		bt := scratch[:k*n]
		for j := 0; j < n8; j++ { // the last n%8 columns are dotted from b
			for p, v := range b[j*k : j*k+k] {
				bt[p*n+j] = v
			}
		}
		for i := 0; i < m; i++ {
			ai := a[i*k : i*k+k]
			for j := 0; j < n8; j += 8 {
				dot8(c[i*n+j:i*n+j+8], ai, bt[j:], n)
			}
		}
	}
	for i := 0; i < m; i++ {
		ai := a[i*k : i*k+k]
		ci := c[i*n : i*n+n]
		for j := n8; j < n; j++ {
			ci[j] += dot(ai, b[j*k:j*k+k])
		}
	}
}

// madd4Go is madd4 one element at a time; the four products are summed
// left to right, then added to c[j], as madd4's vector form does.
//
//go:norace
func madd4Go(c, b0, b1, b2, b3 []float32, w0, w1, w2, w3 float32) {
	b0, b1, b2, b3 = b0[:len(c)], b1[:len(c)], b2[:len(c)], b3[:len(c)]
	for j := range c {
		c[j] += w0*b0[j] + w1*b1[j] + w2*b2[j] + w3*b3[j]
	}
}

// dot returns Σ x[i]·y[i] over len(x); y must be at least as long.
//
//go:norace
func dot(x, y []float32) float32 {
	y = y[:len(x)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += x[i] * y[i]
		s1 += x[i+1] * y[i+1]
		s2 += x[i+2] * y[i+2]
		s3 += x[i+3] * y[i+3]
	}
	for ; i < len(x); i++ {
		s0 += x[i] * y[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// axpy computes y += a·x.
//
//go:norace
func axpy(a float32, x, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] += a * v
	}
}
