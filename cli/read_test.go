package cli

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/towerd/towerd/rules"
	"github.com/towerd/towerd/sim/render"
	"github.com/towerd/towerd/vision"
	"github.com/towerd/towerd/vision/numeral"
)

// renderSet writes a rendered dataset of o into a temporary folder.
func renderSet(t *testing.T, o render.DatasetOptions) string {
	t.Helper()
	dir := t.TempDir()
	if err := render.WriteDataset(dir, o); err != nil {
		t.Fatal(err)
	}
	return dir
}

// writeRenderedSet writes n rendered photos of two pip d6 and their
// labels.csv into a temporary dataset folder.
func writeRenderedSet(t *testing.T, n int) string {
	return renderSet(t, render.DatasetOptions{Photos: n, Seed: 1, Kinds: []rules.Die{rules.D6},
		D6: render.D6Pips, MinDice: 2, MaxDice: 2, Width: 320, Height: 240})
}

// TestRenderCommand: towerd render writes a set that eval reads; bad
// flags exit 2.
func TestRenderCommand(t *testing.T) {
	dir := t.TempDir()
	code, out, errs := runTowerd(t, "", "render", "--photos", "2", "--dice", "d6", "--one-tray", dir)
	if code != 0 || !strings.Contains(out, "rendered 2 photos") {
		t.Fatalf("exit %d: %s %s", code, out, errs)
	}
	if code, out, errs := runTowerd(t, "", "eval", "--json", "--dice", "d6", dir); code != 0 || !strings.Contains(out, `"precision"`) {
		t.Fatalf("eval of the rendered set: exit %d: %s %s", code, out, errs)
	}
	for _, args := range [][]string{{"render"}, {"render", "--d6", "dots", dir}, {"render", "--dice", "d7", dir}, {"render", "--photos", "0", dir}} {
		if code, _, _ := runTowerd(t, "", args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}

// addCorruptFrame adds images/cut.jpg, a JPEG cut short as a camera's log
// holds a few, to the dataset in dir with one die ("d6,3") and no box.
func addCorruptFrame(t *testing.T, dir, die string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "images", "cut.jpg"), []byte("\xff\xd8\xff\xe0 cut short"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "labels.csv"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := fmt.Fprintf(f, "images/cut.jpg,%s,,,,\n", die); err != nil {
		t.Fatal(err)
	}
}

// TestEnrollWeakModel: a model trained for one epoch reads its dice
// poorly: by default it is written with a warning (it answers only what it
// is sure of), with --min-accuracy it is refused unless forced. A corrupt
// frame among the photos is left out and counted, not fatal.
func TestEnrollWeakModel(t *testing.T) {
	dir := renderSet(t, render.DatasetOptions{Photos: 3, Seed: 2, Kinds: []rules.Die{rules.D8, rules.D20}, Width: 320, Height: 240})
	addCorruptFrame(t, dir, "d20,7")

	model := filepath.Join(t.TempDir(), "m")
	code, out, errs := runTowerd(t, "", "enroll", "--epochs", "1", "--min-accuracy", "0.95", "--out", model, dir)
	if code != 1 || !strings.Contains(errs, "not written") {
		t.Fatalf("weak model with --min-accuracy: exit %d, %s %s", code, out, errs)
	}
	if _, err := os.Stat(model); err == nil {
		t.Fatal("a refused model was written")
	}
	if !strings.Contains(out, "left out 1 photos") || !strings.Contains(out, "cut.jpg") {
		t.Errorf("enroll does not report the corrupt frame it left out:\n%s", out)
	}
	code, out, errs = runTowerd(t, "", "enroll", "--epochs", "1", "--out", model, dir)
	if code != 0 || !strings.Contains(out, "enrolled "+model) || !strings.Contains(out, "warning: below 0.95") {
		t.Fatalf("weak model by default: exit %d, %s %s", code, out, errs)
	}
	code, out, errs = runTowerd(t, "", "enroll", "--epochs", "1", "--min-accuracy", "0.95", "--force", "--out", model, dir)
	if code != 0 || !strings.Contains(out, "enrolled "+model) {
		t.Fatalf("forced: exit %d, %s %s", code, out, errs)
	}
	// Three photos are too few to learn the tray from, and enrolment says so.
	if !strings.Contains(out, "scene: none learnt: 3 photos") {
		t.Errorf("enroll output does not say why no scene was learnt:\n%s", out)
	}
	if code, out, errs := runTowerd(t, "", "read", "--model", model, filepath.Join(dir, "images", "tray-0000.png")); code != 0 {
		t.Fatalf("read with the forced model: exit %d, %s %s", code, out, errs)
	}
}

// TestReadJSONContract: one line per file as the contract says, an error
// line for a file that is not a photo, and exit 1 at the end.
func TestReadJSONContract(t *testing.T) {
	dir := writeRenderedSet(t, 1)
	bad := filepath.Join(dir, "not-a-photo.jpg")
	if err := os.WriteFile(bad, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "images", "tray-0000.png")
	code, out, _ := runTowerd(t, "", "read", "--json", "--dice", "d6", good, bad)
	if code != 1 {
		t.Errorf("exit %d, want 1 for the undecodable file", code)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 lines, got %q", out)
	}
	var first struct {
		File string `json:"file"`
		Dice []struct {
			Die        *string  `json:"die"`
			Face       *int     `json:"face"`
			Confidence *float64 `json:"confidence"`
			Box        []int    `json:"box"`
		} `json:"dice"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || first.File != good || first.Dice == nil {
		t.Fatalf("first line %q: %v", lines[0], err)
	}
	for _, d := range first.Dice {
		if d.Confidence == nil || len(d.Box) != 4 || (d.Die != nil && *d.Die != "d6") {
			t.Errorf("die %+v breaks the contract", d)
		}
	}
	var second map[string]any
	if err := json.Unmarshal([]byte(lines[1]), &second); err != nil || second["file"] != bad || second["error"] == nil {
		t.Errorf("second line %q: want an error for %s", lines[1], bad)
	}
}

func TestReadFlagErrorsExit2(t *testing.T) {
	if code, _, _ := runTowerd(t, "", "read"); code != 2 {
		t.Errorf("read without files: exit %d", code)
	}
	if code, _, _ := runTowerd(t, "", "read", "--dice", "d7", "x.png"); code != 2 {
		t.Errorf("read --dice d7: exit %d", code)
	}
	if code, _, _ := runTowerd(t, "", "read", "--model", "/nonexistent/model", "x.png"); code != 2 {
		t.Errorf("read --model missing: exit %d", code)
	}
	if code, _, _ := runTowerd(t, "", "enroll", "somewhere"); code != 2 {
		t.Errorf("enroll without --out: exit %d", code)
	}
	if code, _, _ := runTowerd(t, "", "enroll", "--max-time", "-1s", "--out", filepath.Join(t.TempDir(), "m"), t.TempDir()); code != 2 {
		t.Errorf("enroll --max-time -1s: exit %d", code)
	}
	if code, _, _ := runTowerd(t, "", "enroll", "--out", filepath.Join(t.TempDir(), "m"), t.TempDir()); code != 2 {
		t.Errorf("enroll of a folder without labels.csv: exit %d", code)
	}
}

// TestEvalReportsPrecisionAndRecall scores a small rendered dataset.
func TestEvalReportsPrecisionAndRecall(t *testing.T) {
	dir := writeRenderedSet(t, 2)
	code, out, errs := runTowerd(t, "", "eval", "--json", "--dice", "d6", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("not JSON: %q", out)
	}
	for _, k := range []string{"precision", "recall", "ms_per_photo"} {
		if _, ok := rep[k].(float64); !ok {
			t.Errorf("report lacks %s: %s", k, out)
		}
	}
	code, out, _ = runTowerd(t, "", "eval", dir)
	if code != 0 || !strings.Contains(strings.ToLower(out), "precision") {
		t.Errorf("text report (exit %d): %q", code, out)
	}

	// A corrupt frame is a photo the reader could not read: its die counts
	// as not read (recall), the rest is scored, and eval succeeds.
	addCorruptFrame(t, dir, "d6,3")
	code, out, errs = runTowerd(t, "", "eval", "--json", "--dice", "d6", dir)
	var withCut struct {
		Dice        int `json:"dice"`
		PhotoErrors int `json:"photo_errors"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &withCut) != nil || withCut.PhotoErrors != 1 {
		t.Fatalf("with a corrupt frame: exit %d, %q %s", code, out, errs)
	}
	if before, _ := rep["dice"].(float64); withCut.Dice != int(before)+1 {
		t.Errorf("the corrupt frame's die is not counted: %v dice before, now %q", rep["dice"], out)
	}
}

// TestEnrollLearnsTheTray: photos of one tray (as a tower's camera takes
// them) teach enrolment the empty tray, which the model carries to eval.
func TestEnrollLearnsTheTray(t *testing.T) {
	dir := renderSet(t, render.DatasetOptions{Photos: 24, Seed: 4, Kinds: []rules.Die{rules.D8}, MinDice: 1, MaxDice: 3, Width: 320, Height: 240, OneTray: true})
	model := filepath.Join(t.TempDir(), "m")
	code, out, errs := runTowerd(t, "", "enroll", "--epochs", "1", "--force", "--out", model, dir)
	if code != 0 || !strings.Contains(out, "scene: the empty tray learnt from 24 photos of 320x240") {
		t.Fatalf("enroll: exit %d: %s %s", code, out, errs)
	}
	if !strings.Contains(out, "lens: none: ") {
		t.Errorf("enroll of a few dice should not look for a camera's slant: %s", out)
	}
	// With a tray learnt, the box fix for dice found alone is not kept
	// (the scene carries its own), and the dice's sizes in the view are.
	m, err := numeral.Load(model)
	if err != nil {
		t.Fatal(err)
	}
	if m.BoxFix() != nil || len(m.Sizes()) == 0 || len(m.Scene()) == 0 {
		t.Errorf("model with a learnt tray: box fix %v, sizes %s, scene %d bytes; want no fix, sizes, a scene", m.BoxFix(), m.Sizes(), len(m.Scene()))
	}
	if code, out, errs := runTowerd(t, "", "eval", "--json", "--model", model, dir); code != 0 || !strings.Contains(out, `"precision"`) {
		t.Fatalf("eval with the model and its tray: exit %d: %s %s", code, out, errs)
	}
}

// TestModelsOwnThreshold: enroll reads the held-back crops as a photo's
// dice are read and reports the model's own threshold; eval says which
// threshold its faces needed, the model's where it is above the one asked.
func TestModelsOwnThreshold(t *testing.T) {
	// About 15 crops of each d4 face: one of each is held back.
	dir := renderSet(t, render.DatasetOptions{Photos: 30, Seed: 5, Kinds: []rules.Die{rules.D4}, MinDice: 1, MaxDice: 3, Width: 320, Height: 240})
	model := filepath.Join(t.TempDir(), "m")
	code, out, errs := runTowerd(t, "", "enroll", "--epochs", "1", "--force", "--lens=false", "--out", model, dir)
	if code != 0 {
		t.Fatalf("enroll: exit %d: %s %s", code, out, errs)
	}
	m, err := numeral.Load(model)
	if err != nil {
		t.Fatal(err)
	}
	h := m.Stats().Held
	want := fmt.Sprintf("held back, read as a photo's dice are read: %d of %d answered at 0.90 or more, %d of them wrong", h.Answered, h.Read, h.Wrong)
	switch mc := m.MinConfidence(); {
	case mc > 0.9:
		want += fmt.Sprintf("; the surest wrong answer below 0.99 was at %.3f, so the model's faces need %.2f or more", h.SurestWrong, mc)
	case mc > 0:
		want += fmt.Sprintf("; the surest wrong answer was at %.3f: a threshold set below %.2f is raised to it", h.SurestWrong, mc)
	default:
		want += "; none below 0.99 wrong"
	}
	if h.Read < 4 || !strings.Contains(out, want) {
		t.Errorf("enroll output lacks %q:\n%s", want, out)
	}
	for _, w := range h.WrongCrops {
		if line := fmt.Sprintf("%s labelled d4 %d, read d4 %d", w.Name, w.Face, w.Read); !strings.Contains(out, line) {
			t.Errorf("enroll output does not list the held-back crop read wrongly %q:\n%s", line, out)
		}
	}
	// The die crops trained on, read back the same way (and any read as
	// another face listed).
	tr := m.Stats().Trained
	want = fmt.Sprintf("trained on, read back as a photo's dice are read: %d of %d answered at 0.90 or more, %d of them as another face", tr.Answered, tr.Read, tr.Wrong)
	if tr.Read != m.Stats().Samples || !strings.Contains(out, want) {
		t.Errorf("training crops read back: %d of %d die crops trained on; enroll output lacks %q:\n%s", tr.Read, m.Stats().Samples, want, out)
	}
	for _, w := range tr.WrongCrops {
		if line := fmt.Sprintf("%s labelled d4 %d, read d4 %d", w.Name, w.Face, w.Read); !strings.Contains(out, line) {
			t.Errorf("enroll output does not list the training crop read as another face %q:\n%s", line, out)
		}
	}

	// The same model with its own threshold at 0.97 (as a weak one has).
	own := filepath.Join(t.TempDir(), "own")
	setModelField(t, model, own, "min_confidence", 0.97)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "faces answered at confidence 0.97 or more: the model's own threshold, above the 0.90 asked"},
		{[]string{"--min-confidence", "0.95"}, "faces answered at confidence 0.97 or more: the model's own threshold, above the 0.95 asked"},
		{[]string{"--min-confidence", "0.99"}, "faces answered at confidence 0.99 or more\n"},
		{[]string{"--json"}, `"min_confidence":0.97`},
	} {
		args := append(append([]string{"eval", "--model", own}, tc.args...), dir)
		if code, out, errs := runTowerd(t, "", args...); code != 0 || !strings.Contains(out, tc.want) {
			t.Errorf("eval %v: exit %d, output lacks %q:\n%s %s", tc.args, code, tc.want, out, errs)
		}
	}
}

// TestHeldWrongLine: enroll names the held-back crops read wrongly, with
// the kind read when it is another, and counts those past the list; the
// crops trained on and read as another face, one a line.
func TestHeldWrongLine(t *testing.T) {
	h := numeral.HeldStats{Wrong: 3, WrongCrops: []numeral.HeldWrong{
		{Name: "images/roll-0548.jpg:550", Die: "d20", Face: 1, Read: 3, Confidence: 0.9993},
		{Name: "images/roll-0012.jpg:14", Die: "d8", Face: 2, Read: 4, ReadDie: "d10", Confidence: 0.93},
	}}
	want := "held back and read wrongly (check these labels: a wrong one is learnt too): " +
		"images/roll-0548.jpg:550 labelled d20 1, read d20 3 (1.00); images/roll-0012.jpg:14 labelled d8 2, read d10 4 (0.93); 1 more"
	if got := heldWrongLine("held back and read wrongly (check these labels: a wrong one is learnt too)", h); got != want {
		t.Errorf("heldWrongLine:\n got %q\nwant %q", got, want)
	}
	want = "trained on and read as another face:\n  " +
		"images/roll-0548.jpg:550 labelled d20 1, read d20 3 (1.00)\n  images/roll-0012.jpg:14 labelled d8 2, read d10 4 (0.93)\n  1 more"
	if got := heldWrongLines("trained on and read as another face", h); got != want {
		t.Errorf("heldWrongLines:\n got %q\nwant %q", got, want)
	}
}

// setModelField writes to dst the model file src with one top-level field
// set, as a later enrolment might have written it.
func setModelField(t *testing.T, src, dst, field string, v any) {
	t.Helper()
	raw, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	var f map[string]any
	if err := json.NewDecoder(zr).Decode(&f); err != nil {
		t.Fatal(err)
	}
	f[field] = v
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	zw := gzip.NewWriter(&out)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestEnrollKeepsToMaxTime: a time limit already spent when training
// starts still trains the fewest epochs a limit plans (20 of 25 here), and
// enroll says the limit cut training short.
func TestEnrollKeepsToMaxTime(t *testing.T) {
	dir := renderSet(t, render.DatasetOptions{Photos: 6, Seed: 4, Kinds: []rules.Die{rules.D8}, MinDice: 1, MaxDice: 2, Width: 320, Height: 240})
	model := filepath.Join(t.TempDir(), "m")
	code, out, errs := runTowerd(t, "", "enroll", "--epochs", "25", "--max-time", "1ns", "--force", "--out", model, dir)
	if code != 0 || !strings.Contains(out, "time: --max-time 1ns left time for 20 of 25 epochs") {
		t.Fatalf("enroll: exit %d: %s %s", code, out, errs)
	}
	m, err := numeral.Load(model)
	if err != nil {
		t.Fatal(err)
	}
	if st := m.Stats(); st.Epochs != 20 || st.EpochLimit != 25 {
		t.Errorf("model stats: %d epochs of %d, want 20 of 25", st.Epochs, st.EpochLimit)
	}
}

// TestEnrollLocatesUnboxedDice: labels that give only the face (a
// roller's log) are enrolled from the dice located in the learnt tray,
// not from whole photos; their boxes tell the dice's sizes in the view.
func TestEnrollLocatesUnboxedDice(t *testing.T) {
	dir := renderSet(t, render.DatasetOptions{Photos: 32, Seed: 5, Kinds: []rules.Die{rules.D20}, MinDice: 1, MaxDice: 1, Width: 320, Height: 240, OneTray: true})
	csv, err := os.ReadFile(filepath.Join(dir, "labels.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(csv)), "\n")
	for i := 1; i < len(lines); i++ {
		f := strings.Split(lines[i], ",")
		lines[i] = strings.Join(f[:3], ",") + ",,,,"
	}
	if err := os.WriteFile(filepath.Join(dir, "labels.csv"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(t.TempDir(), "m")
	code, out, errs := runTowerd(t, "", "enroll", "--epochs", "1", "--force", "--lens=false", "--out", model, dir)
	if code != 0 || !strings.Contains(out, "located 32 of 32 dice without a box") {
		t.Fatalf("enroll: exit %d: %s %s", code, out, errs)
	}
	if strings.Contains(out, "lens:") {
		t.Errorf("enroll --lens=false looked for a slant: %s", out)
	}
	if !strings.Contains(out, "trained: 32 die crops, ") {
		t.Errorf("enroll should train on the 32 located dice: %s", out)
	}
	if !strings.Contains(out, "sharpness: a die blurrier than ") || !strings.Contains(out, "must be read 10 times as surely (0.99 for 0.9)") {
		t.Errorf("enroll should tell the least sharpness read and the band below the training dice's: %s", out)
	}
	if !strings.Contains(out, "sizes: located dice in the 320x240 view lie d20 ") {
		t.Errorf("enroll should tell the located dice's sizes: %s", out)
	}
	m, err := numeral.Load(model)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(m.Sizes()), `"d20"`) {
		t.Errorf("model sizes %s, want the located d20's", m.Sizes())
	}
	if m.MinSharpness() <= 0 {
		t.Errorf("model least sharpness %g, want above 0", m.MinSharpness())
	}
}

// TestEnrollCloseUpsWithoutBoxes: close-ups of one die (the die fills the
// photo) without boxes are taken whole, as before dice were located.
func TestEnrollCloseUpsWithoutBoxes(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "images"), 0o755); err != nil {
		t.Fatal(err)
	}
	csv := "file,die,face,x,y,w,h\n"
	for i := range 6 {
		img, _ := render.MustRender(render.Scene{Width: 120, Height: 120, Tray: image.Rect(0, 0, 120, 120), Seed: uint64(i),
			Dice: []render.Die{{Kind: rules.D8, Face: 1 + i, X: 60, Y: 60, Size: 104, Angle: float64(i)}}})
		name := fmt.Sprintf("images/close-%d.png", i)
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := png.Encode(f, img); err != nil {
			t.Fatal(err)
		}
		f.Close()
		csv += fmt.Sprintf("%s,d8,%d,,,,\n", name, 1+i)
	}
	if err := os.WriteFile(filepath.Join(dir, "labels.csv"), []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runTowerd(t, "", "enroll", "--epochs", "1", "--force", "--out", filepath.Join(t.TempDir(), "m"), dir)
	if code != 0 || !strings.Contains(out, "taking each such photo whole") || !strings.Contains(out, "trained: 6 die crops") {
		t.Fatalf("enroll: exit %d: %s %s", code, out, errs)
	}
}

// TestSlantNear: a fit that kept no lens still has short runs try slants
// when its best slant came close to straight on (the 30° stand-in: 0.286
// against 0.296), and not for a camera clearly looking down (0.150
// against 0.570).
func TestSlantNear(t *testing.T) {
	if !slantNear(numeral.LensFit{Straight: 0.296, Best: 0.286}) {
		t.Error("the 30° stand-in's fit: no short runs")
	}
	if slantNear(numeral.LensFit{Straight: 0.570, Best: 0.150}) {
		t.Error("a camera looking down: short runs")
	}
}

// TestSlantShown: a lens is looked for in photos of one view, with a tray
// learnt or without one where each photo alone finds nine in ten of the
// dice (a popper's die resting near one spot); not where the photos alone
// find fewer (a light die on a light floor), nor in photos of no one view.
func TestSlantShown(t *testing.T) {
	view := image.Pt(640, 480)
	for _, tc := range []struct {
		name  string
		scene bool
		rep   vision.SceneReport
		want  bool
	}{
		{"a tray learnt", true, vision.SceneReport{View: view, Dice: 120, FoundAlone: 38}, true},
		{"near one spot", false, vision.SceneReport{View: view, Dice: 120, FoundAlone: 119, InventedAlone: 5}, true},
		{"nine in ten alone", false, vision.SceneReport{View: view, Dice: 120, FoundAlone: 108}, true},
		{"light on light", false, vision.SceneReport{View: view, Dice: 120, FoundAlone: 68}, false},
		{"no one view", false, vision.SceneReport{Dice: 120, FoundAlone: 120}, false},
	} {
		var s *vision.Scene
		if tc.scene {
			s = &vision.Scene{}
		}
		if got := slantShown(s, tc.rep); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
