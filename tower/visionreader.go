package tower

import (
	"image"
	"slices"

	"github.com/towerd/towerd/rules"
	"github.com/towerd/towerd/vision"
)

// VisionReader reads frames with the vision reader.
type VisionReader struct{ Reader *vision.Reader }

var _ FrameReader = (*VisionReader)(nil)

// ReadFrame implements FrameReader.
func (v *VisionReader) ReadFrame(img image.Image, physical []rules.Die) ([]Seen, error) {
	r := v.Reader
	if len(physical) > 0 {
		kinds := make([]string, 0, len(physical))
		for _, d := range physical {
			if k := d.String(); !slices.Contains(kinds, k) {
				kinds = append(kinds, k)
			}
		}
		var err error
		if r, err = r.ForKinds(kinds); err != nil {
			return nil, err
		}
	}
	dice, err := r.Read(img)
	if err != nil {
		return nil, err
	}
	return SeenDice(dice), nil
}

// SeenDice maps vision's dice onto the roll loop's; a kind vision could
// not tell stays 0, which the loop counts against the plan.
func SeenDice(dice []vision.Die) []Seen {
	out := make([]Seen, 0, len(dice))
	for _, d := range dice {
		s := Seen{Face: d.Face, Confidence: d.Confidence, Cocked: d.Cocked, Box: d.Box}
		if k, err := rules.ParseDie(d.Kind); err == nil {
			s.Die = k
		}
		out = append(out, s)
	}
	return out
}
