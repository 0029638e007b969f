package dataset

import (
	"fmt"
	"image"
	"io"
	"math"
	"sort"
	"strconv"
	"time"
)

// Answer is one die a reader reported in a photo.
type Answer struct {
	Die        string
	Face       *int // nil: seen but not read
	Confidence float64
	Box        image.Rectangle
	Cocked     bool
}

// Outcomes of one labelled die, used in the confusion table.
const (
	ReadNull   = "null"   // a die was found there but its face not given
	ReadMissed = "missed" // no die was reported there
)

// KindScore counts the labelled dice of one kind.
type KindScore struct {
	Dice   int `json:"dice"`
	Right  int `json:"right"`
	Wrong  int `json:"wrong"`
	Null   int `json:"null"`
	Missed int `json:"missed"`
}

// Accuracy is the share of this kind's dice read right.
func (k KindScore) Accuracy() float64 { return ratio(k.Right, k.Dice) }

// Score accumulates a reader's results over the photos of a set.
//
// Precision is the share of answered faces that are right, where invented
// dice that were given a face count as wrong answers; recall is the share
// of labelled dice read right. A die reported with a null face is neither
// right nor wrong: it lowers recall only.
type Score struct {
	Photos           int                   `json:"photos"`
	PhotoErrors      int                   `json:"photo_errors"`
	Dice             int                   `json:"dice"`
	Right            int                   `json:"right"`
	Wrong            int                   `json:"wrong"`
	Null             int                   `json:"null"`
	Missed           int                   `json:"missed"`
	Invented         int                   `json:"invented"`
	InventedAnswered int                   `json:"invented_answered"`
	Kinds            map[string]*KindScore `json:"kinds"`
	// Confusion[kind][true face][what was read] counts labelled dice; what
	// was read is a face ("3"), "d8:3" when the kind was wrong, or ReadNull
	// or ReadMissed.
	Confusion map[string]map[int]map[string]int `json:"confusion"`
	Elapsed   time.Duration                     `json:"-"`
}

// NewScore returns an empty score.
func NewScore() *Score {
	return &Score{Kinds: map[string]*KindScore{}, Confusion: map[string]map[int]map[string]int{}}
}

// Pair is one labelled die and what was read for it; Answer is -1 when it
// was missed, Label -1 for an invented die.
type Pair struct{ Label, Answer int }

// Add scores one photo: the labels of the photo, the reader's answers and
// the time the reading took. It returns how labels and answers were paired.
func (s *Score) Add(labels []Label, answers []Answer, took time.Duration) []Pair {
	s.Photos++
	s.Elapsed += took
	pairs := Match(labels, answers)
	for _, p := range pairs {
		if p.Label < 0 {
			s.Invented++
			if answers[p.Answer].Face != nil {
				s.InventedAnswered++
			}
			continue
		}
		l := labels[p.Label]
		k := s.Kinds[l.Die]
		if k == nil {
			k = &KindScore{}
			s.Kinds[l.Die] = k
		}
		k.Dice++
		s.Dice++
		read := ReadMissed
		switch {
		case p.Answer < 0:
			k.Missed++
			s.Missed++
		case answers[p.Answer].Face == nil:
			read = ReadNull
			k.Null++
			s.Null++
		default:
			a := answers[p.Answer]
			read = strconv.Itoa(*a.Face)
			if a.Die != l.Die {
				read = a.Die + ":" + read
			}
			if a.Die == l.Die && *a.Face == l.Face {
				k.Right++
				s.Right++
			} else {
				k.Wrong++
				s.Wrong++
			}
		}
		c := s.Confusion[l.Die]
		if c == nil {
			c = map[int]map[string]int{}
			s.Confusion[l.Die] = c
		}
		if c[l.Face] == nil {
			c[l.Face] = map[string]int{}
		}
		c[l.Face][read]++
	}
	return pairs
}

// AddError counts a photo that could not be read: all its dice are missed.
func (s *Score) AddError(labels []Label) {
	s.Add(labels, nil, 0)
	s.Photos--
	s.PhotoErrors++
}

// Precision is right answers over all faces answered (invented dice with a
// face included); 1 when nothing was answered.
func (s *Score) Precision() float64 {
	n := s.Right + s.Wrong + s.InventedAnswered
	if n == 0 {
		return 1
	}
	return float64(s.Right) / float64(n)
}

// Recall is right answers over labelled dice.
func (s *Score) Recall() float64 { return ratio(s.Right, s.Dice) }

// MsPerPhoto is the mean reading time of the photos read.
func (s *Score) MsPerPhoto() float64 {
	if s.Photos == 0 {
		return 0
	}
	return float64(s.Elapsed) / float64(time.Millisecond) / float64(s.Photos)
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// Match pairs labels with answers of one photo. Labels with a box are
// matched first, nearest centres first: a pair qualifies when either box's
// centre lies inside the other box or the centres are closer than half the
// larger box side. That tolerance is needed because a label's box may cover
// only part of the die (matteop65 boxes surround the up face's pips) while
// the reader's box covers the whole die. Labels without a box then take the
// remaining answers, same kind and face first, then same kind, then any —
// the most favourable pairing, which is the only fair one without positions.
// Every label and every answer appears in exactly one pair.
func Match(labels []Label, answers []Answer) []Pair {
	type cand struct {
		l, a int
		d    float64
	}
	var cs []cand
	for i, l := range labels {
		if !l.HasBox {
			continue
		}
		for j, a := range answers {
			if d, ok := near(l.Box, a.Box); ok {
				cs = append(cs, cand{i, j, d})
			}
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].d < cs[j].d })
	lUsed := make([]bool, len(labels))
	aUsed := make([]bool, len(answers))
	var pairs []Pair
	for _, c := range cs {
		if lUsed[c.l] || aUsed[c.a] {
			continue
		}
		lUsed[c.l], aUsed[c.a] = true, true
		pairs = append(pairs, Pair{c.l, c.a})
	}
	// Boxless labels: three passes of decreasing strictness.
	for pass := 0; pass < 3; pass++ {
		for i, l := range labels {
			if l.HasBox || lUsed[i] {
				continue
			}
			for j, a := range answers {
				if aUsed[j] {
					continue
				}
				ok := pass == 2 || (a.Die == l.Die && (pass == 1 || (a.Face != nil && *a.Face == l.Face)))
				if ok {
					lUsed[i], aUsed[j] = true, true
					pairs = append(pairs, Pair{i, j})
					break
				}
			}
		}
	}
	for i := range labels {
		if !lUsed[i] {
			pairs = append(pairs, Pair{i, -1})
		}
	}
	for j := range answers {
		if !aUsed[j] {
			pairs = append(pairs, Pair{-1, j})
		}
	}
	sort.SliceStable(pairs, func(i, j int) bool {
		if (pairs[i].Label < 0) != (pairs[j].Label < 0) {
			return pairs[j].Label < 0
		}
		if pairs[i].Label != pairs[j].Label {
			return pairs[i].Label < pairs[j].Label
		}
		return pairs[i].Answer < pairs[j].Answer
	})
	return pairs
}

// near reports whether two boxes mark the same die and their centre
// distance in pixels.
func near(a, b image.Rectangle) (float64, bool) {
	if a.Empty() || b.Empty() {
		return 0, false
	}
	ax, ay := centre(a)
	bx, by := centre(b)
	d := math.Hypot(ax-bx, ay-by)
	in := func(x, y float64, r image.Rectangle) bool {
		return x >= float64(r.Min.X) && x <= float64(r.Max.X) && y >= float64(r.Min.Y) && y <= float64(r.Max.Y)
	}
	side := float64(max(a.Dx(), a.Dy(), b.Dx(), b.Dy()))
	return d, in(ax, ay, b) || in(bx, by, a) || d <= side/2
}

func centre(r image.Rectangle) (float64, float64) {
	return float64(r.Min.X+r.Max.X) / 2, float64(r.Min.Y+r.Max.Y) / 2
}

// WriteText prints the score for a person: per kind accuracy, the
// confusion of faces, missed and invented dice, precision, recall, speed.
func (s *Score) WriteText(w io.Writer) error {
	var err error
	p := func(format string, a ...any) {
		if err == nil {
			_, err = fmt.Fprintf(w, format, a...)
		}
	}
	p("photos %d (%d unreadable), dice %d\n", s.Photos+s.PhotoErrors, s.PhotoErrors, s.Dice)
	p("precision %.4f  recall %.4f  (right %d, wrong %d, null %d, missed %d, invented %d of which %d with a face)\n",
		s.Precision(), s.Recall(), s.Right, s.Wrong, s.Null, s.Missed, s.Invented, s.InventedAnswered)
	p("ms per photo %.2f\n", s.MsPerPhoto())
	kinds := make([]string, 0, len(s.Kinds))
	for k := range s.Kinds {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool { return kindOrder(kinds[i]) < kindOrder(kinds[j]) })
	p("\nper kind:\n")
	for _, k := range kinds {
		ks := s.Kinds[k]
		p("  %-4s dice %4d  accuracy %.4f  right %d wrong %d null %d missed %d\n", k, ks.Dice, ks.Accuracy(), ks.Right, ks.Wrong, ks.Null, ks.Missed)
	}
	p("\nconfusion (true face: read → count):\n")
	for _, k := range kinds {
		faces := make([]int, 0, len(s.Confusion[k]))
		for f := range s.Confusion[k] {
			faces = append(faces, f)
		}
		sort.Ints(faces)
		for _, f := range faces {
			row := s.Confusion[k][f]
			reads := make([]string, 0, len(row))
			for r := range row {
				reads = append(reads, r)
			}
			sort.Slice(reads, func(i, j int) bool { return readOrder(reads[i]) < readOrder(reads[j]) })
			p("  %s %3d:", k, f)
			for _, r := range reads {
				p(" %s→%d", r, row[r])
			}
			p("\n")
		}
	}
	skews := s.Skews()
	if len(skews) > 0 {
		p("\nre-tumble skew (each face's dice read right against the kind's mean: what a tower that re-tumbles\nunread dice publishes of it, against a fair die's share):\n")
	}
	for _, k := range kinds {
		skew := skews[k]
		if skew == nil {
			continue
		}
		faces := make([]int, 0, len(skew))
		for f := range skew {
			faces = append(faces, f)
		}
		sort.Ints(faces)
		p("  %s", k)
		for _, f := range faces {
			p(" %d×%.3f", f, skew[f])
		}
		p("\n")
	}
	return err
}

// Skew is, for each face of kind k, its dice's share read right against
// the mean of that share over the kind's faces. A tower that re-tumbles
// every die it does not read publishes each face at about that many times
// a fair die's share (wrong answers aside, which it publishes as read): a
// face read less often than the others comes up less often. nil unless
// every face of the kind has minSkewDice labelled dice or more.
func (s *Score) Skew(k string) map[int]float64 {
	rate := map[int]float64{}
	sum := 0.0
	for f := 0; f <= 100; f++ {
		if !ValidFace(k, f) {
			continue
		}
		n := 0
		for _, c := range s.Confusion[k][f] {
			n += c
		}
		if n < minSkewDice {
			return nil
		}
		rate[f] = float64(s.Confusion[k][f][strconv.Itoa(f)]) / float64(n)
		sum += rate[f]
	}
	if len(rate) == 0 || sum == 0 {
		return nil
	}
	mean := sum / float64(len(rate))
	for f := range rate {
		rate[f] /= mean
	}
	return rate
}

// Skews is Skew of every kind that has one, nil when none has.
func (s *Score) Skews() map[string]map[int]float64 {
	var out map[string]map[int]float64
	for k := range s.Kinds {
		if sk := s.Skew(k); sk != nil {
			if out == nil {
				out = map[string]map[int]float64{}
			}
			out[k] = sk
		}
	}
	return out
}

// minSkewDice is how many labelled dice each face needs for Skew: with
// fewer, one die more or less read moves a face's share by 5% or more.
const minSkewDice = 20

func kindOrder(k string) int {
	n, err := strconv.Atoi(k[min(1, len(k)):])
	if err != nil {
		return math.MaxInt
	}
	return n
}

// readOrder sorts faces numerically, then other-kind reads, null, missed.
func readOrder(r string) float64 {
	if n, err := strconv.Atoi(r); err == nil {
		return float64(n)
	}
	switch r {
	case ReadNull:
		return 1e9
	case ReadMissed:
		return 2e9
	}
	return 5e8
}
