package numeral

// Dense float32 kernels for the network, row-major. Their cores are madd4,
// c[j] += w0·b0[j] + w1·b1[j] + w2·b2[j] + w3·b3[j], and dot (dot8 for
// eight columns at once), which on amd64 with AVX2 run eight lanes at a
// time (gemm_amd64.s; madd4x8 and dot8x3 do blocks of several rows, their
// sums kept in registers) and elsewhere are plain loops the compiler keeps
// free of bounds checks. Both forms add in the same order without fused
// multiply-adds, so a model reads and trains alike, bit for bit, either
// way. The kernels touch only the slices they are given, so callers
// own concurrency; //go:norace keeps the race detector from slowing the
// arithmetic tenfold under `go test -race` while the code that shares
// buffers between goroutines stays instrumented.

// gemmNN computes c += a·b with a m×k, b k×n (rows ldb ≥ n apart), c
// m×n. With AVX2, four rows by eight columns at a time (madd4x8); the
// rest row by row.
//
//go:norace
func gemmNN(m, n, k int, a, b []float32, ldb int, c []float32) {
	if k == 0 {
		return
	}
	i := 0
	if hasAVX2 && n >= 8 {
		n8 := n &^ 7
		for ; i+4 <= m; i += 4 {
			for j := 0; j < n8; j += 8 {
				madd4x8(c[i*n+j:], a[i*k:], b[j:], k, k, ldb, n)
			}
			nnRows(i, i+4, n8, n, k, a, b, ldb, c)
		}
	}
	nnRows(i, m, 0, n, k, a, b, ldb, c)
}

// nnRows does gemmNN for rows i0..i1 and columns j0..n: each row by madd4
// over groups of four rows of b, then axpy for the last k mod 4.
//
//go:norace
func nnRows(i0, i1, j0, n, k int, a, b []float32, ldb int, c []float32) {
	if j0 >= n {
		return
	}
	row := func(p int) []float32 { return b[p*ldb+j0 : p*ldb+n] }
	for i := i0; i < i1; i++ {
		ci := c[i*n+j0 : i*n+n]
		ai := a[i*k : i*k+k]
		p := 0
		for ; p+4 <= k; p += 4 {
			madd4(ci, row(p), row(p+1), row(p+2), row(p+3), ai[p], ai[p+1], ai[p+2], ai[p+3])
		}
		for ; p < k; p++ {
			axpy(ai[p], row(p), ci)
		}
	}
}

// ntScratch is how long gemmNT's scratch must be: bᵀ with its columns
// padded to a multiple of eight.
func ntScratch(n, k int) int { return k * ((n + 7) &^ 7) }

// gemmNT computes c += a·bᵀ with a m×k, b n×k (rows ldb ≥ k apart), c
// m×n: each element a dot product, as dot sums it. With AVX2, three rows
// by eight columns at a time (dot8x3) through bᵀ written into scratch
// (ntScratch long), its columns padded with zeros to a multiple of eight
// so the last few columns go eight lanes wide too.
//
//go:norace
func gemmNT(m, n, k int, a, b []float32, ldb int, c, scratch []float32) {
	if !hasAVX2 || n < 8 || k == 0 {
		for i := 0; i < m; i++ {
			ai := a[i*k : i*k+k]
			ci := c[i*n : i*n+n]
			for j := range ci {
				ci[j] += dot(ai, b[j*ldb:j*ldb+k])
			}
		}
		return
	}
	w := (n + 7) &^ 7
	bt := scratch[:k*w]
	transpose(bt, b, n, k, ldb, w)
	for p := 0; p < k; p++ {
		clear(bt[p*w+n : p*w+w])
	}
	n8 := n &^ 7
	i := 0
	for ; i+3 <= m; i += 3 {
		for j := 0; j < n8; j += 8 {
			dot8x3(c[i*n+j:], a[i*k:], bt[j:], k, n, w)
		}
	}
	for ; i < m; i++ {
		for j := 0; j < n8; j += 8 {
			dot8(c[i*n+j:i*n+j+8], a[i*k:i*k+k], bt[j:], w)
		}
	}
	if n8 < n {
		// The last columns through a copy of c's, eight lanes wide; the
		// padded lanes' sums are dropped.
		var t [8]float32
		for i := 0; i < m; i++ {
			copy(t[:], c[i*n+n8:i*n+n])
			dot8(t[:], a[i*k:i*k+k], bt[n8:], w)
			copy(c[i*n+n8:i*n+n], t[:n-n8])
		}
	}
}

// transpose writes the rows×cols matrix src (rows ld ≥ cols apart) into
// dst as its transpose, rows stride ≥ rows apart. Four rows of src at a
// time, so each write to dst fills four neighbouring floats rather than
// one a row apart: twice as fast as one at a time on the net's shapes
// (eight at a time is no faster).
func transpose(dst, src []float32, rows, cols, ld, stride int) {
	row := func(r int) []float32 { return src[r*ld : r*ld+cols] }
	r := 0
	for ; r+4 <= rows; r += 4 {
		s0, s1, s2, s3 := row(r), row(r+1), row(r+2), row(r+3)
		for c := range s0 {
			d := dst[c*stride+r : c*stride+r+4]
			d[0], d[1], d[2], d[3] = s0[c], s1[c], s2[c], s3[c]
		}
	}
	for ; r < rows; r++ {
		for c, v := range row(r) {
			dst[c*stride+r] = v
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
