package config

import (
	"fmt"
	"sort"
	"strings"
)

// pos is where a key was written: 1-based line and column.
type pos struct{ line, col int }

// Error is one problem in a configuration.
type Error struct {
	File   string // as given to Load; "" for Parse
	Line   int    // 1-based; 0 when the value was not written in the file
	Column int
	Key    string // key path, e.g. "motor.max_on_time" or "mqtt.users[0].username"
	Msg    string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("config: ")
	switch {
	case e.File != "" && e.Line > 0:
		fmt.Fprintf(&b, "%s:%d:%d: ", e.File, e.Line, e.Column)
	case e.File != "":
		fmt.Fprintf(&b, "%s: ", e.File)
	case e.Line > 0:
		fmt.Fprintf(&b, "line %d:%d: ", e.Line, e.Column)
	}
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is every problem found, in file order; it is the error type of
// Load, Parse and Validate.
type Errors []*Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap lets errors.As find the single errors.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// sorted orders errors by line, errors without a line last in the order
// they were found.
func (es Errors) sorted() Errors {
	sort.SliceStable(es, func(i, j int) bool {
		a, b := es[i], es[j]
		if (a.Line == 0) != (b.Line == 0) {
			return b.Line == 0
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	return es
}

// errorf makes an Error at key, placed where the file wrote the key (or its
// closest written parent section).
func (c *Config) errorf(key, format string, args ...any) *Error {
	e := &Error{File: c.file, Key: key, Msg: fmt.Sprintf(format, args...)}
	for k := key; k != ""; k = parentKey(k) {
		if p, ok := c.pos[k]; ok {
			e.Line, e.Column = p.line, p.col
			break
		}
	}
	return e
}

// parentKey is "motor" for "motor.profile", "mqtt.users" for
// "mqtt.users[0]", "" for "motor".
func parentKey(k string) string {
	i := strings.LastIndexAny(k, ".[")
	if i < 0 {
		return ""
	}
	return k[:i]
}
