package render

import (
	"bytes"
	"image"
	"image/color"
	"strings"
	"testing"

	"github.com/towerd/towerd/rules"
)

func meanLuma(img *image.RGBA, r image.Rectangle) float64 {
	r = r.Intersect(img.Rect)
	sum, n := 0.0, 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			i := img.PixOffset(x, y)
			sum += 0.299*float64(img.Pix[i]) + 0.587*float64(img.Pix[i+1]) + 0.114*float64(img.Pix[i+2])
			n++
		}
	}
	return sum / float64(n)
}

func TestDeterministic(t *testing.T) {
	kinds := []rules.Die{rules.D6, rules.D20, rules.D100}
	a, ta := MustRender(RandomScene(7, kinds, Options{}))
	b, tb := MustRender(RandomScene(7, kinds, Options{}))
	if !bytes.Equal(a.Pix, b.Pix) {
		t.Fatal("same seed rendered different pixels")
	}
	for i := range ta {
		if ta[i] != tb[i] {
			t.Fatalf("same seed, different truth: %+v vs %+v", ta[i], tb[i])
		}
	}
	c, _ := MustRender(RandomScene(8, kinds, Options{}))
	if bytes.Equal(a.Pix, c.Pix) {
		t.Fatal("different seeds rendered the same pixels")
	}
}

// TestEveryKindAndFace draws each physical face of each kind alone on a
// plain tray and checks the truth and that something die-like was drawn
// inside the box of a plausible size.
func TestEveryKindAndFace(t *testing.T) {
	felt := color.NRGBA{R: 30, G: 60, B: 40, A: 255}
	for _, k := range rules.Kinds {
		fs := Faces(k)
		// First, middle and last faces: enough to catch a broken kind
		// without drawing all 72 faces on every run.
		for _, f := range []int{fs[0], fs[len(fs)/2], fs[len(fs)-1]} {
			for _, pips := range []bool{false, true} {
				if pips && k != rules.D6 {
					continue
				}
				s := Scene{Width: 640, Height: 480, Felt: felt, Noise: 2, Seed: uint64(f),
					Dice: []Die{{Kind: k, Face: f, Pips: pips, X: 320, Y: 240, Angle: float64(f) * 0.3, Tilt: 0.1}}}
				img, truth := MustRender(s)
				if len(truth) != 1 {
					t.Fatalf("%v %d: %d truths", k, f, len(truth))
				}
				tr := truth[0]
				if tr.Kind != k || tr.Face != f || tr.Pips != pips || tr.Cocked || tr.OffTray || tr.Touching {
					t.Fatalf("%v %d: truth %+v", k, f, tr)
				}
				w, h := tr.Box.Dx(), tr.Box.Dy()
				if w < 45 || w > 100 || h < 45 || h > 100 {
					t.Errorf("%v %d: box %v is not die-sized", k, f, tr.Box)
				}
				if !tr.Center.In(tr.Box) {
					t.Errorf("%v %d: centre %v outside box %v", k, f, tr.Center, tr.Box)
				}
				// Ivory die on dark felt: the box is much brighter than the
				// tray away from it.
				inside := meanLuma(img, tr.Box.Inset(w/4))
				outside := meanLuma(img, image.Rect(60, 60, 160, 160))
				if inside < outside+60 {
					t.Errorf("%v %d: die not drawn: inside %.0f, felt %.0f", k, f, inside, outside)
				}
			}
		}
	}
}

func TestD6SizeAt640(t *testing.T) {
	_, tr := MustRender(Scene{Width: 640, Height: 480, Dice: []Die{{Kind: rules.D6, Face: 1, X: 320, Y: 240}}})
	if w := tr[0].Box.Dx(); w < 60 || w > 90 {
		t.Fatalf("unrotated d6 is %d px across, want 60–90", w)
	}
}

func TestValidate(t *testing.T) {
	cases := []struct {
		s    Scene
		want string
	}{
		{Scene{Width: 0, Height: 480}, "frame size"},
		{Scene{Width: 640, Height: 480, Dice: []Die{{Kind: 7, Face: 1}}}, "dice[0]: 7 is not a die kind"},
		{Scene{Width: 640, Height: 480, Dice: []Die{{Kind: rules.D6, Face: 7}}}, "dice[0]: d6 has no physical face 7"},
		{Scene{Width: 640, Height: 480, Dice: []Die{{Kind: rules.D10, Face: 10}}}, "d10 has no physical face 10"},
		{Scene{Width: 640, Height: 480, Dice: []Die{{Kind: rules.D100, Face: 5}}}, "d100 has no physical face 5"},
		{Scene{Width: 640, Height: 480, Dice: []Die{{Kind: rules.D6, Face: 1}, {Kind: rules.D8, Face: 1, Pips: true}}}, "dice[1]: pips only on a d6"},
	}
	for _, c := range cases {
		_, _, err := Render(c.s)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Render(%+v) error %v, want %q", c.s.Dice, err, c.want)
		}
	}
	if _, err := RenderInto(image.NewRGBA(image.Rect(0, 0, 10, 10)), Scene{Width: 640, Height: 480}); err == nil {
		t.Error("RenderInto accepted a destination of the wrong size")
	}
}

func TestFaces(t *testing.T) {
	if got := Faces(rules.D10); len(got) != 10 || got[0] != 0 || got[9] != 9 {
		t.Errorf("d10 faces %v", got)
	}
	if got := Faces(rules.D100); len(got) != 10 || got[0] != 0 || got[9] != 90 {
		t.Errorf("d100 faces %v", got)
	}
	if got := Faces(rules.D20); len(got) != 20 || got[0] != 1 || got[19] != 20 {
		t.Errorf("d20 faces %v", got)
	}
	if FaceText(rules.D100, 0) != "00" || FaceText(rules.D10, 0) != "0" || FaceText(rules.D100, 70) != "70" {
		t.Error("FaceText")
	}
}

func TestFlags(t *testing.T) {
	s := Scene{Width: 640, Height: 480, Dice: []Die{
		{Kind: rules.D6, Face: 2, X: 200, Y: 200},
		{Kind: rules.D6, Face: 3, X: 260, Y: 200}, // 60 px apart: touching
		{Kind: rules.D20, Face: 20, X: 500, Y: 300, Cocked: true},
		{Kind: rules.D8, Face: 4, X: 15, Y: 240}, // centre on the wall
	}}
	_, tr := MustRender(s)
	if !tr[0].Touching || !tr[1].Touching || tr[2].Touching || tr[3].Touching {
		t.Errorf("touching flags: %+v", tr)
	}
	if !tr[2].Cocked || tr[0].Cocked {
		t.Errorf("cocked flags: %+v", tr)
	}
	if !tr[3].OffTray || tr[0].OffTray {
		t.Errorf("off-tray flags: %+v", tr)
	}
	if tr[3].Box.Min.X != 0 {
		t.Errorf("box of a die at the frame edge not clipped: %v", tr[3].Box)
	}
}

func TestDarkFrame(t *testing.T) {
	s := RandomScene(3, []rules.Die{rules.D6}, Options{})
	bright, _ := MustRender(s)
	s.Light.Brightness = 0.08
	dark, _ := MustRender(s)
	if b, d := meanLuma(bright, bright.Rect), meanLuma(dark, dark.Rect); d > 20 || b < 3*d {
		t.Fatalf("dark frame mean %.1f, normal %.1f", d, b)
	}
}

func TestRandomSceneApart(t *testing.T) {
	kinds := []rules.Die{rules.D4, rules.D6, rules.D8, rules.D10, rules.D12, rules.D20, rules.D100}
	for seed := uint64(0); seed < 5; seed++ {
		s := RandomScene(seed, kinds, Options{Faces: []int{4}})
		if s.Dice[0].Face != 4 {
			t.Fatalf("fixed face not kept: %+v", s.Dice[0])
		}
		_, tr := MustRender(s)
		for i, x := range tr {
			if x.Touching || x.OffTray || x.Cocked {
				t.Fatalf("seed %d die %d: %+v", seed, i, x)
			}
			if !ValidFace(x.Kind, x.Face) {
				t.Fatalf("seed %d die %d: face %d", seed, i, x.Face)
			}
		}
	}
}
