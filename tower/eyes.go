package tower

import (
	"context"
	"errors"
	"fmt"
	"image"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/towerd/towerd/rules"
)

// Seen is one die the tower saw in the tray after a tumble.
type Seen struct {
	// Die is the kind; 0 when the kind could not be told.
	Die rules.Die
	// Face is the physical up face as vision reports it (d10 0–9, the
	// percentile d100 0, 10, …, 90); nil when it could not be read.
	Face *int
	// Confidence in the face, 0–1.
	Confidence float64
	// Cocked: the die leans on something with no face straight up.
	Cocked bool
	// Box is where it lies in the frame; it pairs a percentile die with
	// the d10 nearest to it.
	Box image.Rectangle
}

// Look is what one tumble showed.
type Look struct {
	Dice []Seen
	// Settle is how long the dice took to come to rest after the motor
	// started (0 when not measured).
	Settle time.Duration
}

// Eyes watch the tray. Look is called just before the motor starts and
// runs alongside the tumble: it waits for the dice to come to rest, calls
// settled once they are still (the reading begins) and returns what it
// read. physical are the dice the player dropped, as physical dice (a d100
// is a percentile die and a d10); the simulators use it to stage the
// scene, a camera ignores it. Errors wrap ErrHardware or ErrSettle.
type Eyes interface {
	Look(ctx context.Context, physical []rules.Die, settled func()) (Look, error)
}

// Prober is Eyes that can tell whether they work again after a fault
// (a camera plugged back in) without a roll.
type Prober interface {
	Probe(ctx context.Context) error
}

// Errors of a roll, mapped to the contract's codes.
var (
	// ErrHardware: motor, camera or button fault ("hardware").
	ErrHardware = errors.New("tower: hardware fault")
	// ErrSettle: the dice did not come to rest in time ("timeout").
	ErrSettle = errors.New("tower: dice did not settle in time")
)

// Misread says why the dice seen cannot be taken as the dice planned. It is
// never resolved: the tower tumbles again or answers "misread".
type Misread struct{ Reason string }

func (m *Misread) Error() string { return "misread: " + m.Reason }

// Physical lists the dice a player drops for planned rules dice: a d100 is
// rolled as a percentile die (00–90) and a d10 (0–9).
func Physical(planned []rules.Die) []rules.Die {
	out := make([]rules.Die, 0, len(planned)+1)
	for _, d := range planned {
		out = append(out, d)
		if d == rules.D100 {
			out = append(out, rules.D10)
		}
	}
	return out
}

// RulesFace turns a physical face into the rules' face: a d10's 0 is 10.
func RulesFace(d rules.Die, physical int) int {
	if d == rules.D10 && physical == 0 {
		return 10
	}
	return physical
}

// percentile is the rules' d100 face of a percentile pair: 00 and 0 is 100.
func percentile(tens, units int) int {
	if v := tens + units; v != 0 {
		return v
	}
	return 100
}

func validPhysical(d rules.Die, f int) bool {
	switch d {
	case rules.D10:
		return f >= 0 && f <= 9
	case rules.D100:
		return f >= 0 && f <= 90 && f%10 == 0
	}
	return f >= 1 && f <= int(d)
}

// checkSeen refuses any die the tower could not read: never guessed.
func checkSeen(seen []Seen) error {
	for _, s := range seen {
		switch {
		case s.Cocked:
			return &Misread{Reason: fmt.Sprintf("a %s is cocked", kindName(s.Die))}
		case s.Die == 0:
			return &Misread{Reason: "a die of unknown kind"}
		case s.Face == nil:
			return &Misread{Reason: fmt.Sprintf("a %s could not be read", s.Die)}
		case !validPhysical(s.Die, *s.Face):
			return &Misread{Reason: fmt.Sprintf("a %s read as %d, which it does not have", s.Die, *s.Face)}
		}
	}
	return nil
}

func kindName(d rules.Die) string {
	if d == 0 {
		return "die"
	}
	return d.String()
}

// byPlace orders dice left to right, then top to bottom, so the same tray
// always gives the same order.
func byPlace(seen []Seen) []Seen {
	s := slices.Clone(seen)
	sort.SliceStable(s, func(i, j int) bool {
		a, b := s[i].Box.Min, s[j].Box.Min
		if a.X != b.X {
			return a.X < b.X
		}
		return a.Y < b.Y
	})
	return s
}

func center(r image.Rectangle) (float64, float64) {
	return float64(r.Min.X+r.Max.X) / 2, float64(r.Min.Y+r.Max.Y) / 2
}

// pairPercentiles pairs each percentile die with the nearest unpaired d10
// (closest pair first); it returns the pairs' rules faces, in the order of
// the percentile dice, and the d10s left over. ok is false when there are
// fewer d10s than percentile dice.
func pairPercentiles(pct, d10 []Seen) (faces []int, rest []Seen, ok bool) {
	if len(d10) < len(pct) {
		return nil, nil, false
	}
	type cand struct {
		p, u int
		dist float64
	}
	var cs []cand
	for i, p := range pct {
		px, py := center(p.Box)
		for j, u := range d10 {
			ux, uy := center(u.Box)
			cs = append(cs, cand{i, j, math.Hypot(px-ux, py-uy)})
		}
	}
	sort.SliceStable(cs, func(a, b int) bool { return cs[a].dist < cs[b].dist })
	partner := make([]int, len(pct))
	for i := range partner {
		partner[i] = -1
	}
	used := make([]bool, len(d10))
	for _, c := range cs {
		if partner[c.p] < 0 && !used[c.u] {
			partner[c.p], used[c.u] = c.u, true
		}
	}
	for i, p := range pct {
		faces = append(faces, percentile(*p.Face, *d10[partner[i]].Face))
	}
	for j, u := range d10 {
		if !used[j] {
			rest = append(rest, u)
		}
	}
	return faces, rest, true
}

// Assign turns the dice seen into the rules' faces in plan order. The dice
// seen must be exactly the planned ones: any other count, an unread or
// cocked die is a *Misread. Dice of one kind are interchangeable in every
// system towerd plays, so they are taken in tray order.
func Assign(planned []rules.Die, seen []Seen) ([]int, error) {
	if err := checkSeen(seen); err != nil {
		return nil, err
	}
	want := map[rules.Die]int{}
	for _, d := range Physical(planned) {
		want[d]++
	}
	got := map[rules.Die][]Seen{}
	for _, s := range byPlace(seen) {
		got[s.Die] = append(got[s.Die], s)
	}
	var diff []string
	for _, k := range rules.Kinds {
		if len(got[k]) != want[k] {
			diff = append(diff, fmt.Sprintf("%d %s (planned %d)", len(got[k]), k, want[k]))
		}
	}
	if len(diff) > 0 {
		return nil, &Misread{Reason: "saw " + strings.Join(diff, ", ")}
	}
	pct, d10, _ := pairPercentiles(got[rules.D100], got[rules.D10])
	next := map[rules.Die]int{}
	faces := make([]int, len(planned))
	for i, d := range planned {
		n := next[d]
		next[d]++
		switch d {
		case rules.D100:
			faces[i] = pct[n]
		case rules.D10:
			faces[i] = RulesFace(d, *d10[n].Face)
		default:
			faces[i] = *got[d][n].Face
		}
	}
	return faces, nil
}

// AssignFree turns whatever landed into rules dice for a free roll: each
// percentile die is paired with the nearest d10. A percentile die with no
// d10 to pair with, or an empty tray, is a *Misread.
func AssignFree(seen []Seen) ([]rules.DieFace, error) {
	if err := checkSeen(seen); err != nil {
		return nil, err
	}
	if len(seen) == 0 {
		return nil, &Misread{Reason: "no dice in the tray"}
	}
	got := map[rules.Die][]Seen{}
	for _, s := range byPlace(seen) {
		got[s.Die] = append(got[s.Die], s)
	}
	pct, d10, ok := pairPercentiles(got[rules.D100], got[rules.D10])
	if !ok {
		return nil, &Misread{Reason: fmt.Sprintf("%d percentile dice but only %d d10 to pair them with", len(got[rules.D100]), len(got[rules.D10]))}
	}
	var out []rules.DieFace
	for _, k := range rules.Kinds {
		switch k {
		case rules.D100:
			for _, f := range pct {
				out = append(out, rules.DieFace{Die: k, Face: f})
			}
		case rules.D10:
			for _, s := range d10 {
				out = append(out, rules.DieFace{Die: k, Face: RulesFace(k, *s.Face)})
			}
		default:
			for _, s := range got[k] {
				out = append(out, rules.DieFace{Die: k, Face: *s.Face})
			}
		}
	}
	return out, nil
}
