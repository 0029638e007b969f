package rules

import (
	"fmt"
	"strconv"
	"strings"
)

// Limits on notation, so that absurd requests are refused up front instead
// of hanging the tower or the odds engine.
const (
	MaxDice      = 100    // dice in one request
	MaxTerms     = 32     // terms in one expression
	MaxConstant  = 100000 // magnitude of a constant term
	MaxExprBytes = 200    // length of an expression
)

// term is one part of a notation sum: a constant, or N dice of a kind with
// an optional keep-highest/keep-lowest.
type term struct {
	sign  int // +1 or −1
	n     int // dice; 0 for a constant
	die   Die
	keep  int  // dice kept, 0 = all
	high  bool // keep highest (kh) rather than lowest (kl)
	konst int
}

// Expr is parsed dice notation, e.g. "3d4+4", "2d20kh1", "d%".
type Expr struct {
	src   string
	terms []term
	dice  int
}

// String returns the notation as written (trimmed).
func (e *Expr) String() string { return e.src }

// Dice returns the number of dice the expression rolls.
func (e *Expr) Dice() int { return e.dice }

// ParseExpr reads dice notation (seed 002): terms joined by + and −, each a
// constant or [N]dS with S one of 4 6 8 10 12 20 100 (or %), optionally
// followed by khK or klK (K defaults to 1). Spaces between terms are allowed.
func ParseExpr(s string) (*Expr, error) {
	src := strings.TrimSpace(s)
	if src == "" {
		return nil, fmt.Errorf("empty expression")
	}
	if len(src) > MaxExprBytes {
		return nil, fmt.Errorf("expression longer than %d characters", MaxExprBytes)
	}
	e := &Expr{src: src}
	p := 0
	sign := 1
	skipSpace := func() {
		for p < len(src) && (src[p] == ' ' || src[p] == '\t') {
			p++
		}
	}
	num := func() (int, bool, error) {
		st := p
		for p < len(src) && src[p] >= '0' && src[p] <= '9' {
			p++
			if p-st > 7 {
				return 0, true, fmt.Errorf("number too large at position %d (limit %d)", st+1, MaxConstant)
			}
		}
		if st == p {
			return 0, false, nil
		}
		v, _ := strconv.Atoi(src[st:p])
		return v, true, nil
	}
	skipSpace()
	if p < len(src) && (src[p] == '+' || src[p] == '-') {
		if src[p] == '-' {
			sign = -1
		}
		p++
		skipSpace()
	}
	for {
		if len(e.terms) == MaxTerms {
			return nil, fmt.Errorf("more than %d terms", MaxTerms)
		}
		start := p
		n, hasN, err := num()
		if err != nil {
			return nil, err
		}
		t := term{sign: sign}
		if p < len(src) && (src[p] == 'd' || src[p] == 'D') {
			p++
			if !hasN {
				n = 1
			}
			if n < 1 || n > MaxDice {
				return nil, fmt.Errorf("%d dice in %q: must be 1-%d", n, src[start:p], MaxDice)
			}
			var sides int
			if p < len(src) && src[p] == '%' {
				p++
				sides = 100
			} else {
				sv, ok, err := num()
				if err != nil {
					return nil, err
				}
				if !ok {
					return nil, fmt.Errorf("missing die size after %q at position %d", src[start:p], p+1)
				}
				sides = sv
			}
			if !Die(sides).Valid() {
				return nil, fmt.Errorf("d%d is not a die the tower rolls (d4, d6, d8, d10, d12, d20, d100 or d%%)", sides)
			}
			t.n, t.die = n, Die(sides)
			if p+1 < len(src) && (src[p] == 'k' || src[p] == 'K') {
				switch src[p+1] {
				case 'h', 'H':
					t.high = true
				case 'l', 'L':
				default:
					return nil, fmt.Errorf("unknown keep %q at position %d (use kh or kl)", src[p:p+2], p+1)
				}
				p += 2
				k, ok, err := num()
				if err != nil {
					return nil, err
				}
				if !ok {
					k = 1
				}
				if k < 1 || k > n {
					return nil, fmt.Errorf("keep %d of %d dice: must be 1-%d", k, n, n)
				}
				t.keep = k
			}
			e.dice += n
			if e.dice > MaxDice {
				return nil, fmt.Errorf("more than %d dice in one request", MaxDice)
			}
		} else if hasN {
			if n > MaxConstant {
				return nil, fmt.Errorf("constant %d too large (limit %d)", n, MaxConstant)
			}
			t.konst = n
		} else {
			if p >= len(src) {
				return nil, fmt.Errorf("expression ends after an operator")
			}
			return nil, fmt.Errorf("unexpected %q at position %d", src[p], p+1)
		}
		e.terms = append(e.terms, t)
		skipSpace()
		if p == len(src) {
			break
		}
		switch src[p] {
		case '+':
			sign = 1
		case '-':
			sign = -1
		default:
			return nil, fmt.Errorf("unexpected %q at position %d", src[p], p+1)
		}
		p++
		skipSpace()
	}
	return e, nil
}

// plan lists the dice of the expression in order.
func (e *Expr) plan() []Die {
	out := make([]Die, 0, e.dice)
	for _, t := range e.terms {
		for i := 0; i < t.n; i++ {
			out = append(out, t.die)
		}
	}
	return out
}

// eval sums faces (plan order) and marks kept dice into dice.
func (e *Expr) eval(faces []int, dice []RolledDie) int {
	total := 0
	i := 0
	for _, t := range e.terms {
		if t.n == 0 {
			total += t.sign * t.konst
			continue
		}
		fs := faces[i : i+t.n]
		ds := dice[i : i+t.n]
		for j := range ds {
			ds[j] = RolledDie{Die: t.die, Face: fs[j], Kept: t.keep == 0}
		}
		if t.keep > 0 {
			markKept(fs, ds, t.keep, t.high)
		}
		for j := range ds {
			if ds[j].Kept {
				total += t.sign * fs[j]
			}
		}
		i += t.n
	}
	return total
}

// markKept marks the k highest (or lowest) faces as kept; among equal faces
// the earlier die is kept.
func markKept(fs []int, ds []RolledDie, k int, high bool) {
	for c := 0; c < k; c++ {
		best := -1
		for j := range fs {
			if ds[j].Kept {
				continue
			}
			if best < 0 || (high && fs[j] > fs[best]) || (!high && fs[j] < fs[best]) {
				best = j
			}
		}
		ds[best].Kept = true
	}
}

// dist is the exact distribution of the expression's total.
func (e *Expr) dist() (dist, error) {
	work := 0
	for _, t := range e.terms {
		if t.keep > 0 {
			work += keepWork(t.n, t.keep, int(t.die))
		}
	}
	if work > maxKeepWork {
		return dist{}, fmt.Errorf("keep-highest/lowest over that many dice is too large to compute exactly")
	}
	d := point(0)
	for _, t := range e.terms {
		var td dist
		switch {
		case t.n == 0:
			d = d.shift(t.sign * t.konst)
			continue
		case t.keep == 0:
			td = sumDice(t.n, int(t.die))
		case t.high:
			td = keepHighest(t.n, t.keep, int(t.die))
		default:
			td = keepLowest(t.n, t.keep, int(t.die))
		}
		if t.sign < 0 {
			td = td.neg()
		}
		if len(d.c) == 1 {
			td.lo += d.lo
			td.den.Mul(td.den, d.den)
			d = td
			continue
		}
		d = conv(d, td)
	}
	return d, nil
}

// maxKeepWork bounds the exact keep-highest computation (about a second).
const maxKeepWork = 200_000_000
