package rules

import (
	"bytes"
	"math/big"
	"strconv"
)

// Prob is one outcome's exact probability.
type Prob struct {
	Name string
	P    *big.Rat
}

// OutcomeOdds is the chance of each outcome, in the system's order.
type OutcomeOdds []Prob

// MarshalJSON writes an object in the outcomes' order.
func (o OutcomeOdds) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(p.Name))
		b.WriteByte(':')
		b.WriteString(ratJSON(p.P))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Get returns the probability of the named outcome (0 when absent).
func (o OutcomeOdds) Get(name string) *big.Rat {
	for _, p := range o {
		if p.Name == name {
			return p.P
		}
	}
	return new(big.Rat)
}

// TotalProb is the chance of one total.
type TotalProb struct {
	Total int
	P     *big.Rat
}

// Odds is what `towerd odds` prints: every outcome, every total, the mean.
type Odds struct {
	Outcomes OutcomeOdds
	Totals   []TotalProb // ascending totals, zero-probability totals left out
	Mean     *big.Rat
}

// MarshalJSON writes {"outcomes":{...},"totals":{"3":0.1,...},"mean":4.5}.
func (o *Odds) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`{"outcomes":`)
	ob, _ := o.Outcomes.MarshalJSON()
	b.Write(ob)
	b.WriteString(`,"totals":{`)
	for i, t := range o.Totals {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(strconv.Itoa(t.Total)))
		b.WriteByte(':')
		b.WriteString(ratJSON(t.P))
	}
	b.WriteString(`},"mean":`)
	b.WriteString(ratJSON(o.Mean))
	b.WriteByte('}')
	return b.Bytes(), nil
}

// ratJSON prints r as the float64 nearest to it, shortest form that reads
// back to that float (17 significant digits at most, exact when r is), in
// plain decimals: the contract asks for decimals, and 6d20's total of 6 is
// 0.000000015625, not 1.5625e-08.
func ratJSON(r *big.Rat) string {
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'f', -1, 64)
}
