package vision

import (
	"image"
	"math"
	"slices"
	"sort"

	"github.com/towerd/towerd/vision/numeral"
	"gocv.io/x/gocv"
)

// read runs the reader on a photo already converted to grey (img may be
// nil when no colour is needed); inView says the photo shows the view of
// the model's scene, whose tray and region then apply.
func (r *Reader) read(img image.Image, g *grayImg, inView bool) ([]Die, error) {
	var out []Die
	// witnesses are faces of two or more pips: evidence of a pip d6 that
	// a model must agree with (lone pips are not: a numbered die's round
	// marks make them).
	var witnesses []witness
	var bs []blob // the regions that differ from the tray, once looked for
	found := false
	blobs := func() error {
		if !found {
			var err error
			bs, err = r.blobs(img, inView)
			found = err == nil
			return err
		}
		return nil
	}
	switch {
	case r.allows("d6"):
		pds, ps, odd := readPips(g)
		// Without a colour photo there are no regions, and a contested 1
		// on none keeps its face.
		if img != nil && slices.ContainsFunc(pds, func(pd pipDie) bool { return pd.contested }) {
			if err := blobs(); err != nil {
				return nil, err
			}
			vouchContested(g, pds, bs)
		}
		// Only without a model: a model's numbered dice have numerals
		// whose loops sit at their middles (a d100's "40", a d6's "4"),
		// and with one that reads d6 the pip faces only witness and lean.
		if len(odd) > 0 && img != nil && r.opts.Model == nil {
			if err := blobs(); err != nil {
				return nil, err
			}
			pds = append(pds, lonesOnDice(g, odd, ps, pds, bs)...)
			pds = dropLint(pds, ps)
		}
		if r.opts.TopDown {
			markLeaning(pds)
		}
		for _, pd := range pds {
			out = append(out, r.pipDie(g, pd, ps))
		}
		if r.modelReadsD6() {
			// The model reads the set's d6 (mergeBlobs drops what the pip
			// counter found), but it cannot see a lean (under a camera
			// looking down, a foreshortened pip face marks its die
			// cocked), and a pip face it reads otherwise makes the face
			// unread.
			witnesses = pipWitnesses(g, pds, ps, false)
		}
	case r.pipGuard:
		// In the view of a set enrolled without d6 no pip die is looked
		// for, but a face of several pips still leaves its die unread:
		// the model was never shown a pip d6.
		pds, ps, _ := readPips(g)
		witnesses = pipWitnesses(g, pds, ps, true)
	}
	if img != nil && r.needBlobs() {
		if err := blobs(); err != nil {
			return nil, err
		}
		out = r.mergeBlobs(img, out, bs, witnesses)
	}
	crop := r.opts.Crop
	if crop.Empty() && r.opts.Background == nil && inView {
		crop = r.scene.Region.Add(img.Bounds().Min)
	}
	if !crop.Empty() {
		kept := out[:0]
		for _, d := range out {
			if centre(d.Box).In(crop) {
				kept = append(kept, d)
			}
		}
		out = kept
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].Box.Min, out[j].Box.Min
		if a.Y/32 != b.Y/32 {
			return a.Y < b.Y
		}
		return a.X < b.X
	})
	return out, nil
}

// needBlobs: dice other than pip d6 are looked for as regions that differ
// from the tray when they may be present and could be read or placed: with
// a classifier, with an empty-tray photo, or when other kinds are allowed.
func (r *Reader) needBlobs() bool {
	return r.opts.Model != nil || r.opts.Background != nil || r.allowsNumbered()
}

// allowsNumbered tells whether a kind other than d6 may be in the photo.
func (r *Reader) allowsNumbered() bool {
	return slices.ContainsFunc(Kinds, func(k string) bool { return k != "d6" && r.allows(k) })
}

// blobs finds the regions of img that differ from the tray.
func (r *Reader) blobs(img image.Image, inView bool) ([]blob, error) {
	side := coarseSide
	if inView && r.opts.Background == nil {
		side = sideOr(r.scene.side) // the scale the tray was learnt at
	}
	c, err := newColourSide(img, side)
	if err != nil {
		return nil, err
	}
	defer c.close()
	var bg gocv.Mat
	if r.opts.Background != nil {
		bc, err := newColour(r.opts.Background)
		if err != nil {
			return nil, err
		}
		bg = gocv.NewMat()
		if bc.mat.Cols() == c.mat.Cols() && bc.mat.Rows() == c.mat.Rows() {
			bc.mat.CopyTo(&bg)
		} else {
			gocv.Resize(bc.mat, &bg, image.Pt(c.mat.Cols(), c.mat.Rows()), 0, 0, gocv.InterpolationArea)
		}
		bc.close()
	} else if inView {
		return r.scene.blobs(c)
	} else {
		bs := findBlobsAlone(c)
		fixBoxes(bs, r.aloneFix)
		return bs, nil
	}
	defer bg.Close()
	return findBlobs(c, bg), nil
}

// mergeBlobs gives pip dice the outline of their blob and adds the blobs
// that are dice without readable pips: read by the classifier when there
// is one, else reported with a null face.
//
// witnesses are pip faces of two or more pips: a die the model reads
// whose top one is must be read as a d6 of that many pips, else its face
// is unread (and its kind, unless d6).
func (r *Reader) mergeBlobs(img image.Image, dice []Die, bs []blob, witnesses []witness) []Die {
	var leaning []Die
	var leaningOnes []image.Rectangle
	if r.modelReadsD6() {
		// The model reads the set's d6: what the pip counter found is not
		// to be counted (on burksbuilds photos, with numbered d6, it found
		// dozens of "d6 1" in numerals and texture), only leaning faces
		// are kept, to mark their dice cocked.
		for _, d := range dice {
			if d.Cocked && r.opts.TopDown {
				leaning = append(leaning, d)
				if d.pips == 1 {
					leaningOnes = append(leaningOnes, d.Box)
				}
			}
		}
		dice = nil
	}
	out := dice
	dropped := make([]bool, len(dice))
	onDie := make([]bool, len(dice))
	for i := range bs {
		b := &bs[i]
		owner := -1
		for j, d := range dice {
			if !dropped[j] && centre(d.Box).In(b.box) {
				owner = j
				break
			}
		}
		if owner >= 0 {
			onDie[owner] = onDie[owner] || b.dieLike()
			d := &out[owner]
			// The blob is the whole die (the pip face is its top); take its
			// box unless it clearly holds more than this die.
			fb := d.Box
			whole := float64(b.box.Dx()*b.box.Dy()) <= 4*float64(fb.Dx()*fb.Dy())
			switch {
			case r.opts.Model == nil && 10*b.box.Dx()*b.box.Dy() < 7*fb.Dx()*fb.Dy():
				// A region smaller than the face is part of the die (a
				// lit side), not its outline: the face keeps its box.
				continue
			case !whole && b.dieLike() && (r.opts.Model != nil || r.marksOnly(dice, dropped, b)):
				// A "face" far smaller than the single die it lies on is
				// no d6's top but a numeral or mark on a numbered die (a
				// gold 7 on a dark d20 passes for the lone pip of a 1):
				// every such speck on it goes, and the blob is read as a
				// die of its own below. Without a model, where numbered
				// dice may lie, only lone pips that are no 1 are taken
				// for marks (see marksOnly: a rendered d8's 7 and a
				// d20's 2 read as d6 1s), and the die's face is unread.
				for j, d := range dice {
					if centre(d.Box).In(b.box) {
						dropped[j] = true
					}
				}
			case whole:
				d.Box = b.box
				d.Outline = b.outline
				if r.opts.Model != nil && b.dieLike() {
					r.checkPips(img, d, b)
				}
				continue
			default:
				continue
			}
		}
		if !b.dieLike() {
			continue
		}
		d := Die{Box: b.box, Outline: b.outline, Kind: r.outlineKind(b)}
		if leansIn(leaning, b.box) {
			d.Cocked = true
		}
		if r.opts.Model != nil {
			kind, f, conf, bg := r.classify(img, b.box)
			if kind != "" && r.allows(kind) {
				d.Confidence = conf
				if conf >= 0.5 || d.Kind == "" {
					d.Kind = kind
				}
				if d.Cocked && kind != "d6" && conf >= r.faceConf {
					// A leaning "pip face" on a die the model is sure is
					// of another kind is the loops of its numerals (a
					// d100's "90", a d10's "8": 102 of 1,793 flat
					// rendered dice were left cocked when d6 could be in
					// the roll); its own up face says whether it leans
					// (leansNumbered, below).
					d.Cocked = false
				}
				if conf >= r.faceConf && !d.Cocked {
					d.Face = intp(f)
				}
				// Sizes hold for photos of the model's view's size (fits
				// checks it), the boxes found as the sizes' were (no
				// empty-tray photo's, which hold the shadow). A photo of
				// that size the learnt tray does not show is most likely
				// the same camera's with something amiss (a corrupt frame,
				// a hand, a moved tray): a box cut short there reads a
				// confident wrong face as well.
				sized := r.opts.Background == nil
				if d.Face != nil && sized && !r.sizes.fits(img.Bounds(), kind, b.box) {
					// The region is not the size of this kind's dice in
					// the camera's view: only part of the die (a light
					// die's shaded side) was found, and the face read
					// through it is a guess (the ivory stand-in: 5 of 7
					// wrong faces).
					d.unread()
				}
			}
			if d.Face != nil && r.opts.TopDown && leansNumbered(img, d.Kind, b) {
				d.Cocked = true
				d.unread()
			}
			if _, pips := witnessOn(witnesses, b.box); d.Face == nil && !d.Cocked && !pips && bg >= r.opts.MinConfidence {
				// The model is as sure as a face must be that the
				// region shows the tray it learnt, not a die: no die is
				// there to be read (a knot in a wood floor near a
				// roller's die was a second, unread one, and the tower
				// would tumble again for it).
				continue
			}
		}
		if d.Kind == "d6" && d.Face != nil && *d.Face == 1 &&
			slices.ContainsFunc(leaningOnes, func(f image.Rectangle) bool { return centre(f).In(b.box) }) {
			// The model reads a 1 whose one pip the pip counter sees
			// foreshortened: the die leans. (A lone pip's face box is a
			// guess from the pip, often too small for leansIn; a round
			// mark on another kind of die is no 1 the model reads.)
			d.Cocked = true
			d.unread()
		}
		if n, ok := witnessOn(witnesses, b.box); ok && !(d.Kind == "d6" && d.Face != nil && *d.Face == n) {
			// The pips say a d6 showing n; the model says otherwise, or
			// is unsure, or was never shown a pip d6 (a rendered 6 with
			// white pips on red was read "d6 2" at 0.94). Its region may
			// be only the die's top: the model is shown the die once more,
			// grown (see classify), and the two agreeing is an answer.
			if k, f, conf := r.readBox(img, grow(b.box)); k == "d6" && f == n && conf >= r.faceConf && !d.Cocked {
				d.Kind, d.Face, d.Confidence = "d6", intp(n), conf
			} else {
				d.unread()
				if d.Kind != "d6" {
					d.Kind, d.Confidence = "", 0
				}
			}
		}
		if d.Kind != "" && !r.allows(d.Kind) {
			continue
		}
		out = append(out, d)
	}
	// Without a model a region no pip face claims is reported as a die
	// of unread face; one far smaller than the pip dice beside it is a
	// die's side or shadow, not a die (on webcam photos such slivers
	// beside a die were paired with its label, the die itself left over).
	minArea := 0
	if r.opts.Model == nil {
		var areas []int
		for _, d := range dice {
			areas = append(areas, d.Box.Dx()*d.Box.Dy())
		}
		if len(areas) > 0 {
			slices.Sort(areas)
			minArea = areas[len(areas)/2] * 2 / 5
		}
	}
	kept := out[:0]
	for i, d := range out {
		if i >= len(dice) && d.Box.Dx()*d.Box.Dy() < minArea {
			continue
		}
		if i < len(dice) && r.opts.Model != nil && !onDie[i] {
			// An enrolled set's numbered dice carry round marks (the dot
			// of a 6., the loops of 0 and 8) that the pip counter takes
			// for pips: with a model, a pip face counts only on a region
			// that looks like a die. A lone pip elsewhere is no evidence
			// of a die at all; more pips leave a die of unread face.
			if d.pips <= 1 {
				dropped[i] = true
			}
			out[i].unread()
			d = out[i]
		}
		if i >= len(dropped) || !dropped[i] {
			kept = append(kept, d)
		}
	}
	return kept
}

// witness is a pip face of two or more pips, in photo pixels.
type witness struct {
	box   image.Rectangle
	n     int
	share float64 // the least share of a die's box it must take to count
	pipR  float64 // its pips' mean radius
}

// marksOnly tells whether the pip dice on b (those not dropped) are all
// lone pips that are no d6's 1, when a kind other than d6 may be in the
// photo: then they are marks on a numbered die (see mergeBlobs). A 1's
// pip lies where a 1's does (atOnesPlace), and its face is at least
// 1/markArea of the die's box.
// The faces of matteop65's 1s, read with every kind allowed, are 1/5.9
// of their dice's regions or more (a die seen at a slant, its shadow),
// rendered d6's 1/5.4; a rendered d8's mark is 1/8.6 or less, a d12's
// 1/11.4. In 300 rendered trays of numbered dice (half with two pip d6),
// marks answered as faces went from 217 to 56 (55 with the dark
// whole-die rule), every pip d6 reading as before; matteop65 reads as
// before.
func (r *Reader) marksOnly(dice []Die, dropped []bool, b *blob) bool {
	if !r.allowsNumbered() {
		return false
	}
	area := float64(b.box.Dx() * b.box.Dy())
	for j, d := range dice {
		c := centre(d.Box)
		if dropped[j] || !c.In(b.box) {
			continue
		}
		if d.pips != 1 {
			return false
		}
		tiny := area > markArea*float64(d.Box.Dx()*d.Box.Dy())
		if !tiny && atOnesPlace(c, b.box) {
			return false
		}
	}
	return true
}

// markArea is how many times a 1's face the region of the die it lies
// on may be, at most (see marksOnly).
const markArea = 8

// pipWitnesses are the faces of two or more pips among pds, not in doubt.
//
// A guard (guard set: no d6 is looked for, the model never saw one)
// counts every such face, doubtful or cocked too, from a quarter of the
// die's box: it can only leave a die unread. Against a model that reads
// d6, the face must be sure, seen near square on (witnessFore) and most of
// the die's top (witnessShare).
func pipWitnesses(g *grayImg, pds []pipDie, ps []pip, guard bool) []witness {
	var ws []witness
	for _, pd := range pds {
		if pd.f.n >= 2 && (guard || !pd.null && pd.f.fore >= witnessFore) {
			share := witnessShare
			if guard {
				share = 0.25
			}
			ws = append(ws, witness{g.toPhoto(pd.f.box()), pd.f.n, share, pipRadius(g, ps, &pd.f)})
		}
	}
	return ws
}

// witnessOn returns the pips of a witness that is the top of the die in
// box: its centre inside, and its box at least its share of the die's
// (a d6's top is most of it; the pip-like marks of a d12's small
// numerals make a "face" far smaller).
func witnessOn(ws []witness, box image.Rectangle) (int, bool) {
	for _, w := range ws {
		if centre(w.box).In(box) && float64(w.box.Dx()*w.box.Dy()) >= w.share*float64(box.Dx()*box.Dy()) && pipsFit(w.pipR, box) {
			return w.n, true
		}
	}
	return 0, false
}

// pipsFit reports whether pips of radius pipR (photo pixels) are a d6's
// for the die in box (see minWitnessPip).
func pipsFit(pipR float64, box image.Rectangle) bool {
	return pipR >= minWitnessPip*float64(max(box.Dx(), box.Dy()))
}

// minWitnessPip is the least pip radius of a pip face that speaks for its
// die (a witness, or a leaning face), as a share of the die's longer side:
// a d6's pips are a twentieth of its side or more (matteop65 6–7%,
// rendered 6–7%); the dots of a d20's numerals ~10 px high, seen as a
// "2", were 4–5% and left a roller's d20 unread.
const minWitnessPip = 0.05

// witnessShare is the least share of a die's box its top face's takes.
const witnessShare = 0.45

// witnessFore is the least foreshortening of a face that overrules a model
// that reads d6: a pip face seen far from square on may be marks on
// another kind of die (rendered d20 and d10 numerals made 2s and 3s).
const witnessFore = 0.7

// leansIn reports whether one of the leaning pip faces is the top of the
// die in box: its centre inside, not a speck far smaller than the die, and
// its pips not tiny for it (the round marks of a rendered d100's "90",
// seen leaning, made it cocked: see pipsFit).
func leansIn(leaning []Die, box image.Rectangle) bool {
	for _, f := range leaning {
		if centre(f.Box).In(box) && box.Dx()*box.Dy() <= 4*f.Box.Dx()*f.Box.Dy() && pipsFit(f.pipR, box) {
			return true
		}
	}
	return false
}

// centre is the middle of r.
func centre(r image.Rectangle) image.Point {
	return image.Pt((r.Min.X+r.Max.X)/2, (r.Min.Y+r.Max.Y)/2)
}

// classify reads the die in box with the model; when the model is unsure,
// once more with the box grown by a tenth each way, and the surer reading
// is kept: a region smaller than its die (a dark rim near the felt's
// colour) crops the die tighter than enrolment's boxes did (rendered
// trays: two dice the model was unsure of were read surely), unless the
// box had a reading of another face (see overrule). A box is sure by its
// confidence (see numeral.Model.Classify); when neither is, but both
// boxes read the same face, the mean of their means is the confidence (a
// looksClassifier's): an ensemble of two boxes. On the
// oblique stand-ins it read 15 more of 1,500 dice, none wrong (the mean
// of one box's looks alone read 36 more, but 1 wrong, 3 with the grown
// box's taken when surer).
//
// It also returns how surely the box shows no die (background, see
// numeral.Model.ClassifyLooks; 0 for a model that cannot say).
func (r *Reader) classify(img image.Image, box image.Rectangle) (kind string, f int, conf, bg float64) {
	kind, f, conf, mean, bg := r.readLooks(img, box)
	if conf >= r.faceConf {
		return kind, f, conf, bg
	}
	if mean == 0 {
		// Too blurred to read, or nearly so and unsure (or no kind
		// allowed): see numeral.Model.ClassifyLooks. The grown box is
		// not asked: more of the die's outline and the floor in it
		// passed the sharpness check where the die's own box failed,
		// and defocused 40° stand-in photos were read wrong that way
		// (7 of 29 answered).
		return kind, f, conf, bg
	}
	k2, f2, c2, m2, _ := r.readLooks(img, grow(box))
	same := k2 == kind && f2 == f
	switch {
	case c2 >= r.faceConf && (same || conf < overrule):
		return k2, f2, c2, bg
	case same && kind != "" && (mean+m2)/2 >= r.faceConf:
		return kind, f, (mean + m2) / 2, bg
	case c2 > conf && c2 < r.faceConf:
		return k2, f2, c2, bg // unread either way; the surer reading is reported
	}
	return kind, f, conf, bg
}

// overrule is the confidence below which a die's own box is taken to
// have no reading, so that the grown box, when sure, may read another
// face; from it up, a sure grown box that reads another face leaves the
// die unread. On 30 oblique stand-in models' readings (9,000 dice), the
// grown box read another face surely on 19 dice: right on all 16 whose
// box read below 0.66, wrong on the 3 above (0.66–0.83), which their box
// had read right. Taking the grown box's reading whatever the box's, the
// models answered 9 dice wrongly, against 6 now.
const overrule = 0.6

// looksClassifier is a classifier that also gives an answer's mean
// probability over its looks, and how surely the crop shows no die
// (*numeral.Model does).
type looksClassifier interface {
	ClassifyLooks(crop image.Image, allowed []string) (die string, face int, least, mean, background float64)
}

// readLooks is readBox also giving the answer's mean probability over the
// model's looks, and the background's; a model that gives none is taken
// to have one look (its mean is its confidence, and two unsure boxes stay
// unsure) and no background (0: every region may be a die).
func (r *Reader) readLooks(img image.Image, box image.Rectangle) (kind string, face int, least, mean, background float64) {
	if lm, ok := r.opts.Model.(looksClassifier); ok {
		return lm.ClassifyLooks(numeral.CropDie(img, box), r.allowedList())
	}
	kind, face, least = r.readBox(img, box)
	return kind, face, least, least, 0
}

// readBox is the model's reading of the die cropped to box.
func (r *Reader) readBox(img image.Image, box image.Rectangle) (string, int, float64) {
	return r.opts.Model.Classify(numeral.CropDie(img, box), r.allowedList())
}

// grow returns box grown by a tenth of its longer side each way.
func grow(box image.Rectangle) image.Rectangle {
	return box.Inset(-max(1, max(box.Dx(), box.Dy())/10))
}

// modelReadsD6 reports whether the model was enrolled with d6 faces, so
// that the set's d6 are numbered and read by the model.
func (r *Reader) modelReadsD6() bool {
	k, ok := r.opts.Model.(interface{ Kinds() []string })
	return ok && slices.Contains(k.Kinds(), "d6")
}

// checkPips shows the enrolled model a die the pip reader counted. Two
// readers disagreeing is no answer: when the model is sure of another
// kind, the die's kind and face are unknown (numerals can look like pips —
// an 8's loops, a 6's dot — but a model never shown a pip d6 can also be
// sure a d6 is a d8, and either way the tower re-tumbles rather than
// publish a guess); when it is sure of a different d6 face, the face is
// null. A model that agrees, or is unsure, leaves the pip reading. Its
// doubt counts from the configured threshold, its own face from its own
// (Reader.MinConfidence).
func (r *Reader) checkPips(img image.Image, d *Die, b *blob) {
	kind, f, conf, _ := r.classify(img, b.box)
	if kind == "" || conf < r.opts.MinConfidence {
		return
	}
	switch {
	case kind != "d6":
		*d = Die{Box: b.box, Outline: b.outline}
	case d.Face != nil && *d.Face != f:
		d.Face = nil
		d.Confidence = math.Min(d.Confidence, 1-conf)
	case d.Face == nil && !d.Cocked && conf >= r.faceConf:
		d.Face, d.Confidence = intp(f), conf
	}
}

// pipDie turns a pip reading into a Die in photo coordinates.
func (r *Reader) pipDie(g *grayImg, pd pipDie, ps []pip) Die {
	d := Die{Kind: "d6", Confidence: pd.conf, Cocked: pd.cocked, pips: pd.f.n, pipR: pipRadius(g, ps, &pd.f)}
	d.Box = g.toPhoto(pd.f.box())
	h := pd.f.half
	for _, c := range [][2]float64{{-h, -h}, {h, -h}, {h, h}, {-h, h}} {
		x, y := pd.f.toImage(c[0], c[1])
		d.Outline = append(d.Outline, g.toPhotoPt(x, y))
	}
	if pd.die != nil {
		d.Box, d.Outline = pd.die.box, pd.die.outline
	}
	if !pd.null && pd.conf >= r.opts.MinConfidence {
		d.Face = intp(pd.f.n)
	}
	if pd.null {
		d.unread()
	}
	return d
}

// vouchContested leaves unread each contested 1 (see pipDie) that lies
// on a die-like region that does not vouch for it: the smallest one
// holding the pip vouches with the pip within contestedOff of its width
// from its middle across and not below its middle — a camera at a slant,
// horizon up, sees a die's top above its middle, and a 1's pip at the
// top's middle. matteop65's 51 sided 1s on a
// region: 0.00–0.19 across but one at 0.28 (on a region of half a die),
// −0.33–0.02 down; a reviewer's dark keys with a dot off the middle,
// 0.27–0.32 across (some 0.01–0.15, and most on no region: black on a dark
// tray). A 1 on no region keeps its face: a reviewer's black dice showing
// 1 beside ivory ones made none on dark felt, and leaving them unread
// cost a fifth of the right faces for a handful of keys.
func vouchContested(g *grayImg, pds []pipDie, bs []blob) {
	for i := range pds {
		pd := &pds[i]
		if !pd.contested {
			continue
		}
		pc := g.toPhotoPt(pd.f.cx, pd.f.cy)
		best := smallestDieAt(bs, pc)
		if best < 0 {
			continue // no region to judge by: dark dice on dark felt make none
		}
		if !atOnesPlace(pc, bs[best].box) {
			pd.null = true
		}
	}
}

// atOnesPlace tells whether pt lies where a 1's pip lies on a die of box
// b (photo pixels): within contestedOff of its width from its middle
// across and not below contestedBelow of its height under it (see
// vouchContested).
func atOnesPlace(pt image.Point, b image.Rectangle) bool {
	c := centre(b)
	dx := math.Abs(float64(pt.X-c.X)) / float64(b.Dx())
	dy := float64(pt.Y-c.Y) / float64(b.Dy())
	return dx <= contestedOff && dy <= contestedBelow
}

// smallestDieAt returns the index of the smallest die-like region whose
// box holds pt (photo pixels), or -1.
func smallestDieAt(bs []blob, pt image.Point) int {
	best := -1
	for i := range bs {
		if bs[i].dieLike() && pt.In(bs[i].box) && (best < 0 || bs[i].area < bs[best].area) {
			best = i
		}
	}
	return best
}

// contestedOff and contestedBelow bound where a contested 1's pip lies
// on its region (see vouchContested).
const (
	contestedOff   = 0.22
	contestedBelow = 0.1
)

// lonesOnDice keeps those of the lone pips left out for being unlike the
// roll's (odd: another polarity or a fainter contrast — a die of another
// colour) or as specks (a small die's 1) that a die-like region vouches
// for: a square one (a d6 seen from above; the loop of a numeral at a
// numbered die's middle is on no square), the pip at its middle (within
// lonePipOff of its side), of the size a 1's pip has on such a die (a
// diameter of lonePipSize of its side), no other pip face on it and no
// other spot near its middle, of a clear contrast and, if light, with an
// edge (see fill: a soft spot on a die whose grey pips its red hid from
// the grey image was read as 1; a highlight is light, and a dark 1 out of
// focus fades as it does).
// Rendered dice of random colours: 73 such 1s at 0.02–0.03 of the side
// from the middle, diameters 0.11–0.15, and two pips of 2s at 0.23 and
// 0.28; on matteop65, 96 of the 97 spots left out lie on no die-like
// region, the last beside a die's pip face.
func lonesOnDice(g *grayImg, odd []pipDie, ps []pip, pds []pipDie, bs []blob) []pipDie {
	var out []pipDie
	// A region holding a die read from its pips is that die's.
	read := make([]image.Point, len(pds))
	for i, pd := range pds {
		read[i] = centre(g.toPhoto(pd.f.box()))
	}
	holdsRead := func(b image.Rectangle) bool {
		return slices.ContainsFunc(read, func(c image.Point) bool { return c.In(b) })
	}
	taken := make([]bool, len(bs))
	for i := range bs {
		taken[i] = holdsRead(bs[i].box)
	}
	for _, pd := range odd {
		p := &ps[pd.f.pips[0]]
		pc := g.toPhotoPt(p.x, p.y)
		best := smallestDieAt(bs, pc)
		if best < 0 {
			if b, ok := wholeAround(g, ps, p); ok {
				// A die read from its pips there takes it too: the speck
				// is a mark on it, no 1 (a glint on a small 2).
				bs = append(bs, b)
				taken = append(taken, holdsRead(b.box))
				best = len(bs) - 1
			}
		}
		if best < 0 || taken[best] || !bs[best].square() {
			continue
		}
		if p.ring-p.core < lonePipContrast {
			continue // faint: the die's other pips may be fainter still
		}
		if fill(p) > g.maxFill() && p.light {
			// A spot that fades is a highlight, not a painted disc,
			// unless it is dark: then it is a blurred die's pip, which
			// fades as a highlight does (a highlight is light).
			continue
		}
		b := &bs[best]
		side := math.Sqrt(float64(b.box.Dx() * b.box.Dy()))
		bc := centre(b.box)
		diam := 2 * p.r / g.scale / side
		if math.Hypot(float64(pc.X-bc.X), float64(pc.Y-bc.Y)) > lonePipOff*side || diam < lonePipSize[0] || diam > lonePipSize[1] {
			continue
		}
		// A 1's top shows nothing else: another spot like a pip (a pip, or
		// round and of its size) near the middle is the rest of a 3 or 5
		// whose faint pips were not read, or the glare that kept a face
		// from being read. (A die's lit edges make elongated spots.)
		alone := true
		for k := range ps {
			q := &ps[k]
			qc := g.toPhotoPt(q.x, q.y)
			pipLike := q.ok || (q.elong >= 0.75 && q.r >= 0.5*p.r && q.r <= 2*p.r)
			if q != p && q.light == p.light && pipLike && math.Hypot(q.x-p.x, q.y-p.y) > p.r+q.r &&
				math.Hypot(float64(qc.X-bc.X), float64(qc.Y-bc.Y)) <= lonePipClear*side {
				alone = false
			}
		}
		if !alone {
			continue
		}
		taken[best] = true
		pd.die = b
		out = append(out, pd)
	}
	return out
}

// wholeAround is the die around lone pip p when no region was found for
// it but the pip finder saw the die as a spot of p's polarity, round
// (0.8), at least twice p's radius and with p at its middle: a square of
// the side its spread makes (a uniform square of side s spreads as a
// disc of radius 0.577 s). A small red die on maroon felt differs from
// the tray too little in colour for a region, yet is such a spot (darker
// than the felt in the inverted grey), and its 1, a speck too small to
// be read without a die to vouch for it, was missed.
func wholeAround(g *grayImg, ps []pip, p *pip) (blob, bool) {
	for k := range ps {
		q := &ps[k]
		if q == p || q.light != p.light || q.r < 2*p.r || q.elong < 0.8 {
			continue
		}
		side := q.r / 0.577
		if math.Hypot(q.x-p.x, q.y-p.y) > lonePipOff*side {
			continue
		}
		h := side / 2
		var out []image.Point
		for _, c := range [][2]float64{{-h, -h}, {h, -h}, {h, h}, {-h, h}} {
			out = append(out, g.toPhotoPt(q.x+c[0], q.y+c[1]))
		}
		box := image.Rectangle{Min: out[0], Max: out[2]}
		return blob{box: box, outline: out, area: float64(box.Dx() * box.Dy()), corners: 4, solid: 1, aspect: 1}, true
	}
	return blob{}, false
}

// dropLint leaves out, in a roll with no face of several pips to judge
// its pips by (see consistent), the lone pips no region vouched for that
// are under lintShare of the radius of the 1s one did (see lonesOnDice):
// lint beside dice showing 1. Light specks on dark felt outshine, summed,
// an ivory die's dark 1 and set the roll's polarity; the die's 1 is then
// read only where its region vouches for it, and beside it a speck half
// its size is no die. Where no region vouches (a black die's white 1 on
// black felt is a white speck to the reader), nothing changes. Rendered
// ivory dice showing 1 on dark felt with a grid of light specks 5 pixels
// across: 342 of 342 specks were answered as 1s beside one die, 317 of
// 317 beside two (10 scenes each); now none. Specks 7 pixels across,
// about two thirds of the dice's 1s, still are. On matteop65 (one
// polarity, its 1s on no vouching region) nothing changes.
func dropLint(pds []pipDie, ps []pip) []pipDie {
	var rs []float64
	for _, pd := range pds {
		if pd.f.n >= 2 && !pd.null && !pd.cocked {
			return pds
		}
		if pd.f.n == 1 && pd.die != nil {
			rs = append(rs, ps[pd.f.pips[0]].r)
		}
	}
	if len(rs) == 0 {
		return pds
	}
	ref := median(rs)
	return slices.DeleteFunc(pds, func(pd pipDie) bool {
		return pd.f.n == 1 && pd.die == nil && ps[pd.f.pips[0]].r < lintShare*ref
	})
}

// lintShare is the least share of a vouched 1's pip radius an unvouched
// lone pip beside it needs (see dropLint).
const lintShare = 0.6

// lonePipOff and lonePipSize bound where and how large a lone pip lies on
// a die-like region that vouches for it, lonePipClear how far around the
// middle no other spot may lie (shares of the region's side; a 3's or 5's
// corner pips lie 0.35 from the middle of a face that fills it).
const (
	lonePipOff   = 0.1
	lonePipClear = 0.45
	// lonePipContrast is the least grey-level contrast of a lone pip a die
	// vouches for (rendered 1s of random colours: 69–230, and 90 missed
	// those under it — light green on red, brown on lilac; a small pink
	// 3 with green pips whose corner pips merged with its lit edges, read
	// as 1 by a reviewer: 59).
	lonePipContrast = 70.0
)

var lonePipSize = [2]float64{0.07, 0.35}

// pipRadius is the mean radius of f's pips, in photo pixels.
func pipRadius(g *grayImg, ps []pip, f *face) float64 {
	_, _, r := pipMeans(ps, f)
	return r / g.scale
}

// unread leaves d's face unread: no face, and a confidence of at most a
// half, whatever made it doubtful.
func (d *Die) unread() {
	d.Face = nil
	d.Confidence = min(d.Confidence, 0.5)
}
