package vision

import (
	"image"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/towerd/towerd/rules"
	"github.com/towerd/towerd/sim/render"
	"github.com/towerd/towerd/vision/numeral"
)

// squashed returns p squashed by k along the direction at angle a.
func squashed(p [][2]float64, a, k float64) [][2]float64 {
	c, s := math.Cos(a), math.Sin(a)
	out := make([][2]float64, len(p))
	for i, q := range p {
		u, v := q[0]*c+q[1]*s, -q[0]*s+q[1]*c
		u *= k
		out[i] = [2]float64{u*c - v*s, u*s + v*c}
	}
	return out
}

func regular(n int, r float64) [][2]float64 {
	var p [][2]float64
	for i := 0; i < n; i++ {
		a := 2 * math.Pi * float64(i) / float64(n)
		p = append(p, [2]float64{r * math.Cos(a), r * math.Sin(a)})
	}
	return p
}

// TestPolyFore: a face of three, four or five fold symmetry has the same
// second moments every way, whichever way it is turned or wound; seen
// tilted by θ its minor axis is cos θ of the major.
func TestPolyFore(t *testing.T) {
	for _, n := range []int{3, 4, 5} {
		p := regular(n, 10)
		if f := polyFore(p); math.Abs(f-1) > 1e-6 {
			t.Errorf("%d-gon: fore %.4f, want 1", n, f)
		}
		for _, a := range []float64{0, 0.4, 1.3} {
			q := squashed(p, a, 0.8)
			rev := make([][2]float64, len(q))
			for i := range q {
				rev[i] = q[len(q)-1-i]
			}
			for _, poly := range [][][2]float64{q, rev} {
				if f := polyFore(poly); math.Abs(f-0.8) > 1e-6 {
					t.Errorf("%d-gon squashed 0.8 at %.1f rad: fore %.4f", n, a, f)
				}
			}
		}
	}
}

// TestKiteSkew: a d10's kite (the 36°/108° face of the common d10, and the
// renderer's squatter one) has square diagonals however it is turned; a
// tilt across its axis turns them, a tilt along one does not.
func TestKiteSkew(t *testing.T) {
	kites := map[string][][2]float64{
		"d10":      {{0, -1.789}, {0.650, 0.211}, {0, 0.683}, {-0.650, 0.211}},
		"rendered": {{0, -0.8}, {0.52, -0.12}, {0, 0.6}, {-0.52, -0.12}},
	}
	for name, k := range kites {
		for _, turn := range []float64{0, 0.7, 2} {
			flat := make([][2]float64, len(k))
			c, s := math.Cos(turn), math.Sin(turn)
			for i, q := range k {
				flat[i] = [2]float64{30 * (q[0]*c - q[1]*s), 30 * (q[0]*s + q[1]*c)}
			}
			if sk := kiteSkew(flat); sk > 1e-6 {
				t.Errorf("%s turned %.1f: skew %.2f°, want 0", name, turn, sk*180/math.Pi)
			}
			if sk := kiteSkew(squashed(flat, turn+math.Pi/4, 0.8)); sk < maxKiteSkew {
				t.Errorf("%s turned %.1f, tilted across: skew %.2f°, want over %.0f°", name, turn, sk*180/math.Pi, maxKiteSkew*180/math.Pi)
			}
			if sk := kiteSkew(squashed(flat, turn, 0.8)); sk > 1e-6 {
				t.Errorf("%s turned %.1f, tilted along its axis: skew %.2f°, want 0", name, turn, sk*180/math.Pi)
			}
		}
	}
}

// TestLeansNumberedRendered: rendered numbered dice, every other one
// leaning (0.65 rad, any way), under ordinary light, under steep light
// (a lamp to one side and a dark-cornered lens) and at 1296x972: under a
// camera looking down no flat die is judged leaning (under steep light one
// in forty: the light cuts a face the colour plane does not mend), and nearly every
// leaning d6, d8, d12 and d20 is (a d10's kite only when the tilt is not
// along its axis; d4 is not judged).
func TestLeansNumberedRendered(t *testing.T) {
	r, err := NewReader(Options{})
	if err != nil {
		t.Fatal(err)
	}
	kinds := []rules.Die{rules.D4, rules.D6, rules.D8, rules.D10, rules.D12, rules.D20, rules.D100}
	for _, cond := range []struct {
		name     string
		w, h     int
		gradient float64
		vignette float64
		flatFrom int // one flat die in flatFrom may be judged leaning; 0: none
	}{
		{"ordinary", 640, 480, 0, 0, 0},
		{"steep light", 640, 480, 0.5, 0.5, 40},
		{"1296x972", 1296, 972, 0, 0, 0},
	} {
		type count struct{ flat, flatLeans, cocked, caught int }
		got := map[rules.Die]*count{}
		for _, k := range kinds {
			got[k] = &count{}
		}
		flat, flatLeans := 0, 0
		for seed := uint64(1); seed <= 24; seed++ {
			s := render.RandomScene(seed, kinds, render.Options{D6: render.D6Numerals, Width: cond.w, Height: cond.h})
			if cond.gradient > 0 || cond.vignette > 0 {
				s.Light.Gradient, s.Light.Vignette = cond.gradient, cond.vignette
			}
			for i := range s.Dice {
				s.Dice[i].Cocked = (int(seed)+i)%2 == 0
			}
			img, truth := render.MustRender(s)
			bs, err := r.blobs(img, false)
			if err != nil {
				t.Fatal(err)
			}
			for _, tr := range truth {
				var b *blob
				for j := range bs {
					if bs[j].dieLike() && centre(bs[j].box).In(tr.Box) {
						b = &bs[j]
					}
				}
				if b == nil {
					continue
				}
				c := got[tr.Kind]
				leans := leansNumbered(img, tr.Kind.String(), b)
				switch {
				case tr.Cocked:
					c.cocked++
					if leans {
						c.caught++
					}
				default:
					c.flat++
					flat++
					if leans {
						c.flatLeans++
						flatLeans++
						t.Logf("%s, scene %d: a flat %s showing %d judged leaning", cond.name, seed, tr.Kind, tr.Face)
					}
				}
			}
		}
		if allowed := flat / max(1, cond.flatFrom) * min(1, cond.flatFrom); flatLeans > allowed {
			t.Errorf("%s: %d of %d flat dice judged leaning, want %d at most", cond.name, flatLeans, flat, allowed)
		}
		for _, k := range kinds {
			c := got[k]
			t.Logf("%s, %s: %d flat (%d judged leaning), %d leaning (%d caught)", cond.name, k, c.flat, c.flatLeans, c.cocked, c.caught)
			want := c.cocked * 9 / 10 // d6, d8, d12, d20
			switch k {
			case rules.D4:
				want = 0
			case rules.D10, rules.D100:
				want = c.cocked * 3 / 5
			}
			if c.caught < want || c.cocked < 8 || c.flat < 8 {
				t.Errorf("%s, %s: %d of %d leaning dice caught, want %d or more (%d flat)", cond.name, k, c.caught, c.cocked, want, c.flat)
			}
		}
	}
}

// TestReadCockedNumbered: the reader with a model reports a leaning d20
// cocked with no face when the camera looks straight down, and reads it
// when it does not know the camera does (a photo taken at an angle
// foreshortens every die).
func TestReadCockedNumbered(t *testing.T) {
	m, err := numeral.Load(filepath.Join("..", "tower", "testdata", "rendered-dice.model"))
	if err != nil {
		t.Fatal(err)
	}
	s := render.RandomScene(11, []rules.Die{rules.D20, rules.D8}, render.Options{Faces: []int{17, 5}})
	s.Dice[0].Cocked = true
	img, truth := render.MustRender(s)
	for _, top := range []bool{true, false} {
		r, err := NewReader(Options{Model: m, MinConfidence: 0.9, TopDown: top, AllowedKinds: []string{"d8", "d20"}})
		if err != nil {
			t.Fatal(err)
		}
		dice, err := r.Read(img)
		if err != nil {
			t.Fatal(err)
		}
		var lean, flat *Die
		for i := range dice {
			switch {
			case centre(dice[i].Box).In(truth[0].Box):
				lean = &dice[i]
			case centre(dice[i].Box).In(truth[1].Box):
				flat = &dice[i]
			}
		}
		if flat == nil || flat.Cocked || flat.Face == nil || *flat.Face != 5 {
			t.Errorf("top down %v: the flat d8 showing 5 read %v", top, dice)
		}
		switch {
		case lean == nil:
			t.Errorf("top down %v: the leaning d20 not found: %v", top, dice)
		case top && (!lean.Cocked || lean.Face != nil):
			t.Errorf("top down: the leaning d20 read %s, want cocked and no face", Label(*lean))
		case !top && lean.Cocked:
			t.Errorf("at an angle: the leaning d20 judged cocked")
		}
	}
}

// TestConvexMask: the row-by-row mask of a convex polygon marks the cells
// the point test marks, whichever way it winds.
func TestConvexMask(t *testing.T) {
	for _, p := range [][][2]float64{
		regular(6, 9.3), squashed(regular(5, 11), 0.7, 0.6), regular(3, 7.5), regular(4, 10),
		{{2, 2}, {15, 2}, {15, 9}, {2, 9}},
	} {
		rev := make([][2]float64, len(p))
		for i := range p {
			rev[i] = p[len(p)-1-i]
		}
		for _, poly := range [][][2]float64{p, rev} {
			q := make([][2]float64, len(poly))
			for i, v := range poly {
				q[i] = [2]float64{v[0] + 12.5, v[1] + 12.25}
			}
			m := convexMask(q, 26, 26)
			for y := 0; y < 26; y++ {
				for x := 0; x < 26; x++ {
					if want := inConvex(q, float64(x), float64(y)); m[y*26+x] != want {
						t.Errorf("%v: cell (%d,%d) masked %v, want %v", q, x, y, m[y*26+x], want)
					}
				}
			}
		}
	}
}

// TestFindUpFaceDegenerate: outlines with no area, boxes off the photo and
// a die of one flat colour give no face and no panic.
func TestFindUpFaceDegenerate(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 100, 100))
	for i := range img.Pix {
		img.Pix[i] = 200
	}
	sq := []image.Point{{20, 20}, {80, 20}, {80, 80}, {20, 80}}
	for _, tc := range []struct {
		name    string
		outline []image.Point
		box     image.Rectangle
	}{
		{"no outline", nil, image.Rect(20, 20, 80, 80)},
		{"a line", []image.Point{{20, 20}, {50, 50}, {80, 80}}, image.Rect(20, 20, 80, 80)},
		{"off the photo", sq, image.Rect(200, 200, 260, 260)},
		{"tiny", []image.Point{{1, 1}, {4, 1}, {4, 4}}, image.Rect(1, 1, 4, 4)},
	} {
		if _, ok := findUpFace(img, tc.outline, tc.box, 0.06); ok {
			t.Errorf("%s: a face found", tc.name)
		}
	}
	// One flat colour: the whole die is one region, too big to be the up
	// face of any die, yet square: whatever is found, it does not lean.
	if f, ok := findUpFace(img, sq, image.Rect(20, 20, 81, 81), 0.06); ok && f.fore < minFlatFore {
		t.Errorf("a flat square die: fore %.2f", f.fore)
	}
}

// TestReadLoopedNumeralsNotLeaning: with d6 in the roll under a camera
// looking down, the pip counter sees the loops of a d100's "90" or a d10's
// "8" as a leaning pip face; a die the model is sure is of another kind is
// judged by its own up face, and a flat one is read.
func TestReadLoopedNumeralsNotLeaning(t *testing.T) {
	m, err := numeral.Load(filepath.Join("..", "tower", "testdata", "rendered-dice.model"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewReader(Options{Model: m, MinConfidence: 0.9, TopDown: true, AllowedKinds: []string{"d6", "d10", "d100"}})
	if err != nil {
		t.Fatal(err)
	}
	read, cocked := 0, 0
	for seed := uint64(1); seed <= 12; seed++ {
		s := render.RandomScene(seed, []rules.Die{rules.D100, rules.D10, rules.D100}, render.Options{Faces: []int{90, 8, 80}})
		img, truth := render.MustRender(s)
		dice, err := r.Read(img)
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range truth {
			for _, d := range dice {
				if !centre(d.Box).In(tr.Box) {
					continue
				}
				switch {
				case d.Cocked:
					cocked++
					t.Logf("scene %d: a flat %s showing %d called cocked", seed, tr.Kind, tr.Face)
				case d.Face != nil && *d.Face != tr.Face:
					t.Errorf("scene %d: %s showing %d read %s", seed, tr.Kind, tr.Face, Label(d))
				case d.Face != nil:
					read++
				}
			}
		}
	}
	t.Logf("%d of 36 read, %d called cocked", read, cocked)
	if cocked > 0 || read < 33 {
		t.Errorf("%d of 36 flat looped numerals read, %d called cocked; want 33 or more, none cocked", read, cocked)
	}
}

// TestFindUpFaceRandom: random outlines and boxes over random photos of
// several image types never panic, and any face found is measured in
// range.
func TestFindUpFaceRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	rgba := image.NewRGBA(image.Rect(-5, -3, 155, 117))
	for i := range rgba.Pix {
		rgba.Pix[i] = uint8(rng.IntN(256))
	}
	nrgba := image.NewNRGBA(rgba.Rect)
	copy(nrgba.Pix, rgba.Pix)
	for _, img := range []image.Image{rgba, nrgba, rgba.SubImage(image.Rect(10, 10, 90, 70))} {
		for n := 0; n < 100; n++ {
			var pts [][2]float64
			for k := 0; k < 3+rng.IntN(8); k++ {
				pts = append(pts, [2]float64{rng.Float64()*200 - 30, rng.Float64()*160 - 30})
			}
			var outline []image.Point
			box := image.Rectangle{}
			for _, p := range hull2(pts) {
				q := image.Pt(int(p[0]), int(p[1]))
				outline = append(outline, q)
				box = box.Union(image.Rectangle{Min: q, Max: q.Add(image.Pt(1, 1))})
			}
			f, ok := findUpFace(img, outline, box, 0.06)
			if ok && (f.fore < 0 || f.fore > 1 || f.area <= 0 || kiteSkew(f.hull) < 0 || kiteSkew(f.hull) > math.Pi/2) {
				t.Errorf("outline %v: face %+v out of range", outline, f)
			}
		}
	}
}
