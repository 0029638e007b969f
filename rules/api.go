// Package rules turns roll requests into dice plans, resolves the faces that
// landed into outcomes under the four game systems and plain notation, and
// computes exact odds; it is pure Go with no I/O.
package rules

import (
	"encoding/json"
	"fmt"
	"time"
)

// Die is a die kind by its number of sides: 4, 6, 8, 10, 12, 20 or 100.
// In the rules a d10 shows 1–10 and a d100 shows 1–100 (a d% roll); the
// physical reading of a "0" on a d10 or a percentile pair is mapped to these
// by the roll loop before it reaches the rules.
type Die int

// The die kinds the tower can roll and read.
const (
	D4   Die = 4
	D6   Die = 6
	D8   Die = 8
	D10  Die = 10
	D12  Die = 12
	D20  Die = 20
	D100 Die = 100
)

// Kinds lists every die kind in ascending order.
var Kinds = []Die{D4, D6, D8, D10, D12, D20, D100}

// Valid reports whether d is a die the tower can roll.
func (d Die) Valid() bool {
	switch d {
	case D4, D6, D8, D10, D12, D20, D100:
		return true
	}
	return false
}

func (d Die) String() string { return fmt.Sprintf("d%d", int(d)) }

// ParseDie reads "d8" (or "D8"; "d%" is d100).
func ParseDie(s string) (Die, error) {
	if s == "d%" || s == "D%" {
		return D100, nil
	}
	var n int
	if len(s) < 2 || (s[0] != 'd' && s[0] != 'D') {
		return 0, fmt.Errorf("rules: %q is not a die (d4, d6, d8, d10, d12, d20, d100)", s)
	}
	if _, err := fmt.Sscanf(s[1:], "%d", &n); err != nil || fmt.Sprint(n) != s[1:] || !Die(n).Valid() {
		return 0, fmt.Errorf("rules: %q is not a die (d4, d6, d8, d10, d12, d20, d100)", s)
	}
	return Die(n), nil
}

// MarshalText writes "d8".
func (d Die) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads "d8".
func (d *Die) UnmarshalText(b []byte) error {
	v, err := ParseDie(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// Error codes of the wire contract.
const (
	CodeBadRequest = "bad_request"
	CodeBusy       = "busy"
	CodeMisread    = "misread"
	CodeHardware   = "hardware"
	CodeTimeout    = "timeout"
)

// Error is a rejected request or a failed roll, with the contract's code and
// the offending field (empty when no single field is to blame).
type Error struct {
	Code    string
	Field   string
	Message string
}

func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("rules: %s: %s", e.Field, e.Message)
	}
	return "rules: " + e.Message
}

// ErrorMsg is the wire form of an error (the contract's Error object).
type ErrorMsg struct {
	V       int       `json:"v"`
	ID      string    `json:"id,omitempty"`
	Tower   string    `json:"tower"`
	At      time.Time `json:"at"`
	Code    string    `json:"code"`
	Field   string    `json:"field,omitempty"`
	Message string    `json:"message"`
}

// DieFace is one die that landed and the value the rules use for it.
type DieFace struct {
	Die  Die `json:"die"`
	Face int `json:"face"`
}

// RolledDie is a die in a result: its face and whether it counts.
type RolledDie struct {
	Die  Die  `json:"die"`
	Face int  `json:"face"`
	Kept bool `json:"kept"`
	// Followup marks a die rolled after the plan (the ydin confirmation die).
	Followup bool `json:"followup,omitempty"`
}

// Plan is the dice a request needs, in the order faces are given.
type Plan struct {
	System string `json:"system"`
	// Dice to drop in the tower first, in plan order.
	Dice []Die `json:"dice"`
	// Free is true for a dice request without expr: whatever lands is read
	// and summed, so Dice is empty.
	Free bool `json:"free,omitempty"`
	// Followup describes dice that some outcomes ask for afterwards.
	Followup []FollowupRule `json:"followup,omitempty"`
	// Text is a short human line, e.g. "drop 2 d8".
	Text string `json:"text"`
}

// FollowupRule says which die may be needed after the plan, and when.
type FollowupRule struct {
	Die  Die    `json:"die"`
	When string `json:"when"`
}

// Result is the wire form of a resolved roll (the contract's Result object).
type Result struct {
	V       int             `json:"v"`
	ID      string          `json:"id,omitempty"`
	Label   string          `json:"label,omitempty"`
	Tower   string          `json:"tower"`
	Seq     uint64          `json:"seq"`
	At      time.Time       `json:"at"`
	Source  string          `json:"source"`
	System  string          `json:"system"`
	Request json.RawMessage `json:"request"`
	Outcome
}

// Outcome is what the rules make of a request and its faces.
type Outcome struct {
	Dice    []RolledDie  `json:"dice"`
	Total   int          `json:"total"`
	Target  *int         `json:"target,omitempty"`
	Outcome string       `json:"outcome"`
	Odds    *OutcomeOdds `json:"odds,omitempty"`
	Text    string       `json:"text"`
	Details Details      `json:"details"`
}

// Sources of faces.
const (
	SourceCamera = "camera"
	SourceSim    = "sim"
	SourceManual = "manual"
)
