// Package vision finds the dice in a photo of the tray and reads their up
// faces: pip dice by counting the pips of the up face, numbered dice with
// a learned classifier, answering a null face whenever it is not sure.
package vision

import (
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"slices"
	"sort"
	"strings"

	"github.com/towerd/towerd/vision/dataset"
	"gocv.io/x/gocv"
)

// Kinds are the dice kinds the reader knows, as rules and datasets spell them.
var Kinds = []string{"d4", "d6", "d8", "d10", "d12", "d20", "d100"}

// FaceClassifier reads the kind and up face of one die from a crop of it.
// *numeral.Model implements it. crop is made like numeral.CropDie (the
// die's box grown by a margin); allowed limits the kinds (nil: any). Faces
// are physical: d10 0–9, d100 0, 10, …, 90.
type FaceClassifier interface {
	Classify(crop image.Image, allowed []string) (die string, face int, confidence float64)
}

// Options configure a Reader. The zero value reads pip d6 dice only
// (without a classifier, numbered dice are reported with a null face).
type Options struct {
	// Model reads numbered dice (and the kind of enrolled sets); nil reads
	// pip dice only.
	Model FaceClassifier
	// MinConfidence is the confidence below which a face is reported as
	// null; 0 means DefaultMinConfidence.
	MinConfidence float64
	// Background is a photo of the empty tray from the same camera; when
	// given, dice are also found as what differs from it.
	Background image.Image
	// AllowedKinds limits the kinds that may be present ("d6", "d20", …);
	// nil allows all.
	AllowedKinds []string
	// Crop, when not empty, is the part of each photo where dice can lie
	// (the tray); the rest is ignored.
	Crop image.Rectangle
	// TopDown says the camera looks straight down on the tray, as in a
	// tower: a die lying flat then shows its up face square on, and one
	// whose face is clearly foreshortened is leaning (cocked) even when it
	// is the only die. Off, for photos taken at an angle, a die is cocked
	// only when it is tilted far more than the others.
	TopDown bool
}

// DefaultMinConfidence is the confidence a face needs to be reported.
const DefaultMinConfidence = 0.9

// Die is one die found in a photo.
type Die struct {
	Kind string // "d6", …; "" when the kind could not be told
	// Face is the physical up face (d10 0–9, d100 0,10,…,90); nil when the
	// die was seen but its face not read with confidence.
	Face       *int
	Confidence float64         // how sure the face is, 0–1
	Box        image.Rectangle // the die in photo pixels
	// Cocked marks a die leaning on something with no face straight up;
	// its Face is nil.
	Cocked bool
	// Outline is the die's outline in photo pixels (for annotation), when
	// known.
	Outline []image.Point

	pips int     // the pips of the face the pip counter found; 0 otherwise
	pipR float64 // their mean radius, photo pixels
}

// Reader reads dice from photos. It is safe for concurrent use.
type Reader struct {
	opts    Options
	allowed map[string]bool
	learnt
	// inView reads photos of the scene's view when no kinds were given:
	// only the kinds enrolled from that view's photos, where every die
	// was labelled, are looked for (nil: r itself).
	inView *Reader
	// pipGuard (inView's) still looks for pip faces where no d6 is
	// looked for, to leave a pip die the model never saw unread.
	pipGuard bool
	// faceConf is the confidence a face the model reads needs: the larger
	// of opts.MinConfidence and the model's own (minConfModel). The pip
	// counter's faces and the model's "no die here" keep
	// opts.MinConfidence: the model's threshold says where its faces err.
	faceConf float64
}

// minConfModel is a classifier that carries its own least confidence for
// a face (*numeral.Model does: where its held-back crops were never read
// wrongly).
type minConfModel interface {
	MinConfidence() float64
}

// sceneModel is a classifier that carries what its enrolment learnt of the
// camera's view (*numeral.Model does).
type sceneModel interface {
	Scene() json.RawMessage
}

// boxFixModel is a classifier that carries a box fix for dice found in a
// photo alone (*numeral.Model does).
type boxFixModel interface {
	BoxFix() []float64
}

// sizesModel is a classifier that carries how large its dice lie in the
// camera's view (*numeral.Model does).
type sizesModel interface {
	Sizes() json.RawMessage
}

// learnt is what the model's enrolment learnt of its camera's view,
// decoded once for a reader and the readers derived from it.
type learnt struct {
	scene *Scene // the tray; used without a Background
	// aloneFix moves the boxes of dice found in a photo alone (the
	// model's BoxFix, learnt when no tray was).
	aloneFix [4]float64
	// sizes is how large the model's dice lie in its camera's view (the
	// model's Sizes); nil: unknown.
	sizes *ViewSizes
}

// decodeLearnt decodes and checks what model carries of its view.
func decodeLearnt(model FaceClassifier) (learnt, error) {
	var l learnt
	if sm, ok := model.(sceneModel); ok && len(sm.Scene()) > 0 && string(sm.Scene()) != "null" {
		l.scene = new(Scene)
		if err := l.scene.UnmarshalJSON(sm.Scene()); err != nil {
			return l, fmt.Errorf("vision: the model's scene: %w", err)
		}
	}
	if bm, ok := model.(boxFixModel); ok && bm.BoxFix() != nil {
		fix, err := parseFix(bm.BoxFix())
		if err != nil {
			return l, fmt.Errorf("vision: the model's %w", err)
		}
		l.aloneFix = fix
	}
	if sm, ok := model.(sizesModel); ok && len(sm.Sizes()) > 0 && string(sm.Sizes()) != "null" {
		v, err := parseSizes(sm.Sizes())
		if err != nil {
			return l, fmt.Errorf("vision: the model's %w", err)
		}
		l.sizes = v
	}
	return l, nil
}

// NewReader checks opts and returns a Reader.
func NewReader(opts Options) (*Reader, error) {
	if opts.MinConfidence < 0 || opts.MinConfidence > 1 {
		return nil, fmt.Errorf("vision: MinConfidence %v is not within 0–1", opts.MinConfidence)
	}
	l, err := decodeLearnt(opts.Model)
	if err != nil {
		return nil, err
	}
	return newReader(opts, l)
}

// newReader is NewReader with what the model learnt already decoded.
func newReader(opts Options, l learnt) (*Reader, error) {
	keepHeap()
	if opts.MinConfidence == 0 {
		opts.MinConfidence = DefaultMinConfidence
	}
	r := &Reader{opts: opts, learnt: l, faceConf: opts.MinConfidence}
	if m, ok := opts.Model.(minConfModel); ok {
		r.faceConf = max(r.faceConf, m.MinConfidence())
	}
	if len(opts.AllowedKinds) > 0 {
		r.allowed = map[string]bool{}
		for _, k := range opts.AllowedKinds {
			k = strings.ToLower(strings.TrimSpace(k))
			if !slices.Contains(Kinds, k) {
				return nil, fmt.Errorf("vision: allowed kind %q is not one of %s", k, strings.Join(Kinds, " "))
			}
			r.allowed[k] = true
		}
	}
	if km, ok := opts.Model.(interface{ Kinds() []string }); ok && len(km.Kinds()) > 0 && (r.scene != nil || r.sizes != nil) &&
		opts.Background == nil && r.allowed == nil {
		// A pip d6 in the view would have been labelled and enrolled; a
		// set without d6 gets no pip dice there (the pip counter took the
		// round marks of a d20's numerals for the lone pip of a 1), but a
		// face of several pips still leaves its die unread (pipGuard).
		// Without a learnt tray the view is known only by its photos'
		// size (sizes).
		o := opts
		o.AllowedKinds = km.Kinds()
		var err error
		if r.inView, err = newReader(o, l); err != nil {
			return nil, err
		}
		r.inView.pipGuard = true
	}
	return r, nil
}

// MinConfidence is the confidence a face the model reads needs: the
// configured one (Options.MinConfidence), or the model's own when that is
// higher. A pip face needs the configured one.
func (r *Reader) MinConfidence() float64 { return r.faceConf }

// ForKinds returns a reader like r that looks only for the given kinds
// (a roll's dice plan), whatever r allows.
func (r *Reader) ForKinds(kinds []string) (*Reader, error) {
	o := r.opts
	o.AllowedKinds = kinds
	return newReader(o, r.learnt)
}

// ParseKinds parses a comma-separated list of dice kinds ("d6,d20").
func ParseKinds(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []string
	for _, k := range strings.Split(s, ",") {
		k = strings.ToLower(strings.TrimSpace(k))
		if !slices.Contains(Kinds, k) {
			return nil, fmt.Errorf("vision: %q is not a dice kind (%s)", k, strings.Join(Kinds, " "))
		}
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out, nil
}

func (r *Reader) allows(kind string) bool { return r.allowed == nil || r.allowed[kind] }

// allowedList returns the allowed kinds for a classifier (nil: any).
func (r *Reader) allowedList() []string {
	if r.allowed == nil {
		return nil
	}
	out := make([]string, 0, len(r.allowed))
	for k := range r.allowed {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return kindSides(out[i]) < kindSides(out[j]) })
	return out
}

func kindSides(k string) int {
	for i, kk := range Kinds {
		if kk == k {
			return i
		}
	}
	return len(Kinds)
}

// Read finds and reads the dice in img.
func (r *Reader) Read(img image.Image) ([]Die, error) {
	if img == nil || img.Bounds().Empty() {
		return nil, errors.New("vision: empty image")
	}
	return r.readPhoto(img, func() (*grayImg, error) { return newGrayAt(img, minWorkSide) })
}

// readPhoto reads img with the reader for it (forPhoto), making the grey
// image by gray only when the pip counter runs.
func (r *Reader) readPhoto(img image.Image, gray func() (*grayImg, error)) ([]Die, error) {
	r, inView := r.forPhoto(img)
	var g *grayImg
	if r.needsPips() {
		var err error
		if g, err = gray(); err != nil {
			return nil, err
		}
		defer g.close()
	}
	return r.read(img, g, inView)
}

// needsPips reports whether the pip counter runs, and so the grey image
// it works on is needed (a tenth of a numbered read without it).
func (r *Reader) needsPips() bool { return r.allows("d6") || r.pipGuard }

// forPhoto says whether img shows the view of the model's scene and
// returns the reader for it: inView, when there is one, for a photo of
// that view, and for a photo of the view's size (sizes) that no learnt
// tray shows: without one nothing else tells the view, and a frame of
// that size the tray does not show is most likely the same camera's
// with something amiss.
func (r *Reader) forPhoto(img image.Image) (*Reader, bool) {
	switch {
	case img == nil:
		return r, false
	case r.scene != nil && r.opts.Background == nil && r.scene.shows(img):
		if r.inView != nil {
			return r.inView, true
		}
		return r, true
	case r.inView != nil && r.sizes.shows(img.Bounds()): // never with a Background
		return r.inView, false
	}
	return r, false
}

// ReadMat finds and reads the dice in a BGR (or grey) Mat, as a camera
// delivers frames. The Mat is not modified.
func (r *Reader) ReadMat(m gocv.Mat) ([]Die, error) {
	if m.Empty() {
		return nil, errors.New("vision: empty frame")
	}
	var img image.Image
	if r.opts.Model != nil || r.opts.Background != nil {
		// Crops for the classifier and background comparison want colour.
		var err error
		img, err = m.ToImage()
		if err != nil {
			return nil, fmt.Errorf("vision: frame to image: %w", err)
		}
	}
	return r.readPhoto(img, func() (*grayImg, error) { return grayFromMat(m, minWorkSide) })
}

// intp returns a pointer to n.
func intp(n int) *int { return &n }

// Answers turns dice read from a photo into the answers a dataset.Score
// scores, for towerd eval and the dataset tests.
func Answers(dice []Die) []dataset.Answer {
	ans := make([]dataset.Answer, len(dice))
	for i, d := range dice {
		ans[i] = dataset.Answer{Die: d.Kind, Face: d.Face, Confidence: d.Confidence, Box: d.Box, Cocked: d.Cocked}
	}
	return ans
}
