package rules

import (
	"fmt"
	"strconv"
	"strings"
)

// d4Game is a D4 Tactical (seed 002) test: RAD + Fortune − Calamity d4s,
// + 2×Boon − 2×Bane + modifier, against a DT.
type d4Game struct {
	rad                           int
	fortune, calamity, boon, bane int
	modifier                      int
	test                          string
	dt                            int
	effect                        int
	hasEffect                     bool
	magic                         int
	n                             int
	dicePlan                      []Die
}

func decodeD4(f *fields) (game, error) {
	g := &d4Game{}
	var err error
	switch {
	case f.has("rad") && f.has("abilities"):
		return nil, badf("abilities", "give rad or abilities, not both")
	case f.has("rad"):
		if g.rad, err = f.intField("rad", 0, 0, MaxDice); err != nil {
			return nil, err
		}
	case f.has("abilities"):
		ab, err := f.intList("abilities", 0, 1000, 16, false)
		if err != nil {
			return nil, err
		}
		if len(ab) == 0 {
			return nil, badf("abilities", "abilities must list at least one ability score")
		}
		g.rad = RADFromAbilities(ab)
	default:
		return nil, badf("rad", "rad (an integer ≥ 0) or abilities (a list of ability scores) is required")
	}
	for _, p := range []struct {
		name string
		v    *int
	}{{"fortune", &g.fortune}, {"calamity", &g.calamity}, {"boon", &g.boon}, {"bane", &g.bane}} {
		if *p.v, err = f.intField(p.name, 0, 0, 5); err != nil {
			return nil, err
		}
	}
	if g.modifier, err = f.intField("modifier", 0, -maxAbs, maxAbs); err != nil {
		return nil, err
	}
	if g.test, err = f.enumField("test", "fdt", "cdt", "attack", "learn"); err != nil {
		return nil, err
	}
	if g.test == "cdt" {
		g.dt, err = f.reqInt("dt", 1, len(cdtTable))
	} else {
		g.dt, err = f.reqInt("dt", -maxAbs, maxAbs)
	}
	if err != nil {
		return nil, err
	}
	if f.has("effect") && g.test != "cdt" {
		return nil, badf("effect", "effect is only for test cdt")
	}
	g.hasEffect = f.has("effect")
	if g.effect, err = f.intField("effect", 0, 0, maxAbs); err != nil {
		return nil, err
	}
	if f.has("magic_damage") && g.test != "attack" {
		return nil, badf("magic_damage", "magic_damage is only for test attack")
	}
	if g.magic, err = f.intField("magic_damage", 0, 0, maxAbs); err != nil {
		return nil, err
	}
	g.n = max(g.rad+g.fortune-g.calamity, 0)
	if g.n > MaxDice {
		return nil, badf("rad", "rad + fortune − calamity is %d dice; the limit is %d", g.n, MaxDice)
	}
	g.dicePlan = make([]Die, g.n)
	for i := range g.dicePlan {
		g.dicePlan[i] = D4
	}
	return g, nil
}

// RADFromAbilities is the mean of the ability scores, rounded down.
func RADFromAbilities(scores []int) int {
	if len(scores) == 0 {
		return 0
	}
	s := 0
	for _, v := range scores {
		s += v
	}
	return s / len(scores)
}

func (g *d4Game) plan() Plan {
	return Plan{System: "d4tactical", Dice: g.dicePlan, Text: dropText(g.dicePlan)}
}

func (g *d4Game) need(faces []int) []Die { return remaining(g.dicePlan, len(faces)) }

func (g *d4Game) flat() int { return 2*g.boon - 2*g.bane + g.modifier }

// outcomeOf maps a total to the test's outcome.
func (g *d4Game) outcomeOf(total int) string {
	switch g.test {
	case "fdt":
		if total >= g.dt {
			return "pass"
		}
		return "fail"
	case "learn":
		if total > g.dt {
			return "pass"
		}
		return "fail"
	case "attack":
		if total >= g.dt {
			return "hit"
		}
		return "miss"
	}
	return CDT(g.dt, total).Outcome
}

func (g *d4Game) resolve(faces []int, label string) (Outcome, error) {
	if err := checkFaces(faces, g.dicePlan); err != nil {
		return Outcome{}, err
	}
	dice := make([]RolledDie, len(faces))
	total := g.flat()
	for i, f := range faces {
		dice[i] = RolledDie{Die: D4, Face: f, Kept: true}
		total += f
	}
	outcome := g.outcomeOf(total)
	det := &D4Details{DiceCount: g.n, RAD: g.rad}
	t := newText(label).s(g.test).s(" ").i(g.n).s("d4")
	t.signed(g.flat()).s(" → ")
	if len(dice) == 0 {
		t.s("no dice")
	} else {
		t.faces(dice)
	}
	t.s(" = ").i(total).s(" vs DT ").i(g.dt).outcome(outcome)
	switch g.test {
	case "cdt":
		c := CDT(g.dt, total)
		det.Fraction = c.Fraction
		t.s(" (").s(c.Fraction).s(" effect)")
		if g.hasEffect {
			det.AppliedEffect = intp(ApplyFraction(g.effect, c.Num, c.Den))
			t.s(", effect ").i(*det.AppliedEffect)
		}
	case "attack":
		dmg := 0
		if outcome == "hit" {
			dmg = max(total-g.dt+g.magic, 1)
			t.s(", damage ").i(dmg)
		}
		det.Damage = intp(dmg)
	}
	return Outcome{Dice: dice, Total: total, Target: intp(g.dt), Outcome: outcome, Text: t.String(), Details: Details{D4: det}}, nil
}

func (g *d4Game) odds() (*Odds, error) {
	d := sumDice(g.n, 4).shift(g.flat())
	var names []string
	switch g.test {
	case "fdt", "learn":
		names = []string{"pass", "fail"}
	case "attack":
		names = []string{"hit", "miss"}
	default:
		names = []string{"perfect", "success", "minor", "failed"}
	}
	oc := make(OutcomeOdds, len(names))
	for i, n := range names {
		n := n
		oc[i] = Prob{n, d.prob(func(t int) bool { return g.outcomeOf(t) == n })}
	}
	return &Odds{Outcomes: oc, Totals: d.totals(), Mean: d.mean()}, nil
}

// CDTResult is one cell of the CDT table.
type CDTResult struct {
	Outcome  string // perfect, success, minor, failed
	Fraction string // 0, 1/4, 1/2, 1
	Num, Den int    // the fraction as numbers
}

var cdtCols = [4]CDTResult{
	{"perfect", "0", 0, 1},
	{"success", "1/4", 1, 4},
	{"minor", "1/2", 1, 2},
	{"failed", "1", 1, 1},
}

// cdtRaw is the CDT table as printed in seed 002 (opposition, perfect,
// success, minor, failed), row 23's misprint included; parseCDT applies the
// ruling.
var cdtRaw = [30][5]string{
	{"1", "2 +", "1", "N/A", "N/A"},
	{"2", "3+", "2", "1", "N/A"},
	{"3", "4+", "3", "2", "1"},
	{"4", "5+", "4", "3-2", "1"},
	{"5", "6+", "5-4", "3-2", "1"},
	{"6", "7+", "6-5", "4-3", "2-1"},
	{"7", "8+", "7-6", "5-3", "2-1"},
	{"8", "9+", "8-6", "5-3", "2-1"},
	{"9", "10+", "9-7", "6-4", "3-1"},
	{"10", "11+", "10-8", "7-4", "3-1"},
	{"11", "12+", "11-8", "7-4", "3-1"},
	{"12", "13+", "12-9", "8-5", "4-1"},
	{"13", "14+", "13-10", "9-5", "4-1"},
	{"14", "15+", "14-10", "9-5", "4-1"},
	{"15", "16+", "15-11", "10-6", "5-1"},
	{"16", "17+", "16-12", "11-6", "5-1"},
	{"17", "18+", "17-12", "11-6", "5-1"},
	{"18", "19+", "18-13", "12-7", "6-1"},
	{"19", "20+", "19-14", "13-7", "6-1"},
	{"20", "21+", "20-14", "13-7", "6-1"},
	{"21", "22+", "21-15", "14-8", "7-1"},
	{"22", "23+", "22-16", "15-8", "7-1"},
	{"23", "24+", "23-9", "15-8", "7-1"},
	{"24", "25+", "24-17", "16-9", "8-1"},
	{"25", "26+", "25-18", "17-9", "8-1"},
	{"26", "27+", "26-19", "18-9", "8-1"},
	{"27", "28+", "27-19", "18-10", "9-1"},
	{"28", "29+", "28-20", "19-10", "9-1"},
	{"29", "30+", "29-20", "19-10", "9-1"},
	{"30", "31+", "30-21", "20-11", "10-1"},
}

// cdtRow holds, per column, the lowest total of that column (perfect,
// success, minor, failed); a column absent from a row has lo > its hi.
type cdtRow struct{ lo [4]int }

var cdtTable = parseCDT()

func parseCDT() [30]cdtRow {
	var t [30]cdtRow
	for i, r := range cdtRaw {
		if i == 22 {
			// Ruling: row 23's Success is printed "23-9"; it is 23-16.
			r[2] = "23-16"
		}
		var row cdtRow
		for c := 0; c < 4; c++ {
			s := strings.ReplaceAll(r[c+1], " ", "")
			switch {
			case s == "N/A":
				row.lo[c] = 1 << 30
			case strings.HasSuffix(s, "+"):
				row.lo[c] = atoi(strings.TrimSuffix(s, "+"))
			case strings.Contains(s, "-"):
				parts := strings.Split(s, "-")
				row.lo[c] = atoi(parts[1])
			default:
				row.lo[c] = atoi(s)
			}
		}
		t[i] = row
	}
	return t
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		panic(fmt.Sprintf("rules: CDT table cell %q", s))
	}
	return n
}

// CDT looks up the contested difficulty table: the opposition score (1–30)
// picks the row, the total the column. Above every range is a Perfect
// success; 0 or less is Failed.
func CDT(opposition, total int) CDTResult {
	row := cdtTable[opposition-1]
	for c := 0; c < 3; c++ {
		if total >= row.lo[c] {
			return cdtCols[c]
		}
	}
	return cdtCols[3]
}

// ApplyFraction is effect × num/den rounded down, but at least 1 when both
// the fraction and the effect are above 0.
func ApplyFraction(effect, num, den int) int {
	v := effect * num / den
	if v < 1 && num > 0 && effect > 0 {
		v = 1
	}
	return v
}

// CombineMultipliers combines multipliers on an abstract value: each extra
// multiple adds one less than its value (×2 and ×2 make ×3). With none it
// is 1.
func CombineMultipliers(ms ...int) int {
	if len(ms) == 0 {
		return 1
	}
	m := 1
	for _, x := range ms {
		m += x - 1
	}
	return m
}
