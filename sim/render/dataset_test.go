package render_test

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/towerd/towerd/rules"
	"github.com/towerd/towerd/sim/render"
	"github.com/towerd/towerd/vision/numeral"
)

// TestWriteDataset: the set is in the dataset format (every row's photo
// exists, its box inside it), only the asked kinds, and the same options
// give the same labels.
func TestWriteDataset(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	o := render.DatasetOptions{Photos: 3, Seed: 9, Kinds: []rules.Die{rules.D8, rules.D20}, Width: 320, Height: 240}
	for _, dir := range []string{a, b} {
		if err := render.WriteDataset(dir, o); err != nil {
			t.Fatal(err)
		}
	}
	la, _ := os.ReadFile(filepath.Join(a, "labels.csv"))
	lb, _ := os.ReadFile(filepath.Join(b, "labels.csv"))
	if !bytes.Equal(la, lb) {
		t.Fatalf("same options, different labels:\n%s\n%s", la, lb)
	}
	labels, err := numeral.ParseLabels(bytes.NewReader(la))
	if err != nil {
		t.Fatal(err)
	}
	if len(labels) < 3*3 {
		t.Fatalf("%d labelled dice in 3 photos of 3–6 dice", len(labels))
	}
	for _, l := range labels {
		if l.Die != "d8" && l.Die != "d20" {
			t.Errorf("line %d: %s, asked for d8 and d20 only", l.Line, l.Die)
		}
		if !l.HasBox || l.Box.Min.X < 0 || l.Box.Max.X > 320 || l.Box.Max.Y > 240 {
			t.Errorf("line %d: box %v", l.Line, l.Box)
		}
		if _, err := os.Stat(filepath.Join(a, l.File)); err != nil {
			t.Error(err)
		}
	}
	// DatasetScenes gives the scene of each photo: photo 2 drawn again is
	// the file.
	scenes, err := render.DatasetScenes(o)
	if err != nil || len(scenes) != 3 {
		t.Fatalf("DatasetScenes: %d scenes, %v", len(scenes), err)
	}
	img, _ := render.MustRender(scenes[2])
	file := readPNG(t, filepath.Join(a, "images", "tray-0002.png"))
	for y := 0; y < 240; y += 7 {
		for x := 0; x < 320; x += 7 {
			if img.At(x, y) != file.At(x, y) {
				t.Fatalf("photo 2 drawn again differs at (%d,%d): %v, file %v", x, y, img.At(x, y), file.At(x, y))
			}
		}
	}
	samples, err := numeral.LoadDataset(a, numeral.DatasetOptions{Background: -1})
	if err != nil || len(samples) != len(labels) {
		t.Fatalf("LoadDataset: %d samples, %v", len(samples), err)
	}
	for _, bad := range []render.DatasetOptions{{Photos: -1}, {MinDice: 5, MaxDice: 2}, {Kinds: []rules.Die{7}}} {
		if err := render.WriteDataset(t.TempDir(), bad); err == nil {
			t.Errorf("%+v: no error", bad)
		}
		if _, err := render.DatasetScenes(bad); err == nil {
			t.Errorf("DatasetScenes %+v: no error", bad)
		}
	}
}

// TestWriteDatasetOneTray: with OneTray every photo shows the same tray
// (the felt at a spot no die covers differs only by noise), as a tower's
// camera sees it; without it the trays differ.
func TestWriteDatasetOneTray(t *testing.T) {
	spread := func(one bool) int {
		dir := t.TempDir()
		o := render.DatasetOptions{Photos: 6, Seed: 4, Kinds: []rules.Die{rules.D8}, MinDice: 1, MaxDice: 1, Width: 160, Height: 120, OneTray: one}
		if err := render.WriteDataset(dir, o); err != nil {
			t.Fatal(err)
		}
		lo, hi := 255, 0
		for i := range 6 {
			img := readPNG(t, filepath.Join(dir, "images", fmt.Sprintf("tray-%04d.png", i)))
			// A corner of the frame: the wall, never a die.
			r, _, _, _ := img.At(1, 1).RGBA()
			lo, hi = min(lo, int(r>>8)), max(hi, int(r>>8))
		}
		return hi - lo
	}
	if one, many := spread(true), spread(false); one > 20 || many <= one {
		t.Errorf("the wall's red varies by %d over photos of one tray, %d over random trays", one, many)
	}
}

// readPNG decodes the PNG file at path.
func readPNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	return img
}
