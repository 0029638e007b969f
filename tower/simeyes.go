package tower

import (
	"context"
	"image"
	"sync"

	"github.com/towerd/towerd/rules"
	"github.com/towerd/towerd/sim"
)

// FreeDice are what the simulated player drops for a free roll.
var FreeDice = []rules.Die{rules.D6, rules.D6}

// EntropyEyes are the simulated tower without a camera: the dice land on
// faces drawn from the entropy source and are read perfectly, at once.
type EntropyEyes struct {
	mu  sync.Mutex
	src *sim.Source
	// MisreadEvery > 0 leaves the last die of every MisreadEvery-th look
	// unread, as a camera that could not read it would, so the misread →
	// re-tumble path runs in the simulated tower too.
	MisreadEvery int
	looks        int
}

var _ Eyes = (*EntropyEyes)(nil)

// NewEntropyEyes reads faces from src (sim.NewSource for real randomness,
// sim.NewSeeded for reproducible runs).
func NewEntropyEyes(src *sim.Source) *EntropyEyes { return &EntropyEyes{src: src} }

// Look draws a face for every physical die, laid out left to right with
// each percentile die next to its d10.
func (e *EntropyEyes) Look(ctx context.Context, physical []rules.Die, settled func()) (Look, error) {
	if err := ctx.Err(); err != nil {
		return Look{}, err
	}
	if len(physical) == 0 {
		physical = FreeDice
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Seen, len(physical))
	for i, d := range physical {
		var f int
		switch d {
		case rules.D10:
			f = e.src.Face(10) % 10
		case rules.D100:
			f = (e.src.Face(10) - 1) * 10
		default:
			f = e.src.Face(int(d))
		}
		out[i] = Seen{Die: d, Face: &f, Confidence: 1, Box: image.Rect(i*40, 0, i*40+30, 30)}
	}
	e.looks++
	if e.MisreadEvery > 0 && e.looks%e.MisreadEvery == 0 {
		last := &out[len(out)-1]
		last.Face, last.Confidence = nil, 0
	}
	settled()
	return Look{Dice: out}, nil
}
