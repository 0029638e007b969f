package sim

import (
	"math"
	"testing"
)

// chiSquareCritical001 holds the chi-square value with P(X > x) = 0.001 for
// df = sides − 1 (standard tables).
var chiSquareCritical001 = map[int]float64{
	3: 16.266, 5: 20.515, 7: 24.322, 9: 27.877, 11: 31.264, 19: 43.820, 99: 148.230,
}

func TestFacesUnbiased(t *testing.T) {
	src := NewSeeded(42)
	for _, sides := range []int{4, 6, 8, 10, 12, 20, 100} {
		const perFace = 2000
		n := sides * perFace
		counts := make([]int, sides+1)
		for i := 0; i < n; i++ {
			f := src.Face(sides)
			if f < 1 || f > sides {
				t.Fatalf("d%d rolled %d", sides, f)
			}
			counts[f]++
		}
		chi := 0.0
		for f := 1; f <= sides; f++ {
			d := float64(counts[f]) - perFace
			chi += d * d / perFace
		}
		if crit := chiSquareCritical001[sides-1]; chi > crit {
			t.Errorf("d%d: chi-square %.1f > %.1f (p < 0.001): faces look biased", sides, chi, crit)
		}
	}
}

func TestCryptoSourceUnbiased(t *testing.T) {
	src := NewSource()
	const sides, perFace = 6, 5000
	counts := make([]int, sides+1)
	for i := 0; i < sides*perFace; i++ {
		counts[src.Face(sides)]++
	}
	chi := 0.0
	for f := 1; f <= sides; f++ {
		d := float64(counts[f]) - perFace
		chi += d * d / perFace
	}
	// p = 1e-6 keeps this non-seeded test from flaking.
	if chi > 35.89 || math.IsNaN(chi) {
		t.Errorf("crypto d6: chi-square %.1f: faces look biased", chi)
	}
}

func TestSeededIsReproducible(t *testing.T) {
	a, b := NewSeeded(7), NewSeeded(7)
	for i := 0; i < 100; i++ {
		if x, y := a.Face(20), b.Face(20); x != y {
			t.Fatalf("roll %d: %d != %d with the same seed", i, x, y)
		}
	}
	c := NewSeeded(8)
	same := 0
	a = NewSeeded(7)
	for i := 0; i < 100; i++ {
		if a.Face(20) == c.Face(20) {
			same++
		}
	}
	if same > 20 {
		t.Errorf("seeds 7 and 8 agree on %d of 100 rolls", same)
	}
}
