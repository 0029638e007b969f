package rules

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxRequestBytes bounds a request document.
const MaxRequestBytes = 16 << 10

// Systems lists the system names of the wire contract.
var Systems = []string{"dice", "dsdn", "d20tn", "d4tactical", "ydin"}

// fields is a request object read strictly: keys in order, each used at most
// once, and every key must be consumed by the system's decoder.
type fields struct {
	keys   []string
	raw    map[string]json.RawMessage
	used   map[string]bool
	system string
}

func badf(field, format string, a ...any) *Error {
	return &Error{Code: CodeBadRequest, Field: field, Message: fmt.Sprintf(format, a...)}
}

// readObject splits a JSON object into its members without interpreting
// the values.
func readObject(data []byte) (*fields, error) {
	if len(data) > MaxRequestBytes {
		return nil, badf("", "request is %d bytes; the limit is %d", len(data), MaxRequestBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, badf("", "request is not valid JSON: %v", cleanJSONErr(err))
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, badf("", "request must be a JSON object")
	}
	f := &fields{raw: map[string]json.RawMessage{}, used: map[string]bool{}}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, badf("", "request is not valid JSON: %v", cleanJSONErr(err))
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, badf(k, "value is not valid JSON: %v", cleanJSONErr(err))
		}
		if _, dup := f.raw[k]; dup {
			return nil, badf(k, "field given twice")
		}
		f.keys = append(f.keys, k)
		f.raw[k] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, badf("", "request is not valid JSON: %v", cleanJSONErr(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, badf("", "request must be a single JSON object")
	}
	return f, nil
}

func cleanJSONErr(err error) string {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return "unexpected end of input"
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

func (f *fields) has(name string) bool { _, ok := f.raw[name]; return ok }

func (f *fields) take(name string) (json.RawMessage, bool) {
	v, ok := f.raw[name]
	if ok {
		f.used[name] = true
	}
	return v, ok
}

func kindOf(v json.RawMessage) string {
	switch {
	case len(v) == 0:
		return "nothing"
	case v[0] == '"':
		return "a string"
	case v[0] == '{':
		return "an object"
	case v[0] == '[':
		return "a list"
	case v[0] == 't' || v[0] == 'f':
		return "a boolean"
	case v[0] == 'n':
		return "null"
	}
	return "a number " + string(v)
}

// parseInt reads a JSON number without fraction or exponent.
func parseInt(v json.RawMessage) (int, bool) {
	s := string(v)
	if s == "" || strings.ContainsAny(s, ".eE") {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n > 1<<40 || n < -(1<<40) {
		return 0, false
	}
	return int(n), true
}

// intField reads an optional integer in [lo, hi] (hi < lo: no upper bound).
func (f *fields) intField(name string, def, lo, hi int) (int, error) {
	v, ok := f.take(name)
	if !ok {
		return def, nil
	}
	return intValue(name, v, lo, hi)
}

func rangeText(lo, hi int) string {
	if hi < lo {
		return fmt.Sprintf("≥ %d", lo)
	}
	return fmt.Sprintf("%d-%d", lo, hi)
}

func intValue(name string, v json.RawMessage, lo, hi int) (int, error) {
	n, ok := parseInt(v)
	if !ok {
		if len(v) > 0 && (v[0] == '-' || (v[0] >= '0' && v[0] <= '9')) {
			return 0, badf(name, "%s must be an integer (%s), got %s", name, rangeText(lo, hi), v)
		}
		return 0, badf(name, "%s must be an integer (%s), got %s", name, rangeText(lo, hi), kindOf(v))
	}
	if n < lo || (hi >= lo && n > hi) {
		return 0, badf(name, "%s must be %s, got %d", name, rangeText(lo, hi), n)
	}
	return n, nil
}

// reqInt reads a required integer.
func (f *fields) reqInt(name string, lo, hi int) (int, error) {
	if !f.has(name) {
		return 0, badf(name, "%s is required (an integer %s)", name, rangeText(lo, hi))
	}
	return f.intField(name, 0, lo, hi)
}

func (f *fields) boolField(name string, def bool) (bool, error) {
	v, ok := f.take(name)
	if !ok {
		return def, nil
	}
	switch string(v) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, badf(name, "%s must be true or false, got %s", name, kindOf(v))
}

func (f *fields) strField(name, def string, maxLen int) (string, error) {
	v, ok := f.take(name)
	if !ok {
		return def, nil
	}
	if len(v) == 0 || v[0] != '"' {
		return "", badf(name, "%s must be a string, got %s", name, kindOf(v))
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", badf(name, "%s is not a valid string", name)
	}
	// Characters, as the contract and JSON Schema's maxLength count them:
	// a label of 200 snowmen is 600 bytes.
	if n := utf8.RuneCountInString(s); n > maxLen {
		return "", badf(name, "%s must be at most %d characters, got %d", name, maxLen, n)
	}
	return s, nil
}

// enumField reads a string that must be one of allowed (allowed[0] is the default).
func (f *fields) enumField(name string, allowed ...string) (string, error) {
	if !f.has(name) {
		return allowed[0], nil
	}
	s, err := f.strField(name, "", 64)
	if err != nil {
		return "", badf(name, "%s must be one of %s", name, strings.Join(allowed, ", "))
	}
	for _, a := range allowed {
		if s == a {
			return s, nil
		}
	}
	return "", badf(name, "%s must be one of %s, got %q", name, strings.Join(allowed, ", "), s)
}

// intList reads a list of integers each in [lo, hi], at most maxLen long.
func (f *fields) intList(name string, lo, hi, maxLen int, skipZero bool) ([]int, error) {
	v, ok := f.take(name)
	if !ok {
		return nil, nil
	}
	if len(v) == 0 || v[0] != '[' {
		return nil, badf(name, "%s must be a list of integers, got %s", name, kindOf(v))
	}
	var items []json.RawMessage
	if err := json.Unmarshal(v, &items); err != nil {
		return nil, badf(name, "%s must be a list of integers", name)
	}
	if len(items) > maxLen {
		return nil, badf(name, "%s may have at most %d items, got %d", name, maxLen, len(items))
	}
	out := make([]int, 0, len(items))
	for i, it := range items {
		el := fmt.Sprintf("%s[%d]", name, i)
		n, ok := parseInt(it)
		if !ok || n < lo || n > hi || (skipZero && n == 0) {
			what := kindOf(it)
			if ok {
				what = strconv.Itoa(n)
			}
			rng := rangeText(lo, hi)
			if skipZero {
				rng = fmt.Sprintf("%d to -1 or 1 to %d", lo, hi)
			}
			return nil, badf(el, "%s must be an integer %s, got %s", el, rng, what)
		}
		out = append(out, n)
	}
	return out, nil
}

// unused reports the first field no decoder consumed.
func (f *fields) unused() error {
	for _, k := range f.keys {
		if !f.used[k] {
			return badf(k, "unknown field %q for system %s", k, f.system)
		}
	}
	return nil
}

// echo is the object without id and label, members in the order given.
func (f *fields) echo() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	n := 0
	for _, k := range f.keys {
		if k == "id" || k == "label" {
			continue
		}
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		if err := json.Compact(&b, f.raw[k]); err != nil {
			b.Write(f.raw[k])
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}

// ParseRequest decodes and validates a JSON request. Errors are *Error with
// CodeBadRequest naming the field at fault.
func ParseRequest(data []byte) (*Request, error) {
	f, err := readObject(data)
	if err != nil {
		return nil, err
	}
	r := &Request{}
	if r.ID, err = f.strField("id", "", 64); err != nil {
		return nil, err
	}
	if r.Label, err = f.strField("label", "", 200); err != nil {
		return nil, err
	}
	if !f.has("system") {
		return nil, badf("system", "system is required (one of %s)", strings.Join(Systems, ", "))
	}
	if r.System, err = f.enumField("system", Systems...); err != nil {
		return nil, err
	}
	f.system = r.System
	switch r.System {
	case "dice":
		r.g, err = decodeDice(f)
	case "dsdn":
		r.g, err = decodeDSDN(f)
	case "d20tn":
		r.g, err = decodeD20TN(f)
	case "d4tactical":
		r.g, err = decodeD4(f)
	case "ydin":
		r.g, err = decodeYDIN(f)
	}
	if err != nil {
		return nil, err
	}
	if err := f.unused(); err != nil {
		return nil, err
	}
	r.Echo = f.echo()
	return r, nil
}

// exprField reads a notation field.
func (f *fields) exprField(name string, required bool) (*Expr, error) {
	if !f.has(name) {
		if required {
			return nil, badf(name, "%s is required (dice notation such as 2d6+1)", name)
		}
		return nil, nil
	}
	s, err := f.strField(name, "", MaxExprBytes)
	if err != nil {
		return nil, err
	}
	e, err := ParseExpr(s)
	if err != nil {
		return nil, badf(name, "%s: %v", name, err)
	}
	return e, nil
}

// PeekID reads a top-level string "id" from whatever JSON object p starts
// with, stopping at the first problem; it looks at the first 64 KiB only.
// A request refused as bad still has its error carry the id it was sent
// with, where one can be read.
func PeekID(p []byte) string {
	p = p[:min(len(p), 64<<10)]
	dec := json.NewDecoder(bytes.NewReader(p))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return ""
		}
		if k, _ := t.(string); k == "id" {
			v, err := dec.Token()
			s, ok := v.(string)
			if err != nil || !ok || len(s) > 256 || !utf8.ValidString(s) {
				return ""
			}
			return s
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return ""
		}
	}
	return ""
}
