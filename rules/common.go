package rules

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// checkFaces verifies that faces cover want exactly (plan dice then
// follow-ups) and that each lies on its die.
func checkFaces(faces []int, want []Die) error {
	if len(faces) != len(want) {
		what := "too few"
		if len(faces) > len(want) {
			what = "too many"
		}
		return badf("faces", "%s faces: the roll needs %d (%s), got %d", what, len(want), dieList(want), len(faces))
	}
	for i, f := range faces {
		if f < 1 || f > int(want[i]) {
			return badf("faces", "faces[%d] is a %s and shows 1-%d, got %d", i, want[i], int(want[i]), f)
		}
	}
	return nil
}

func dieList(ds []Die) string {
	if len(ds) == 0 {
		return "no dice"
	}
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = d.String()
	}
	return strings.Join(parts, ", ")
}

// dropText says which dice to drop, grouped by kind in plan order:
// "drop 2 d8", "drop 1 d20, 1 d6 and 1 d4".
func dropText(ds []Die) string {
	if len(ds) == 0 {
		return "no dice to drop"
	}
	var kinds []Die
	count := map[Die]int{}
	for _, d := range ds {
		if count[d] == 0 {
			kinds = append(kinds, d)
		}
		count[d]++
	}
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%d %s", count[k], k)
	}
	if len(parts) == 1 {
		return "drop " + parts[0]
	}
	return "drop " + strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// remaining returns the plan dice not yet covered by n faces.
func remaining(plan []Die, n int) []Die {
	if n >= len(plan) {
		return nil
	}
	return plan[n:]
}

// textBuf builds a result's text line cheaply.
type textBuf struct{ b []byte }

func newText(label string) *textBuf {
	t := &textBuf{b: make([]byte, 0, 96)}
	if label != "" {
		t.b = append(t.b, oneLine(label)...)
		t.b = append(t.b, ": "...)
	}
	return t
}

// oneLine replaces the control characters and line and paragraph
// separators of s, which the player typed, with spaces: a result's text
// is one line a display or a chat bot prints as it is (the request echo
// keeps s as given).
func oneLine(s string) string {
	breaks := func(r rune) bool { return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' }
	if strings.IndexFunc(s, breaks) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if breaks(r) {
			return ' '
		}
		return r
	}, s)
}

func (t *textBuf) s(s string) *textBuf { t.b = append(t.b, s...); return t }
func (t *textBuf) i(n int) *textBuf    { t.b = strconv.AppendInt(t.b, int64(n), 10); return t }

// signed writes " +3" or " -2" (nothing for 0).
func (t *textBuf) signed(n int) *textBuf {
	switch {
	case n > 0:
		t.b = append(t.b, " +"...)
	case n < 0:
		t.b = append(t.b, " -"...)
		n = -n
	default:
		return t
	}
	t.b = strconv.AppendInt(t.b, int64(n), 10)
	return t
}

// faces writes "3, (7), 5": dropped dice in parentheses.
func (t *textBuf) faces(ds []RolledDie) *textBuf {
	for i, d := range ds {
		if i > 0 {
			t.b = append(t.b, ", "...)
		}
		if !d.Kept {
			t.b = append(t.b, '(')
		}
		t.b = strconv.AppendInt(t.b, int64(d.Face), 10)
		if !d.Kept {
			t.b = append(t.b, ')')
		}
	}
	return t
}

func (t *textBuf) outcome(o string) *textBuf {
	t.b = append(t.b, ": "...)
	t.b = append(t.b, strings.ReplaceAll(o, "_", " ")...)
	return t
}

func (t *textBuf) String() string { return string(t.b) }

func intp(n int) *int { return &n }
