package vision

// Leaning numbered dice. Under a camera looking straight down a die lying
// flat shows its up face square on, whatever its place in the frame (a
// plane square to the lens keeps its shape); a die leaning on a wall or
// another die shows it tilted. Pip faces are judged by their pips
// (markLeaning); these rules judge the faces the model reads.

import (
	"image"
	"math"
	"slices"
)

// leansNumbered reports whether the die of kind in region b, read by the
// model, leans:
//   - d6, d8, d12, d20: the up face is a square, triangle or pentagon,
//     whose second moments are the same every way; seen tilted by θ
//     their minor axis is cos θ of the major. Below minFlatFore (about
//     25°) the die leans, as for pip faces. Rendered flat dice measure
//     0.97–1, rendered leaning ones (tilted 0.65 rad) 0.76–0.82.
//   - d10, d100: the up face is a kite, of no fixed shape from set to
//     set, but its diagonals are square to each other in every set; a
//     tilt turns them (unless it is along one). Rendered flat 0–3°,
//     leaning 4–53° (a tenth under 5°).
//
// A d4 is not judged: a point is up, not a face, and its three faces
// meet in the middle among its numbers. Seen as one triangle they were
// found whole too seldom (9 of about 70 flat rendered d4 were judged
// leaning), and its outline holds its shadow (4 of them). A d4 rests on
// a broad face under a low centre and seldom leans.
//
// When the up face cannot be told from the rest (a face no shade sets
// apart, a dark die under noise) nothing is said: the die is read as it
// is.
func leansNumbered(img image.Image, kind string, b *blob) bool {
	if kind == "d4" {
		return false
	}
	f, ok := findUpFace(img, b.outline, b.box, max(0.06, minFaceShare[kind]))
	if !ok {
		return false
	}
	if kind == "d10" || kind == "d100" {
		return kiteSkew(f.hull) > maxKiteSkew
	}
	return f.fore < minFlatFore
}

// maxKiteSkew is how far from square (radians, 5°) a flat d10's kite's
// diagonals may be measured.
const maxKiteSkew = 5 * math.Pi / 180

// upFace is the up face of a numbered die as a camera looking straight down
// sees it: the face the die's middle lies on, told from the faces around it
// by its shade (a face square to the light is lit more than the slanted
// ones around it).
type upFace struct {
	hull [][2]float64 // convex hull of the face, in cells
	area float64      // the face's hull, cells²
	fore float64      // minor over major axis of the face's second moments
}

// faceCells is the most cells a die is measured across: a die of up to
// that many pixels is measured pixel by pixel, a larger one in cells of a
// few pixels. At 48 the cells of 1296x972 dice (150–190 px, 3 px cells)
// let a numeral split a d20's triangle: a review's flat dice there were
// judged leaning 4 times in 180, none at 96.
const faceCells = 96

// findUpFace segments the up face of the die whose outline (a convex hull
// in photo pixels) lies in box, a face at least minShare of the outline;
// ok is false when no face stands out.
func findUpFace(img image.Image, outline []image.Point, box image.Rectangle, minShare float64) (upFace, bool) {
	var f upFace
	box = box.Intersect(img.Bounds())
	if len(outline) < 3 || box.Dx() < 8 || box.Dy() < 8 {
		return f, false
	}
	step := max(1, (max(box.Dx(), box.Dy())+faceCells-1)/faceCells)
	w, h := (box.Dx()+step-1)/step, (box.Dy()+step-1)/step
	cells := cellColours(img, box, step, w, h)
	poly := make([][2]float64, len(outline))
	for i, p := range outline {
		poly[i] = [2]float64{float64(p.X-box.Min.X)/float64(step) - 0.5, float64(p.Y-box.Min.Y)/float64(step) - 0.5}
	}
	inside := convexMask(poly, w, h)
	cx, cy, area := polyCentroid(poly)
	if area < 30 {
		return f, false
	}
	rd := math.Sqrt(area / math.Pi)
	cells = blur3(cells, w, h)
	// The face's colour: the mode of the middle's (a numeral's ink, or a
	// slanted face the middle lies near, are the other modes).
	var seeds []int
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			dx, dy := float64(x)-cx, float64(y)-cy
			if inside[y*w+x] && dx*dx+dy*dy <= 0.09*rd*rd {
				seeds = append(seeds, y*w+x)
			}
		}
	}
	if len(seeds) < 5 {
		return f, false
	}
	noise := localNoise(cells, inside, w, h, cx, cy, 0.5*rd)
	// The up face is the smallest solid region of one colour whose hull
	// (grown by a third: the outline's middle is off the face's when the
	// die leans, or casts a shadow joined to it) holds the die's middle:
	// not the numeral's ink (thin strokes fill little of their hull), not
	// the ring of slanted faces around it (its hull holds the up face too).
	var skip [][3]float32
	found := false
	for try := 0; try < 3; try++ { // the up face, the faces round it, the ink
		top, ok := seedMode(cells, seeds, skip, noise)
		if !ok {
			break
		}
		skip = append(skip, top)
		tol := max(3*noise, 0.06*norm3(top), 4)
		reg := growFace(cells, inside, seeds, w, h, func(int) [3]float32 { return top }, tol)
		if len(reg) < 10 {
			continue
		}
		// Light falls off across a die (a lamp to one side, a lens's
		// vignette): grown again against the colour's slope over the
		// region, the face is not cut where it is darker (a review's
		// steep light: flat dice judged leaning 32 times in 177, now 2).
		if plane, ok := fitPlane(cells, reg, w, top); ok {
			if again := growFace(cells, inside, seeds, w, h, plane, tol); len(again) >= len(reg) {
				reg = again
			}
		}
		hull := hull2(rowEnds(reg, w, h))
		_, _, ha := polyCentroid(hull)
		if float64(len(reg)) < minFaceFill*(ha+float64(len(hull))/2) || ha < minShare*area || !inConvex(grownPoly(hull, 1.35), cx, cy) {
			continue
		}
		if !found || ha < f.area {
			found = true
			f.hull, f.area = hull, ha
		}
	}
	if !found {
		return f, false
	}
	f.fore = polyFore(f.hull)
	return f, true
}

// minFaceShare is the least share of the die's outline an up face of each
// kind takes: about 0.45 of the rendered flat faces' median (d6 0.68, d8
// 0.41, d10 0.30, d12 0.21, d20 0.12), under the leaning ones' least
// (0.43, 0.29, 0.18, 0.15, 0.09). A bold numeral, a solid bar "1" (0.02–
// 0.03) or a small die's red "9" (0.08), is no face.
var minFaceShare = map[string]float64{"d6": 0.3, "d8": 0.18, "d10": 0.13, "d100": 0.13, "d12": 0.09, "d20": 0.06}

// minFaceFill is the least share of its hull a face's cells fill (the
// hull runs through the outer cells' centres: half a cell of each is
// outside it). A numeral's strokes fill far less.
const minFaceFill = 0.55

// rowEnds are the first and last cell of each row of the region reg: its
// hull's, for a fraction of the points.
func rowEnds(reg []int, w, h int) [][2]float64 {
	lo, hi := make([]int, h), make([]int, h)
	for y := range lo {
		lo[y], hi[y] = w, -1
	}
	for _, s := range reg {
		x, y := s%w, s/w
		lo[y], hi[y] = min(lo[y], x), max(hi[y], x)
	}
	var pts [][2]float64
	for y := range lo {
		if hi[y] >= 0 {
			pts = append(pts, [2]float64{float64(lo[y]), float64(y)}, [2]float64{float64(hi[y]), float64(y)})
		}
	}
	return pts
}

// grownPoly is p scaled by k about its centroid.
func grownPoly(p [][2]float64, k float64) [][2]float64 {
	cx, cy, _ := polyCentroid(p)
	out := make([][2]float64, len(p))
	for i, q := range p {
		out[i] = [2]float64{cx + k*(q[0]-cx), cy + k*(q[1]-cy)}
	}
	return out
}

// cellColours averages img's RGB over step x step cells of box.
func cellColours(img image.Image, box image.Rectangle, step, w, h int) [][3]float32 {
	out := make([][3]float32, w*h)
	cnt := make([]float32, w*h)
	rgba, _ := img.(*image.RGBA)
	// Cells 6 pixels wide or more are sampled on a grid of about 3x3: a
	// cell's mean needs no more, and image types other than RGBA go
	// through At.
	inc := max(1, step/3)
	for y := box.Min.Y; y < box.Max.Y; y += inc {
		cy := (y - box.Min.Y) / step
		for x := box.Min.X; x < box.Max.X; x += inc {
			i := cy*w + (x-box.Min.X)/step
			var r, g, b uint32
			if rgba != nil {
				o := rgba.PixOffset(x, y)
				r, g, b = uint32(rgba.Pix[o]), uint32(rgba.Pix[o+1]), uint32(rgba.Pix[o+2])
			} else if r64, ok := img.(image.RGBA64Image); ok {
				// No colour.Color boxed per pixel: a third faster.
				c := r64.RGBA64At(x, y)
				r, g, b = uint32(c.R)>>8, uint32(c.G)>>8, uint32(c.B)>>8
			} else {
				r, g, b, _ = img.At(x, y).RGBA()
				r, g, b = r>>8, g>>8, b>>8
			}
			out[i][0] += float32(r)
			out[i][1] += float32(g)
			out[i][2] += float32(b)
			cnt[i]++
		}
	}
	for i := range out {
		if cnt[i] > 0 {
			for c := 0; c < 3; c++ {
				out[i][c] /= cnt[i]
			}
		}
	}
	return out
}

func norm3(a [3]float32) float64 {
	return math.Sqrt(float64(a[0])*float64(a[0]) + float64(a[1])*float64(a[1]) + float64(a[2])*float64(a[2]))
}

func dist3(a, b [3]float32) float64 {
	return norm3([3]float32{a[0] - b[0], a[1] - b[1], a[2] - b[2]})
}

// convexMask marks the cells of a w x h grid whose centres lie in the
// convex polygon p: per row, between where the row crosses its edges.
func convexMask(p [][2]float64, w, h int) []bool {
	in := make([]bool, w*h)
	for y := 0; y < h; y++ {
		fy := float64(y)
		lo, hi := math.Inf(1), math.Inf(-1)
		for i := range p {
			a, b := p[i], p[(i+1)%len(p)]
			if (a[1] <= fy) != (b[1] <= fy) || a[1] == fy {
				var x float64
				if a[1] == b[1] {
					lo, hi = min(lo, a[0], b[0]), max(hi, a[0], b[0])
					continue
				}
				x = a[0] + (fy-a[1])*(b[0]-a[0])/(b[1]-a[1])
				lo, hi = min(lo, x), max(hi, x)
			}
		}
		for x := max(0, int(math.Ceil(lo))); x < w && float64(x) <= hi; x++ {
			in[y*w+x] = true
		}
	}
	return in
}

// inConvex reports whether (x, y) lies in the convex polygon p (either
// winding); nothing lies in fewer than three corners.
func inConvex(p [][2]float64, x, y float64) bool {
	if len(p) < 3 {
		return false
	}
	sign := 0.0
	for i := range p {
		a, b := p[i], p[(i+1)%len(p)]
		c := (b[0]-a[0])*(y-a[1]) - (b[1]-a[1])*(x-a[0])
		if c == 0 {
			continue
		}
		if sign == 0 {
			sign = c
		} else if (c > 0) != (sign > 0) {
			return false
		}
	}
	return true
}

// polyCentroid returns a simple polygon's centroid and area.
func polyCentroid(p [][2]float64) (float64, float64, float64) {
	var a, cx, cy float64
	for i := range p {
		q, r := p[i], p[(i+1)%len(p)]
		c := q[0]*r[1] - r[0]*q[1]
		a += c
		cx += (q[0] + r[0]) * c
		cy += (q[1] + r[1]) * c
	}
	if a == 0 {
		return 0, 0, 0
	}
	return cx / (3 * a), cy / (3 * a), math.Abs(a) / 2
}

// polyFore is the ratio of the minor to the major axis of a polygon's
// second moments of area: 1 for any shape with three or more fold
// symmetry (a triangle, square, pentagon), cos θ for one seen tilted by θ.
func polyFore(p [][2]float64) float64 {
	cx, cy, _ := polyCentroid(p)
	var a, sxx, syy, sxy float64
	for i := range p {
		x0, y0 := p[i][0]-cx, p[i][1]-cy
		x1, y1 := p[(i+1)%len(p)][0]-cx, p[(i+1)%len(p)][1]-cy
		c := x0*y1 - x1*y0
		a += c
		sxx += c * (y0*y0 + y0*y1 + y1*y1)
		syy += c * (x0*x0 + x0*x1 + x1*x1)
		sxy += c * (x0*y1 + 2*x0*y0 + 2*x1*y1 + x1*y0)
	}
	if a == 0 {
		return 0
	}
	if a < 0 { // clockwise: every sum has the area's sign
		sxx, syy, sxy = -sxx, -syy, -sxy
	}
	sxx, syy, sxy = sxx/12, syy/12, sxy/24
	tr, det := sxx+syy, sxx*syy-sxy*sxy
	d := math.Sqrt(max(0, tr*tr/4-det))
	l1, l2 := tr/2+d, tr/2-d
	if l1 == 0 {
		return 0
	}
	return math.Sqrt(max(0, l2/l1))
}

// hull2 is the convex hull of pts (Andrew's monotone chain).
func hull2(pts [][2]float64) [][2]float64 {
	p := slices.Clone(pts)
	if len(p) < 3 {
		return p
	}
	slices.SortFunc(p, func(a, b [2]float64) int {
		if a[0] != b[0] {
			if a[0] < b[0] {
				return -1
			}
			return 1
		}
		if a[1] < b[1] {
			return -1
		}
		if a[1] > b[1] {
			return 1
		}
		return 0
	})
	cross := func(o, a, b [2]float64) float64 {
		return (a[0]-o[0])*(b[1]-o[1]) - (a[1]-o[1])*(b[0]-o[0])
	}
	var h [][2]float64
	for _, q := range p {
		for len(h) >= 2 && cross(h[len(h)-2], h[len(h)-1], q) <= 0 {
			h = h[:len(h)-1]
		}
		h = append(h, q)
	}
	lo := len(h) + 1
	for i := len(p) - 2; i >= 0; i-- {
		q := p[i]
		for len(h) >= lo && cross(h[len(h)-2], h[len(h)-1], q) <= 0 {
			h = h[:len(h)-1]
		}
		h = append(h, q)
	}
	return h[:len(h)-1]
}

// blur3 is a 3x3 mean of the cells (the sensor's noise a third), in two
// passes of three.
func blur3(c [][3]float32, w, h int) [][3]float32 {
	tmp := make([][3]float32, len(c))
	for y := 0; y < h; y++ {
		row := c[y*w : y*w+w]
		for x := 0; x < w; x++ {
			lo, hi := max(0, x-1), min(w-1, x+1)
			var s [3]float32
			for k := lo; k <= hi; k++ {
				s[0], s[1], s[2] = s[0]+row[k][0], s[1]+row[k][1], s[2]+row[k][2]
			}
			n := float32(hi - lo + 1)
			tmp[y*w+x] = [3]float32{s[0] / n, s[1] / n, s[2] / n}
		}
	}
	out := make([][3]float32, len(c))
	for y := 0; y < h; y++ {
		lo, hi := max(0, y-1), min(h-1, y+1)
		n := float32(hi - lo + 1)
		for x := 0; x < w; x++ {
			var s [3]float32
			for k := lo; k <= hi; k++ {
				v := tmp[k*w+x]
				s[0], s[1], s[2] = s[0]+v[0], s[1]+v[1], s[2]+v[2]
			}
			out[y*w+x] = [3]float32{s[0] / n, s[1] / n, s[2] / n}
		}
	}
	return out
}

// localNoise is the colour's spread between neighbouring cells within r
// of (cx, cy): the median step, which edges and ink hardly move.
func localNoise(c [][3]float32, inside []bool, w, h int, cx, cy, r float64) float64 {
	var d []float64
	// Every other cell each way: the median needs no more.
	for y := 0; y < h-1; y += 2 {
		for x := 0; x < w-1; x += 2 {
			dx, dy := float64(x)-cx, float64(y)-cy
			i := y*w + x
			if dx*dx+dy*dy > r*r || !inside[i] || !inside[i+1] || !inside[i+w] {
				continue
			}
			d = append(d, dist3(c[i], c[i+1]), dist3(c[i], c[i+w]))
		}
	}
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	// The median distance between two cells of one colour is about 1.5
	// times the per-cell spread (three channels, two samples).
	return d[len(d)/2] / 1.5
}

// seedMode is the commonest colour among the seeds, leaving out those near
// the colours in skip: from the densest seed, a mean shift within a
// tolerance.
func seedMode(c [][3]float32, seeds []int, skip [][3]float32, noise float64) ([3]float32, bool) {
	var use []int
	for _, s := range seeds {
		near := false
		for _, k := range skip {
			if dist3(c[s], k) < max(3*noise, 0.1*norm3(k), 6) {
				near = true
			}
		}
		if !near {
			use = append(use, s)
		}
	}
	if len(use) < max(5, len(seeds)/6) {
		return [3]float32{}, false
	}
	// Start from the densest colour: the seed with the most seeds near it
	// (a median of ink and face is neither).
	sub := use
	if len(sub) > 120 {
		sub = make([]int, 0, 120)
		for i := 0; i < 120; i++ {
			sub = append(sub, use[i*len(use)/120])
		}
	}
	var m [3]float32
	most := -1
	for _, a := range sub {
		tol := max(3*noise, 0.06*norm3(c[a]), 4)
		tol2 := float32(tol * tol)
		n := 0
		for _, b := range sub {
			d0, d1, d2 := c[a][0]-c[b][0], c[a][1]-c[b][1], c[a][2]-c[b][2]
			if d0*d0+d1*d1+d2*d2 < tol2 {
				n++
			}
		}
		if n > most {
			most, m = n, c[a]
		}
	}
	for it := 0; it < 4; it++ {
		tol := max(3*noise, 0.06*norm3(m), 4)
		var t [3]float64
		n := 0
		for _, s := range use {
			if dist3(c[s], m) < tol {
				for k := 0; k < 3; k++ {
					t[k] += float64(c[s][k])
				}
				n++
			}
		}
		if n == 0 {
			return [3]float32{}, false
		}
		m = [3]float32{float32(t[0] / float64(n)), float32(t[1] / float64(n)), float32(t[2] / float64(n))}
	}
	return m, true
}

// growFace is the cells of the colour ref gives for each (within tol)
// joined to the seeds of that colour.
func growFace(c [][3]float32, inside []bool, seeds []int, w, h int, ref func(i int) [3]float32, tol float64) []int {
	in := make([]bool, w*h)
	var stack, out []int
	for _, s := range seeds {
		if dist3(c[s], ref(s)) < tol {
			in[s] = true
			stack = append(stack, s)
		}
	}
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		out = append(out, s)
		x, y := s%w, s/w
		for _, nb := range [4][2]int{{x - 1, y}, {x + 1, y}, {x, y - 1}, {x, y + 1}} {
			if nb[0] < 0 || nb[1] < 0 || nb[0] >= w || nb[1] >= h {
				continue
			}
			j := nb[1]*w + nb[0]
			if !in[j] && inside[j] && dist3(c[j], ref(j)) < tol {
				in[j] = true
				stack = append(stack, j)
			}
		}
	}
	return out
}

// fitPlane fits each channel of the cells of reg to a plane over the grid
// (least squares), shifted to give top at the region's middle: the face's
// colour where it is lit more or less.
func fitPlane(c [][3]float32, reg []int, w int, top [3]float32) (func(i int) [3]float32, bool) {
	var sx, sy, sxx, sxy, syy float64
	var b1, bx, by [3]float64
	for _, s := range reg {
		x, y := float64(s%w), float64(s/w)
		sx, sy = sx+x, sy+y
		sxx, sxy, syy = sxx+x*x, sxy+x*y, syy+y*y
		for k := 0; k < 3; k++ {
			v := float64(c[s][k])
			b1[k] += v
			bx[k] += v * x
			by[k] += v * y
		}
	}
	n := float64(len(reg))
	mx, my := sx/n, sy/n
	cxx, cxy, cyy := sxx/n-mx*mx, sxy/n-mx*my, syy/n-my*my
	det := cxx*cyy - cxy*cxy
	if n == 0 || det <= 1e-9 {
		return nil, false
	}
	var a, gx, gy [3]float64
	for k := 0; k < 3; k++ {
		m := b1[k] / n
		vx, vy := bx[k]/n-mx*m, by[k]/n-my*m
		gx[k] = (cyy*vx - cxy*vy) / det
		gy[k] = (cxx*vy - cxy*vx) / det
		// Anchored at the mode, not the mean: the region's mean holds its
		// blurred edges.
		a[k] = float64(top[k]) - gx[k]*mx - gy[k]*my
	}
	return func(i int) [3]float32 {
		x, y := float64(i%w), float64(i/w)
		return [3]float32{float32(a[0] + gx[0]*x + gy[0]*y), float32(a[1] + gx[1]*x + gy[1]*y), float32(a[2] + gx[2]*x + gy[2]*y)}
	}, true
}

// kiteSkew is how far from square (radians) the diagonals of a kite-shaped
// face are: a kite's are square to each other, and a view from off its
// normal turns them unless it is along one of them.
func kiteSkew(h [][2]float64) float64 {
	if len(h) < 4 {
		return 0
	}
	// The long diagonal: the hull's farthest pair.
	ia, ib, best := 0, 0, -1.0
	for i := range h {
		for j := i + 1; j < len(h); j++ {
			if d := sqd(h[i], h[j]); d > best {
				ia, ib, best = i, j, d
			}
		}
	}
	a, b := h[ia], h[ib]
	ux, uy := b[0]-a[0], b[1]-a[1]
	// The side corners: farthest from that diagonal on either side.
	lo, hi := 0.0, 0.0
	var pl, ph [2]float64
	for _, q := range h {
		c := (ux*(q[1]-a[1]) - uy*(q[0]-a[0]))
		if c < lo {
			lo, pl = c, q
		}
		if c > hi {
			hi, ph = c, q
		}
	}
	if lo == 0 || hi == 0 {
		return 0
	}
	vx, vy := ph[0]-pl[0], ph[1]-pl[1]
	cos := (ux*vx + uy*vy) / math.Sqrt((ux*ux+uy*uy)*(vx*vx+vy*vy))
	return math.Abs(math.Asin(math.Max(-1, math.Min(1, cos))))
}

func sqd(a, b [2]float64) float64 { return (a[0]-b[0])*(a[0]-b[0]) + (a[1]-b[1])*(a[1]-b[1]) }
