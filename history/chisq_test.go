package history

import (
	"math"
	"testing"
)

// Upper critical values of the chi-square distribution from the standard
// tables (rounded to 3 decimals there, hence the tolerance).
func TestChiSquareSFTable(t *testing.T) {
	cases := []struct {
		df   int
		x, p float64
	}{
		{1, 3.841, 0.05},
		{1, 6.635, 0.01},
		{2, 5.991, 0.05},
		{3, 7.815, 0.05},
		{3, 11.345, 0.01},
		{5, 11.070, 0.05},
		{5, 15.086, 0.01},
		{7, 14.067, 0.05},
		{9, 16.919, 0.05},
		{9, 21.666, 0.01},
		{11, 19.675, 0.05},
		{19, 30.144, 0.05},
		{19, 36.191, 0.01},
		{99, 123.225, 0.05},
		{99, 134.642, 0.01},
		{5, 1.145, 0.95},
		{19, 10.117, 0.95},
		{9, 0.0, 1},
	}
	for _, c := range cases {
		got := ChiSquareSF(c.x, c.df)
		if math.Abs(got-c.p) > 2e-4 {
			t.Errorf("ChiSquareSF(%g, df=%d) = %.6f, want %.4f", c.x, c.df, got, c.p)
		}
	}
	// The brief's examples, as written.
	if p := ChiSquareSF(11.07, 5); math.Abs(p-0.05) > 1e-3 {
		t.Errorf("df=5 x=11.07: p=%g, want ≈0.05", p)
	}
	if p := ChiSquareSF(30.14, 19); math.Abs(p-0.05) > 1e-3 {
		t.Errorf("df=19 x=30.14: p=%g, want ≈0.05", p)
	}
}

// Closed forms: df=2 is exp(-x/2); df=1 is erfc(sqrt(x/2)); any even df is
// exp(-x/2) Σ_{i<df/2} (x/2)^i / i!. These check both evaluation branches
// (series below a+1, continued fraction above) to near machine precision.
func TestChiSquareSFClosedForms(t *testing.T) {
	xs := []float64{1e-6, 0.01, 0.3, 0.9, 1, 1.5, 2, 3.7, 5, 9.9, 12, 25, 40, 80, 150, 300, 700}
	for _, x := range xs {
		if got, want := ChiSquareSF(x, 2), math.Exp(-x/2); !approxEqual(got, want) {
			t.Errorf("df=2 x=%g: %g, want %g", x, got, want)
		}
		if got, want := ChiSquareSF(x, 1), math.Erfc(math.Sqrt(x/2)); !approxEqual(got, want) {
			t.Errorf("df=1 x=%g: %g, want %g", x, got, want)
		}
		for _, df := range []int{4, 6, 10, 20, 40, 100} {
			h := x / 2
			term, sum := 1.0, 1.0
			for i := 1; i < df/2; i++ {
				term *= h / float64(i)
				sum += term
			}
			want := math.Exp(-h) * sum
			if got := ChiSquareSF(x, df); !approxEqual(got, want) {
				t.Errorf("df=%d x=%g: %g, want %g", df, x, got, want)
			}
		}
	}
}

// approxEqual compares with a relative tolerance, or absolute for tiny values.
func approxEqual(a, b float64) bool {
	d := math.Abs(a - b)
	return d <= 1e-10*math.Max(math.Abs(a), math.Abs(b)) || d < 1e-300
}

func TestChiSquareSFEdges(t *testing.T) {
	if p := ChiSquareSF(-1, 3); p != 1 {
		t.Errorf("x<0: %g, want 1", p)
	}
	if p := ChiSquareSF(math.Inf(1), 3); p != 0 {
		t.Errorf("x=+Inf: %g, want 0", p)
	}
	if p := ChiSquareSF(1, 0); !math.IsNaN(p) {
		t.Errorf("df=0: %g, want NaN", p)
	}
	if p := ChiSquareSF(math.NaN(), 3); !math.IsNaN(p) {
		t.Errorf("x=NaN: %g, want NaN", p)
	}
	if q := GammaQ(-1, 1); !math.IsNaN(q) {
		t.Errorf("GammaQ(a<0): %g, want NaN", q)
	}
	// Monotone decreasing in x and always within [0, 1].
	for _, df := range []int{1, 3, 5, 7, 9, 11, 19, 99} {
		prev := 1.0
		for x := 0.0; x < 400; x += 1.3 {
			p := ChiSquareSF(x, df)
			if p < 0 || p > 1 || p > prev+1e-15 {
				t.Fatalf("df=%d x=%g: p=%g (prev %g) not monotone in [0,1]", df, x, p, prev)
			}
			prev = p
		}
	}
}

func BenchmarkChiSquareSF(b *testing.B) {
	for b.Loop() {
		ChiSquareSF(30.14, 19)
	}
}
