package vision

import (
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"slices"

	"github.com/towerd/towerd/vision/dataset"
)

// ViewSizes is how large each kind of die lies in one camera's view, from
// the enrolment's labelled boxes. A die found in a photo of that view
// whose box is well outside its kind's range is only part of a die (its
// shaded side, the lit half of a light die on a light floor) or more than
// one: the face read through such a box is a guess, and is left unread.
type ViewSizes struct {
	Width  int                  `json:"width"`
	Height int                  `json:"height"`
	Kinds  map[string]SizeRange `json:"kinds"`
}

// SizeRange is the least and greatest width and height of a kind's boxes,
// in photo pixels.
type SizeRange struct {
	W [2]int `json:"w"`
	H [2]int `json:"h"`
}

// Size limits: the labelled boxes of a kind it takes to know its range,
// the share of them at each end left out of it (a stray label, a photo of
// another size: a scene needs nine in ten of one size), and how far beyond
// the range a box may lie, a tenth either way (boxes found at reading are
// not labelled ones; on the stand-in sets none of the right readings lay
// beyond a tenth) and a pixel of the scale dice are found at.
const (
	sizeMinDice = 30
	sizeTrim    = 0.01
	sizeSlack   = 0.1
)

// learnSizes returns the size ranges of the set's labelled boxes, per kind
// with enough of them, for photos of size (nil when no kind has enough).
func learnSizes(set *dataset.Set, size image.Point) *ViewSizes {
	boxes := map[string][]image.Rectangle{}
	for _, f := range set.Files {
		for _, l := range set.Labels[f] {
			if l.HasBox {
				boxes[l.Die] = append(boxes[l.Die], l.Box)
			}
		}
	}
	return sizesOf(size, boxes)
}

// LocatedSizes is the size range of kind in the view of photos of size
// view from the boxes enrolment located for dice labelled without one
// (Scene.Locate, or LocateAlone where no tray was kept): found as
// reading finds dice, they make a range for the same check where no box
// was labelled. Nil with fewer than sizeMinDice boxes.
func LocatedSizes(view image.Point, kind string, boxes []image.Rectangle) *ViewSizes {
	return sizesOf(view, map[string][]image.Rectangle{kind: boxes})
}

// sizesOf is the size range of each kind with enough boxes (nil when no
// kind has enough) in photos of size.
func sizesOf(size image.Point, boxes map[string][]image.Rectangle) *ViewSizes {
	v := &ViewSizes{Width: size.X, Height: size.Y, Kinds: map[string]SizeRange{}}
	for k, bs := range boxes {
		if len(bs) < sizeMinDice {
			continue
		}
		ws, hs := make([]int, len(bs)), make([]int, len(bs))
		for i, b := range bs {
			ws[i], hs[i] = b.Dx(), b.Dy()
		}
		v.Kinds[k] = SizeRange{trimmedRange(ws), trimmedRange(hs)}
	}
	if len(v.Kinds) == 0 {
		return nil
	}
	return v
}

// trimmedRange is the least and greatest of v once sizeTrim of them at
// each end are left out.
func trimmedRange(v []int) [2]int {
	slices.Sort(v)
	k := int(sizeTrim * float64(len(v)))
	return [2]int{v[k], v[len(v)-1-k]}
}

// parseSizes decodes and checks a model's sizes.
func parseSizes(b json.RawMessage) (*ViewSizes, error) {
	var v ViewSizes
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("sizes: %w", err)
	}
	if v.Width <= 0 || v.Height <= 0 {
		return nil, fmt.Errorf("sizes: photo %dx%d", v.Width, v.Height)
	}
	if len(v.Kinds) == 0 {
		// Sizes without a kind would only narrow the kinds looked for.
		return nil, errors.New("sizes: no kinds")
	}
	for k, r := range v.Kinds {
		if !slices.Contains(Kinds, k) {
			return nil, fmt.Errorf("sizes: %q is not a dice kind", k)
		}
		if r.W[0] <= 0 || r.W[0] > r.W[1] || r.H[0] <= 0 || r.H[0] > r.H[1] {
			return nil, fmt.Errorf("sizes: %s: range w %v h %v", k, r.W, r.H)
		}
	}
	return &v, nil
}

// fits reports whether box, in a photo of bounds, may be a whole die of
// kind: true when nothing is known of the kind in a view of that size.
func (v *ViewSizes) fits(bounds image.Rectangle, kind string, box image.Rectangle) bool {
	if !v.shows(bounds) {
		return true
	}
	r, ok := v.Kinds[kind]
	if !ok {
		return true
	}
	px := float64(max(v.Width, v.Height)) / coarseSide // the coarsest scale dice are found at
	in := func(x int, lim [2]int) bool {
		return float64(x) >= (1-sizeSlack)*float64(lim[0])-px && float64(x) <= (1+sizeSlack)*float64(lim[1])+px
	}
	return in(box.Dx(), r.W) && in(box.Dy(), r.H)
}

// shows reports whether a photo of bounds may be of the view: it is of the
// view's size (without a learnt tray nothing else tells the view).
func (v *ViewSizes) shows(bounds image.Rectangle) bool {
	return v != nil && bounds.Dx() == v.Width && bounds.Dy() == v.Height
}
