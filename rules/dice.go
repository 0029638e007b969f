package rules

import "math/big"

// diceGame is plain notation; a nil expr is a free roll.
type diceGame struct {
	e *Expr
}

func decodeDice(f *fields) (game, error) {
	e, err := f.exprField("expr", false)
	if err != nil {
		return nil, err
	}
	return &diceGame{e: e}, nil
}

func (g *diceGame) plan() Plan {
	if g.e == nil {
		return Plan{System: "dice", Dice: []Die{}, Free: true, Text: "drop any dice"}
	}
	ds := g.e.plan()
	return Plan{System: "dice", Dice: ds, Text: dropText(ds)}
}

func (g *diceGame) need(faces []int) []Die {
	if g.e == nil {
		return nil
	}
	return remaining(g.e.plan(), len(faces))
}

func (g *diceGame) resolve(faces []int, label string) (Outcome, error) {
	if g.e == nil {
		return Outcome{}, badf("expr", "a free roll (no expr) needs the dice that landed, not bare faces; give expr to roll from the command line")
	}
	if err := checkFaces(faces, g.e.plan()); err != nil {
		return Outcome{}, err
	}
	dice := make([]RolledDie, len(faces))
	total := g.e.eval(faces, dice)
	t := newText(label).s(g.e.src).s(" → ").faces(dice).s(" = ").i(total)
	return Outcome{Dice: dice, Total: total, Outcome: "rolled", Text: t.String()}, nil
}

func (g *diceGame) odds() (*Odds, error) {
	if g.e == nil {
		return nil, badf("expr", "a free roll (no expr) has no odds: the dice are whatever lands")
	}
	d, err := g.e.dist()
	if err != nil {
		return nil, badf("expr", "%v", err)
	}
	return &Odds{Outcomes: OutcomeOdds{{"rolled", big.NewRat(1, 1)}}, Totals: d.totals(), Mean: d.mean()}, nil
}

// ResolveFree resolves a free roll (a dice request without expr) from the
// dice that landed, in rules faces.
func (r *Request) ResolveFree(dice []DieFace) (Outcome, error) {
	g, ok := r.g.(*diceGame)
	if !ok || g.e != nil {
		return Outcome{}, badf("", "only a dice request without expr is a free roll")
	}
	out := make([]RolledDie, len(dice))
	total := 0
	t := newText(r.Label).s("free roll → ")
	for i, d := range dice {
		if !d.Die.Valid() {
			return Outcome{}, badf("dice", "dice[%d]: %v is not a die the tower rolls", i, d.Die)
		}
		if d.Face < 1 || d.Face > int(d.Die) {
			return Outcome{}, badf("dice", "dice[%d] is a %s and shows 1-%d, got %d", i, d.Die, int(d.Die), d.Face)
		}
		out[i] = RolledDie{Die: d.Die, Face: d.Face, Kept: true}
		total += d.Face
		if i > 0 {
			t.s(", ")
		}
		t.s(d.Die.String()).s(" ").i(d.Face)
	}
	t.s(" = ").i(total)
	return Outcome{Dice: out, Total: total, Outcome: "rolled", Text: t.String()}, nil
}

// hasTarget reports whether results of r are compared against a target
// (and so carry odds).
func (r *Request) hasTarget() bool {
	switch g := r.g.(type) {
	case *diceGame:
		return false
	case *dsdnGame:
		return g.roll != "damage"
	}
	return true
}
