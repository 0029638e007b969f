package rules

import "math/big"

// dsdnGame is a DSDN (seed 000) check, attack, evasion or damage roll.
type dsdnGame struct {
	roll       string
	modifier   int
	adv, dis   int
	detriment  bool
	target     int
	expr       *Expr
	damageType string
	apply      *dsdnApply
	nd20       int
	keepHigh   bool
	dicePlan   []Die
}

type dsdnApply struct {
	kind                string
	hp, maxHP, ap, temp int
	hasMax              bool
}

const maxAbs = 1_000_000

func decodeDSDN(f *fields) (game, error) {
	g := &dsdnGame{}
	var err error
	if g.roll, err = f.enumField("roll", "check", "attack", "evasion", "damage"); err != nil {
		return nil, err
	}
	if g.modifier, err = f.intField("modifier", 0, -maxAbs, maxAbs); err != nil {
		return nil, err
	}
	if g.roll == "damage" {
		for _, k := range []string{"advantage", "disadvantage", "detriment", "target"} {
			if f.has(k) {
				return nil, badf(k, "%s does not apply to a damage roll", k)
			}
		}
		if g.expr, err = f.exprField("expr", true); err != nil {
			return nil, err
		}
		if g.damageType, err = f.strField("damage_type", "physical", 32); err != nil {
			return nil, err
		}
		if g.damageType == "" {
			return nil, badf("damage_type", "damage_type must not be empty (physical, or any other type such as radiation)")
		}
		if v, ok := f.take("apply"); ok {
			if g.apply, err = decodeApply(v); err != nil {
				return nil, err
			}
		}
		g.dicePlan = g.expr.plan()
		return g, nil
	}
	for _, k := range []string{"expr", "damage_type", "apply"} {
		if f.has(k) {
			return nil, badf(k, "%s is only for roll damage", k)
		}
	}
	if g.adv, err = f.intField("advantage", 0, 0, 100); err != nil {
		return nil, err
	}
	if g.dis, err = f.intField("disadvantage", 0, 0, 100); err != nil {
		return nil, err
	}
	if g.detriment, err = f.boolField("detriment", false); err != nil {
		return nil, err
	}
	if g.target, err = f.reqInt("target", -maxAbs, maxAbs); err != nil {
		return nil, err
	}
	switch {
	case g.detriment:
		g.nd20, g.keepHigh = 4, false
	case g.adv > 0 && g.dis > 0:
		g.nd20 = 1
	case g.adv > 0:
		g.nd20, g.keepHigh = 2, true
	case g.dis > 0:
		g.nd20 = 2
	default:
		g.nd20 = 1
	}
	g.dicePlan = make([]Die, g.nd20)
	for i := range g.dicePlan {
		g.dicePlan[i] = D20
	}
	return g, nil
}

func decodeApply(v []byte) (*dsdnApply, error) {
	if len(v) == 0 || v[0] != '{' {
		return nil, badf("apply", "apply must be an object {kind, hp, max_hp, ap, temp_hp}, got %s", kindOf(v))
	}
	f, err := readObject(v)
	if err != nil {
		e := err.(*Error)
		e.Field = "apply." + e.Field
		return nil, e
	}
	f.system = "dsdn (apply)"
	a := &dsdnApply{}
	wrap := func(err error) error {
		if e, ok := err.(*Error); ok {
			e.Field = "apply." + e.Field
			e.Message = "apply." + e.Message
		}
		return err
	}
	if a.kind, err = f.enumField("kind", "creature", "machine"); err != nil {
		return nil, wrap(err)
	}
	a.hasMax = f.has("max_hp")
	if a.maxHP, err = f.intField("max_hp", 0, 1, maxAbs); err != nil {
		return nil, wrap(err)
	}
	if a.kind == "machine" && !a.hasMax {
		return nil, wrap(badf("max_hp", "max_hp is required for a machine (it sets where it is destroyed)"))
	}
	lo := 0
	if a.kind == "machine" {
		lo = -maxAbs
	}
	if a.hp, err = f.reqInt("hp", lo, maxAbs); err != nil {
		return nil, wrap(err)
	}
	if a.hasMax && a.hp > a.maxHP {
		return nil, wrap(badf("hp", "hp must be at most max_hp (%d), got %d", a.maxHP, a.hp))
	}
	if a.ap, err = f.intField("ap", 0, 0, maxAbs); err != nil {
		return nil, wrap(err)
	}
	if a.temp, err = f.intField("temp_hp", 0, 0, maxAbs); err != nil {
		return nil, wrap(err)
	}
	if err := f.unused(); err != nil {
		return nil, wrap(err)
	}
	return a, nil
}

func (g *dsdnGame) plan() Plan {
	return Plan{System: "dsdn", Dice: g.dicePlan, Text: dropText(g.dicePlan)}
}

func (g *dsdnGame) need(faces []int) []Die { return remaining(g.dicePlan, len(faces)) }

// d20Words names how the d20s are read.
func (g *dsdnGame) d20Words() string {
	switch {
	case g.nd20 == 1:
		return "1d20"
	case g.detriment:
		return "4d20 keep lowest (detriment)"
	case g.keepHigh:
		return "2d20 keep highest"
	}
	return "2d20 keep lowest"
}

func (g *dsdnGame) resolve(faces []int, label string) (Outcome, error) {
	if err := checkFaces(faces, g.dicePlan); err != nil {
		return Outcome{}, err
	}
	dice := make([]RolledDie, len(faces))
	if g.roll == "damage" {
		sum := g.expr.eval(faces, dice) + g.modifier
		total := max(sum, 0)
		t := newText(label).s(oneLine(g.damageType)).s(" damage ").s(g.expr.src).s(" → ").faces(dice).signed(g.modifier).s(" = ").i(total)
		o := Outcome{Dice: dice, Total: total, Outcome: "rolled"}
		if g.apply != nil {
			d := g.apply.take(total, g.damageType == "physical")
			o.Details.DSDN = d
			t.s("; ").s(g.apply.kind).s(" HP ").i(d.HP).s(", AP ").i(d.AP).s(", temp HP ").i(d.TempHP).s(": ").s(d.Status)
		}
		o.Text = t.String()
		return o, nil
	}
	for i, f := range faces {
		dice[i] = RolledDie{Die: D20, Face: f}
	}
	if g.nd20 == 1 {
		dice[0].Kept = true
	} else {
		markKept(faces, dice, 1, g.keepHigh)
	}
	kept := 0
	for _, d := range dice {
		if d.Kept {
			kept = d.Face
		}
	}
	total := kept + g.modifier
	var outcome string
	switch g.roll {
	case "attack":
		outcome = "miss"
		if total > g.target {
			outcome = "hit"
		}
	default:
		outcome = "failure"
		if total >= g.target {
			outcome = "success"
		}
	}
	t := newText(label).s(g.roll).s(" ").s(g.d20Words()).s(" → ").faces(dice).signed(g.modifier).s(" = ").i(total).s(" vs ").i(g.target).outcome(outcome)
	return Outcome{Dice: dice, Total: total, Target: intp(g.target), Outcome: outcome, Text: t.String()}, nil
}

// take applies damage: physical damage to armor first, then temporary HP,
// then HP; other types skip armor.
func (a *dsdnApply) take(dmg int, physical bool) *DSDNDetails {
	ap, temp, hp := a.ap, a.temp, a.hp
	if physical {
		x := min(ap, dmg)
		ap -= x
		dmg -= x
	}
	x := min(temp, dmg)
	temp -= x
	dmg -= x
	hp -= dmg
	status := "ok"
	if a.kind == "creature" {
		if hp <= 0 {
			hp, status = 0, "down"
		}
	} else {
		switch {
		case hp <= -a.maxHP:
			status = "destroyed"
		case hp <= 0:
			status = "offline"
		}
	}
	return &DSDNDetails{HP: hp, AP: ap, TempHP: temp, Status: status}
}

func (g *dsdnGame) odds() (*Odds, error) {
	if g.roll == "damage" {
		d, err := g.expr.dist()
		if err != nil {
			return nil, badf("expr", "%v", err)
		}
		d = d.shift(g.modifier).mapTotals(func(t int) int { return max(t, 0) })
		return &Odds{Outcomes: OutcomeOdds{{"rolled", big.NewRat(1, 1)}}, Totals: d.totals(), Mean: d.mean()}, nil
	}
	var d dist
	switch {
	case g.nd20 == 1:
		d = uniform(20)
	case g.keepHigh:
		d = keepHighest(g.nd20, 1, 20)
	default:
		d = keepLowest(g.nd20, 1, 20)
	}
	d = d.shift(g.modifier)
	var oc OutcomeOdds
	if g.roll == "attack" {
		hit := d.prob(func(t int) bool { return t > g.target })
		oc = OutcomeOdds{{"hit", hit}, {"miss", new(big.Rat).Sub(big.NewRat(1, 1), hit)}}
	} else {
		ok := d.prob(func(t int) bool { return t >= g.target })
		oc = OutcomeOdds{{"success", ok}, {"failure", new(big.Rat).Sub(big.NewRat(1, 1), ok)}}
	}
	return &Odds{Outcomes: oc, Totals: d.totals(), Mean: d.mean()}, nil
}

// HPAtLevel is a DSDN creature's HP at a level: the rolled HP dice (one per
// level, of the race's die) plus Constitution × level.
func HPAtLevel(level, constitution int, hpDice []int) int {
	sum := 0
	for _, f := range hpDice {
		sum += f
	}
	return sum + constitution*level
}

// MechSpeed is a mech's speed in hexes per turn: 25 (35 if gargantuan)
// plus 5 × Engines, never below 0.
func MechSpeed(engines int, gargantuan bool) int {
	base := 25
	if gargantuan {
		base = 35
	}
	return max(base+5*engines, 0)
}

// SpaceSpeed is a mech's speed in space: Engines × Reactor × 10,000, never
// below 0, and per second that ÷ 10 (rounded down).
func SpaceSpeed(engines, reactor int) (perTurn, perSecond int) {
	s := max(engines*reactor*10000, 0)
	return s, s / 10
}

// DifficultTerrain halves a movement speed, rounding down.
func DifficultTerrain(speed int) int { return speed / 2 }

// HexesToFeet converts hexes to feet (1 hex = 15 ft).
func HexesToFeet(hexes int) int { return hexes * 15 }

// RoundSeconds is the game length of a DSDN round.
const RoundSeconds = 10
