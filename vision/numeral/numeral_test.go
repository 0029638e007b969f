package numeral

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// pipCrop draws a CropDie-style crop of a toy die: a light disc on a dark
// ground with n dark dots on a ring, turned by th, in the given colour.
// The number of dots does not change with rotation, so a model trained
// with rotation augmentation can learn it from a handful of crops.
func pipCrop(n int, th float64, side int, die color.RGBA, r *rand.Rand) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, side, side))
	c := float64(side) / 2
	rad := float64(side) / (2 * (1 + 2*Margin))
	type pt struct{ x, y float64 }
	var dots []pt
	for i := 0; i < n; i++ {
		a := th + 2*math.Pi*float64(i)/float64(n)
		ring := 0.55 * rad
		if n == 1 {
			ring = 0
		}
		dots = append(dots, pt{c + ring*math.Cos(a), c + ring*math.Sin(a)})
	}
	for y := 0; y < side; y++ {
		for x := 0; x < side; x++ {
			fx, fy := float64(x)+0.5, float64(y)+0.5
			col := color.RGBA{12, 12, 16, 255}
			if (fx-c)*(fx-c)+(fy-c)*(fy-c) < rad*rad {
				col = die
				for _, d := range dots {
					if (fx-d.x)*(fx-d.x)+(fy-d.y)*(fy-d.y) < (0.16*rad)*(0.16*rad) {
						col = color.RGBA{20, 20, 20, 255}
					}
				}
			}
			if r != nil {
				nz := func(v uint8) uint8 { return uint8(min(255, max(0, float64(v)+6*r.NormFloat64()))) }
				col = color.RGBA{nz(col.R), nz(col.G), nz(col.B), 255}
			}
			img.SetRGBA(x, y, col)
		}
	}
	return img
}

// toyArch is a net small enough to train in seconds under -race.
var toyArch = Arch{Size: 24, Channels: 3, Convs: []Conv{{8, true}, {16, true}, {16, false}}, Hidden: 32}

var (
	green  = color.RGBA{60, 200, 80, 255}
	orange = color.RGBA{230, 120, 30, 255}
)

// toySamples are d4 faces 1–4 (green) and d6 faces 1–3 (orange) as toy
// dice, a few crops each, plus dark background crops.
func toySamples(r *rand.Rand) []Sample {
	var s []Sample
	for k := 0; k < 3; k++ {
		for f := 1; f <= 4; f++ {
			s = append(s, Sample{Img: pipCrop(f, r.Float64()*6, 60+r.IntN(20), green, r), Die: "d4", Face: f})
		}
		for f := 1; f <= 3; f++ {
			s = append(s, Sample{Img: pipCrop(f, r.Float64()*6, 60+r.IntN(20), orange, r), Die: "d6", Face: f})
		}
		s = append(s, Sample{Img: pipCrop(0, 0, 70, color.RGBA{12, 12, 16, 255}, r)})
	}
	return s
}

var (
	toyOnce  sync.Once
	toyModel *Model
	toyErr   error
)

// toyEpochs is long enough to learn the toy dice; under -race (or with
// -short) training only runs a few epochs to exercise the code paths.
// With 150 epochs, since the loss cut (lossDrop), the tray crop's
// background came out at 0.69–0.99 over training seeds 1–8, 0.69 at the
// seed used (3), and TestTrainToyDice failed; with 300 it is 0.98 or more
// on every seed. (make test runs this package without -race too.)
func toyEpochs() int {
	if raceOn || testing.Short() {
		return 4
	}
	return 300
}

// toyAccurate reports whether the toy model was trained long enough to be
// judged on accuracy.
func toyAccurate() bool { return toyEpochs() >= 100 }

// trainToy trains the toy model once for every test that needs one.
func trainToy(t *testing.T) *Model {
	t.Helper()
	toyOnce.Do(func() {
		r := rand.New(rand.NewPCG(11, 12))
		toyModel, toyErr = Train(toySamples(r), TrainOptions{Arch: toyArch, Epochs: toyEpochs(), Seed: 3, Batch: 16, LearningRate: 0.003,
			View: 0.85}) // pips reach the face's corners
	})
	if toyErr != nil {
		t.Fatal(toyErr)
	}
	return toyModel
}

// TestTrainToyDice trains on a few toy dice and reads new turned crops of
// them, which checks the whole path: preparation, augmentation, training,
// calibration and Classify with and without allowed kinds.
func TestTrainToyDice(t *testing.T) {
	m := trainToy(t)
	if got := m.Kinds(); !slices.Equal(got, []string{"d4", "d6"}) {
		t.Fatalf("Kinds() = %v, want [d4 d6]", got)
	}
	// The net's own reading: crops from 50 px, smaller than any it was
	// trained on (60–80), measure blurrier than its training dice once
	// enlarged, and the sharpness checks (TestBlurredDieUnread,
	// TestSoftDieNeedsMore) would ask more of them.
	defer func(v float64) { m.minSharp = v }(m.minSharp)
	m.minSharp = 0
	r := rand.New(rand.NewPCG(21, 22))
	right, answered, total := 0, 0, 0
	for k := 0; k < 10; k++ {
		for _, tc := range []struct {
			die  string
			face int
			col  color.RGBA
		}{{"d4", 1, green}, {"d4", 2, green}, {"d4", 3, green}, {"d4", 4, green}, {"d6", 1, orange}, {"d6", 2, orange}, {"d6", 3, orange}} {
			crop := pipCrop(tc.face, r.Float64()*6, 50+r.IntN(60), tc.col, r)
			die, face, conf := m.Classify(crop, nil)
			total++
			if conf >= 0.5 {
				answered++
				if die == tc.die && face == tc.face {
					right++
				}
			}
		}
	}
	if toyAccurate() && (float64(right) < 0.9*float64(total) || right < answered-1) {
		t.Errorf("read %d of %d turned toy dice right, %d answered", right, total, answered)
	}
	// Restricting the kinds answers only those kinds.
	die, _, _ := m.Classify(pipCrop(2, 0.3, 70, green, nil), []string{"d6"})
	if die != "d6" {
		t.Errorf("Classify(allowed d6) answered %q", die)
	}
	if die, face, conf := m.Classify(pipCrop(2, 0.3, 70, green, nil), []string{"d20"}); die != "" || face != 0 || conf != 0 {
		t.Errorf("Classify(allowed d20, unknown) = %q %d %g, want \"\" 0 0", die, face, conf)
	}
	// Something that is not a die gets a low confidence.
	flat := image.NewRGBA(image.Rect(0, 0, 70, 70))
	for i := range flat.Pix {
		flat.Pix[i] = 30
	}
	if _, _, conf := m.Classify(flat, nil); toyAccurate() && conf >= DefaultMinConfidence {
		t.Errorf("an empty grey crop read with confidence %g", conf)
	}
	// A crop of the tray the model learnt is surely no die; a die's, even
	// one too blurred to read, surely is.
	tray := pipCrop(0, 0, 70, color.RGBA{12, 12, 16, 255}, nil)
	dieCrop := pipCrop(3, 0.3, 70, green, nil)
	background := func(crop image.Image) float64 {
		_, _, _, _, bg := m.ClassifyLooks(crop, nil)
		return bg
	}
	if bt, bd, bb := background(tray), background(dieCrop), background(boxBlur(dieCrop, 6)); toyAccurate() && (bt < DefaultMinConfidence || bd > 0.1 || bb > 0.1) {
		t.Errorf("background: tray %g, die %g, blurred die %g; want the tray's sure, the dice's below 0.1", bt, bd, bb)
	}
	st := m.Stats()
	if st.Samples != 21 || st.Background != 3 || len(st.Kinds) != 2 || st.Temperature <= 0 {
		t.Errorf("Stats() = %+v", st)
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	m := trainToy(t)
	// The scene is vision's; the model carries it as it is.
	scene := json.RawMessage(`{"width":640,"height":480}`)
	m.SetScene(scene)
	m.SetBoxFix([]float64{-0.05, 0, 0.12, 0.04}) // vision's too
	sizes := json.RawMessage(`{"width":640,"height":480,"kinds":{"d20":{"w":[44,78],"h":[43,77]}}}`)
	m.SetSizes(sizes)
	defer func(v float64) { m.minConf = v }(m.minConf)
	m.minConf = 0.97 // the toy model holds nothing back
	path := filepath.Join(t.TempDir(), "dice.model")
	if err := m.Save(path); err != nil {
		t.Fatal(err)
	}
	m2, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.params, m2.params) || !slices.Equal(m.classes, m2.classes) || m.temp != m2.temp || m.view != m2.view {
		t.Fatal("loaded model differs from the saved one")
	}
	if !bytes.Equal(m2.Scene(), scene) {
		t.Errorf("scene %s after loading, want %s", m2.Scene(), scene)
	}
	if !slices.Equal(m2.BoxFix(), m.BoxFix()) {
		t.Errorf("box fix %v after loading, want %v", m2.BoxFix(), m.BoxFix())
	}
	if m2.minSharp != m.minSharp || m.minSharp <= 0 {
		t.Errorf("least sharpness %g after loading, want %g (above 0)", m2.minSharp, m.minSharp)
	}
	if m2.MinConfidence() != m.MinConfidence() {
		t.Errorf("own threshold %g after loading, want %g", m2.MinConfidence(), m.MinConfidence())
	}
	if !bytes.Equal(m2.Sizes(), sizes) {
		t.Errorf("sizes %s after loading, want %s", m2.Sizes(), sizes)
	}
	if !slices.Equal(m.Kinds(), m2.Kinds()) || m2.Stats().Samples != m.Stats().Samples {
		t.Fatalf("loaded kinds %v stats %+v", m2.Kinds(), m2.Stats())
	}
	r := rand.New(rand.NewPCG(1, 2))
	for f := 1; f <= 4; f++ {
		crop := pipCrop(f, r.Float64()*6, 64, green, r)
		d1, f1, c1 := m.Classify(crop, nil)
		d2, f2, c2 := m2.Classify(crop, nil)
		if d1 != d2 || f1 != f2 || c1 != c2 {
			t.Errorf("face %d: saved model reads %s %d %g, loaded %s %d %g", f, d1, f1, c1, d2, f2, c2)
		}
	}
}

func TestLoadRejectsBadFiles(t *testing.T) {
	dir := t.TempDir()
	gz := func(s string) []byte {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		w.Write([]byte(s))
		w.Close()
		return b.Bytes()
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "not gzip"},
		{"text", []byte("hello"), "not gzip"},
		{"json", gz("[1,2"), "bad JSON"},
		{"format", gz(`{"format":"other","version":1}`), "format"},
		{"version", gz(`{"format":"towerd-numeral","version":99}`), "version 99"},
		{"polar v1", gz(`{"format":"towerd-numeral","version":1,"arch":{"size":32,"channels":3,"convs":[{"out":8}],"hidden":8,"classes":2,"polar":true},"classes":[{"die":""},{"die":"d6","face":1}],"view":0.6,"temperature":1}`), "version 1"},
		{"lens v2", gz(`{"format":"towerd-numeral","version":2,"lens":{"dx":0,"dy":-0.3,"squash":0.6}}`), "cannot hold a lens"},
		{"lens squash", gz(`{"format":"towerd-numeral","version":3,"lens":{"dx":0,"dy":-0.3,"squash":7}}`), "squash 7"},
		{"arch", gz(`{"format":"towerd-numeral","version":1,"arch":{"size":40,"channels":3,"convs":[{"out":8}],"hidden":8,"classes":2},"classes":[{"die":""},{"die":"d6","face":1}],"view":0.8,"temperature":1}`), "params"},
		{"min_sharpness", gz(`{"format":"towerd-numeral","version":1,"arch":{"size":40,"channels":3,"convs":[{"out":8}],"hidden":8,"classes":2},"classes":[{"die":""},{"die":"d6","face":1}],"view":0.8,"temperature":1,"min_sharpness":-1}`), "min_sharpness -1"},
		{"min_confidence", gz(`{"format":"towerd-numeral","version":1,"arch":{"size":40,"channels":3,"convs":[{"out":8}],"hidden":8,"classes":2},"classes":[{"die":""},{"die":"d6","face":1}],"view":0.8,"temperature":1,"min_confidence":1.5}`), "min_confidence 1.5"},
		{"face", gz(`{"format":"towerd-numeral","version":1,"arch":{"size":40,"channels":3,"convs":[{"out":8}],"hidden":8,"classes":2},"classes":[{"die":""},{"die":"d6","face":7}],"view":0.8,"temperature":1}`), "face 7"},
	} {
		p := filepath.Join(dir, tc.name)
		if err := os.WriteFile(p, tc.data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(p)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "numeral: ") {
			t.Errorf("%s: Load error %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}
	if _, err := Load(filepath.Join(dir, "missing")); err == nil {
		t.Error("Load of a missing file succeeded")
	}
}

// FuzzLoad feeds arbitrary bytes (seeded with a real model file) to the
// model decoder: it must return an error or a usable model, never panic.
func FuzzLoad(f *testing.F) {
	a := toyArch
	a.Classes = 3
	nt, err := newNet(a)
	if err != nil {
		f.Fatal(err)
	}
	m := &Model{arch: a, net: nt, params: nt.initParams(rand.New(rand.NewPCG(1, 1))),
		classes: []class{{}, {"d6", 1}, {"d6", 2}}, view: 0.85, temp: 1}
	path := filepath.Join(f.TempDir(), "m")
	if err := m.Save(path); err != nil {
		f.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte{})
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := decode(data)
		if err != nil {
			return
		}
		m.Classify(pipCrop(1, 0, 30, green, nil), nil)
		m.Kinds()
	})
}

// TestDefaultEpochs: the default shows about viewBudget views, a sixth
// as many again of background, in 20 to 6,000 epochs.
func TestDefaultEpochs(t *testing.T) {
	for _, c := range []struct{ n, want int }{{1, 6000}, {86, 6000}, {300, 3428}, {1000, 1028}, {4458, 230}, {100000, 20}} {
		var o TrainOptions
		if err := o.defaults(c.n); err != nil || o.Epochs != c.want {
			t.Errorf("%d die crops: %d epochs (%v), want %d", c.n, o.Epochs, err, c.want)
		}
	}
}

// TestFitTemperatureShrugsOffMislabelledViews: a few views the net reads
// as another class with near certainty (mislabelled rows) barely move the
// fitted temperature; without the cap on each view's loss they flatten it.
func TestFitTemperatureShrugsOffMislabelledViews(t *testing.T) {
	view := func(class, top int, margin float32) obs {
		l := make([]float32, 20)
		l[top] = margin
		return obs{logits: l, class: class}
	}
	var clean []obs
	for i := range 100 {
		switch {
		case i%10 == 0: // unsure and wrong
			clean = append(clean, view(i%20, (i+1)%20, 1))
		case i%10 == 1: // unsure and right
			clean = append(clean, view(i%20, i%20, 1))
		default:
			clean = append(clean, view(i%20, i%20, 5))
		}
	}
	noisy := slices.Clone(clean)
	for i := range 3 {
		noisy = append(noisy, view(i, i+5, 12))
	}
	tClean, tNoisy := fitTemperature(clean), fitTemperature(noisy)
	if math.Abs(tNoisy/tClean-1) > 0.15 {
		t.Errorf("temperature %.3f with 3 mislabelled views, %.3f without: want within 15%%", tNoisy, tClean)
	}
	defer func(c float64) { maxCalibrationLoss = c }(maxCalibrationLoss)
	maxCalibrationLoss = math.Inf(1)
	if tUncapped := fitTemperature(noisy); tUncapped < 1.5*tClean {
		t.Errorf("uncapped, the mislabelled views move the temperature only to %.3f from %.3f: the test shows nothing", tUncapped, tClean)
	}
}

// TestClassifyLooks: ClassifyLooks gives Classify's answer, its confidence
// as the least look's, and the mean over the looks, which is no less.
func TestClassifyLooks(t *testing.T) {
	m := trainToy(t)
	r := rand.New(rand.NewPCG(21, 22))
	for f := 1; f <= 4; f++ {
		crop := pipCrop(f, r.Float64()*6, 70, green, r)
		k, face, conf := m.Classify(crop, nil)
		k2, face2, least, mean, _ := m.ClassifyLooks(crop, nil)
		if k2 != k || face2 != face || least != conf || mean < least || mean > 1 {
			t.Errorf("face %d: Classify %s %d %g; ClassifyLooks %s %d least %g mean %g", f, k, face, conf, k2, face2, least, mean)
		}
	}
	if k, _, least, mean, _ := m.ClassifyLooks(pipCrop(2, 0, 70, green, r), []string{"d20"}); k != "" || least != 0 || mean != 0 {
		t.Errorf("no allowed kind known: %q %g %g", k, least, mean)
	}
}

// TestBlurredDieUnread: a die's view much blurrier than any the model was
// trained on (a die still moving, a camera out of focus) gets no face:
// the net, never shown such a view, answers it with confident guesses
// (on the 45° stand-in blurred by 11 px of motion, 12 of 33 answered
// faces were wrong).
func TestBlurredDieUnread(t *testing.T) {
	m := trainToy(t)
	if m.minSharp <= 0 {
		t.Fatalf("least sharpness %g, want above 0", m.minSharp)
	}
	r := rand.New(rand.NewPCG(31, 32))
	sharpRead := 0
	for f := 1; f <= 4; f++ {
		crop := pipCrop(f, r.Float64()*6, 80, green, r)
		if _, _, conf := m.Classify(crop, nil); conf > 0 {
			sharpRead++
		}
		if d, _, conf := m.Classify(boxBlur(crop, 6), nil); conf != 0 || d == "" {
			t.Errorf("face %d blurred: kind %q confidence %g, want a kind and 0", f, d, conf)
		}
		// The mean too, by which a reader tells blurred from unsure.
		if _, _, _, mean, _ := m.ClassifyLooks(crop, nil); mean <= 0 {
			t.Errorf("face %d: mean %g, want above 0", f, mean)
		}
		if _, _, _, mean, _ := m.ClassifyLooks(boxBlur(crop, 6), nil); mean != 0 {
			t.Errorf("face %d blurred: mean %g, want 0", f, mean)
		}
	}
	if sharpRead < 4 {
		t.Errorf("only %d of 4 sharp crops were read at all", sharpRead)
	}
}

// TestSoftDieNeedsMore: a die blurrier than the training dice's 1st
// percentile, but not so blurred as to go unread, has its confidence
// taken as SoftFactor times likelier wrong: 0.99 reads as 0.9.
func TestSoftDieNeedsMore(t *testing.T) {
	m := trainToy(t)
	defer func(v float64) { m.minSharp = v }(m.minSharp)
	crop := pipCrop(3, 0.4, 80, green, rand.New(rand.NewPCG(33, 34)))
	s := sharpness(toCanon(crop, m.canonSide()))
	m.minSharp = 0
	d, f, least, mean, _ := m.ClassifyLooks(crop, nil)
	if least <= 0 {
		t.Fatalf("the sharp crop read %s %d at %g", d, f, least)
	}
	for _, tc := range []struct {
		name     string
		minSharp float64
		soft     bool
	}{
		{"sharper than the 1st percentile", s * sharpSlack * 0.99, false},
		{"in the band", s * 0.8, true},
	} {
		m.minSharp = tc.minSharp
		d2, f2, l2, m2, _ := m.ClassifyLooks(crop, nil)
		wl, wm := least, mean
		if tc.soft {
			wl, wm = softened(least), softened(mean)
		}
		if d2 != d || f2 != f || l2 != wl || m2 != wm {
			t.Errorf("%s: %s %d at %g (mean %g), want %s %d at %g (%g)", tc.name, d2, f2, l2, m2, d, f, wl, wm)
		}
	}
	for _, c := range [][2]float64{{1, 1}, {0.99, 0.9}, {0.95, 0.5}, {0.9, 0}, {0.5, 0}} {
		if got := softened(c[0]); math.Abs(got-c[1]) > 1e-9 {
			t.Errorf("softened(%g) = %g, want %g", c[0], got, c[1])
		}
	}
}

// boxBlur is img averaged over a (2r+1)² square about each pixel.
func boxBlur(img *image.RGBA, r int) *image.RGBA {
	b := img.Bounds()
	out := image.NewRGBA(b)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			var s [3]int
			n := 0
			for dy := -r; dy <= r; dy++ {
				for dx := -r; dx <= r; dx++ {
					c := img.RGBAAt(min(max(x+dx, b.Min.X), b.Max.X-1), min(max(y+dy, b.Min.Y), b.Max.Y-1))
					s[0], s[1], s[2] = s[0]+int(c.R), s[1]+int(c.G), s[2]+int(c.B)
					n++
				}
			}
			out.SetRGBA(x, y, color.RGBA{uint8(s[0] / n), uint8(s[1] / n), uint8(s[2] / n), 255})
		}
	}
	return out
}

// TestPlan: a deadline plans as many epochs as fit at the pace so far,
// within the limit, and never fewer than were run or minPlanned.
func TestPlan(t *testing.T) {
	s := time.Second
	for _, c := range []struct {
		done, limit int
		took, left  time.Duration
		want        int
	}{
		{1, 1000, s, 100 * s, 101},
		{50, 1000, 100 * s, 100 * s, 100},         // 2 s an epoch
		{5, 10, 5 * s, 100 * s, 10},               // the limit
		{10, 1000, 10 * s, 0, minPlanned},         // no time left: the floor
		{30, 1000, 30 * s, -5 * s, 30},            // past it: stop now
		{1, 5, s, 0, 5},                           // a limit under the floor
		{1, 1000, 0, 10 * s, 1000},                // the clock has not moved
		{1, 1000, time.Nanosecond, 1 << 62, 1000}, // no overflow
	} {
		if got := plan(c.done, c.limit, c.took, c.left); got != c.want {
			t.Errorf("plan(%d, %d, %v, %v) = %d, want %d", c.done, c.limit, c.took, c.left, got, c.want)
		}
	}
}

// TestTrainToDeadline: on a clock that moves a second an epoch, a deadline
// 31 s off plans 30 of 60 epochs from the first on, runs them, and says
// the time was short; one far off runs all 60.
func TestTrainToDeadline(t *testing.T) {
	for _, c := range []struct {
		deadline time.Duration
		want     int
		limited  bool
	}{{31 * time.Second, 30, true}, {time.Hour, 60, false}} {
		t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
		calls := 0
		var plans []int
		opts := TrainOptions{Arch: toyArch, Epochs: 60, Seed: 1, Batch: 16, Deadline: t0.Add(c.deadline),
			Progress: func(p Progress) { plans = append(plans, p.Epochs) }}
		opts.now = func() time.Time { calls++; return t0.Add(time.Duration(calls) * time.Second) }
		m, err := Train(toySamples(rand.New(rand.NewPCG(1, 1))), opts)
		if err != nil {
			t.Fatal(err)
		}
		st := m.Stats()
		if st.Epochs != c.want || (st.EpochLimit > st.Epochs) != c.limited || st.EpochLimit != 60 {
			t.Errorf("deadline %v: %d epochs, time limited %v; want %d, %v", c.deadline, st.Epochs, st.EpochLimit > st.Epochs, c.want, c.limited)
		}
		for i, p := range plans {
			if p != c.want {
				t.Errorf("deadline %v: epoch %d planned %d, want %d throughout", c.deadline, i+1, p, c.want)
				break
			}
		}
	}
}

// TestLensConfidence: the mean's odds to the power 1.5, the reader's 0.9
// at a mean of 0.81, rising with the mean from 0 to 1.
func TestLensConfidence(t *testing.T) {
	for _, tc := range []struct{ m, want float64 }{{0, 0}, {0.2, 1.0 / 9}, {0.5, 0.5}, {0.8, 8.0 / 9}, {0.9, 27.0 / 28}, {1, 1}} {
		if got := lensConfidence(tc.m); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("lensConfidence(%g) = %g, want %g", tc.m, got, tc.want)
		}
	}
	prev := 0.0
	for m := 0.01; m <= 1; m += 0.01 {
		c := lensConfidence(m)
		if c < prev || c > 1 {
			t.Fatalf("lensConfidence(%g) = %g after %g", m, c, prev)
		}
		prev = c
	}
}

// TestLensLooks: through a lens a die gets eight looks, moved by lensShift
// and lensSpread along the slant and by lensSpread across it, and its
// confidence is lensConfidence of the answer's mean over them; looking
// straight on, the least of two looks.
func TestLensLooks(t *testing.T) {
	a := DefaultArch()
	a.Classes = 5
	nt, err := newNet(a)
	if err != nil {
		t.Fatal(err)
	}
	crop := image.NewRGBA(image.Rect(0, 0, 90, 90))
	r := rand.New(rand.NewPCG(3, 3))
	for i := 0; i < len(crop.Pix); i += 4 {
		crop.Pix[i], crop.Pix[i+1], crop.Pix[i+2], crop.Pix[i+3] = uint8(r.IntN(256)), uint8(r.IntN(256)), uint8(r.IntN(256)), 255
	}
	for _, lens := range []Lens{{}, {DX: 0.12, DY: -0.27, Squash: 0.6}} {
		m := &Model{arch: a, net: nt, params: nt.initParams(rand.New(rand.NewPCG(1, 1))), view: 0.6, temp: 1, lens: lens}
		m.classes = []class{{}, {"d4", 1}, {"d4", 2}, {"d4", 3}, {"d4", 4}}
		_, face, least, mean, bg := m.ClassifyLooks(crop, nil)
		c := toCanon(crop, m.canonSide())
		v0 := centreView(c, a.Size, m.view)
		th := math.Pi / float64(nt.lastW)
		turned := v0
		turned.m = [4]float64{v0.m[0] * math.Cos(th), -v0.m[0] * math.Sin(th), v0.m[0] * math.Sin(th), v0.m[0] * math.Cos(th)}
		views := []view{v0, turned}
		if lens != (Lens{}) {
			n := math.Hypot(lens.DX, lens.DY)
			ux, uy := lens.DX/n, lens.DY/n
			d := c.dieSide()
			for _, s := range [][2]float64{
				{-lensShift * ux, -lensShift * uy}, {lensShift * ux, lensShift * uy},
				{-lensSpread * ux, -lensSpread * uy}, {lensSpread * ux, lensSpread * uy},
				{lensSpread * uy, -lensSpread * ux}, {-lensSpread * uy, lensSpread * ux},
			} {
				v := v0
				v.cx += s[0] * d
				v.cy += s[1] * d
				views = append(views, v)
			}
		}
		w := m.net.newWork()
		sum := make([]float64, len(m.classes))
		low := []float64{2, 2, 2, 2, 2}
		for _, v := range views {
			for i, p := range m.probsView(c, v, w) {
				sum[i] += float64(p)
				low[i] = min(low[i], float64(p))
			}
		}
		best := 1
		for i := 2; i < len(sum); i++ {
			if sum[i] > sum[best] {
				best = i
			}
		}
		wantLeast, wantMean := low[best], sum[best]/float64(len(views))
		if lens != (Lens{}) {
			wantLeast = lensConfidence(wantMean)
			wantMean = wantLeast
		}
		near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-4*b }
		if face != best || !near(least, wantLeast) || !near(mean, wantMean) {
			t.Errorf("lens %+v: face %d least %g mean %g; want %d, %g, %g over %d looks", lens, face, least, mean, best, wantLeast, wantMean, len(views))
		}
		if want := sum[0] / float64(len(views)); !near(bg, want) {
			t.Errorf("lens %+v: background %g, want its mean %g over %d looks", lens, bg, want, len(views))
		}
	}
}

// TestHeldThreshold pins the rule for a model's own threshold: just above
// its surest wrong answer on the held-back crops, a wrong answer at
// LabelDoubt or more being taken as a wrong label.
func TestHeldThreshold(t *testing.T) {
	classes := []class{{}, {"d20", 1}, {"d20", 7}, {"d20", 16}, {"d20", 20}, {"d6", 3}}
	type read struct {
		label int // index in classes; 0: a background crop
		got   int
		conf  float64
	}
	for _, tc := range []struct {
		name  string
		reads []read
		want  HeldStats
		own   float64 // the model's own threshold
	}{
		{"none wrong", []read{{1, 1, 0.99}, {2, 2, 0.95}, {3, 3, 0.4}}, HeldStats{Read: 3, Answered: 2}, 0},
		// Session 24's combined stand-in: a "1" read as 7 at 0.966.
		{"a 1 read as 7", []read{{1, 2, 0.966}, {2, 2, 0.999}, {4, 4, 0.92}}, HeldStats{Read: 3, Answered: 3, Wrong: 1, SurestWrong: 0.966,
			WrongCrops: []HeldWrong{{"p0", "d20", 1, 7, "", 0.966}}}, 0.97},
		{"the surest wrong counts", []read{{1, 2, 0.5}, {3, 4, 0.93}, {4, 3, 0.91}}, HeldStats{Read: 3, Answered: 2, Wrong: 2, SurestWrong: 0.93,
			WrongCrops: []HeldWrong{{"p1", "d20", 16, 20, "", 0.93}, {"p2", "d20", 20, 16, "", 0.91}}}, 0.94},
		{"on a hundredth", []read{{4, 3, 0.97}}, HeldStats{Read: 1, Answered: 1, Wrong: 1, SurestWrong: 0.97,
			WrongCrops: []HeldWrong{{"p0", "d20", 20, 16, "", 0.97}}}, 0.98},
		{"unanswered wrong", []read{{4, 3, 0.62}, {1, 1, 0.95}}, HeldStats{Read: 2, Answered: 1, SurestWrong: 0.62}, 0.63},
		// A wrong label is still listed, for the owner to look at.
		{"a wrong label", []read{{3, 4, 0.995}, {1, 1, 0.95}}, HeldStats{Read: 2, Answered: 2, Wrong: 1,
			WrongCrops: []HeldWrong{{"p0", "d20", 16, 20, "", 0.995}}}, 0},
		{"highest below the doubt", []read{{3, 4, 0.9999}, {1, 2, 0.989}}, HeldStats{Read: 2, Answered: 2, Wrong: 2, SurestWrong: 0.989,
			WrongCrops: []HeldWrong{{"p0", "d20", 16, 20, "", 0.9999}, {"p1", "d20", 1, 7, "", 0.989}}}, 0.99},
		{"another kind", []read{{1, 5, 0.96}}, HeldStats{Read: 1, Answered: 1, Wrong: 1, SurestWrong: 0.96,
			WrongCrops: []HeldWrong{{"p0", "d20", 1, 3, "d6", 0.96}}}, 0.97},
		{"background skipped", []read{{0, 2, 0.97}, {1, 1, 0.97}}, HeldStats{Read: 1, Answered: 1}, 0},
		{"nothing held back", nil, HeldStats{}, 0},
	} {
		var val []item
		got := map[*canon]read{}
		for i, r := range tc.reads {
			c := &canon{}
			val = append(val, item{c: c, class: r.label, name: fmt.Sprintf("p%d", i)})
			got[c] = r
		}
		h := readBack(val, classes, func(c *canon) (class, float64) {
			r := got[c]
			return classes[r.got], r.conf
		}, maxWrongListed)
		own := ownThreshold(h)
		if !reflect.DeepEqual(h, tc.want) || own != tc.own {
			t.Errorf("%s: %+v, threshold %g; want %+v, %g", tc.name, h, own, tc.want, tc.own)
		}
	}
}

// TestTrainHoldsBackAThreshold: training with crops held back reads them
// as a reader does and keeps the threshold they give.
func TestTrainHoldsBackAThreshold(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	m, err := Train(toySamples(r), TrainOptions{Arch: toyArch, Epochs: 4, Seed: 3, Batch: 16, View: 0.85, Validation: 0.34})
	if err != nil {
		t.Fatal(err)
	}
	h := m.Stats().Held
	want := 0.0
	if h.SurestWrong > 0 {
		want = (math.Floor(h.SurestWrong*100) + 1) / 100
	}
	// One crop of each of the 7 faces is held back (3 each, a third).
	if h.Read != 7 || h.Answered > h.Read || h.Wrong > h.Answered || m.MinConfidence() != want || m.Stats().Validation != 7 {
		t.Errorf("held back %+v (validation %d), threshold %g; want 7 read and threshold %g", h, m.Stats().Validation, m.MinConfidence(), want)
	}
	// The other 14 die crops, trained on, are read back the same way.
	if tr := m.Stats().Trained; tr.Read != 14 || tr.Read != m.Stats().Samples || tr.Answered > tr.Read || tr.Wrong > tr.Answered || len(tr.WrongCrops) != tr.Wrong {
		t.Errorf("trained on, read back %+v (samples %d); want 14 read", tr, m.Stats().Samples)
	}
}

// TestLossQuantile: the cut is the q quantile of the epoch's losses; with
// none there is no cut.
func TestLossQuantile(t *testing.T) {
	if got := lossQuantile([]float64{5, 1, 3, 2, 4}, 0.97); got != 5 {
		t.Errorf("0.97 quantile of 1..5 = %g, want 5", got)
	}
	if got := lossQuantile([]float64{5, 1, 3, 2, 4}, 0.5); got != 3 {
		t.Errorf("median of 1..5 = %g, want 3", got)
	}
	if got := lossQuantile(nil, 0.97); got != 0 {
		t.Errorf("quantile of no losses = %g, want 0 (no cut)", got)
	}
}

// TestLearnLeavesHighLossOut: a die view whose loss is above the cut
// adds no gradient but counts its loss; background views always teach.
func TestLearnLeavesHighLossOut(t *testing.T) {
	nt, p := toyNet(t, 8)
	c := toCanon(pipCrop(3, 0.2, 70, green, nil), maxSide(toyArch.Size, 0.85))
	grads := func(cut float64, class int) (nonzero bool, losses int) {
		tr, s := learner(t, nt, p)
		tr.lossCut = cut
		// Seed 5's first draw is no synthetic background view.
		tr.learn(p, s, item{c: c, class: class}, rand.New(rand.NewPCG(5, 6)))
		return slices.ContainsFunc(s.grad, func(g float32) bool { return g != 0 }), len(s.losses)
	}
	if g, n := grads(0, 3); !g || n != 1 {
		t.Errorf("no cut: gradient %v, %d losses; want a gradient and 1 loss", g, n)
	}
	if g, n := grads(1e-9, 3); g || n != 1 {
		t.Errorf("a die view above the cut: gradient %v, %d losses; want none and 1 loss", g, n)
	}
	if g, n := grads(1e-9, 0); !g || n != 0 {
		t.Errorf("a background view: gradient %v, %d losses; want a gradient and no loss kept", g, n)
	}
}
