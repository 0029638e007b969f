package tower

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/towerd/towerd/clock"
	"github.com/towerd/towerd/rules"
	"github.com/towerd/towerd/sim/render"
	"github.com/towerd/towerd/sim/simcam"
	"github.com/towerd/towerd/vision"
	"github.com/towerd/towerd/vision/camera"
	"github.com/towerd/towerd/vision/numeral"
)

// simEyes are camera eyes on a simulated camera whose frames move a fake
// clock, so settling is timed by frames, not by sleeping.
func simEyes(t *testing.T, seed uint64, model vision.FaceClassifier, faults simcam.Faults) (*CameraEyes, *simcam.Camera) {
	return simEyesFaces(t, seed, model, faults, nil)
}

// simEyesFaces is simEyes whose dice show the faces face rolls.
func simEyesFaces(t *testing.T, seed uint64, model vision.FaceClassifier, faults simcam.Faults, face func(int) int) (*CameraEyes, *simcam.Camera) {
	t.Helper()
	clk := clock.NewFake(time.Unix(0, 0))
	cam := simcam.New(simcam.Config{Seed: seed, Clock: clk, Advance: clk.Advance, D6: render.D6Pips, Face: face})
	t.Cleanup(func() { cam.Close() })
	// The empty tray, as towerd calibrate keeps it, before any fault.
	empty, err := cam.Capture(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cam.SetFaults(faults)
	r, err := vision.NewReader(vision.Options{Model: model, Crop: cam.Tray(), TopDown: true, Background: empty.Image})
	if err != nil {
		t.Fatal(err)
	}
	return &CameraEyes{Source: cam, Settle: camera.SettleConfig{Clock: clk}, Reader: &VisionReader{Reader: r}, Stage: cam.Roll}, cam
}

// roll looks at one tumble of the planned dice and assigns what was seen.
func roll(t *testing.T, e *CameraEyes, planned []rules.Die) ([]int, error) {
	t.Helper()
	settled := false
	lk, err := e.Look(context.Background(), Physical(planned), func() { settled = true })
	if err != nil {
		return nil, err
	}
	if !settled {
		t.Fatal("Look returned dice without reporting the settle")
	}
	return Assign(planned, lk.Dice)
}

// TestCameraEyesReadPips: capture → settle → read on rendered pip d6,
// rolls of one to five dice on different trays: every face right.
func TestCameraEyesReadPips(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		e, cam := simEyes(t, seed, nil, simcam.Faults{})
		planned := make([]rules.Die, 1+int(seed%5))
		for i := range planned {
			planned[i] = rules.D6
		}
		got, err := roll(t, e, planned)
		if err != nil {
			t.Fatalf("seed %d: %v (truth %+v)", seed, err, cam.Truth())
		}
		if w := rulesFaces(planned, cam); !sameFaces(got, w) {
			t.Fatalf("seed %d: read %v, rolled %v", seed, got, w)
		}
	}
}

// TestCameraEyesFaults: every injected fault ends in the right error or a
// misread, never a wrong face.
func TestCameraEyesFaults(t *testing.T) {
	two := []rules.Die{rules.D6, rules.D6}
	three := []rules.Die{rules.D6, rules.D6, rules.D6}
	for _, c := range []struct {
		name    string
		faults  simcam.Faults
		planned []rules.Die
		check   func(err error) bool
	}{
		{"die off the tray", simcam.Faults{OffTray: true}, three, isMisread},
		{"dark frame", simcam.Faults{Dark: true}, two, isMisread},
		{"frozen camera", simcam.Faults{Frozen: true}, two, func(err error) bool { return errors.Is(err, ErrHardware) }},
		{"unplugged", simcam.Faults{FailAfter: 3}, two, func(err error) bool { return errors.Is(err, ErrHardware) }},
		{"empty frames", simcam.Faults{Empty: true}, two, func(err error) bool { return errors.Is(err, ErrHardware) }},
		// A die creeping too slowly to show between frames: the settle
		// times out, or the still frames disagree.
		{"creeping die", simcam.Faults{Creep: 100000}, two, func(err error) bool { return errors.Is(err, ErrSettle) || isMisread(err) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, cam := simEyes(t, 3, nil, c.faults)
			got, err := roll(t, e, c.planned)
			if !c.check(err) {
				t.Fatalf("read %v, err %v (truth %+v)", got, err, cam.Truth())
			}
		})
	}
	// A d6 leaning on the wall, whatever face it shows most of, counted by
	// its pips or read by a model enrolled with d6.
	for _, m := range []vision.FaceClassifier{nil, renderedModel(t)} {
		for face := 1; face <= 6; face++ {
			e, cam := simEyesFaces(t, 3, m, simcam.Faults{Cocked: true}, func(int) int { return face })
			if got, err := roll(t, e, []rules.Die{rules.D6, rules.D20}); !isMisread(err) {
				t.Errorf("model %v: cocked d6 showing %d: read %v, err %v (truth %+v)", m != nil, face, got, err, cam.Truth())
			}
		}
	}
	// Two dice touching are either read right or not at all.
	for seed := uint64(1); seed <= 4; seed++ {
		e, cam := simEyes(t, seed, nil, simcam.Faults{Touching: true})
		got, err := roll(t, e, two)
		if err != nil {
			if !isMisread(err) {
				t.Fatalf("touching, seed %d: %v", seed, err)
			}
			continue
		}
		if w := rulesFaces(two, cam); !sameFaces(got, w) {
			t.Fatalf("touching, seed %d: read %v, rolled %v", seed, got, w)
		}
	}
}

func isMisread(err error) bool {
	var m *Misread
	return errors.As(err, &m)
}

// renderedModel is the model enrolled on rendered dice (see
// testdata/README.md for how it is made).
func renderedModel(t *testing.T) *numeral.Model {
	t.Helper()
	m, err := numeral.Load(filepath.Join("testdata", "rendered-dice.model"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestCameraEyesReadEveryKind: capture → settle → read of every kind and of
// mixed rolls, numbered dice read by a model enrolled on rendered dice: no
// face is ever wrong, and nearly every roll is read at the first look.
func TestCameraEyesReadEveryKind(t *testing.T) {
	m := renderedModel(t)
	rolls := [][]rules.Die{
		{rules.D4}, {rules.D6}, {rules.D8}, {rules.D10}, {rules.D12}, {rules.D20}, {rules.D100},
		{rules.D6, rules.D20, rules.D8}, {rules.D100, rules.D6}, {rules.D4, rules.D10, rules.D12, rules.D20},
		{rules.D20, rules.D20}, {rules.D6, rules.D6, rules.D12},
	}
	read, misread := 0, 0
	for seed := uint64(1); seed <= 3; seed++ {
		for i, planned := range rolls {
			e, cam := simEyes(t, seed*100+uint64(i), m, simcam.Faults{})
			got, err := roll(t, e, planned)
			if err != nil {
				if !isMisread(err) {
					t.Fatalf("seed %d roll %v: %v", seed, planned, err)
				}
				misread++
				t.Logf("seed %d roll %v: %v (truth %+v)", seed, planned, err, cam.Truth())
				continue
			}
			if w := rulesFaces(planned, cam); !sameFaces(got, w) {
				t.Errorf("seed %d roll %v: read %v, rolled %v", seed, planned, got, w)
			}
			read++
		}
	}
	t.Logf("%d rolls read, %d misread", read, misread)
	// A misread only tumbles again; the bound catches a reader that
	// stopped reading, with room for a retrained model or another CPU.
	if misread > (read+misread)/6 {
		t.Errorf("%d of %d rolls misread", misread, read+misread)
	}
}

// rulesFaces is what the simulated dice of planned show as rules faces: a
// d10 showing 0 is 10, a percentile die and its d10 make 1–100.
func rulesFaces(planned []rules.Die, cam *simcam.Camera) []int {
	tr := cam.Truth()
	seen := make([]Seen, len(tr))
	for i, d := range tr {
		f := d.Face
		seen[i] = Seen{Die: d.Kind, Face: &f, Confidence: 1, Box: d.Box}
	}
	out, err := Assign(planned, seen)
	if err != nil {
		panic(err)
	}
	return out
}

// sameFaces compares faces whatever their order.
func sameFaces(a, b []int) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// TestCameraEyesCockedNumbered: a numbered die leaning on the tray's wall,
// seen by the simulated camera and read by the rendered model, is left
// unread (cocked), not answered. The camera looks straight down, so a
// d6, d8, d12 or d20 whose up face is foreshortened, or a d10 whose kite's
// diagonals are not square, leans (vision/lean.go). A d4 shows a point, not
// a face, and is not judged: its rolls are only counted. TOWERD_LONG=1
// runs it (60 rolls).
func TestCameraEyesCockedNumbered(t *testing.T) {
	if os.Getenv("TOWERD_LONG") == "" {
		t.Skip("set TOWERD_LONG=1 to measure cocked numbered dice on the simulated camera")
	}
	m := renderedModel(t)
	answered, d4, misread := 0, 0, 0
	for _, k := range []rules.Die{rules.D4, rules.D8, rules.D10, rules.D12, rules.D20, rules.D100} {
		for seed := uint64(1); seed <= 10; seed++ {
			e, cam := simEyes(t, seed, m, simcam.Faults{Cocked: true})
			got, err := roll(t, e, []rules.Die{k, rules.D6})
			switch {
			case isMisread(err):
				misread++
			case err == nil && k == rules.D4:
				d4++
			case err == nil:
				answered++
				t.Errorf("%s seed %d: the cocked die answered, roll read %v (truth %+v)", k, seed, got, cam.Truth()[0])
			default:
				t.Fatalf("%s seed %d: %v", k, seed, err)
			}
		}
	}
	t.Logf("cocked numbered dice: %d of 50 d8–d100 answered, %d of 10 d4, %d misread", answered, d4, misread)
}
