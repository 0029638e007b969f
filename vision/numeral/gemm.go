package numeral

// Dense float32 kernels for the network, row-major. They are plain loops
// unrolled by four so the Go compiler drops bounds checks and keeps partial
// sums in registers; that is enough for a net of a few million
// multiply-adds per crop. They touch only the slices they are given, so
// callers own concurrency; //go:norace keeps the race detector from
// slowing the arithmetic tenfold under `go test -race` while the code that
// shares buffers between goroutines stays instrumented.

// gemmNN computes c += a·b with a m×k, b k×n, c m×n.
//
//go:norace
func gemmNN(m, n, k int, a, b, c []float32) {
	for i := 0; i < m; i++ {
		ci := c[i*n : i*n+n]
		ai := a[i*k : i*k+k]
		p := 0
		for ; p+4 <= k; p += 4 {
			w0, w1, w2, w3 := ai[p], ai[p+1], ai[p+2], ai[p+3]
			b0 := b[p*n : p*n+n][:len(ci)]
			b1 := b[(p+1)*n : (p+1)*n+n][:len(ci)]
			b2 := b[(p+2)*n : (p+2)*n+n][:len(ci)]
			b3 := b[(p+3)*n : (p+3)*n+n][:len(ci)]
			for j := range ci {
				ci[j] += w0*b0[j] + w1*b1[j] + w2*b2[j] + w3*b3[j]
			}
		}
		for ; p < k; p++ {
			w := ai[p]
			bp := b[p*n : p*n+n][:len(ci)]
			for j := range ci {
				ci[j] += w * bp[j]
			}
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
			w0, w1, w2, w3 := a[p*m+i], a[(p+1)*m+i], a[(p+2)*m+i], a[(p+3)*m+i]
			b0 := b[p*n : p*n+n][:len(ci)]
			b1 := b[(p+1)*n : (p+1)*n+n][:len(ci)]
			b2 := b[(p+2)*n : (p+2)*n+n][:len(ci)]
			b3 := b[(p+3)*n : (p+3)*n+n][:len(ci)]
			for j := range ci {
				ci[j] += w0*b0[j] + w1*b1[j] + w2*b2[j] + w3*b3[j]
			}
		}
		for ; p < k; p++ {
			w := a[p*m+i]
			bp := b[p*n : p*n+n][:len(ci)]
			for j := range ci {
				ci[j] += w * bp[j]
			}
		}
	}
}

// gemmNT computes c += a·bᵀ with a m×k, b n×k, c m×n.
//
//go:norace
func gemmNT(m, n, k int, a, b, c []float32) {
	for i := 0; i < m; i++ {
		ai := a[i*k : i*k+k]
		ci := c[i*n : i*n+n]
		for j := range ci {
			ci[j] += dot(ai, b[j*k:j*k+k])
		}
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
