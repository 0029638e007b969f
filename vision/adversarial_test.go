package vision

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/towerd/towerd/rules"
	"github.com/towerd/towerd/sim/render"
)

// TestReadPipsAdversarial pins the pip reader's precision on photos made
// to fool it, as a tower's reader sees them (d6 only, TopDown): glints of
// the light on glossy dice, glare patches, square things that are no
// dice, and dice of any body and pip colours. A review built them; the
// wrong faces each still gives are known limits (docs/vision.md) and may
// not grow (glare patches: 5 before markGlare, 2 until its burnt-out
// spot in session 33, none since; dice of any colours: 2, none since
// session 30). TOWERD_LONG=1 reads twice as many.
func TestReadPipsAdversarial(t *testing.T) {
	scale := 1
	if os.Getenv("TOWERD_LONG") != "" {
		scale = 2
	}
	r, err := NewReader(Options{AllowedKinds: []string{"d6"}, TopDown: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []struct {
		name  string
		n     int
		known int // wrong faces (and faces on no die) at the end of session 9, per n
		scene func(seed uint64) (render.Scene, func(*image.RGBA) image.Rectangle)
	}{
		{"glint on a die whose pips its body hides from the grey image", 100, 0, glintScene},
		{"glare patch over a die's middle", 40, 0, glareScene},
		{"square things with a dot", 40, 5, objectScene},
		{"dice of any colours", 100, 0, colourScene},
	} {
		wrong, right, dice := 0, 0, 0
		known := g.known * scale
		for seed := uint64(1); seed <= uint64(g.n*scale); seed++ {
			s, post := g.scene(seed)
			img, truth := render.MustRender(s)
			var object image.Rectangle
			if post != nil {
				object = post(img)
			}
			read, err := r.Read(img)
			if err != nil {
				t.Fatal(err)
			}
			var tl tally
			tl.add(truth, read)
			wrong += tl.wrong
			right += tl.right
			dice += tl.dice
			for _, d := range read {
				if d.Face != nil && centre(d.Box).In(object) {
					wrong++
					t.Logf("%s %d: %s on no die", g.name, seed, Label(d))
				}
			}
		}
		t.Logf("%s: %d dice, %d right, %d wrong faces", g.name, dice, right, wrong)
		if wrong > known {
			t.Errorf("%s: %d wrong faces, more than the %d known", g.name, wrong, known)
		}
	}
}

var (
	advIvory, advBlack = color.NRGBA{236, 230, 214, 255}, color.NRGBA{20, 20, 22, 255}
	advColours         = [][2]color.NRGBA{
		{{200, 32, 38, 255}, {245, 245, 240, 255}},  // red, white pips
		{{30, 70, 170, 255}, {245, 245, 240, 255}},  // blue, white
		{{110, 50, 150, 255}, {240, 215, 120, 255}}, // purple, gold
		{{40, 40, 44, 255}, {240, 240, 235, 255}},   // black, white
		{{60, 150, 80, 255}, {250, 250, 245, 255}},  // green, white
		{{245, 245, 245, 255}, {200, 30, 30, 255}},  // white, red
		{{238, 200, 60, 255}, {25, 25, 25, 255}},    // yellow, black
	}
)

// advScene is three d6: two ivory with black pips (the roll's reference)
// showing 4 and 2, and a third showing face.
func advScene(seed uint64, face int) render.Scene {
	s := render.RandomScene(seed, []rules.Die{rules.D6, rules.D6, rules.D6}, render.Options{D6: render.D6Pips, Faces: []int{4, 2, face}})
	for i := range 2 {
		s.Dice[i].Body, s.Dice[i].Ink = advIvory, advBlack
	}
	return s
}

// glintScene: a dark die with grey pips (the red or blue body as bright as
// the pips in grey) and a soft glint near its middle.
func glintScene(seed uint64) (render.Scene, func(*image.RGBA) image.Rectangle) {
	rng := rand.New(rand.NewPCG(seed, 89))
	bodies := []color.NRGBA{{40, 40, 44, 255}, {30, 70, 170, 255}, {200, 32, 38, 255}, {60, 150, 80, 255}}
	l := uint8(90 + 20*((seed/5)%8))
	s := advScene(seed, 2+int(seed%5))
	s.Dice[2].Body, s.Dice[2].Ink = bodies[rng.IntN(len(bodies))], color.NRGBA{l, l, l, 255}
	d := s.Dice[2]
	return s, func(img *image.RGBA) image.Rectangle {
		dx, dy := (rng.Float64()-0.5)*0.08*d.Size, (rng.Float64()-0.5)*0.08*d.Size
		advSpot(img, d.X+dx, d.Y+dy, d.Size*0.06, color.NRGBA{255, 255, 255, 255}, false)
		return image.Rectangle{}
	}
}

// glareScene: a large glare patch with a bright core over a coloured die's
// middle.
func glareScene(seed uint64) (render.Scene, func(*image.RGBA) image.Rectangle) {
	rng := rand.New(rand.NewPCG(seed, 81))
	s := advScene(seed, 2+rng.IntN(5))
	c := advColours[rng.IntN(len(advColours))]
	s.Dice[2].Body, s.Dice[2].Ink = c[0], c[1]
	d := s.Dice[2]
	return s, func(img *image.RGBA) image.Rectangle {
		dx, dy := (rng.Float64()-0.5)*0.12*d.Size, (rng.Float64()-0.5)*0.12*d.Size
		advSpot(img, d.X+dx, d.Y+dy, d.Size*0.25, color.NRGBA{235, 235, 235, 255}, false)
		advSpot(img, d.X+dx, d.Y+dy, d.Size*(0.05+0.04*rng.Float64()), color.NRGBA{255, 255, 255, 255}, false)
		return image.Rectangle{}
	}
}

// objectScene: beside two ivory dice, a square that is no die: a dark
// tile with a light dot, a sugar cube with a glint, a coloured button with
// a shiny centre, a grey plate with a faint hole.
func objectScene(seed uint64) (render.Scene, func(*image.RGBA) image.Rectangle) {
	rng := rand.New(rand.NewPCG(seed, 82))
	s := render.RandomScene(seed, []rules.Die{rules.D6, rules.D6}, render.Options{D6: render.D6Pips, Faces: []int{2 + rng.IntN(5), 2 + rng.IntN(5)}})
	for i := range s.Dice {
		s.Dice[i].Body, s.Dice[i].Ink = advIvory, advBlack
	}
	side := 50 + 60*rng.Float64()
	x, y := render.Place(rng, s.Tray, side*1.1, s.Dice)
	ang := rng.Float64() * 6
	kind := seed % 4
	return s, func(img *image.RGBA) image.Rectangle {
		switch kind {
		case 0:
			advSquare(img, x, y, side, ang, color.NRGBA{60, 60, 70, 255})
			advSpot(img, x, y, side*0.08, color.NRGBA{230, 230, 230, 255}, true)
		case 1:
			advSquare(img, x, y, side, ang, color.NRGBA{225, 225, 220, 255})
			advSpot(img, x+side*0.03, y-side*0.03, side*0.06, color.NRGBA{255, 255, 255, 255}, false)
		case 2:
			advSquare(img, x, y, side, ang, advColours[rng.IntN(5)][0])
			advSpot(img, x, y, side*0.1, color.NRGBA{250, 250, 250, 255}, false)
		case 3:
			advSquare(img, x, y, side, ang, color.NRGBA{150, 150, 155, 255})
			advSpot(img, x, y, side*0.07, color.NRGBA{95, 95, 100, 255}, true)
		}
		h := int(side * 0.7)
		return image.Rect(int(x)-h, int(y)-h, int(x)+h, int(y)+h)
	}
}

// colourScene: an ivory die and one to three dice of random body and pip
// colours (any contrast) and sizes.
func colourScene(seed uint64) (render.Scene, func(*image.RGBA) image.Rectangle) {
	rng := rand.New(rand.NewPCG(seed, 88))
	kinds := make([]rules.Die, 2+int(seed%4))
	for i := range kinds {
		kinds[i] = rules.D6
	}
	s := render.RandomScene(seed, kinds, render.Options{D6: render.D6Pips, MaxTilt: 0.2})
	rc := func() color.NRGBA {
		return color.NRGBA{uint8(rng.IntN(256)), uint8(rng.IntN(256)), uint8(rng.IntN(256)), 255}
	}
	s.Dice[0].Body, s.Dice[0].Ink = advIvory, advBlack
	for i := 1; i < len(s.Dice); i++ {
		s.Dice[i].Body, s.Dice[i].Ink = rc(), rc()
		s.Dice[i].Size *= 0.6 + 0.8*rng.Float64()
	}
	return s, nil
}

// TestReadOneOfAnotherSize: in a roll of dice of several colours and
// sizes, a blue die's white 1 is 0.6 of the radius of a larger die's
// light pips: unlike the roll's pips, it was dropped, not left for its
// die to vouch for (lonesOnDice), and the die was missed.
func TestReadOneOfAnotherSize(t *testing.T) {
	r, err := NewReader(Options{AllowedKinds: []string{"d6"}, TopDown: true})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := colourScene(55)
	img, truth := render.MustRender(s)
	var tl tally
	tl.read(t, r, img, truth, "scene 55")
	if tl.right != tl.dice || tl.dice != 5 {
		t.Errorf("%d of %d dice read right, want all 5", tl.right, tl.dice)
	}
}

// TestReadFaintOnes: a 1 of a pip 70–90 grey levels from its die as the
// reader measures it (light green on red, light on teal, brown on
// lilac…) in a roll led by a white die of black pips is a lone pip unlike
// the roll's, and its die vouches for it (lonesOnDice) if its contrast
// is clear: 90 levels missed every one of these (12 of 24 read, the
// white dice), 74 read 22; a reviewer's bad 3 was 59, and the one left
// here measures 69 (lonePipContrast).
func TestReadFaintOnes(t *testing.T) {
	r, err := NewReader(Options{AllowedKinds: []string{"d6"}, TopDown: true})
	if err != nil {
		t.Fatal(err)
	}
	pairs := [][2]color.NRGBA{ // body, pips: luma 75–91 apart
		{{214, 77, 69, 255}, {153, 252, 111, 255}},
		{{138, 245, 190, 255}, {212, 83, 36, 255}},
		{{206, 128, 242, 255}, {190, 54, 8, 255}},
		{{3, 184, 172, 255}, {231, 211, 125, 255}},
		{{12, 104, 168, 255}, {167, 177, 135, 255}},
	}
	var tl tally
	for seed := uint64(1); seed <= 8; seed++ {
		s := render.RandomScene(seed, []rules.Die{rules.D6, rules.D6, rules.D6}, render.Options{D6: render.D6Pips, MaxTilt: 0.2})
		s.Dice[0].Body, s.Dice[0].Ink = advIvory, advBlack
		for i := 1; i < len(s.Dice); i++ {
			p := pairs[(int(seed)+i)%len(pairs)]
			s.Dice[i].Body, s.Dice[i].Ink, s.Dice[i].Face = p[0], p[1], 1
		}
		img, truth := render.MustRender(s)
		tl.read(t, r, img, truth, fmt.Sprintf("scene %d", seed))
	}
	t.Logf("%d dice, %d right, %d wrong", tl.dice, tl.right, tl.wrong)
	if tl.wrong > 0 || tl.right < tl.dice-1 {
		t.Errorf("%d of %d dice read right, %d wrong; want all but one right, none wrong", tl.right, tl.dice, tl.wrong)
	}
}

// advSpot blends a disc of colour c of radius r at (x, y): with an edge
// (hard) or fading like a glint.
func advSpot(img *image.RGBA, x, y, r float64, c color.NRGBA, hard bool) {
	for yy := int(y - 2*r - 1); yy <= int(y+2*r+1); yy++ {
		for xx := int(x - 2*r - 1); xx <= int(x+2*r+1); xx++ {
			d := math.Hypot(float64(xx)+0.5-x, float64(yy)+0.5-y)
			a := math.Exp(-d * d / (r * r))
			if hard {
				a = min(1, max(0, r+0.5-d))
			}
			advBlend(img, xx, yy, c, a)
		}
	}
}

// advSquare fills a square of side s turned by ang about (x, y).
func advSquare(img *image.RGBA, x, y, s, ang float64, c color.NRGBA) {
	h := s / 2
	ca, sa := math.Cos(ang), math.Sin(ang)
	e := int(h*1.5 + 2)
	for yy := int(y) - e; yy <= int(y)+e; yy++ {
		for xx := int(x) - e; xx <= int(x)+e; xx++ {
			dx, dy := float64(xx)+0.5-x, float64(yy)+0.5-y
			u, v := dx*ca+dy*sa, -dx*sa+dy*ca
			advBlend(img, xx, yy, c, min(1, max(0, h+0.5-math.Abs(u)))*min(1, max(0, h+0.5-math.Abs(v))))
		}
	}
}

// advBlend mixes c into img's pixel (x, y) by a.
func advBlend(img *image.RGBA, x, y int, c color.NRGBA, a float64) {
	if a <= 0 || !image.Pt(x, y).In(img.Bounds()) {
		return
	}
	o := img.PixOffset(x, y)
	for i, v := range []uint8{c.R, c.G, c.B} {
		img.Pix[o+i] = uint8(float64(img.Pix[o+i])*(1-a) + float64(v)*a + 0.5)
	}
}
