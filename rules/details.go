package rules

import "encoding/json"

// Details carries the system-specific part of an outcome; at most one field
// is set, and it marshals as that object ({} when none).
type Details struct {
	D20TN *D20TNDetails
	D4    *D4Details
	DSDN  *DSDNDetails
	YDIN  *YDINDetails
}

// D20TNDetails: the target number, bonus/setback and XP of a d20tn test.
type D20TNDetails struct {
	TN      int  `json:"tn"`
	Bonus   bool `json:"bonus"`
	Setback bool `json:"setback"`
	XP      int  `json:"xp"`
	// NarratorXP is the XP the narrating player gains (1 on a setback).
	NarratorXP int `json:"narrator_xp"`
	// Item is "effect" when an item was applied to the effect (no dice change).
	Item string `json:"item,omitempty"`
}

// D4Details: the number of d4s and, by test, the CDT fraction or damage.
type D4Details struct {
	DiceCount     int    `json:"dice_count"`
	RAD           int    `json:"rad"`
	Fraction      string `json:"fraction,omitempty"`
	AppliedEffect *int   `json:"applied_effect,omitempty"`
	Damage        *int   `json:"damage,omitempty"`
}

// DSDNDetails: the target's state after damage was applied.
type DSDNDetails struct {
	HP     int    `json:"hp"`
	AP     int    `json:"ap"`
	TempHP int    `json:"temp_hp"`
	Status string `json:"status"`
}

// YDINDetails: the die, skill level and net modifier of a ydin task.
type YDINDetails struct {
	Die         Die   `json:"die"`
	Level       int   `json:"level"`
	NetModifier int   `json:"net_modifier"`
	Confirmed   *bool `json:"confirmed,omitempty"`
}

// MarshalJSON writes the one set object, or {}.
func (d Details) MarshalJSON() ([]byte, error) {
	switch {
	case d.D20TN != nil:
		return json.Marshal(d.D20TN)
	case d.D4 != nil:
		return json.Marshal(d.D4)
	case d.DSDN != nil:
		return json.Marshal(d.DSDN)
	case d.YDIN != nil:
		return json.Marshal(d.YDIN)
	}
	return []byte("{}"), nil
}

// UnmarshalJSON keeps the raw object out of the way: results are read back
// (history, tests) as generic JSON, so Details decodes to nothing.
func (d *Details) UnmarshalJSON([]byte) error { return nil }
