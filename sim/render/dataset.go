package render

import (
	"bufio"
	"errors"
	"fmt"
	"image"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/towerd/towerd/rules"
)

// DatasetOptions shape WriteDataset.
type DatasetOptions struct {
	// Photos is how many tray photos to draw; 0 means 300.
	Photos int
	// Seed makes the set: the same options give the same files.
	Seed uint64
	// Kinds the dice are drawn from; empty means every kind but the d6,
	// which the reader counts by its pips (see D6).
	Kinds []rules.Die
	// D6 draws d6s with pips or numerals; D6Mixed means pips.
	D6 D6Style
	// MinDice, MaxDice bound the dice per photo; 0 means 3 and 6.
	MinDice, MaxDice int
	// Width, Height of the photos; 0 means 640x480.
	Width, Height int
	// OneTray draws every photo in one tray under one light, as a
	// tower's camera sees it (enrolment then learns the empty tray);
	// false draws a random tray per photo, for a model of any tray.
	OneTray bool
}

// WriteDataset draws labelled tray photos of random dice (random trays,
// light, colours, positions and faces) into dir as PNGs with a labels.csv
// in the dataset format `towerd enroll` and `towerd eval` read
// (file,die,face,x,y,w,h). It is how a model for the simulated tower's
// rendered dice is made: no photo of real dice is needed.
func WriteDataset(dir string, o DatasetOptions) error {
	scenes, err := DatasetScenes(o)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, "images"), 0o755); err != nil {
		return fmt.Errorf("render: dataset: %w", err)
	}
	f, err := os.Create(filepath.Join(dir, "labels.csv"))
	if err != nil {
		return fmt.Errorf("render: dataset: %w", err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "file,die,face,x,y,w,h")
	for i, s := range scenes {
		img, truth, err := Render(s)
		if err != nil {
			f.Close()
			return fmt.Errorf("render: dataset photo %d: %w", i, err)
		}
		name := fmt.Sprintf("images/tray-%04d.png", i)
		if err := writePNG(filepath.Join(dir, filepath.FromSlash(name)), img); err != nil {
			f.Close()
			return fmt.Errorf("render: dataset: %w", err)
		}
		for _, t := range truth {
			if t.Cocked || t.OffTray {
				continue // no face to learn
			}
			b := t.Box
			fmt.Fprintf(w, "%s,%v,%d,%d,%d,%d,%d\n", name, t.Kind, t.Face, b.Min.X, b.Min.Y, b.Dx(), b.Dy())
		}
	}
	err = errors.Join(w.Flush(), f.Close())
	if err != nil {
		return fmt.Errorf("render: dataset: %w", err)
	}
	return nil
}

// DatasetScenes returns the scenes WriteDataset draws for o, in order:
// photo i of a set is scene i (a test can draw one photo of a set again).
func DatasetScenes(o DatasetOptions) ([]Scene, error) {
	if o.Photos == 0 {
		o.Photos = 300
	}
	if len(o.Kinds) == 0 {
		o.Kinds = []rules.Die{rules.D4, rules.D8, rules.D10, rules.D12, rules.D20, rules.D100}
	}
	if o.D6 == D6Mixed {
		o.D6 = D6Pips
	}
	if o.MinDice == 0 {
		o.MinDice = 3
	}
	if o.MaxDice == 0 {
		o.MaxDice = 6
	}
	switch {
	case o.Photos < 0:
		return nil, fmt.Errorf("render: dataset: %d photos", o.Photos)
	case o.MinDice < 1 || o.MaxDice < o.MinDice || o.MaxDice > 12:
		return nil, fmt.Errorf("render: dataset: %d to %d dice per photo, want 1 ≤ min ≤ max ≤ 12", o.MinDice, o.MaxDice)
	}
	for _, k := range o.Kinds {
		if !k.Valid() {
			return nil, fmt.Errorf("render: dataset: no such die %v", k)
		}
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0xda7a5e7))
	var tray *Scene
	if o.OneTray {
		w, h := o.Width, o.Height
		if w <= 0 || h <= 0 {
			w, h = 640, 480
		}
		t := RandomTray(rng, w, h)
		tray = &t
	}
	scenes := make([]Scene, o.Photos)
	for i := range scenes {
		kinds := make([]rules.Die, o.MinDice+rng.IntN(o.MaxDice-o.MinDice+1))
		for j := range kinds {
			kinds[j] = o.Kinds[rng.IntN(len(o.Kinds))]
		}
		scenes[i] = RandomScene(rng.Uint64(), kinds, Options{Width: o.Width, Height: o.Height, D6: o.D6, Tray: tray})
	}
	return scenes, nil
}

// writePNG saves img quickly: a rendered set is written once and read
// once, so fast compression beats small files.
func writePNG(name string, img image.Image) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	return errors.Join(enc.Encode(f, img), f.Close())
}
