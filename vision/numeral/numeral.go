// Package numeral learns a dice set from labelled photos and tells a die
// crop's kind and up face with a confidence.
//
// A Model is a small convolutional network in pure Go. Train fits it to
// crops of the owner's dice (made with CropDie from each die's box), with
// random rotation, scale, shift, stretch, blur, light and noise, plus a
// "not a die" class; Classify then reads one crop in about a millisecond.
// Faces are physical: a d10 shows 0–9, a percentile d100 0, 10, …, 90,
// the other kinds 1..N.
package numeral

import (
	"cmp"
	"encoding/json"
	"fmt"
	"image"
	"math"
	"slices"
	"strconv"
	"sync"
)

// DefaultMinConfidence is the confidence below which a reader should
// answer "unreadable" rather than report the face; confidences are
// calibrated on held-back photos (or augmented views) at training time.
const DefaultMinConfidence = 0.9

// Sample is one labelled die crop for Train. Img is a crop made like
// CropDie's (the die in the middle, any size). Die "" marks a crop that
// shows no die (background), which teaches the model to answer with a low
// confidence.
type Sample struct {
	Img  image.Image
	Die  string // "d4", "d6", "d8", "d10", "d12", "d20", "d100" or ""
	Face int    // physical face: d10 0–9, d100 0,10,…,90, others 1–N
	Name string // where it came from (file name), for messages; optional
}

// class is one output of the network: a die kind and face, or background
// (Die "").
type class struct {
	Die  string `json:"die"`
	Face int    `json:"face"`
}

// Model is a trained reader of one dice set. It is safe for concurrent
// use by several goroutines.
type Model struct {
	arch    Arch
	net     *net
	params  []float32
	classes []class // classes[0] is background
	view    float64 // share of the die's side the net sees
	lens    Lens    // where a slanted camera sees the up face
	temp    float64 // softmax temperature from calibration
	stats   Stats
	scene   json.RawMessage // see fileModel.Scene
	boxFix  []float64       // see fileModel.BoxFix
	sizes   json.RawMessage // see fileModel.Sizes
	// minSharp is the least sharpness of the training dice, times
	// sharpSlack; 0: none known. A die blurrier than that (still moving,
	// a camera out of focus) shows the net what it never learnt, and its
	// confident answers are guesses.
	minSharp float64
	minConf  float64 // see MinConfidence
	works    sync.Pool
}

// sides returns the number of sides of a die name, or 0.
func sides(die string) int {
	switch die {
	case "d4", "d6", "d8", "d10", "d12", "d20", "d100":
		n, _ := strconv.Atoi(die[1:])
		return n
	}
	return 0
}

// ValidFace reports whether face is a physical face of die ("d10" 0–9,
// "d100" 0,10,…,90, others 1..N).
func ValidFace(die string, face int) bool {
	switch n := sides(die); n {
	case 0:
		return false
	case 10:
		return face >= 0 && face <= 9
	case 100:
		return face >= 0 && face <= 90 && face%10 == 0
	default:
		return face >= 1 && face <= n
	}
}

func checkLabel(die string, face int) error {
	if die == "" {
		return nil
	}
	if sides(die) == 0 {
		return fmt.Errorf("die %q is not one of d4, d6, d8, d10, d12, d20, d100", die)
	}
	if !ValidFace(die, face) {
		return fmt.Errorf("face %d is not a face of a %s", face, die)
	}
	return nil
}

func compareClass(a, b class) int {
	if c := cmp.Compare(sides(a.Die), sides(b.Die)); c != 0 {
		return c
	}
	return cmp.Compare(a.Face, b.Face)
}

// Kinds lists the die kinds the model knows, smallest first.
func (m *Model) Kinds() []string {
	var out []string
	for _, c := range m.classes[1:] {
		if len(out) == 0 || out[len(out)-1] != c.Die {
			out = append(out, c.Die)
		}
	}
	return out
}

// Stats reports how training went.
func (m *Model) Stats() Stats { return m.stats }

// Scene returns what enrolment learnt of the camera's view, as encoded by
// package vision (nil when nothing was learnt). The model only carries it.
func (m *Model) Scene() json.RawMessage { return m.scene }

// SetScene stores a scene encoded by package vision, written with the model.
func (m *Model) SetScene(s json.RawMessage) { m.scene = s }

// BoxFix is how package vision moves the boxes of dice it finds in a photo
// alone (no learnt tray) to where the enrolment's labelled boxes lay: nil
// for none; vision checks it.
func (m *Model) BoxFix() []float64 { return m.boxFix }

// SetBoxFix stores a box fix (left, top, right, bottom), written with the
// model.
func (m *Model) SetBoxFix(f []float64) { m.boxFix = f }

// Sizes is how large each kind of die lies in the camera's view, as
// encoded by package vision (nil when not learnt). The model only carries
// it.
func (m *Model) Sizes() json.RawMessage { return m.sizes }

// MinSharpness is the least sharpness a die must have for its face to be
// read (the training dice's 1st percentile, times sharpSlack); 0: no check.
func (m *Model) MinSharpness() float64 { return m.minSharp }

// SoftSharpness is the sharpness below which (down to MinSharpness) a
// die's confidence is taken as SoftFactor times likelier wrong: the
// training dice's 1st percentile. 0 when none is known.
func (m *Model) SoftSharpness() float64 { return m.minSharp / sharpSlack }

// MinConfidence is the least confidence at which the model's own held-back
// crops, read as a reader reads (Classify), were never answered wrongly:
// just above the surest wrong answer (see ownThreshold); 0 when none was
// wrong. A reader should take the larger of it and its own threshold.
func (m *Model) MinConfidence() float64 { return m.minConf }

// SetSizes stores die sizes encoded by package vision, written with the
// model.
func (m *Model) SetSizes(s json.RawMessage) { m.sizes = s }

// maxSide is the side to which crops are shrunk before sampling: twice the
// net's input across the die's view, so the shrink is cheap and the
// sampling sharp.
func maxSide(size int, view float64) int {
	return int(2*float64(size)*(1+2*Margin)/view) + 1
}

// lensShift is how far, in die sides, a lens model's extra looks move the
// view along the slant. On the oblique stand-in (40° and 30°) it took
// precision from 0.993 and 0.985 to 1.000, recall from 0.963 and 0.883 to
// 0.927 and 0.790; moved by 0.03, recall fell to 0.900 and 0.677.
const lensShift = 0.01

// lensSpread is how far, in die sides, the four further looks through a
// lens move the view: either way along the slant, and either way across
// it. An answer the net gives only where the view falls just so is a
// guess; these looks bring its mean down (see lensConfidence).
const lensSpread = 0.03

// canonSide is the side crops are shrunk to before the net looks: fine
// enough for the view, which a lens squashes.
func (m *Model) canonSide() int {
	frac := m.view
	if s := m.lens.Squash; s > 0 && s < 1 { // a squash has an offset (Lens.check)
		frac *= s
	}
	return maxSide(m.arch.Size, frac)
}

// Lens is where the model looks for the up face in a die's crop.
func (m *Model) Lens() Lens { return m.lens }

func (m *Model) getWork() *work {
	if w, ok := m.works.Get().(*work); ok {
		return w
	}
	return m.net.newWork()
}

// Views is how many looks Classify takes at a crop with a square net: the
// die turned by 0°, 90°, 180° and 270°. The net learned every angle, so
// each look is a fair one, and requiring them to agree turns most
// confident mistakes on an odd view into low confidence. A polar net takes
// two looks, half an angle cell apart (a quarter turn is a shift it does
// not see), and through a lens six more: moved by lensShift either way
// along the slant, and by lensSpread either way along it and across it.
const Views = 4

// Classify reads the die in crop (made like CropDie's) and returns its kind,
// physical face and the probability that this answer is right. Only kinds
// in allowed are answered (nil: any kind the model knows); the probability
// still counts every class the model knows, so a die of another kind or no
// die at all gets a low confidence. The answer is the class most probable
// over the looks (see Views), and its confidence the lowest probability
// any look gives it, or through a lens that of its mean (lensConfidence).
// Report the face only when confidence reaches a threshold such as
// DefaultMinConfidence. With no allowed kind known to the model it
// returns "", 0, 0.
func (m *Model) Classify(crop image.Image, allowed []string) (die string, face int, confidence float64) {
	die, face, confidence, _, _ = m.classifyLooks(crop, allowed, Views)
	return die, face, confidence
}

// ClassifyLooks is Classify also returning the answer's mean probability
// over the looks (through a lens, its lensConfidence, as least is): a
// reader that looks at a die through two boxes may average the two boxes'
// looks where no single box is sure by its confidence.
// A die too blurred to read (MinSharpness) keeps its kind and face but has
// least and mean 0, as do a crop with no allowed kind and a die in the
// band where the net must be surer (SoftFactor) read at a mean of 0.9 or
// less; any other answer has a mean above 0.
//
// background is the mean probability over the looks that crop shows no
// die: the class the model learnt from the enrolment photos' trays,
// whatever kinds are allowed, blurred or not. A region the model is as
// sure of that is no die (a knot in a wood floor, a glint), where a low
// confidence in every face would leave it a die of unread face.
func (m *Model) ClassifyLooks(crop image.Image, allowed []string) (die string, face int, least, mean, background float64) {
	return m.classifyLooks(crop, allowed, Views)
}

// classify is Classify with the given number of looks (1, 2 or 4; a polar
// net takes at most 2, and through a lens 2 become lensViews).
func (m *Model) classify(crop image.Image, allowed []string, views int) (die string, face int, confidence float64) {
	die, face, confidence, _, _ = m.classifyLooks(crop, allowed, views)
	return die, face, confidence
}

// classifyLooks is classify also returning the answer's mean probability
// over the looks, and the background's.
func (m *Model) classifyLooks(crop image.Image, allowed []string, views int) (die string, face int, least, mean, bg float64) {
	return m.classifyCanon(toCanon(crop, m.canonSide()), allowed, views)
}

// classifyCanon is classifyLooks on a crop already shrunk (toCanon at
// canonSide), as Train holds its crops.
func (m *Model) classifyCanon(c *canon, allowed []string, views int) (die string, face int, least, mean, bg float64) {
	w := m.getWork()
	defer m.works.Put(w)
	v0 := centreView(c, m.arch.Size, m.view)
	n := len(m.classes)
	if cap(w.sum) < 2*n {
		w.sum = make([]float32, 2*n)
	}
	sum, low := w.sum[:n], w.sum[n:2*n]
	clear(sum)
	var blurred, soft, lensLooks bool
	if m.minSharp > 0 { // a model without it is not measured at all
		sharp := sharpness(c)
		blurred, soft = sharp < m.minSharp, sharp < m.SoftSharpness()
	}
	if m.arch.Polar {
		// A quarter turn is a shift by whole angle cells, which a polar
		// net does not see: its second look is turned by half a cell of
		// its last layer instead, the angle it is least sure to ignore.
		views = min(views, 2)
		if !m.lens.straight() && views == 2 {
			// Through a lens six more looks, the view moved along the
			// slant and across it: the up face is small and squashed
			// there, and an answer that does not hold when the view moves
			// by a pixel or two is no answer.
			views, lensLooks = lensViews, true
		}
	}
	for k := 0; k < views; k++ {
		v := v0
		// Quarter turns are exact: the sampling matrix only swaps signs.
		a := v0.m[0]
		switch {
		case m.arch.Polar && k >= 2:
			n := math.Hypot(m.lens.DX, m.lens.DY) // at least 0.01 (Lens.check)
			ux, uy := m.lens.DX/n, m.lens.DY/n    // along the slant
			d := lensShift
			if k >= 4 {
				d = lensSpread
			}
			s := d * c.dieSide() * float64(2*(k%2)-1) // even k: back, odd: on
			if k >= 6 {
				ux, uy = -uy, ux // across the slant
			}
			v.cx += s * ux
			v.cy += s * uy
		case m.arch.Polar && k == 1:
			th := math.Pi / float64(m.net.lastW)
			v.m = [4]float64{a * math.Cos(th), -a * math.Sin(th), a * math.Sin(th), a * math.Cos(th)}
		case k*4/views == 1:
			v.m = [4]float64{0, -a, a, 0}
		case k*4/views == 2:
			v.m = [4]float64{-a, 0, 0, -a}
		case k*4/views == 3:
			v.m = [4]float64{0, a, -a, 0}
		}
		p := m.probsView(c, v, w)
		for i, x := range p {
			sum[i] += x
			if k == 0 || x < low[i] {
				low[i] = x
			}
		}
	}
	best := -1
	for i, c := range m.classes {
		if i == 0 || (allowed != nil && !slices.Contains(allowed, c.Die)) {
			continue
		}
		if best < 0 || sum[i] > sum[best] {
			best = i
		}
	}
	bg = float64(sum[0]) / float64(views)
	if best < 0 {
		return "", 0, 0, 0, bg
	}
	if blurred {
		// The kind stands (an outline blurs little); the face is unknown.
		return m.classes[best].Die, m.classes[best].Face, 0, 0, bg
	}
	least, mean = float64(low[best]), float64(sum[best])/float64(views)
	if lensLooks {
		least = lensConfidence(mean)
		mean = least
	}
	if soft {
		least, mean = softened(least), softened(mean)
	}
	return m.classes[best].Die, m.classes[best].Face, least, mean, bg
}

// lensViews is how many looks Classify takes through a lens.
const lensViews = 8

// lensConfidence is the confidence of an answer whose mean probability
// over the looks through a lens is m: its odds to the power 1.5,
// m^1.5/(m^1.5+(1−m)^1.5), so a mean of 0.8 is 8/9 and 0.9 is at a mean
// of 0.81. The least of the looks, still the confidence straight on, is
// no measure through a lens: the looks moved by lensSpread are meant to
// waver on a die seen badly, and one dip then left many dice read right
// unanswered. The mean itself is too low for a confidence: over 30
// stand-in models' readings, answers at a mean of 0.5–0.7 were right 87%
// of the time, 0.7–0.8 98%, 0.8–0.9 all 454, 0.95–0.99 all but 1 of
// 1,097; this stays under that in each band (0.5–0.78, 0.78–0.89,
// 0.89–0.96, 0.988–0.999). The odds squared read more dice right but,
// on damaged copies of the stand-ins' photos (colour casts, blur, dark,
// blocks, torn rows), more wrongly than the least of four looks did (28
// where it read 23); the power 1.5 reads fewer wrongly there too (15).
func lensConfidence(m float64) float64 {
	if m <= 0 {
		return 0
	}
	a, b := math.Pow(m, 1.5), math.Pow(1-m, 1.5)
	return a / (a + b)
}

// SoftFactor is how many times likelier to be wrong an answer is taken to
// be for a die blurrier than the training dice's 1st percentile but within
// sharpSlack of it: 0.99 becomes 0.9. The net reads such dice surely and
// wrongly now and then. Defocused copies of 150 40° stand-in photos, read
// through their labelled boxes, put 100 dice there: at 0.9 they read 15
// right and 1 wrong, at 0.99 6 right and none wrong. Of 1,200 clean dice
// on four stand-in sets, 12 lay there: 11 right at 0.9, 10 at 0.99.
// Through the reader, defocused copies of three stand-in sets read 40
// right and 0 wrong with it, 93 and 6 without; six clean sets, 1,669
// right of 1,800 against 1,674, with no more wrong.
const SoftFactor = 10

// softened is confidence p of a die in that band.
func softened(p float64) float64 { return max(0, 1-SoftFactor*(1-p)) }

// sharpness is how sharp the die in c is: over the middle of the die,
// sampled in grey on a sharpGrid-cell square whatever the die's size in
// pixels (the net's own sampler), the mean square of the luma's step to
// the next cell along the least sharp of four directions, against twice
// the luma's variance there (1 for noise, near 0 for a smooth ramp). A
// die moving during the exposure is blurred along one direction only,
// which the least of the four finds.
func sharpness(c *canon) float64 {
	const g = sharpGrid
	if c.dieSide()*sharpFrac < 4 {
		return 0
	}
	var grid [g * g]float32
	c.sample(centreView(c, g, sharpFrac), Arch{Size: g, Channels: 1}, grid[:])
	var s, s2 float64
	var steps [4]float64
	cnt := 0
	for y := 1; y < g-1; y++ {
		for x := 1; x < g-1; x++ {
			v := float64(grid[y*g+x])
			s += v
			s2 += v * v
			cnt++
			for k, o := range [4][2]int{{1, 0}, {0, 1}, {1, 1}, {1, -1}} {
				dv := float64(grid[(y+o[1])*g+x+o[0]]) - v
				steps[k] += dv * dv
			}
		}
	}
	m := s / float64(cnt)
	vr := s2/float64(cnt) - m*m
	if vr < 1.0/(255*255) {
		return 0 // a flat crop (a luma sd under one level): nothing to judge
	}
	return slices.Min(steps[:]) / float64(cnt) / (2 * vr)
}

// sharpFrac is the share of the die's side, about its middle, that
// sharpness looks at.
const sharpFrac = 0.8

// sharpGrid is the side, in cells, of the square sharpness samples the
// die on: a die of 60 px or so is seen at about its own pixels.
const sharpGrid = 48

// sharpSlack is how much blurrier than the blurriest of the training
// dice (its sharpest 99%: a stray photo) a die may be and still be read.
// At 0.8, burksbuilds' dice turned and scaled (resampled, so a little
// softer) lost 6 of 508 right readings; at 0.65 none, and motion blurred
// stand-in photos still answer no face.
const sharpSlack = 0.65

// minSharpness is the least sharpness a die must have to be read: that
// of the training dice, the 1% blurriest left out, times sharpSlack; 0 (no
// check) without dice.
func minSharpness(train []item) float64 {
	var v []float64
	for _, it := range train {
		if it.class != 0 {
			v = append(v, sharpness(it.c))
		}
	}
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	return sharpSlack * v[len(v)/100]
}

// probsView runs the net on view v of c and returns the calibrated class
// probabilities (owned by w).
func (m *Model) probsView(c *canon, v view, w *work) []float32 {
	c.sample(m.lens.look(v, c), m.arch, w.in)
	standardize(w.in)
	logits := m.net.forward(m.params, w)
	softmax(logits, float32(m.temp), w.probs)
	return w.probs
}
