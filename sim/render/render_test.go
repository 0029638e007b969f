package render

import (
	"bytes"
	"image"
	"image/color"
	"os"
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
	o := Options{Width: 320, Height: 240}
	a, ta := MustRender(RandomScene(7, kinds, o))
	b, tb := MustRender(RandomScene(7, kinds, o))
	if !bytes.Equal(a.Pix, b.Pix) {
		t.Fatal("same seed rendered different pixels")
	}
	for i := range ta {
		if ta[i] != tb[i] {
			t.Fatalf("same seed, different truth: %+v vs %+v", ta[i], tb[i])
		}
	}
	c, _ := MustRender(RandomScene(8, kinds, o))
	if bytes.Equal(a.Pix, c.Pix) {
		t.Fatal("different seeds rendered the same pixels")
	}
}

// TestEveryKindAndFace draws the first, middle and last physical face of
// every kind (and a d6 with pips), all kinds side by side in one 640x480
// frame per face, and checks the truth and that something die-like was
// drawn inside each box, of a plausible size.
func TestEveryKindAndFace(t *testing.T) {
	felt := color.NRGBA{R: 30, G: 60, B: 40, A: 255}
	type want struct {
		kind rules.Die
		pips bool
	}
	var set []want
	for _, k := range rules.Kinds {
		set = append(set, want{k, false})
	}
	set = append(set, want{rules.D6, true})
	// Without TOWERD_LONG only the ends and middle of each kind's faces:
	// enough to catch a broken kind; with it every face.
	picks := []int{0, -1, 1 << 20}
	if os.Getenv("TOWERD_LONG") != "" {
		picks = nil
		for i := range 20 {
			picks = append(picks, i)
		}
	}
	for _, pick := range picks {
		s := Scene{Width: 640, Height: 480, Felt: felt, Noise: 2, Seed: uint64(pick & 0xff)}
		for i, w := range set {
			fs := Faces(w.kind)
			j := min(pick, len(fs)-1)
			if pick < 0 {
				j = len(fs) / 2
			}
			s.Dice = append(s.Dice, Die{Kind: w.kind, Face: fs[j], Pips: w.pips,
				X: 90 + 153*float64(i%4), Y: 130 + 220*float64(i/4), Angle: float64(j+i) * 0.3, Tilt: 0.1})
		}
		img, truth := MustRender(s)
		if len(truth) != len(set) {
			t.Fatalf("%d truths for %d dice", len(truth), len(set))
		}
		// The felt between the dice.
		outside := meanLuma(img, image.Rect(130, 235, 200, 255))
		for i, tr := range truth {
			d := s.Dice[i]
			if tr.Kind != d.Kind || tr.Face != d.Face || tr.Pips != d.Pips || tr.Cocked || tr.OffTray || tr.Touching {
				t.Fatalf("%v %d: truth %+v", d.Kind, d.Face, tr)
			}
			w, h := tr.Box.Dx(), tr.Box.Dy()
			if w < 45 || w > 100 || h < 45 || h > 100 {
				t.Errorf("%v %d: box %v is not die-sized", d.Kind, d.Face, tr.Box)
			}
			if !tr.Center.In(tr.Box) {
				t.Errorf("%v %d: centre %v outside box %v", d.Kind, d.Face, tr.Center, tr.Box)
			}
			// Ivory die on dark felt: the box is much brighter than the
			// felt away from it.
			if inside := meanLuma(img, tr.Box.Inset(w/4)); inside < outside+60 {
				t.Errorf("%v %d: die not drawn: inside %.0f, felt %.0f", d.Kind, d.Face, inside, outside)
			}
		}
	}
}

// TestBackdropMatchesRender: drawing dice over a backdrop gives exactly
// the pixels of a full render, also with dice overlapping, at the frame's
// edge and in the dark.
func TestBackdropMatchesRender(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		s := RandomScene(seed, []rules.Die{rules.D4, rules.D6, rules.D8, rules.D20, rules.D100}, Options{Width: 240, Height: 180})
		switch seed {
		case 2:
			s.Dice[1].X, s.Dice[1].Y = s.Dice[0].X+12, s.Dice[0].Y+5 // overlapping
		case 3:
			s.Dice[0].X, s.Dice[0].Y = 2, 90 // cut by the frame's edge
			s.Dice[2].Cocked = true
		case 4:
			s.Light.Brightness = 0.07
		}
		want, wt := MustRender(s)
		bd, err := NewBackdrop(s)
		if err != nil {
			t.Fatal(err)
		}
		got := image.NewRGBA(want.Rect)
		gt, err := bd.RenderInto(got, s.Dice, s.Noise, s.Seed)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Pix, want.Pix) {
			n := 0
			for i := range got.Pix {
				if got.Pix[i] != want.Pix[i] {
					n++
				}
			}
			t.Errorf("seed %d: %d samples differ from a full render", seed, n)
		}
		for i := range wt {
			if gt[i] != wt[i] {
				t.Errorf("seed %d: truth %+v, full render %+v", seed, gt[i], wt[i])
			}
		}
	}
	bd, _ := NewBackdrop(Scene{Width: 64, Height: 48})
	if _, err := bd.RenderInto(image.NewRGBA(image.Rect(0, 0, 10, 10)), nil, 0, 0); err == nil {
		t.Error("backdrop drew into a destination of the wrong size")
	}
	if _, err := bd.RenderInto(image.NewRGBA(image.Rect(0, 0, 64, 48)), []Die{{Kind: rules.D6, Face: 9}}, 0, 0); err == nil {
		t.Error("backdrop drew a d6 showing 9")
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
	s := RandomScene(3, []rules.Die{rules.D6}, Options{Width: 320, Height: 240})
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
		s := RandomScene(seed, kinds, Options{Width: 320, Height: 240, Faces: []int{4}})
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
