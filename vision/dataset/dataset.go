// Package dataset loads labelled dice photo sets (labels.csv) and scores a
// reader's answers against them.
package dataset

import (
	"encoding/csv"
	"errors"
	"fmt"
	"image"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Label is one die in one photo, as labels.csv gives it.
type Label struct {
	File string // relative to the dataset folder, as written
	Die  string // "d4" … "d100"
	Face int    // physical face: d10 0–9, d100 0,10,…,90, others 1–N
	// Box is the labelled box; HasBox is false when the row leaves it empty.
	Box    image.Rectangle
	HasBox bool
	Line   int // line in labels.csv, for messages
}

// Set is a loaded dataset: its folder, its photos in first-seen order and
// the labels of each photo.
type Set struct {
	Dir    string
	Files  []string
	Labels map[string][]Label
}

// Path returns the file system path of a photo of the set.
func (s *Set) Path(file string) string { return filepath.Join(s.Dir, filepath.FromSlash(file)) }

// Unboxed counts the labelled dice whose rows give no box.
func (s *Set) Unboxed() int {
	n := 0
	for _, ls := range s.Labels {
		for _, l := range ls {
			if !l.HasBox {
				n++
			}
		}
	}
	return n
}

// Load reads dir/labels.csv.
func Load(dir string) (*Set, error) {
	f, err := os.Open(filepath.Join(dir, "labels.csv"))
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	defer f.Close()
	labels, err := ParseLabels(f)
	if err != nil {
		return nil, fmt.Errorf("dataset: %s: %w", filepath.Join(dir, "labels.csv"), err)
	}
	s := &Set{Dir: dir, Labels: map[string][]Label{}}
	for _, l := range labels {
		if _, seen := s.Labels[l.File]; !seen {
			s.Files = append(s.Files, l.File)
		}
		s.Labels[l.File] = append(s.Labels[l.File], l)
	}
	return s, nil
}

// header is the only accepted first line.
var header = []string{"file", "die", "face", "x", "y", "w", "h"}

// Kinds are the dice kinds a label may name.
var Kinds = []string{"d4", "d6", "d8", "d10", "d12", "d20", "d100"}

// ValidKind reports whether die is one of Kinds.
func ValidKind(die string) bool {
	for _, k := range Kinds {
		if k == die {
			return true
		}
	}
	return false
}

// ValidFace reports whether face is a physical face of kind die: d10 shows
// 0–9 and a percentile d100 0, 10, …, 90, as the datasets label them.
func ValidFace(die string, face int) bool {
	switch die {
	case "d4", "d6", "d8", "d12", "d20":
		n, _ := strconv.Atoi(die[1:])
		return face >= 1 && face <= n
	case "d10":
		return face >= 0 && face <= 9
	case "d100":
		return face >= 0 && face <= 90 && face%10 == 0
	}
	return false
}

// ParseLabels reads labels.csv: a header line file,die,face,x,y,w,h then one
// row per die. Errors name the line and the field.
func ParseLabels(r io.Reader) ([]Label, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.TrimLeadingSpace = true
	var out []Label
	first := true
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err // csv errors already name the line
		}
		line, _ := cr.FieldPos(0)
		if first {
			first = false
			if !isHeader(rec) {
				return nil, fmt.Errorf("line %d: header must be %s", line, strings.Join(header, ","))
			}
			continue
		}
		if len(rec) != len(header) {
			return nil, fmt.Errorf("line %d: want %d fields (%s), got %d", line, len(header), strings.Join(header, ","), len(rec))
		}
		l, err := parseRow(rec)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		l.Line = line
		out = append(out, l)
	}
	if len(out) == 0 {
		return nil, errors.New("no labelled dice")
	}
	return out, nil
}

func isHeader(rec []string) bool {
	if len(rec) != len(header) {
		return false
	}
	for i, h := range header {
		if strings.ToLower(strings.TrimSpace(strings.TrimPrefix(rec[i], "\ufeff"))) != h {
			return false
		}
	}
	return true
}

func parseRow(rec []string) (Label, error) {
	var l Label
	l.File = strings.TrimSpace(rec[0])
	if l.File == "" {
		return l, errors.New("file: empty")
	}
	if filepath.IsAbs(l.File) || strings.HasPrefix(filepath.ToSlash(filepath.Clean(l.File)), "../") {
		return l, fmt.Errorf("file: %q must be relative to the dataset folder", l.File)
	}
	l.Die = strings.ToLower(strings.TrimSpace(rec[1]))
	face, err := strconv.Atoi(strings.TrimSpace(rec[2]))
	if err != nil {
		return l, fmt.Errorf("face: %q is not a number", rec[2])
	}
	if !ValidKind(l.Die) {
		return l, fmt.Errorf("die: %q is not one of d4 d6 d8 d10 d12 d20 d100", rec[1])
	}
	if !ValidFace(l.Die, face) {
		return l, fmt.Errorf("face: %d is not a face of a %s", face, l.Die)
	}
	l.Face = face
	box := rec[3:7]
	empty := 0
	for _, b := range box {
		if strings.TrimSpace(b) == "" {
			empty++
		}
	}
	switch empty {
	case 4:
		return l, nil
	case 0:
	default:
		return l, errors.New("x,y,w,h: give all four or none")
	}
	// Annotation tools often write boxes in fractions of a pixel
	// ("12.5"): the box's edges are rounded to whole pixels.
	var v [4]float64
	for i, b := range box {
		n, err := strconv.ParseFloat(strings.TrimSpace(b), 64)
		if err != nil || math.IsNaN(n) {
			return l, fmt.Errorf("%s: %q is not a number", header[3+i], b)
		}
		if n < 0 || n > 1<<20 {
			return l, fmt.Errorf("%s: %s is out of range", header[3+i], strings.TrimSpace(b))
		}
		v[i] = n
	}
	l.Box = image.Rect(int(math.Round(v[0])), int(math.Round(v[1])), int(math.Round(v[0]+v[2])), int(math.Round(v[1]+v[3])))
	if l.Box.Empty() {
		return l, errors.New("w,h: box must not be empty")
	}
	l.HasBox = true
	return l, nil
}
