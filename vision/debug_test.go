package vision

import (
	"fmt"
	"image"
	"image/color"
	_ "image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/towerd/towerd/vision/dataset"
)

// TestDebugDump writes annotated photos with every pip candidate marked
// when TOWERD_VISION_DEBUG names a folder; TOWERD_VISION_FILES limits the
// photos (comma-separated, substrings of the file names);
// TOWERD_VISION_SET names another labelled set than matteop65-d6.
func TestDebugDump(t *testing.T) {
	dir := os.Getenv("TOWERD_VISION_DEBUG")
	if dir == "" {
		t.Skip("set TOWERD_VISION_DEBUG=DIR to write annotated photos")
	}
	setDir := os.Getenv("TOWERD_VISION_SET")
	if setDir == "" {
		setDir = datasetDir(t, "matteop65-d6")
	}
	set, err := dataset.Load(setDir)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(os.Getenv("TOWERD_VISION_FILES"), ",")
	r, _ := NewReader(Options{})
	for _, f := range set.Files {
		match := false
		for _, w := range want {
			if strings.Contains(f, w) {
				match = true
			}
		}
		if !match {
			continue
		}
		img := mustDecode(t, set.Path(f))
		g, err := newGrayAt(img, minWorkSide)
		if err != nil {
			t.Fatal(err)
		}
		dice, ps, odd := readPips(g)
		for _, pd := range odd {
			t.Logf("%s odd n=%d fore=%.2f at %v null=%v cocked=%v", f, pd.f.n, pd.f.fore, g.toPhoto(pd.f.box()), pd.null, pd.cocked)
		}
		out := Annotate(img, nil).(*image.RGBA)
		for _, p := range ps {
			col := color.RGBA{0, 0, 255, 255}
			if p.ok {
				col = color.RGBA{255, 0, 255, 255}
			}
			pt := g.toPhotoPt(p.x, p.y)
			out.SetRGBA(pt.X, pt.Y, col)
			out.SetRGBA(pt.X+1, pt.Y, col)
			t.Logf("%s pip %.0f,%.0f r=%.1f el=%.2f core=%.0f ring=%.0f low=%.0f area=%d ok=%v light=%v", f, p.x, p.y, p.r, p.elong, p.core, p.ring, p.ringLow, p.area, p.ok, p.light)
		}
		var ds []Die
		for _, pd := range dice {
			d := r.pipDie(g, pd, ps)
			ds = append(ds, d)
			t.Logf("%s face n=%d fore=%.2f resid=%.2f pipR=%.2f q=%.2f null=%v cocked=%v", f, pd.f.n, pd.f.fore, pd.f.resid, pd.f.pipR, pd.f.q, pd.null, pd.cocked)
			if pd.f.n == 2 {
				a, b := &ps[pd.f.pips[0]], &ps[pd.f.pips[1]]
				t.Logf("%s two alike=%.2f r=%.1f/%.1f el=%.2f/%.2f at %v", f, alike(a, b), a.r, b.r, a.elong, b.elong, d.Box)
			}
		}
		for _, l := range set.Labels[f] {
			line(out, l.Box.Min, image.Pt(l.Box.Max.X, l.Box.Min.Y), color.RGBA{0, 255, 255, 255})
			label(out, Die{Kind: "L", Face: intp(l.Face), Box: image.Rect(l.Box.Min.X, l.Box.Max.Y+16, l.Box.Max.X, l.Box.Max.Y+20)}, color.RGBA{0, 255, 255, 255})
		}
		annotated := Annotate(out, ds)
		name := filepath.Join(dir, strings.ReplaceAll(strings.TrimSuffix(f, filepath.Ext(f)), "/", "_")+".png")
		w, err := os.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := png.Encode(w, annotated); err != nil {
			t.Fatal(err)
		}
		w.Close()
		fmt.Println("wrote", name)
	}
}

// datasetDir returns ../shared/datasets/NAME beside the repository, or
// skips the test when it is absent.
func datasetDir(t testing.TB, name string) string {
	dir := filepath.Join("..", "..", "shared", "datasets", name)
	if _, err := os.Stat(filepath.Join(dir, "labels.csv")); err != nil {
		t.Skipf("dataset %s not present at %s (it lives beside the repository, not in it): %v", name, dir, err)
	}
	return dir
}

func mustDecode(t testing.TB, path string) image.Image {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, _, err := image.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return img
}
