package render_test

import (
	"bytes"
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
	samples, err := numeral.LoadDataset(a, numeral.DatasetOptions{Background: -1})
	if err != nil || len(samples) != len(labels) {
		t.Fatalf("LoadDataset: %d samples, %v", len(samples), err)
	}
	for _, bad := range []render.DatasetOptions{{Photos: -1}, {MinDice: 5, MaxDice: 2}, {Kinds: []rules.Die{7}}} {
		if err := render.WriteDataset(t.TempDir(), bad); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}
