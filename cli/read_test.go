package cli

import (
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/towerd/towerd/rules"
	"github.com/towerd/towerd/sim/render"
)

// writeRenderedSet writes n rendered photos of two pip d6 and their
// labels.csv into a temporary dataset folder.
func writeRenderedSet(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "images"), 0o755); err != nil {
		t.Fatal(err)
	}
	var labels strings.Builder
	labels.WriteString("file,die,face,x,y,w,h\n")
	for i := 0; i < n; i++ {
		img, truth := render.MustRender(render.RandomScene(uint64(i+1), []rules.Die{rules.D6, rules.D6},
			render.Options{D6: render.D6Pips, Width: 320, Height: 240}))
		name := fmt.Sprintf("images/p%d.png", i)
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := png.Encode(f, img); err != nil {
			t.Fatal(err)
		}
		f.Close()
		for _, tr := range truth {
			b := tr.Box
			fmt.Fprintf(&labels, "%s,%s,%d,%d,%d,%d,%d\n", name, tr.Kind, tr.Face, b.Min.X, b.Min.Y, b.Dx(), b.Dy())
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "labels.csv"), []byte(labels.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestReadJSONContract: one line per file as the contract says, an error
// line for a file that is not a photo, and exit 1 at the end.
func TestReadJSONContract(t *testing.T) {
	dir := writeRenderedSet(t, 1)
	bad := filepath.Join(dir, "not-a-photo.jpg")
	if err := os.WriteFile(bad, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "images", "p0.png")
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
}
