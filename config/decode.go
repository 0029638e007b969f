package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"

	"github.com/towerd/towerd/rules"
)

// maxDepth bounds nesting (the schema is 3 deep; requests a little more).
const maxDepth = 32

// secretKeys are never echoed in error messages.
var secretKeys = map[string]bool{"mqtt.password": true}

// decode parses data and decodes it onto c. goccy/go-yaml's strict decoder
// does the decoding, but it is lenient with scalars (3.7 into an int,
// 12 into a string, .nan) and some of its errors carry no position, so a
// check of the syntax tree against the schema runs first: it rejects wrong
// types, unknown keys and unsupported YAML with the key path and line, and
// records where each key was written for Validate's messages.
func (c *Config) decode(data []byte) error {
	c.pos = map[string]pos{}
	file, err := parser.ParseBytes(data, 0)
	if err != nil {
		return Errors{c.yamlError(err)}
	}
	var body ast.Node
	for _, doc := range file.Docs {
		if doc == nil || doc.Body == nil {
			continue
		}
		if body != nil {
			p := doc.Body.GetToken().Position
			return Errors{{File: c.file, Line: p.Line, Column: p.Column, Msg: "only one YAML document is allowed"}}
		}
		body = doc.Body
	}
	if body == nil || body.Type() == ast.NullType {
		return nil // an empty file: every key keeps its default
	}
	k := &checker{file: c.file, pos: c.pos}
	k.node("", body, reflect.TypeOf(*c), reflect.ValueOf(*c))
	if len(k.errs) > 0 {
		return k.errs.sorted()
	}
	if err := yaml.NodeToValue(body, c, yaml.Strict()); err != nil {
		return Errors{c.yamlError(err)}
	}
	return nil
}

// yamlError turns an error of goccy/go-yaml into an *Error at the key
// written closest before its position.
func (c *Config) yamlError(err error) *Error {
	e := &Error{File: c.file, Msg: err.Error()}
	var ye yaml.Error
	if errors.As(err, &ye) {
		e.Msg = ye.GetMessage()
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			e.Line, e.Column = tk.Position.Line, tk.Position.Column
			best := pos{}
			for k, p := range c.pos {
				if (p.line < e.Line || p.line == e.Line && p.col <= e.Column) &&
					(p.line > best.line || p.line == best.line && p.col > best.col) {
					best, e.Key = p, k
				}
			}
		}
	}
	return e
}

var (
	durationType = reflect.TypeOf(time.Duration(0))
	byteSizeType = reflect.TypeOf(ByteSize(0))
	requestType  = reflect.TypeOf(Request(nil))
	dieType      = reflect.TypeOf(rules.Die(0))
)

// checker walks the syntax tree beside the Go type it will be decoded into.
type checker struct {
	file  string
	pos   map[string]pos
	errs  Errors
	depth int
}

func (k *checker) errorf(n ast.Node, key, format string, args ...any) {
	e := &Error{File: k.file, Key: key, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		if tk := n.GetToken(); tk != nil && tk.Position != nil {
			e.Line, e.Column = tk.Position.Line, tk.Position.Column
		}
	}
	if p, ok := k.pos[key]; ok && e.Line == 0 {
		e.Line, e.Column = p.line, p.col
	}
	k.errs = append(k.errs, e)
}

// node checks n against t; def is the default value, for messages.
func (k *checker) node(key string, n ast.Node, t reflect.Type, def reflect.Value) {
	k.depth++
	defer func() { k.depth-- }()
	if k.depth > maxDepth {
		k.errorf(n, key, "nested too deeply")
		return
	}
	if n == nil {
		n = ast.Null(nil)
	}
	switch n.(type) {
	case *ast.AnchorNode, *ast.AliasNode:
		k.errorf(n, key, "YAML anchors and aliases are not supported here")
		return
	case *ast.TagNode:
		k.errorf(n, key, "YAML tags (!!type) are not supported here")
		return
	}
	null := n.Type() == ast.NullType
	switch t {
	case durationType:
		switch {
		case null:
			k.noValue(n, key, def)
		case isInt(n) && intValue(n) == "0":
			// a bare 0 needs no unit
		case isString(n):
			if _, err := time.ParseDuration(stringValue(n)); err != nil {
				k.errorf(n, key, "want a duration like \"30ms\", \"1.5s\" or \"2m\", got %s", k.shown(key, n))
			}
		default:
			k.errorf(n, key, "want a duration with a unit, like \"30ms\", \"1.5s\" or \"2m\", got %s", k.shown(key, n))
		}
		return
	case byteSizeType:
		switch {
		case null:
			k.noValue(n, key, def)
		case isInt(n) || isString(n):
			txt := scalarText(n)
			if isInt(n) {
				txt = intValue(n)
			}
			if _, err := ParseByteSize(txt); err != nil {
				k.errorf(n, key, "%v", err)
			}
		default:
			k.errorf(n, key, "want a size like 10MiB, 512KiB or a number of bytes, got %s", k.shown(key, n))
		}
		return
	case requestType:
		if null && def.IsValid() && def.Len() > 0 {
			k.noValue(n, key, def)
		} else if !null {
			if _, err := requestJSON(n); err != nil {
				k.errorf(n, key, "%v", err)
			}
		}
		return
	case dieType:
		if !isString(n) {
			k.errorf(n, key, "want a die kind (d4, d6, d8, d10, d12, d20, d100), got %s", k.shown(key, n))
		} else if _, err := rules.ParseDie(stringValue(n)); err != nil {
			k.errorf(n, key, "want a die kind (d4, d6, d8, d10, d12, d20, d100), got %s", k.shown(key, n))
		}
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		if null {
			return // an empty section keeps its defaults
		}
		m, ok := n.(ast.MapNode)
		if !ok {
			k.errorf(n, key, "want a section of keys (a mapping), got %s", k.shown(key, n))
			return
		}
		k.mapping(key, m, t, def)
	case reflect.Pointer:
		if null {
			return // not used
		}
		var d reflect.Value
		if def.IsValid() && !def.IsNil() {
			d = def.Elem()
		}
		k.node(key, n, t.Elem(), d)
	case reflect.Slice:
		if null {
			if def.IsValid() && def.Len() > 0 {
				k.noValue(n, key, def)
			}
			return
		}
		seq, ok := n.(*ast.SequenceNode)
		if !ok {
			k.errorf(n, key, "want a list, got %s", k.shown(key, n))
			return
		}
		for i, v := range seq.Values {
			sub := fmt.Sprintf("%s[%d]", key, i)
			if tk := v.GetToken(); tk != nil && tk.Position != nil {
				k.pos[sub] = pos{tk.Position.Line, tk.Position.Column}
			}
			k.node(sub, v, t.Elem(), reflect.Value{})
		}
	case reflect.String:
		switch {
		case null:
			k.noValue(n, key, def)
		case isString(n):
		case isScalar(n) && !secretKeys[key]:
			k.errorf(n, key, "want a string, got %s (quote it: \"%s\")", k.shown(key, n), scalarText(n))
		default:
			k.errorf(n, key, "want a string, got %s", k.shown(key, n))
		}
	case reflect.Bool:
		switch {
		case null:
			k.noValue(n, key, def)
		case n.Type() != ast.BoolType:
			k.errorf(n, key, "want true or false, got %s", k.shown(key, n))
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		switch {
		case null:
			k.noValue(n, key, def)
		case isBigNumber(n):
			k.errorf(n, key, "number %s is out of range", scalarText(n))
		case !isInt(n):
			k.errorf(n, key, "want a whole number, got %s", k.shown(key, n))
		default:
			v, err := strconv.ParseInt(intValue(n), 0, 64)
			if err != nil || reflect.New(t).Elem().OverflowInt(v) {
				k.errorf(n, key, "number %s is out of range", scalarText(n))
			}
		}
	case reflect.Float32, reflect.Float64:
		switch {
		case null:
			k.noValue(n, key, def)
		case n.Type() == ast.InfinityType || n.Type() == ast.NanType:
			k.errorf(n, key, "want a finite number, got %s", scalarText(n))
		case !isInt(n) && n.Type() != ast.FloatType:
			k.errorf(n, key, "want a number, got %s", k.shown(key, n))
		}
	default:
		k.errorf(n, key, "internal: no check for %s", t) // a schema change without a check
	}
}

// mapping checks the keys of a section.
func (k *checker) mapping(key string, m ast.MapNode, t reflect.Type, def reflect.Value) {
	names := map[string]int{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		names[name] = i
	}
	it := m.MapRange()
	for it.Next() {
		kv := it.KeyValue()
		if kv.Key.IsMergeKey() {
			k.errorf(kv.Key, key, "YAML merge keys (<<) are not supported here")
			continue
		}
		s, ok := kv.Key.(*ast.StringNode)
		if !ok {
			k.errorf(kv.Key, key, "a key must be a name, got %s", describe(kv.Key))
			continue
		}
		sub := s.Value
		if key != "" {
			sub = key + "." + s.Value
		}
		if tk := kv.Key.GetToken(); tk != nil && tk.Position != nil {
			k.pos[sub] = pos{tk.Position.Line, tk.Position.Column}
		}
		i, ok := names[s.Value]
		if !ok {
			k.errorf(kv.Key, sub, "unknown key%s", suggest(s.Value, names, key))
			continue
		}
		var d reflect.Value
		if def.IsValid() {
			d = def.Field(i)
		}
		k.node(sub, kv.Value, t.Field(i).Type, d)
		if t.Field(i).Type == durationType && isInt(kv.Value) && intValue(kv.Value) == "0" {
			// A bare 0 needs no unit, but the decoder takes a duration
			// only as text: hand it "0s".
			kv.Value = ast.String(token.String("0s", "0", kv.Value.GetToken().Position))
		}
	}
}

func (k *checker) noValue(n ast.Node, key string, def reflect.Value) {
	if def.IsValid() {
		k.errorf(n, key, "no value given; delete the key to keep the default (%s)", showValue(def))
		return
	}
	k.errorf(n, key, "no value given")
}

// shown describes what was written, with the value unless it is secret.
func (k *checker) shown(key string, n ast.Node) string {
	d := describe(n)
	if isScalar(n) && n.Type() != ast.NullType && !secretKeys[key] {
		t := scalarText(n)
		if len(t) > 40 {
			t = t[:40] + "…"
		}
		d += " " + strconv.Quote(t)
	}
	return d
}

// suggest names the key that was probably meant, or lists the section's keys.
func suggest(got string, names map[string]int, section string) string {
	list := make([]string, 0, len(names))
	for n := range names {
		list = append(list, n)
	}
	sort.Strings(list)
	best, bestD := "", 1<<30
	for _, n := range list {
		if d := editDistance(got, n); d < bestD {
			best, bestD = n, d
		}
	}
	if bestD <= 2 || bestD <= len(got)/3 {
		return fmt.Sprintf("; did you mean %q?", best)
	}
	where := "top-level keys"
	if section != "" {
		where = section + " keys"
	}
	return fmt.Sprintf(" (%s: %s)", where, strings.Join(list, ", "))
}

// editDistance is the Levenshtein distance; names here are short.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func describe(n ast.Node) string {
	switch n.Type() {
	case ast.NullType:
		return "nothing"
	case ast.BoolType:
		return "a boolean"
	case ast.IntegerType:
		return "a whole number"
	case ast.FloatType, ast.InfinityType, ast.NanType:
		return "a number"
	case ast.StringType, ast.LiteralType:
		return "a string"
	case ast.MappingType, ast.MappingValueType:
		return "a mapping"
	case ast.SequenceType:
		return "a list"
	case ast.AnchorType, ast.AliasType:
		return "an anchor or alias"
	case ast.TagType:
		return "a tagged value"
	}
	return strings.ToLower(n.Type().String())
}

func isScalar(n ast.Node) bool {
	switch n.Type() {
	case ast.NullType, ast.BoolType, ast.IntegerType, ast.FloatType, ast.InfinityType,
		ast.NanType, ast.StringType, ast.LiteralType:
		return true
	}
	return false
}

func isString(n ast.Node) bool {
	return n.Type() == ast.StringType || n.Type() == ast.LiteralType
}

func isInt(n ast.Node) bool { return n.Type() == ast.IntegerType }

// isBigNumber reports an unquoted integer too large for the parser, which
// then reads it as a string.
func isBigNumber(n ast.Node) bool {
	s, ok := n.(*ast.StringNode)
	if !ok || s.Token == nil || s.Token.Type != token.StringType {
		return false
	}
	t := strings.TrimLeft(s.Value, "+-")
	return t != "" && strings.Trim(t, "0123456789") == ""
}

// stringValue is the decoded text of a string node.
func stringValue(n ast.Node) string {
	switch s := n.(type) {
	case *ast.StringNode:
		return s.Value
	case *ast.LiteralNode:
		if s.Value != nil {
			return s.Value.Value
		}
	}
	return ""
}

// scalarText is a scalar as written (strings decoded).
func scalarText(n ast.Node) string {
	if isString(n) {
		return stringValue(n)
	}
	if tk := n.GetToken(); tk != nil {
		return tk.Value
	}
	return ""
}

// intValue is an integer node's value as decimal text.
func intValue(n ast.Node) string {
	if in, ok := n.(*ast.IntegerNode); ok {
		return fmt.Sprint(in.Value)
	}
	return scalarText(n)
}

// showValue prints a default for a message.
func showValue(v reflect.Value) string {
	switch x := v.Interface().(type) {
	case time.Duration:
		return x.String()
	case ByteSize:
		return x.String()
	case string:
		return strconv.Quote(x)
	}
	return fmt.Sprint(v.Interface())
}

// Request is a roll request kept as JSON for rules.ParseRequest. In YAML it
// is written as a mapping ({system: dice, expr: 2d6}) or as a string
// holding the JSON text. An empty Request means none.
type Request []byte

// UnmarshalYAML implements yaml.NodeUnmarshaler.
func (r *Request) UnmarshalYAML(n ast.Node) error {
	if n == nil || n.Type() == ast.NullType {
		*r = nil
		return nil
	}
	b, err := requestJSON(n)
	if err != nil {
		return err
	}
	*r = b
	return nil
}

// MarshalYAML writes the request as a JSON object, which is YAML too.
func (r Request) MarshalYAML() ([]byte, error) {
	if len(r) == 0 {
		return []byte("null"), nil
	}
	return r, nil
}

// String is the JSON text.
func (r Request) String() string { return string(r) }

// requestJSON converts a request written in YAML to compact JSON.
func requestJSON(n ast.Node) (Request, error) {
	const want = "want a roll request: a mapping like {system: dice, expr: 2d6}, or its JSON text"
	if isString(n) {
		s := strings.TrimSpace(stringValue(n))
		if !strings.HasPrefix(s, "{") {
			return nil, errors.New(want)
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, []byte(s)); err != nil {
			return nil, fmt.Errorf("the request is not valid JSON: %v", err)
		}
		return Request(buf.Bytes()), nil
	}
	if _, ok := n.(ast.MapNode); !ok {
		return nil, errors.New(want)
	}
	var buf bytes.Buffer
	if err := toJSON(&buf, n, 0); err != nil {
		return nil, err
	}
	return Request(buf.Bytes()), nil
}

// toJSON writes a YAML value as JSON, keys in the order written.
func toJSON(buf *bytes.Buffer, n ast.Node, depth int) error {
	if depth > maxDepth {
		return errors.New("the request is nested too deeply")
	}
	where := func() string {
		if tk := n.GetToken(); tk != nil && tk.Position != nil {
			return fmt.Sprintf(" (line %d)", tk.Position.Line)
		}
		return ""
	}
	switch v := n.(type) {
	case ast.MapNode:
		buf.WriteByte('{')
		it := v.MapRange()
		first := true
		for it.Next() {
			kv := it.KeyValue()
			s, ok := kv.Key.(*ast.StringNode)
			if !ok || kv.Key.IsMergeKey() {
				return fmt.Errorf("a request field name must be a name, got %s%s", describe(kv.Key), where())
			}
			if !first {
				buf.WriteByte(',')
			}
			first = false
			name, _ := json.Marshal(s.Value)
			buf.Write(name)
			buf.WriteByte(':')
			val := kv.Value
			if val == nil {
				val = ast.Null(nil)
			}
			if err := toJSON(buf, val, depth+1); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
		return nil
	case *ast.SequenceNode:
		buf.WriteByte('[')
		for i, e := range v.Values {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := toJSON(buf, e, depth+1); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
		return nil
	case *ast.NullNode:
		buf.WriteString("null")
		return nil
	case *ast.BoolNode:
		buf.WriteString(strconv.FormatBool(v.Value))
		return nil
	case *ast.IntegerNode:
		buf.WriteString(intValue(v))
		return nil
	case *ast.FloatNode:
		if math.IsNaN(v.Value) || math.IsInf(v.Value, 0) {
			return fmt.Errorf("a request number must be finite%s", where())
		}
		buf.WriteString(strconv.FormatFloat(v.Value, 'g', -1, 64))
		return nil
	case *ast.StringNode, *ast.LiteralNode:
		b, _ := json.Marshal(stringValue(n))
		buf.Write(b)
		return nil
	}
	return fmt.Errorf("a request cannot hold %s%s", describe(n), where())
}
