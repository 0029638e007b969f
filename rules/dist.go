package rules

import "math/big"

// dist is an exact distribution over integer totals: the chance of total
// lo+i is c[i]/den. Counts are exact (big integers), so probabilities are
// exact and sum to exactly 1.
type dist struct {
	lo  int
	c   []*big.Int
	den *big.Int
}

var bigOne = big.NewInt(1)

func point(v int) dist {
	return dist{lo: v, c: []*big.Int{big.NewInt(1)}, den: big.NewInt(1)}
}

// uniform is one die: faces 1..s.
func uniform(s int) dist {
	c := make([]*big.Int, s)
	for i := range c {
		c[i] = big.NewInt(1)
	}
	return dist{lo: 1, c: c, den: big.NewInt(int64(s))}
}

// sumDice is the sum of n dice with s sides, built with running window sums
// (O(n·support) additions instead of a full convolution per die) in two
// reused buffers.
func sumDice(n, s int) dist {
	if n == 0 {
		return point(0)
	}
	size := n*(s-1) + 1
	a := make([]big.Int, size)
	b := make([]big.Int, size)
	for i := 0; i < s; i++ {
		a[i].SetInt64(1)
	}
	cur := s // used length of a
	for k := 1; k < n; k++ {
		next := cur + s - 1
		var win big.Int
		for i := 0; i < next; i++ {
			if i < cur {
				win.Add(&win, &a[i])
			}
			if j := i - s; j >= 0 && j < cur {
				win.Sub(&win, &a[j])
			}
			b[i].Set(&win)
		}
		a, b = b, a
		cur = next
	}
	c := make([]*big.Int, cur)
	for i := range c {
		c[i] = &a[i]
	}
	den := new(big.Int).Exp(big.NewInt(int64(s)), big.NewInt(int64(n)), nil)
	return dist{lo: n, c: c, den: den}
}

// addUniform convolves d with one die of s sides.
func addUniform(d dist, s int) dist {
	out := make([]*big.Int, len(d.c)+s-1)
	win := new(big.Int)
	for i := range out {
		if i < len(d.c) {
			win.Add(win, d.c[i])
		}
		if j := i - s; j >= 0 && j < len(d.c) {
			win.Sub(win, d.c[j])
		}
		out[i] = new(big.Int).Set(win)
	}
	return dist{lo: d.lo + 1, c: out, den: new(big.Int).Mul(d.den, big.NewInt(int64(s)))}
}

// conv is the distribution of the sum of independent a and b.
func conv(a, b dist) dist {
	out := make([]*big.Int, len(a.c)+len(b.c)-1)
	for i := range out {
		out[i] = new(big.Int)
	}
	t := new(big.Int)
	for i, x := range a.c {
		if x.Sign() == 0 {
			continue
		}
		for j, y := range b.c {
			if y.Sign() == 0 {
				continue
			}
			out[i+j].Add(out[i+j], t.Mul(x, y))
		}
	}
	return dist{lo: a.lo + b.lo, c: out, den: new(big.Int).Mul(a.den, b.den)}
}

// shift adds a constant to every total.
func (d dist) shift(k int) dist { d.lo += k; return d }

// neg is the distribution of −X.
func (d dist) neg() dist {
	n := len(d.c)
	out := make([]*big.Int, n)
	for i := range d.c {
		out[n-1-i] = d.c[i]
	}
	return dist{lo: -(d.lo + n - 1), c: out, den: d.den}
}

// mapTotals is the distribution of f(X).
func (d dist) mapTotals(f func(int) int) dist {
	m := map[int]*big.Int{}
	lo, hi := 0, 0
	first := true
	for i, x := range d.c {
		if x.Sign() == 0 {
			continue
		}
		v := f(d.lo + i)
		if first || v < lo {
			lo = v
		}
		if first || v > hi {
			hi = v
		}
		first = false
		if m[v] == nil {
			m[v] = new(big.Int)
		}
		m[v].Add(m[v], x)
	}
	out := make([]*big.Int, hi-lo+1)
	for i := range out {
		if x := m[lo+i]; x != nil {
			out[i] = x
		} else {
			out[i] = new(big.Int)
		}
	}
	return dist{lo: lo, c: out, den: d.den}
}

// prob returns the exact chance that pred(total) holds.
func (d dist) prob(pred func(int) bool) *big.Rat {
	num := new(big.Int)
	for i, x := range d.c {
		if pred(d.lo + i) {
			num.Add(num, x)
		}
	}
	return new(big.Rat).SetFrac(num, d.den)
}

// totals lists the non-zero totals in ascending order.
func (d dist) totals() []TotalProb {
	var out []TotalProb
	for i, x := range d.c {
		if x.Sign() != 0 {
			out = append(out, TotalProb{Total: d.lo + i, P: new(big.Rat).SetFrac(x, d.den)})
		}
	}
	return out
}

// mean is the exact expected total.
func (d dist) mean() *big.Rat {
	num := new(big.Int)
	t := new(big.Int)
	for i, x := range d.c {
		num.Add(num, t.Mul(x, big.NewInt(int64(d.lo+i))))
	}
	return new(big.Rat).SetFrac(num, d.den)
}

// keepHighest is the distribution of the sum of the k highest of n dice with
// s sides. It walks face values from high to low; while fewer than k dice
// have been placed the state is (placed, sum), and the step that reaches k
// finishes at once, since the rest must all show less than the current value.
// Work is about k·(k·s)·s·n big-integer steps, independent of s^n.
func keepHighest(n, k, s int) dist {
	if k >= n {
		return sumDice(n, s)
	}
	if k <= 0 {
		d := point(0)
		d.den = new(big.Int).Exp(big.NewInt(int64(s)), big.NewInt(int64(n)), nil)
		d.c[0] = new(big.Int).Set(d.den)
		return d
	}
	maxSum := k * s
	// binom[a][b] = C(a, b)
	binom := make([][]*big.Int, n+1)
	for a := 0; a <= n; a++ {
		binom[a] = make([]*big.Int, a+1)
		for b := 0; b <= a; b++ {
			binom[a][b] = new(big.Int).Binomial(int64(a), int64(b))
		}
	}
	final := make([]*big.Int, maxSum+1)
	for i := range final {
		final[i] = new(big.Int)
	}
	state := make([][]*big.Int, k) // state[m][sum], m < k
	for m := range state {
		state[m] = make([]*big.Int, maxSum+1)
	}
	state[0][0] = big.NewInt(1)
	t := new(big.Int)
	pow := new(big.Int)
	for v := s; v >= 1; v-- {
		next := make([][]*big.Int, k)
		for m := range next {
			next[m] = make([]*big.Int, maxSum+1)
		}
		for m := 0; m < k; m++ {
			for sum, c := range state[m] {
				if c == nil || c.Sign() == 0 {
					continue
				}
				rest := n - m
				for j := 0; j <= rest; j++ {
					if m+j >= k {
						left := rest - j
						if v == 1 && left > 0 {
							continue
						}
						pow.Exp(big.NewInt(int64(v-1)), big.NewInt(int64(left)), nil)
						t.Mul(c, binom[rest][j])
						t.Mul(t, pow)
						idx := sum + v*(k-m)
						final[idx].Add(final[idx], t)
						continue
					}
					ns := sum + v*j
					if next[m+j][ns] == nil {
						next[m+j][ns] = new(big.Int)
					}
					next[m+j][ns].Add(next[m+j][ns], t.Mul(c, binom[rest][j]))
				}
			}
		}
		state = next
	}
	d := dist{lo: 0, c: final, den: new(big.Int).Exp(big.NewInt(int64(s)), big.NewInt(int64(n)), nil)}
	return d.trim()
}

// keepLowest mirrors keepHighest: face f ↔ s+1−f.
func keepLowest(n, k, s int) dist {
	if k >= n {
		return sumDice(n, s)
	}
	kk := k
	if kk < 0 {
		kk = 0
	}
	return keepHighest(n, kk, s).neg().shift(kk * (s + 1))
}

// keepWork estimates the big-integer steps keepHighest takes.
func keepWork(n, k, s int) int {
	if k >= n || k <= 0 {
		return n * s
	}
	return k * k * s * s * (n + 1)
}

// trim drops zero counts at both ends.
func (d dist) trim() dist {
	a, b := 0, len(d.c)
	for a < b && d.c[a].Sign() == 0 {
		a++
	}
	for b > a && d.c[b-1].Sign() == 0 {
		b--
	}
	if a == b {
		return d
	}
	return dist{lo: d.lo + a, c: d.c[a:b], den: d.den}
}
