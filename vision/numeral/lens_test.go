package numeral

import (
	"image"
	"image/color"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

// TestLensLook checks the geometry: an offset o on the up face, as the
// view sees it from above, lands where a camera at that slant sees it.
func TestLensLook(t *testing.T) {
	c := &canon{w: 150, h: 150} // die side 100 with CropDie's margin
	if d := c.dieSide(); math.Abs(d-100) > 1e-9 {
		t.Fatalf("die side %g, want 100", d)
	}
	v := view{cx: 75, cy: 75, m: [4]float64{2, 0, 0, 2}}
	for _, l := range []Lens{{}, {Squash: 0.5}} {
		if got := l.look(v, c); got != v || !l.straight() {
			t.Errorf("lens %+v with no offset moved the view: %+v", l, got)
		}
	}
	// The far side up, elevation 30°: the up face 0.3 of a die above the
	// middle, squashed by half along the vertical.
	got := Lens{DY: -0.3, Squash: 0.5}.look(v, c)
	if got.cx != 75 || math.Abs(got.cy-45) > 1e-9 {
		t.Errorf("centre (%g, %g), want (75, 45)", got.cx, got.cy)
	}
	if want := [4]float64{2, 0, 0, 1}; got.m != want {
		t.Errorf("matrix %v, want %v", got.m, want)
	}
	// Along a diagonal the squash is along the diagonal: its direction
	// shrinks by s, the one across it keeps its length.
	got = Lens{DX: 0.2, DY: 0.2, Squash: 0.5}.look(view{m: [4]float64{1, 0, 0, 1}}, c)
	along := [2]float64{got.m[0] + got.m[1], got.m[2] + got.m[3]} // M·(1,1)
	across := [2]float64{got.m[0] - got.m[1], got.m[2] - got.m[3]}
	if math.Abs(math.Hypot(along[0], along[1])-0.5*math.Sqrt2) > 1e-9 || math.Abs(math.Hypot(across[0], across[1])-math.Sqrt2) > 1e-9 {
		t.Errorf("diagonal squash: along %v across %v", along, across)
	}
}

// slantCrop draws a CropDie-style crop of a toy die as a camera at a slant
// sees it: its up face (n dark dots on a ring, turned by th) a third of a
// die above the middle and squashed to sq vertically, and below it the
// faces toward the camera with dots of no meaning (other faces' numbers).
func slantCrop(n int, th, sq float64, side int, r *rand.Rand) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, side, side))
	c := float64(side) / 2
	rad := float64(side) / (2 * (1 + 2*Margin))
	type dot struct{ x, y, r float64 }
	var dots []dot
	ux, uy := c, c-0.3*2*rad
	for i := range n {
		a := th + 2*math.Pi*float64(i)/float64(n)
		ring := 0.32 * rad
		if n == 1 {
			ring = 0
		}
		dots = append(dots, dot{ux + ring*math.Cos(a), uy + sq*ring*math.Sin(a), 0.09 * rad})
	}
	for range 4 + r.IntN(4) {
		a, d := math.Pi*r.Float64(), 0.3*rad+0.6*rad*r.Float64()
		dots = append(dots, dot{c + d*math.Cos(a), c + 0.2*rad + 0.6*d*math.Sin(a), (0.08 + 0.06*r.Float64()) * rad})
	}
	for y := range side {
		for x := range side {
			fx, fy := float64(x)+0.5, float64(y)+0.5
			col := color.RGBA{12, 12, 16, 255}
			if (fx-c)*(fx-c)+(fy-c)*(fy-c) < rad*rad {
				col = color.RGBA{220, 200, 170, 255}
				for _, d := range dots {
					if (fx-d.x)*(fx-d.x)+(fy-d.y)*(fy-d.y)/(sq*sq) < d.r*d.r {
						col = color.RGBA{20, 20, 20, 255}
					}
				}
			}
			v := func(u uint8) uint8 { return uint8(min(255, max(0, float64(u)+5*r.NormFloat64()))) }
			img.SetRGBA(x, y, color.RGBA{v(col.R), v(col.G), v(col.B), 255})
		}
	}
	return img
}

// TestFitLensFindsTheSlant: toy dice seen from a slant, their up face
// above the middle and squashed; FitLens finds about where and how much,
// and toy dice seen from straight above keep no lens.
func TestFitLensFindsTheSlant(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var slant, straight []Sample
	for i := range MinLensCrops {
		n := 1 + i%4
		slant = append(slant, Sample{Img: slantCrop(n, 2*math.Pi*r.Float64(), 0.55, 56+r.IntN(12), r), Die: "d4", Face: n})
		straight = append(straight, Sample{Img: pipCrop(n, 2*math.Pi*r.Float64(), 56+r.IntN(12), green, r), Die: "d4", Face: n})
	}
	fit := FitLens(slant, DefaultArch(), 0)
	l := fit.Lens
	t.Logf("slant: %+v", fit)
	if math.Abs(l.DX) > 0.1 || l.DY > -0.2 || l.DY < -0.4 || l.Squash > 0.8 {
		t.Errorf("slanted toy dice: lens %+v, want the up face about 0.3 above the middle, squashed", l)
	}
	if fit.Score < 1.1*fit.Straight {
		t.Errorf("slanted toy dice: %.3f alike through the lens, %.3f straight on", fit.Score, fit.Straight)
	}
	fit = FitLens(straight, DefaultArch(), 0)
	t.Logf("straight: %+v", fit)
	if fit.Lens != (Lens{}) {
		t.Errorf("toy dice seen from above: lens %+v, want none", fit.Lens)
	}
	if fit := FitLens(slant[:MinLensCrops-1], DefaultArch(), 0); fit.Lens != (Lens{}) || fit.Crops != MinLensCrops-1 || fit.Straight != 0 {
		t.Errorf("too few crops to look: %+v", fit)
	}
}

// TestLensSavedAndChecked: a model's lens survives Save and Load (as
// format version 3), and a file whose lens no camera has is refused.
func TestLensSavedAndChecked(t *testing.T) {
	want := Lens{DY: -0.3, Squash: 0.6}
	m2, err := Train(toySamples(rand.New(rand.NewPCG(1, 1))), TrainOptions{Arch: toyArch, Epochs: 2, Lens: want})
	if err != nil {
		t.Fatal(err)
	}
	if m2.Lens() != want {
		t.Fatalf("trained with lens %+v, model has %+v", want, m2.Lens())
	}
	path := filepath.Join(t.TempDir(), "slant.model")
	if err := m2.Save(path); err != nil {
		t.Fatal(err)
	}
	m3, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if m3.Lens() != want {
		t.Errorf("lens %+v after loading, want %+v", m3.Lens(), want)
	}
	crop := slantCrop(3, 1, 0.6, 64, rand.New(rand.NewPCG(1, 1)))
	d1, f1, c1 := m2.Classify(crop, nil)
	d2, f2, c2 := m3.Classify(crop, nil)
	if d1 != d2 || f1 != f2 || c1 != c2 {
		t.Errorf("saved model reads %s %d %g, loaded %s %d %g", d1, f1, c1, d2, f2, c2)
	}
	for _, l := range []Lens{{DY: -0.7}, {DX: math.NaN()}, {Squash: 0.1}, {Squash: 1.5}, {DX: 1e-320}, {DY: 0.005, Squash: 0.5}, {Squash: 0.5}} {
		if err := l.check(); err == nil {
			t.Errorf("lens %+v passed its check", l)
		}
	}
	if _, err := Train(toySamples(rand.New(rand.NewPCG(1, 1))), TrainOptions{Arch: toyArch, Epochs: 1, Lens: Lens{Squash: 2}}); err == nil {
		t.Error("Train took a squash of 2")
	}
}

// TestProbeLens: short training runs through each candidate lens tell the
// one that looks at the up face from one that looks the other way, and the
// candidates run from FitLens's own along its way, upright.
func TestProbeLens(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var crops []Sample
	for i := range 60 {
		n := 1 + i%4
		crops = append(crops, Sample{Img: slantCrop(n, 2*math.Pi*r.Float64(), 0.55, 56+r.IntN(12), r), Die: "d4", Face: n})
	}
	up, down := Lens{DY: -0.3, Squash: 0.55}, Lens{DY: 0.3, Squash: 0.55}
	scores, err := ProbeLens(crops, []Lens{down, up}, TrainOptions{Arch: toyArch, Seed: 1, Rotation: 15})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("held back through %+v: %.3f, through %+v: %.3f", down, scores[0], up, scores[1])
	if scores[1] < 0.6 || scores[1] < scores[0]+0.3 {
		t.Errorf("the lens on the up face read %.3f of the held-back crops, the one below it %.3f", scores[1], scores[0])
	}
	if got := PickProbed(scores); got != 1 {
		t.Errorf("PickProbed(%v) = %d, want 1", scores, got)
	}
	// A near tie keeps FitLens's own (the first).
	if got := PickProbed([]float64{0.5, 0.52, 0.4}); got != 0 {
		t.Errorf("PickProbed of a near tie = %d, want 0", got)
	}
	cands := ProbeCandidates(Lens{DX: -0.05, DY: -0.15, Squash: 0.75})
	if len(cands) != 3 || cands[0] != (Lens{DX: -0.05, DY: -0.15, Squash: 0.75}) {
		t.Fatalf("candidates %+v, want the fitted lens and two more", cands)
	}
	for i, l := range cands[1:] {
		if l.DX != 0 || l.DY >= 0 || l.check() != nil || i > 0 && (l.Squash >= cands[i].Squash || l.DY >= cands[i].DY) {
			t.Errorf("candidate %+v: want straight up, steeper and further than the one before", l)
		}
	}
	// Straight on, the slants tried lie up the photo.
	if c := ProbeCandidates(Lens{}); len(c) != 3 || c[0] != (Lens{}) || c[1].DX != 0 || c[1].DY >= 0 || c[2].DY >= c[1].DY {
		t.Errorf("candidates for no lens: %+v, want straight on, then two slants up the photo", c)
	}
}
