package rules

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"testing"
)

// roll parses js and resolves faces, failing the test on any error.
func roll(t *testing.T, js string, faces ...int) Outcome {
	t.Helper()
	r, err := ParseRequest([]byte(js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	o, err := r.Resolve(faces)
	if err != nil {
		t.Fatalf("%s %v: %v", js, faces, err)
	}
	return o
}

func planOf(t *testing.T, js string) []Die {
	t.Helper()
	r, err := ParseRequest([]byte(js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return r.Plan().Dice
}

func dieNames(ds []Die) string { return dieList(ds) }

// --- dsdn (seed 000) ---

func TestDSDNAdvantageDisadvantageDetriment(t *testing.T) {
	cases := []struct {
		js   string
		dice string
	}{
		{`{"system":"dsdn","target":10}`, "d20"},
		{`{"system":"dsdn","target":10,"advantage":1}`, "d20, d20"},
		{`{"system":"dsdn","target":10,"advantage":2}`, "d20, d20"}, // double advantage is still 2d20
		{`{"system":"dsdn","target":10,"disadvantage":3}`, "d20, d20"},
		{`{"system":"dsdn","target":10,"advantage":2,"disadvantage":1}`, "d20"}, // they cancel
		{`{"system":"dsdn","target":10,"detriment":true}`, "d20, d20, d20, d20"},
		{`{"system":"dsdn","target":10,"detriment":true,"advantage":1}`, "d20, d20, d20, d20"}, // not cancelled
	}
	for _, c := range cases {
		if got := dieNames(planOf(t, c.js)); got != c.dice {
			t.Errorf("%s: plan %s, want %s", c.js, got, c.dice)
		}
	}
	if o := roll(t, `{"system":"dsdn","target":10,"advantage":1}`, 4, 17); o.Total != 17 || !o.Dice[1].Kept || o.Dice[0].Kept {
		t.Errorf("advantage keeps the highest: %+v", o)
	}
	if o := roll(t, `{"system":"dsdn","target":10,"disadvantage":1}`, 4, 17); o.Total != 4 {
		t.Errorf("disadvantage keeps the lowest: total %d", o.Total)
	}
	if o := roll(t, `{"system":"dsdn","target":10,"detriment":true,"modifier":2}`, 9, 3, 15, 12); o.Total != 5 || o.Outcome != "failure" {
		t.Errorf("detriment keeps the lowest of 4: %+v", o)
	}
}

func TestDSDNTiesGoToTheDefender(t *testing.T) {
	// Seed: an attack scoring 16 is evaded by meeting (16) or beating (17+).
	for _, c := range []struct {
		js      string
		face    int
		outcome string
	}{
		{`{"system":"dsdn","roll":"evasion","target":16}`, 16, "success"},
		{`{"system":"dsdn","roll":"evasion","target":16}`, 17, "success"},
		{`{"system":"dsdn","roll":"evasion","target":16}`, 15, "failure"},
		{`{"system":"dsdn","roll":"check","target":12,"modifier":2}`, 10, "success"},
		{`{"system":"dsdn","roll":"check","target":12,"modifier":2}`, 9, "failure"},
		{`{"system":"dsdn","roll":"attack","target":15}`, 15, "miss"}, // tie: the defender wins
		{`{"system":"dsdn","roll":"attack","target":15}`, 16, "hit"},
	} {
		if o := roll(t, c.js, c.face); o.Outcome != c.outcome {
			t.Errorf("%s face %d: %s, want %s", c.js, c.face, o.Outcome, c.outcome)
		}
	}
}

func TestDSDNDamageWalkThroughs(t *testing.T) {
	dmg := func(total int, typ, apply string) DSDNDetails {
		t.Helper()
		js := fmt.Sprintf(`{"system":"dsdn","roll":"damage","expr":"1d4+%d","damage_type":%q,"apply":%s}`, total-1, typ, apply)
		o := roll(t, js, 1)
		if o.Total != total {
			t.Fatalf("total %d, want %d", o.Total, total)
		}
		return *o.Details.DSDN
	}
	cases := []struct {
		name  string
		total int
		typ   string
		apply string
		want  DSDNDetails
	}{
		// "10 armor points and 50 HP, dealt 15": armor absorbs 10, HP 45.
		{"armor then HP", 15, "physical", `{"kind":"creature","hp":50,"ap":10}`, DSDNDetails{HP: 45, AP: 0, TempHP: 0, Status: "ok"}},
		// "20 temporary HP, 15 radiation": 5 temporary HP left, no damage.
		{"radiation to temp HP", 15, "radiation", `{"kind":"creature","hp":50,"ap":10,"temp_hp":20}`, DSDNDetails{HP: 50, AP: 10, TempHP: 5, Status: "ok"}},
		// "20AP and physical damage of 10": AP 10.
		{"armor only", 10, "physical", `{"kind":"creature","hp":30,"ap":20}`, DSDNDetails{HP: 30, AP: 10, Status: "ok"}},
		// "10AP, physical 15, 10 temporary HP": AP 0, temp 5, HP untouched.
		{"armor then temp", 15, "physical", `{"kind":"creature","hp":30,"ap":10,"temp_hp":10}`, DSDNDetails{HP: 30, AP: 0, TempHP: 5, Status: "ok"}},
		// "...then 10 radiation": the 5 temp HP go, 5 reach HP.
		{"then radiation", 10, "radiation", `{"kind":"creature","hp":30,"ap":0,"temp_hp":5}`, DSDNDetails{HP: 25, AP: 0, TempHP: 0, Status: "ok"}},
		{"creature stops at 0", 40, "physical", `{"kind":"creature","hp":10}`, DSDNDetails{HP: 0, Status: "down"}},
		{"machine to 0 is offline", 100, "physical", `{"kind":"machine","hp":100,"max_hp":100}`, DSDNDetails{HP: 0, Status: "offline"}},
		{"machine at -99 is offline", 199, "physical", `{"kind":"machine","hp":100,"max_hp":100}`, DSDNDetails{HP: -99, Status: "offline"}},
		{"machine at -100 is destroyed", 200, "physical", `{"kind":"machine","hp":100,"max_hp":100}`, DSDNDetails{HP: -100, Status: "destroyed"}},
		{"poison skips armor", 6, "poison", `{"kind":"creature","hp":20,"ap":10}`, DSDNDetails{HP: 14, AP: 10, Status: "ok"}},
	}
	for _, c := range cases {
		if got := dmg(c.total, c.typ, c.apply); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestDSDNDamageNeverNegative(t *testing.T) {
	o := roll(t, `{"system":"dsdn","roll":"damage","expr":"1d4-10"}`, 3)
	if o.Total != 0 || o.Target != nil || o.Outcome != "rolled" || o.Odds != nil {
		t.Fatalf("damage 3-10: %+v", o)
	}
}

func TestDSDNLibrary(t *testing.T) {
	// Isyan, level 5, Constitution 3: 5d12 (38) + 15 = 53.
	if got := HPAtLevel(5, 3, []int{10, 8, 7, 6, 7}); got != 53 {
		t.Errorf("HP = %d, want 53", got)
	}
	if got := MechSpeed(2, false); got != 35 {
		t.Errorf("speed = %d, want 25 + 10", got)
	}
	if got := MechSpeed(1, true); got != 40 {
		t.Errorf("gargantuan speed = %d, want 35 + 5", got)
	}
	if got := MechSpeed(-10, false); got != 0 {
		t.Errorf("speed = %d, never negative", got)
	}
	if s, ps := SpaceSpeed(1, 0); s != 0 || ps != 0 {
		t.Errorf("Engines 1 × Reactor 0 = %d, %d, want 0", s, ps)
	}
	if s, ps := SpaceSpeed(2, 3); s != 60000 || ps != 6000 {
		t.Errorf("space speed = %d, %d/s", s, ps)
	}
	if s, _ := SpaceSpeed(-2, 3); s != 0 {
		t.Errorf("negative space speed %d", s)
	}
	if got := DifficultTerrain(40); got != 20 {
		t.Errorf("difficult terrain 40 → %d", got)
	}
	if got := DifficultTerrain(25); got != 12 {
		t.Errorf("difficult terrain 25 → %d (round down)", got)
	}
	if HexesToFeet(2) != 30 || RoundSeconds != 10 {
		t.Error("1 hex = 15 ft, a round is 10 s")
	}
}

// --- d20tn (seed 001) ---

func TestD20TNTargetNumber(t *testing.T) {
	// "if you have 3 trauma, you will have a TN of 18"
	o := roll(t, `{"system":"d20tn","trauma":3}`, 18)
	if *o.Target != 18 || o.Details.D20TN.TN != 18 || o.Outcome != "pass" {
		t.Fatalf("TN: %+v", o)
	}
	// "if your TN is 15 and your applicable d20 is a 17, you succeed"
	if o := roll(t, `{"system":"d20tn"}`, 17); o.Outcome != "pass" {
		t.Errorf("17 vs 15: %s", o.Outcome)
	}
	if o := roll(t, `{"system":"d20tn"}`, 14); o.Outcome != "fail" {
		t.Errorf("14 vs 15: %s", o.Outcome)
	}
}

func TestD20TNDice(t *testing.T) {
	for _, c := range []struct{ js, dice string }{
		{`{"system":"d20tn","skill_rank":1}`, "d20, d4"},
		{`{"system":"d20tn","skill_rank":5,"domains":5}`, "d20, d12, d12"},
		{`{"system":"d20tn","skill_rank":3,"domains":2,"advantage":true,"disadvantage":true}`, "d20, d20, d20, d8, d6"},
		{`{"system":"d20tn","skill_rank":2,"item":"skill"}`, "d20, d8"},
		{`{"system":"d20tn","domains":4,"item":"domain"}`, "d20, d12"},
		{`{"system":"d20tn","skill_rank":1,"item":"effect"}`, "d20, d4"},
	} {
		if got := dieNames(planOf(t, c.js)); got != c.dice {
			t.Errorf("%s: %s, want %s", c.js, got, c.dice)
		}
	}
	// advantage: highest; disadvantage: lowest; both: the median
	if o := roll(t, `{"system":"d20tn","advantage":true}`, 5, 12); o.Total != 12 {
		t.Errorf("advantage total %d", o.Total)
	}
	if o := roll(t, `{"system":"d20tn","disadvantage":true}`, 5, 12); o.Total != 5 {
		t.Errorf("disadvantage total %d", o.Total)
	}
	if o := roll(t, `{"system":"d20tn","advantage":true,"disadvantage":true,"skill_rank":1}`, 18, 3, 9, 2); o.Total != 11 || !o.Dice[2].Kept || o.Dice[0].Kept {
		t.Errorf("median: %+v", o)
	}
	// up to 5 dice at once
	if n := len(planOf(t, `{"system":"d20tn","skill_rank":1,"domains":1,"advantage":true,"disadvantage":true}`)); n != 5 {
		t.Errorf("%d dice, the text says up to 5", n)
	}
}

func TestD20TNBonusSetbackXP(t *testing.T) {
	js := `{"system":"d20tn","skill_rank":1,"domains":1}`
	cases := []struct {
		faces          []int
		bonus, setback bool
		xp             int
	}{
		{[]int{10, 2, 3}, false, false, 0},
		{[]int{20, 2, 3}, true, false, 0},
		{[]int{10, 4, 3}, true, false, 0}, // 4 on the d4
		{[]int{10, 1, 3}, false, true, 1},
		{[]int{20, 4, 1}, true, true, 1}, // both on one roll
		{[]int{1, 1, 1}, false, true, 1}, // several do not stack
	}
	for _, c := range cases {
		d := roll(t, js, c.faces...).Details.D20TN
		if d.Bonus != c.bonus || d.Setback != c.setback || d.XP != c.xp || d.NarratorXP != c.xp {
			t.Errorf("%v: %+v", c.faces, d)
		}
	}
	// the extra d20 of advantage counts too
	if d := roll(t, `{"system":"d20tn","advantage":true}`, 20, 5).Details.D20TN; !d.Bonus {
		t.Error("a 20 on the advantage d20 is a bonus")
	}
	if d := roll(t, `{"system":"d20tn","advantage":true}`, 1, 5).Details.D20TN; !d.Setback {
		t.Error("a 1 on the dropped d20 is a setback")
	}
	if d := roll(t, `{"system":"d20tn","skill_rank":1,"item":"effect"}`, 5, 2).Details.D20TN; d.Item != "effect" {
		t.Error("an item on the effect is reported")
	}
}

// --- d4tactical (seed 002) ---

func TestNotationExample(t *testing.T) {
	// "3d4+4" ... "resulting in a number between 7 and 16"
	r, _ := ParseRequest([]byte(`{"system":"dice","expr":"3d4+4"}`))
	od, _ := r.Odds()
	if od.Totals[0].Total != 7 || od.Totals[len(od.Totals)-1].Total != 16 {
		t.Fatalf("3d4+4 spans %d-%d", od.Totals[0].Total, od.Totals[len(od.Totals)-1].Total)
	}
	if o := roll(t, `{"system":"dice","expr":"3d4+4"}`, 1, 2, 3); o.Total != 10 {
		t.Errorf("total %d", o.Total)
	}
}

// TestCDTTable pins every row of the CDT table: each total from 0 to 32
// against the printed ranges (row 23 as ruled).
func TestCDTTable(t *testing.T) {
	// per row: lowest total of Perfect, Success, Minor (0 = none), Failed max
	want := [30][3]int{
		{2, 1, 0}, {3, 2, 1}, {4, 3, 2}, {5, 4, 2}, {6, 4, 2}, {7, 5, 3}, {8, 6, 3}, {9, 6, 3}, {10, 7, 4}, {11, 8, 4},
		{12, 8, 4}, {13, 9, 5}, {14, 10, 5}, {15, 10, 5}, {16, 11, 6}, {17, 12, 6}, {18, 12, 6}, {19, 13, 7}, {20, 14, 7}, {21, 14, 7},
		{22, 15, 8}, {23, 16, 8}, {24, 16, 8}, {25, 17, 9}, {26, 18, 9}, {27, 19, 9}, {28, 19, 10}, {29, 20, 10}, {30, 20, 10}, {31, 21, 11},
	}
	for row := 1; row <= 30; row++ {
		w := want[row-1]
		if w[0] != row+1 {
			t.Fatalf("row %d: perfect from %d", row, w[0])
		}
		for total := -2; total <= 32; total++ {
			exp := "failed"
			switch {
			case total >= w[0]:
				exp = "perfect"
			case total >= w[1]:
				exp = "success"
			case w[2] > 0 && total >= w[2]:
				exp = "minor"
			}
			if got := CDT(row, total).Outcome; got != exp {
				t.Errorf("row %d total %d: %s, want %s", row, total, got, exp)
			}
		}
	}
	// The ruling on row 23: Success 23-16, Minor 15-8.
	if CDT(23, 16).Outcome != "success" || CDT(23, 15).Outcome != "minor" || CDT(23, 9).Outcome != "minor" {
		t.Error("row 23 not as ruled")
	}
}

func TestCDTExamples(t *testing.T) {
	cdt := func(opp, total, effect int) (string, int) {
		js := fmt.Sprintf(`{"system":"d4tactical","rad":0,"modifier":%d,"test":"cdt","dt":%d,"effect":%d}`, total, opp, effect)
		o := roll(t, js)
		return o.Outcome, *o.Details.D4.AppliedEffect
	}
	// Poison: potency 4, opposition 9; 3d4+0.
	for _, c := range []struct {
		roll    int
		outcome string
		damage  int
	}{{10, "perfect", 0}, {8, "success", 1}, {5, "minor", 2}, {3, "failed", 4}} {
		if o, d := cdt(9, c.roll, 4); o != c.outcome || d != c.damage {
			t.Errorf("poison roll %d: %s, %d damage; want %s, %d", c.roll, o, d, c.outcome, c.damage)
		}
	}
	// Vitality shock, opposition 12: the example calls 12 "no effect", the
	// table (which stands) makes it a Success (1/4).
	for _, c := range []struct {
		roll    int
		outcome string
	}{{12, "success"}, {9, "success"}, {5, "minor"}, {4, "failed"}} {
		if o, _ := cdt(12, c.roll, 8); o != c.outcome {
			t.Errorf("vitality roll %d: %s, want %s", c.roll, o, c.outcome)
		}
	}
	// Tightrope (agility 12 read as the opposition): 11 → 1/4, 6 → 1/2,
	// 4 → falls (failed), 20 → no items dropped (perfect).
	for _, c := range []struct {
		roll     int
		fraction string
	}{{11, "1/4"}, {6, "1/2"}, {4, "1"}, {20, "0"}} {
		o := roll(t, fmt.Sprintf(`{"system":"d4tactical","rad":0,"modifier":%d,"test":"cdt","dt":12}`, c.roll))
		if o.Details.D4.Fraction != c.fraction {
			t.Errorf("tightrope roll %d: fraction %s, want %s", c.roll, o.Details.D4.Fraction, c.fraction)
		}
	}
}

func TestD4TacticalDiceAndModifiers(t *testing.T) {
	// RAD + Fortune − Calamity d4s, never fewer than 0.
	if n := len(planOf(t, `{"system":"d4tactical","rad":3,"fortune":2,"calamity":1,"dt":5}`)); n != 4 {
		t.Errorf("3+2-1 = %d dice", n)
	}
	if n := len(planOf(t, `{"system":"d4tactical","rad":1,"calamity":3,"dt":5}`)); n != 0 {
		t.Errorf("1-3 = %d dice, want 0", n)
	}
	// Boon[X] adds 2X, Bane[X] subtracts 2X.
	o := roll(t, `{"system":"d4tactical","rad":2,"boon":3,"bane":1,"modifier":-1,"dt":8}`, 2, 3)
	if o.Total != 2+3+6-2-1 || o.Outcome != "pass" {
		t.Errorf("total %d, %s", o.Total, o.Outcome)
	}
	// RAD from abilities: climbing burdened (Brawn + Brawn + Agility) / 3, rounded down.
	if got := RADFromAbilities([]int{4, 4, 5}); got != 4 {
		t.Errorf("RAD (4+4+5)/3 = %d", got)
	}
	if n := len(planOf(t, `{"system":"d4tactical","abilities":[3,4],"dt":5}`)); n != 3 {
		t.Errorf("RAD (3+4)/2 = %d dice", n)
	}
	// FDT: equal passes. Learn: only above the DT.
	if o := roll(t, `{"system":"d4tactical","rad":1,"modifier":3,"test":"fdt","dt":5}`, 2); o.Outcome != "pass" {
		t.Error("FDT: equal to the DT passes")
	}
	if o := roll(t, `{"system":"d4tactical","rad":1,"modifier":3,"test":"learn","dt":5}`, 2); o.Outcome != "fail" {
		t.Error("learn: equal to the DT fails")
	}
	if o := roll(t, `{"system":"d4tactical","rad":1,"modifier":3,"test":"learn","dt":5}`, 3); o.Outcome != "pass" {
		t.Error("learn: above the DT passes")
	}
}

func TestD4TacticalAttack(t *testing.T) {
	// damage = total − DT + magic damage, at least 1 on a hit
	o := roll(t, `{"system":"d4tactical","rad":2,"test":"attack","dt":5,"magic_damage":2}`, 4, 3)
	if o.Outcome != "hit" || *o.Details.D4.Damage != 4 {
		t.Errorf("7 vs 5 +2 magic: %s %d", o.Outcome, *o.Details.D4.Damage)
	}
	o = roll(t, `{"system":"d4tactical","rad":2,"test":"attack","dt":5}`, 4, 1)
	if o.Outcome != "hit" || *o.Details.D4.Damage != 1 {
		t.Errorf("5 vs 5: %s %d (minimum 1)", o.Outcome, *o.Details.D4.Damage)
	}
	o = roll(t, `{"system":"d4tactical","rad":2,"test":"attack","dt":5,"magic_damage":9}`, 1, 1)
	if o.Outcome != "miss" || *o.Details.D4.Damage != 0 {
		t.Errorf("miss: %s %d", o.Outcome, *o.Details.D4.Damage)
	}
}

func TestFractionsAndMultipliers(t *testing.T) {
	for _, c := range []struct{ effect, num, den, want int }{
		{4, 1, 4, 1}, {4, 1, 2, 2}, {4, 1, 1, 4}, {4, 0, 1, 0},
		{3, 1, 4, 1}, // 0.75 rounds down to 0, minimum 1
		{7, 1, 2, 3}, // 3.5 rounds down
		{0, 1, 2, 0},
	} {
		if got := ApplyFraction(c.effect, c.num, c.den); got != c.want {
			t.Errorf("%d × %d/%d = %d, want %d", c.effect, c.num, c.den, got, c.want)
		}
	}
	if got := CombineMultipliers(2, 2); got != 3 {
		t.Errorf("×2 and ×2 = ×%d, want ×3", got)
	}
	if got := CombineMultipliers(3); got != 3 {
		t.Errorf("single ×3 = ×%d", got)
	}
	if got := CombineMultipliers(2, 3, 2); got != 5 {
		t.Errorf("×2 ×3 ×2 = ×%d, want ×5", got)
	}
}

// --- ydin (seed 003) ---

// TestYDINTaskTable pins "Numbers For Tasks" cell by cell (skill 4 is a d12,
// the table's d10 for attributes 2 and 6 being a typo).
func TestYDINTaskTable(t *testing.T) {
	dies := []Die{D6, D6, D8, D10, D12}
	mods := []int{0, 0, 2, 4, 6}
	for attr := 1; attr <= 6; attr++ {
		for lvl := 0; lvl <= 4; lvl++ {
			d, target := YDINTarget(attr, lvl)
			if d != dies[lvl] || target != attr+mods[lvl] {
				t.Errorf("attribute %d skill %d: %s / %d", attr, lvl, d, target)
			}
			js := fmt.Sprintf(`{"system":"ydin","attribute":%d,"skill":%d}`, attr, lvl)
			r, err := ParseRequest([]byte(js))
			if err != nil {
				t.Fatal(err)
			}
			want := 1
			if lvl == 0 {
				want = 2 // the untrained negative modifier
			}
			if p := r.Plan().Dice; len(p) != want || p[0] != dies[lvl] {
				t.Errorf("%s: plan %v", js, p)
			}
		}
	}
	// Spot checks against the printed table.
	for _, c := range []struct{ attr, lvl, target int }{{1, 4, 7}, {2, 4, 8}, {3, 2, 5}, {4, 4, 10}, {5, 3, 9}, {6, 4, 12}} {
		if d, tg := YDINTarget(c.attr, c.lvl); tg != c.target || (c.lvl == 4 && d != D12) {
			t.Errorf("attribute %d skill %d: %s %d", c.attr, c.lvl, d, tg)
		}
	}
}

func TestYDINRollUnder(t *testing.T) {
	js := `{"system":"ydin","attribute":4,"skill":2}` // d8, target 6
	for _, c := range []struct {
		faces   []int
		outcome string
	}{
		{[]int{1}, "critical_success"},
		{[]int{2}, "critical_success"}, // ≤ skill level
		{[]int{3}, "success"},
		{[]int{6}, "success"}, // "numbers 6 and lower are a success"
		{[]int{7}, "failure"},
		{[]int{8, 3}, "failure"},
		{[]int{8, 8}, "catastrophic_failure"},
	} {
		if o := roll(t, js, c.faces...); o.Outcome != c.outcome {
			t.Errorf("%v: %s, want %s", c.faces, o.Outcome, c.outcome)
		}
	}
	o := roll(t, js, 8, 8)
	if !o.Dice[1].Followup || o.Dice[1].Kept || o.Details.YDIN.Confirmed == nil || !*o.Details.YDIN.Confirmed {
		t.Errorf("confirmation die: %+v", o)
	}
	// the maximum is a failure whatever the target (attribute 6, skill 4: target 12 on a d12)
	if o := roll(t, `{"system":"ydin","attribute":6,"skill":4}`, 12, 5); o.Outcome != "failure" {
		t.Errorf("12 on a d12 vs 12: %s", o.Outcome)
	}
	// confirmation die asked for only on the maximum
	r, _ := ParseRequest([]byte(js))
	if n := r.Need([]int{8}); len(n) != 1 || n[0] != D8 {
		t.Errorf("need after 8: %v", n)
	}
	if n := r.Need([]int{7}); n != nil {
		t.Errorf("need after 7: %v", n)
	}
	if _, err := r.Resolve([]int{8}); err == nil {
		t.Error("a maximum without its confirmation die must be refused")
	}
}

func TestYDINRollOver(t *testing.T) {
	// "Attribute 4 + Skill level modifier +2 = 6. You roll D8 ... you only
	// success with 2 die results, where other 6 are catastrophic failures."
	r, _ := ParseRequest([]byte(`{"system":"ydin","attribute":4,"skill":2,"mode":"over"}`))
	od, _ := r.Odds()
	if p := od.Outcomes.Get("success"); p.Cmp(big.NewRat(2, 8)) != 0 {
		t.Errorf("P(success) = %s, want 2/8", p.RatString())
	}
	if p := od.Outcomes.Get("catastrophic_failure"); p.Cmp(big.NewRat(6, 8)) != 0 {
		t.Errorf("P(catastrophic) = %s, want 6/8", p.RatString())
	}
	// "Attribute 1 + Skill modifier +0. You success with 2,3,4,5,6 but score
	// critical failure 1/6 of the time."
	r, _ = ParseRequest([]byte(`{"system":"ydin","attribute":1,"skill":1,"mode":"over"}`))
	od, _ = r.Odds()
	if p := od.Outcomes.Get("catastrophic_failure"); p.Cmp(big.NewRat(1, 6)) != 0 {
		t.Errorf("P(catastrophic) = %s, want 1/6", p.RatString())
	}
	if o := roll(t, `{"system":"ydin","attribute":1,"skill":1,"mode":"over"}`, 1); o.Outcome != "catastrophic_failure" {
		t.Error("over: not above the target is a catastrophic failure")
	}
	if o := roll(t, `{"system":"ydin","attribute":1,"skill":1,"mode":"over"}`, 2); o.Outcome != "success" {
		t.Error("over: above the target succeeds")
	}
	// "Attribute 3 + Skill modifier +0. Rolling under or higher you have
	// equal changes in success"
	r1, _ := ParseRequest([]byte(`{"system":"ydin","attribute":3,"skill":1}`))
	r2, _ := ParseRequest([]byte(`{"system":"ydin","attribute":3,"skill":1,"mode":"over"}`))
	o1, _ := r1.Odds()
	o2, _ := r2.Odds()
	under := new(big.Rat).Add(o1.Outcomes.Get("success"), o1.Outcomes.Get("critical_success"))
	if under.Cmp(o2.Outcomes.Get("success")) != 0 {
		t.Errorf("attribute 3: under %s vs over %s", under.RatString(), o2.Outcomes.Get("success").RatString())
	}
	if len(o2.Outcomes) != 2 {
		t.Error("no critical successes rolling over")
	}
}

func TestYDINModifiers(t *testing.T) {
	for _, c := range []struct {
		js   string
		dice int
		net  int
	}{
		{`{"system":"ydin","attribute":3,"skill":2,"modifiers":[1,-1]}`, 1, 0}, // the rooftop example cancels
		{`{"system":"ydin","attribute":3,"skill":2,"modifiers":[2]}`, 3, 2},
		{`{"system":"ydin","attribute":3,"skill":2,"modifiers":[-3,1]}`, 3, -2},
		{`{"system":"ydin","attribute":3,"skill":0}`, 2, -1}, // untrained
		{`{"system":"ydin","attribute":3,"skill":0,"modifiers":[1]}`, 1, 0},
		{`{"system":"ydin","attribute":4}`, 1, 0},                   // no skill: level 2
		{`{"system":"ydin","attribute":1}`, 2, -1},                  // no skill: level 0, its negative modifier
		{`{"system":"ydin","attribute":5,"modifiers":[3,3]}`, 7, 6}, // level 2
	} {
		r, err := ParseRequest([]byte(c.js))
		if err != nil {
			t.Fatal(err)
		}
		if n := len(r.Plan().Dice); n != c.dice {
			t.Errorf("%s: %d dice, want %d", c.js, n, c.dice)
		}
		var faces []int
		for range r.Plan().Dice {
			faces = append(faces, 2)
		}
		o, err := r.Resolve(faces)
		if err != nil {
			t.Fatal(err)
		}
		if o.Details.YDIN.NetModifier != c.net {
			t.Errorf("%s: net %d, want %d", c.js, o.Details.YDIN.NetModifier, c.net)
		}
	}
	// no skill: attribute 4 → level 2 (d8, target 6)
	if o := roll(t, `{"system":"ydin","attribute":4}`, 2); o.Details.YDIN.Level != 2 || *o.Target != 6 || o.Details.YDIN.Die != D8 || o.Outcome != "critical_success" {
		t.Errorf("no skill: %+v", o)
	}
	// positive under: keep the lowest; negative under: keep the highest
	if o := roll(t, `{"system":"ydin","attribute":3,"skill":2,"modifiers":[1]}`, 7, 3); o.Total != 3 {
		t.Errorf("positive under keeps lowest: %d", o.Total)
	}
	if o := roll(t, `{"system":"ydin","attribute":3,"skill":2,"modifiers":[-1]}`, 7, 3); o.Total != 7 {
		t.Errorf("negative under keeps highest: %d", o.Total)
	}
	if o := roll(t, `{"system":"ydin","attribute":3,"skill":2,"mode":"over","modifiers":[1]}`, 7, 3); o.Total != 7 {
		t.Errorf("positive over keeps highest: %d", o.Total)
	}
	if o := roll(t, `{"system":"ydin","attribute":3,"skill":2,"mode":"over","modifiers":[-1]}`, 7, 3); o.Total != 3 {
		t.Errorf("negative over keeps lowest: %d", o.Total)
	}
}

// TestProtocolExample pins the contract's example result.
func TestProtocolExample(t *testing.T) {
	r, err := ParseRequest([]byte(`{"id": "r-17", "label": "Stealth", "system": "ydin", "attribute": 4, "skill": 2, "mode": "under", "modifiers": [1]}`))
	if err != nil {
		t.Fatal(err)
	}
	o, err := r.Resolve([]int{3, 7})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(o)
	for _, want := range []string{
		`"dice":[{"die":"d8","face":3,"kept":true},{"die":"d8","face":7,"kept":false}]`,
		`"total":3,"target":6,"outcome":"success"`,
		`"odds":{"critical_success":0.4375,"success":0.5,"failure":0.060546875,"catastrophic_failure":0.001953125}`,
		`"text":"Stealth: 2d8 keep lowest → 3 vs 6: success"`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("result lacks %s:\n%s", want, b)
		}
	}
	if string(r.Echo) != `{"system":"ydin","attribute":4,"skill":2,"mode":"under","modifiers":[1]}` {
		t.Errorf("echo %s", r.Echo)
	}
}
