package history

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/towerd/towerd/rules"
)

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestFairnessTestFairDie(t *testing.T) {
	// 600 rolls of a d6 with ordinary sampling noise: chi2 = 2.5, p ≈ 0.7765.
	ds := FairnessTest(rules.D6, []int{95, 105, 100, 110, 90, 100})
	if ds.Rolls != 600 || ds.Expected != 100 || ds.DF != 5 {
		t.Fatalf("got %+v", ds)
	}
	if math.Abs(ds.ChiSquare-2.5) > 1e-12 {
		t.Errorf("chi2 = %g, want 2.5", ds.ChiSquare)
	}
	if math.Abs(ds.P-0.776495) > 1e-5 || ds.Verdict != VerdictOK {
		t.Errorf("p = %g verdict %s, want ≈0.7765 ok", ds.P, ds.Verdict)
	}
}

func TestFairnessTestLoadedDie(t *testing.T) {
	// A d20 loaded towards 20: 1000 rolls, 20 comes up 90 times instead of 50.
	counts := make([]int, 20)
	for i := range counts {
		counts[i] = 50
	}
	counts[19] = 90
	counts[0] = 30
	counts[1] = 30
	ds := FairnessTest(rules.D20, counts)
	if ds.Verdict != VerdictSuspicious || ds.P >= SuspiciousP {
		t.Fatalf("loaded d20: p=%g verdict %s, want suspicious", ds.P, ds.Verdict)
	}
	// chi2 = (40² + 20² + 20²)/50 = 48, df 19.
	if math.Abs(ds.ChiSquare-48) > 1e-9 {
		t.Errorf("chi2 = %g, want 48", ds.ChiSquare)
	}
	if f := ds.Faces[19]; f.Face != 20 || math.Abs(f.Residual-40/math.Sqrt(50)) > 1e-12 {
		t.Errorf("face 20: %+v", f)
	}

	// The same bias with too few rolls is not judged.
	few := FairnessTest(rules.D20, []int{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9})
	if few.Verdict != VerdictTooFew {
		t.Errorf("9 rolls of a d20: verdict %s, want %s", few.Verdict, VerdictTooFew)
	}
	if none := FairnessTest(rules.D6, nil); none.Verdict != VerdictTooFew || none.P != 1 || none.Rolls != 0 {
		t.Errorf("no rolls: %+v", none)
	}
}

// A worn d6 whose 6 comes up a bit too often is caught over enough rolls
// and not over few, as the test's power grows with n.
func TestFairnessTestPowerGrowsWithRolls(t *testing.T) {
	worn := func(n int) []int { // 6 at 20% instead of 16.7%
		six := n / 5
		rest := (n - six) / 5
		return []int{rest, rest, rest, rest, rest, six}
	}
	if v := FairnessTest(rules.D6, worn(120)).Verdict; v != VerdictOK {
		t.Errorf("120 rolls: %s, want ok (not enough evidence yet)", v)
	}
	if v := FairnessTest(rules.D6, worn(6000)).Verdict; v != VerdictSuspicious {
		t.Errorf("6000 rolls: %s, want suspicious", v)
	}
}

func TestComputeFacesAndBuckets(t *testing.T) {
	var recs []Record
	add := func(src string, faces ...Face) {
		r := resultRec(t0, faces...)
		r.Source = src
		recs = append(recs, r)
	}
	add(rules.SourceCamera, Face{rules.D10, 0}, Face{rules.D10, 10}, Face{rules.D10, 3})
	add(rules.SourceSim, Face{rules.D100, 0}, Face{rules.D100, 100}, Face{rules.D100, 90}, Face{rules.D100, 37}, Face{rules.D100, 40})
	add(rules.SourceManual, Face{rules.D6, 6}, Face{rules.D10, 3}) // hand-entered: not counted
	add(rules.SourceCamera, Face{rules.D4, 9})                     // impossible face: counted invalid
	// Faces seen on a failed read are not evidence either.
	recs = append(recs, Record{Time: t0, Kind: KindError, Code: rules.CodeMisread, Faces: []Face{{rules.D6, 1}}})

	s := Compute(recs)
	byDie := map[rules.Die]DieStats{}
	for _, d := range s.Dice {
		byDie[d.Die] = d
	}
	if _, ok := byDie[rules.D6]; ok {
		t.Error("manual or misread d6 faces were counted")
	}
	d10 := byDie[rules.D10]
	if d10.Rolls != 3 || d10.Faces[9].Face != 10 || d10.Faces[9].Count != 2 || d10.Faces[2].Count != 1 || len(d10.Faces) != 10 {
		t.Errorf("d10: %+v", d10)
	}
	d100 := byDie[rules.D100]
	want := map[int]int{0: 2, 90: 1, 30: 1, 40: 1}
	if d100.Rolls != 5 || len(d100.Faces) != 10 || d100.DF != 9 {
		t.Errorf("d100: %+v", d100)
	}
	for _, f := range d100.Faces {
		if f.Count != want[f.Face] {
			t.Errorf("d100 face %02d: %d, want %d", f.Face, f.Count, want[f.Face])
		}
	}
	if d4 := byDie[rules.D4]; d4.Invalid != 1 || d4.Rolls != 0 {
		t.Errorf("d4: %+v", d4)
	}
	// Kind order.
	var order []string
	for _, d := range s.Dice {
		order = append(order, d.Die.String())
	}
	if got := strings.Join(order, ","); got != "d4,d10,d100" {
		t.Errorf("dice order %s", got)
	}
}

func TestComputeDaysMisreadsSettle(t *testing.T) {
	day := 24 * time.Hour
	recs := []Record{
		{Time: t0, Kind: KindResult, SettleMS: 700},
		{Time: t0.Add(time.Hour), Kind: KindResult, SettleMS: 900},
		{Time: t0.Add(2 * time.Hour), Kind: KindError, Code: rules.CodeMisread, SettleMS: 1400},
		{Time: t0.Add(2 * day), Kind: KindResult}, // manual: no settle
		{Time: t0.Add(2 * day), Kind: KindError, Code: rules.CodeTimeout},
		{Time: t0.Add(2 * day), Kind: KindError, Code: rules.CodeBadRequest},
	}
	s := Compute(recs)
	if s.Results != 3 || s.Errors != 3 || s.Misreads != 1 {
		t.Errorf("counts: %+v", s)
	}
	if s.Days != 3 || math.Abs(s.RollsPerDay-1) > 1e-12 {
		t.Errorf("days %d, per day %g; want 3 days (29th to 1st inclusive), 1/day", s.Days, s.RollsPerDay)
	}
	if math.Abs(s.MisreadRate-0.25) > 1e-12 {
		t.Errorf("misread rate %g, want 1/(3+1)", s.MisreadRate)
	}
	if s.Settle.Count != 3 || s.Settle.MeanMS != 1000 || s.Settle.MaxMS != 1400 {
		t.Errorf("settle %+v", s.Settle)
	}
	wantDays := []DayCount{{"2026-11-29", 2, 1}, {"2026-12-01", 1, 2}}
	if mustJSON(t, s.PerDay) != mustJSON(t, wantDays) {
		t.Errorf("per day %+v, want %+v", s.PerDay, wantDays)
	}
	if s.ErrorsByCode[rules.CodeTimeout] != 1 || s.ErrorsByCode[rules.CodeBadRequest] != 1 || len(s.ErrorsByCode) != 3 {
		t.Errorf("by code %v", s.ErrorsByCode)
	}
	if !s.First.Equal(t0) || !s.Last.Equal(t0.Add(2*day)) {
		t.Errorf("first %v last %v", s.First, s.Last)
	}
}

func TestStatsJSONShape(t *testing.T) {
	// Empty history: valid JSON, arrays not null, no NaN anywhere.
	empty := mustJSON(t, Compute(nil))
	want := `{"v":1,"results":0,"errors":0,"errors_by_code":{},"days":0,"rolls_per_day":0,"per_day":[],"misreads":0,"misread_rate":0,"settle":{"count":0,"mean_ms":0,"max_ms":0},"dice":[],"skipped_lines":0}`
	if empty != want {
		t.Errorf("empty stats JSON\n got %s\nwant %s", empty, want)
	}
	s := Compute([]Record{resultRec(t0, Face{rules.D6, 2})})
	var back map[string]any
	if err := json.Unmarshal([]byte(mustJSON(t, s)), &back); err != nil {
		t.Fatal(err)
	}
	dice := back["dice"].([]any)
	d := dice[0].(map[string]any)
	for _, k := range []string{"die", "rolls", "faces", "expected", "chi_square", "df", "p", "verdict"} {
		if _, ok := d[k]; !ok {
			t.Errorf("dice[0] lacks %q: %v", k, d)
		}
	}
	if d["die"] != "d6" || d["verdict"] != VerdictTooFew {
		t.Errorf("dice[0] = %v", d)
	}
}

func TestWriteReport(t *testing.T) {
	var recs []Record
	for i := range 600 {
		face := i%6 + 1
		if i%10 == 0 {
			face = 6 // loaded towards 6
		}
		recs = append(recs, resultRec(t0.Add(time.Duration(i)*time.Minute), Face{rules.D6, face}, Face{rules.D100, (i % 10) * 10}))
	}
	recs = append(recs, Record{Time: t0, Kind: KindError, Code: rules.CodeMisread})
	s := Compute(recs)
	s.SkippedLines = 2
	var b bytes.Buffer
	if err := s.WriteReport(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"600 results, 1 errors", "skipped: 2", "misread rate: 0.17%", "settle time: mean 800 ms",
		"d6", "suspicious", "most over: 6", "d100", " 00:60 ", "errors by code: misread 1",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}

	b.Reset()
	empty := Compute(nil)
	if err := empty.WriteReport(&b); err != nil || !strings.Contains(b.String(), "no rolls recorded yet") {
		t.Errorf("empty report %q (%v)", b.String(), err)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	l := openTest(t, dir, Options{})
	for i := range 12 {
		if err := l.Append(seqRec(i)); err != nil {
			t.Fatal(err)
		}
	}
	s, info, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Results != 12 || info.Records != 12 || len(s.Dice) != 1 || s.Dice[0].Rolls != 12 {
		t.Errorf("stats %+v info %+v", s, info)
	}
}
