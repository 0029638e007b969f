package tower

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/towerd/towerd/rules"
	"github.com/towerd/towerd/sim"
)

func seen(d rules.Die, face, x int) Seen {
	return Seen{Die: d, Face: &face, Confidence: 1, Box: rect(x, 0)}
}

func TestAssign(t *testing.T) {
	for _, c := range []struct {
		name    string
		planned []rules.Die
		seen    []Seen
		want    []int
		err     string
	}{
		{"order by place", []rules.Die{rules.D6, rules.D8, rules.D6},
			[]Seen{seen(rules.D6, 5, 300), seen(rules.D8, 7, 10), seen(rules.D6, 2, 100)}, []int{2, 7, 5}, ""},
		{"d10 zero is ten", []rules.Die{rules.D10}, []Seen{seen(rules.D10, 0, 0)}, []int{10}, ""},
		{"percentile 00+0 is 100", []rules.Die{rules.D100}, []Seen{seen(rules.D100, 0, 0), seen(rules.D10, 0, 40)}, []int{100}, ""},
		{"percentile 90+9", []rules.Die{rules.D100}, []Seen{seen(rules.D10, 9, 40), seen(rules.D100, 90, 0)}, []int{99}, ""},
		{"percentile 00+5", []rules.Die{rules.D100}, []Seen{seen(rules.D100, 0, 0), seen(rules.D10, 5, 40)}, []int{5}, ""},
		{"two pairs by distance", []rules.Die{rules.D100, rules.D100},
			[]Seen{seen(rules.D100, 30, 0), seen(rules.D10, 9, 40), seen(rules.D100, 60, 500), seen(rules.D10, 5, 540)}, []int{39, 65}, ""},
		{"d% pairs nearest, other d10 free", []rules.Die{rules.D10, rules.D100},
			[]Seen{seen(rules.D10, 3, 0), seen(rules.D100, 20, 400), seen(rules.D10, 4, 440)}, []int{3, 24}, ""},
		{"one too few", []rules.Die{rules.D6, rules.D6}, []Seen{seen(rules.D6, 1, 0)}, nil, "saw 1 d6 (planned 2)"},
		{"one too many", []rules.Die{rules.D6}, []Seen{seen(rules.D6, 1, 0), seen(rules.D20, 4, 50)}, nil, "1 d20 (planned 0)"},
		{"percentile without d10", []rules.Die{rules.D100}, []Seen{seen(rules.D100, 10, 0)}, nil, "0 d10 (planned 1)"},
		{"face a d6 lacks", []rules.Die{rules.D6}, []Seen{seen(rules.D6, 7, 0)}, nil, "d6 read as 7"},
		{"d100 not a multiple of ten", []rules.Die{rules.D100}, []Seen{seen(rules.D100, 15, 0), seen(rules.D10, 1, 40)}, nil, "d100 read as 15"},
		{"unknown kind", []rules.Die{rules.D6}, []Seen{{Face: new(int)}}, nil, "unknown kind"},
		{"unread", []rules.Die{rules.D20}, []Seen{{Die: rules.D20}}, nil, "d20 could not be read"},
		{"cocked", []rules.Die{rules.D4}, []Seen{{Die: rules.D4, Cocked: true}}, nil, "d4 is cocked"},
	} {
		got, err := Assign(c.planned, c.seen)
		if c.err != "" {
			var mr *Misread
			if !errors.As(err, &mr) || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err %v, want misread %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: %v %v, want %v", c.name, got, err, c.want)
		}
	}
}

func TestAssignFree(t *testing.T) {
	got, err := AssignFree([]Seen{seen(rules.D20, 17, 0), seen(rules.D100, 0, 200), seen(rules.D10, 0, 240), seen(rules.D10, 0, 900)})
	want := []rules.DieFace{{Die: rules.D10, Face: 10}, {Die: rules.D20, Face: 17}, {Die: rules.D100, Face: 100}}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("free: %v %v, want %v", got, err, want)
	}
	for _, c := range []struct {
		seen []Seen
		err  string
	}{
		{nil, "no dice"},
		{[]Seen{seen(rules.D100, 50, 0)}, "only 0 d10"},
		{[]Seen{{Die: rules.D8}}, "could not be read"},
	} {
		if _, err := AssignFree(c.seen); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%v: err %v, want %q", c.seen, err, c.err)
		}
	}
}

// TestEntropyEyes: the simulated eyes give valid physical faces that
// Assign accepts for every kind, a percentile pair included.
func TestEntropyEyes(t *testing.T) {
	e := NewEntropyEyes(sim.NewSeeded(7))
	plan := append([]rules.Die(nil), rules.Kinds...)
	for range 200 {
		called := false
		lk, err := e.Look(context.Background(), Physical(plan), func() { called = true })
		if err != nil || !called {
			t.Fatalf("look: %v, settled called %v", err, called)
		}
		faces, err := Assign(plan, lk.Dice)
		if err != nil {
			t.Fatal(err)
		}
		for i, d := range plan {
			if faces[i] < 1 || faces[i] > int(d) {
				t.Fatalf("%s face %d", d, faces[i])
			}
		}
	}
	lk, err := e.Look(context.Background(), nil, func() {})
	if err != nil || len(lk.Dice) != len(FreeDice) {
		t.Fatalf("free look %+v %v", lk, err)
	}
}

func TestPhysical(t *testing.T) {
	got := Physical([]rules.Die{rules.D20, rules.D100, rules.D6})
	if want := []rules.Die{rules.D20, rules.D100, rules.D10, rules.D6}; !slices.Equal(got, want) {
		t.Fatalf("%v, want %v", got, want)
	}
}

func TestDropText(t *testing.T) {
	if got := dropText([]rules.Die{rules.D8, rules.D8, rules.D20}); got != "drop 2 d8, 1 d20" {
		t.Fatal(got)
	}
}
