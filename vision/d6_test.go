package vision

import (
	"image"
	"image/color"
	"math"
	"slices"
	"testing"
)

// drawDice draws light squares (dice tops, grey 200) on a tray of grey
// tray with dark round pips (20) of radius r, and returns the pips found.
func drawDice(t *testing.T, w, h int, tray uint8, dice []image.Rectangle, pips [][2]float64, r float64) (*grayImg, []pip) {
	t.Helper()
	return findDrawn(t, paintDice(w, h, tray, dice, pips, r))
}

// paintDice is drawDice's photo, for a test to add to before the pips
// are found (findDrawn).
func paintDice(w, h int, tray uint8, dice []image.Rectangle, pips [][2]float64, r float64) *image.Gray {
	img := image.NewGray(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = tray
	}
	for _, d := range dice {
		for y := d.Min.Y; y < d.Max.Y; y++ {
			for x := d.Min.X; x < d.Max.X; x++ {
				img.SetGray(x, y, color.Gray{Y: 200})
			}
		}
	}
	for _, p := range pips {
		drawDisc(img, p[0], p[1], r, 20)
	}
	return img
}

// findDrawn returns img in grey and the pips found in it.
func findDrawn(t *testing.T, img *image.Gray) (*grayImg, []pip) {
	t.Helper()
	g, err := newGray(img)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.close)
	inv := g.inverted()
	defer inv.close()
	return g, findPips(g, inv)
}

// drawDisc paints a disc of grey of radius r about (cx, cy) on img.
func drawDisc(img *image.Gray, cx, cy, r float64, grey uint8) {
	for y := int(cy - r - 1); y <= int(cy+r+1); y++ {
		for x := int(cx - r - 1); x <= int(cx+r+1); x++ {
			if math.Hypot(float64(x)+0.5-cx, float64(y)+0.5-cy) <= r {
				img.SetGray(x, y, color.Gray{Y: grey})
			}
		}
	}
}

// pipAtPos returns the index of the dark pip found nearest (x, y).
func pipAtPos(t *testing.T, ps []pip, x, y float64) int {
	t.Helper()
	best, bd := -1, 4.0
	for i, p := range ps {
		if d := math.Hypot(p.x-x, p.y-y); !p.light && d < bd {
			best, bd = i, d
		}
	}
	if best < 0 {
		t.Fatalf("no pip found at %.0f,%.0f", x, y)
	}
	return best
}

// TestCheckFaceTwoNeedsOneDie: two pips that fit a 2 are one face only
// when die-bright all the way between them; across the gap between two
// dice they are two dice's pips, even on a tray light enough to pass for
// a die's shade.
func TestCheckFaceTwoNeedsOneDie(t *testing.T) {
	pips := [][2]float64{{110, 110}, {130, 130}}
	for _, tc := range []struct {
		name string
		dice []image.Rectangle
		want bool
	}{
		{"one die", []image.Rectangle{image.Rect(90, 90, 150, 150)}, true},
		{"two dice", []image.Rectangle{image.Rect(90, 90, 119, 150), image.Rect(122, 90, 150, 150)}, false},
	} {
		g, ps := drawDice(t, 240, 240, 130, tc.dice, pips, 3.5)
		_, q := fitChecked(t, g, ps, 2, []int{pipAtPos(t, ps, 110, 110), pipAtPos(t, ps, 130, 130)})
		if got := q > 0; got != tc.want {
			t.Errorf("%s: face accepted = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestCheckFaceInFrame: a face the photo's edge cuts is not read, unless
// inFrame of its half side lies in the photo (a key's light legend at
// matteop65's right edge, in noisy and sharpened copies of dice_23, was
// read as a 2 at 0.7).
func TestCheckFaceInFrame(t *testing.T) {
	read := func(dx float64) (face, float64) { // dx: the 2's centre from the right edge
		cx := 240 - dx
		pips := [][2]float64{{cx - 6, 120 - 6}, {cx + 6, 120 + 6}}
		die := image.Rect(int(cx)-22, 98, min(int(cx)+22, 240), 142)
		g, ps := drawDice(t, 240, 240, 60, []image.Rectangle{die}, pips, 2.5)
		return fitChecked(t, g, ps, 2, []int{pipAtPos(t, ps, pips[0][0], pips[0][1]), pipAtPos(t, ps, pips[1][0], pips[1][1])})
	}
	if _, q := read(60); q <= 0 {
		t.Fatal("a 2 well inside the photo is not read")
	}
	// The half side is guessed from the pips' size, which the die's cut
	// edge changes a little: take it from a face near the edge.
	near, q := read(20)
	if q <= 0 {
		t.Fatal("a 2 near the photo's edge is not read")
	}
	h := near.halfPx()
	for _, tc := range []struct {
		name string
		dx   float64
		want bool
	}{
		// The face's corners lie on the photo's axes; the last column
		// is 239, one pixel in from the edge. Whole pixels: drawn between
		// them, the pips measure another size, and the half side with it.
		{"0.85 of its half side in the photo", math.Round(1 + 0.85*h), true},
		{"0.75 of its half side in the photo", math.Round(1 + 0.75*h), false},
		{"cut by the edge", 10, false},
	} {
		f, q := read(tc.dx)
		if got := q > 0; got != tc.want {
			t.Errorf("%s: face accepted = %v, want %v (half side %.1f px)", tc.name, got, tc.want, f.halfPx())
		}
	}
}

// TestCheckFaceOneTwin: a lone pip with a twin (its size, as round and
// as clear) within oneTwinFree radii is a doubtful 1 — it may be a pip of
// a 3 or 5 whose other pips were lost (a small purple die's 3 read as 1)
// — and so is one with a twin further off on its die, within
// farTwinReach (a 2 whose face a speck refused); a smaller spot there
// (another face's pip), or a twin further off beyond the die's edge, does
// not matter.
func TestCheckFaceOneTwin(t *testing.T) {
	for _, tc := range []struct {
		name   string
		dx, r2 float64
		die    int // the die's right edge
		doubt  bool
	}{
		{"twin 5 radii off", 20, 4, 160, true},
		{"twin 7 radii off, on the die", 28, 4, 160, true},
		{"twin 7 radii off, past the die's edge", 28, 4, 138, false},
		{"twin 11 radii off, on the die", 44, 4, 175, false},
		{"smaller spot 5 radii off", 20, 2.4, 160, false},
	} {
		one := [][2]float64{{120, 120}}
		g, ps := drawDice(t, 240, 240, 60, []image.Rectangle{image.Rect(80, 80, tc.die, 160)}, one, 4)
		twin := ps[pipAtPos(t, ps, 120, 120)]
		twin.x += tc.dx
		twin.r *= tc.r2 / 4
		twin.cov = [3]float64{twin.cov[0] * tc.r2 * tc.r2 / 16, twin.cov[1] * tc.r2 * tc.r2 / 16, twin.cov[2] * tc.r2 * tc.r2 / 16}
		with := append(append([]pip(nil), ps...), twin)
		f, ok := fitOne(with, pipAtPos(t, ps, 120, 120))
		if !ok {
			t.Fatalf("%s: no fit", tc.name)
		}
		if checkFace(g, with, &f) <= 0 {
			t.Fatalf("%s: 1 refused", tc.name)
		}
		if f.doubt != tc.doubt {
			t.Errorf("%s: 1 doubtful = %v, want %v", tc.name, f.doubt, tc.doubt)
		}
	}
}

// TestCheckFaceBlurredPipOnFace: a roundish dark spot like the face's pips
// on the face makes it part of a bigger face even when the spot is not a
// clean pip (motion blur), but a long thin one (a lit edge) does not.
func TestCheckFaceBlurredPipOnFace(t *testing.T) {
	g, ps := drawDice(t, 480, 480, 60, []image.Rectangle{image.Rect(84, 84, 156, 156)}, [][2]float64{{108, 108}, {132, 132}}, 5)
	f, q := fitChecked(t, g, ps, 2, []int{pipAtPos(t, ps, 108, 108), pipAtPos(t, ps, 132, 132)})
	if q <= 0 {
		t.Fatal("a clean 2 was rejected")
	}
	own := ps[pipAtPos(t, ps, 108, 108)]
	for _, tc := range []struct {
		name  string
		elong float64
		want  bool
	}{
		{"blurred pip", 0.62, false},
		{"lit edge", 0.15, true},
	} {
		spot := own
		// Past the middle, where no other dark spot may lie at all, but
		// on the face: (1.8, 0) in face units.
		spot.x, spot.y = 120+1.8*12, 120
		spot.ok, spot.elong = false, tc.elong
		with := append(append([]pip(nil), ps...), spot)
		ff := f
		if got := checkFace(g, with, &ff) > 0; got != tc.want {
			t.Errorf("%s on the face: accepted = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestMarkCockedReference: with no face of several pips to compare, lone
// pips are judged against each other (a slanted webcam sees every 1
// foreshortened); with fewer than three, against the squarest. A die
// alone is never judged cocked here: only a camera known to look down
// (TopDown, markLeaning) can tell from one die.
func TestMarkCockedReference(t *testing.T) {
	lone := func(fores ...float64) []pipDie {
		var ds []pipDie
		for _, f := range fores {
			ds = append(ds, pipDie{f: face{n: 1, fore: f}})
		}
		return ds
	}
	for _, tc := range []struct {
		name   string
		ds     []pipDie
		cocked []bool
	}{
		{"four 1s at a slant", lone(0.62, 0.71, 0.78, 0.84), []bool{false, false, false, false}},
		{"one leaning among flat 1s", lone(0.5, 0.95, 0.97, 0.99), []bool{true, false, false, false}},
		{"two 1s", lone(0.62, 0.95), []bool{true, false}},
		{"two 1s at a slant", lone(0.62, 0.7), []bool{false, false}},
		{"one 1 at a slant", lone(0.6), []bool{false}},
		{"one 3 at a slant", []pipDie{{f: face{n: 3, fore: 0.6}}}, []bool{false}},
		{"a 1 beside a flat 2", append(lone(0.62, 0.64, 0.66), pipDie{f: face{n: 2, fore: 1}}), []bool{true, true, true, false}},
		{"a leaning 3 beside flat 1s", append(lone(0.95, 0.97), pipDie{f: face{n: 3, fore: 0.5}}), []bool{false, false, true}},
	} {
		markCocked(tc.ds)
		for i, d := range tc.ds {
			if d.cocked != tc.cocked[i] {
				t.Errorf("%s: die %d (fore %.2f) cocked = %v, want %v", tc.name, i, d.f.fore, d.cocked, tc.cocked[i])
			}
		}
	}
}

// TestMarkOtherPairings: three pips that read as a 2 on top with a 1 on
// the side, or a 1 on top with a 2 on the side, keep the chosen 2 only
// when its pips are clearly more alike in shape (seen with one tilt).
func TestMarkOtherPairings(t *testing.T) {
	round := [3]float64{4, 0, 4}
	flat := [3]float64{4, 0, 1.4} // a side face's pip, squashed
	mk := func(c0, c1, c2 [3]float64) []pip {
		return []pip{{x: 100, y: 100, cov: c0}, {x: 110, y: 125, cov: c1}, {x: 95, y: 135, cov: c2}}
	}
	two := func(a, b int) face { return face{n: 2, pips: []int{a, b}} }
	one := face{n: 1, pips: []int{2}}
	for _, tc := range []struct {
		name  string
		ps    []pip
		doubt bool
	}{
		{"2 on top, 1 on the side", mk(round, round, flat), false},
		{"1 on top, 2 on the side", mk(round, flat, flat), true},
		{"all alike", mk(round, round, round), true},
	} {
		chosen := []face{two(0, 1), one}
		valid := []face{two(0, 1), two(1, 2), one}
		markOtherPairings(chosen, valid, tc.ps)
		if chosen[0].doubt != tc.doubt {
			t.Errorf("%s: doubt = %v, want %v", tc.name, chosen[0].doubt, tc.doubt)
		}
	}
	// The other pip in a face of its own (a 2 beside a 2) is no other
	// reading.
	chosen := []face{two(0, 1), {n: 2, pips: []int{2, 3}}}
	ps := append(mk(round, flat, flat), pip{x: 80, y: 150, cov: flat})
	markOtherPairings(chosen, []face{two(0, 1), two(1, 2), chosen[1]}, ps)
	if chosen[0].doubt {
		t.Error("a pip of another chosen 2 made the first doubtful")
	}
}

// TestMarkUnalikeTwos: a 2 of a round pip and one squashed to half its
// width (a 1's pip with a pip of its side face, matteop65's dice_35 made
// darker: 0.45 against 0.80 elongation) is doubtful; a 2 of two pips seen
// with one tilt is not, however squashed.
func TestMarkUnalikeTwos(t *testing.T) {
	round, flat := [3]float64{4, 0, 4}, [3]float64{4, 0, 1}
	for _, tc := range []struct {
		name  string
		a, b  [3]float64
		doubt bool
	}{
		{"round and squashed", round, flat, true},
		{"squashed and round", flat, round, true},
		{"both round", round, round, false},
		{"both squashed", flat, flat, false},
	} {
		chosen := []face{{n: 2, pips: []int{0, 1}}, {n: 1, pips: []int{2}}}
		markUnalikeTwos(chosen, []pip{{cov: tc.a}, {cov: tc.b}, {cov: flat}})
		if chosen[0].doubt != tc.doubt || chosen[1].doubt {
			t.Errorf("%s: doubt = %v, %v; want %v, false", tc.name, chosen[0].doubt, chosen[1].doubt, tc.doubt)
		}
	}
}

// TestConsistentSidesSetPolarity: with no face of several pips on top,
// a 1 whose die shows side faces sets the roll's pip polarity, though a
// light spot elsewhere (a highlight) has more contrast.
func TestConsistentSidesSetPolarity(t *testing.T) {
	ps := []pip{
		{x: 100, y: 100, r: 4, core: 40, ring: 200},             // a die's dark 1
		{x: 300, y: 50, r: 4, core: 10, ring: 250, light: true}, // a highlight
	}
	ds := []pipDie{{f: face{n: 1, pips: []int{0}}}, {f: face{n: 1, pips: []int{1}}}}
	if got, odd := consistent(slices.Clone(ds), ps); len(got) != 1 || got[0].f.pips[0] != 1 || len(odd) != 1 || odd[0].f.pips[0] != 0 {
		t.Fatalf("without sides the stronger spot sets the polarity: kept %v, odd %v", got, odd)
	}
	ds[0].sidePips = []int{5, 6}
	got, odd := consistent(ds, ps)
	if len(got) != 1 || got[0].f.pips[0] != 0 {
		t.Errorf("kept %v, want only the die with side faces", got)
	}
	if len(odd) != 1 || odd[0].f.pips[0] != 1 {
		t.Errorf("left out as odd %v, want the highlight", odd)
	}
}

// TestDropRinging: two light specks at the edges of a white die's two dark
// pips (coarse JPEG overshooting, matteop65's six_57 at quality 40) are
// no light-pipped 2 of a second die; light pips as large as the dark ones
// beside them are, and so are specks that are not all at a pip's edge.
func TestDropRinging(t *testing.T) {
	ps := []pip{
		{x: 355, y: 305, r: 3.8}, {x: 341, y: 325, r: 3.9}, // the white die's 2
		{x: 352, y: 309, r: 1.4, light: true}, {x: 344, y: 321, r: 1.3, light: true},
		{x: 352, y: 309, r: 3.5, light: true}, {x: 344, y: 321, r: 3.5, light: true},
		{x: 380, y: 330, r: 1.4, light: true},
	}
	two := pipDie{f: face{n: 2, pips: []int{0, 1}}}
	for _, tc := range []struct {
		name  string
		other []int
		kept  int
	}{
		{"specks at both pips' edges", []int{2, 3}, 1},
		{"light pips as large", []int{4, 5}, 2},
		{"one speck away from the pips", []int{2, 6}, 2},
	} {
		got := dropRinging([]pipDie{two, {f: face{n: 2, pips: tc.other}}}, ps)
		if len(got) != tc.kept || got[0].f.pips[0] != 0 {
			t.Errorf("%s: kept %v, want %d dice, the dark 2 first", tc.name, got, tc.kept)
		}
	}
}

// TestConsistentMarks: beside a roll of dark pips, a face of light pips
// both smaller (under 0.65 of the radius) and fainter (under 0.6 of the
// contrast) is unread — a keyboard's legends read as 2s in matteop65's
// altered copies were 0.47–0.55 and 0.36–0.55 — while a small die of
// another colour, its pips as clear, or a fainter die of its size, keeps
// its face. Marks vouch for no 1 of their colour (a review's case).
func TestConsistentMarks(t *testing.T) {
	for _, tc := range []struct {
		name     string
		r, ring  float64
		wantNull bool
	}{
		{"small and faint (a key's legends)", 2.2, 130, true},
		{"small, as clear (a small die of another colour)", 2.2, 220, false},
		{"faint, as large", 4, 130, false},
	} {
		var ps []pip
		var ds []pipDie
		for i := range 2 { // two dark 4s, pips of radius 4 and contrast 180
			var idx []int
			for k := range 4 {
				ps = append(ps, pip{x: 100*float64(i) + 10*float64(k), y: 100, r: 4, core: 40, ring: 220})
				idx = append(idx, len(ps)-1)
			}
			ds = append(ds, pipDie{f: face{n: 4, pips: idx, q: 1}})
		}
		ps = append(ps, pip{x: 300, y: 300, r: tc.r, core: 30, ring: tc.ring, light: true},
			pip{x: 310, y: 310, r: tc.r, core: 30, ring: tc.ring, light: true})
		ds = append(ds, pipDie{f: face{n: 2, pips: []int{len(ps) - 2, len(ps) - 1}, q: 1}})
		// A dot like the 2's pips on another key: the marks vouch for no
		// 1 of their colour, a die does.
		ps = append(ps, pip{x: 400, y: 300, r: tc.r, core: 30, ring: tc.ring, light: true})
		ds = append(ds, pipDie{f: face{n: 1, pips: []int{len(ps) - 1}, q: 1}})
		got, odd := consistent(ds, ps)
		if len(got) < 3 || got[2].null != tc.wantNull {
			t.Errorf("%s: kept %d, the 2 null = %v; want it kept, null %v", tc.name, len(got), len(got) >= 3 && got[2].null, tc.wantNull)
		}
		if tc.wantNull && (len(got) != 3 || len(odd) != 1) {
			t.Errorf("%s: the dot beside the marks kept as a 1 (kept %d, odd %d)", tc.name, len(got), len(odd))
		}
	}
}

// TestConsistentSidedOnesOutvote: two light dots on a keyboard's key make
// a face of several pips, yet five dark 1s whose dice show side faces
// (matteop65's dice_45 with a little noise) are more dice: their polarity
// is the roll's. One such 1 against the face is no clear majority, and
// the face's polarity stands.
func TestConsistentSidedOnesOutvote(t *testing.T) {
	ps := []pip{
		{x: 20, y: 20, r: 3, core: 40, ring: 240, light: true}, {x: 30, y: 30, r: 3, core: 40, ring: 240, light: true},
	}
	ds := []pipDie{{f: face{n: 2, pips: []int{0, 1}}}}
	for i := range 5 {
		ps = append(ps, pip{x: 100 + 60*float64(i), y: 200, r: 4, core: 60, ring: 180})
		ds = append(ds, pipDie{f: face{n: 1, pips: []int{len(ps) - 1}}, sidePips: []int{90, 91}})
	}
	got, odd := consistent(slices.Clone(ds), ps)
	if len(got) != 6 || len(odd) != 0 {
		t.Errorf("five sided 1s: kept %d, odd %d; want all 6 kept", len(got), len(odd))
	}
	// Having outvoted the face, the 1s are contested (vouchContested).
	for _, d := range got {
		if d.contested != (d.f.n == 1) {
			t.Errorf("five sided 1s: a %d contested = %v, want %v", d.f.n, d.contested, d.f.n == 1)
		}
	}
	got, odd = consistent(slices.Clone(ds[:2]), ps)
	if len(got) != 1 || got[0].f.n != 2 || len(odd) != 1 {
		t.Errorf("one sided 1: kept %v, odd %v; want the face kept and the 1 odd", got, odd)
	}
	// 1s of the face's polarity are not contested.
	for k := 2; k < len(ps); k++ {
		ps[k].light, ps[k].core, ps[k].ring = true, 40, 240
	}
	got, _ = consistent(slices.Clone(ds), ps)
	for _, d := range got {
		if d.contested {
			t.Errorf("1s agreeing with the face: a %d contested", d.f.n)
		}
	}
}

// TestVouchContested: a contested 1 keeps its face only with its pip on a
// die-like region, near its middle across and not below it (a slanted
// camera sees the top above the die's middle); a dot off the middle (a
// key's) leaves it unread, a pip on no region (a black die on dark felt
// makes none) keeps its face.
func TestVouchContested(t *testing.T) {
	g := &grayImg{scale: 1}
	bs := []blob{{box: image.Rect(100, 100, 160, 170), area: 3600, solid: 0.95, aspect: 1.15, corners: 6}}
	for _, tc := range []struct {
		name   string
		x, y   float64
		bs     []blob
		unread bool
	}{
		{"top's middle", 131, 122, bs, false},
		{"off the middle across", 148, 122, bs, true},
		{"below the middle", 131, 150, bs, true},
		{"on no region", 300, 300, bs, false},
		{"no regions", 131, 122, nil, false},
	} {
		pds := []pipDie{{f: face{n: 1, cx: tc.x, cy: tc.y}, contested: true}, {f: face{n: 1, cx: 148, cy: 122}}}
		vouchContested(g, pds, tc.bs)
		if pds[0].null != tc.unread {
			t.Errorf("%s: unread = %v, want %v", tc.name, pds[0].null, tc.unread)
		}
		if pds[1].null {
			t.Errorf("%s: an uncontested 1 was made unread", tc.name)
		}
	}
}

// TestUpOf: of two faces of one die, one clearly less foreshortened is the
// top; a difference under sureFore between faces of several pips yields to
// their places (a slanted webcam sees a die's top above its sides — a far
// die's squashed 2 at 0.58 over its side's 4 at 0.73, matteop65's
// two_29); a lone pip's foreshortening, from its one pip's shape, is
// trusted from clearFore on, as before.
func TestUpOf(t *testing.T) {
	at := func(n int, fore, cy float64) face {
		return face{n: n, fore: fore, cy: cy, A: m2{10, 0, 0, 10}, half: 2.4}
	}
	for _, tc := range []struct {
		name string
		f, h face
		want int
	}{
		{"clearly squarer below", at(4, 0.95, 160), at(2, 0.6, 117), 1},
		{"a little squarer below", at(4, 0.73, 160), at(2, 0.58, 117), -1},
		{"a little squarer, level", at(4, 0.73, 117), at(2, 0.58, 117), 1},
		{"alike, above", at(3, 0.7, 100), at(2, 0.68, 130), 1},
		{"alike, level", at(3, 0.7, 100), at(2, 0.68, 102), 0},
		{"a lone pip a little squarer below", at(1, 0.8, 160), at(4, 0.64, 117), 1},
	} {
		if got := upOf(&tc.f, &tc.h, upright); got != tc.want {
			t.Errorf("%s: upOf = %d, want %d", tc.name, got, tc.want)
		}
		if got := upOf(&tc.h, &tc.f, upright); got != -tc.want {
			t.Errorf("%s, swapped: upOf = %d, want %d", tc.name, got, -tc.want)
		}
	}
}

// TestCheckFaceSixOfBigPips: a 6 whose pips are large for its face (pip
// radius 0.45 of the offset, as blur makes them) and whose columns are
// long still leaves enough of the face between its pips to check.
func TestCheckFaceSixOfBigPips(t *testing.T) {
	at := [][2]float64{{90, 86}, {110, 86}, {110, 100}, {110, 114}, {90, 114}, {90, 100}} // pattern order
	g, ps := drawDice(t, 240, 240, 60, []image.Rectangle{image.Rect(68, 66, 132, 134)}, at, 4.5)
	var idx []int
	for _, p := range at {
		idx = append(idx, pipAtPos(t, ps, p[0], p[1]))
	}
	if f, q := fitChecked(t, g, ps, 6, idx); q <= 0 {
		t.Errorf("6 rejected (pipR %.2f, stretch %.2f)", f.pipR, f.sv)
	}
}

// fitChecked fits the pattern of n to the pips idx, failing the test when
// none fits, and returns the face and its quality (see checkFace).
func fitChecked(t *testing.T, g *grayImg, ps []pip, n int, idx []int) (face, float64) {
	t.Helper()
	f, ok := fitFace(ps, n, idx)
	if !ok {
		t.Fatalf("no %d fits the pips %v", n, idx)
	}
	q := checkFace(g, ps, &f)
	return f, q
}

// findSpotted finds the pips drawn in img, returns those at the places at
// (in order) and checks that a spot drawn at spot, when not nil, is found
// with a contrast a face must pass (else the test tests nothing).
func findSpotted(t *testing.T, img *image.Gray, at [][2]float64, spot *[2]float64) (*grayImg, []pip, []int) {
	t.Helper()
	g, ps := findDrawn(t, img)
	var idx []int
	for _, p := range at {
		idx = append(idx, pipAtPos(t, ps, p[0], p[1]))
	}
	if spot != nil {
		k := pipAtPos(t, ps, spot[0], spot[1])
		if c := ps[k].ring - ps[k].core; c < spotMinContrast {
			t.Fatalf("the spot's contrast is %.0f, below %d: it tests nothing", c, spotMinContrast)
		}
	}
	return g, ps, idx
}

// TestCheckFaceSixBridge: a faint grey smear midway between two pips of a
// 6's column (the blur of a shaken photo) does not refuse the 6, as a
// spot as dark as a pip there does; nor does it let a 4 through.
func TestCheckFaceSixBridge(t *testing.T) {
	at := [][2]float64{{86, 84}, {114, 84}, {114, 100}, {114, 116}, {86, 116}, {86, 100}} // pattern order
	for _, tc := range []struct {
		name string
		grey uint8 // of the spot at (86, 92); 0: none
		six  bool  // the 6 is accepted
		four bool  // the 4 of its corners is
	}{
		{"no spot", 0, true, false},
		{"faint smear", 140, true, false},
		{"dark spot", 20, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img := paintDice(240, 240, 60, []image.Rectangle{image.Rect(66, 64, 134, 136)}, at, 3.5)
			if tc.grey > 0 {
				drawDisc(img, 86, 92, 2.5, tc.grey)
			}
			var spot *[2]float64
			if tc.grey > 100 {
				spot = &[2]float64{86, 92}
			}
			g, ps, idx := findSpotted(t, img, at, spot)
			if _, q := fitChecked(t, g, ps, 6, idx); (q > 0) != tc.six {
				t.Errorf("6: quality %.2f, want accepted %v", q, tc.six)
			}
			if _, q := fitChecked(t, g, ps, 4, []int{idx[0], idx[1], idx[3], idx[4]}); (q > 0) != tc.four {
				t.Errorf("4 of the corners: quality %.2f, want accepted %v", q, tc.four)
			}
		})
	}
}

// TestCheckFacePipSmear: a faint spot touching a pip of a 3 is that pip's
// smear (a shaken photo: see pipSmear), and the 3 stands; the same spot
// away from its pips refuses it as before.
func TestCheckFacePipSmear(t *testing.T) {
	at := [][2]float64{{88, 88}, {100, 100}, {112, 112}} // pattern order
	for _, tc := range []struct {
		name   string
		x, y   float64
		grey   uint8
		accept bool
	}{
		{"no spot", 0, 0, 0, true},
		{"faint, touching a pip", 93, 86, 140, true},
		{"faint, off the pips", 108, 93, 140, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			img := paintDice(200, 200, 60, []image.Rectangle{image.Rect(72, 72, 128, 128)}, at, 3.5)
			if tc.grey > 0 {
				drawDisc(img, tc.x, tc.y, 2, tc.grey)
			}
			var spot *[2]float64
			if tc.grey > 0 {
				spot = &[2]float64{tc.x, tc.y}
			}
			g, ps, idx := findSpotted(t, img, at, spot)
			if _, q := fitChecked(t, g, ps, 3, idx); (q > 0) != tc.accept {
				t.Errorf("quality %.2f, want accepted %v", q, tc.accept)
			}
		})
	}
}

// TestUpOfPips: a lone pip under half the radius of the other face's pips
// is that die's side, whatever its shape and place say (see upOfPips);
// one as large is judged by upOf.
func TestUpOfPips(t *testing.T) {
	ps := []pip{{r: 4}, {r: 4}, {r: 4}, {r: 1.5}, {r: 4.5}}
	three := face{n: 3, pips: []int{0, 1, 2}, fore: 0.76, cy: 120, A: m2{10, 0, 0, 10}, half: 2.4}
	for _, tc := range []struct {
		name string
		one  face
		want int // for the 3
	}{
		{"a speck, squarer and higher", face{n: 1, pips: []int{3}, fore: 0.94, cy: 100, A: m2{10, 0, 0, 10}, half: 2.4}, 1},
		{"a pip as large, squarer and higher", face{n: 1, pips: []int{4}, fore: 0.94, cy: 100, A: m2{10, 0, 0, 10}, half: 2.4}, -1},
	} {
		if got := upOfPips(ps, &three, &tc.one, upright); got != tc.want {
			t.Errorf("%s: upOfPips = %d, want %d", tc.name, got, tc.want)
		}
		if got := upOfPips(ps, &tc.one, &three, upright); got != -tc.want {
			t.Errorf("%s, swapped: upOfPips = %d, want %d", tc.name, got, -tc.want)
		}
	}
}

// TestUpOfPipsFaintSide: of two faces of a die alike in foreshortening,
// the one of smaller and fainter pips is the side, above the other or not
// (matteop65's six_54: a 3's side 2 above it, 0.77 of its pips' radius
// and 0.62 of their contrast, made the 3 a side and the die unread). A
// face only smaller, or only fainter, leaves it to their places.
func TestUpOfPipsFaintSide(t *testing.T) {
	ps := []pip{
		{r: 4.3, core: 0, ring: 189}, {r: 4.3, core: 0, ring: 189}, {r: 4.3, core: 0, ring: 189}, // the 3
		{r: 3.3, core: 30, ring: 147}, {r: 3.3, core: 30, ring: 147}, // small and faint
		{r: 3.3, core: 0, ring: 189}, {r: 3.3, core: 0, ring: 189}, // small only
		{r: 4.3, core: 30, ring: 147}, {r: 4.3, core: 30, ring: 147}, // faint only
	}
	three := face{n: 3, pips: []int{0, 1, 2}, fore: 0.96, cy: 196, A: m2{10, 0, 0, 10}, half: 2.5}
	for _, tc := range []struct {
		name string
		pips []int
		want int // for the 3
	}{
		{"smaller and fainter", []int{3, 4}, 1},
		{"smaller only", []int{5, 6}, -1},
		{"fainter only", []int{7, 8}, -1},
	} {
		two := face{n: 2, pips: tc.pips, fore: 0.8, cy: 170, A: m2{10, 0, 0, 10}, half: 2.5}
		if got := upOfPips(ps, &three, &two, upright); got != tc.want {
			t.Errorf("%s: upOfPips = %d, want %d", tc.name, got, tc.want)
		}
		if got := upOfPips(ps, &two, &three, upright); got != -tc.want {
			t.Errorf("%s, swapped: upOfPips = %d, want %d", tc.name, got, -tc.want)
		}
	}
}

// TestReadStainsBesideAOne: three dark stains of a pip's size on the tray,
// fainter than the crisp 1 of the one die, are no dice: with no face of
// several pips the strongest 1 sets the roll's contrast (the median of the
// four would be a stain's, and all four were read as 1s).
func TestReadStainsBesideAOne(t *testing.T) {
	r, err := NewReader(Options{AllowedKinds: []string{"d6"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, stain := range []uint8{150, 120, 90} {
		img := image.NewGray(image.Rect(0, 0, 400, 300))
		for i := range img.Pix {
			img.Pix[i] = 190
		}
		die := image.Rect(100, 100, 150, 150)
		for y := die.Min.Y; y < die.Max.Y; y++ {
			for x := die.Min.X; x < die.Max.X; x++ {
				img.SetGray(x, y, color.Gray{Y: 235})
			}
		}
		drawDisc(img, 125, 125, 6, 20)
		for _, p := range [][2]float64{{250, 80}, {300, 200}, {60, 240}} {
			drawDisc(img, p[0], p[1], 5, stain)
		}
		dice, err := r.Read(img)
		if err != nil {
			t.Fatal(err)
		}
		one := false
		for _, d := range dice {
			switch {
			case centre(d.Box).In(die):
				one = d.Face != nil && *d.Face == 1
			case d.Face != nil:
				t.Errorf("stain of grey %d read as %s at %v", stain, Label(d), d.Box)
			}
		}
		if !one {
			t.Errorf("stains of grey %d: the die's 1 was not read: %v", stain, dice)
		}
	}
}

// TestUpFacesEveryTopDrawnOut: a face seen as steeply as a side is no top
// to report when another top is seen squarer, or alone, but when several
// tops in the photo are all drawn out alike (motion blur across it) they
// are the tops.
func TestUpFacesEveryTopDrawnOut(t *testing.T) {
	three := func(x, fore float64, k int) face {
		return face{n: 3, pips: []int{k, k + 1, k + 2}, cx: x, cy: 100, A: m2{10, 0, 0, 10 * fore}, fore: fore, half: 2.4, q: 1}
	}
	var ps []pip
	for _, x := range []float64{100, 300, 500} {
		for d := -1.0; d <= 1; d++ {
			ps = append(ps, pip{x: x + 10*d, y: 100 + 5*d, r: 3, ring: 200, core: 40, elong: 0.5, ok: true})
		}
	}
	got := upFaces(nil, nil, ps, []face{three(100, 0.51, 0), three(300, 0.53, 3), three(500, 0.55, 6)})
	if len(got) != 3 {
		t.Errorf("all tops drawn out: %d dice reported, want 3", len(got))
	}
	got = upFaces(nil, nil, ps, []face{three(100, 0.5, 0), three(300, 0.9, 3), three(500, 0.92, 6)})
	if len(got) != 2 {
		t.Errorf("one face drawn out among square tops: %d dice reported, want 2", len(got))
	}
	// One steep face alone may be marks on another kind of die (a d20's
	// numerals seen at a slant in the roller stand-in).
	if got = upFaces(nil, nil, ps[:3], []face{three(100, 0.5, 0)}); len(got) != 0 {
		t.Errorf("one steep face alone: %d dice reported, want 0", len(got))
	}
}

// TestUpFacesLowOne: a camera low over the tray sees every top flatter
// than minUpFore, and of dice all showing 1 no other top says so; a 1 is
// still the top when a side of several pips of its die lies below it.
// A lone pip over lone pips (a keyboard's legends), a face of several pips
// that flat, and a 1 flatter than a camera 70° from straight down sees
// are not read.
func TestUpFacesLowOne(t *testing.T) {
	img := paintDice(160, 120, 60, []image.Rectangle{image.Rect(50, 10, 110, 110)}, nil, 0)
	g, _ := findDrawn(t, img)
	inv := g.inverted()
	defer inv.close()
	one := func(fore float64) face {
		return face{n: 1, pips: []int{0}, cx: 80, cy: 40, A: m2{3, 0, 0, 3 * fore}, fore: fore, half: oneHalf, q: 1}
	}
	side := face{n: 2, pips: []int{1, 2}, cx: 80, cy: 75, A: m2{8, 0, 0, 8 * 0.35}, fore: 0.35, half: 2.5, q: 1}
	lone := face{n: 1, pips: []int{3}, cx: 80, cy: 60, A: m2{2.5, 0, 0, 2.5 * 0.35}, fore: 0.35, half: oneHalf, q: 1}
	two := face{n: 2, pips: []int{0, 4}, cx: 80, cy: 40, A: m2{8, 0, 0, 8 * 0.5}, fore: 0.5, half: 2.5, q: 1}
	ps := []pip{
		{x: 80, y: 40, r: 3, ring: 200, core: 20},
		{x: 72, y: 74, r: 3, ring: 190, core: 30},
		{x: 88, y: 76, r: 3, ring: 190, core: 30},
		{x: 80, y: 60, r: 2.5, ring: 190, core: 120},
		{x: 84, y: 42, r: 3, ring: 200, core: 20},
	}
	for _, tc := range []struct {
		name string
		fs   []face
		want int // the face read, 0 for none
	}{
		{"a 1 seen at 0.5 over its side 2", []face{one(0.5), side}, 1},
		{"a 1 seen at 0.4 over its side 2", []face{one(0.4), side}, 1},
		{"a 1 seen at 0.3 over its side 2", []face{one(0.3), side}, 0},
		{"a lone pip over a lone pip", []face{one(0.5), lone}, 0},
		{"a 2 seen at 0.5 over its side 2", []face{two, side}, 0},
		{"a 1 seen at 0.5 alone", []face{one(0.5)}, 0},
	} {
		var read []int
		for _, d := range upFaces(g, inv, ps, tc.fs) {
			if !d.null {
				read = append(read, d.f.n)
			}
		}
		var want []int
		if tc.want != 0 {
			want = []int{tc.want}
		}
		if !slices.Equal(read, want) {
			t.Errorf("%s: read %v, want %v", tc.name, read, want)
		}
	}
}

// TestTopAndSide: a cube's top and side are never both seen near square
// on (the squares of the cosines of the view's angles to its axes sum to
// one at most).
func TestTopAndSide(t *testing.T) {
	for _, tc := range []struct {
		top, side float64
		want      bool
	}{
		{0.71, 0.63, true},  // matteop65: a 3 on top, its side 2 below
		{0.87, 0.5, true},   // 30° from straight down
		{0.97, 0.97, false}, // two halves of one flat face
		{0.9, 0.75, false},
	} {
		f, h := face{fore: tc.top}, face{fore: tc.side}
		if got := topAndSide(&f, &h); got != tc.want {
			t.Errorf("fores %.2f and %.2f: topAndSide = %v, want %v", tc.top, tc.side, got, tc.want)
		}
	}
}

// TestReadPipsTwoAtTheEdge: a 2 near the photo's edge is read as 2 while
// its face is in the photo; when the edge cuts the face it is not read,
// and neither is the 1 its upper pip would make alone (its pips are the
// cut face's). It is never read as 1.
func TestReadPipsTwoAtTheEdge(t *testing.T) {
	for _, tc := range []struct {
		cy   float64 // the die's centre; the photo ends at 240
		want int     // 0: no face read
	}{
		{214, 2},
		{221.5, 0},
	} {
		for _, topDown := range []bool{false, true} {
			die := image.Rect(160-28, int(tc.cy)-28, 160+28, int(tc.cy)+28)
			g, _ := drawDice(t, 320, 240, 60, []image.Rectangle{die}, [][2]float64{{147.3, tc.cy - 12.7}, {172.7, tc.cy + 12.7}}, 4.5)
			ds, _, _ := readPips(g)
			if topDown {
				markLeaning(ds)
			}
			got := 0
			for _, d := range ds {
				if !d.null {
					if got != 0 {
						t.Errorf("centre %.1f, topDown %v: two dice read", tc.cy, topDown)
					}
					got = d.f.n
				}
			}
			if got != tc.want {
				t.Errorf("centre %.1f, topDown %v: read %d, want %d (0: none)", tc.cy, topDown, got, tc.want)
			}
		}
	}
}

// TestMarkRivalsFitsBetter: a face chosen for its number of pips is doubtful
// when a face sharing its pips fits the image clearly better (a top's 4
// and two pips of the side below taken for a 6).
func TestMarkRivalsFitsBetter(t *testing.T) {
	six := func(q float64) face { return face{n: 6, pips: []int{0, 1, 2, 3, 4, 5}, q: q} }
	four := face{n: 4, pips: []int{0, 1, 2, 3}, q: 0.98}
	for _, tc := range []struct {
		q     float64
		doubt bool
	}{
		{0.57, true},
		{0.95, false},
	} {
		valid := []face{six(tc.q), four}
		chosen := []face{six(tc.q)}
		markRivals(chosen, valid, fitsBetter)
		if chosen[0].doubt != tc.doubt {
			t.Errorf("6 at %.2f beside a 4 at 0.98: doubt = %v, want %v", tc.q, chosen[0].doubt, tc.doubt)
		}
	}
}

// TestChooseFaces: a pip belongs to one face, the one with most pips and
// then the best fit; a face whose pips all lie in a larger face that lost
// is kept (matteop65's four_13 at half size, blurred: the top 4 with two
// pips of the side 6 below fit as a 6, which lost to the side's own 6, and
// dropping the 4 as a piece of it left the side answered).
func TestChooseFaces(t *testing.T) {
	top4 := face{n: 4, pips: []int{0, 1, 2, 3}, q: 0.99}
	side6 := face{n: 6, pips: []int{4, 5, 6, 7, 8, 9}, q: 0.98}
	mixed6 := face{n: 6, pips: []int{0, 1, 2, 3, 4, 5}, q: 0.87}
	two := face{n: 2, pips: []int{0, 1}, q: 1}
	got := chooseFaces([]face{two, mixed6, top4, side6})
	var ns []int
	for _, f := range got {
		ns = append(ns, f.n)
	}
	if !slices.Equal(ns, []int{6, 4}) || !slices.Equal(got[0].pips, side6.pips) || !slices.Equal(got[1].pips, top4.pips) {
		t.Errorf("chosen %v, want the side's 6 and the top's 4", got)
	}
}

// TestMarkGlints: a 3 or 5 of light pips whose middle pip fades where the
// others have an edge may be a 2 or 4 with a glint of the light at its
// middle: doubtful. Pips that all fade (a blurred photo), a middle with an
// edge, or dark pips leave the face alone.
func TestMarkGlints(t *testing.T) {
	disc := func(light bool, fill float64) pip {
		return pip{r: 5, area: int(fill * math.Pi * 25), light: light}
	}
	for _, tc := range []struct {
		name       string
		n          int
		mid, other float64
		light      bool
		doubt      bool
	}{
		{"a 3 with a glint", 3, 1.15, 1.02, true, true},
		{"a 5 with a glint", 5, 1.15, 1.02, true, true},
		{"a 3 with an edged middle", 3, 1.04, 1.02, true, false},
		{"a blurred 3", 3, 1.2, 1.18, true, false},
		{"dark pips", 3, 1.15, 1.02, false, false},
	} {
		ps := make([]pip, tc.n)
		f := face{n: tc.n}
		for k := range ps {
			ps[k] = disc(tc.light, tc.other)
			f.pips = append(f.pips, k)
		}
		mid := 1
		if tc.n == 5 {
			mid = 4
		}
		ps[mid] = disc(tc.light, tc.mid)
		chosen := []face{f}
		markGlints(&grayImg{scale: 1}, chosen, ps)
		if chosen[0].doubt != tc.doubt {
			t.Errorf("%s: doubt %v, want %v", tc.name, chosen[0].doubt, tc.doubt)
		}
	}
}

// TestMarkGlare: a 2, 4 or 6 of dark pips whose middle is burnt out to
// white and brighter than the die, or holds a burnt-out spot clearly
// brighter than the rest of it (glare on a white die, whose middle can be
// no brighter than the die), may hide a 3's or 5's middle pip under glare:
// doubtful. A plain middle, a die overexposed all over (its body as white
// as its middle), a white die's middle with a pixel at 250, and a 3 (its
// middle is a pip) are left alone.
func TestMarkGlare(t *testing.T) {
	for _, tc := range []struct {
		name             string
		n                int
		body, glow, spot uint8
		doubt            bool
	}{
		{"a 4 with glare", 4, 190, 255, 0, true},
		{"a 2 with glare", 2, 190, 255, 0, true},
		{"a plain 4", 4, 190, 190, 0, false},
		{"an overexposed white 4", 4, 253, 255, 0, false},
		{"a white 4 under a patch with a burnt-out spot", 4, 245, 235, 255, true},
		{"a white 4 with a pixel at 250", 4, 245, 245, 250, false},
		{"a 3", 3, 190, 255, 0, false},
	} {
		img := image.NewRGBA(image.Rect(0, 0, 320, 240))
		for y := range 240 {
			for x := range 320 {
				v := tc.body
				switch d := math.Hypot(float64(x)-160, float64(y)-120); {
				case tc.spot != 0 && d <= 2:
					v = tc.spot
				case d <= 8:
					v = tc.glow
				}
				img.SetRGBA(x, y, color.RGBA{v, v, v, 255})
			}
		}
		g, err := newGray(img)
		if err != nil {
			t.Fatal(err)
		}
		ps := make([]pip, tc.n)
		f := face{n: tc.n, cx: 160 * g.scale, cy: 120 * g.scale}
		for k := range ps {
			ps[k] = pip{r: 5 * g.scale, core: 30, ring: float64(tc.body)}
			f.pips = append(f.pips, k)
		}
		chosen := []face{f}
		markGlare(g, chosen, ps)
		g.close()
		if chosen[0].doubt != tc.doubt {
			t.Errorf("%s: doubt %v, want %v", tc.name, chosen[0].doubt, tc.doubt)
		}
	}
}

// TestMarkThirdPips: a 2 with a third pip like its own one spacing on
// along its diagonal, on the same die, is a 3 whose face was not read:
// doubtful. A third pip unlike its own, or off the diagonal, or beyond a
// dark gap (another die), leaves the 2 alone.
func TestMarkThirdPips(t *testing.T) {
	for _, tc := range []struct {
		name  string
		third [2]float64
		gap   bool // a dark gap between the 2 and the third pip
		shape [3]float64
		doubt bool
	}{
		{"a 3's third pip", [2]float64{180, 140}, false, [3]float64{}, true},
		{"off the diagonal", [2]float64{180, 110}, false, [3]float64{}, false},
		{"on another die", [2]float64{180, 140}, true, [3]float64{}, false},
		{"unlike the 2's", [2]float64{180, 140}, false, [3]float64{40, 0, 4}, false},
	} {
		img := image.NewRGBA(image.Rect(0, 0, 320, 240))
		for y := range 240 {
			for x := range 320 {
				v := uint8(220)
				if tc.gap && math.Abs(float64(x+y)-310) < 3 {
					v = 30
				}
				img.SetRGBA(x, y, color.RGBA{v, v, v, 255})
			}
		}
		g, err := newGray(img)
		if err != nil {
			t.Fatal(err)
		}
		inv := g.inverted()
		s := g.scale
		round := [3]float64{4 * s * s, 0, 4 * s * s}
		pp := func(x, y float64, cov [3]float64) pip {
			return pip{x: x * s, y: y * s, r: 4 * s, cov: cov, ok: true, core: 30, ring: 220}
		}
		shape := round
		if tc.shape != ([3]float64{}) {
			shape = [3]float64{tc.shape[0] * s * s, 0, tc.shape[2] * s * s}
		}
		ps := []pip{pp(140, 100, round), pp(160, 120, round), pp(tc.third[0], tc.third[1], shape)}
		chosen := []face{{n: 2, pips: []int{0, 1}}}
		markThirdPips(g, inv, chosen, ps)
		inv.close()
		g.close()
		if chosen[0].doubt != tc.doubt {
			t.Errorf("%s: doubt %v, want %v", tc.name, chosen[0].doubt, tc.doubt)
		}
	}
}

// TestWholeDie: a flat pip holds no peak; a spot holding a lighter dot (a
// die seen whole holds its pips) is a whole die if light, and if dark
// when it holds two dots brighter than the tray around it (one is a
// glint in a concave pip); a pip shaded up to its edge (lit from one
// side) is a slope, no peak, however light it grows toward its edge.
func TestWholeDie(t *testing.T) {
	const cx, cy, r = 320.0, 240.0, 8.0
	for _, tc := range []struct {
		name        string
		paint       func(img *image.Gray)
		light, dark bool // whole as a light spot, as a dark one
	}{
		{"flat", func(*image.Gray) {}, false, false},
		{"dot", func(img *image.Gray) { drawDisc(img, cx+4, cy, 1.5, 170) }, true, false},
		{"glint", func(img *image.Gray) { drawDisc(img, cx+4, cy, 1.5, 240) }, true, false},
		{"two dots", func(img *image.Gray) {
			drawDisc(img, cx+4, cy-2, 1.5, 240)
			drawDisc(img, cx-4, cy+2, 1.5, 240)
		}, true, true},
		{"slope", func(img *image.Gray) {
			for y := int(cy - r); y <= int(cy+r); y++ {
				for x := int(cx - r); x <= int(cx+r); x++ {
					if u := float64(x) + 0.5 - cx; math.Hypot(u, float64(y)+0.5-cy) <= r {
						img.SetGray(x, y, color.Gray{Y: uint8(20 + 150*max(0, u/r))})
					}
				}
			}
		}, false, false},
	} {
		img := paintDice(640, 480, 60, []image.Rectangle{image.Rect(cx-30, cy-30, cx+30, cy+30)}, [][2]float64{{cx, cy}}, r)
		tc.paint(img)
		g, ps := findDrawn(t, img)
		p := ps[pipAtPos(t, ps, cx, cy)]
		top := 0.0
		if pks := peaksIn(g, &p, 0); len(pks) > 0 {
			top = pks[0].h
		}
		for _, light := range []bool{true, false} {
			p.light = light
			want := tc.dark
			if light {
				want = tc.light
			}
			if got := wholeDie(g, &p); got != want {
				t.Errorf("%s, light %v: whole %v, want %v (highest peak %.2f)", tc.name, light, got, want, top)
			}
		}
	}
}

// TestSpotsInDie: a die darker than the tray around it (grey 130 on 220,
// as a coloured die of light pips is in the inverted grey), turned 45° so
// the black-hat's square cannot fit in it, is filled whole by the closing,
// and its pips merge with it into one spot too large for a pip; they are
// found by the search inside it (spotsInDie). A die with nothing darker
// than its own grey yields no spot.
func TestSpotsInDie(t *testing.T) {
	const cx, cy, side = 320.0, 240.0, 34.0
	pips := [][2]float64{{cx - 8, cy}, {cx, cy}, {cx + 8, cy}}
	for _, withPips := range []bool{true, false} {
		img := image.NewGray(image.Rect(0, 0, 640, 480))
		for y := range 480 {
			for x := range 640 {
				g := uint8(220)
				// A square of the given side turned 45°: |u|+|v| within
				// half its diagonal.
				if math.Abs(float64(x)+0.5-cx)+math.Abs(float64(y)+0.5-cy) <= side/math.Sqrt2 {
					g = 130
				}
				img.SetGray(x, y, color.Gray{Y: g})
			}
		}
		if withPips {
			for _, p := range pips {
				drawDisc(img, p[0], p[1], 2.5, 40)
			}
		}
		_, ps := findDrawn(t, img)
		var near []pip
		for _, p := range ps {
			if !p.light && math.Hypot(p.x-cx, p.y-cy) < side {
				near = append(near, p)
			}
		}
		if !withPips {
			if len(near) > 0 {
				t.Errorf("a plain die: %d spots on it, want none: %+v", len(near), near)
			}
			continue
		}
		for _, q := range pips {
			if !slices.ContainsFunc(near, func(p pip) bool { return p.ok && math.Hypot(p.x-q[0], p.y-q[1]) < 1.5 }) {
				t.Errorf("no pip found at %.0f,%.0f: %+v", q[0], q[1], near)
			}
		}
	}
}

// TestCrowdedPips: the pips of a small die's 6 lie closer than their
// rings' radius (3.2 pixels across 8.5 apart, out of focus by a pixel),
// and the ring of a column's middle pip runs through its neighbours: the
// middle pips were no clean pips and the 6 was not read. Judged away from
// the pips beside them they are (clearRings), but only for faces of four
// or more: a column left alone (the other one lost to blur, matteop65's
// six_42 in three altered copies) is no 3.
func TestCrowdedPips(t *testing.T) {
	r, err := NewReader(Options{AllowedKinds: []string{"d6"}})
	if err != nil {
		t.Fatal(err)
	}
	const cx, cy, gap = 320.0, 240.0, 8.5
	for _, tc := range []struct {
		name    string
		columns []float64
		want    int // the face answered; 0: none
	}{
		{"a 6", []float64{-gap, gap}, 6},
		{"a 6's column alone", []float64{gap}, 0},
	} {
		img := image.NewGray(image.Rect(0, 0, 640, 480))
		for y := range 480 {
			for x := range 640 {
				g := uint8(110)
				if math.Abs(float64(x)+0.5-cx) <= 20 && math.Abs(float64(y)+0.5-cy) <= 20 {
					g = 230
				}
				img.SetGray(x, y, color.Gray{Y: g})
			}
		}
		for _, u := range tc.columns {
			for _, v := range []float64{-gap, 0, gap} {
				drawDisc(img, cx+u, cy+v, 3.2, 40)
			}
		}
		dice, err := r.Read(gaussianBlur(t, img, 1))
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		for _, d := range dice {
			if d.Face != nil {
				got = *d.Face
			}
		}
		if got != tc.want {
			t.Errorf("%s: answered %d (%v), want %d", tc.name, got, dice, tc.want)
		}
	}
}

// upright is the view down an upright camera's photo (see viewDown).
var upright = [2]float64{0, 1}

// TestViewDown: the tops and sides that foreshortening alone orders tell
// which way the camera's foot lies: two dice whose sides lie above their
// tops turn the view over (a camera upside down), one is too few (a
// leaning die's side is seen squarer than its top), even with two sides
// seen, and sides below their tops leave it upright, as does a pair
// with a face of low quality. Turned over, of a top and a side alike in
// foreshortening the lower one is the top.
func TestViewDown(t *testing.T) {
	die := func(x, sideDy float64) []face {
		a := m2{10, 0, 0, 10}
		return []face{
			{n: 4, cx: x, cy: 200, fore: 0.95, A: a, half: 2.5, q: 1},
			{n: 2, cx: x, cy: 200 + sideDy, fore: 0.55, A: a, half: 2.5, q: 1},
		}
	}
	// A face of low quality orders nothing: in matteop65's dice_46
	// washed out, a 2 made of a die's side pips (0.49) and a side paired
	// as a top with another side turned the view, and two sides were
	// answered as tops.
	poor := func(fs []face) []face {
		fs[1].q = 0.49
		return fs
	}
	pairs := func(fs []face) [][]bool {
		same := make([][]bool, len(fs))
		for i := range same {
			same[i] = make([]bool, len(fs))
		}
		for i := 0; i+1 < len(fs); i += 2 {
			same[i][i+1], same[i+1][i] = true, true
		}
		return same
	}
	for _, tc := range []struct {
		name string
		fs   []face
		want [2]float64
	}{
		{"two dice, sides above", append(die(100, -30), die(300, -30)...), [2]float64{0, -1}},
		{"one die, side above", die(100, -30), upright},
		{"two dice, sides below", append(die(100, 30), die(300, 30)...), upright},
		{"two dice, sides above, one of low quality", append(die(100, -30), poor(die(300, -30))...), upright},
	} {
		got := viewDown(tc.fs, pairs(tc.fs))
		if math.Abs(got[0]-tc.want[0]) > 1e-9 || math.Abs(got[1]-tc.want[1]) > 1e-9 {
			t.Errorf("%s: viewDown = %v, want %v", tc.name, got, tc.want)
		}
	}
	// One die showing a top and two sides above it is still one die.
	one := []face{
		{n: 4, cx: 100, cy: 200, fore: 0.95, A: m2{10, 0, 0, 10}, half: 2.5, q: 1},
		{n: 2, cx: 80, cy: 170, fore: 0.55, A: m2{10, 0, 0, 10}, half: 2.5, q: 1},
		{n: 3, cx: 120, cy: 170, fore: 0.6, A: m2{10, 0, 0, 10}, half: 2.5, q: 1},
	}
	same := [][]bool{{false, true, true}, {true, false, false}, {true, false, false}}
	if got := viewDown(one, same); got != upright {
		t.Errorf("one die, two sides above: viewDown = %v, want upright", got)
	}
	a := m2{10, 0, 0, 10}
	top, side := face{n: 3, cy: 230, fore: 0.8, A: a, half: 2.5}, face{n: 2, cy: 200, fore: 0.75, A: a, half: 2.5}
	if got := upOf(&top, &side, [2]float64{0, -1}); got != 1 {
		t.Errorf("turned over, the lower face: upOf = %d, want 1", got)
	}
	if got := upOf(&top, &side, upright); got != -1 {
		t.Errorf("upright, the lower face: upOf = %d, want -1", got)
	}
}
