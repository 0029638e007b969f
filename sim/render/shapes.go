package render

import (
	"math"
	"strconv"

	"github.com/towerd/towerd/rules"
)

// The top-down look of each die kind, in a unit frame: the die's outline fits
// the unit circle, y grows down, and -y is "up" for the numeral on the up
// face. Each kind has its own outline and a typical size so a reader can
// tell kinds apart by shape as well as by what is printed.

// facet is a visible face polygon with a brightness factor (1 = up face).
type facet struct {
	pts   [][2]float64
	shade float64
}

// label is a number printed on a face: centre, rotation of its "up", digit
// height, squash across its height (side faces are seen edge-on) and
// opacity (neighbours are partly hidden).
type label struct {
	text      string
	x, y      float64
	rot, h    float64
	squash    float64
	underline bool
	alpha     float64
}

type shape struct {
	outline [][2]float64
	facets  []facet
	edges   [][4]float64
	labels  []label
	pips    [][2]float64
	pipR    float64
}

// regPoly returns n vertices at radius r, the first at angle phase (radians,
// 0 = +x, -π/2 = up).
func regPoly(n int, r, phase float64) [][2]float64 {
	pts := make([][2]float64, n)
	for i := range pts {
		s, c := math.Sincos(phase + 2*math.Pi*float64(i)/float64(n))
		pts[i] = [2]float64{r * c, r * s}
	}
	return pts
}

// roundedSquare returns a square of half-side s with corner radius k.
func roundedSquare(s, k float64) [][2]float64 {
	var pts [][2]float64
	corners := [4][2]float64{{s - k, -(s - k)}, {s - k, s - k}, {-(s - k), s - k}, {-(s - k), -(s - k)}}
	for i, c := range corners {
		a0 := -math.Pi/2 + float64(i)*math.Pi/2
		for j := 0; j <= 4; j++ {
			sn, cs := math.Sincos(a0 + float64(j)*math.Pi/8)
			pts = append(pts, [2]float64{c[0] + k*cs, c[1] + k*sn})
		}
	}
	return pts
}

func centroid(pts ...[2]float64) [2]float64 {
	var x, y float64
	for _, p := range pts {
		x += p[0]
		y += p[1]
	}
	n := float64(len(pts))
	return [2]float64{x / n, y / n}
}

// upToward returns the rotation that points a label's up from p toward q.
func upToward(p, q [2]float64) float64 {
	return math.Atan2(q[0]-p[0], -(q[1] - p[1]))
}

func lerp(p, q [2]float64, t float64) [2]float64 {
	return [2]float64{p[0] + (q[0]-p[0])*t, p[1] + (q[1]-p[1])*t}
}

// FaceText is what is printed for a physical face: "00" for a d100's 0,
// "0" for a d10's 0, else the number.
func FaceText(kind rules.Die, face int) string {
	if kind == rules.D100 && face == 0 {
		return "00"
	}
	return strconv.Itoa(face)
}

// Faces lists the physical faces of a kind: d10 0–9, d100 0,10,…,90,
// others 1–N.
func Faces(kind rules.Die) []int {
	var fs []int
	switch kind {
	case rules.D10:
		for i := 0; i < 10; i++ {
			fs = append(fs, i)
		}
	case rules.D100:
		for i := 0; i < 10; i++ {
			fs = append(fs, 10*i)
		}
	default:
		for i := 1; i <= int(kind); i++ {
			fs = append(fs, i)
		}
	}
	return fs
}

// ValidFace reports whether face is a physical face of kind.
func ValidFace(kind rules.Die, face int) bool {
	for _, f := range Faces(kind) {
		if f == face {
			return true
		}
	}
	return false
}

// neighbour returns a plausible number on the i-th face next to face, so
// side faces carry other numbers than the up face (real layouts differ per
// maker; only "not the up number" matters to a reader).
func neighbour(kind rules.Die, face, i int) int {
	fs := Faces(kind)
	idx := 0
	for j, f := range fs {
		if f == face {
			idx = j
		}
	}
	steps := []int{7, 3, 11, 5, 13}
	n := len(fs)
	j := (idx + steps[i%len(steps)]%(n-1) + 1) % n
	if j == idx {
		j = (j + 1) % n
	}
	return fs[j]
}

// underlined reports whether a number carries the bar that tells 6 from 9.
func underlined(kind rules.Die, face int) bool {
	return kind != rules.D100 && kind != rules.D4 && (face == 6 || face == 9)
}

// pipLayout gives the pip centres of a d6 face in a face of half-side 1.
func pipLayout(face int) [][2]float64 {
	const o = 0.55
	switch face {
	case 1:
		return [][2]float64{{0, 0}}
	case 2:
		return [][2]float64{{-o, -o}, {o, o}}
	case 3:
		return [][2]float64{{-o, -o}, {0, 0}, {o, o}}
	case 4:
		return [][2]float64{{-o, -o}, {o, -o}, {-o, o}, {o, o}}
	case 5:
		return [][2]float64{{-o, -o}, {o, -o}, {0, 0}, {-o, o}, {o, o}}
	case 6:
		return [][2]float64{{-o, -o}, {-o, 0}, {-o, o}, {o, -o}, {o, 0}, {o, o}}
	}
	return nil
}

func numLabel(kind rules.Die, face int, x, y, rot, h float64) label {
	return label{text: FaceText(kind, face), x: x, y: y, rot: rot, h: h, squash: 1, underline: underlined(kind, face), alpha: 1}
}

func sideLabel(kind rules.Die, face int, at, centre [2]float64, h, squash float64) label {
	l := numLabel(kind, face, at[0], at[1], upToward(centre, at), h)
	l.squash = squash
	l.alpha = 0.85
	return l
}

// dieShape returns the drawing of kind showing face.
func dieShape(kind rules.Die, face int, pips bool) shape {
	var s shape
	o := [2]float64{0, 0}
	switch kind {
	case rules.D6:
		s.outline = roundedSquare(0.74, 0.2)
		top := roundedSquare(0.64, 0.14)
		s.facets = []facet{{pts: top, shade: 1}}
		if pips {
			for _, p := range pipLayout(face) {
				s.pips = append(s.pips, [2]float64{p[0] * 0.64, p[1] * 0.64})
			}
			s.pipR = 0.11
		} else {
			s.labels = []label{numLabel(kind, face, 0, 0, 0, 0.62)}
		}
	case rules.D4:
		v := regPoly(3, 1, -math.Pi/2)
		s.outline = v
		shades := []float64{1, 0.86, 0.74}
		others := []int{}
		for _, f := range Faces(kind) {
			if f != face {
				others = append(others, f)
			}
		}
		for i := 0; i < 3; i++ {
			a, b := v[i], v[(i+1)%3]
			s.facets = append(s.facets, facet{pts: [][2]float64{o, a, b}, shade: shades[i]})
			s.edges = append(s.edges, [4]float64{0, 0, a[0], a[1]})
			g := centroid(o, a, b)
			// The rolled number sits at the apex (the centre) of every
			// visible face; the corners carry the other numbers.
			pc := lerp(g, o, 0.45)
			s.labels = append(s.labels, numLabel(kind, face, pc[0], pc[1], upToward(pc, o), 0.27))
			for k, corner := range [][2]float64{a, b} {
				pv := lerp(g, corner, 0.5)
				n := others[(i+k)%3]
				l := numLabel(kind, n, pv[0], pv[1], upToward(pv, corner), 0.2)
				s.labels = append(s.labels, l)
			}
		}
	case rules.D8:
		hex := regPoly(6, 1, -math.Pi/2)
		s.outline = hex
		top := [][2]float64{hex[0], hex[2], hex[4]}
		s.facets = []facet{{pts: top, shade: 1}}
		for i := 0; i < 3; i++ {
			a, m, b := hex[2*i], hex[2*i+1], hex[(2*i+2)%6]
			s.facets = append(s.facets, facet{pts: [][2]float64{a, m, b}, shade: 0.8})
			g := centroid(a, m, b)
			s.labels = append(s.labels, sideLabel(kind, neighbour(kind, face, i), g, o, 0.2, 0.55))
		}
		s.labels = append(s.labels, numLabel(kind, face, 0, 0.04, 0, 0.4))
	case rules.D20:
		hex := regPoly(6, 1, -math.Pi/2)
		s.outline = hex
		t := regPoly(3, 0.56, -math.Pi/2)
		s.facets = []facet{{pts: t, shade: 1}}
		for i := 0; i < 3; i++ {
			a, b := t[i], t[(i+1)%3]
			apex := hex[2*i+1]
			s.facets = append(s.facets, facet{pts: [][2]float64{a, apex, b}, shade: 0.86})
			s.facets = append(s.facets, facet{pts: [][2]float64{a, hex[2*i], apex}, shade: 0.7})
			s.facets = append(s.facets, facet{pts: [][2]float64{b, apex, hex[(2*i+2)%6]}, shade: 0.7})
			s.edges = append(s.edges, [4]float64{a[0], a[1], hex[2*i][0], hex[2*i][1]})
			g := centroid(a, apex, b)
			s.labels = append(s.labels, sideLabel(kind, neighbour(kind, face, i), g, o, 0.2, 0.6))
		}
		s.labels = append(s.labels, numLabel(kind, face, 0, 0.03, 0, 0.3))
	case rules.D12:
		dec := regPoly(10, 1, -math.Pi/2)
		s.outline = dec
		t := regPoly(5, 0.56, -math.Pi/2)
		s.facets = []facet{{pts: t, shade: 1}}
		for i := 0; i < 5; i++ {
			a, b := t[i], t[(i+1)%5]
			side := [][2]float64{a, dec[2*i], dec[2*i+1], dec[(2*i+2)%10], b}
			s.facets = append(s.facets, facet{pts: side, shade: 0.78 + 0.04*float64(i%3)})
			g := centroid(a, b, dec[2*i+1])
			s.labels = append(s.labels, sideLabel(kind, neighbour(kind, face, i), g, o, 0.18, 0.5))
		}
		s.labels = append(s.labels, numLabel(kind, face, 0, 0, 0, 0.36))
	case rules.D10, rules.D100:
		s.outline = [][2]float64{{0, -1}, {0.76, -0.32}, {0.72, 0.36}, {0.32, 0.82}, {-0.32, 0.82}, {-0.72, 0.36}, {-0.76, -0.32}}
		kite := [][2]float64{{0, -0.8}, {0.52, -0.12}, {0, 0.6}, {-0.52, -0.12}}
		s.facets = []facet{
			{pts: kite, shade: 1},
			{pts: [][2]float64{kite[1], s.outline[1], s.outline[2], s.outline[3], kite[2]}, shade: 0.8},
			{pts: [][2]float64{kite[3], s.outline[6], s.outline[5], s.outline[4], kite[2]}, shade: 0.72},
		}
		s.edges = [][4]float64{{0, -0.8, 0, -1}, {0, 0.6, 0, 0.82}}
		h, w := 0.36, 0.2
		if kind == rules.D100 {
			h, w = 0.3, 0.17
		}
		s.labels = append(s.labels, numLabel(kind, face, 0, -0.08, 0, h))
		s.labels = append(s.labels, sideLabel(kind, neighbour(kind, face, 0), [2]float64{0.5, 0.38}, [2]float64{0, -0.2}, w, 0.55))
		s.labels = append(s.labels, sideLabel(kind, neighbour(kind, face, 1), [2]float64{-0.5, 0.38}, [2]float64{0, -0.2}, w, 0.55))
	}
	return s
}

// DefaultSize is the typical across-size in pixels of a kind in a frame
// width pixels wide (real dice seen by the tower camera at 640x480).
func DefaultSize(kind rules.Die, width int) float64 {
	base := map[rules.Die]float64{
		rules.D4: 78, rules.D6: 86, rules.D8: 74, rules.D10: 76,
		rules.D12: 82, rules.D20: 88, rules.D100: 84,
	}[kind]
	if base == 0 {
		base = 70
	}
	return base * float64(width) / 640
}
