// Package schema holds the JSON Schemas of the wire contract and checks the
// documented examples and real outputs against them.
package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/towerd/towerd/rules"
)

// validator checks a document against the subset of JSON Schema the three
// schema files use: type, const, enum, properties, required,
// additionalProperties, items, min/maxItems, minimum, maximum, maxLength,
// oneOf and local $ref.
type validator struct{ root map[string]any }

func load(t *testing.T, name string) *validator {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return &validator{root: m}
}

func (v *validator) validate(doc any) error { return v.check(v.root, doc, "$") }

func (v *validator) resolve(s map[string]any) map[string]any {
	for {
		ref, ok := s["$ref"].(string)
		if !ok {
			return s
		}
		name := strings.TrimPrefix(ref, "#/$defs/")
		s = v.root["$defs"].(map[string]any)[name].(map[string]any)
	}
}

func isInt(x any) bool {
	f, ok := x.(float64)
	return ok && f == float64(int64(f))
}

func (v *validator) check(s map[string]any, doc any, path string) error {
	s = v.resolve(s)
	if c, ok := s["const"]; ok && fmt.Sprint(c) != fmt.Sprint(doc) {
		return fmt.Errorf("%s: want %v, got %v", path, c, doc)
	}
	if e, ok := s["enum"].([]any); ok {
		found := false
		for _, x := range e {
			if fmt.Sprint(x) == fmt.Sprint(doc) {
				found = true
			}
		}
		if !found {
			return fmt.Errorf("%s: %v not in %v", path, doc, e)
		}
	}
	switch s["type"] {
	case "object":
		if _, ok := doc.(map[string]any); !ok {
			return fmt.Errorf("%s: not an object", path)
		}
	case "array":
		if _, ok := doc.([]any); !ok {
			return fmt.Errorf("%s: not an array", path)
		}
	case "string":
		if _, ok := doc.(string); !ok {
			return fmt.Errorf("%s: not a string", path)
		}
	case "integer":
		if !isInt(doc) {
			return fmt.Errorf("%s: not an integer", path)
		}
	case "number":
		if _, ok := doc.(float64); !ok {
			return fmt.Errorf("%s: not a number", path)
		}
	case "boolean":
		if _, ok := doc.(bool); !ok {
			return fmt.Errorf("%s: not a boolean", path)
		}
	}
	if f, ok := doc.(float64); ok {
		if m, ok := s["minimum"].(float64); ok && f < m {
			return fmt.Errorf("%s: %v < %v", path, f, m)
		}
		if m, ok := s["maximum"].(float64); ok && f > m {
			return fmt.Errorf("%s: %v > %v", path, f, m)
		}
	}
	if str, ok := doc.(string); ok {
		if m, ok := s["maxLength"].(float64); ok && float64(len([]rune(str))) > m {
			return fmt.Errorf("%s: longer than %v", path, m)
		}
	}
	if arr, ok := doc.([]any); ok {
		if m, ok := s["maxItems"].(float64); ok && float64(len(arr)) > m {
			return fmt.Errorf("%s: more than %v items", path, m)
		}
		if m, ok := s["minItems"].(float64); ok && float64(len(arr)) < m {
			return fmt.Errorf("%s: fewer than %v items", path, m)
		}
		if it, ok := s["items"].(map[string]any); ok {
			for i, x := range arr {
				if err := v.check(it, x, fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
		}
	}
	if obj, ok := doc.(map[string]any); ok {
		for _, r := range asSlice(s["required"]) {
			if _, ok := obj[r.(string)]; !ok {
				return fmt.Errorf("%s: missing %s", path, r)
			}
		}
		props, _ := s["properties"].(map[string]any)
		for k, x := range obj {
			if ps, ok := props[k].(map[string]any); ok {
				if err := v.check(ps, x, path+"."+k); err != nil {
					return err
				}
				continue
			}
			switch ap := s["additionalProperties"].(type) {
			case bool:
				if !ap {
					return fmt.Errorf("%s: unknown field %s", path, k)
				}
			case map[string]any:
				if err := v.check(ap, x, path+"."+k); err != nil {
					return err
				}
			}
		}
	}
	if one := asSlice(s["oneOf"]); len(one) > 0 {
		n := 0
		var last error
		for _, sub := range one {
			if err := v.check(sub.(map[string]any), doc, path); err == nil {
				n++
			} else {
				last = err
			}
		}
		if n != 1 {
			return fmt.Errorf("%s: matches %d of oneOf (last error: %v)", path, n, last)
		}
	}
	return nil
}

func asSlice(x any) []any { s, _ := x.([]any); return s }

func decode(t *testing.T, b []byte) any {
	t.Helper()
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return doc
}

var fence = regexp.MustCompile("(?s)```json\n(.*?)```")

// TestDocumentedExamples validates every request, result and error shown in
// the README and docs.
func TestDocumentedExamples(t *testing.T) {
	req, res, errs := load(t, "request.schema.json"), load(t, "result.schema.json"), load(t, "error.schema.json")
	files, _ := filepath.Glob("../docs/*.md")
	files = append(files, "../README.md")
	checked := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range fence.FindAllSubmatch(b, -1) {
			var doc map[string]any
			if json.Unmarshal(m[1], &doc) != nil {
				continue // not one JSON document (several lines, or a fragment)
			}
			var v *validator
			switch {
			case doc["code"] != nil && doc["v"] != nil:
				v = errs
			case doc["outcome"] != nil && doc["v"] != nil:
				v = res
			case doc["system"] != nil && doc["outcome"] == nil && doc["dice"] == nil:
				v = req
			default:
				continue
			}
			checked++
			if err := v.validate(any(doc)); err != nil {
				t.Errorf("%s: %v\n%s", f, err, m[1])
			}
		}
	}
	if checked < 3 {
		t.Fatalf("only %d examples found in README and docs", checked)
	}
}

// TestRealOutputsValidate resolves requests of every system and validates
// what towerd would send.
func TestRealOutputsValidate(t *testing.T) {
	req, res, errs := load(t, "request.schema.json"), load(t, "result.schema.json"), load(t, "error.schema.json")
	for _, js := range []string{
		`{"id":"a","label":"L","system":"dice","expr":"2d6+1d8-1"}`,
		`{"system":"dsdn","roll":"attack","target":14,"advantage":1,"modifier":3}`,
		`{"system":"dsdn","roll":"damage","expr":"2d6","damage_type":"radiation","apply":{"kind":"machine","hp":5,"max_hp":9,"temp_hp":2}}`,
		`{"system":"d20tn","trauma":2,"skill_rank":3,"domains":2,"advantage":true,"item":"effect"}`,
		`{"system":"d4tactical","abilities":[3,4,4],"test":"cdt","dt":12,"effect":8,"boon":1}`,
		`{"system":"d4tactical","rad":2,"test":"attack","dt":5,"magic_damage":2}`,
		`{"system":"ydin","attribute":4,"skill":2,"modifiers":[1]}`,
		`{"system":"ydin","attribute":2,"mode":"over","modifiers":[-1,2]}`,
	} {
		if err := req.validate(decode(t, []byte(js))); err != nil {
			t.Errorf("request %s: %v", js, err)
		}
		r, err := rules.ParseRequest([]byte(js))
		if err != nil {
			t.Fatal(err)
		}
		var faces []int
		for need := r.Need(nil); len(need) > 0; need = r.Need(faces) {
			for _, d := range need {
				faces = append(faces, int(d))
			}
		}
		o, err := r.Resolve(faces)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(rules.NewResult(r, o, "tower-1", 7, time.Unix(0, 0), rules.SourceSim))
		if err := res.validate(decode(t, b)); err != nil {
			t.Errorf("result %s: %v", b, err)
		}
	}
	_, perr := rules.ParseRequest([]byte(`{"system":"ydin","attribute":9}`))
	b, _ := json.Marshal(rules.NewErrorMsg("x", "tower-1", time.Unix(0, 0), perr, rules.CodeBadRequest))
	if err := errs.validate(decode(t, b)); err != nil {
		t.Errorf("error %s: %v", b, err)
	}
}

// TestSchemaRejectsWhatRulesRejects: bad requests fail both.
func TestSchemaRejectsWhatRulesRejects(t *testing.T) {
	req, res := load(t, "request.schema.json"), load(t, "result.schema.json")
	for _, js := range []string{
		`{"system":"ydin","attribute":4,"skill":7}`,
		`{"system":"ydin","attribute":4.5}`,
		`{"system":"ydin"}`,
		`{"system":"poker"}`,
		`{"system":"dice","expr":"2d6","colour":"red"}`,
		`{"system":"d20tn","skill_rank":6}`,
		`{"system":"d4tactical","rad":2,"boon":9,"dt":4}`,
		`{"system":"ydin","attribute":3,"modifiers":[0]}`,
		`{"system":"dsdn","target":1,"apply":{"hp":1,"shield":3}}`,
	} {
		if _, err := rules.ParseRequest([]byte(js)); err == nil {
			t.Errorf("rules accepted %s", js)
		}
		if err := req.validate(decode(t, []byte(js))); err == nil {
			t.Errorf("schema accepted %s", js)
		}
	}
	if err := res.validate(decode(t, []byte(`{"v":2}`))); err == nil {
		t.Error("result schema accepted {\"v\":2}")
	}
	var b bytes.Buffer
	b.WriteString(`{"v":1,"tower":"t","seq":-1,"at":"x","source":"sim","system":"dice","request":{},"dice":[],"total":1,"outcome":"rolled","text":"","details":{}}`)
	if err := res.validate(decode(t, b.Bytes())); err == nil {
		t.Error("result schema accepted seq -1")
	}
}
