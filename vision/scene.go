package vision

import (
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"math"
	"slices"

	"github.com/towerd/towerd/vision/dataset"
	"gocv.io/x/gocv"
)

// Scene is what enrolment learns of a fixed camera's view from its
// labelled photos: the empty tray (each pixel's median over the photos
// where no labelled die covers it) and the region the dice lay in. A
// reader uses it for photos of that view (shows) when it has no
// empty-tray photo of its own: a roller's busy floor and walls are then told from
// dice by what changed, not guessed from the photo alone.
type Scene struct {
	Width, Height int               // the photos' size
	Region        image.Rectangle   // where dice lay, grown by half a die
	side          int               // the coarse scale's longest side (newColourSide)
	cols, rows    int               // the coarse scale blobs are found at
	ycc           []uint8           // the empty tray there, YCrCb
	dice          []image.Rectangle // the boxes Region was made from (enrolment only)
	layout        []bool            // shows' grid points unlike the tray's main colour (setLayout)
	// fix moves the edges of a box the learnt tray finds (left, top,
	// right, bottom; in shares of its width and height; positive: the
	// found edge lies out by that much and is moved in) to where the
	// labelled boxes lie: under a fixed light a die's shadow joins its
	// region on one side, and the net learnt the labelled box.
	fix [4]float64
	// trim boxes each die found without its shade (litBox), learnt when no
	// labelled box says where a die ends and the dice cast shade: that box
	// lies steadier on the die than the found one moved by the median fix
	// (40° stand-in: centre sd 0.015 and 0.021 of a die against 0.024 and
	// 0.026). fix stays the median for a die litBox cannot box, and for a
	// towerd before trim.
	trim bool
	// chroma is the chroma difference from the tray that marks a pixel as
	// something on it (0: blobChroma): less than blobChroma where the
	// learnt tray's colour holds steady from photo to photo (trayChroma)
	// and the lower threshold finds more of the labelled dice (less those
	// it invents).
	// An ivory die on a light grey floor differs from it by 9–17 in
	// chroma, and its lit faces went unseen at blobChroma's 23.
	chroma int
}

// Chroma is the chroma difference from the learnt tray that marks a pixel
// as something on it (see Scene.chroma and trayChroma).
func (s *Scene) Chroma() int {
	if s.chroma == 0 {
		return blobChroma
	}
	return s.chroma
}

// SceneReport says what LearnScene found, for enrolment's output.
type SceneReport struct {
	Photos int // photos the tray was learnt from
	// Rare is how many points of the tray (at the coarse scale) fewer
	// than trayRare of those photos showed, where the dice come to rest;
	// RareLearnt how many of them the set's other photos (RareLooked)
	// showed often enough to learn them from (see seeRare).
	Rare, RareLearnt, RareLooked int
	// Dice is the labelled dice in those photos; FoundScene and
	// FoundAlone how many the detector finds with the learnt tray and
	// from each photo alone, InventedScene and InventedAlone the
	// die-like regions it finds that are no labelled die.
	Dice, FoundScene, FoundAlone, InventedScene, InventedAlone int
	// Why is set when no scene was learnt.
	Why string
	// AloneFix is the box fix (see Scene) for dice found in each photo
	// alone, learnt from the labelled boxes as the scene's is: for a
	// reader without a learnt tray.
	AloneFix [4]float64
	// Chroma is the chroma threshold the learnt tray's steadiness allows
	// (trayChroma), kept in the scene only where it finds more dice than
	// blobChroma; 0 when no tray was made.
	Chroma int
	// Sizes is how large each kind of die lies in the view, from the
	// labelled boxes; nil when the photos do not share one view or too
	// few boxes are labelled.
	Sizes *ViewSizes
	// View is the size of the photos when they share one view, whether
	// or not a tray was kept (where dice rest near one spot of a busy
	// floor none is, but the camera is still one); zero when they do
	// not.
	View image.Point
}

// Scene learning limits: the photos looked at (spread over the set), the
// fewest that make a median, the share of a photo's uncovered pixels that
// must match the median for the photos to share one view (and the share
// of the photos a pixel of the tray must agree with to stand as the
// median made it: seeUnder).
const (
	scenePhotos    = 120
	sceneMinPhotos = 20
	sceneSteady    = 0.9
)

// LearnScene learns the scene of a dataset's photos, decoded by decode.
// It returns nil (and the reason in the report) when the photos do not
// share one view, are too few, or the learnt tray finds fewer dice than
// each photo alone.
func LearnScene(set *dataset.Set, decode func(path string) (image.Image, error)) (*Scene, SceneReport, error) {
	var rep SceneReport
	files := set.Files
	if len(files) > scenePhotos {
		picked := make([]string, scenePhotos)
		for i := range picked {
			picked[i] = files[i*len(files)/scenePhotos]
		}
		files = picked
	}
	type photo struct {
		file    string
		c       *colourImg
		size    image.Point
		boxes   []image.Rectangle
		unboxed int // labelled dice without a box
	}
	var ps []photo
	defer func() {
		for _, p := range ps {
			p.c.close()
		}
	}()
	sizes := map[image.Point]int{}
	labelled := labelledBoxes(set)
	dieSide := medianSide(labelled)
	if dieSide == 0 {
		dieSide = aloneSide(set, files, decode)
	}
	side := coarseSide
	for _, f := range files {
		img, err := decode(set.Path(f))
		if err != nil {
			continue // enrolment reports unreadable photos itself
		}
		if len(ps) == 0 {
			side = sceneSide(img.Bounds().Size(), dieSide)
		}
		c, err := newColourSide(img, side)
		if err != nil {
			return nil, rep, fmt.Errorf("vision: learn scene: %s: %w", f, err)
		}
		sz := img.Bounds().Size()
		sizes[sz]++
		// A die without a box is not masked out: where dice land all over
		// the tray, the median over many photos leaves them out anyway.
		boxes, unboxed := splitLabels(set.Labels[f])
		ps = append(ps, photo{f, c, sz, boxes, unboxed})
	}
	var size image.Point
	for sz, n := range sizes {
		if n > sizes[size] {
			size = sz
		}
	}
	if sizes[size] < sceneMinPhotos || sizes[size] < len(ps)*9/10 {
		rep.Why = fmt.Sprintf("%d photos of one size (%dx%d) of %d looked at; a scene needs %d and nine in ten",
			sizes[size], size.X, size.Y, len(ps), sceneMinPhotos)
		return nil, rep, nil
	}
	// Only photos of the common size: their coarse images match.
	kept := ps[:0]
	for _, p := range ps {
		if p.size == size {
			kept = append(kept, p)
		} else {
			p.c.close()
		}
	}
	ps = kept
	rep.Photos = len(ps)
	if want := sceneSide(size, dieSide); want != side {
		// The scale was chosen from the first photo, of another size:
		// convert the photos of the common size again at theirs.
		side = want
		for i := range ps {
			img, err := decode(set.Path(ps[i].file))
			if err != nil {
				return nil, rep, fmt.Errorf("vision: learn scene: %s: %w", ps[i].file, err)
			}
			c, err := newColourSide(img, side)
			if err != nil {
				return nil, rep, fmt.Errorf("vision: learn scene: %s: %w", ps[i].file, err)
			}
			ps[i].c.close()
			ps[i].c = c
		}
	}
	s := &Scene{Width: size.X, Height: size.Y, side: side, cols: ps[0].c.mat.Cols(), rows: ps[0].c.mat.Rows()}
	n := s.cols * s.rows
	covered := make([][]bool, len(ps))
	data := make([][]uint8, len(ps))
	for i, p := range ps {
		d, err := p.c.mat.DataPtrUint8()
		if err != nil {
			return nil, rep, fmt.Errorf("vision: learn scene: %w", err)
		}
		data[i] = d
		covered[i] = make([]bool, n)
		for _, b := range p.boxes {
			cover(covered[i], b, p.c.scale, s.cols, s.rows)
		}
		// A die without a box is left out where the photo alone shows
		// it (where dice come to rest near one spot, the median would
		// hold them).
		if p.unboxed > 0 {
			if found := otherDice(findBlobsAlone(p.c), p.c.off, p.boxes); len(found) == p.unboxed {
				for _, b := range found {
					cover(covered[i], b, p.c.scale, s.cols, s.rows)
				}
			}
		}
	}
	s.median(data, covered)
	if slices.ContainsFunc(ps, func(p photo) bool { return p.unboxed > 0 }) {
		// A die without a box that the photo alone did not single out
		// (on the 30° stand-in it took two lights below the floor for
		// dice) is in the median where dice rest near one spot: the tray
		// there is partly the die's. What each such photo shows against
		// this first tray is left out too, and the tray made again.
		first, err := s.mat()
		if err != nil {
			return nil, rep, err
		}
		for i, p := range ps {
			if p.unboxed > 0 {
				_, mask := findBlobsMask(p.c, first, blobChroma, false)
				coverMask(covered[i], mask, s.cols, s.rows)
			}
		}
		first.Close()
		s.median(data, covered)
	}
	looked := make([]string, len(ps))
	for i, p := range ps {
		looked[i] = p.file
	}
	if err := s.seeRare(set, decode, looked, size, data, covered, &rep); err != nil {
		return nil, rep, err
	}
	s.seeUnder(data)
	bg, err := s.mat()
	if err != nil {
		return nil, rep, err
	}
	defer bg.Close()
	// The photos share one view when nearly all their uncovered pixels
	// match the median.
	var steady []float64
	for i, p := range ps {
		mask := diffMask(p.c, bg, true, blobChroma)
		if mask == nil {
			return nil, rep, errors.New("vision: learn scene: comparing a photo with the tray failed")
		}
		same, all := 0, 0
		for px := range n {
			if !covered[i][px] {
				all++
				if mask[px] == 0 {
					same++
				}
			}
		}
		if all > 0 {
			steady = append(steady, float64(same)/float64(all))
		}
	}
	slices.Sort(steady)
	if len(steady) == 0 || steady[len(steady)/2] < sceneSteady {
		med := 0.0
		if len(steady) > 0 {
			med = steady[len(steady)/2]
		}
		rep.Why = fmt.Sprintf("the photos do not share one view (%.0f%% of a photo's tray matches the median, want %.0f%%)",
			100*med, 100*sceneSteady)
		return nil, rep, nil
	}
	rep.Sizes, rep.View = learnSizes(set, size), size
	// Where dice lay: every labelled box, not only the photos looked at
	// (the set's photos are taken to be of one size, as those looked at
	// are, nine in ten).
	s.dice = labelled
	s.setRegion(s.dice)
	// The regions each photo shows against the tray, at a chroma
	// threshold, and how many labelled dice they find less those they
	// invent; the masks (for litEdges) of photos whose dice have no box.
	type regions struct {
		found [][]blob
		masks [][]uint8
		score int
	}
	find := func(chroma int) regions {
		r := regions{found: make([][]blob, len(ps)), masks: make([][]uint8, len(ps))}
		for i, p := range ps {
			found, mask := findBlobsMask(p.c, bg, chroma, false)
			fs, is := matchBlobs(found, p.c.off, p.boxes, p.unboxed, s.Region)
			r.found[i], r.score = found, r.score+fs-is
			if len(p.boxes) == 0 && p.unboxed > 0 {
				r.masks[i] = mask
			}
		}
		return r
	}
	regs := find(blobChroma)
	rep.Chroma = trayChroma(data, s.ycc, covered)
	if c := rep.Chroma; c < blobChroma {
		// The tray's tint is kept only where it finds more dice (less
		// those it invents): the shade between two dice lying close, of
		// the tray's tint, can join them (rendered d8 three to a small
		// tray: 45 of 47 found at 10, 47 at 23).
		if tinted := find(c); tinted.score > regs.score {
			s.chroma, regs = c, tinted
		}
	}
	// Keep the scene only when it finds dice at least as well as each
	// photo alone does.
	var edges, lit, alone [4][]float64
	for i, p := range ps {
		lone := findBlobsAlone(p.c)
		boxEdges(&alone, lone, p.c.off, p.boxes)
		fa, ia := matchBlobs(lone, p.c.off, p.boxes, p.unboxed, s.Region)
		found := regs.found[i]
		fs, is := matchBlobs(found, p.c.off, p.boxes, p.unboxed, s.Region)
		boxEdges(&edges, found, p.c.off, p.boxes)
		if mask := regs.masks[i]; mask != nil {
			litEdges(&lit, p.c, bg, mask, found, p.unboxed, s.Region)
		}
		rep.Dice += len(p.boxes) + p.unboxed
		rep.FoundAlone += fa
		rep.InventedAlone += ia
		rep.FoundScene += fs
		rep.InventedScene += is
	}
	rep.AloneFix = edgeFix(alone)
	if rep.FoundScene-rep.InventedScene < rep.FoundAlone-rep.InventedAlone {
		rep.Why = fmt.Sprintf("the learnt tray finds %d of %d dice (%d invented), each photo alone %d (%d invented)",
			rep.FoundScene, rep.Dice, rep.InventedScene, rep.FoundAlone, rep.InventedAlone)
		return nil, rep, nil
	}
	s.fix = edgeFix(edges)
	if len(labelled) == 0 {
		// No box to learn from: the die without its shade is the next
		// best (what reading finds then matches what enrolment located).
		s.fix = edgeFix(lit)
		s.trim = s.fix != [4]float64{}
	}
	return s, rep, nil
}

// Chroma threshold limits: the least a learnt tray allows, and the margin
// above its steadiest pixels' (all but one in a thousand) chroma
// difference from the photos.
const (
	chromaMin    = 10
	chromaMargin = 4
)

// trayChroma is the chroma difference from the learnt tray (YCrCb) that
// marks a pixel as something on it: chromaMargin above what all but one
// in a thousand of the photos' uncovered pixels differ by, once each
// photo's light is matched, within chromaMin and blobChroma. A tray seen
// by a noisy camera keeps blobChroma; a steady one finds dice of about
// its own colour by their tint. Dice left uncovered (no box, and not found
// in the photo alone) raise it, towards blobChroma.
func trayChroma(data [][]uint8, tray []uint8, covered [][]bool) int {
	var hist [256]int
	total := 0
	for i, a := range data {
		l := photoLight(a, tray)
		for px, c := range covered[i] {
			if !c {
				_, dc := l.residual(a[3*px:3*px+3], tray[3*px:3*px+3])
				hist[min(dc, 255)]++
				total++
			}
		}
	}
	if total == 0 {
		return blobChroma
	}
	acc := 0
	for v, k := range hist {
		if acc += k; 1000*acc >= 999*total {
			return min(max(v+chromaMargin, chromaMin), blobChroma)
		}
	}
	return blobChroma
}

// litEdges adds to edges, for each die-like blob of bs in region when they
// are the photo's n dice, how far the blob's edges lie outside those of its
// box without shade (litBox), as boxEdges does for labelled boxes.
func litEdges(edges *[4][]float64, c *colourImg, bg gocv.Mat, mask []uint8, bs []blob, n int, region image.Rectangle) {
	var dice []blob
	for _, b := range bs {
		if b.dieLike() && centre(b.box.Sub(c.off)).In(region) {
			dice = append(dice, b)
		}
	}
	if len(dice) != n {
		return
	}
	for _, b := range dice {
		if l, ok := c.litBox(mask, bg, b); ok {
			boxEdges(edges, []blob{b}, c.off, []image.Rectangle{l.Sub(c.off)})
		}
	}
}

// boxEdges adds to edges, for each labelled box that one die-like blob
// overlaps by half (intersection over union), how far the blob's left,
// top, right and bottom edges lie outside the box's, in shares of the
// blob's width and height.
func boxEdges(edges *[4][]float64, bs []blob, off image.Point, boxes []image.Rectangle) {
	for _, l := range boxes {
		for _, b := range bs {
			d := b.box.Sub(off)
			if !b.dieLike() || d.Dx() == 0 || d.Dy() == 0 || iou(d, l) < 0.5 {
				continue
			}
			w, h := float64(d.Dx()), float64(d.Dy())
			edges[0] = append(edges[0], float64(l.Min.X-d.Min.X)/w)
			edges[1] = append(edges[1], float64(l.Min.Y-d.Min.Y)/h)
			edges[2] = append(edges[2], float64(d.Max.X-l.Max.X)/w)
			edges[3] = append(edges[3], float64(d.Max.Y-l.Max.Y)/h)
			break
		}
	}
}

// Box fixing limits: the labelled dice it needs, the median shift of an
// edge below which it is noise (a pixel or two), and the most it moves one.
const (
	fixMinDice = 20
	fixMin     = 0.03
	fixMax     = 0.25
)

// edgeFix is the median of each edge's shift, when enough dice were
// matched and it is more than noise.
func edgeFix(edges [4][]float64) [4]float64 {
	var fix [4]float64
	for i, e := range edges {
		if len(e) < fixMinDice {
			return [4]float64{}
		}
		if m := median(e); math.Abs(m) >= fixMin {
			fix[i] = max(-fixMax, min(fixMax, m))
		}
	}
	return fix
}

// iou is the intersection of a and b over their union.
func iou(a, b image.Rectangle) float64 {
	in := a.Intersect(b)
	if in.Empty() {
		return 0
	}
	i := float64(in.Dx() * in.Dy())
	return i / (float64(a.Dx()*a.Dy()+b.Dx()*b.Dy()) - i)
}

// blobs finds the regions of c (at the scene's scale) that differ from the
// learnt tray, their boxes moved by the fix, or, trimming, each die's
// boxed without its shade.
func (s *Scene) blobs(c *colourImg) ([]blob, error) {
	bg, err := s.mat()
	if err != nil {
		return nil, err
	}
	defer bg.Close()
	// Against the tray learnt, a region that is not die-like is looked
	// into: what is the tray in shade is known there, whatever the floor
	// (see findBlobsMask).
	bs, mask := findBlobsMask(c, bg, s.Chroma(), true)
	if !s.trim {
		fixBoxes(bs, s.fix)
		return bs, nil
	}
	for i := range bs {
		fix := s.fix
		if bs[i].dieLike() {
			if lb, ok := c.litBox(mask, bg, bs[i]); ok {
				fix = trimFix(bs[i].box, lb, s.fix)
			}
		}
		fixBoxes(bs[i:i+1], fix)
	}
	return bs, nil
}

// trimFix is the fix that moves found box b to lb, its die without shade,
// each edge by at least trimLow and at most trimHigh times the median fix:
// a dark die's own facets, of the tray's tint, pass for shade too, by how
// much varies with its turn.
func trimFix(b, lb image.Rectangle, fix [4]float64) [4]float64 {
	w, h := float64(b.Dx()), float64(b.Dy())
	var f [4]float64
	for e, t := range [4]float64{float64(lb.Min.X-b.Min.X) / w, float64(lb.Min.Y-b.Min.Y) / h,
		float64(b.Max.X-lb.Max.X) / w, float64(b.Max.Y-lb.Max.Y) / h} {
		lo, hi := trimLow*fix[e], trimHigh*fix[e]
		if lo > hi { // an edge moved out
			lo, hi = hi, lo
		}
		f[e] = min(max(t, lo), hi)
	}
	return f
}

// trimLow and trimHigh bound how far trimming moves an edge, in shares of
// the median fix.
const (
	trimLow  = 0.5
	trimHigh = 1.5
)

// fixBoxes moves the edges of the blobs' boxes in by fix (out where it is
// negative; a box keeps at least a pixel each way).
func fixBoxes(bs []blob, fix [4]float64) {
	if fix == ([4]float64{}) {
		return
	}
	for i := range bs {
		b := &bs[i].box
		w, h := float64(b.Dx()), float64(b.Dy())
		r := image.Rect(
			b.Min.X+int(math.Round(fix[0]*w)), b.Min.Y+int(math.Round(fix[1]*h)),
			b.Max.X-int(math.Round(fix[2]*w)), b.Max.Y-int(math.Round(fix[3]*h)))
		if r.Dx() > 0 && r.Dy() > 0 {
			*b = r
		}
	}
}

// parseFix checks a box fix read from a model file: four edges, none
// moved more than fixMax.
func parseFix(v []float64) ([4]float64, error) {
	if len(v) != 4 {
		return [4]float64{}, fmt.Errorf("box fix of %d edges, want 4", len(v))
	}
	for _, x := range v {
		if !(math.Abs(x) <= fixMax) {
			return [4]float64{}, fmt.Errorf("box fix %v beyond %g", v, fixMax)
		}
	}
	return [4]float64(v), nil
}

// labelledBoxes are the boxes the set's rows give.
func labelledBoxes(set *dataset.Set) []image.Rectangle {
	var boxes []image.Rectangle
	for _, f := range set.Files {
		for _, l := range set.Labels[f] {
			if l.HasBox {
				boxes = append(boxes, l.Box)
			}
		}
	}
	return boxes
}

// medianSide is the median of the boxes' longer sides (0 for none).
func medianSide(boxes []image.Rectangle) int {
	if len(boxes) == 0 {
		return 0
	}
	sides := make([]int, 0, len(boxes))
	for _, b := range boxes {
		sides = append(sides, max(b.Dx(), b.Dy()))
	}
	slices.Sort(sides)
	return sides[len(sides)/2]
}

// aloneSide guesses the dice's size when no row gives a box: the median
// side of the one die-like region each of up to 20 photos of one die
// shows alone at the finest scale (0 when none does).
func aloneSide(set *dataset.Set, files []string, decode func(string) (image.Image, error)) int {
	var dice []image.Rectangle
	for _, f := range files[:min(len(files), 20)] {
		if len(set.Labels[f]) != 1 {
			continue
		}
		img, err := decode(set.Path(f))
		if err != nil {
			continue
		}
		c, err := newColourSide(img, max(img.Bounds().Dx(), img.Bounds().Dy()))
		if err != nil {
			continue
		}
		found := otherDice(findBlobsAlone(c), c.off, nil)
		c.close()
		if len(found) == 1 {
			dice = append(dice, found[0])
		}
	}
	return medianSide(dice)
}

// sceneSide is the coarse scale a scene of photos of size sz is learnt
// and read at: coarseSide, or more when its dice (dieSide pixels across,
// 0 unknown) would be fewer than sceneDiePx across there, as a 60 px die
// in a 1920 px frame is.
func sceneSide(sz image.Point, dieSide int) int {
	long := max(sz.X, sz.Y)
	if dieSide <= 0 {
		return coarseSide
	}
	return min(max(coarseSide, long*sceneDiePx/dieSide), (long+1)/2)
}

// sceneDiePx is how many coarse pixels across a die should be for the
// blob detector to find it well.
const sceneDiePx = 30

// sideOr is a stored coarse side, or coarseSide for a scene stored before
// sides were (0).
func sideOr(side int) int {
	if side == 0 {
		return coarseSide
	}
	return side
}

// otherDice returns the boxes (relative to the photo at off) of the
// die-like blobs that are not at one of boxes (the labelled dice).
func otherDice(bs []blob, off image.Point, boxes []image.Rectangle) []image.Rectangle {
	var out []image.Rectangle
	for _, b := range bs {
		box := b.box.Sub(off)
		if b.dieLike() && !slices.ContainsFunc(boxes, func(l image.Rectangle) bool { return centre(l).In(box) }) {
			out = append(out, box)
		}
	}
	return out
}

// LocateAlone finds the boxes of n dice in a photo from the photo alone
// (no learnt tray), besides the dice at boxed, as Scene.Locate does; their
// boxes moved by fix (SceneReport.AloneFix), as reading moves them.
func LocateAlone(img image.Image, boxed []image.Rectangle, n int, fix [4]float64) []image.Rectangle {
	c, err := newColour(img)
	if err != nil {
		return nil
	}
	defer c.close()
	bs := findBlobsAlone(c)
	fixBoxes(bs, fix)
	found := otherDice(bs, c.off, relative(boxed, img.Bounds().Min))
	if len(found) != n {
		return nil
	}
	for i := range found {
		found[i] = found[i].Add(img.Bounds().Min)
	}
	return found
}

// ProbeLocateAlone tries LocateAlone on up to 20 photos of the set whose
// dice have no boxes (and are alike), for enrolment to tell photos of a
// tray, where dice can be located, from close-ups of one die, which are
// best taken whole. It returns how many photos it tried and located.
func ProbeLocateAlone(set *dataset.Set, decode func(string) (image.Image, error)) (tried, located int) {
	for _, f := range set.Files {
		if tried == 20 {
			break
		}
		ls := set.Labels[f]
		if len(ls) == 0 || slices.ContainsFunc(ls, func(l dataset.Label) bool {
			return l.HasBox || l.Die != ls[0].Die || l.Face != ls[0].Face
		}) {
			continue
		}
		img, err := decode(set.Path(f))
		if err != nil {
			continue
		}
		tried++
		if LocateAlone(img, nil, len(ls), [4]float64{}) != nil {
			located++
		}
	}
	return tried, located
}

// coverMask marks in covered (cols×rows, the coarse scale) the pixels set
// in mask and two pixels round them (a die's soft edge and shadow). Only
// these: the box of each region, grown by a third as cover grows a
// labelled die's, left a hole at a 30° stand-in's resting spot that
// filling from the ring-patterned floor around could not mend (the tray
// found 48 of 120 dice, against 111 so).
func coverMask(covered []bool, mask []uint8, cols, rows int) {
	const r = 2
	for y := range rows {
		for x := range cols {
			if mask[y*cols+x] == 0 {
				continue
			}
			for yy := max(0, y-r); yy <= min(rows-1, y+r); yy++ {
				for xx := max(0, x-r); xx <= min(cols-1, x+r); xx++ {
					covered[yy*cols+xx] = true
				}
			}
		}
	}
}

// cover marks in covered (cols×rows, the coarse scale) the box b of a
// die (photo pixels relative to the photo) grown by a third each way, so
// that its shadow and a loose box stay out of the tray.
func cover(covered []bool, b image.Rectangle, scale float64, cols, rows int) {
	g := b.Inset(-max(b.Dx(), b.Dy()) / 3)
	x0, y0 := int(float64(g.Min.X)*scale), int(float64(g.Min.Y)*scale)
	x1, y1 := int(float64(g.Max.X)*scale+1), int(float64(g.Max.Y)*scale+1)
	for y := max(y0, 0); y < min(y1, rows); y++ {
		for x := max(x0, 0); x < min(x1, cols); x++ {
			covered[y*cols+x] = true
		}
	}
}

// seeRare learns the tray's points that fewer than trayRare of the photos
// looked at show (where the dice come to rest: a roller's dish) from the
// set's other photos of the view too. Each shows the points no die found
// in it against the tray so far covers (its box grown as cover grows a
// labelled one); a point shown by traySeen photos in all is their median.
// Only those points' values are kept, up to rareCap photos each, so the
// set costs one pass, not its photos' memory; the photos are taken in an
// order spread over the set (spread), so that the light of one part of
// a session does not make the median.
//
// A lamp's glare on a roller's dome right over its dish (the 40° glare
// stand-in) was shown by 1 of the 120 photos looked at and guessed from
// the floor around it: a die resting beside the dish took the glare-lit
// floor for its own, and 14 of 300 boxes were more than 8 px too large;
// with the tray there learnt from the whole set, 1 was.
func (s *Scene) seeRare(set *dataset.Set, decode func(string) (image.Image, error), looked []string, size image.Point, data [][]uint8, covered [][]bool, rep *SceneReport) error {
	n := s.cols * s.rows
	var rare []int
	known := make([]bool, n)
	for px := range n {
		k := 0
		for i := range data {
			if !covered[i][px] {
				k++
			}
		}
		known[px] = k >= traySeen
		if k < trayRare {
			rare = append(rare, px)
		}
	}
	rep.Rare = len(rare)
	if len(rare) == 0 || len(set.Files) <= len(looked) {
		return nil
	}
	vals := make([][]uint8, len(rare)) // YCrCb, of each photo that shows the point
	for j, px := range rare {
		for i := range data {
			if !covered[i][px] {
				vals[j] = append(vals[j], data[i][3*px:3*px+3]...)
			}
		}
	}
	tray, err := s.mat()
	if err != nil {
		return err
	}
	defer tray.Close()
	done := make(map[string]bool, len(looked))
	for _, f := range looked {
		done[f] = true
	}
	var others []string
	for _, f := range set.Files {
		if !done[f] {
			others = append(others, f)
		}
	}
	cov := make([]bool, n)
	left := len(rare) // points with fewer than rareCap values
	for _, k := range spread(len(others)) {
		if left == 0 {
			break
		}
		f := others[k]
		img, err := decode(set.Path(f))
		if err != nil || img.Bounds().Size() != size {
			continue // enrolment reports unreadable photos itself
		}
		c, err := s.shownTray(set, f, img, tray, cov)
		if err != nil {
			return err
		}
		if c == nil {
			continue
		}
		d, err := c.mat.DataPtrUint8()
		if err != nil {
			c.close()
			return fmt.Errorf("vision: learn scene: %w", err)
		}
		rep.RareLooked++
		for j, px := range rare {
			if cov[px] || len(vals[j]) >= 3*rareCap {
				continue
			}
			vals[j] = append(vals[j], d[3*px:3*px+3]...)
			if len(vals[j]) == 3*rareCap {
				left--
			}
		}
		c.close()
	}
	one := make([]uint8, 0, rareCap)
	for j, px := range rare {
		k := len(vals[j]) / 3
		if k < traySeen {
			continue // filled from around it, as before
		}
		for ch := range 3 {
			one = one[:0]
			for i := range k {
				one = append(one, vals[j][3*i+ch])
			}
			slices.Sort(one)
			s.ycc[3*px+ch] = one[len(one)/2]
		}
		known[px] = true
		rep.RareLearnt++
	}
	if rep.RareLearnt > 0 {
		fillUnknown(s.ycc, known, s.cols, s.rows)
		s.setLayout()
	}
	return nil
}

// shownTray returns photo f's coarse image (YCrCb; the caller closes it)
// and marks in cov the points its dice cover: the labelled boxes, and the
// regions found against tray for dice without one, each grown as cover
// grows a box. It returns nil, for a photo to be passed over, when the
// regions found are not as many as those dice.
func (s *Scene) shownTray(set *dataset.Set, f string, img image.Image, tray gocv.Mat, cov []bool) (*colourImg, error) {
	c, err := newColourSide(img, s.side)
	if err != nil {
		return nil, fmt.Errorf("vision: learn scene: %s: %w", f, err)
	}
	if c.mat.Cols() != s.cols || c.mat.Rows() != s.rows {
		c.close()
		return nil, nil
	}
	clear(cov)
	boxes, unboxed := splitLabels(set.Labels[f])
	found := boxes
	if unboxed > 0 {
		// Found against the tray so far, not in the photo alone: a glare
		// over the dish joins a die found alone, or makes one more.
		bs, _ := findBlobsMask(c, tray, blobChroma, false)
		others := otherDice(bs, c.off, boxes)
		if len(others) != unboxed {
			c.close()
			return nil, nil
		}
		found = append(slices.Clip(boxes), others...)
	}
	for _, b := range found {
		cover(cov, b, c.scale, s.cols, s.rows)
	}
	return c, nil
}

// splitLabels returns the boxes of the labelled dice that have one, and
// how many have none.
func splitLabels(ls []dataset.Label) (boxes []image.Rectangle, unboxed int) {
	for _, l := range ls {
		if l.HasBox {
			boxes = append(boxes, l.Box)
		} else {
			unboxed++
		}
	}
	return boxes, unboxed
}

// spread returns 0…n-1 in an order that spreads every prefix over the
// whole range: 0, n/2, n/4, 3n/4, … (counting with the bits reversed,
// scaled to n), then any left out.
func spread(n int) []int {
	if n == 0 {
		return nil
	}
	bits := 0
	for 1<<bits < n {
		bits++
	}
	out := make([]int, 0, n)
	seen := make([]bool, n)
	for k := range 1 << bits {
		r := 0
		for b := range bits {
			if k&(1<<b) != 0 {
				r |= 1 << (bits - 1 - b)
			}
		}
		if i := r * n >> bits; !seen[i] {
			seen[i] = true
			out = append(out, i)
		}
	}
	for i, ok := range seen {
		if !ok {
			out = append(out, i)
		}
	}
	return out
}

// Rare tray points: fewer photos than trayRare showing a point make
// seeRare look at the set's other photos for it, and it keeps up to
// rareCap photos' values of each.
const (
	trayRare = 15
	rareCap  = 45
)

// TrayRare is trayRare, for enrolment's report.
const TrayRare = trayRare

// traySeen is the fewest photos that show a pixel of the tray for its
// value to be taken from them (else it is filled from its neighbours).
const traySeen = 5

// median sets the tray to each pixel's median over the photos (data, at
// the coarse scale) where it is not covered, and fills the pixels covered
// in nearly every photo from their neighbours.
func (s *Scene) median(data [][]uint8, covered [][]bool) {
	n := s.cols * s.rows
	s.ycc = make([]uint8, 3*n)
	known := make([]bool, n)
	vals := make([]uint8, 0, len(data))
	for px := range n {
		for ch := range 3 {
			vals = vals[:0]
			for i := range data {
				if !covered[i][px] {
					vals = append(vals, data[i][3*px+ch])
				}
			}
			if len(vals) < traySeen {
				break
			}
			slices.Sort(vals)
			s.ycc[3*px+ch] = vals[len(vals)/2]
			known[px] = true
		}
	}
	fillUnknown(s.ycc, known, s.cols, s.rows)
	s.setLayout()
}

// matchBlobs counts the labelled boxes a die-like blob stands for (each
// centre inside the other) and the die-like blobs inside region that
// stand for none; of those, up to unboxed stand for the labelled dice
// without a box. Blobs are in photo pixels from off (the photo's
// origin), boxes and region relative to the photo.
func matchBlobs(bs []blob, off image.Point, boxes []image.Rectangle, unboxed int, region image.Rectangle) (found, invented int) {
	used := make([]bool, len(boxes))
	for _, b := range bs {
		if !b.dieLike() {
			continue
		}
		box := b.box.Sub(off)
		hit := false
		for j, l := range boxes {
			if !used[j] && centre(box).In(l) && centre(l).In(box) {
				used[j], hit = true, true
				found++
				break
			}
		}
		if !hit && centre(box).In(region) {
			invented++
		}
	}
	placed := min(invented, unboxed)
	return found + placed, invented - placed
}

// Locate finds the boxes of n dice in a photo of the scene's view, for
// enrolment from labels without boxes, besides the dice at boxed (the
// photo's labelled ones, in img's coordinates); nil unless the photo
// shows the view and exactly n other die-like regions differ from the
// tray within the region.
func (s *Scene) Locate(img image.Image, boxed []image.Rectangle, n int) []image.Rectangle {
	if !s.shows(img) {
		return nil
	}
	c, err := newColourSide(img, sideOr(s.side))
	if err != nil {
		return nil
	}
	defer c.close()
	found, err := s.blobs(c) // as reading will box them
	if err != nil {
		return nil
	}
	var boxes []image.Rectangle
	for _, b := range otherDice(found, c.off, relative(boxed, img.Bounds().Min)) {
		if centre(b).In(s.Region) {
			boxes = append(boxes, b.Add(img.Bounds().Min))
		}
	}
	if len(boxes) != n {
		return nil
	}
	return boxes
}

// relative returns boxes less the photo's origin.
func relative(boxes []image.Rectangle, origin image.Point) []image.Rectangle {
	out := make([]image.Rectangle, len(boxes))
	for i, b := range boxes {
		out[i] = b.Sub(origin)
	}
	return out
}

// AddDice widens where dice lie to the boxes of more dice (located ones,
// relative to the photo): the region is where the labelled and added dice
// lay, grown by half a die.
func (s *Scene) AddDice(boxes []image.Rectangle) {
	s.dice = append(s.dice, boxes...)
	s.setRegion(s.dice)
}

// setRegion sets where dice lie from their boxes, grown by half a die;
// with none, the whole photo.
func (s *Scene) setRegion(boxes []image.Rectangle) {
	if len(boxes) == 0 {
		s.Region = image.Rect(0, 0, s.Width, s.Height)
		return
	}
	var r image.Rectangle
	for _, b := range boxes {
		r = r.Union(b)
	}
	s.Region = r.Inset(-medianSide(boxes) / 2).Intersect(image.Rect(0, 0, s.Width, s.Height))
}

// fillUnknown gives every pixel not known (covered by a die in nearly
// every photo) the mean of its known neighbours, growing inwards.
func fillUnknown(ycc []uint8, known []bool, w, h int) {
	growInwards(ycc, known, w, h, func(_ int, mean [3]uint8) [3]uint8 { return mean })
}

// growInwards sets every pixel of ycc (YCrCb, w×h) not known, a ring at a
// time inwards from the known ones, to what value makes of it (pixel
// index i) and the mean of its known neighbours.
func growInwards(ycc []uint8, known []bool, w, h int, value func(i int, mean [3]uint8) [3]uint8) {
	for changed := true; changed; {
		changed = false
		next := slices.Clone(known)
		for y := range h {
			for x := range w {
				i := y*w + x
				if known[i] {
					continue
				}
				var sum [3]int
				k := 0
				for dy := -1; dy <= 1; dy++ {
					for dx := -1; dx <= 1; dx++ {
						xx, yy := x+dx, y+dy
						if xx < 0 || yy < 0 || xx >= w || yy >= h || !known[yy*w+xx] {
							continue
						}
						for ch := range 3 {
							sum[ch] += int(ycc[3*(yy*w+xx)+ch])
						}
						k++
					}
				}
				if k > 0 {
					var mean [3]uint8
					for ch := range 3 {
						mean[ch] = uint8(sum[ch] / k)
					}
					v := value(i, mean)
					copy(ycc[3*i:3*i+3], v[:])
					next[i], changed = true, true
				}
			}
		}
		known = next
	}
}

// seeUnder learns the tray again where fewer than nine photos in ten
// (sceneSteady) agree with it. Where dice come to rest near one spot, the
// floor there is under a die in most photos, and the median of the rest
// (or of photos whose die was not all left out) holds the die's edges and
// its shadow: boxes found against it took in floor, an edge by 4–10 px
// on the 30° stand-in near one spot (its die 58 px across). Nine in ten,
// not most: a die of one even colour, resting at the spot in most
// photos, is what most of them agree on there. Inwards from the pixels
// that many agree with, each other pixel takes the median of the photos'
// values there that agree with its neighbours' mean (the floor seen round
// a die continues smoothly; the die and its shadow do not), or that mean
// where fewer than traySeen photos do. Where the mean had to stand in
// more often than the photos showed the floor (a busy floor's grain is
// not its neighbours' mean), the tray is left as it was. It reports
// whether the tray changed.
func (s *Scene) seeUnder(data [][]uint8) bool {
	n := s.cols * s.rows
	lights := make([]light, len(data))
	for i := range data {
		lights[i] = photoLight(data[i], s.ycc)
	}
	// A photo agrees with a value where it differs by less than half
	// what marks a die (as diffMasks' weak mask).
	agrees := func(i, px int, v []uint8) bool {
		d0, dc := lights[i].residual(data[i][3*px:3*px+3], v)
		return 2*d0 < blobThreshold && 2*dc < blobChroma
	}
	known := make([]bool, n)
	unknown := 0
	for px := range n {
		k := 0
		for i := range data {
			if agrees(i, px, s.ycc[3*px:3*px+3]) {
				k++
			}
		}
		if known[px] = float64(k) >= sceneSteady*float64(len(data)); !known[px] {
			unknown++
		}
	}
	if unknown == 0 {
		return false
	}
	ycc := slices.Clone(s.ycc)
	seen, guessed := 0, 0
	vals := make([][]uint8, 3)
	growInwards(ycc, known, s.cols, s.rows, func(px int, mean [3]uint8) [3]uint8 {
		for ch := range vals {
			vals[ch] = vals[ch][:0]
		}
		for i := range data {
			if agrees(i, px, mean[:]) {
				for ch := range vals {
					vals[ch] = append(vals[ch], data[i][3*px+ch])
				}
			}
		}
		if len(vals[0]) < traySeen {
			guessed++
			return mean
		}
		seen++
		var v [3]uint8
		for ch := range vals {
			slices.Sort(vals[ch])
			v[ch] = vals[ch][len(vals[ch])/2]
		}
		return v
	})
	if seen == 0 || guessed > seen {
		return false
	}
	s.ycc = ycc
	s.setLayout()
	return true
}

// mat returns the empty tray as a coarse YCrCb Mat (the caller closes it).
func (s *Scene) mat() (gocv.Mat, error) {
	m, err := gocv.NewMatFromBytes(s.rows, s.cols, gocv.MatTypeCV8UC3, slices.Clone(s.ycc))
	if err != nil {
		return gocv.Mat{}, fmt.Errorf("vision: scene: %w", err)
	}
	return m, nil
}

// fits reports whether the scene is of photos the size of b.
func (s *Scene) fits(b image.Rectangle) bool {
	return s != nil && b.Dx() == s.Width && b.Dy() == s.Height
}

// shows reports whether img is a photo of the scene's view: of its size,
// most of a sparse grid of its pixels matching the learnt tray once the
// light is matched, and nearly all of the grid's points where the tray is
// unlike its own main colour (the layout: walls, rim). A photo of another
// tray or camera at the same size is then read as if no scene had been
// learnt.
func (s *Scene) shows(img image.Image) bool {
	b := img.Bounds()
	if !s.fits(b) {
		return false
	}
	k := float64(s.Width) / float64(s.cols)
	type point struct {
		i  int // offset in ycc
		px [3]uint8
	}
	var pts []point
	for cy := 2; cy < s.rows; cy += sceneGrid {
		for cx := 2; cx < s.cols; cx += sceneGrid {
			// The photo's pixels under the coarse cell, averaged as
			// newColour does.
			x0, y0 := b.Min.X+int(float64(cx)*k), b.Min.Y+int(float64(cy)*k)
			x1, y1 := min(max(b.Min.X+int(float64(cx+1)*k), x0+1), b.Max.X), min(max(b.Min.Y+int(float64(cy+1)*k), y0+1), b.Max.Y)
			var sum [3]int
			for y := y0; y < y1; y++ {
				for x := x0; x < x1; x++ {
					yy, cr, cb := pixelYCrCb(img, x, y)
					sum[0] += int(yy)
					sum[1] += int(cr)
					sum[2] += int(cb)
				}
			}
			np := max(1, (x1-x0)*(y1-y0))
			p := point{3 * (cy*s.cols + cx), [3]uint8{uint8(sum[0] / np), uint8(sum[1] / np), uint8(sum[2] / np)}}
			pts = append(pts, p)
		}
	}
	n := len(pts)
	if n == 0 {
		return false
	}
	l := fitLight(n, func(i int) ([]uint8, []uint8) { return pts[i].px[:], s.ycc[pts[i].i : pts[i].i+3] })
	same, marked, markedSame := 0, 0, 0
	for k, p := range pts {
		d0, dc := l.residual(p.px[:], s.ycc[p.i:p.i+3])
		ok := d0 < sceneLumaTol && dc < sceneChromaTol
		if ok {
			same++
		}
		if s.layout[k] {
			marked++
			if ok {
				markedSame++
			}
		}
	}
	if marked >= n/20 && float64(markedSame) < sceneLayout*float64(marked) {
		return false
	}
	return float64(same) >= sceneShows*float64(n)
}

// setLayout marks the points of shows' grid where the learnt tray is
// unlike its most common colour (walls, rails, the cup's rim, a grain):
// where another tray of a like felt differs, so the layout must match
// there too. It depends on the tray alone, so it is made once.
func (s *Scene) setLayout() {
	var idx []int
	for cy := 2; cy < s.rows; cy += sceneGrid {
		for cx := 2; cx < s.cols; cx += sceneGrid {
			idx = append(idx, 3*(cy*s.cols+cx))
		}
	}
	s.layout = make([]bool, len(idx))
	if len(idx) == 0 {
		return
	}
	var ref [3]int
	for ch := range 3 {
		vals := make([]int, 0, len(idx))
		for _, i := range idx {
			vals = append(vals, int(s.ycc[i+ch]))
		}
		slices.Sort(vals)
		ref[ch] = vals[len(vals)/2]
	}
	for k, i := range idx {
		t := s.ycc[i : i+3]
		s.layout[k] = abs(int(t[0])-ref[0]) >= blobThreshold || 3*max(abs(int(t[1])-ref[1]), abs(int(t[2])-ref[2])) >= 2*blobThreshold
	}
}

// sceneGrid is the step, in coarse pixels, of the grid shows compares;
// sceneShows the share of it that must match (dice and their shadows
// cover less than half a tray), within sceneLumaTol and sceneChromaTol
// of the learnt tray once the light is matched (chroma closer than the
// blob threshold: a colour's clipping under brighter light moves its
// chroma by up to 15); sceneLayout the share of its points
// unlike the tray's main colour (walls, grain) that must match: dice
// seldom cover walls, and another tray's walls lie elsewhere.
const (
	sceneGrid      = 5
	sceneShows     = 0.6
	sceneLayout    = 0.85
	sceneLumaTol   = blobThreshold
	sceneChromaTol = 16
)

// sceneFile is a Scene as stored in a model file.
type sceneFile struct {
	Width  int    `json:"width"`
	Height int    `json:"height"`
	Region [4]int `json:"region"`         // x0, y0, x1, y1
	Side   int    `json:"side,omitempty"` // the coarse scale's longest side; 0: 400
	Cols   int    `json:"cols"`
	Rows   int    `json:"rows"`
	YCrCb  []byte `json:"ycrcb"` // rows × cols × 3
	// BoxFix is Scene.fix; absent: none (scenes learnt before it). A
	// towerd before it reads without it: fewer dice, not wrong ones (the
	// oblique stand-in: recall 0.853 instead of 0.963, precision 1.000).
	BoxFix []float64 `json:"box_fix,omitempty"`
	// Trim is Scene.trim; a towerd before it moves the boxes by BoxFix.
	Trim bool `json:"trim,omitempty"`
	// Chroma is Scene.chroma; absent: blobChroma. A towerd before it
	// finds dice of about the floor's colour less often.
	Chroma int `json:"chroma,omitempty"`
}

// MarshalJSON encodes the scene for a model file.
func (s *Scene) MarshalJSON() ([]byte, error) {
	r := s.Region
	f := sceneFile{s.Width, s.Height, [4]int{r.Min.X, r.Min.Y, r.Max.X, r.Max.Y}, s.side, s.cols, s.rows, s.ycc, nil, s.trim, s.chroma}
	if s.fix != ([4]float64{}) {
		f.BoxFix = s.fix[:]
	}
	return json.Marshal(f)
}

// UnmarshalJSON decodes and checks a scene from a model file.
func (s *Scene) UnmarshalJSON(b []byte) error {
	var f sceneFile
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("vision: scene: %w", err)
	}
	switch {
	case f.Width < 1 || f.Height < 1 || f.Width > 1<<15 || f.Height > 1<<15:
		return fmt.Errorf("vision: scene: photo size %dx%d", f.Width, f.Height)
	case f.Side < 0 || f.Side > 1<<15:
		return fmt.Errorf("vision: scene: coarse side %d", f.Side)
	case func() bool {
		w, h := coarseSizeAt(f.Width, f.Height, sideOr(f.Side))
		return f.Cols != w || f.Rows != h
	}():
		return fmt.Errorf("vision: scene: coarse size %dx%d does not fit %dx%d photos", f.Cols, f.Rows, f.Width, f.Height)
	case f.Chroma != 0 && (f.Chroma < chromaMin || f.Chroma > blobChroma):
		return fmt.Errorf("vision: scene: chroma threshold %d outside %d–%d", f.Chroma, chromaMin, blobChroma)
	case len(f.YCrCb) != 3*f.Cols*f.Rows:
		return fmt.Errorf("vision: scene: %d bytes of tray, want %d", len(f.YCrCb), 3*f.Cols*f.Rows)
	}
	r := image.Rect(f.Region[0], f.Region[1], f.Region[2], f.Region[3])
	if r.Empty() || !r.In(image.Rect(0, 0, f.Width, f.Height)) {
		return errors.New("vision: scene: region outside the photo")
	}
	*s = Scene{Width: f.Width, Height: f.Height, Region: r, side: sideOr(f.Side), cols: f.Cols, rows: f.Rows, ycc: f.YCrCb, trim: f.Trim, chroma: f.Chroma}
	if f.BoxFix != nil {
		fix, err := parseFix(f.BoxFix)
		if err != nil {
			return fmt.Errorf("vision: scene: %w", err)
		}
		s.fix = fix
	}
	s.setLayout()
	return nil
}
