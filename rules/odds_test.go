package rules

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"
)

// enumerate resolves every combination of faces a request can see
// (follow-up dice included) and counts outcomes and totals exactly; it is
// the brute-force reference the odds engine must match.
func enumerate(t *testing.T, r *Request) (map[string]*big.Rat, map[int]*big.Rat) {
	t.Helper()
	outc := map[string]*big.Rat{}
	tot := map[int]*big.Rat{}
	var rec func(faces []int, p *big.Rat)
	rec = func(faces []int, p *big.Rat) {
		need := r.Need(faces)
		if len(need) == 0 {
			o, err := r.Resolve(faces)
			if err != nil {
				t.Fatalf("resolve %v: %v", faces, err)
			}
			if outc[o.Outcome] == nil {
				outc[o.Outcome] = new(big.Rat)
			}
			outc[o.Outcome].Add(outc[o.Outcome], p)
			if tot[o.Total] == nil {
				tot[o.Total] = new(big.Rat)
			}
			tot[o.Total].Add(tot[o.Total], p)
			return
		}
		d := need[0]
		q := new(big.Rat).Mul(p, big.NewRat(1, int64(d)))
		for f := 1; f <= int(d); f++ {
			rec(append(append([]int(nil), faces...), f), q)
		}
	}
	rec(nil, big.NewRat(1, 1))
	return outc, tot
}

func checkOddsExact(t *testing.T, js string) {
	t.Helper()
	r, err := ParseRequest([]byte(js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	od, err := r.Odds()
	if err != nil {
		t.Fatalf("%s: odds: %v", js, err)
	}
	wantO, wantT := enumerate(t, r)
	sum := new(big.Rat)
	for _, p := range od.Outcomes {
		sum.Add(sum, p.P)
		w := wantO[p.Name]
		if w == nil {
			w = new(big.Rat)
		}
		if p.P.Cmp(w) != 0 {
			t.Errorf("%s: P(%s) = %s, enumeration gives %s", js, p.Name, p.P.RatString(), w.RatString())
		}
	}
	for name, w := range wantO {
		if od.Outcomes.Get(name).Cmp(w) != 0 {
			t.Errorf("%s: outcome %s (P %s) missing from odds", js, name, w.RatString())
		}
	}
	if sum.Cmp(big.NewRat(1, 1)) != 0 {
		t.Errorf("%s: outcome probabilities sum to %s, not exactly 1", js, sum.RatString())
	}
	tsum := new(big.Rat)
	mean := new(big.Rat)
	for _, tp := range od.Totals {
		tsum.Add(tsum, tp.P)
		mean.Add(mean, new(big.Rat).Mul(tp.P, big.NewRat(int64(tp.Total), 1)))
		if w := wantT[tp.Total]; w == nil || w.Cmp(tp.P) != 0 {
			t.Errorf("%s: P(total %d) = %s, enumeration gives %v", js, tp.Total, tp.P.RatString(), w)
		}
	}
	if len(od.Totals) != len(wantT) {
		t.Errorf("%s: %d totals, enumeration gives %d", js, len(od.Totals), len(wantT))
	}
	if tsum.Cmp(big.NewRat(1, 1)) != 0 {
		t.Errorf("%s: totals sum to %s", js, tsum.RatString())
	}
	if mean.Cmp(od.Mean) != 0 {
		t.Errorf("%s: mean %s, want %s", js, od.Mean.RatString(), mean.RatString())
	}
}

func TestOddsMatchEnumeration(t *testing.T) {
	for _, js := range []string{
		`{"system":"dice","expr":"3d4+4"}`,
		`{"system":"dice","expr":"2d6+1d8-1"}`,
		`{"system":"dice","expr":"2d20kh1"}`,
		`{"system":"dice","expr":"4d6kl2-1d4"}`,
		`{"system":"dice","expr":"5d4kh3+2"}`,
		`{"system":"dice","expr":"d%"}`,
		`{"system":"dice","expr":"3d6kh2-2d4kl1+3"}`,
		`{"system":"dsdn","roll":"check","target":12,"modifier":3}`,
		`{"system":"dsdn","roll":"attack","target":14,"advantage":2}`,
		`{"system":"dsdn","roll":"evasion","target":16,"disadvantage":1}`,
		`{"system":"dsdn","roll":"check","target":10,"advantage":1,"disadvantage":3}`,
		`{"system":"dsdn","roll":"damage","expr":"2d6-5"}`,
		`{"system":"d20tn","trauma":3,"skill_rank":2,"domains":1}`,
		`{"system":"d20tn","advantage":true,"skill_rank":1}`,
		`{"system":"d20tn","disadvantage":true,"domains":2,"item":"domain"}`,
		`{"system":"d20tn","advantage":true,"disadvantage":true}`,
		`{"system":"d4tactical","rad":3,"test":"fdt","dt":9}`,
		`{"system":"d4tactical","rad":3,"test":"cdt","dt":9,"effect":4}`,
		`{"system":"d4tactical","abilities":[4,4,5],"test":"learn","dt":10,"boon":1}`,
		`{"system":"d4tactical","rad":2,"fortune":2,"calamity":1,"bane":1,"test":"attack","dt":6,"magic_damage":2}`,
		`{"system":"d4tactical","rad":1,"calamity":3,"modifier":4,"test":"cdt","dt":5}`,
		`{"system":"ydin","attribute":4,"skill":2,"mode":"under","modifiers":[1]}`,
		`{"system":"ydin","attribute":3,"skill":0}`,
		`{"system":"ydin","attribute":5,"mode":"under","modifiers":[-2,1]}`,
		`{"system":"ydin","attribute":6,"skill":4,"modifiers":[1]}`,
		`{"system":"ydin","attribute":4,"skill":2,"mode":"over","modifiers":[-1,-1]}`,
		`{"system":"ydin","attribute":1,"skill":1,"mode":"over"}`,
	} {
		checkOddsExact(t, js)
	}
}

// TestOddsRandomRequests cross-checks the odds engine against enumeration on
// random small requests of every system.
func TestOddsRandomRequests(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	dies := []int{4, 6, 8}
	for i := 0; i < 40; i++ {
		var js string
		switch i % 5 {
		case 0:
			n := 1 + rng.IntN(3)
			s := dies[rng.IntN(len(dies))]
			js = fmt.Sprintf(`{"system":"dice","expr":"%dd%dkh%d+%d"}`, n, s, 1+rng.IntN(n), rng.IntN(5))
		case 1:
			js = fmt.Sprintf(`{"system":"dsdn","roll":"%s","target":%d,"modifier":%d,"advantage":%d,"disadvantage":%d}`,
				[]string{"check", "attack", "evasion"}[rng.IntN(3)], rng.IntN(25), rng.IntN(7)-3, rng.IntN(2), rng.IntN(2))
		case 2:
			js = fmt.Sprintf(`{"system":"d20tn","trauma":%d,"skill_rank":%d,"disadvantage":%t}`, rng.IntN(6), rng.IntN(2), rng.IntN(2) == 1)
		case 3:
			js = fmt.Sprintf(`{"system":"d4tactical","rad":%d,"boon":%d,"bane":%d,"test":"%s","dt":%d}`,
				rng.IntN(4), rng.IntN(3), rng.IntN(3), []string{"fdt", "cdt", "attack", "learn"}[rng.IntN(4)], 1+rng.IntN(20))
		case 4:
			js = fmt.Sprintf(`{"system":"ydin","attribute":%d,"skill":%d,"mode":"%s","modifiers":[%d]}`,
				1+rng.IntN(6), rng.IntN(5), []string{"under", "over"}[rng.IntN(2)], []int{-2, -1, 1, 2}[rng.IntN(4)])
		}
		checkOddsExact(t, js)
	}
}

func TestKeepHighestMatchesEnumeration(t *testing.T) {
	for _, c := range []struct{ n, k, s int }{{3, 1, 6}, {4, 2, 4}, {5, 3, 4}, {3, 2, 8}, {4, 1, 4}, {2, 2, 6}} {
		d := keepHighest(c.n, c.k, c.s)
		want := map[int]int64{}
		faces := make([]int, c.n)
		var rec func(i int)
		rec = func(i int) {
			if i == c.n {
				ds := make([]RolledDie, c.n)
				markKept(faces, ds, c.k, true)
				s := 0
				for j := range ds {
					if ds[j].Kept {
						s += faces[j]
					}
				}
				want[s]++
				return
			}
			for f := 1; f <= c.s; f++ {
				faces[i] = f
				rec(i + 1)
			}
		}
		rec(0)
		for _, tp := range d.totals() {
			w := big.NewRat(want[tp.Total], 1)
			w.Quo(w, new(big.Rat).SetInt(d.den))
			if tp.P.Cmp(w) != 0 {
				t.Errorf("%dd%dkh%d: P(%d) = %s, want %s", c.n, c.s, c.k, tp.Total, tp.P.RatString(), w.RatString())
			}
		}
		if len(d.totals()) != len(want) {
			t.Errorf("%dd%dkh%d: %d totals, want %d", c.n, c.s, c.k, len(d.totals()), len(want))
		}
	}
}

// TestOddsLargeRequests checks that the big requests of the issue answer
// exactly (sums to 1) with the right ranges; their speed is in benchmarks.
func TestOddsLargeRequests(t *testing.T) {
	for _, c := range []struct {
		js       string
		lo, hi   int
		meanWant *big.Rat
	}{
		{`{"system":"dice","expr":"30d4"}`, 30, 120, big.NewRat(75, 1)},
		{`{"system":"dice","expr":"20d20kh3+10d12"}`, 13, 180, nil},
		{`{"system":"dice","expr":"10d100"}`, 10, 1000, big.NewRat(505, 1)},
		{`{"system":"ydin","attribute":4,"skill":3,"modifiers":[3]}`, 1, 10, nil},
	} {
		r, err := ParseRequest([]byte(c.js))
		if err != nil {
			t.Fatal(err)
		}
		od, err := r.Odds()
		if err != nil {
			t.Fatal(err)
		}
		sum := new(big.Rat)
		for _, tp := range od.Totals {
			sum.Add(sum, tp.P)
		}
		if sum.Cmp(big.NewRat(1, 1)) != 0 {
			t.Errorf("%s: totals sum to %s", c.js, sum.FloatString(20))
		}
		if got := od.Totals[0].Total; got != c.lo {
			t.Errorf("%s: lowest total %d, want %d", c.js, got, c.lo)
		}
		if got := od.Totals[len(od.Totals)-1].Total; got != c.hi {
			t.Errorf("%s: highest total %d, want %d", c.js, got, c.hi)
		}
		if c.meanWant != nil && od.Mean.Cmp(c.meanWant) != 0 {
			t.Errorf("%s: mean %s, want %s", c.js, od.Mean.RatString(), c.meanWant.RatString())
		}
	}
}

// TestDetrimentOdds checks 4d20 keep lowest against its closed form:
// P(lowest ≥ x) = ((21−x)/20)^4.
func TestDetrimentOdds(t *testing.T) {
	r, err := ParseRequest([]byte(`{"system":"dsdn","roll":"attack","target":5,"detriment":true,"advantage":1}`))
	if err != nil {
		t.Fatal(err)
	}
	od, err := r.Odds()
	if err != nil {
		t.Fatal(err)
	}
	// hit: d20 > 5 → lowest ≥ 6: (15/20)^4
	want := big.NewRat(15*15*15*15, 20*20*20*20)
	if got := od.Outcomes.Get("hit"); got.Cmp(want) != 0 {
		t.Fatalf("P(hit) = %s, want %s", got.RatString(), want.RatString())
	}
}
