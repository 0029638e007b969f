package numeral

import (
	"encoding/csv"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg" // dataset photos
	_ "image/png"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// Label is one row of a dataset's labels.csv: a die in a photo.
type Label struct {
	Line   int    // 1-based line in labels.csv
	File   string // photo, relative to the dataset folder
	Die    string
	Face   int
	Box    image.Rectangle // the die's pixel box; empty: the whole photo
	HasBox bool
}

// labelHeader is the first line of every labels.csv.
var labelHeader = []string{"file", "die", "face", "x", "y", "w", "h"}

// ParseLabels reads labels.csv: a header "file,die,face,x,y,w,h" and one
// row per die, the box x,y,w,h in pixels all four given or all four empty.
func ParseLabels(r io.Reader) ([]Label, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err == io.EOF {
		return nil, errors.New("numeral: labels: empty file, want header file,die,face,x,y,w,h")
	}
	if err != nil {
		return nil, fmt.Errorf("numeral: labels: %w", err)
	}
	if len(head) != len(labelHeader) || !equalFold(head, labelHeader) {
		return nil, fmt.Errorf("numeral: labels line 1: header %q, want file,die,face,x,y,w,h", strings.Join(head, ","))
	}
	var out []Label
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		line, _ := cr.FieldPos(0)
		if err != nil {
			return nil, fmt.Errorf("numeral: labels: %w", err)
		}
		l, err := parseLabel(rec)
		if err != nil {
			return nil, fmt.Errorf("numeral: labels line %d: %w", line, err)
		}
		l.Line = line
		out = append(out, l)
	}
	return out, nil
}

func equalFold(a, b []string) bool {
	for i := range a {
		if !strings.EqualFold(strings.TrimSpace(a[i]), b[i]) {
			return false
		}
	}
	return true
}

func parseLabel(rec []string) (Label, error) {
	if len(rec) != 7 {
		return Label{}, fmt.Errorf("%d fields, want 7 (file,die,face,x,y,w,h)", len(rec))
	}
	for i := range rec {
		rec[i] = strings.TrimSpace(rec[i])
	}
	l := Label{File: rec[0], Die: strings.ToLower(rec[1])}
	if l.File == "" {
		return Label{}, errors.New("file: empty")
	}
	face, err := strconv.Atoi(rec[2])
	if err != nil {
		return Label{}, fmt.Errorf("face: %q is not a number", rec[2])
	}
	l.Face = face
	if sides(l.Die) == 0 {
		return Label{}, fmt.Errorf("die: %q is not one of d4, d6, d8, d10, d12, d20, d100", rec[1])
	}
	if !ValidFace(l.Die, l.Face) {
		return Label{}, fmt.Errorf("face: %d is not a face of a %s", l.Face, l.Die)
	}
	empty := 0
	for _, f := range rec[3:] {
		if f == "" {
			empty++
		}
	}
	switch empty {
	case 4:
		return l, nil
	case 0:
	default:
		return Label{}, errors.New("box: give all of x,y,w,h or none")
	}
	var v [4]int
	for i, name := range labelHeader[3:] {
		n, err := strconv.Atoi(rec[3+i])
		if err != nil || n < 0 || n > 1<<20 {
			return Label{}, fmt.Errorf("%s: %q is not a pixel count", name, rec[3+i])
		}
		v[i] = n
	}
	if v[2] == 0 || v[3] == 0 {
		return Label{}, errors.New("box: zero width or height")
	}
	l.Box = image.Rect(v[0], v[1], v[0]+v[2], v[1]+v[3])
	l.HasBox = true
	return l, nil
}

// DatasetOptions tune LoadDataset.
type DatasetOptions struct {
	// Background is how many crops showing no die to cut from each photo
	// that has boxes (away from every box); 0 means 1, negative none.
	Background int
	// MaxSide shrinks crops larger than this many pixels across; 0 means 256.
	MaxSide int
	Seed    uint64
	// Locate, when set, finds the boxes of n dice in a photo whose rows
	// give no box, other than the dice at the boxes its other rows give
	// (in img's coordinates); nil when it cannot find exactly n. A photo
	// of a whole tray or roller says nothing of a die as small as its
	// numerals. Rows it cannot place are left out (their dice may differ,
	// so several are placed only when they are alike). Nil crops the
	// whole photo, as for close-ups of one die. It is called concurrently.
	Locate func(img image.Image, boxed []image.Rectangle, n int) []image.Rectangle
	// Skip, when set, is told of each photo that cannot be used (missing,
	// not decodable — a camera's corrupt frame — or a box outside it),
	// which is then left out; nil makes any such photo an error. It is
	// called from LoadDataset's own goroutine, in the photos' order.
	Skip func(err error)
}

// LoadDataset reads dir/labels.csv and returns a crop (CropDie) of every
// labelled die, or, when its row has no box, of the die opts.Locate finds
// (else the whole photo), followed by background crops cut from the
// photos around the dice.
func LoadDataset(dir string, opts DatasetOptions) ([]Sample, error) {
	if opts.Background == 0 {
		opts.Background = 1
	}
	if opts.MaxSide <= 0 {
		opts.MaxSide = 256
	}
	f, err := os.Open(filepath.Join(dir, "labels.csv"))
	if err != nil {
		return nil, fmt.Errorf("numeral: dataset: %w", err)
	}
	labels, err := ParseLabels(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("numeral: dataset %s: %w", dir, err)
	}
	if len(labels) == 0 {
		return nil, fmt.Errorf("numeral: dataset %s: labels.csv lists no die", dir)
	}
	// Group rows by photo so each photo is decoded once.
	var files []string
	rows := map[string][]Label{}
	for _, l := range labels {
		if rows[l.File] == nil {
			files = append(files, l.File)
		}
		rows[l.File] = append(rows[l.File], l)
	}
	type result struct {
		dice, bg []Sample
		err      error
	}
	res := make([]result, len(files))
	parallel(len(files), runtime.GOMAXPROCS(0), func(i int) {
		dice, bg, err := loadPhoto(dir, rows[files[i]], opts, uint64(i))
		res[i] = result{dice, bg, err}
	})
	var dice, bg []Sample
	for _, r := range res {
		if r.err != nil {
			err := fmt.Errorf("numeral: dataset %s: %w", dir, r.err)
			if opts.Skip == nil {
				return nil, err
			}
			opts.Skip(err)
			continue
		}
		dice = append(dice, r.dice...)
		bg = append(bg, r.bg...)
	}
	if len(dice) == 0 {
		return nil, fmt.Errorf("numeral: dataset %s: no labelled photo could be used", dir)
	}
	return append(dice, bg...), nil
}

func loadPhoto(dir string, rows []Label, opts DatasetOptions, idx uint64) (dice, bg []Sample, err error) {
	name := rows[0].File
	f, err := os.Open(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil {
		return nil, nil, fmt.Errorf("line %d: %w", rows[0].Line, err)
	}
	img, _, err := image.Decode(f)
	f.Close()
	if err != nil {
		return nil, nil, fmt.Errorf("line %d: decode %s: %w", rows[0].Line, name, err)
	}
	b := img.Bounds()
	rows = locate(img, rows, opts.Locate)
	var boxes []image.Rectangle
	for _, l := range rows {
		var crop image.Image
		if l.HasBox {
			box := l.Box.Add(b.Min)
			if !box.Overlaps(b) {
				return nil, nil, fmt.Errorf("line %d: box %v lies outside the %dx%d photo", l.Line, l.Box, b.Dx(), b.Dy())
			}
			crop = CropDie(img, box)
			boxes = append(boxes, box)
		} else {
			crop = img
		}
		dice = append(dice, Sample{Img: shrink(crop, opts.MaxSide), Die: l.Die, Face: l.Face, Name: fmt.Sprintf("%s:%d", name, l.Line)})
	}
	if len(boxes) == 0 || opts.Background < 0 {
		return dice, nil, nil
	}
	// Background: squares the size of a die's box at random places that
	// touch no die (with its margin).
	side := 0
	for _, bx := range boxes {
		side = max(side, bx.Dx(), bx.Dy())
	}
	r := rand.New(rand.NewPCG(opts.Seed, idx))
	for k := 0; k < opts.Background; k++ {
		for try := 0; try < 30; try++ {
			if b.Dx() <= side || b.Dy() <= side {
				break
			}
			p := image.Pt(b.Min.X+r.IntN(b.Dx()-side), b.Min.Y+r.IntN(b.Dy()-side))
			cand := image.Rectangle{p, p.Add(image.Pt(side, side))}
			grown := cand.Inset(-int(float64(side) * Margin))
			ok := true
			for _, bx := range boxes {
				if grown.Overlaps(bx) {
					ok = false
					break
				}
			}
			if ok {
				bg = append(bg, Sample{Img: shrink(CropDie(img, cand), opts.MaxSide), Name: fmt.Sprintf("%s:background", name)})
				break
			}
		}
	}
	return dice, bg, nil
}

// locate gives the rows without a box the boxes find places in img, and
// leaves out those it cannot place: when find does not find exactly one
// die for each, or (several) they are not all the same die and face, so
// that no box could go to the wrong label.
func locate(img image.Image, rows []Label, find func(image.Image, []image.Rectangle, int) []image.Rectangle) []Label {
	if find == nil {
		return rows
	}
	var unboxed []int
	for i, l := range rows {
		if !l.HasBox {
			unboxed = append(unboxed, i)
		}
	}
	if len(unboxed) == 0 {
		return rows
	}
	out := make([]Label, 0, len(rows))
	var boxed []image.Rectangle
	for _, l := range rows {
		if l.HasBox {
			out = append(out, l)
			boxed = append(boxed, l.Box.Add(img.Bounds().Min))
		}
	}
	first := rows[unboxed[0]]
	for _, i := range unboxed {
		if rows[i].Die != first.Die || rows[i].Face != first.Face {
			return out
		}
	}
	boxes := find(img, boxed, len(unboxed))
	if len(boxes) != len(unboxed) {
		return out
	}
	b := img.Bounds()
	for k, i := range unboxed {
		l := rows[i]
		l.Box, l.HasBox = boxes[k].Sub(b.Min), true
		out = append(out, l)
	}
	return out
}

// shrink returns img scaled down (area averaging) to at most side pixels
// across, as an *image.RGBA, so that a dataset of large photos fits in
// memory.
func shrink(img image.Image, side int) image.Image {
	b := img.Bounds()
	if max(b.Dx(), b.Dy()) <= side {
		if _, ok := img.(*image.RGBA); ok {
			return img
		}
	}
	c := toCanon(img, side)
	out := image.NewRGBA(image.Rect(0, 0, c.w, c.h))
	n := c.w * c.h
	for i := 0; i < n; i++ {
		out.Pix[4*i], out.Pix[4*i+1], out.Pix[4*i+2], out.Pix[4*i+3] = c.pix[i], c.pix[n+i], c.pix[2*n+i], 255
	}
	return out
}
