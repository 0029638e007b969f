package rules

import (
	"math/big"
	"sort"
)

// d20tnGame is a test of seed 001: d20 (+ advantage/disadvantage d20s) +
// skill die + domain die against TN = 15 + trauma.
type d20tnGame struct {
	trauma     int
	tn         int
	adv, dis   bool
	skill      Die // 0: none
	domain     Die // 0: none
	itemEffect bool
	dicePlan   []Die
}

// ladder is the die ladder d4 → d12 by rung 1–5.
var ladder = [...]Die{0, D4, D6, D8, D10, D12}

// StepUp moves a die one rung up the ladder; a d12 (or no die) cannot step.
func StepUp(d Die) (Die, bool) {
	for i := 1; i < len(ladder)-1; i++ {
		if ladder[i] == d {
			return ladder[i+1], true
		}
	}
	return d, false
}

func decodeD20TN(f *fields) (game, error) {
	g := &d20tnGame{}
	var err error
	if g.trauma, err = f.intField("trauma", 0, 0, 1000); err != nil {
		return nil, err
	}
	rank, err := f.intField("skill_rank", 0, 0, 5)
	if err != nil {
		return nil, err
	}
	doms, err := f.intField("domains", 0, 0, 5)
	if err != nil {
		return nil, err
	}
	if g.adv, err = f.boolField("advantage", false); err != nil {
		return nil, err
	}
	if g.dis, err = f.boolField("disadvantage", false); err != nil {
		return nil, err
	}
	g.skill, g.domain = ladder[rank], ladder[doms]
	if f.has("item") {
		item, err := f.enumField("item", "skill", "domain", "effect")
		if err != nil {
			return nil, err
		}
		switch item {
		case "skill":
			if g.skill == 0 {
				return nil, badf("item", "item cannot step up the skill die: there is none (skill_rank 0)")
			}
			up, ok := StepUp(g.skill)
			if !ok {
				return nil, badf("item", "item cannot step up the skill die: it is already a d12 (skill_rank 5)")
			}
			g.skill = up
		case "domain":
			if g.domain == 0 {
				return nil, badf("item", "item cannot step up the domain die: there is none (domains 0)")
			}
			up, ok := StepUp(g.domain)
			if !ok {
				return nil, badf("item", "item cannot step up the domain die: it is already a d12 (domains 5)")
			}
			g.domain = up
		case "effect":
			g.itemEffect = true
		}
	}
	g.tn = 15 + g.trauma
	g.dicePlan = []Die{D20}
	if g.adv {
		g.dicePlan = append(g.dicePlan, D20)
	}
	if g.dis {
		g.dicePlan = append(g.dicePlan, D20)
	}
	if g.skill != 0 {
		g.dicePlan = append(g.dicePlan, g.skill)
	}
	if g.domain != 0 {
		g.dicePlan = append(g.dicePlan, g.domain)
	}
	return g, nil
}

func (g *d20tnGame) nd20() int {
	n := 1
	if g.adv {
		n++
	}
	if g.dis {
		n++
	}
	return n
}

func (g *d20tnGame) plan() Plan {
	return Plan{System: "d20tn", Dice: g.dicePlan, Text: dropText(g.dicePlan)}
}

func (g *d20tnGame) need(faces []int) []Die { return remaining(g.dicePlan, len(faces)) }

// appliedD20 returns the index of the d20 that applies: the only one, the
// highest (advantage), the lowest (disadvantage) or the median of three
// (both). Among equal faces the earlier die is taken.
func (g *d20tnGame) appliedD20(faces []int) int {
	n := g.nd20()
	switch {
	case n == 1:
		return 0
	case n == 3:
		idx := []int{0, 1, 2}
		sort.SliceStable(idx, func(a, b int) bool { return faces[idx[a]] < faces[idx[b]] })
		return idx[1]
	case g.adv:
		if faces[1] > faces[0] {
			return 1
		}
		return 0
	default:
		if faces[1] < faces[0] {
			return 1
		}
		return 0
	}
}

func (g *d20tnGame) resolve(faces []int, label string) (Outcome, error) {
	if err := checkFaces(faces, g.dicePlan); err != nil {
		return Outcome{}, err
	}
	n := g.nd20()
	dice := make([]RolledDie, len(faces))
	for i, f := range faces {
		dice[i] = RolledDie{Die: g.dicePlan[i], Face: f, Kept: i >= n}
	}
	dice[g.appliedD20(faces)].Kept = true
	total := 0
	bonus, setback := false, false
	for _, d := range dice {
		if d.Kept {
			total += d.Face
		}
		bonus = bonus || d.Face == int(d.Die)
		setback = setback || d.Face == 1
	}
	outcome := "fail"
	if total >= g.tn {
		outcome = "pass"
	}
	det := &D20TNDetails{TN: g.tn, Bonus: bonus, Setback: setback}
	if setback {
		det.XP, det.NarratorXP = 1, 1
	}
	t := newText(label).s(g.words()).s(" → ").faces(dice).s(" = ").i(total).s(" vs TN ").i(g.tn).outcome(outcome)
	if bonus {
		t.s(", bonus")
	}
	if setback {
		t.s(", setback (+1 XP)")
	}
	if g.itemEffect {
		det.Item = "effect"
		t.s(", item on the effect")
	}
	return Outcome{Dice: dice, Total: total, Target: intp(g.tn), Outcome: outcome, Text: t.String(), Details: Details{D20TN: det}}, nil
}

// appliedDist is the distribution of the applied d20, counted over every
// combination of at most three d20s.
func (g *d20tnGame) appliedDist() dist {
	n := g.nd20()
	counts := make([]*big.Int, 20)
	for i := range counts {
		counts[i] = new(big.Int)
	}
	faces := make([]int, n)
	var rec func(i int)
	rec = func(i int) {
		if i == n {
			v := faces[g.appliedD20(faces)]
			counts[v-1].Add(counts[v-1], bigOne)
			return
		}
		for f := 1; f <= 20; f++ {
			faces[i] = f
			rec(i + 1)
		}
	}
	rec(0)
	den := big.NewInt(1)
	for i := 0; i < n; i++ {
		den.Mul(den, big.NewInt(20))
	}
	return dist{lo: 1, c: counts, den: den}
}

func (g *d20tnGame) odds() (*Odds, error) {
	d := g.appliedDist()
	if g.skill != 0 {
		d = addUniform(d, int(g.skill))
	}
	if g.domain != 0 {
		d = addUniform(d, int(g.domain))
	}
	pass := d.prob(func(t int) bool { return t >= g.tn })
	return &Odds{
		Outcomes: OutcomeOdds{{"pass", pass}, {"fail", new(big.Rat).Sub(big.NewRat(1, 1), pass)}},
		Totals:   d.totals(), Mean: d.mean(),
	}, nil
}

// words names the dice: "2d20 keep highest + d6 + d4".
func (g *d20tnGame) words() string {
	t := newText("")
	switch {
	case g.adv && g.dis:
		t.s("3d20 median")
	case g.adv:
		t.s("2d20 keep highest")
	case g.dis:
		t.s("2d20 keep lowest")
	default:
		t.s("d20")
	}
	if g.skill != 0 {
		t.s(" + ").s(g.skill.String())
	}
	if g.domain != 0 {
		t.s(" + ").s(g.domain.String())
	}
	return t.String()
}
