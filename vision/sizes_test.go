package vision

import (
	"encoding/json"
	"fmt"
	"image"
	"strings"
	"testing"

	"github.com/towerd/towerd/rules"
	"github.com/towerd/towerd/sim/render"
	"github.com/towerd/towerd/vision/dataset"
)

// sizedClassifier is a model that carries die sizes and its kinds, as an
// enrolled *numeral.Model does.
type sizedClassifier struct {
	fixedClassifier
	sizes string
	kinds []string
}

func (s sizedClassifier) Sizes() json.RawMessage { return json.RawMessage(s.sizes) }
func (s sizedClassifier) Kinds() []string        { return s.kinds }

// TestLearnSizes: the size range of a kind is that of its labelled boxes,
// known only with enough of them; LearnScene reports it for photos that
// share one view.
func TestLearnSizes(t *testing.T) {
	set := &dataset.Set{Dir: "mem", Labels: map[string][]dataset.Label{}}
	for i := range sizeMinDice {
		f := fmt.Sprintf("p%02d.png", i)
		set.Files = append(set.Files, f)
		set.Labels[f] = []dataset.Label{
			{File: f, Die: "d20", Box: image.Rect(10, 10, 60+i, 70-i/2), HasBox: true},
			{File: f, Die: "d20"}, // no box: says nothing of the size
		}
		if i < sizeMinDice-1 {
			set.Labels[f] = append(set.Labels[f], dataset.Label{File: f, Die: "d8", Box: image.Rect(0, 0, 40, 40), HasBox: true})
		}
	}
	// A hundred d12 boxes, one of them a stray label: left out of the range.
	for i := range 100 {
		f := set.Files[i%len(set.Files)]
		b := image.Rect(0, 0, 30+i%7, 30+i%5)
		if i == 50 {
			b = image.Rect(0, 0, 4, 300)
		}
		set.Labels[f] = append(set.Labels[f], dataset.Label{File: f, Die: "d12", Box: b, HasBox: true})
	}
	v := learnSizes(set, image.Pt(640, 480))
	want := SizeRange{W: [2]int{50, 50 + sizeMinDice - 1}, H: [2]int{60 - (sizeMinDice-1)/2, 60}}
	if v == nil || v.Width != 640 || v.Height != 480 || len(v.Kinds) != 2 || v.Kinds["d20"] != want {
		t.Fatalf("sizes %+v, want d20 (at %+v) and d12, not d8 (%d boxes)", v, want, sizeMinDice-1)
	}
	if got, want := v.Kinds["d12"], (SizeRange{W: [2]int{30, 36}, H: [2]int{30, 34}}); got != want {
		t.Errorf("d12 with a stray box: %+v, want %+v", got, want)
	}
	if v := learnSizes(&dataset.Set{}, image.Pt(640, 480)); v != nil {
		t.Errorf("sizes of no boxes: %+v", v)
	}

	set, decode := oneTraySet(t, 40, func(b image.Rectangle) image.Rectangle { return b })
	lo, hi := 1<<30, 0
	for _, ls := range set.Labels {
		for _, l := range ls {
			lo, hi = min(lo, l.Box.Dx()), max(hi, l.Box.Dx())
		}
	}
	_, rep, err := LearnScene(set, decode)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sizes == nil || rep.Sizes.Kinds["d20"].W != [2]int{lo, hi} {
		t.Errorf("LearnScene sizes %+v, want d20 widths %d–%d", rep.Sizes, lo, hi)
	}
}

// TestSizesLeaveOddBoxesUnread: in a photo of the model's view, a face read
// through a box well outside its kind's sizes is left unread (the die is
// still reported, so the tower re-tumbles); within them, or in a photo of
// another size, it stands. A model's sizes that make no sense are refused.
func TestSizesLeaveOddBoxesUnread(t *testing.T) {
	img, _ := render.MustRender(render.RandomScene(11, []rules.Die{rules.D20}, render.Options{}))
	model := fixedClassifier{"d20", 11, 0.99}
	plain, err := NewReader(Options{Model: model})
	if err != nil {
		t.Fatal(err)
	}
	a, err := plain.Read(img)
	if err != nil || len(a) != 1 || a[0].Face == nil {
		t.Fatalf("read %+v, %v; want the one die read", a, err)
	}
	w, h := a[0].Box.Dx(), a[0].Box.Dy()
	sizes := func(width, height, w0, w1, h0, h1 int) string {
		return fmt.Sprintf(`{"width":%d,"height":%d,"kinds":{"d20":{"w":[%d,%d],"h":[%d,%d]}}}`, width, height, w0, w1, h0, h1)
	}
	// A pixel of the coarse scale (640 px wide: 1.6) is allowed beyond the
	// tenth; these lie well within or well beyond it for a die of ~60 px.
	in, out := func(x int) int { return x * 100 / 106 }, func(x int) int { return x * 100 / 117 }
	bg, _ := render.MustRender(func() render.Scene {
		sc := render.RandomScene(11, []rules.Die{rules.D20}, render.Options{})
		sc.Dice = nil
		return sc
	}())
	for _, tc := range []struct {
		name       string
		sizes      string
		background image.Image
		read       bool
	}{
		{"its size", sizes(640, 480, w-3, w+3, h-3, h+3), nil, true},
		{"within a tenth, small", sizes(640, 480, w*106/100, 2*w, h-3, h+3), nil, true},
		{"within a tenth, large", sizes(640, 480, w/2, in(w), h-3, h+3), nil, true},
		{"beyond a tenth, small", sizes(640, 480, w*117/100, 2*w, h-3, h+3), nil, false},
		{"beyond a tenth, large", sizes(640, 480, w/2, out(w), h-3, h+3), nil, false},
		{"beyond a tenth, short", sizes(640, 480, w-3, w+3, h*117/100, 2*h), nil, false},
		{"half the size", sizes(640, 480, 2*w, 3*w, 2*h, 3*h), nil, false},
		{"twice the size", sizes(640, 480, w/3, w/2, h/3, h/2), nil, false},
		{"another view", sizes(1280, 960, 2*w, 3*w, 2*h, 3*h), nil, true},
		{"another kind", strings.Replace(sizes(640, 480, 2*w, 3*w, 2*h, 3*h), "d20", "d8", 1), nil, true},
		// An empty-tray photo's boxes are not those the sizes were
		// learnt with (they hold the shadow).
		{"empty-tray photo", sizes(640, 480, 2*w, 3*w, 2*h, 3*h), bg, true},
	} {
		r, err := NewReader(Options{Model: sizedClassifier{model, tc.sizes, []string{"d20"}}, Background: tc.background})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got, err := r.Read(img)
		if err != nil || len(got) != 1 || got[0].Kind != "d20" || (tc.background == nil && got[0].Box != a[0].Box) {
			t.Fatalf("%s: read %+v, %v; want the d20 in %v", tc.name, got, err, a[0].Box)
		}
		if read := got[0].Face != nil; read != tc.read {
			t.Errorf("%s: face %v, want read %v", tc.name, got[0].Face, tc.read)
		}
		if got[0].Face == nil && got[0].Confidence >= r.opts.MinConfidence {
			t.Errorf("%s: null face with confidence %g", tc.name, got[0].Confidence)
		}
	}
	for _, bad := range []string{
		`{"width":0,"height":480,"kinds":{"d20":{"w":[1,2],"h":[1,2]}}}`,
		`{"width":640,"height":480,"kinds":{}}`,
		`{"width":640,"height":480}`,
		`{"width":640,"height":480,"kinds":{"d7":{"w":[1,2],"h":[1,2]}}}`,
		`{"width":640,"height":480,"kinds":{"d20":{"w":[60,50],"h":[1,2]}}}`,
		`{"width":640,"height":480,"kinds":{"d20":{"w":[0,50],"h":[1,2]}}}`,
		`[1,2]`,
	} {
		if _, err := NewReader(Options{Model: sizedClassifier{model, bad, []string{"d20"}}}); err == nil || !strings.Contains(err.Error(), "sizes") {
			t.Errorf("sizes %s: %v", bad, err)
		}
	}
}

// TestSizedViewHasOnlyEnrolledKinds: in a photo of the view of a model with
// sizes and no learnt tray, only the enrolled kinds are looked for, as in
// a learnt tray's view: a pip d6 is not reported as one when the set had
// none (the pip counter took a d20's round marks for a 1), but is in a
// photo of another size.
func TestSizedViewHasOnlyEnrolledKinds(t *testing.T) {
	img, truth := render.MustRender(render.RandomScene(3, []rules.Die{rules.D6}, render.Options{D6: render.D6Pips, Faces: []int{5}}))
	model := fixedClassifier{"d20", 11, 0.3} // unsure of what it never saw
	sized := sizedClassifier{model, `{"width":640,"height":480,"kinds":{"d20":{"w":[50,70],"h":[50,70]}}}`, []string{"d20"}}
	for _, tc := range []struct {
		name   string
		model  FaceClassifier
		wantD6 bool
	}{
		{"no sizes", model, true},
		{"the view", sized, false},
		{"another view", sizedClassifier{model, strings.Replace(sized.sizes, "640", "800", 1), []string{"d20"}}, true},
	} {
		r, err := NewReader(Options{Model: tc.model})
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.Read(img)
		if err != nil {
			t.Fatal(err)
		}
		d6 := false
		for _, d := range got {
			if d.Kind == "d6" && d.Face != nil {
				d6 = d6 || *d.Face == truth[0].Face
			}
		}
		if d6 != tc.wantD6 {
			t.Errorf("%s: read %+v; want the pip d6 %d read: %v", tc.name, got, truth[0].Face, tc.wantD6)
		}
	}
}

// sceneSizedClassifier carries a learnt scene, die sizes and its kinds,
// as a model enrolled on one view with labelled boxes does.
type sceneSizedClassifier struct {
	sizedClassifier
	scene json.RawMessage
}

func (s sceneSizedClassifier) Scene() json.RawMessage { return s.scene }

// TestSizesHoldOffTheLearntTray: a photo of the view's size that the
// learnt tray does not show (a corrupt frame, a moved tray; here another
// tray) is most likely the same camera's: only the enrolled kinds are
// looked for and a box well beyond its kind's size leaves the face
// unread, as in the view. Before, such a frame was read for every kind
// without the sizes (a die read through a box cut short reads a
// confident wrong face: on the 45° stand-in cast green, 12 as 1).
func TestSizesHoldOffTheLearntTray(t *testing.T) {
	set, decode := rollerSet(newRollerScene(1), 30, 1)
	s, rep, err := LearnScene(set, decode)
	if err != nil || s == nil {
		t.Fatalf("LearnScene: %v, %+v", err, rep)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	fixed := fixedClassifier{"d20", 11, 0.99}
	plain, err := NewReader(Options{Model: sceneClassifier{fixed, b}})
	if err != nil {
		t.Fatal(err)
	}
	// A photo of another floor: a rendered tray.
	img, truth := render.MustRender(render.RandomScene(11, []rules.Die{rules.D20}, render.Options{}))
	want := truth[0].Box
	a, err := plain.Read(img)
	if err != nil || len(a) != 1 || a[0].Face == nil || !centre(a[0].Box).In(want) {
		t.Fatalf("read %+v, %v; want the one die read", a, err)
	}
	if _, inView := plain.forPhoto(img); inView {
		t.Fatal("the learnt roller's floor shows a rendered tray; the test no longer shows what it is for")
	}
	w, h := a[0].Box.Dx(), a[0].Box.Dy()
	for _, tc := range []struct {
		name  string
		sizes string
		read  bool
	}{
		{"its size", fmt.Sprintf(`{"width":640,"height":480,"kinds":{"d20":{"w":[%d,%d],"h":[%d,%d]}}}`, w-3, w+3, h-3, h+3), true},
		{"twice its size", fmt.Sprintf(`{"width":640,"height":480,"kinds":{"d20":{"w":[%d,%d],"h":[%d,%d]}}}`, 2*w, 3*w, 2*h, 3*h), false},
		{"another view", fmt.Sprintf(`{"width":800,"height":600,"kinds":{"d20":{"w":[%d,%d],"h":[%d,%d]}}}`, 2*w, 3*w, 2*h, 3*h), true},
	} {
		r, err := NewReader(Options{Model: sceneSizedClassifier{sizedClassifier{fixed, tc.sizes, []string{"d20"}}, b}})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		v, inView := r.forPhoto(img)
		if sameSize := !strings.Contains(tc.name, "another"); inView || (v != r) != sameSize || v.allows("d6") == sameSize {
			t.Errorf("%s: in view %v, reader for the photo allows d6 %v; want not in view, only d20 looked for %v", tc.name, inView, v.allows("d6"), sameSize)
		}
		got, err := r.Read(img)
		if err != nil || len(got) != 1 || !centre(got[0].Box).In(want) {
			t.Fatalf("%s: read %+v, %v; want the die in %v", tc.name, got, err, want)
		}
		if read := got[0].Face != nil; read != tc.read {
			t.Errorf("%s: face %v, want read %v", tc.name, got[0].Face, tc.read)
		}
	}
}

// TestLocatedSizes: located boxes give their kind's range in the view,
// as labelled boxes do, once there are enough of them.
func TestLocatedSizes(t *testing.T) {
	view := image.Pt(640, 480)
	var boxes []image.Rectangle
	for i := range sizeMinDice {
		boxes = append(boxes, image.Rect(100, 100, 150+i, 160-i/2))
	}
	v := LocatedSizes(view, "d20", boxes)
	want := SizeRange{W: [2]int{50, 50 + sizeMinDice - 1}, H: [2]int{60 - (sizeMinDice-1)/2, 60}}
	if v == nil || v.Width != 640 || v.Height != 480 || len(v.Kinds) != 1 || v.Kinds["d20"] != want {
		t.Errorf("located sizes %+v, want d20 at %+v in 640x480", v, want)
	}
	if v := LocatedSizes(view, "d20", boxes[1:]); v != nil {
		t.Errorf("sizes of %d boxes: %+v, want none", sizeMinDice-1, v)
	}
}
