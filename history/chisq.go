package history

import "math"

// ChiSquareSF is the survival function of the chi-square distribution with
// df degrees of freedom: P(X >= x), the p-value of a goodness-of-fit
// statistic x. It is Q(df/2, x/2), the regularized upper incomplete gamma
// function. It returns NaN for df < 1 or a NaN x, and 1 for x <= 0.
func ChiSquareSF(x float64, df int) float64 {
	if df < 1 || math.IsNaN(x) {
		return math.NaN()
	}
	if x <= 0 {
		return 1
	}
	if math.IsInf(x, 1) {
		return 0
	}
	return GammaQ(float64(df)/2, x/2)
}

// GammaQ is the regularized upper incomplete gamma function
// Q(a, x) = Γ(a, x)/Γ(a) for a > 0, x >= 0 (NaN otherwise).
//
// Below x = a+1 the power series of P = 1-Q converges fast; above it the
// continued fraction for Q does, and computing Q directly there keeps its
// small tail values accurate instead of losing them to 1-P cancellation.
func GammaQ(a, x float64) float64 {
	switch {
	case math.IsNaN(a) || math.IsNaN(x) || a <= 0 || x < 0:
		return math.NaN()
	case x == 0:
		return 1
	case math.IsInf(x, 1):
		return 0
	case x < a+1:
		return 1 - gammaPSeries(a, x)
	default:
		return gammaQFraction(a, x)
	}
}

const (
	gammaEps   = 1e-15
	gammaIters = 10000
	gammaTiny  = 1e-300
)

// gammaPrefix is x^a e^-x / Γ(a), in logs to avoid overflow.
func gammaPrefix(a, x float64) float64 {
	lg, _ := math.Lgamma(a)
	return math.Exp(a*math.Log(x) - x - lg)
}

// gammaPSeries: P(a,x) = x^a e^-x / Γ(a+1) · Σ_{n>=0} x^n / ((a+1)…(a+n)).
func gammaPSeries(a, x float64) float64 {
	term := 1 / a
	sum := term
	for n := 1; n < gammaIters; n++ {
		term *= x / (a + float64(n))
		sum += term
		if math.Abs(term) < math.Abs(sum)*gammaEps {
			break
		}
	}
	return math.Min(1, sum*gammaPrefix(a, x))
}

// gammaQFraction evaluates the continued fraction
// Q(a,x) = x^a e^-x / Γ(a) · 1/(x+1-a- 1(1-a)/(x+3-a- 2(2-a)/(x+5-a- …)))
// with the modified Lentz method.
func gammaQFraction(a, x float64) float64 {
	b := x + 1 - a
	c := 1 / gammaTiny
	d := 1 / b
	h := d
	for i := 1; i < gammaIters; i++ {
		an := -float64(i) * (float64(i) - a)
		b += 2
		d = an*d + b
		if math.Abs(d) < gammaTiny {
			d = gammaTiny
		}
		c = b + an/c
		if math.Abs(c) < gammaTiny {
			c = gammaTiny
		}
		d = 1 / d
		del := d * c
		h *= del
		if math.Abs(del-1) < gammaEps {
			break
		}
	}
	return math.Max(0, math.Min(1, gammaPrefix(a, x)*h))
}
