package vision

import (
	"image"
	"math"
	"slices"
	"unsafe"

	"gocv.io/x/gocv"
)

// pip is a dark, compact spot that may be a pip: where it is, its shape as
// a second-moment ellipse, and how it stands out from its surroundings.
type pip struct {
	x, y       float64    // centre, working pixels
	cov        [3]float64 // covariance xx, xy, yy of its dark mass
	area       int        // pixels above the low threshold
	bbox       image.Rectangle
	core, ring float64 // grey of its darkest part and of the ring around it
	ringLow    float64 // darkest tenth of the ring
	r          float64 // equivalent disc radius from cov (2·det^¼)
	elong      float64 // minor/major axis ratio, 1 = round
	ok         bool    // passes the pip tests (shape, bright ring)
	light      bool    // a light pip on a dark die (greys are then inverted)
	// whole marks a spot that holds peaks of the other polarity: a die
	// too small for its pips to be found, seen whole (see wholeDie).
	whole bool
	// crowded marks a pip passed only with its ring away from the pips
	// beside it (see clearRings): a pip of a face of four or more.
	crowded bool
}

// pipParams are relative to the photo, not tuned per dataset.
type pipParams struct {
	kernel int // blackhat kernel side: larger than the largest pip
	low    uint8
	high   uint8
	local  gocv.Mat // neighbourhood for the half-height threshold
}

func pipParamsFor(w, h int) pipParams {
	k := max(w, h) / 24
	k |= 1
	return pipParams{kernel: max(k, 9), low: 18, high: 40}
}

// findPips returns the pip candidates of g: dark pips on light dice and
// light pips on dark dice.
// inv is g inverted.
func findPips(g, inv *grayImg) []pip {
	p := pipParamsFor(g.w, g.h)
	kernel := gocv.GetStructuringElement(gocv.MorphRect, image.Pt(p.kernel, p.kernel))
	defer kernel.Close()
	l := p.kernel/4 | 1
	p.local = gocv.GetStructuringElement(gocv.MorphRect, image.Pt(l, l))
	defer p.local.Close()
	dark := findSpots(g, kernel, p, false)
	light := findSpots(inv, kernel, p, true)
	clearRings(g, dark)
	clearRings(inv, light)
	return append(dark, light...)
}

// clearRings passes the round pips that failed only for the darkest
// tenth of their ring, when that ring, away from the one or two pips like
// them beside it, is bright all round: the pips of a small die's 6 lie
// closer than their rings' radius, and its middle pips' rings ran through
// their neighbours. They are marked crowded: a row of three such pips is
// also a 6's column whose other column was lost, no 3.
func clearRings(g *grayImg, ps []pip) {
	var buf [ringN]float64
	for i := range ps {
		c := &ps[i]
		if c.ok || c.elong < ringElong {
			continue
		}
		contrast := c.ring - c.core
		var near []*pip
		for j := range ps {
			q := &ps[j]
			if j != i && q.elong >= ringElong && q.r <= c.r*1.5 && q.r >= c.r/1.5 && math.Abs(q.core-c.core) <= contrast/3 &&
				math.Hypot(q.x-c.x, q.y-c.y) < 4*c.r {
				near = append(near, q)
			}
		}
		if len(near) == 0 || len(near) > 2 {
			continue
		}
		v := ringSamples(g, *c, buf[:0], func(x, y float64) bool {
			return slices.ContainsFunc(near, func(q *pip) bool { return math.Hypot(x-q.x, y-q.y) < 1.5*q.r+1 })
		})
		if len(v) < ringN/2 {
			continue
		}
		slices.Sort(v)
		d := *c
		d.ringLow = v[len(v)/10]
		if pipOK(d) {
			c.ok, c.crowded = true, true
		}
	}
}

// ringElong is the least roundness of a pip clearRings passes, and of the
// pips beside it whose places its ring leaves out.
const ringElong = 0.6

// inverted returns g with greys inverted, so light pips become dark.
func (g *grayImg) inverted() *grayImg {
	m := gocv.NewMat()
	gocv.BitwiseNot(g.mat, &m)
	pix, _ := m.DataPtrUint8()
	return &grayImg{mat: m, pix: pix, w: g.w, h: g.h, scale: g.scale, off: g.off}
}

// findSpots finds dark spots as the black-hat (closing minus image): how
// much darker a pixel is than the brightest surroundings within half a
// kernel, which is the die face for a pip. Each spot is measured on the
// grey image afterwards.
func findSpots(g *grayImg, kernel gocv.Mat, p pipParams, light bool) []pip {
	bhMat, bh, mask, err := spotMask(g.mat, kernel, p.local, p.low)
	defer bhMat.Close()
	if err != nil {
		return nil
	}
	sl, err := labelSpots(mask, g.w, g.h)
	defer sl.close()
	if err != nil {
		return nil
	}
	lab, st, n := sl.lab, sl.st, sl.n
	var dieSpots []int // too large for a pip, a die's size
	out := keepSpots(g, bh, lab, st, n, 0, image.Point{}, p.kernel, p, light, func(i, w, h, area int) {
		if dieSized(w, h, area, p) {
			dieSpots = append(dieSpots, i)
		}
	})
	next := int32(n)
	for _, id := range dieSpots {
		s := st[id*5 : id*5+5]
		box := image.Rect(int(s[0]), int(s[1]), int(s[0]+s[2]), int(s[1]+s[3]))
		out = append(out, spotsInDie(g, bh, lab, id, box, int(s[4]), &next, p, light)...)
	}
	return out
}

// spotMask returns the black-hat of m with kernel and the mask of its
// spots' pixels. A pixel is part of a spot when it is dark enough (low)
// and at least half as dark as the darkest spot within local: the
// half-height edge is the same for sharp and blurred pips, and pips of a 6
// that blur into each other at the low threshold stay apart. The caller
// closes bh; bhPix views its pixels.
func spotMask(m, kernel, local gocv.Mat, low uint8) (bh gocv.Mat, bhPix, mask []uint8, err error) {
	bh = gocv.NewMat()
	gocv.MorphologyEx(m, &bh, gocv.MorphBlackhat, kernel)
	lm := gocv.NewMat()
	defer lm.Close()
	gocv.Dilate(bh, &lm, local)
	if bhPix, err = bh.DataPtrUint8(); err != nil {
		return bh, nil, nil, err
	}
	lmPix, err := lm.DataPtrUint8()
	if err != nil {
		return bh, nil, nil, err
	}
	mask = make([]uint8, len(bhPix))
	for i, v := range bhPix {
		if v >= low && 2*int(v) >= int(lmPix[i]) {
			mask[i] = 255
		}
	}
	return bh, bhPix, mask, nil
}

// spotLabels are the 8-connected spots of a mask: a label per pixel (0:
// none) and, per label, its box and area (x, y, w, h, area), viewing the
// Mats that close releases.
type spotLabels struct {
	labels, stats gocv.Mat
	lab, st       []int32
	n             int
}

func (s *spotLabels) close() {
	s.labels.Close()
	s.stats.Close()
}

// labelSpots labels the spots of mask (w×h).
func labelSpots(mask []uint8, w, h int) (*spotLabels, error) {
	s := &spotLabels{labels: gocv.NewMat(), stats: gocv.NewMat()}
	m, err := gocv.NewMatFromBytes(h, w, gocv.MatTypeCV8UC1, mask)
	if err != nil {
		return s, err
	}
	defer m.Close()
	cents := gocv.NewMat()
	defer cents.Close()
	s.n = gocv.ConnectedComponentsWithStatsWithParams(m, &s.labels, &s.stats, &cents, 8, gocv.MatTypeCV32S, gocv.CCL_DEFAULT)
	if s.lab, err = int32s(s.labels); err != nil {
		return s, err
	}
	s.st, err = int32s(s.stats)
	return s, err
}

// keepSpots measures the spots labelled 1 to n-1 (stats st, boxes offset
// by off on g; label i is base+i in lab) that a kernel of side k fits, as
// pips of the given polarity; large is told of those it does not fit.
func keepSpots(g *grayImg, bh []uint8, lab, st []int32, n int, base int32, off image.Point, k int, p pipParams, light bool, large func(i, w, h, area int)) []pip {
	var out []pip
	for i := 1; i < n; i++ {
		s := st[i*5 : i*5+5]
		bx, by, bw, bhh, area := int(s[0])+off.X, int(s[1])+off.Y, int(s[2]), int(s[3]), int(s[4])
		if area > k*k/2 || bw > k-2 || bhh > k-2 {
			if large != nil {
				large(i, bw, bhh, area)
			}
			continue
		}
		if area < 4 {
			continue
		}
		c := measure(g, bh, lab, base+int32(i), image.Rect(bx, by, bx+bw, by+bhh), p)
		if c.area == 0 {
			continue
		}
		c.light = light
		c.whole = wholeDie(g, &c)
		out = append(out, c)
	}
	return out
}

// dieSized tells whether a spot too large for a pip is the size of a small
// die: out of focus, or turned so the kernel cannot fit in it, a die darker
// than the tray around it (a coloured die of light pips, inverted) is
// filled whole by the closing, and its pips merge with it.
func dieSized(w, h, area int, p pipParams) bool {
	return max(w, h) <= 3*p.kernel && 5*area >= 2*w*h
}

// spotsInDie looks for spots inside spot id (its box on the photo, its
// area) with a black-hat whose kernel fits the spot, as findSpots does on
// the photo. The spot's pixels in bh and lab are overwritten with the new
// black-hat and labels from *next on; they belong to no other spot.
func spotsInDie(g *grayImg, bh []uint8, lab []int32, id int, box image.Rectangle, area int, next *int32, p pipParams, light bool) []pip {
	// A pip is darker than the die it is on (see below): a spot with
	// nothing that much darker than its median grey is a die whose pips
	// are of the other polarity, or none (cheaper to see than to search).
	var hist [256]int
	least := uint8(255)
	for y := box.Min.Y; y < box.Max.Y; y++ {
		for x := box.Min.X; x < box.Max.X; x++ {
			if i := y*g.w + x; lab[i] == int32(id) {
				hist[g.pix[i]]++
				least = min(least, g.pix[i])
			}
		}
	}
	body := medianOf(&hist)
	if float64(least) > body-float64(p.low) {
		return nil
	}
	k := max(9, int(math.Sqrt(float64(area)))/3|1)
	roi := box.Inset(-k / 2).Intersect(image.Rect(0, 0, g.w, g.h))
	sub := g.mat.Region(roi)
	defer sub.Close()
	// A disc: it reaches further into the die's corners than a square
	// would at 45°, so they are not left as spots.
	kernel := gocv.GetStructuringElement(gocv.MorphEllipse, image.Pt(k, k))
	defer kernel.Close()
	local := gocv.GetStructuringElement(gocv.MorphRect, image.Pt(k/4|1, k/4|1))
	defer local.Close()
	sbhMat, sbh, mask, err := spotMask(sub, kernel, local, p.low)
	defer sbhMat.Close()
	if err != nil {
		return nil
	}
	w := roi.Dx()
	for y := roi.Min.Y; y < roi.Max.Y; y++ {
		for x := roi.Min.X; x < roi.Max.X; x++ {
			i, j := y*g.w+x, (y-roi.Min.Y)*w+x-roi.Min.X
			if lab[i] != int32(id) {
				mask[j] = 0
				continue
			}
			bh[i] = sbh[j]
			lab[i] = 0
		}
	}
	sls, err := labelSpots(mask, w, roi.Dy())
	defer sls.close()
	if err != nil {
		return nil
	}
	st, n := sls.st, sls.n
	base := *next - 1
	for j, v := range sls.lab {
		if v > 0 {
			lab[(j/w+roi.Min.Y)*g.w+j%w+roi.Min.X] = base + v
		}
	}
	*next += int32(max(n-1, 0))
	var out []pip
	for _, c := range keepSpots(g, bh, lab, st, n, base, roi.Min, k, p, light, nil) {
		// A pip is darker than the die it is on by half its contrast: a
		// dark spot ringed by a light mark on the region (the hole of a
		// key's "o") is no pip of it.
		if c.core <= body-(c.ring-c.core)/2 {
			out = append(out, c)
		}
	}
	return out
}

// measure computes a candidate's moments (weighted by how dark each pixel
// is) and its core and ring greys.
func measure(g *grayImg, bh []uint8, lab []int32, id int32, box image.Rectangle, p pipParams) pip {
	var sw, sx, sy, sxx, sxy, syy float64
	peak := uint8(0)
	core := 255.0
	for y := box.Min.Y; y < box.Max.Y; y++ {
		for x := box.Min.X; x < box.Max.X; x++ {
			i := y*g.w + x
			if lab[i] != id {
				continue
			}
			v := bh[i]
			peak = max(peak, v)
			core = min(core, float64(g.pix[i]))
			w := float64(v - p.low + 1)
			fx, fy := float64(x), float64(y)
			sw += w
			sx += w * fx
			sy += w * fy
			sxx += w * fx * fx
			sxy += w * fx * fy
			syy += w * fy * fy
		}
	}
	if peak < p.high || sw == 0 {
		return pip{}
	}
	c := pip{area: 0, bbox: box}
	c.x, c.y = sx/sw, sy/sw
	// A pixel is a unit square: add its own variance (1/12) so that tiny
	// spots do not collapse to zero size.
	c.cov = [3]float64{sxx/sw - c.x*c.x + 1.0/12, sxy/sw - c.x*c.y, syy/sw - c.y*c.y + 1.0/12}
	for y := box.Min.Y; y < box.Max.Y; y++ {
		for x := box.Min.X; x < box.Max.X; x++ {
			if lab[y*g.w+x] == id {
				c.area++
			}
		}
	}
	l1, l2 := eig2(c.cov)
	if l2 <= 0 {
		return pip{}
	}
	c.r = 2 * math.Sqrt(math.Sqrt(l1*l2))
	c.elong = math.Sqrt(l2 / l1)
	c.core = core
	c.ring, c.ringLow = ringGrey(g, c)
	c.ok = pipOK(c)
	return c
}

// ringGrey samples the grey on an ellipse twice the pip's size around it
// and returns its median and its darkest tenth.
func ringGrey(g *grayImg, c pip) (median, low float64) {
	var buf [ringN]float64
	v := ringSamples(g, c, buf[:0], nil)
	slices.Sort(v)
	return (v[ringN/2-1] + v[ringN/2]) / 2, v[ringN/10]
}

// ringN is the number of points ringSamples samples.
const ringN = 24

// ringSamples appends to v the grey at ringN points on the ellipse twice
// the pip's size around it, but those skip says (nil: none).
func ringSamples(g *grayImg, c pip, v []float64, skip func(x, y float64) bool) []float64 {
	const n = ringN
	// Axes of the pip ellipse.
	l1, l2 := eig2(c.cov)
	ang := eigAngle(c.cov)
	ca, sa := math.Cos(ang), math.Sin(ang)
	a, b := 2*math.Sqrt(l1), 2*math.Sqrt(l2) // semi-axes of the pip
	const k = 2.0
	// At least 1.5 px beyond the pip edge, so small pips' blur is skipped.
	ra, rb := max(k*a, a+1.5), max(k*b, b+1.5)
	for i := 0; i < n; i++ {
		t := 2 * math.Pi * float64(i) / n
		u, w := ra*math.Cos(t), rb*math.Sin(t)
		x := c.x + u*ca - w*sa
		y := c.y + u*sa + w*ca
		if skip == nil || !skip(x, y) {
			v = append(v, g.at(x, y))
		}
	}
	return v
}

// at returns the grey at (x, y), bilinear, clamped to the image.
func (g *grayImg) at(x, y float64) float64 {
	x = min(max(x, 0), float64(g.w-1))
	y = min(max(y, 0), float64(g.h-1))
	x0, y0 := int(x), int(y)
	x1, y1 := min(x0+1, g.w-1), min(y0+1, g.h-1)
	fx, fy := x-float64(x0), y-float64(y0)
	p := g.pix
	top := float64(p[y0*g.w+x0])*(1-fx) + float64(p[y0*g.w+x1])*fx
	bot := float64(p[y1*g.w+x0])*(1-fx) + float64(p[y1*g.w+x1])*fx
	return top*(1-fy) + bot*fy
}

// pipOK tells a pip from other dark spots: compact, not a thin line, and
// surrounded all round by a brighter surface (the die) — the darkest tenth
// of the ring must still be well above the pip's core.
func pipOK(c pip) bool {
	contrast := c.ring - c.core
	if contrast < 30 {
		return false
	}
	if c.elong < 0.3 {
		return false
	}
	// Filled: the pixel area is close to the ellipse area (rings, letters
	// and crossings are not).
	ell := math.Pi * c.r * c.r
	if fill := float64(c.area) / ell; fill < 0.5 || fill > 2.2 {
		return false
	}
	return c.ringLow-c.core >= 0.6*contrast
}

// medianOf returns the median grey of a histogram.
func medianOf(h *[256]int) float64 {
	n := 0
	for _, c := range h {
		n += c
	}
	for v, c := range h {
		if n -= 2 * c; n <= 0 {
			return float64(v)
		}
	}
	return 255
}

// int32s views a CV_32S Mat's data (gocv has no DataPtrInt32).
func int32s(m gocv.Mat) ([]int32, error) {
	b, err := m.DataPtrUint8()
	if err != nil {
		return nil, err
	}
	if len(b) < 4 {
		return nil, nil
	}
	return unsafe.Slice((*int32)(unsafe.Pointer(&b[0])), len(b)/4), nil
}

// eig2 returns the eigenvalues (largest first) of the symmetric 2x2 matrix
// [a b; b c] given as {a, b, c}.
func eig2(m [3]float64) (float64, float64) {
	t := (m[0] + m[2]) / 2
	d := math.Sqrt(max(0, (m[0]-m[2])*(m[0]-m[2])/4+m[1]*m[1]))
	return t + d, t - d
}

// eigAngle is the direction of the major axis.
func eigAngle(m [3]float64) float64 { return 0.5 * math.Atan2(2*m[1], m[0]-m[2]) }
