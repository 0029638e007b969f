package rules

import (
	"errors"
	"strings"
	"testing"
)

func TestBadRequestsNameTheField(t *testing.T) {
	for _, c := range []struct{ js, field, msg string }{
		{`[]`, "", "object"},
		{`{"system":"ydin"`, "", "JSON"},
		{`{}`, "system", "required"},
		{`{"system":"poker"}`, "system", "one of"},
		{`{"system":7}`, "system", "one of"},
		{`{"system":"dice","expr":"2d6","colour":"red"}`, "colour", "unknown field"},
		{`{"system":"dice","system":"dice"}`, "system", "twice"},
		{`{"system":"ydin","attribute":4,"skill":7}`, "skill", "0-4, got 7"},
		{`{"system":"ydin","attribute":4.0}`, "attribute", "integer"},
		{`{"system":"ydin","attribute":"4"}`, "attribute", "integer"},
		{`{"system":"ydin","attribute":0}`, "attribute", "1-6"},
		{`{"system":"ydin"}`, "attribute", "required"},
		{`{"system":"ydin","attribute":3,"mode":"sideways"}`, "mode", "under, over"},
		{`{"system":"ydin","attribute":3,"modifiers":[1,0]}`, "modifiers[1]", "got 0"},
		{`{"system":"ydin","attribute":3,"modifiers":[4]}`, "modifiers[0]", "got 4"},
		{`{"system":"ydin","attribute":3,"modifiers":2}`, "modifiers", "list"},
		{`{"system":"d4tactical","rad":3,"abilities":[3],"dt":5}`, "abilities", "not both"},
		{`{"system":"d4tactical","dt":5}`, "rad", "required"},
		{`{"system":"d4tactical","rad":3,"boon":6,"dt":5}`, "boon", "0-5"},
		{`{"system":"d4tactical","rad":3,"test":"cdt","dt":31}`, "dt", "1-30"},
		{`{"system":"d4tactical","rad":3,"test":"cdt"}`, "dt", "required"},
		{`{"system":"d4tactical","rad":3,"test":"fdt","dt":5,"effect":2}`, "effect", "only for test cdt"},
		{`{"system":"d4tactical","rad":3,"dt":5,"magic_damage":2}`, "magic_damage", "only for test attack"},
		{`{"system":"d4tactical","rad":-1,"dt":5}`, "rad", "0-100, got -1"},
		{`{"system":"d20tn","item":"skill"}`, "item", "there is none"},
		{`{"system":"d20tn","skill_rank":5,"item":"skill"}`, "item", "d12"},
		{`{"system":"d20tn","domains":0,"item":"domain"}`, "item", "none"},
		{`{"system":"d20tn","domains":5,"item":"domain"}`, "item", "d12"},
		{`{"system":"d20tn","skill_rank":6}`, "skill_rank", "0-5"},
		{`{"system":"d20tn","advantage":1}`, "advantage", "true or false"},
		{`{"system":"d20tn","trauma":-1}`, "trauma", "0-1000, got -1"},
		{`{"system":"dsdn","roll":"check"}`, "target", "required"},
		{`{"system":"dsdn","roll":"damage"}`, "expr", "required"},
		{`{"system":"dsdn","roll":"damage","expr":"2d6","target":3}`, "target", "damage"},
		{`{"system":"dsdn","target":3,"expr":"2d6"}`, "expr", "only for roll damage"},
		{`{"system":"dsdn","target":3,"advantage":-1}`, "advantage", "0-100"},
		{`{"system":"dsdn","roll":"damage","expr":"1d6","apply":{"kind":"machine","hp":5}}`, "apply.max_hp", "required"},
		{`{"system":"dsdn","roll":"damage","expr":"1d6","apply":{"kind":"robot","hp":5}}`, "apply.kind", "creature, machine"},
		{`{"system":"dsdn","roll":"damage","expr":"1d6","apply":{"hp":5,"shield":2}}`, "apply.shield", "unknown"},
		{`{"system":"dsdn","roll":"damage","expr":"1d6","apply":[1]}`, "apply", "object"},
		{`{"system":"dice","expr":"100000d6"}`, "expr", "1-100"},
		{`{"system":"dice","expr":"60d6+60d6"}`, "expr", "more than 100 dice"},
		{`{"system":"dice","expr":"2d7"}`, "expr", "d7"},
		{`{"system":"dice","expr":"2d6kh3"}`, "expr", "keep 3 of 2"},
		{`{"system":"dice","expr":"2d6+"}`, "expr", "ends"},
		{`{"system":"dice","expr":"2x6"}`, "expr", "unexpected"},
		{`{"system":"dice","expr":""}`, "expr", "empty"},
		{`{"system":"dice","expr":"d"}`, "expr", "missing die size"},
		{`{"system":"dice","expr":"99999999"}`, "expr", "too large"},
		{`{"system":"dice","id":"` + strings.Repeat("x", 65) + `"}`, "id", "64"},
		{`{"system":"dice","id":"` + strings.Repeat("é", 65) + `"}`, "id", "got 65"},
		{`{"system":"dice","label":5}`, "label", "string"},
		{`{"system":"dice"} {}`, "", "single"},
	} {
		_, err := ParseRequest([]byte(c.js))
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%s: error %v, want *Error", c.js, err)
			continue
		}
		if e.Code != CodeBadRequest || e.Field != c.field || !strings.Contains(e.Message, c.msg) {
			t.Errorf("%s: field %q message %q; want field %q containing %q", c.js, e.Field, e.Message, c.field, c.msg)
		}
	}
}

// TestLengthsInCharacters: id and label are limited in characters, as
// the contract and the JSON Schema's maxLength count them, not in bytes.
func TestLengthsInCharacters(t *testing.T) {
	js := `{"system":"dice","expr":"1d6","id":"` + strings.Repeat("é", 64) + `","label":"` + strings.Repeat("☃", 200) + `"}`
	r, err := ParseRequest([]byte(js))
	if err != nil {
		t.Fatalf("64 é and 200 snowmen: %v", err)
	}
	if r.ID != strings.Repeat("é", 64) || r.Label != strings.Repeat("☃", 200) {
		t.Errorf("id %q label %q not kept as given", r.ID, r.Label)
	}
}

// TestTextIsOneLine: a label or damage type with line breaks or other
// control characters still makes a text of one line (spaces in their
// place); the request echo keeps the label as given.
func TestTextIsOneLine(t *testing.T) {
	for _, js := range []string{
		`{"system":"dice","expr":"1d6","label":"a\nb\u2028c\td"}`,
		`{"system":"dsdn","roll":"damage","expr":"1d6","label":"x","damage_type":"fire\r\nice"}`,
	} {
		r, err := ParseRequest([]byte(js))
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		res, err := r.Resolve([]int{3})
		if err != nil {
			t.Fatalf("%s: %v", js, err)
		}
		if strings.ContainsAny(res.Text, "\r\n\t\u2028\u2029") {
			t.Errorf("%s: text %q is not one line", js, res.Text)
		}
	}
	r, _ := ParseRequest([]byte(`{"system":"dice","expr":"1d6","label":"a\nb"}`))
	res, _ := r.Resolve([]int{3})
	if res.Text != "a b: 1d6 → 3 = 3" || r.Label != "a\nb" {
		t.Errorf("text %q, label %q; want %q and the label as given", res.Text, r.Label, "a b: 1d6 → 3 = 3")
	}
}

func TestBadFaces(t *testing.T) {
	r, err := ParseRequest([]byte(`{"system":"dice","expr":"2d6+1d8"}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		faces []int
		msg   string
	}{
		{[]int{1, 2}, "too few"},
		{[]int{1, 2, 3, 4}, "too many"},
		{[]int{1, 7, 3}, "faces[1] is a d6 and shows 1-6, got 7"},
		{[]int{1, 2, 0}, "faces[2]"},
	} {
		_, err := r.Resolve(c.faces)
		var e *Error
		if !errors.As(err, &e) || e.Field != "faces" || !strings.Contains(e.Message, c.msg) {
			t.Errorf("%v: %v, want faces error with %q", c.faces, err, c.msg)
		}
	}
}

func TestNotationForms(t *testing.T) {
	for _, c := range []struct {
		expr  string
		faces []int
		total int
	}{
		{"3d4+4", []int{1, 2, 3}, 10},
		{"2d6+1d8-1", []int{1, 2, 3}, 5},
		{"2d20kh1", []int{4, 17}, 17},
		{"4d20kl1", []int{4, 17, 2, 9}, 2},
		{"d%", []int{73}, 73},
		{"D20 + 5", []int{3}, 8},
		{"-1d4+10", []int{3}, 7},
		{"4d6kh3", []int{6, 1, 4, 6}, 16},
		{"2d20kh", []int{3, 5}, 5},
		{"7", nil, 7},
	} {
		o := roll(t, `{"system":"dice","expr":"`+c.expr+`"}`, c.faces...)
		if o.Total != c.total {
			t.Errorf("%s %v = %d, want %d", c.expr, c.faces, o.Total, c.total)
		}
	}
	// ties: the earlier die is kept
	o := roll(t, `{"system":"dice","expr":"3d6kh1"}`, 5, 5, 2)
	if !o.Dice[0].Kept || o.Dice[1].Kept {
		t.Errorf("tie keeps the first: %+v", o.Dice)
	}
}

func TestFreeRoll(t *testing.T) {
	r, err := ParseRequest([]byte(`{"system":"dice","label":"loose"}`))
	if err != nil {
		t.Fatal(err)
	}
	if p := r.Plan(); !p.Free || len(p.Dice) != 0 {
		t.Fatalf("plan %+v", p)
	}
	o, err := r.ResolveFree([]DieFace{{D6, 3}, {D20, 17}})
	if err != nil {
		t.Fatal(err)
	}
	if o.Total != 20 || o.Outcome != "rolled" || o.Text != "loose: free roll → d6 3, d20 17 = 20" {
		t.Errorf("%+v", o)
	}
	if _, err := r.ResolveFree([]DieFace{{D6, 7}}); err == nil {
		t.Error("a 7 on a d6 accepted")
	}
	if _, err := r.Resolve([]int{3}); err == nil {
		t.Error("bare faces accepted for a free roll")
	}
}

// FuzzParseRequest: no input panics; every failure is a *Error with the
// bad_request code; every success resolves its own plan.
func FuzzParseRequest(f *testing.F) {
	for _, s := range []string{
		`{"system":"dice","expr":"3d4+4"}`,
		`{"id":"a","system":"ydin","attribute":4,"skill":2,"modifiers":[1,-2]}`,
		`{"system":"dsdn","roll":"damage","expr":"2d6","apply":{"kind":"machine","hp":5,"max_hp":9}}`,
		`{"system":"d4tactical","abilities":[3,4],"test":"cdt","dt":12,"effect":3}`,
		`{"system":"d20tn","skill_rank":2,"item":"skill","advantage":true}`,
		`{"system":"dsdn","target":12,"detriment":true}`,
		"\x00\xff", `[`, `{"system":"dice","expr":"d%kh1"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseRequest(data)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Code != CodeBadRequest || e.Message == "" {
				t.Fatalf("error %v is not a bad_request *Error", err)
			}
			return
		}
		p := r.Plan()
		if p.Free {
			return
		}
		faces := make([]int, 0, len(p.Dice)+1)
		for _, d := range p.Dice {
			faces = append(faces, int(d))
		}
		for need := r.Need(faces); len(need) > 0; need = r.Need(faces) {
			faces = append(faces, int(need[0]))
		}
		if _, err := r.Resolve(faces); err != nil {
			t.Fatalf("%s: own plan %v does not resolve: %v", data, faces, err)
		}
	})
}

// FuzzParseExpr: no notation panics or passes the dice limit.
func FuzzParseExpr(f *testing.F) {
	for _, s := range []string{"3d4+4", "2d20kh1", "d%", "4d20kl1-2", "1d6 + 2d8 - 3", "kh", "d", "100d100"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := ParseExpr(s)
		if err != nil {
			return
		}
		if e.Dice() > MaxDice || len(e.plan()) != e.Dice() {
			t.Fatalf("%q: %d dice", s, e.Dice())
		}
	})
}

func TestPeekID(t *testing.T) {
	for in, want := range map[string]string{
		`{"id":"a"}`:                      "a",
		`{"x":{"id":"inner"},"id":"top"}`: "top",
		`{"x":[1,{"id":"n"}]}`:            "",
		`{"id":1}`:                        "",
		`{"id":"a"`:                       "a",
		`{"x":`:                           "",
		`"id"`:                            "",
		`{"id":"` + strings.Repeat("l", 300) + `"}`: "",
	} {
		if got := PeekID([]byte(in)); got != want {
			t.Errorf("PeekID(%.40q) = %q, want %q", in, got, want)
		}
	}
}
