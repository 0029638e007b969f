package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

func runTowerd(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb, Log: StdEnv().Log}
	code := Main(context.Background(), args, env)
	return code, out.String(), errb.String()
}

func TestRollManualFaces(t *testing.T) {
	code, out, errs := runTowerd(t, "", "roll", "--faces", "3,7",
		`{"id":"r-17","label":"Stealth","system":"ydin","attribute":4,"skill":2,"mode":"under","modifiers":[1]}`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("not one JSON line: %q", out)
	}
	if res["source"] != "manual" || res["outcome"] != "success" || res["id"] != "r-17" || res["total"] != 3.0 || res["v"] != 1.0 {
		t.Errorf("result %v", res)
	}
	if strings.Count(out, "\n") != 1 {
		t.Errorf("want exactly one line, got %q", out)
	}
}

func TestRollSeedIsReproducible(t *testing.T) {
	req := `{"system":"d20tn","skill_rank":3,"domains":2,"advantage":true}`
	_, a, _ := runTowerd(t, "", "roll", "--seed", "42", req)
	_, b, _ := runTowerd(t, "", "roll", "--seed", "42", req)
	var ra, rb map[string]any
	if json.Unmarshal([]byte(a), &ra) != nil || json.Unmarshal([]byte(b), &rb) != nil {
		t.Fatalf("bad output %q %q", a, b)
	}
	da, _ := json.Marshal(ra["dice"])
	db, _ := json.Marshal(rb["dice"])
	if string(da) != string(db) || ra["source"] != "sim" {
		t.Errorf("seed 42 gave %s and %s", da, db)
	}
}

func TestRollStdinAndFollowup(t *testing.T) {
	// an 8 on the kept d8 asks for the confirmation die, rolled last
	code, out, errs := runTowerd(t, `{"system":"ydin","attribute":4,"skill":2}`, "roll", "--faces", "8,8", "-")
	if code != 0 || !strings.Contains(out, `"outcome":"catastrophic_failure"`) {
		t.Fatalf("exit %d out %s err %s", code, out, errs)
	}
}

func TestRollErrorsExit2WithOneLine(t *testing.T) {
	for _, c := range []struct {
		args  []string
		field string
	}{
		{[]string{"roll", `{"system":"ydin","attribute":4,"skill":7}`}, "skill"},
		{[]string{"roll", "--faces", "9", `{"system":"dice","expr":"1d8"}`}, "faces"},
		{[]string{"roll", "--faces", "1", `{"system":"dice","expr":"2d8"}`}, "faces"},
		{[]string{"roll", "--faces", "x", `{"system":"dice","expr":"1d8"}`}, "faces"},
		{[]string{"roll", `{"system":"dice"}`}, "expr"},
		{[]string{"odds", `{"system":"dice","expr":"100000d6"}`}, "expr"},
		{[]string{"plan", `{"system":"nope"}`}, "system"},
	} {
		code, out, errs := runTowerd(t, "", c.args...)
		if code != 2 || out != "" {
			t.Errorf("%v: exit %d, stdout %q", c.args, code, out)
			continue
		}
		lines := strings.Split(strings.TrimSpace(errs), "\n")
		var e map[string]any
		if len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &e) != nil {
			t.Errorf("%v: stderr is not one JSON line: %q", c.args, errs)
			continue
		}
		if e["code"] != "bad_request" || e["field"] != c.field || e["message"] == "" {
			t.Errorf("%v: error %v, want field %s", c.args, e, c.field)
		}
	}
}

// TestRequestErrorsEchoTheID: a request refused as bad gets its id back
// in the error, whichever command read it (as the contract's example and
// the MQTT side do), and the same tower id.
func TestRequestErrorsEchoTheID(t *testing.T) {
	for _, cmd := range []string{"roll", "odds", "plan"} {
		code, _, errs := runTowerd(t, "", cmd, `{"id":"r-17","system":"ydin","attribute":4,"skill":7}`)
		var e map[string]any
		if code != 2 || json.Unmarshal([]byte(strings.TrimSpace(errs)), &e) != nil {
			t.Errorf("%s: exit %d, stderr %q", cmd, code, errs)
			continue
		}
		if e["id"] != "r-17" || e["tower"] != "tower-1" || e["field"] != "skill" {
			t.Errorf("%s: error %v, want id r-17, tower tower-1, field skill", cmd, e)
		}
	}
}

func TestOddsAndPlan(t *testing.T) {
	code, out, _ := runTowerd(t, "", "odds", `{"system":"ydin","attribute":4,"skill":2,"modifiers":[1]}`)
	if code != 0 || !strings.Contains(out, `"outcomes":{"critical_success":0.4375,"success":0.5,"failure":0.060546875,"catastrophic_failure":0.001953125}`) ||
		!strings.Contains(out, `"mean":3.1875`) {
		t.Fatalf("odds: %d %s", code, out)
	}
	code, out, _ = runTowerd(t, "", "plan", `{"system":"d20tn","skill_rank":1,"domains":2,"advantage":true}`)
	if code != 0 || !strings.Contains(out, `"dice":["d20","d20","d4","d6"]`) {
		t.Fatalf("plan: %d %s", code, out)
	}
}

// TestOddsSmallDecimals: the contract prints probabilities as decimals;
// 6d20's least total is 1/64,000,000, printed without an exponent and
// reading back exactly.
func TestOddsSmallDecimals(t *testing.T) {
	code, out, _ := runTowerd(t, "", "odds", `{"system":"dice","expr":"6d20"}`)
	if code != 0 || !strings.Contains(out, `"6":0.000000015625,`) || regexp.MustCompile(`[0-9][eE]`).MatchString(out) {
		t.Fatalf("odds 6d20: exit %d, %.300s", code, out)
	}
}

func TestHelpAndUnknown(t *testing.T) {
	for _, cmd := range []string{"roll", "odds", "plan"} {
		if code, _, errs := runTowerd(t, "", cmd, "--help"); code != 0 || !strings.Contains(errs, "usage: towerd "+cmd) {
			t.Errorf("%s --help: exit %d, %q", cmd, code, errs)
		}
	}
	if code, _, _ := runTowerd(t, "", "frobnicate"); code != 2 {
		t.Errorf("unknown command exit %d", code)
	}
	if code, _, _ := runTowerd(t, ""); code != 2 {
		t.Errorf("no command exit %d", code)
	}
}
