package numeral

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func randSlice(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	return x
}

// TestMadd4IsExact: the vector madd4 (where the CPU has it) gives the same
// bits as the plain loop, so a model reads alike on any machine.
func TestMadd4IsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{0, 1, 7, 8, 9, 16, 31, 64, 1029} {
		c, b0, b1, b2, b3 := randSlice(r, n), randSlice(r, n+3), randSlice(r, n), randSlice(r, n), randSlice(r, n)
		w := randSlice(r, 4)
		want := append([]float32(nil), c...)
		madd4Go(want, b0, b1, b2, b3, w[0], w[1], w[2], w[3])
		madd4(c, b0, b1, b2, b3, w[0], w[1], w[2], w[3])
		for j := range c {
			if math.Float32bits(c[j]) != math.Float32bits(want[j]) {
				t.Fatalf("n=%d: c[%d] = %g, the plain loop %g", n, j, c[j], want[j])
			}
		}
	}
}

// TestGemmNTIsExact: gemmNT sums every element as dot does, bit for bit,
// with or without its eight-column form, so training is the same on any
// machine with the same arithmetic.
func TestGemmNTIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, sz := range [][3]int{{1, 8, 1}, {2, 9, 3}, {3, 16, 4}, {5, 27, 1024}, {4, 23, 61}, {2, 576, 16}, {7, 31, 9}, {64, 576, 16}} {
		m, n, k := sz[0], sz[1], sz[2]
		a, b, c := randSlice(r, m*k), randSlice(r, n*k), randSlice(r, m*n)
		want := append([]float32(nil), c...)
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				want[i*n+j] += dot(a[i*k:i*k+k], b[j*k:j*k+k])
			}
		}
		// b as given, and with its rows 3 further apart, NaN between.
		for ld, bb := range map[int][]float32{k: b, k + 3: padRows(b, n, k, k+3)} {
			got := append([]float32(nil), c...)
			gemmNT(m, n, k, a, bb, ld, got, make([]float32, ntScratch(n, k)))
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%v, b's rows %d apart: c[%d] = %g, by dot %g", sz, ld, i, got[i], want[i])
				}
			}
		}
	}
}

// padRows copies the rows×cols matrix x with its rows ld apart, NaN in
// between, so that a kernel that reads past a row shows it.
func padRows(x []float32, rows, cols, ld int) []float32 {
	out := make([]float32, rows*ld)
	for i := range out {
		out[i] = float32(math.NaN())
	}
	for r := 0; r < rows; r++ {
		copy(out[r*ld:r*ld+cols], x[r*cols:r*cols+cols])
	}
	return out
}

// TestGemmNNIsExact: gemmNN (with b's rows further apart than its width
// too, and on a transposed by transpose, as backward runs it on
// transposeWeights), in blocks of four rows by eight columns or row by row, sum every element as one row of madd4 groups
// and axpy's does, bit for bit, on every shape of remainder.
func TestGemmNNIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, sz := range [][3]int{{1, 8, 1}, {4, 8, 4}, {5, 9, 3}, {7, 17, 6}, {16, 1024, 27}, {8, 23, 61}, {64, 16, 576}, {576, 16, 64}} {
		m, n, k := sz[0], sz[1], sz[2]
		a, b, c := randSlice(r, m*k), randSlice(r, k*n), randSlice(r, m*n)
		at := make([]float32, k*m)
		for i := 0; i < m; i++ {
			for p := 0; p < k; p++ {
				at[p*m+i] = a[i*k+p]
			}
		}
		want := append([]float32(nil), c...)
		for i := 0; i < m; i++ {
			wi := want[i*n : i*n+n]
			p := 0
			for ; p+4 <= k; p += 4 {
				madd4Go(wi, b[p*n:], b[(p+1)*n:], b[(p+2)*n:], b[(p+3)*n:], a[i*k+p], a[i*k+p+1], a[i*k+p+2], a[i*k+p+3])
			}
			for ; p < k; p++ {
				for j := range wi {
					wi[j] += a[i*k+p] * b[p*n+j]
				}
			}
		}
		for name, f := range map[string]func(c []float32){
			"NN":        func(c []float32) { gemmNN(m, n, k, a, b, n, c) },
			"NN padded": func(c []float32) { gemmNN(m, n, k, a, padRows(b, k, n, n+5), n+5, c) },
			"TN":        func(c []float32) { gemmNN(m, n, k, transposed(at, k, m), b, n, c) },
		} {
			got := append([]float32(nil), c...)
			f(got)
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("gemm%s %v: c[%d] = %g, row by row %g", name, sz, i, got[i], want[i])
				}
			}
		}
	}
}

func TestGemmMatchesNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, sz := range [][3]int{{1, 1, 1}, {3, 5, 7}, {8, 13, 9}, {16, 40, 27}} {
		m, n, k := sz[0], sz[1], sz[2]
		a, b := randSlice(r, m*k), randSlice(r, k*n)
		at, bt := make([]float32, k*m), make([]float32, n*k)
		for i := 0; i < m; i++ {
			for p := 0; p < k; p++ {
				at[p*m+i] = a[i*k+p]
			}
		}
		for p := 0; p < k; p++ {
			for j := 0; j < n; j++ {
				bt[j*k+p] = b[p*n+j]
			}
		}
		want := make([]float32, m*n)
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				for p := 0; p < k; p++ {
					want[i*n+j] += a[i*k+p] * b[p*n+j]
				}
			}
		}
		for name, f := range map[string]func(c []float32){
			"NN": func(c []float32) { gemmNN(m, n, k, a, b, n, c) },
			"TN": func(c []float32) { gemmNN(m, n, k, transposed(at, k, m), b, n, c) },
			"NT": func(c []float32) { gemmNT(m, n, k, a, bt, k, c, make([]float32, ntScratch(n, k))) },
		} {
			c := make([]float32, m*n)
			f(c)
			for i := range c {
				if math.Abs(float64(c[i]-want[i])) > 1e-4*(1+math.Abs(float64(want[i]))) {
					t.Fatalf("gemm%s %v: c[%d] = %g, want %g", name, sz, i, c[i], want[i])
				}
			}
		}
	}
}

// col2im must be the adjoint of im2col: <im2col(x), y> = <x, col2im(y)>.
func TestCol2imIsAdjoint(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, sz := range [][4]int{{1, 1, 1, 0}, {2, 3, 5, 0}, {3, 6, 4, 0}, {2, 3, 5, 1}, {3, 4, 8, 1}} {
		c, h, w, circ := sz[0], sz[1], sz[2], sz[3] == 1
		x := randSlice(r, c*h*w)
		y := randSlice(r, c*9*h*w)
		col := make([]float32, len(y))
		im2col(x, c, h, w, h*w, circ, col)
		back := make([]float32, len(x))
		col2im(y, c, h, w, circ, back)
		var l, rr float64
		for i := range y {
			l += float64(col[i]) * float64(y[i])
		}
		for i := range x {
			rr += float64(x[i]) * float64(back[i])
		}
		if math.Abs(l-rr) > 1e-3*(1+math.Abs(l)) {
			t.Fatalf("%v: <im2col x, y> = %g, <x, col2im y> = %g", sz, l, rr)
		}
	}
}

// TestGradientCheck compares backward with central differences of the
// loss L = Σ c_i·logit_i for every parameter of a tiny net.
func TestGradientCheck(t *testing.T) {
	for _, a := range []Arch{
		{Size: 8, Channels: 3, Convs: []Conv{{4, true}, {5, false}, {3, true}}, Hidden: 6, Classes: 4},
		{Size: 8, Channels: 3, Convs: []Conv{{4, true}, {6, false}, {2, true}}, Hidden: 6, Classes: 4, Norm: 2},
		{Size: 8, Channels: 1, Convs: []Conv{{3, false}, {5, true}}, Hidden: 5, Classes: 3, Norm: 1},
		{Size: 8, Channels: 3, Convs: []Conv{{4, true}, {5, false}}, Hidden: 6, Classes: 4, Polar: true},
	} {
		t.Run(fmt.Sprintf("norm%d-polar%v", a.Norm, a.Polar), func(t *testing.T) { gradientCheck(t, a) })
	}
}

func gradientCheck(t *testing.T, a Arch) {
	nt, err := newNet(a)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	p := nt.initParams(r)
	for i := range p {
		p[i] += float32(0.05 * r.NormFloat64()) // non-zero biases
	}
	w := nt.newWork()
	copy(w.in, randSlice(r, nt.inLen))
	coef := randSlice(r, a.Classes)
	loss := func() float64 {
		lg := nt.forward(p, w)
		var s float64
		for i, v := range lg {
			s += float64(coef[i]) * float64(v)
		}
		return s
	}
	loss()
	g := make([]float32, nt.nParams)
	pt := make([]float32, nt.nParams)
	nt.transposeWeights(p, pt)
	nt.backward(p, pt, g, w, coef)

	// Small steps: the normalisation bends the loss sharply where a
	// group's spread is small, and 1e-2 steps over such bends disagree.
	const eps = 1e-3
	bad := 0
	for i := range p {
		old := p[i]
		p[i] = old + eps
		lp := loss()
		p[i] = old - eps
		lm := loss()
		p[i] = old
		num := (lp - lm) / (2 * eps)
		if d := math.Abs(num - float64(g[i])); d > 2e-2*(1+math.Abs(num)) {
			bad++ // a ReLU or a max switching inside ±eps; must stay rare
			t.Logf("param %d: backward %g, numeric %g", i, g[i], num)
		}
	}
	if bad > nt.nParams/100 {
		t.Fatalf("%d of %d gradients disagree with central differences", bad, nt.nParams)
	}
}

func TestArchRejectsNonsense(t *testing.T) {
	for _, a := range []Arch{
		{},
		{Size: 40, Channels: 2, Convs: []Conv{{8, true}}, Hidden: 8, Classes: 3},
		{Size: 8, Channels: 3, Convs: []Conv{{8, true}, {8, true}, {8, true}, {8, true}}, Hidden: 8, Classes: 3},
		{Size: 40, Channels: 3, Convs: []Conv{{0, true}}, Hidden: 8, Classes: 3},
		{Size: 40, Channels: 3, Convs: []Conv{{8, true}}, Hidden: 8, Classes: 1},
		{Size: 128, Channels: 3, Convs: []Conv{{512, false}, {512, false}}, Hidden: 8, Classes: 3},
		{Size: 33, Channels: 3, Convs: []Conv{{8, true}}, Hidden: 8, Classes: 3, Polar: true},                       // odd size
		{Size: 34, Channels: 3, Convs: []Conv{{8, true}, {8, true}, {8, true}}, Hidden: 8, Classes: 3, Polar: true}, // 68 angles pool to 17, then odd
		{Size: 40, Channels: 3, Convs: []Conv{{6, true}}, Hidden: 8, Classes: 3, Norm: 4},                           // 6 channels in groups of 4
	} {
		if _, err := newNet(a); err == nil {
			t.Errorf("newNet(%+v) accepted", a)
		}
	}
}

// TestMaxPoolMatchesFloatCompares: on a ReLU's output, with ties at zero,
// maxPool's integer compares pick the value and the first place of each
// cell's maximum as float compares do.
func TestMaxPoolMatchesFloatCompares(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, sz := range [][3]int{{1, 2, 2}, {3, 4, 6}, {2, 5, 7}, {16, 16, 64}} {
		c, h, w := sz[0], sz[1], sz[2]
		x := randSlice(r, c*h*w)
		x[0] = float32(math.Copysign(0, -1))
		relu(x)
		oh, ow := h/2, w/2
		out, arg := make([]float32, c*oh*ow), make([]int32, c*oh*ow)
		maxPool(x, c, h, w, out, arg)
		for ch := 0; ch < c; ch++ {
			for y := 0; y < oh; y++ {
				for xx := 0; xx < ow; xx++ {
					i0 := ch*h*w + 2*y*w + 2*xx
					best, bi := x[i0], i0
					for _, i := range []int{i0 + 1, i0 + w, i0 + w + 1} {
						if x[i] > best {
							best, bi = x[i], i
						}
					}
					o := (ch*oh+y)*ow + xx
					if math.Float32bits(out[o]) != math.Float32bits(best) || int(arg[o]) != bi {
						t.Fatalf("%v cell %d: %g at %d, float compares %g at %d", sz, o, out[o], arg[o], best, bi)
					}
				}
			}
		}
	}
}

// col2imByColumn is col2im as it was before session 20: one column at a
// time added into a cleared dx. col2im must give the same bits.
func col2imByColumn(col []float32, c, h, w int, circ bool, dx []float32) {
	hw := h * w
	clear(dx[:c*hw])
	for ch := 0; ch < c; ch++ {
		dst := dx[ch*hw : ch*hw+hw]
		for ky := 0; ky < 3; ky++ {
			for kx := 0; kx < 3; kx++ {
				src := col[((ch*3+ky)*3+kx)*hw:][:hw]
				dxo := kx - 1
				for y := 0; y < h; y++ {
					sy := y + ky - 1
					if sy < 0 || sy >= h {
						continue
					}
					s := src[y*w : y*w+w]
					d := dst[sy*w : sy*w+w]
					switch dxo {
					case -1:
						for j := 1; j < w; j++ {
							d[j-1] += s[j]
						}
						if circ {
							d[w-1] += s[0]
						}
					case 0:
						for j := 0; j < w; j++ {
							d[j] += s[j]
						}
					case 1:
						for j := 0; j < w-1; j++ {
							d[j+1] += s[j]
						}
						if circ {
							d[0] += s[w-1]
						}
					}
				}
			}
		}
	}
}

// TestCol2imIsExact: summed in registers, col2im gives the bits of adding
// the columns one by one, -0, infinities and NaN included, at every width
// from one on and with the angle wrapping or not.
func TestCol2imIsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	odd := []float32{float32(math.Copysign(0, -1)), 0, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 1e-40, -3e38}
	for _, circ := range []bool{false, true} {
		for _, sz := range [][3]int{{1, 1, 1}, {2, 1, 2}, {1, 3, 1}, {2, 2, 3}, {3, 4, 8}, {2, 8, 32}, {1, 2, 256}} {
			c, h, w := sz[0], sz[1], sz[2]
			y := randSlice(r, c*9*h*w)
			for i := range y {
				switch r.IntN(8) {
				case 0:
					y[i] = odd[r.IntN(len(odd))]
				case 1:
					y[i] = float32(math.Copysign(0, -1)) // columns of a ReLU's zeros
				}
			}
			got, want := make([]float32, c*h*w), make([]float32, c*h*w)
			for i := range got {
				got[i] = 7 // col2im must overwrite, not add
			}
			col2im(y, c, h, w, circ, got)
			col2imByColumn(y, c, h, w, circ, want)
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("circ %v, %v: dx[%d] = %g (%#x), want %g (%#x)", circ, sz, i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
				}
			}
		}
	}
}

// transposed is the rows×cols matrix x transposed by transpose.
func transposed(x []float32, rows, cols int) []float32 {
	t := make([]float32, rows*cols)
	transpose(t, x, rows, cols, cols, rows)
	return t
}
