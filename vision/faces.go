package vision

import (
	"math"
	"slices"
)

// A d6 face's pips in face units: the pip offset from the centre is 1, so a
// face is the square |u|,|v| ≤ faceHalf.
var patterns = [7][][2]float64{
	1: {{0, 0}},
	2: {{-1, -1}, {1, 1}},
	3: {{-1, -1}, {0, 0}, {1, 1}},
	4: {{-1, -1}, {1, -1}, {1, 1}, {-1, 1}},
	5: {{-1, -1}, {1, -1}, {1, 1}, {-1, 1}, {0, 0}},
	6: {{-1, -1}, {1, -1}, {1, 0}, {1, 1}, {-1, 1}, {-1, 0}},
}

// Die-design ranges, in face units (pip offset = 1). A pip's radius is
// 0.2–0.6 of the offset (measured 0.29–0.57 on matteop65, 0.29–0.46 on
// rendered dice; until session 32 the floor was 0.15, and two touching
// dice's 1s in a washed-out photo made one 2 at 0.16); the face's half
// side is about six pip radii on the dice measured (1.8 offsets on the
// rendered dice, 2.8 on the matteop65 webcam dice, whose pips sit close
// to the centre). A 1's pip is usually larger: its face is taken as
// oneHalf of its radii.
const (
	halfPerPipR = 6.0
	oneHalf     = 4.0
	emptyIn     = 1.4 // no other dark spot may lie within |u|,|v| ≤ emptyIn
	minPipR     = 0.2
	maxPipR     = 0.62
	fitTol      = 0.35 // a pip must lie within this of its pattern place
)

// sixStretch is the range of a 6's column length over the 4's corners:
// dice differ in how far apart the pips of a 6's columns are (1 on many
// dice, about 1.4 on the matteop65 webcam dice).
var sixStretch = [2]float64{1, 1.6}

// minWeakContrast is the least contrast of a spot that is no clean pip
// but may complete a face (see faceHypotheses).
const minWeakContrast = 30

// variant is a pattern proposed for n pips.
type variant struct {
	n   int
	pat [][2]float64
}

// variants are the patterns proposed: every face, and the 6 also with its
// columns stretched within sixStretch (the fit then finds the stretch).
var variants = func() []variant {
	var out []variant
	for n := 2; n <= 6; n++ {
		out = append(out, variant{n, patterns[n]})
	}
	for _, sv := range []float64{1.25, 1.5} {
		out = append(out, variant{6, stretched(patterns[6], sv)})
	}
	return out
}()

// stretched returns pat with v scaled by sv.
func stretched(pat [][2]float64, sv float64) [][2]float64 {
	out := make([][2]float64, len(pat))
	for i, p := range pat {
		out[i] = [2]float64{p[0], p[1] * sv}
	}
	return out
}

// pattern returns the face's pips in its face units.
func (f *face) pattern() [][2]float64 {
	if f.sv == 0 || f.sv == 1 {
		return patterns[f.n]
	}
	return stretched(patterns[f.n], f.sv)
}

// face is one hypothesis: n pips forming a d6 face pattern, with the
// affine map from face units to working pixels: p = c + A·u.
type face struct {
	n      int
	pips   []int // indices into the pip list, in pattern order
	cx, cy float64
	A      m2
	resid  float64 // RMS distance of the pips from their places, face units
	fore   float64 // foreshortening of the face: minor/major singular value of A
	pipR   float64 // mean pip radius in face units
	half   float64 // estimated half side of the face, face units
	sv     float64 // a 6's column stretch (see sixStretch); 1 otherwise
	q      float64 // quality 0–1, used to choose and for confidence
	doubt  bool    // the pips may be read as another face (markOtherPairings, markRivals)
	cut    bool    // the photo's edge cuts the face (checkFace)
}

// toFace maps working pixels to face units.
func (f *face) toFace(x, y float64) (float64, float64, bool) {
	inv, ok := f.A.inv()
	if !ok {
		return 0, 0, false
	}
	u, v := inv.apply(x-f.cx, y-f.cy)
	return u, v, true
}

// toImage maps face units to working pixels.
func (f *face) toImage(u, v float64) (float64, float64) {
	x, y := f.A.apply(u, v)
	return f.cx + x, f.cy + y
}

// whitener returns W with W·(x-c) in units of pip radius for a pip of
// covariance c: a pip seen with that covariance becomes the unit disc.
func whitener(c [3]float64) m2 {
	w := symPow(c, -0.5)
	return m2{w.a / 2, w.b / 2, w.c / 2, w.d / 2}
}

// roundFrame is the roundness of two pips' mean shape from which the
// photo's own frame is not tried as well: it is near the whitened one, and
// the search costs the square of the pips' neighbours.
const roundFrame = 0.85

// isoWhitener is whitener without the shape: W·(x-c) in units of the
// radius of a round pip of c's area.
func isoWhitener(c [3]float64) m2 {
	det := c[0]*c[2] - c[1]*c[1]
	if det <= 0 {
		return whitener(c)
	}
	k := math.Pow(det, -0.25) / 2
	return m2{k, 0, 0, k}
}

// compatible tells whether two pips may lie on one face: similar size and
// shape (a face's pips are equal circles seen with the same tilt) and not
// further apart than the corners of one face.
func compatible(p, q *pip) bool {
	if p.light != q.light {
		return false
	}
	if r := p.r / q.r; r > 1.6 || r < 1/1.6 {
		return false
	}
	// Shape: q's covariance seen in p's whitened frame should be round.
	w := whitener(p.cov)
	if roundness(conj(w, q.cov)) < 0.45 {
		return false
	}
	wm := whitener([3]float64{(p.cov[0] + q.cov[0]) / 2, (p.cov[1] + q.cov[1]) / 2, (p.cov[2] + q.cov[2]) / 2})
	dx, dy := wm.apply(q.x-p.x, q.y-p.y)
	// Opposite corners are 2√2 pip offsets apart, 2√(1+sv²) on a 6 whose
	// columns are stretched by sv (sixStretch), and an offset is at most
	// 1/minPipR pip radii.
	return math.Hypot(dx, dy) <= 2*math.Hypot(1, sixStretch[1])/minPipR*1.1
}

// faceHypotheses proposes every set of pips that forms a d6 face pattern.
// Each good pip seeds the patterns in which it is the corner (-1,-1) and a
// compatible neighbour takes each other place in turn; the rest of the
// pattern must then be found where predicted.
func faceHypotheses(ps []pip) []face {
	var good []int
	for i := range ps {
		if ps[i].ok {
			good = append(good, i)
		}
	}
	// Compatible neighbours of each good pip. A spot that is a whole die
	// (see wholeDie) is a face of its own, never a pip among others.
	nb := make(map[int][]int, len(good))
	for a, i := range good {
		for _, j := range good[a+1:] {
			if !ps[i].whole && !ps[j].whole && compatible(&ps[i], &ps[j]) {
				nb[i] = append(nb[i], j)
				nb[j] = append(nb[j], i)
			}
		}
	}
	// Weak neighbours: roundish spots that are no clean pip (motion blur
	// merges a pip's ring with its neighbour's). One may complete a face
	// of four or more whose other pips are clean (a smeared 6 lost one).
	weak := make(map[int][]int)
	for k := range ps {
		if ps[k].ok || ps[k].whole || ps[k].elong < 0.5 || ps[k].ring-ps[k].core < minWeakContrast {
			continue
		}
		for _, i := range good {
			if !ps[i].whole && compatible(&ps[i], &ps[k]) {
				weak[i] = append(weak[i], k)
			}
		}
	}
	var out []face
	seen := map[string]bool{}
	key := func(n int, idx []int) string {
		s := slices.Clone(idx)
		slices.Sort(s)
		b := make([]byte, 0, 1+4*len(s))
		b = append(b, byte(n))
		for _, v := range s {
			b = append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
		}
		return string(b)
	}
	for _, i := range good {
		if f, ok := fitOne(ps, i); ok {
			out = append(out, f)
		}
		for _, j := range nb[i] {
			p, q := &ps[i], &ps[j]
			mc := [3]float64{(p.cov[0] + q.cov[0]) / 2, (p.cov[1] + q.cov[1]) / 2, (p.cov[2] + q.cov[2]) / 2}
			// Two frames: the one that makes the pips round (undoing a
			// face's slant), and the photo's own at the pips' scale, for
			// pips smeared by motion (their shape is no slant; whitening
			// by it shears the face: a blurred 6's rows were 27° askew).
			frames := []m2{whitener(mc)}
			if roundness(mc) < roundFrame {
				frames = append(frames, isoWhitener(mc))
			}
			for _, w := range frames {
				proposeFrom(ps, i, j, w, nb[i], weak[i], func(n int, idx []int) {
					kk := key(n, idx)
					if seen[kk] {
						return
					}
					seen[kk] = true
					if f, ok := fitFace(ps, n, idx); ok {
						out = append(out, f)
					}
				})
			}
		}
	}
	return out
}

// placed is a pip k at (x, y) in a frame (see proposeFrom).
type placed struct {
	k    int
	x, y float64
}

// place returns the pips ks in the frame w about pip o.
func place(ps []pip, o *pip, w m2, ks []int) []placed {
	out := make([]placed, 0, len(ks))
	for _, k := range ks {
		x, y := w.apply(ps[k].x-o.x, ps[k].y-o.y)
		out = append(out, placed{k, x, y})
	}
	return out
}

// nearest returns the pip of list nearest z and closer than within, or
// k = -1.
func nearest(list []placed, z complex128, within float64) placed {
	best := placed{k: -1}
	for _, l := range list {
		if d := math.Hypot(l.x-real(z), l.y-imag(z)); d < within {
			best, within = l, d
		}
	}
	return best
}

// proposeFrom hands emit every pattern (n pips, in pattern order) whose
// corner (-1,-1) is pip i and whose place b is its neighbour j, the rest
// found among i's neighbours nbs where predicted in the frame w (one of
// them may be a weak spot of weaks, for n ≥ 4).
func proposeFrom(ps []pip, i, j int, w m2, nbs, weaks []int, emit func(n int, idx []int)) {
	p, q := &ps[i], &ps[j]
	loc := place(ps, p, w, nbs)
	wloc := place(ps, p, w, weaks)
	jx, jy := w.apply(q.x-p.x, q.y-p.y)
	for _, vr := range variants {
		n, pat := vr.n, vr.pat
		for b := 1; b < n; b++ {
			// Similarity z = c·(u - u0) in complex numbers with z(u_b) = j.
			du := complex(pat[b][0]-pat[0][0], pat[b][1]-pat[0][1])
			c := complex(jx, jy) / du
			s := cmplxAbs(c)
			if s < 1/maxPipR || s > 1/minPipR*1.1 {
				continue
			}
			idx := make([]int, n)
			idx[0], idx[b] = i, j
			// Pips found so far, in pattern units from pat[0] and frame
			// pixels from i. Once three that are not in a line are found,
			// the rest are predicted by the affine map through them: pips
			// that are not quite round do not undo a face's slant in the
			// whitened frame, and the similarity's error grows with the
			// distance from i (a 6 seen sheared by 13° lost its far corner).
			us := [][2]float64{{0, 0}, {real(du), imag(du)}}
			xs := [][2]float64{{0, 0}, {jx, jy}}
			var aff affine
			ok, weakUsed := true, false
			for k := 1; k < n && ok; k++ {
				if k == b {
					continue
				}
				pu := [2]float64{pat[k][0] - pat[0][0], pat[k][1] - pat[0][1]}
				z := c * complex(pu[0], pu[1])
				if aff.ok {
					z = complex(aff.apply(pu))
				}
				best := nearest(loc, z, fitTol*s)
				if best.k < 0 && n >= 4 && !weakUsed {
					best = nearest(wloc, z, fitTol*s)
					weakUsed = best.k >= 0
				}
				if best.k < 0 || slices.Contains(idx[:k], best.k) {
					ok = false
					break
				}
				idx[k] = best.k
				us = append(us, pu)
				xs = append(xs, [2]float64{best.x, best.y})
				aff = fitAffine(us, xs)
			}
			if ok && !hasDup(idx) {
				emit(n, idx)
			}
		}
	}
}

// affine is a map x = t + A·u; ok is false when it could not be fitted.
type affine struct {
	A  m2
	t  [2]float64
	ok bool
}

func (a affine) apply(u [2]float64) (float64, float64) {
	x, y := a.A.apply(u[0], u[1])
	return a.t[0] + x, a.t[1] + y
}

// fitAffine fits x = t + A·u to matched points by least squares; it is not
// ok when the points u lie (nearly) on a line, which fixes no affine map.
func fitAffine(us, xs [][2]float64) affine {
	if len(us) < 3 {
		return affine{}
	}
	var mu, mx [2]float64
	n := float64(len(us))
	for i := range us {
		mu[0] += us[i][0] / n
		mu[1] += us[i][1] / n
		mx[0] += xs[i][0] / n
		mx[1] += xs[i][1] / n
	}
	var uu, uv, vv, xu, xv, yu, yv float64
	for i := range us {
		u, v := us[i][0]-mu[0], us[i][1]-mu[1]
		x, y := xs[i][0]-mx[0], xs[i][1]-mx[1]
		uu += u * u
		uv += u * v
		vv += v * v
		xu += x * u
		xv += x * v
		yu += y * u
		yv += y * v
	}
	g := m2{uu, uv, uv, vv}
	if g.det() <= 1e-3*(uu+vv)*(uu+vv) {
		return affine{}
	}
	gi, ok := g.inv()
	if !ok {
		return affine{}
	}
	a := (m2{xu, xv, yu, yv}).mul(gi)
	tx, ty := a.apply(mu[0], mu[1])
	return affine{A: a, t: [2]float64{mx[0] - tx, mx[1] - ty}, ok: true}
}

func hasDup(idx []int) bool {
	for a := range idx {
		for b := a + 1; b < len(idx); b++ {
			if idx[a] == idx[b] {
				return true
			}
		}
	}
	return false
}

func cmplxAbs(c complex128) float64 { return math.Hypot(real(c), imag(c)) }

// fitOne makes the hypothesis that pip i alone is a face showing 1. One
// pip fixes no face size, so a 1's face units are its pip's radii:
// A = 2·S^½ keeps the pip's tilt and makes it the unit disc.
func fitOne(ps []pip, i int) (face, bool) {
	p := &ps[i]
	s := symPow(p.cov, 0.5)
	f := face{n: 1, pips: []int{i}, cx: p.x, cy: p.y, A: m2{2 * s.a, 2 * s.b, 2 * s.c, 2 * s.d}}
	f.fore = p.elong
	f.pipR = 1
	f.half = oneHalf
	return f, true
}

// fitFace fits the pattern of n to the pips idx (in pattern order): an
// affine map for 4–6 pips, and for 2–3 pips (which do not fix an affine
// map) a similarity in the frame where the pips are round.
func fitFace(ps []pip, n int, idx []int) (face, bool) {
	pat := patterns[n]
	f := face{n: n, pips: idx}
	var mc [3]float64
	for _, k := range idx {
		for t := range mc {
			mc[t] += ps[k].cov[t] / float64(n)
		}
	}
	if n >= 4 {
		// Least squares p = c + A u; c is the image of the pattern's
		// centre (0,0).
		us := make([][2]float64, n)
		xs := make([][2]float64, n)
		for t, k := range idx {
			us[t] = pat[t]
			xs[t] = [2]float64{ps[k].x, ps[k].y}
		}
		aff := fitAffine(us, xs)
		if !aff.ok {
			return f, false
		}
		f.A = aff.A
		f.cx, f.cy = aff.apply([2]float64{0, 0})
	} else {
		// Whiten with the mean pip shape, fit a similarity there.
		w := whitener(mc)
		wi, ok := w.inv()
		if !ok {
			return f, false
		}
		var sx, sy float64
		for _, k := range idx {
			sx += ps[k].x
			sy += ps[k].y
		}
		cx, cy := sx/float64(n), sy/float64(n)
		// Pattern centroid is (0,0) for 2 and 3.
		var num complex128
		var den float64
		for t, k := range idx {
			x, y := w.apply(ps[k].x-cx, ps[k].y-cy)
			u := complex(pat[t][0], pat[t][1])
			num += complex(x, y) * complex(real(u), -imag(u))
			den += real(u)*real(u) + imag(u)*imag(u)
		}
		c := num / complex(den, 0)
		sim := m2{real(c), -imag(c), imag(c), real(c)}
		f.A = wi.mul(sim)
		f.cx, f.cy = cx, cy
	}
	inv, ok := f.A.inv()
	if !ok {
		return f, false
	}
	var r2 float64
	for t, k := range idx {
		u, v := inv.apply(ps[k].x-f.cx, ps[k].y-f.cy)
		r2 += (u-pat[t][0])*(u-pat[t][0]) + (v-pat[t][1])*(v-pat[t][1])
	}
	f.resid = math.Sqrt(r2 / float64(n))
	f.sv = 1
	if n == 6 {
		// An affine map fits a 6 of any column stretch; the stretch is the
		// one that makes its pips (circles on the face) roundest.
		best := -1.0
		base := f.A
		for sv := sixStretch[0]; sv <= sixStretch[1]+1e-9; sv += 0.05 {
			a := m2{base.a, base.b / sv, base.c, base.d / sv}
			ai, ok := a.inv()
			if !ok {
				continue
			}
			round := 1.0
			for _, k := range idx {
				round = min(round, roundness(conj(ai, ps[k].cov)))
			}
			if round > best {
				best, f.A, f.sv = round, a, sv
			}
		}
		if inv, ok = f.A.inv(); !ok {
			return f, false
		}
	}
	s1, s2 := f.A.svals()
	if s1 == 0 {
		return f, false
	}
	f.fore = s2 / s1
	// Pip radius in face units, from each pip's covariance seen through A⁻¹.
	var rs []float64
	for _, k := range idx {
		c := conj(inv, ps[k].cov)
		l1, l2 := eig2(c)
		if l2 <= 0 {
			return f, false
		}
		rs = append(rs, 2*math.Sqrt(math.Sqrt(l1*l2)))
	}
	slices.Sort(rs)
	lo, hi := rs[0], rs[len(rs)-1]
	f.pipR = (lo + hi) / 2
	f.half = min(max(halfPerPipR*f.pipR, 1.5), 3.5)
	// A face's pips are alike in size; of four or more, one may have
	// grown by merging with the die's edge out of focus (a green 4's
	// corner pip at 2.1 times its smallest was read as the 2 of a side).
	if n >= 4 && len(rs) >= 2 && rs[len(rs)-2]/lo <= 1.6 && hi/lo <= 2.2 {
		return f, true
	}
	if hi/lo > 1.6 {
		return f, false
	}
	return f, true
}
