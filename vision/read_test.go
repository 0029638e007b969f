package vision

import (
	"image"
	"math"
	"runtime"
	"testing"

	"github.com/towerd/towerd/vision/numeral"
)

// fixedClassifier answers every crop the same way.
type fixedClassifier struct {
	die  string
	face int
	conf float64
}

func (f fixedClassifier) Classify(image.Image, []string) (string, int, float64) {
	return f.die, f.face, f.conf
}

var _ FaceClassifier = fixedClassifier{}

// TestMergeBlobsModelOverrulesPips: with an enrolled model, a die the pip
// reader counted is of unknown kind when the model is sure of a numbered
// kind, and left null when the two read different d6 faces.
func TestMergeBlobsModelOverrulesPips(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 200, 200))
	b := blob{box: image.Rect(50, 50, 110, 110), solid: 0.95, aspect: 1.05, corners: 6}
	pip := func() []Die {
		return []Die{{Kind: "d6", Face: intp(3), Confidence: 0.97, Box: image.Rect(60, 60, 100, 100)}}
	}
	for _, tc := range []struct {
		name     string
		model    fixedClassifier
		wantKind string
		wantFace int // -1: null
	}{
		{"kinds disagree", fixedClassifier{"d20", 17, 0.97}, "", -1},
		{"same face kept", fixedClassifier{"d6", 3, 0.95}, "d6", 3},
		{"faces disagree", fixedClassifier{"d6", 5, 0.95}, "d6", -1},
		{"unsure model ignored", fixedClassifier{"d20", 17, 0.6}, "d6", 3},
	} {
		r, err := NewReader(Options{Model: tc.model})
		if err != nil {
			t.Fatal(err)
		}
		got := r.mergeBlobs(img, pip(), []blob{b}, nil)
		if len(got) != 1 {
			t.Fatalf("%s: %d dice, want 1", tc.name, len(got))
		}
		d := got[0]
		face := -1
		if d.Face != nil {
			face = *d.Face
		}
		if d.Kind != tc.wantKind || face != tc.wantFace {
			t.Errorf("%s: got %s face %d, want %s %d", tc.name, d.Kind, face, tc.wantKind, tc.wantFace)
		}
		if d.Face == nil && d.Confidence >= r.opts.MinConfidence {
			t.Errorf("%s: null face with confidence %g", tc.name, d.Confidence)
		}
		if d.Box != b.box {
			t.Errorf("%s: box %v, want the blob's %v", tc.name, d.Box, b.box)
		}
	}
}

// TestMergeBlobsSpeckOnNumberedDie: a "pip face" far smaller than the
// die-like blob it lies on (a light numeral on a dark die) is dropped and
// the blob read by the model as a die of its own.
func TestMergeBlobsSpeckOnNumberedDie(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 200, 200))
	b := blob{box: image.Rect(50, 50, 134, 134), solid: 0.95, aspect: 1.05, corners: 6}
	speck := []Die{{Kind: "d6", Face: intp(1), Confidence: 0.98, Box: image.Rect(80, 80, 100, 100)}}
	r, err := NewReader(Options{Model: fixedClassifier{"d20", 7, 0.97}})
	if err != nil {
		t.Fatal(err)
	}
	got := r.mergeBlobs(img, speck, []blob{b}, nil)
	if len(got) != 1 || got[0].Kind != "d20" || got[0].Face == nil || *got[0].Face != 7 || got[0].Box != b.box {
		t.Fatalf("got %+v, want one d20 7 at the blob", got)
	}
}

// ownThreshold is a fixedClassifier that carries its own least confidence
// for a face, as a model whose held-back crops were read wrongly does.
type ownThreshold struct {
	fixedClassifier
	min float64
}

func (o ownThreshold) MinConfidence() float64 { return o.min }

var _ minConfModel = ownThreshold{}

// TestModelsOwnThreshold: a face the model reads needs the larger of the
// configured confidence and the model's own; the model's doubt of a pip
// reading still counts from the configured one.
func TestModelsOwnThreshold(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 200, 200))
	b := blob{box: image.Rect(50, 50, 134, 134), solid: 0.95, aspect: 1.05, corners: 6}
	face := func(ds []Die) int {
		if len(ds) != 1 {
			t.Fatalf("%d dice, want 1", len(ds))
		}
		if ds[0].Face == nil {
			return -1
		}
		return *ds[0].Face
	}
	for _, tc := range []struct {
		name       string
		conf, own  float64
		configured float64
		wantMin    float64
		want       int // -1: null
	}{
		{"below the model's own", 0.95, 0.97, 0, 0.97, -1},
		{"at the model's own", 0.97, 0.97, 0, 0.97, 7},
		{"configured higher", 0.98, 0.97, 0.99, 0.99, -1},
		{"configured lower, model's stands", 0.95, 0.97, 0.8, 0.97, -1},
		{"no own threshold", 0.95, 0, 0, 0.9, 7},
	} {
		r, err := NewReader(Options{Model: ownThreshold{fixedClassifier{"d20", 7, tc.conf}, tc.own}, MinConfidence: tc.configured})
		if err != nil {
			t.Fatal(err)
		}
		if r.MinConfidence() != tc.wantMin {
			t.Errorf("%s: MinConfidence %g, want %g", tc.name, r.MinConfidence(), tc.wantMin)
		}
		if got := face(r.mergeBlobs(img, nil, []blob{b}, nil)); got != tc.want {
			t.Errorf("%s: face %d, want %d", tc.name, got, tc.want)
		}
	}
	// A pip die: the model reading another d6 face at 0.95 still makes
	// it null (doubt from the configured 0.9); reading a face the pip
	// counter left null gives it only from the model's own 0.97.
	pb := blob{box: image.Rect(50, 50, 110, 110), solid: 0.95, aspect: 1.05, corners: 6}
	pipDie := func(f *int) []Die {
		return []Die{{Kind: "d6", Face: f, Confidence: 0.97, Box: image.Rect(60, 60, 100, 100)}}
	}
	for _, tc := range []struct {
		name  string
		conf  float64
		pips  *int
		model int
		want  int
	}{
		{"doubt below own", 0.95, intp(3), 5, -1},
		{"agrees below own", 0.95, intp(3), 3, 3},
		{"fills below own", 0.95, nil, 3, -1},
		{"fills at own", 0.97, nil, 3, 3},
	} {
		r, err := NewReader(Options{Model: ownThreshold{fixedClassifier{"d6", tc.model, tc.conf}, 0.97}})
		if err != nil {
			t.Fatal(err)
		}
		if got := face(r.mergeBlobs(img, pipDie(tc.pips), []blob{pb}, nil)); got != tc.want {
			t.Errorf("pip die, %s: face %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestCropDieCentres: the crop is the box grown by numeral.Margin on each side,
// edge pixels repeated beyond the photo.
func TestCropDieCentres(t *testing.T) {
	img := image.NewYCbCr(image.Rect(0, 0, 40, 30), image.YCbCrSubsampleRatio420)
	for i := range img.Y {
		img.Y[i] = 200
	}
	for i := range img.Cb {
		img.Cb[i], img.Cr[i] = 128, 128
	}
	c := numeral.CropDie(img, image.Rect(0, 0, 20, 20))
	if c.Rect.Dx() != 30 || c.Rect.Dy() != 30 {
		t.Fatalf("crop %v, want 30x30", c.Rect)
	}
	for i := 0; i < len(c.Pix); i += 4 {
		if c.Pix[i] != 200 || c.Pix[i+1] != 200 || c.Pix[i+2] != 200 || c.Pix[i+3] != 255 {
			t.Fatalf("pixel %d = %v, want grey 200", i/4, c.Pix[i:i+4])
		}
	}
}

// kindsClassifier is a fixedClassifier that also tells the kinds it knows,
// as *numeral.Model does.
type kindsClassifier struct {
	FaceClassifier
	kinds []string
}

func (k kindsClassifier) Kinds() []string { return k.kinds }

// TestMergeBlobsNumberedD6: when the model knows d6 faces, the set's d6 are
// numbered, so what the pip counter found is dropped and the blob is read
// by the model.
func TestMergeBlobsNumberedD6(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 200, 200))
	b := blob{box: image.Rect(50, 50, 110, 110), solid: 0.95, aspect: 1.05, corners: 6}
	pips := []Die{
		{Kind: "d6", Face: intp(1), Confidence: 0.98, Box: image.Rect(150, 150, 170, 170)}, // a speck outside any blob
		{Kind: "d6", Face: intp(3), Confidence: 0.97, Box: image.Rect(60, 60, 100, 100)},
	}
	r, err := NewReader(Options{Model: kindsClassifier{fixedClassifier{"d6", 4, 0.96}, []string{"d6", "d20"}}})
	if err != nil {
		t.Fatal(err)
	}
	got := r.mergeBlobs(img, pips, []blob{b}, nil)
	if len(got) != 1 || got[0].Kind != "d6" || got[0].Face == nil || *got[0].Face != 4 || got[0].Box != b.box {
		t.Fatalf("got %+v, want one d6 4 at the blob", got)
	}
	// A model without d6 leaves a pip die on a die-like region as read
	// (it is unsure of the crop); off any die, a lone pip is no die (the
	// dot of a numeral) and a face of more pips is left unread.
	r, _ = NewReader(Options{Model: kindsClassifier{fixedClassifier{"d20", 7, 0.5}, []string{"d20"}}})
	pips[0].pips, pips[1].pips = 1, 3
	if got := r.mergeBlobs(img, pips, []blob{b}, nil); len(got) != 1 || got[0].Face == nil || *got[0].Face != 3 || got[0].Box != b.box {
		t.Fatalf("without a d6 model: %+v, want the d6 3 on the blob only", got)
	}
	three := Die{Kind: "d6", Face: intp(3), Confidence: 0.97, Box: image.Rect(150, 150, 170, 170), pips: 3}
	if got := r.mergeBlobs(img, []Die{three}, nil, nil); len(got) != 1 || got[0].Face != nil || got[0].Confidence > 0.5 {
		t.Fatalf("a 3 on no die-like region: %+v, want a d6 of unread face", got)
	}
}

// TestMarkOrphans: a 3 with two round pips like its own beside it (the
// rest of a 6 whose sixth pip was lost) is made doubtful; a 3 alone, or
// with a faint or differently sized spot nearby, is not.
func TestMarkOrphans(t *testing.T) {
	pipAt := func(x, y, r, contrast float64) pip {
		return pip{x: x, y: y, r: r, core: 100 - contrast, ring: 100, elong: 1, ok: true}
	}
	three := func() []pip {
		return []pip{pipAt(90, 90, 3, 60), pipAt(100, 100, 3, 60), pipAt(110, 110, 3, 60)}
	}
	face3 := func() []pipDie {
		return []pipDie{{f: face{n: 3, pips: []int{0, 1, 2}, cx: 100, cy: 100, A: m2{10, 0, 0, 10}, half: 2.4}}}
	}
	// Two pips of a side face seen below the top (v ≈ 3.8 and 4.0 face
	// units, 1.6 half sides out), and two just past the edge (v ≈ 2.9,
	// 1.2 half sides: the other half of a slanted 4, which is on the face).
	below := []pip{pipAt(95, 138, 3, 60), pipAt(108, 140, 3, 60)}
	justPast := []pip{pipAt(95, 129, 3, 60), pipAt(108, 129, 3, 60)}
	for _, tc := range []struct {
		name   string
		extra  []pip
		side   bool // the extra pips are a side face of this die
		one    bool // the face is a lone pip's
		doubts bool
	}{
		{"alone", nil, false, false, false},
		{"rest of a six", []pip{pipAt(110, 90, 3, 60), pipAt(118, 98, 3, 58)}, false, false, true},
		{"rest of a six found as a side", []pip{pipAt(110, 90, 3, 60), pipAt(118, 98, 3, 58)}, true, false, true},
		{"side face past the edge", below, true, false, false},
		{"side face just past the edge", justPast, true, false, true},
		{"pips past the edge of no side face", below, false, false, true},
		{"side face beside a lone pip", below, true, true, true},
		{"one spot", []pip{pipAt(110, 90, 3, 60)}, false, false, false},
		{"faint spots", []pip{pipAt(110, 90, 3, 20), pipAt(118, 98, 3, 20)}, false, false, false},
		{"big spots", []pip{pipAt(110, 90, 8, 60), pipAt(118, 98, 8, 60)}, false, false, false},
		{"far spots", []pip{pipAt(200, 90, 3, 60), pipAt(210, 98, 3, 60)}, false, false, false},
	} {
		ds := face3()
		if tc.one {
			ds[0].f = face{n: 1, pips: []int{1}, cx: 100, cy: 100, A: m2{6, 0, 0, 6}, half: oneHalf}
		}
		if tc.side {
			ds[0].sidePips = []int{3, 4}
		}
		markOrphans(ds, append(three(), tc.extra...))
		if ds[0].null != tc.doubts {
			t.Errorf("%s: null = %v, want %v", tc.name, ds[0].null, tc.doubts)
		}
	}
}

// TestMarkOrphansLonePip: a 1 whose die shows a side face keeps its face
// when the side's pips lie past the face its pip suggests (oneSideEdge):
// a webcam's slant shows them below the top. A "side" with a pip within
// that face may be the rest of the 1's own face (a scratched 3), and then
// all its pips count against it.
func TestMarkOrphansLonePip(t *testing.T) {
	pipAt := func(x, y float64) pip { return pip{x: x, y: y, r: 3, core: 40, ring: 100, elong: 1, ok: true} }
	for _, tc := range []struct {
		name   string
		extra  []pip
		side   bool
		doubts bool
	}{
		{"side face past the edge", []pip{pipAt(95, 138), pipAt(108, 140)}, true, false},
		{"the same pips of no side face", []pip{pipAt(95, 138), pipAt(108, 140)}, false, true},
		{"a side with a pip on the face", []pip{pipAt(100, 118), pipAt(100, 138)}, true, true},
	} {
		// A 1 seen at a slant: its guessed face (oneHalf of the pip's
		// radii) squashed to 0.6 down the photo; v of the pips below is
		// 2.6 half sides (38 px), 1.25 (18 px).
		ds := []pipDie{{f: face{n: 1, pips: []int{0}, cx: 100, cy: 100, A: m2{6, 0, 0, 3.6}, half: oneHalf}}}
		if tc.side {
			ds[0].sidePips = []int{1, 2}
		}
		markOrphans(ds, append([]pip{pipAt(100, 100)}, tc.extra...))
		if ds[0].null != tc.doubts {
			t.Errorf("%s: null = %v, want %v", tc.name, ds[0].null, tc.doubts)
		}
	}
}

// TestMergeBlobsPipGuard: where no d6 is looked for, a die whose top is a
// face of several pips (a witness) is left unread with no kind, however
// sure the model is; other dice are read.
func TestMergeBlobsPipGuard(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 300, 200))
	onGuard := blob{box: image.Rect(50, 50, 110, 110), solid: 0.95, aspect: 1.05, corners: 6}
	other := blob{box: image.Rect(180, 50, 240, 110), solid: 0.95, aspect: 1.05, corners: 6}
	r, err := NewReader(Options{Model: fixedClassifier{"d20", 17, 0.99}, AllowedKinds: []string{"d20"}})
	if err != nil {
		t.Fatal(err)
	}
	got := r.mergeBlobs(img, nil, []blob{onGuard, other}, []witness{{image.Rect(56, 56, 104, 104), 4, witnessShare, 5}})
	if len(got) != 2 || got[0].Kind != "" || got[0].Face != nil || got[1].Kind != "d20" || got[1].Face == nil || *got[1].Face != 17 {
		t.Fatalf("got %+v, want an unread die of no kind at the guard and a d20 17", got)
	}
	// A "face" far smaller than the die (the pip-like marks of a d12's
	// small numerals) is no witness, nor one whose pips are tiny for the
	// die (a d20's numeral dots: radius 2.4 px on a 54 px die).
	got = r.mergeBlobs(img, nil, []blob{onGuard}, []witness{{image.Rect(70, 70, 90, 90), 2, witnessShare, 5}})
	if len(got) != 1 || got[0].Face == nil || *got[0].Face != 17 {
		t.Errorf("a small pip face on a d20: got %+v, want d20 17", got)
	}
	got = r.mergeBlobs(img, nil, []blob{onGuard}, []witness{{image.Rect(56, 56, 104, 104), 2, 0.25, 2.4}})
	if len(got) != 1 || got[0].Face == nil || *got[0].Face != 17 {
		t.Errorf("a face of tiny pips on a d20: got %+v, want d20 17", got)
	}
	// A model that reads d6: its reading stands where the pips agree, and
	// the face is unread where they do not.
	for _, c := range []struct{ pips, want int }{{6, 6}, {2, 0}} {
		r, _ := NewReader(Options{Model: kindsClassifier{fixedClassifier{"d6", 6, 0.99}, []string{"d6", "d20"}}})
		got := r.mergeBlobs(img, nil, []blob{onGuard}, []witness{{image.Rect(56, 56, 104, 104), c.pips, witnessShare, 5}})
		if len(got) != 1 || got[0].Kind != "d6" || (c.want == 0) != (got[0].Face == nil) || (got[0].Face != nil && *got[0].Face != c.want) {
			t.Errorf("model 6, pips %d: got %+v", c.pips, got)
		}
	}
}

// TestMergeBlobsDropsSlivers: without a model, a region no pip face
// claims is a die of unread face, unless it is far smaller than the pip
// dice (a die's side or shadow beside it).
func TestMergeBlobsDropsSlivers(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 400, 200))
	r, err := NewReader(Options{})
	if err != nil {
		t.Fatal(err)
	}
	pip := []Die{{Kind: "d6", Face: intp(2), Confidence: 0.99, Box: image.Rect(50, 50, 110, 110), pips: 2}}
	sliver := blob{box: image.Rect(120, 60, 140, 90), solid: 0.95, aspect: 1.5, corners: 4}
	die := blob{box: image.Rect(250, 50, 305, 110), solid: 0.95, aspect: 1.1, corners: 6}
	got := r.mergeBlobs(img, pip, []blob{sliver, die}, nil)
	if len(got) != 2 || got[0].Face == nil || *got[0].Face != 2 || got[1].Box != die.box || got[1].Face != nil {
		t.Fatalf("got %+v, want the d6 2 and the unread die, not the sliver", got)
	}
	// A region smaller than the face, under it (a lit side), is no
	// outline for it: the face keeps its own box.
	part := blob{box: image.Rect(60, 80, 100, 110), solid: 0.95, aspect: 1.3, corners: 4}
	got = r.mergeBlobs(img, []Die{{Kind: "d6", Face: intp(2), Box: image.Rect(50, 50, 110, 110), pips: 2}}, []blob{part}, nil)
	if len(got) != 1 || got[0].Box != image.Rect(50, 50, 110, 110) || got[0].Face == nil {
		t.Fatalf("got %+v, want the d6 2 with its face's box", got)
	}
}

// TestMergeBlobsLeaningOne: under a camera looking down, a die the model
// reads as a d6 showing 1 whose pip the pip counter sees foreshortened is
// cocked, however small the lone pip's face box; a die the model reads as
// another kind is not made cocked by such a mark.
func TestMergeBlobsLeaningOne(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 200, 200))
	b := blob{box: image.Rect(50, 50, 134, 134), solid: 0.95, aspect: 1.05, corners: 4}
	lean := []Die{{Kind: "d6", Confidence: 0.5, Cocked: true, Box: image.Rect(80, 80, 100, 104), pips: 1}}
	for _, c := range []struct {
		model      fixedClassifier
		wantCocked bool
	}{{fixedClassifier{"d6", 1, 0.99}, true}, {fixedClassifier{"d20", 7, 0.99}, false}} {
		r, err := NewReader(Options{Model: kindsClassifier{c.model, []string{"d6", "d20"}}, TopDown: true})
		if err != nil {
			t.Fatal(err)
		}
		got := r.mergeBlobs(img, lean, []blob{b}, nil)
		if len(got) != 1 || got[0].Cocked != c.wantCocked || (got[0].Face == nil) != c.wantCocked {
			t.Errorf("model reads %s %d: got %+v, want cocked %v", c.model.die, c.model.face, got, c.wantCocked)
		}
	}
}

// trayClassifier is a fixedClassifier that is bg sure every crop shows no
// die.
type trayClassifier struct {
	fixedClassifier
	bg float64
}

func (c trayClassifier) ClassifyLooks(image.Image, []string) (string, int, float64, float64, float64) {
	return c.die, c.face, c.conf, c.conf, c.bg
}

var _ looksClassifier = trayClassifier{}

// TestMergeBlobsDropsTray: a region the model cannot read, and is sure
// shows its trays, is no die; one it is less sure of, or reads, or that
// pips say is a d6, or read by a model that cannot tell, is a die.
func TestMergeBlobsDropsTray(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 200, 200))
	b := blob{box: image.Rect(50, 50, 110, 110), solid: 0.95, aspect: 1.05, corners: 6}
	pips := []witness{{box: image.Rect(60, 60, 100, 100), n: 3, share: 0.25, pipR: 5}}
	unsure, sure := fixedClassifier{"d20", 7, 0.3}, fixedClassifier{"d20", 7, 0.97}
	for _, tc := range []struct {
		name      string
		model     FaceClassifier
		witnesses []witness
		want      int // dice: -1 none, 0 one unread, else one of that face
	}{
		{"unread, sure of the tray", trayClassifier{unsure, 0.95}, nil, -1},
		{"unread, the tray below the threshold", trayClassifier{unsure, 0.85}, nil, 0},
		{"read, though sure of the tray", trayClassifier{sure, 0.95}, nil, 7},
		{"unread, pips on it", trayClassifier{unsure, 0.95}, pips, 0},
		{"unread, no tray known", unsure, nil, 0},
	} {
		r, err := NewReader(Options{Model: tc.model})
		if err != nil {
			t.Fatal(err)
		}
		got := r.mergeBlobs(img, nil, []blob{b}, tc.witnesses)
		switch {
		case tc.want < 0 && len(got) != 0:
			t.Errorf("%s: %+v, want no die", tc.name, got)
		case tc.want >= 0 && len(got) != 1:
			t.Errorf("%s: %d dice, want 1", tc.name, len(got))
		case tc.want == 0 && got[0].Face != nil, tc.want > 0 && (got[0].Face == nil || *got[0].Face != tc.want):
			t.Errorf("%s: face %v, want %d (0: unread)", tc.name, got[0].Face, tc.want)
		}
	}
}

// sizeClassifier reads crops from a size up as d6 6 surely, and smaller
// ones as d6 2 at confidence low.
type sizeClassifier struct {
	sure int
	low  float64
}

func (s sizeClassifier) Classify(crop image.Image, _ []string) (string, int, float64) {
	if crop.Bounds().Dx() >= s.sure {
		return "d6", 6, 1
	}
	return "d6", 2, s.low
}

// TestClassifyGrowsTightBox: a die the model is unsure of is read once
// more with its box grown by a tenth each way, and the surer reading kept
// where the box had no reading (below overrule); a sure reading is not
// second-guessed, and a sure grown box does not overrule a reading.
func TestClassifyGrowsTightBox(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 200, 200))
	box := image.Rect(50, 50, 100, 100)
	tight := numeral.CropDie(img, box).Bounds().Dx()
	for _, tc := range []struct {
		name   string
		sure   int
		low    float64 // the tight box's confidence
		face   int
		atConf float64
	}{
		{"sure at once", tight, 0.6, 6, 1},
		{"sure once grown", tight + 1, 0.4, 6, 1},
		{"never sure", 10 * tight, 0.6, 2, 0.6},
		{"read, then another face once grown", tight + 1, 0.6, 2, 0.6},
	} {
		r, err := NewReader(Options{Model: sizeClassifier{tc.sure, tc.low}})
		if err != nil {
			t.Fatal(err)
		}
		_, f, conf, _ := r.classify(img, box)
		if f != tc.face || conf != tc.atConf {
			t.Errorf("%s: read %d at %.2f, want %d at %.2f", tc.name, f, conf, tc.face, tc.atConf)
		}
	}
}

// TestMergeBlobsWitnessGrown: where the pips say a d6 showing n and the
// model reads otherwise, the model is shown the die once more with its
// box grown; agreeing then, the face is read, else it stays unread.
func TestMergeBlobsWitnessGrown(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 200, 200))
	b := blob{box: image.Rect(50, 50, 110, 110), solid: 0.95, aspect: 1.05, corners: 4}
	tight := numeral.CropDie(img, b.box).Bounds().Dx()
	// Tight, the model is sure enough of a wrong face (a rendered red 6
	// cropped to its top read "d6 2" at 0.94).
	model := kindsClassifier{sizeClassifier{tight + 1, 0.94}, []string{"d6"}}
	for _, c := range []struct{ pips, want int }{{6, 6}, {5, 0}} {
		r, err := NewReader(Options{Model: model})
		if err != nil {
			t.Fatal(err)
		}
		got := r.mergeBlobs(img, nil, []blob{b}, []witness{{image.Rect(56, 56, 104, 104), c.pips, witnessShare, 5}})
		if len(got) != 1 || (c.want == 0) != (got[0].Face == nil) || (got[0].Face != nil && *got[0].Face != c.want) {
			t.Errorf("pips %d: got %+v, want face %d (0: unread)", c.pips, got, c.want)
		}
	}
}

// TestLeansInNeedsPipsOfADie: a leaning pip face marks the die it lies on
// cocked only when its pips are of a d6's size for that die, not the round
// marks of a numeral (a rendered d100's "90").
func TestLeansInNeedsPipsOfADie(t *testing.T) {
	box := image.Rect(50, 50, 110, 110)
	face := image.Rect(60, 62, 100, 96)
	for _, tc := range []struct {
		pipR float64
		want bool
	}{
		{5, true},
		{2, false},
	} {
		if got := leansIn([]Die{{Box: face, pipR: tc.pipR}}, box); got != tc.want {
			t.Errorf("pip radius %.0f on a 60 px die: leansIn = %v, want %v", tc.pipR, got, tc.want)
		}
	}
}

// TestLonesOnDice: a lone pip left out for its polarity counts as a 1 only
// where a square die-like region vouches for it: at its middle, of a 1's
// size for it, and with no other pip face on it.
func TestLonesOnDice(t *testing.T) {
	g, err := newGray(image.NewRGBA(image.Rect(0, 0, 640, 480)))
	if err != nil {
		t.Fatal(err)
	}
	defer g.close()
	square := blob{box: image.Rect(100, 100, 180, 180), solid: 0.95, aspect: 1.02, corners: 4}
	hexagon := square
	hexagon.corners = 6
	at := func(x, y, r float64) pip {
		r *= g.scale
		return pip{x: x * g.scale, y: y * g.scale, r: r, elong: 1, ok: true, core: 20, ring: 200, area: int(math.Pi * r * r)}
	}
	faint, soft, near := at(141, 139, 6), at(141, 139, 6), at(141, 139, 6)
	faint.ring = 80
	soft.area = int(1.2 * math.Pi * soft.r * soft.r)
	lightSoft := soft
	lightSoft.light = true
	for _, tc := range []struct {
		name  string
		p     pip
		b     blob
		other bool // a pip face on the region already
		spot  bool // another spot like a pip near the middle
		want  bool
	}{
		{"soft-edged, dark (a blurred pip)", soft, square, false, false, true},
		{"soft-edged, light (a highlight)", lightSoft, square, false, false, false},
		{"at the middle", at(141, 139, 6), square, false, false, true},
		{"faint (the die's other pips may be fainter)", faint, square, false, false, false},
		{"with a spot like a pip near the middle (a 3)", near, square, false, true, false},
		{"off the middle (a 2's pip)", at(160, 160, 6), square, false, false, false},
		{"on a hexagon (a numeral's loop)", at(140, 140, 6), hexagon, false, false, false},
		{"as large as the region", at(140, 140, 30), square, false, false, false},
		{"a speck", at(140, 140, 2), square, false, false, false},
		{"beside a pip face", at(140, 140, 6), square, true, false, false},
		{"on no region", at(400, 300, 6), square, false, false, false},
	} {
		ps := []pip{tc.p, at(20, 20, 5)}
		if tc.spot {
			ps[1] = at(116, 116, 6) // a 3's corner pip, 0.3 of the side away
		}
		var pds []pipDie
		if tc.other {
			pds = []pipDie{{f: face{n: 2, pips: []int{1}, cx: 140 * g.scale, cy: 165 * g.scale, A: m2{g.scale, 0, 0, g.scale}, half: 10}}}
		}
		got := lonesOnDice(g, []pipDie{{f: face{n: 1, pips: []int{0}}}}, ps, pds, []blob{tc.b})
		if (len(got) == 1) != tc.want {
			t.Errorf("%s: kept %d, want %v", tc.name, len(got), tc.want)
		}
		if len(got) == 1 && (got[0].die == nil || got[0].die.box != tc.b.box) {
			t.Errorf("%s: kept without its region: %+v", tc.name, got[0])
		}
	}
}

// TestLonesOnDiceWholeAround: where colour found no region, a round spot
// of the lone pip's polarity around it, at least twice its radius, stands
// for its die (wholeAround: a small red die on maroon felt). A die read
// from its pips there takes that spot, so a speck on it (a glint on a
// small die's 2) is no second die showing 1; and a spot of the other
// polarity is no die around it.
func TestLonesOnDiceWholeAround(t *testing.T) {
	g, err := newGray(image.NewRGBA(image.Rect(0, 0, 640, 480)))
	if err != nil {
		t.Fatal(err)
	}
	defer g.close()
	at := func(x, y, r float64, light bool) pip {
		x, y, r = x*g.scale, y*g.scale, r*g.scale
		return pip{x: x, y: y, r: r, elong: 1, ok: true, core: 20, ring: 200, area: int(math.Pi * r * r), light: light}
	}
	speck := at(140, 140, 2, true)
	read := pipDie{f: face{n: 2, pips: []int{2}, cx: 141 * g.scale, cy: 141 * g.scale, A: m2{g.scale, 0, 0, g.scale}, half: 10}}
	for _, tc := range []struct {
		name string
		die  pip
		pds  []pipDie
		want bool
	}{
		{"a die-sized spot around it", at(141, 141, 14, true), nil, true},
		{"a die read from its pips there", at(141, 141, 14, true), []pipDie{read}, false},
		{"a spot of the other polarity", at(141, 141, 14, false), nil, false},
		{"a spot under twice its radius", at(141, 141, 3.5, true), nil, false},
	} {
		ps := []pip{speck, tc.die, at(400, 300, 5, true)}
		got := lonesOnDice(g, []pipDie{{f: face{n: 1, pips: []int{0}}}}, ps, tc.pds, nil)
		if (len(got) == 1) != tc.want {
			t.Errorf("%s: kept %d, want %v", tc.name, len(got), tc.want)
		}
		if len(got) == 1 && (got[0].die == nil || !image.Pt(141, 141).In(got[0].die.box)) {
			t.Errorf("%s: kept without the die around it: %+v", tc.name, got[0])
		}
	}
}

// TestReaderKeepsTheCHeap: on Linux (glibc: Debian, Raspberry Pi OS) the
// reader has the C heap keep the memory OpenCV frees between photos.
func TestReaderKeepsTheCHeap(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("glibc's malloc settings are for Linux")
	}
	if _, err := NewReader(Options{}); err != nil {
		t.Fatal(err)
	}
	if !keepHeap() {
		t.Error("mallopt did not take M_MMAP_THRESHOLD and M_TRIM_THRESHOLD")
	}
}

// looksStub answers each ClassifyLooks call in turn from its readings
// (the box's, then the grown box's).
type looksStub struct {
	readings [][4]float64 // face, least, mean, and 1 for another kind
	calls    int
}

func (s *looksStub) Classify(img image.Image, allowed []string) (string, int, float64) {
	k, f, least, _, _ := s.ClassifyLooks(img, allowed)
	return k, f, least
}

func (s *looksStub) ClassifyLooks(image.Image, []string) (string, int, float64, float64, float64) {
	r := s.readings[min(s.calls, len(s.readings)-1)]
	s.calls++
	kind := "d20"
	if r[3] == 1 {
		kind = "d12"
	}
	return kind, int(r[0]), r[1], r[2], 0
}

var _ looksClassifier = (*looksStub)(nil)

// TestClassifyTwoBoxes: a box sure by its least look answers alone; else
// the grown box's, when sure and reading the same face or the box read
// below overrule (no reading); else, when the two read the same face, the
// mean of their looks decides; never a face the two boxes disagree on. A
// die the model finds too blurred through its box (mean 0) is not looked
// at again.
func TestClassifyTwoBoxes(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 200, 200))
	box := image.Rect(50, 50, 110, 110)
	for _, tc := range []struct {
		name     string
		readings [][4]float64
		face     int // 0: unsure (below the threshold)
		conf     float64
		calls    int
	}{
		{"sure box", [][4]float64{{7, 0.95, 0.97, 0}}, 7, 0.95, 1},
		{"sure grown box", [][4]float64{{7, 0.45, 0.6, 0}, {8, 0.93, 0.95, 0}}, 8, 0.93, 2},
		{"sure grown box, another face over a reading", [][4]float64{{7, 0.6, 0.7, 0}, {8, 0.93, 0.95, 0}}, 0, 0, 2},
		{"sure grown box, the same face", [][4]float64{{7, 0.6, 0.7, 0}, {7, 0.93, 0.95, 0}}, 7, 0.93, 2},
		{"two boxes agree", [][4]float64{{7, 0.8, 0.92, 0}, {7, 0.85, 0.9, 0}}, 7, 0.91, 2},
		{"agree, unsure", [][4]float64{{7, 0.8, 0.88, 0}, {7, 0.85, 0.9, 0}}, 0, 0, 2},
		{"faces differ", [][4]float64{{7, 0.8, 0.95, 0}, {8, 0.85, 0.95, 0}}, 0, 0, 2},
		{"kinds differ", [][4]float64{{7, 0.8, 0.95, 0}, {7, 0.85, 0.95, 1}}, 0, 0, 2},
		{"too blurred", [][4]float64{{7, 0, 0, 0}, {8, 0.99, 0.99, 0}}, 0, 0, 1},
	} {
		stub := &looksStub{readings: tc.readings}
		r, err := NewReader(Options{Model: stub})
		if err != nil {
			t.Fatal(err)
		}
		_, f, conf, _ := r.classify(img, box)
		sure := conf >= r.opts.MinConfidence
		if tc.face == 0 && sure || tc.face != 0 && (!sure || f != tc.face || math.Abs(conf-tc.conf) > 1e-9) || stub.calls != tc.calls {
			t.Errorf("%s: face %d confidence %g after %d looks; want face %d (0: unsure) at %g after %d", tc.name, f, conf, stub.calls, tc.face, tc.conf, tc.calls)
		}
	}
}
