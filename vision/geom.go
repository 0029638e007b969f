package vision

import "math"

// m2 is a 2x2 matrix [a b; c d] acting on column vectors.
type m2 struct{ a, b, c, d float64 }

func (m m2) mul(n m2) m2 {
	return m2{m.a*n.a + m.b*n.c, m.a*n.b + m.b*n.d, m.c*n.a + m.d*n.c, m.c*n.b + m.d*n.d}
}

func (m m2) apply(x, y float64) (float64, float64) { return m.a*x + m.b*y, m.c*x + m.d*y }

func (m m2) det() float64 { return m.a*m.d - m.b*m.c }

func (m m2) inv() (m2, bool) {
	d := m.det()
	if d == 0 || math.IsNaN(d) {
		return m2{}, false
	}
	return m2{m.d / d, -m.b / d, -m.c / d, m.a / d}, true
}

func (m m2) t() m2 { return m2{m.a, m.c, m.b, m.d} }

// sym returns the symmetric matrix of a covariance {xx, xy, yy}.
func sym(c [3]float64) m2 { return m2{c[0], c[1], c[1], c[2]} }

// cov returns {xx, xy, yy} of a symmetric matrix.
func (m m2) cov() [3]float64 { return [3]float64{m.a, (m.b + m.c) / 2, m.d} }

// svals returns the singular values, largest first.
func (m m2) svals() (float64, float64) {
	// Singular values are the square roots of the eigenvalues of MᵀM.
	l1, l2 := eig2(m.t().mul(m).cov())
	return math.Sqrt(max(l1, 0)), math.Sqrt(max(l2, 0))
}

// symPow returns S^p for a symmetric positive definite S given as {xx,xy,yy}.
func symPow(c [3]float64, p float64) m2 {
	l1, l2 := eig2(c)
	th := eigAngle(c)
	co, si := math.Cos(th), math.Sin(th)
	p1, p2 := math.Pow(max(l1, 1e-12), p), math.Pow(max(l2, 1e-12), p)
	// R diag(p1,p2) Rᵀ with R's columns the eigenvectors.
	return m2{
		co*co*p1 + si*si*p2, co * si * (p1 - p2),
		co * si * (p1 - p2), si*si*p1 + co*co*p2,
	}
}

// conj returns M S Mᵀ for a covariance S.
func conj(m m2, c [3]float64) [3]float64 { return m.mul(sym(c)).mul(m.t()).cov() }

// roundness is the minor/major axis ratio of a covariance ellipse.
func roundness(c [3]float64) float64 {
	l1, l2 := eig2(c)
	if l1 <= 0 {
		return 0
	}
	return math.Sqrt(max(l2, 0) / l1)
}
