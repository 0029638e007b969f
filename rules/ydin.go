package rules

import "math/big"

// ydinGame is a YDIN (seed 003) task rolled under or over attribute + skill
// modifier, with situational modifiers as extra dice.
type ydinGame struct {
	attribute int
	level     int
	noSkill   bool
	under     bool
	mods      []int
	net       int
	die       Die
	target    int
	n         int  // dice rolled (1 + |net|)
	keepLow   bool // which die is kept when n > 1
	dicePlan  []Die
}

// ydinLevels maps a skill level to its die and target modifier.
var ydinLevels = [5]struct {
	die Die
	mod int
}{{D6, 0}, {D6, 0}, {D8, 2}, {D10, 4}, {D12, 6}}

// YDINTarget returns the die and target number for an attribute and skill
// level (the "Numbers For Tasks" table, with skill 4 always a d12).
func YDINTarget(attribute, level int) (Die, int) {
	l := ydinLevels[level]
	return l.die, attribute + l.mod
}

func decodeYDIN(f *fields) (game, error) {
	g := &ydinGame{}
	var err error
	if g.attribute, err = f.reqInt("attribute", 1, 6); err != nil {
		return nil, err
	}
	if f.has("skill") {
		if g.level, err = f.intField("skill", 0, 0, 4); err != nil {
			return nil, err
		}
	} else {
		g.noSkill = true
		g.level = g.attribute / 2
	}
	mode, err := f.enumField("mode", "under", "over")
	if err != nil {
		return nil, err
	}
	g.under = mode == "under"
	if g.mods, err = f.intList("modifiers", -3, 3, 20, true); err != nil {
		return nil, err
	}
	for _, m := range g.mods {
		g.net += m
	}
	if g.level == 0 {
		g.net-- // untrained: one negative modifier
	}
	g.die, g.target = YDINTarget(g.attribute, g.level)
	g.n = 1 + abs(g.net)
	// Under, the best die is the lowest; over, the highest. Keep the best
	// with a positive net, the worst with a negative one.
	g.keepLow = (g.net > 0) == g.under
	g.dicePlan = make([]Die, g.n)
	for i := range g.dicePlan {
		g.dicePlan[i] = g.die
	}
	return g, nil
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func (g *ydinGame) plan() Plan {
	p := Plan{System: "ydin", Dice: g.dicePlan, Text: dropText(g.dicePlan)}
	if g.under {
		p.Followup = []FollowupRule{{Die: g.die, When: "the kept die shows " + itoa(int(g.die)) + ": one more " + g.die.String() + " confirms a catastrophic failure on " + itoa(int(g.die))}}
	}
	return p
}

func itoa(n int) string { return string(newText("").i(n).b) }

func (g *ydinGame) keptIndex(faces []int) int {
	best := 0
	for i := 1; i < g.n; i++ {
		if (g.keepLow && faces[i] < faces[best]) || (!g.keepLow && faces[i] > faces[best]) {
			best = i
		}
	}
	return best
}

func (g *ydinGame) need(faces []int) []Die {
	if len(faces) < g.n {
		return g.dicePlan[len(faces):]
	}
	if g.under && len(faces) == g.n && faces[g.keptIndex(faces)] == int(g.die) {
		return []Die{g.die}
	}
	return nil
}

func (g *ydinGame) resolve(faces []int, label string) (Outcome, error) {
	want := g.dicePlan
	if len(faces) >= g.n && g.need(faces[:g.n]) != nil {
		want = append(append(make([]Die, 0, g.n+1), g.dicePlan...), g.die)
	}
	if err := checkFaces(faces, want); err != nil {
		return Outcome{}, err
	}
	dice := make([]RolledDie, len(faces))
	for i, f := range faces {
		dice[i] = RolledDie{Die: g.die, Face: f}
	}
	k := g.keptIndex(faces)
	dice[k].Kept = true
	kept := faces[k]
	det := &YDINDetails{Die: g.die, Level: g.level, NetModifier: g.net}
	var outcome string
	switch {
	case !g.under:
		outcome = "catastrophic_failure"
		if kept > g.target {
			outcome = "success"
		}
	case kept == int(g.die):
		dice[g.n].Followup = true
		confirmed := faces[g.n] == int(g.die)
		det.Confirmed = &confirmed
		outcome = "failure"
		if confirmed {
			outcome = "catastrophic_failure"
		}
	case kept <= g.level:
		outcome = "critical_success"
	case kept <= g.target:
		outcome = "success"
	default:
		outcome = "failure"
	}
	t := newText(label).i(g.n).s(g.die.String())
	if g.n > 1 {
		if g.keepLow {
			t.s(" keep lowest")
		} else {
			t.s(" keep highest")
		}
	}
	if !g.under {
		t.s(" over")
	}
	t.s(" → ").i(kept).s(" vs ").i(g.target)
	if det.Confirmed != nil {
		t.s(", confirmation ").i(faces[g.n])
	}
	t.outcome(outcome)
	return Outcome{Dice: dice, Total: kept, Target: intp(g.target), Outcome: outcome, Text: t.String(), Details: Details{YDIN: det}}, nil
}

func (g *ydinGame) odds() (*Odds, error) {
	s := int(g.die)
	var d dist
	if g.keepLow {
		d = keepLowest(g.n, 1, s)
	} else {
		d = keepHighest(g.n, 1, s)
	}
	one := big.NewRat(1, 1)
	if !g.under {
		ok := d.prob(func(t int) bool { return t > g.target })
		return &Odds{Outcomes: OutcomeOdds{{"success", ok}, {"catastrophic_failure", new(big.Rat).Sub(one, ok)}}, Totals: d.totals(), Mean: d.mean()}, nil
	}
	atMax := d.prob(func(t int) bool { return t == s })
	crit := d.prob(func(t int) bool { return t <= g.level && t < s })
	succ := d.prob(func(t int) bool { return t > g.level && t <= g.target && t < s })
	cat := new(big.Rat).Mul(atMax, big.NewRat(1, int64(s)))
	fail := new(big.Rat).Sub(one, crit)
	fail.Sub(fail, succ).Sub(fail, cat)
	return &Odds{
		Outcomes: OutcomeOdds{{"critical_success", crit}, {"success", succ}, {"failure", fail}, {"catastrophic_failure", cat}},
		Totals:   d.totals(), Mean: d.mean(),
	}, nil
}
