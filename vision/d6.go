package vision

import (
	"cmp"
	"image"
	"math"
	"slices"
	"sort"
)

// pipDie is a d6 read from its pips, in working pixels.
type pipDie struct {
	f      face
	conf   float64
	cocked bool
	null   bool
	// sidePips are the pips of the die's side faces seen beside its top.
	sidePips []int
	// die is the die-like region that vouches for a lone pip of another
	// polarity or contrast than the roll's (see lonesOnDice).
	die *blob
	// contested marks a 1 kept only because 1s with side faces outvoted
	// the polarity of the clear faces (see consistent): a region must
	// vouch for it (see vouchContested), or its face is unread.
	contested bool
}

// readPips finds pip dice in g: face hypotheses are checked against the
// image (nothing else dark inside the face, die-bright between the pips),
// overlapping ones resolved, and of the faces of one die the least
// foreshortened is taken as the up face. odd are the lone pips left out
// for being unlike the roll's pips (see consistent) or as specks (see
// dropSpecks).
func readPips(g *grayImg) (dice []pipDie, ps []pip, odd []pipDie) {
	inv := g.inverted()
	defer inv.close()
	ps = findPips(g, inv)
	hyps := faceHypotheses(ps)
	var valid, cut []face
	for _, f := range hyps {
		if f.n <= 3 && slices.ContainsFunc(f.pips, func(k int) bool { return ps[k].crowded }) {
			continue
		}
		gg := g
		if ps[f.pips[0]].light {
			gg = inv
		}
		if q := checkFace(gg, ps, &f); q > 0 {
			f.q = q
			valid = append(valid, f)
		} else if f.cut && f.n >= 2 {
			cut = append(cut, f)
		}
	}
	chosen := chooseFaces(valid)
	markOtherPairings(chosen, valid, ps)
	markUnalikeTwos(chosen, ps)
	markTwosInLine(chosen, ps)
	markGlints(g, chosen, ps)
	markGlare(g, chosen, ps)
	markThirdPips(g, inv, chosen, ps)
	markRivals(chosen, cut, bigger)
	markRivals(chosen, valid, fitsBetter)
	dice, specks := dropSpecks(dropRinging(upFaces(g, inv, ps, chosen), ps), ps)
	dice, odd = consistent(dice, ps)
	markWholeDice(dice, ps)
	return dice, ps, append(odd, specks...)
}

// markWholeDice makes unread the dice read as the lone pip of a 1 that is
// a whole die (pip.whole): a die too small for its own pips to be found,
// light on a dark tray or dark on a light one. They are boxed as the spot
// itself (a square of side s measures a radius of s/√3). It runs after
// consistent: beside dice of readable pips such a spot is left out as
// unlike theirs, and the die may be read from its own pips.
func markWholeDice(ds []pipDie, ps []pip) {
	for i := range ds {
		d := &ds[i]
		if d.f.n == 1 && ps[d.f.pips[0]].whole {
			d.null = true
			d.f.half = math.Sqrt(3) / 2
		}
	}
}

// wholeDieIn, wholeDieHole and wholeDarkHole are how far in a spot
// peaksIn looks (a share of its radius: a tiny 2's pips lie 0.7 out) and
// how high a peak, in shares of the spot's contrast, makes a light spot a
// whole die, and two of them a dark one (see wholeDie).
const (
	wholeDieIn    = 0.85
	wholeDieHole  = 0.6
	wholeDarkHole = 1.0
)

// wholeDie tells whether p, a spot dark on g, is a whole die too small for
// its pips to be found rather than a pip: its pips are peaks inside it
// where a painted pip is flat (see peaksIn). A light spot is a whole die
// with one peak of wholeDieHole of its contrast; a dark one needs two
// apart, each brighter than the tray around it (wholeDarkHole): a concave
// dark pip may hold a glint, and matteop65's 3,266 dark pips of read faces
// measure up to 0.49 but for three holding one (0.81–0.89, two of them
// with two peaks). Rendered light pips of random colours measure up to
// 0.11 (1,386 in 600 scenes); whole ivory dice of 16–31 pixels 0.80–2.16
// and of 13 pixels 0.57–1.26, every face; whole black dice on a light
// tray of 14–22 pixels as many peaks of 1.0–1.3 as they show pips (a 6
// of 14 pixels 3 or 4), so a black die's 1 still reads as 1.
func wholeDie(g *grayImg, p *pip) bool {
	if p.light {
		return len(peaksIn(g, p, wholeDieHole)) > 0
	}
	var tops []peak
	for _, a := range peaksIn(g, p, wholeDarkHole) {
		if !slices.ContainsFunc(tops, func(b peak) bool { return math.Hypot(a.x-b.x, a.y-b.y) < peakApart }) {
			tops = append(tops, a)
		}
	}
	return len(tops) >= 2
}

// peakApart is how far apart, in working pixels, two peaks in a spot are
// two (a tiny die's pips lie 3 or more apart).
const peakApart = 2.5

// peak is a pixel none of its neighbours outshines, and one of them is
// darker, inside a spot: h is how much brighter than the spot's core it
// is, in shares of the spot's contrast.
type peak struct{ x, y, h float64 }

// peaksIn returns the peaks of height least or more within wholeDieIn of
// p's radius from its middle on g, where p is dark, highest first (it
// runs for every spot found: the many lower peaks are not kept). A slope
// is no peak: a
// webcam's pip is shaded up to its edge, and the brightest pixel inside
// matteop65's pips lay at 0.6 of their contrast (its inverted copy, of
// light pips, then lost faces).
func peaksIn(g *grayImg, p *pip, least float64) []peak {
	r := wholeDieIn * p.r
	c := max(1, p.ring-p.core)
	var out []peak
	for y := max(1, int(math.Ceil(p.y-r))); y <= min(g.h-2, int(p.y+r)); y++ {
		for x := max(1, int(math.Ceil(p.x-r))); x <= min(g.w-2, int(p.x+r)); x++ {
			if math.Hypot(float64(x)-p.x, float64(y)-p.y) > r {
				continue
			}
			v := g.pix[y*g.w+x]
			top, lower := true, false
			for _, o := range [8]int{-g.w - 1, -g.w, -g.w + 1, -1, 1, g.w - 1, g.w, g.w + 1} {
				n := g.pix[y*g.w+x+o]
				top = top && n <= v
				lower = lower || n < v
			}
			if h := (float64(v) - p.core) / c; top && lower && h >= least {
				out = append(out, peak{float64(x), float64(y), h})
			}
		}
	}
	slices.SortFunc(out, func(a, b peak) int { return cmp.Compare(b.h, a.h) })
	return out
}

// dropSpecks takes out the dice read as a lone pip smaller than
// minLonePipR: most are specks of lint or crumbs on the tray (on
// burksbuilds' black felt, read for d6 with no d6 in the tray, 385 lone
// pips were answered as 1s, about 4.5 a photo, at radii of 1.1–1.5 in 9
// of 10). But a small die's 1 may be that small too: one 24 pixels across
// whose 1's pip is no larger than its other pips (rendered: 1.6), while
// matteop65's 150 1s lie at 3.0–7.2. So specks are kept out of consistent
// (they set no reference) and join the odd lone pips, to be read where a
// square die-like region vouches for them (lonesOnDice); lint lies on
// none. Dropped outright (session 27), such dice read every face but 1.
func dropSpecks(ds []pipDie, ps []pip) (kept, specks []pipDie) {
	for _, d := range ds {
		if d.f.n == 1 && ps[d.f.pips[0]].r < minLonePipR {
			specks = append(specks, d)
		} else {
			kept = append(kept, d)
		}
	}
	return kept, specks
}

// dropRinging drops the dice whose every pip is a small spot of the other
// polarity at the edge of a far larger pip of another die read from two
// or more pips (a lone light spot may be a whole die, a dark 1 inside
// it): coarse JPEG overshoots beside a dark pip into a light speck, and
// two such specks made a light-pipped 2 inside a white die's 2
// (matteop65's six_57 at JPEG quality 40), a second die where there is
// one.
func dropRinging(ds []pipDie, ps []pip) []pipDie {
	// rings tells whether p rings a pip of a die other than die i.
	rings := func(i int, p *pip) bool {
		for j, e := range ds {
			if j == i || e.f.n < 2 || e.null || ps[e.f.pips[0]].light == p.light {
				continue
			}
			for _, m := range e.f.pips {
				if q := &ps[m]; p.r < ringingR*q.r && math.Hypot(p.x-q.x, p.y-q.y) < ringingReach*q.r {
					return true
				}
			}
		}
		return false
	}
	out := ds[:0:0]
	for i, d := range ds {
		if !slices.ContainsFunc(d.f.pips, func(k int) bool { return !rings(i, &ps[k]) }) {
			continue // every pip rings another die's
		}
		out = append(out, d)
	}
	return out
}

// ringingR bounds a ringing speck's radius by the pip's it rings, and
// ringingReach its distance from the pip's centre, both in that pip's
// radii: six_57's specks are 0.35 of the pip, 1.3 radii out.
const ringingR, ringingReach = 0.6, 1.8

// minLonePipR is the least radius, in working pixels, of the pip of a die
// read as 1 with no die-like region to vouch for it (see dropSpecks).
const minLonePipR = 2.0

// markGlints makes doubtful a chosen 3 or 5 of light pips whose middle
// pip fades where the others have an edge (see fill): a glint of the light
// on a glossy die's middle passes for the middle pip of a light-pipped 2
// or 4. (A dark pip is no glint.) A reviewer's rendered glints: 1.13–1.16;
// painted pips 1.00–1.06, webcam pips of matteop65 (all dark) up to 1.06.
func markGlints(g *grayImg, chosen []face, ps []pip) {
	for i := range chosen {
		f := &chosen[i]
		if f.n != 3 && f.n != 5 || !ps[f.pips[0]].light {
			continue
		}
		mid := f.pips[1] // pattern order: a 3's middle is its 2nd pip, a 5's its 5th
		if f.n == 5 {
			mid = f.pips[4]
		}
		if fill(&ps[mid]) <= g.maxFill() {
			continue
		}
		edged := true
		for _, k := range f.pips {
			if k != mid && fill(&ps[k]) > g.maxFill() {
				edged = false
			}
		}
		f.doubt = f.doubt || edged
	}
}

// markGlare makes doubtful a chosen 2, 4 or 6 of dark pips whose middle
// (no pip there) is burnt out to white and brighter than the die, or
// holds a burnt-out spot clearly brighter than the rest of it: glare there
// may hide a 3's or 5's middle pip (a reviewer's rendered glare patches:
// middles 0.12–0.41 of the pip contrast brighter, peaking at 253–255;
// matteop65's real faces up to 0.26 brighter but never above 190). On a
// white die the middle can be no brighter than the die, and two 5s under
// a glare patch were read as 4 (their middles' peaks 15 and 20 grey
// levels above their mean; other faces that burnt out, in the glare set
// and 200 scenes of dice of any colours, at most 7.4).
func markGlare(g *grayImg, chosen []face, ps []pip) {
	for i := range chosen {
		f := &chosen[i]
		if f.n%2 != 0 || ps[f.pips[0]].light {
			continue
		}
		core, ring, r := pipMeans(ps, f)
		var sum, peak float64
		n := 0
		for dy := -r; dy <= r; dy++ {
			for dx := -r; dx <= r; dx++ {
				if dx*dx+dy*dy <= r*r {
					v := g.at(f.cx+dx, f.cy+dy)
					sum += v
					peak = max(peak, v)
					n++
				}
			}
		}
		if mean := sum / float64(max(n, 1)); n > 0 && peak >= glarePeak && (mean-ring >= glareShare*(ring-core) || peak-mean >= glareSpot) {
			f.doubt = true
		}
	}
}

// glarePeak is the grey from which a face's middle is burnt out, and
// glareShare how much brighter than the die (a share of the pips'
// contrast) it must be to be glare, or glareSpot how much brighter than
// the middle's mean (grey levels) its burnt-out peak.
const (
	glarePeak  = 250
	glareShare = 0.1
	glareSpot  = 10
)

// markThirdPips makes doubtful a chosen 2 with a third pip like its own
// one spacing on along its diagonal, on the same die (die-bright between):
// a 2 is two corners of its face, and beyond a corner is the die's edge,
// so the three are a 3 (or a 5's diagonal) whose face was not read: a
// light scratch near a 3's middle pip kept it from being read, and its
// middle and a corner made a 2 (a reviewer's sets, read as a tower does:
// scratched 3s read as 2 17 → 15 of 80, small dice 4 → 2 wrong). On
// matteop65 no 2 has such a pip (the one found there is unlike, 0.54).
func markThirdPips(g, inv *grayImg, chosen []face, ps []pip) {
	for i := range chosen {
		f := &chosen[i]
		if f.n != 2 {
			continue
		}
		a, b := &ps[f.pips[0]], &ps[f.pips[1]]
		gg := g
		if a.light {
			gg = inv
		}
		dx, dy := b.x-a.x, b.y-a.y
		spacing := math.Hypot(dx, dy)
		for k := range ps {
			q := &ps[k]
			if k == f.pips[0] || k == f.pips[1] || !q.ok || q.light != a.light || alike(a, q) < thirdPipAlike {
				continue
			}
			for _, e := range [][4]float64{{b.x + dx, b.y + dy, b.x, b.y}, {a.x - dx, a.y - dy, a.x, a.y}} {
				if math.Hypot(q.x-e[0], q.y-e[1]) <= 0.25*spacing &&
					dieBright(gg, ps, e[2], e[3], q.x, q.y, []int{f.pips[0], f.pips[1], k}, ringOf(ps, f)) {
					f.doubt = true
				}
			}
		}
	}
}

// thirdPipAlike is how alike (see alike) a third pip must be to a 2's,
// as a face's pips are (0.9 and more in the scratched 3s).
const thirdPipAlike = 0.8

// fill is a spot's area over the disc its spread makes: about 1 for a
// disc with an edge, more for a spot that fades (a highlight).
func fill(p *pip) float64 { return float64(p.area) / (math.Pi * p.r * p.r) }

// maxPipFill is the most fill a painted pip shows (rendered 1.00–1.06; a
// reviewer's soft glare 1.13–1.16).
const maxPipFill = 1.1

// enlargedPipFill is maxPipFill in a photo enlarged to minWorkSide: the
// interpolation softens every edge, and rendered 1s shrunk to 320x240
// and enlarged back show 1.09–1.12 (1.15 let a reviewer's shrunk glints
// through: 14 wrong faces in 100 scenes, 0 at 1.13).
const enlargedPipFill = 1.13

// maxFill is the most fill a painted pip shows in g.
func (g *grayImg) maxFill() float64 {
	if g.scale > 1 {
		return enlargedPipFill
	}
	return maxPipFill
}

// clearQuality is a clear difference in two faces' quality (checkFace).
const clearQuality = 0.3

// markRivals makes doubtful a chosen face that shares a pip with a rival
// that beats it. Two rivals are looked for: a face of other pips the image
// fits clearly better — the chosen one, chosen for its pips' number, may
// be a top's pips and a side's taken together (a "6" of a 4's pips and two
// of the side's below, quality 0.57, over the 4 at 0.98) — and a bigger
// face the photo's edge cuts, which is not read but whose pips are no
// smaller face of their own (a 2 at the edge read as the 1 of its upper
// pip).
func markRivals(chosen, rivals []face, beats func(f, h *face) bool) {
	for i := range chosen {
		f := &chosen[i]
		for j := range rivals {
			if h := &rivals[j]; beats(f, h) && sharesPip(f, h) {
				f.doubt = true
			}
		}
	}
}

// bigger: h has more pips than f.
func bigger(f, h *face) bool { return h.n > f.n }

// fitsBetter: h, of another number of pips, fits the image clearly better.
func fitsBetter(f, h *face) bool { return h.n != f.n && h.q >= f.q+clearQuality }

// sharesPip reports whether faces f and h have a pip in common.
func sharesPip(f, h *face) bool {
	return slices.ContainsFunc(f.pips, func(k int) bool { return slices.Contains(h.pips, k) })
}

// pairingMargin is how much more alike (see alike) the chosen 2's pips
// must be than the other pairing's: real 2s on matteop65 webcam photos
// differ by 0.26 or more, the 1s read as 2 by -0.02 and -0.13.
const pairingMargin = 0.15

// alike is how alike two pips' shapes are: the roundness of q seen in the
// frame that makes p round (1 for the same ellipse).
func alike(p, q *pip) float64 { return roundness(conj(whitener(p.cov), q.cov)) }

// markUnalikeTwos makes doubtful a chosen 2 whose pips differ in shape:
// a face's pips are seen with one tilt, and a 1's pip with a pip of its
// side face is no 2 (matteop65 and 13 perturbed copies of it: every 2 of
// two real pips at 0.78 or more, seven wrong 2s at 0.45–0.60).
func markUnalikeTwos(chosen []face, ps []pip) {
	for i := range chosen {
		f := &chosen[i]
		if f.n != 2 {
			continue
		}
		a, b := &ps[f.pips[0]], &ps[f.pips[1]]
		if min(alike(a, b), alike(b, a)) < minTwoAlike {
			f.doubt = true
		}
	}
}

// minTwoAlike is how alike (see alike) a 2's pips must be.
const minTwoAlike = 0.7

// blurAlike is how alike (see alike) the pips of a face of four or more
// must be for their shape to be taken for motion blur, not for pips that
// are no circles on the face (see checkFace). Rendered dice showing 4, 5
// and 6 under a 7-pixel streak: 5 of 36 read, now 26; matteop65: 934
// right (a shaken 6), and at 0.85, 933.
const blurAlike = 0.8

// markTwosInLine makes doubtful a chosen 2 whose line goes on, one gap
// further, to a pip like its own (as alike as a 2's pips must be, see
// minTwoAlike; clean, or a roundish spot blur left unclean): the corner
// and middle pips of a 3 whose other corner did not make the 3 (a speck
// on the die refused its face, or motion blur its corner pip). A 2's own
// line runs off its face there. The pip is not asked to be on the die,
// as the speck lies in the way. So too a larger spot as dark as the 2's
// pips that covers that place: the pip merged with something beside it
// (a small coloured die's corner pip with its edge, out of focus).
func markTwosInLine(chosen []face, ps []pip) {
	for i := range chosen {
		f := &chosen[i]
		if f.n != 2 {
			continue
		}
		for e := range 2 {
			a, b := &ps[f.pips[e]], &ps[f.pips[1-e]]
			x, y := 2*a.x-b.x, 2*a.y-b.y
			gap := math.Hypot(a.x-b.x, a.y-b.y)
			for k := range ps {
				s := &ps[k]
				if slices.Contains(f.pips, k) || s.light != a.light {
					continue
				}
				if d := math.Hypot(s.x-x, s.y-y); s.r > a.r && d <= s.r && s.core <= a.core+mergedDark*(a.ring-a.core) {
					f.doubt = true
				}
				if !s.ok && s.elong < 0.5 || math.Hypot(s.x-x, s.y-y) > fitTol*gap || s.r < 0.75*a.r || s.r > 1.33*a.r {
					continue
				}
				if min(alike(a, s), alike(s, a)) >= minTwoAlike && s.ring-s.core >= minPipContrastShare*(a.ring-a.core) {
					f.doubt = true
				}
			}
		}
	}
}

// mergedDark is how much lighter than a 2's pip, in shares of its
// contrast, a larger spot's core may be for it to hold a merged pip (see
// markTwosInLine).
const mergedDark = 0.25

// twinAlike is how alike (see alike) a pip must be to a 1's to be its
// twin on its die (see checkFace).
const twinAlike = 0.8

// markOtherPairings makes doubtful a chosen 2 that one of its pips also
// makes with a pip left alone (a 1 of its own, or no face): three pips
// of one die, seen at a slant, read as a 2 on top and a 1 on the side as
// well as a 1 on top and a 2 on the side (matteop65: two 1s read as 2).
//
// Which reading is right shows in the pips' shapes: a face's pips are
// seen with one tilt, the top's and a side's with two. The chosen 2
// stands when its two pips are clearly more alike than the other pair.
func markOtherPairings(chosen, valid []face, ps []pip) {
	alone := map[int]bool{}
	inFace := map[int]bool{}
	for _, f := range chosen {
		for _, k := range f.pips {
			inFace[k] = true
		}
		if f.n == 1 {
			alone[f.pips[0]] = true
		}
	}
	for i := range chosen {
		f := &chosen[i]
		if f.n != 2 {
			continue
		}
		for _, h := range valid {
			if h.n != 2 {
				continue
			}
			shared, other := 0, -1
			for _, k := range h.pips {
				if slices.Contains(f.pips, k) {
					shared++
				} else {
					other = k
				}
			}
			if shared != 1 || !(alone[other] || !inFace[other]) {
				continue
			}
			// The pips of one face are alike in shape (one tilt); the
			// chosen pairing stands when its pips are clearly more alike
			// than the other's.
			a, b := f.pips[0], f.pips[1]
			if slices.Contains(h.pips, a) {
				a, b = b, a // b is the shared pip
			}
			if alike(&ps[a], &ps[b]) < alike(&ps[b], &ps[other])+pairingMargin {
				f.doubt = true
			}
		}
	}
}

// pipZone is the share of a face's half side in which no pip like its
// own may lie.
const pipZone = 0.85

// minPipContrastShare is how faint a face's faintest pip may be compared
// with its clearest.
const minPipContrastShare = 0.65

// inFrame is the share of a face's half side (a guess from its pips) that
// must lie in the photo: 0.9 lost dice whose faces were whole in the
// photo, 0.6 let a keyboard's keys at matteop65's edge back in, and 0.7
// still let one key's light legend through as a 2 in noisy, dimmed and
// sharpened copies of dice_23. At 0.8 matteop65 and its altered copies
// read every die they read at 0.7 but one: a 1 cut by the photo's foot
// (dice_37, motion-blurred).
const inFrame = 0.8

// oneTwinFree is how far (in its pip's radii) a 1's pip must be from a
// pip twin to it (see checkFace): 5.5 lets a touching die's corner pip
// (1.6 half sides off) be unless the 1's pip is over 0.29 of its half
// side; 6 left a reviewer's rows of touching big-pipped 1s unread.
const oneTwinFree = 5.5

// bigSpot tells whether spot s is far larger than pips of radius r and
// contrast c and as clear (see checkFace's big): pips merged with what
// lies around them, not lint or a pip of its own. checkFace does not
// count one that is the face itself (see faceItself): a large coloured
// die turned 45°, darker than the tray in the inverted grey, leaves its
// corners as such spots (a green 3 was unread).
func bigSpot(s *pip, r, c float64) bool {
	return s.r >= bigSpotSize[0]*r && s.r <= bigSpotSize[1]*r && s.ring-s.core >= minPipContrastShare*c
}

// bigSpotSize bounds a big spot's radius in a face's pip radii, and
// bigReach is how far from a face of two or three pips (face units) one
// counts; for a 1, farTwinReach. Rendered dice of any colours, 30–56
// pixels, under 1–2 pixels of Gaussian blur (1,920 dice): wrong faces 7
// → 2, four right faces unread; matteop65 and its copies as before. At a
// reach of 3, not 2.5, TestReadPipsAdversarial's light-green 6 on a green
// die (its corner pips merged in pairs, 2.51–2.58 out) is unread, not 2;
// at 3.5 (session 30), a 4 whose two pips merged with its edge (about
// twice the others' radius), lying just past 3 units from the 2 its other
// side made: rendered blur probes (2,400 dice) 1 wrong → 0, 3 right
// unread.
var bigSpotSize = [2]float64{1.8, 4}

const bigReach = 3.5

// farTwinReach is how far (in its pip's radii) a 1's pip is doubtful with
// a twin on its die (see checkFace): a 2's pips lie 7–11 radii apart.
// matteop65 lost three 1s at 12, none at 10.
const farTwinReach = 10

// sixBridge tells whether spot s, at (u, v) in 6 f's face units, is the
// blur between two pips of one of its columns: midway between them and
// far fainter than the face's pips (contrast). A blurred or shaken photo
// joins the pips of a column with a grey smear that the finder takes for
// a spot of its own (matteop65's six_44.jpg: 31 grey levels against 135,
// midway between two pips 13 pixels apart; the 6 went unread). A 6 has
// the most pips, so no larger face can hide behind such a spot; faces of
// fewer pips are refused for it as before (a 4's side holds a 6's middle
// pip there).
func sixBridge(f *face, s *pip, u, v, contrast float64) bool {
	if f.n != 6 || s.ring-s.core >= bridgeContrast*contrast {
		return false
	}
	sv := f.sv
	if sv == 0 {
		sv = 1
	}
	return math.Abs(math.Abs(u)-1) <= bridgeOff && math.Abs(math.Abs(v)-sv/2) <= bridgeOff
}

// faceItself tells whether spot s is no darker than the face around its
// pips (ring, their ring grey; contrast, theirs): the face seen as a spot,
// not a mark on it. A small die darker than the tray around it (a
// coloured die of light pips, inverted) is filled by the black-hat's
// closing, and the half-height edge around its pips cuts the rest of it
// into spots as dark as the face.
func faceItself(s *pip, ring, contrast float64) bool {
	return s.core >= ring-faceTol*contrast
}

// faceTol is how much darker than a face's grey, in shares of its pips'
// contrast, a spot on it may be and still be the face itself.
const faceTol = 0.15

// pipSmear tells whether spot s, inside face f, is a smear of one of its
// pips: far fainter than the face's pips (contrast; see bridgeContrast)
// and touching one (centres within smearReach of their radii summed). A
// shaken photo draws a pip out into a streak that the finder may cut into
// the pip and a faint spot beside it (matteop65's three_29.jpg: 31 grey
// levels against 100, 7 pixels from a pip of radius 3.7; the 3 was
// missed). A spot touching a pip is no pip of a larger face, whose pips
// lie at least two of their diameters apart.
func pipSmear(ps []pip, f *face, s *pip, contrast float64) bool {
	if s.ring-s.core >= bridgeContrast*contrast {
		return false
	}
	for _, k := range f.pips {
		p := &ps[k]
		if math.Hypot(s.x-p.x, s.y-p.y) <= smearReach*(p.r+s.r) {
			return true
		}
	}
	return false
}

// smearReach is how far apart, in their radii summed, a pip and a faint
// spot may lie for the spot to be the pip's smear (see pipSmear).
const smearReach = 1.2

// bridgeContrast is the share of a 6's pip contrast below which a spot
// between two of its column's pips may be blur (see sixBridge), and
// bridgeOff how far, in face units, it may lie from their midpoint.
const (
	bridgeContrast = 0.4
	bridgeOff      = 0.25
)

// spotMinContrast is the contrast from which a dark spot inside a face
// makes the face hypothesis doubtful even if it is not a clean pip.
const spotMinContrast = 25

// checkFace tests a hypothesis against the image (inverted for light
// pips) and returns its quality (0: rejected).
func checkFace(g *grayImg, ps []pip, f *face) float64 {
	if f.n >= 3 && f.resid > 0.3 {
		return 0
	}
	if f.n >= 2 && (f.pipR < minPipR || f.pipR > maxPipR) {
		return 0
	}
	inv, ok := f.A.inv()
	if !ok {
		return 0
	}
	// Each pip round in the face plane: they are circles on the face.
	minRound := 1.0
	for _, k := range f.pips {
		minRound = min(minRound, roundness(conj(inv, ps[k].cov)))
	}
	// Motion blur draws every pip of a face out alike, which no slant
	// explains: a face of four pips or more, whose layout fixes its
	// frame, is as round on it as its pips are alike (see blurAlike).
	if f.n >= 4 && minRound < blurAlike {
		al := 1.0
		for a, i := range f.pips {
			for _, j := range f.pips[a+1:] {
				al = min(al, alike(&ps[i], &ps[j]), alike(&ps[j], &ps[i]))
			}
		}
		if al >= blurAlike {
			minRound = max(minRound, al)
		}
	}
	if f.n >= 2 && minRound < 0.5 {
		return 0
	}
	// Nothing else dark inside the face.
	core, ring, pipRad := pipMeans(ps, f)
	contrast := ring - core
	var mean pip
	if f.n == 1 {
		mean = ps[f.pips[0]]
	}
	twin := false
	big := 0 // spots far larger than the face's pips near it (see bigSpot)
	for k := range ps {
		if slices.Contains(f.pips, k) {
			continue
		}
		s := &ps[k]
		if s.ring-s.core < spotMinContrast || s.light != ps[f.pips[0]].light {
			continue
		}
		if f.n == 1 {
			// The die around a small die's 1, cut into a ring by the
			// half-height edge round its pip, is the face itself (a red
			// die of 24 pixels on dark felt, its white pip 1.5 pixels).
			if s.r > 2*mean.r && faceItself(s, ring, contrast) {
				continue
			}
			// One pip fixes no face size. Any spot within 2.6 pip radii is
			// too close for a 1's face; a spot shaped like this pip (same
			// tilt, similar size) within 4.5 radii is likely a pip of the
			// same face that the pattern missed.
			w := whitener(mean.cov)
			dx, dy := w.apply(s.x-mean.x, s.y-mean.y)
			d := math.Hypot(dx, dy)
			if d < 2.6 {
				return 0
			}
			round := roundness(conj(w, s.cov))
			if d < 4.5 && round > 0.5 && s.r > 0.4*mean.r {
				return 0
			}
			// Further, to twin pips: a pip of its size, round and as
			// clear, may be the next pip of a 3 or 5 whose other pips
			// the finder lost (a small die's corner pip read as 1; a
			// 3's pips lie 4.3–4.8 radii apart when the die is small):
			// the 1 is doubtful, not refused — a refused 1 no longer
			// rivals a scratched 4's other reading, and a touching
			// die's pip can be such a twin. Up to 1.6 times its size:
			// out of focus, a small coloured die's pips merge with its
			// edge and grow (a 3's middle pip at 1.48 times its corner's).
			if d < oneTwinFree && round > 0.7 && s.r > 0.75*mean.r && s.r < 1.6*mean.r &&
				s.ring-s.core >= minPipContrastShare*(mean.ring-mean.core) {
				twin = true
			}
			if d < farTwinReach && bigSpot(s, mean.r, mean.ring-mean.core) && !faceItself(s, mean.ring, mean.ring-mean.core) {
				big++
			}
			// Further on, to a twin on its die (die-bright all the way
			// to it, alike in shape, a clean pip): a 2 whose face a
			// speck on the die refused leaves two such 1s (a reviewer's
			// 2 read as 1).
			if d < farTwinReach && s.ok && round > twinAlike && s.r > 0.75*mean.r && s.r < 1.33*mean.r &&
				s.ring-s.core >= minPipContrastShare*(mean.ring-mean.core) &&
				dieBright(g, ps, mean.x, mean.y, s.x, s.y, []int{f.pips[0], k}, min(mean.ring, s.ring)) {
				twin = true
			}
			continue
		}
		u, v := inv.apply(s.x-f.cx, s.y-f.cy)
		if math.Abs(u) <= emptyIn && math.Abs(v) <= emptyIn && !sixBridge(f, s, u, v, contrast) && !pipSmear(ps, f, s, contrast) && !faceItself(s, ring, contrast) {
			return 0
		}
		if f.n <= 3 && math.Abs(u) <= bigReach && math.Abs(v) <= bigReach && bigSpot(s, pipRad, contrast) && !faceItself(s, ring, contrast) {
			big++
		}
		// A pip like the face's own anywhere on the face means the face
		// is part of a larger one (a column of a 6 is no 3) — a blurred
		// pip too, if it is roundish (not the lit edge of the die): the
		// top row of a 6 smeared by motion made a 2.
		lim := pipZone * f.half
		if (s.ok || s.elong >= 0.5) && f.n < 6 && math.Abs(u) <= lim && math.Abs(v) <= lim &&
			s.ring-s.core >= minPipContrastShare*contrast && s.r > pipRad/1.6 && s.r < pipRad*1.6 {
			return 0
		}
	}
	// The whole face in the photo: a "face" the frame cuts is no die to
	// read (webcam photos: keys of a keyboard at the edge, with light
	// marks, made a 2). Its pips still belong to it (see markRivals).
	for _, c := range [][2]float64{{-1, -1}, {1, -1}, {1, 1}, {-1, 1}} {
		x, y := f.toImage(c[0]*inFrame*f.half, c[1]*inFrame*f.half)
		if x < 0 || y < 0 || x > float64(g.w-1) || y > float64(g.h-1) {
			f.cut = true
			return 0
		}
	}
	// Die-bright between the pips: sample the face away from the pips and
	// compare with the pips' own contrast.
	lo, hi := math.Inf(1), 0.0
	for _, k := range f.pips {
		c := ps[k].ring - ps[k].core
		lo, hi = min(lo, c), max(hi, c)
	}
	// The pips of one face are alike: a pip of a side face, seen edge-on,
	// is fainter than those of the up face.
	if lo < minPipContrastShare*hi {
		return 0
	}
	if contrast <= 0 {
		return 0
	}
	var vals []float64
	pat := f.pattern()
	rr := max(f.pipR, 0.2) * 1.7
	lim := 1.35
	if f.n == 1 {
		lim = f.pipR * 2.4
	}
	// A 9x9 grid: a 6 of large (blurred) pips and long columns left
	// fewer than 8 of a 7x7 grid's points between its pips.
	const steps = 9
	for a := 0; a < steps; a++ {
		for b := 0; b < steps; b++ {
			u := -lim + 2*lim*float64(a)/(steps-1)
			v := -lim + 2*lim*float64(b)/(steps-1)
			near := false
			for _, p := range pat {
				if math.Hypot(u-p[0], v-p[1]) < rr {
					near = true
					break
				}
			}
			if near {
				continue
			}
			x, y := f.toImage(u, v)
			if x < 0 || y < 0 || x > float64(g.w-1) || y > float64(g.h-1) {
				return 0 // face runs off the photo
			}
			vals = append(vals, g.at(x, y))
		}
	}
	if len(vals) < 8 {
		return 0
	}
	if f.n <= 3 {
		// Two or three pips fix little of a face: the pips of two dice
		// side by side, or of a die's top and its side, can fit. Between
		// one die's pips it is die-bright all the way; between two dice
		// there is a gap or a shadow.
		// Light pips are found in the inverted grey, where a dark tray
		// is lighter than the die: two dice's light pips across it fit a
		// 2 as well (a purple die's pip and a 1's beside it).
		hi := math.Inf(1)
		if ps[f.pips[0]].light {
			hi = ring + trayLighter*contrast
		}
		for t := 1; t < f.n; t++ {
			a, b := &ps[f.pips[t-1]], &ps[f.pips[t]]
			if !dieBright(g, ps, a.x, a.y, b.x, b.y, f.pips, ring) || !noLighter(g, ps, a.x, a.y, b.x, b.y, f.pips, hi) {
				return 0
			}
		}
	}
	slices.Sort(vals)
	low := vals[len(vals)/20]
	// The darkest sample between the pips must be far nearer the die's
	// brightness than the pips'.
	uni := (low - core) / contrast
	if uni < 0.55 {
		return 0
	}
	// Quality: fit, roundness, uniformity, contrast.
	q := 1.0
	if f.n >= 3 {
		q *= 1 - f.resid/0.3*0.5
	}
	q *= min(1, minRound/0.8)
	q *= min(1, uni/0.8)
	q *= min(1, contrast/60)
	// Two or more spots of the face's polarity, as clear as its pips and
	// far larger, near a face of one to three pips: out of focus, a
	// coloured die's light pips near its edge merge with the dark tray's
	// glow around them (in the inverted grey) into such spots, and the
	// pips left alone made a 5 read as 1 and a 6 as 2. Near a 2 or 3 one
	// is enough: a light-green 6's other column merged into one spot and
	// the 2 of the pips left was answered.
	f.doubt = f.doubt || twin || big >= 2 || f.n >= 2 && big >= 1
	return max(q, 1e-6)
}

// upFaces picks, of faces that belong to one die, the up face. Two faces
// are of one die when they are close (their centres less than their half
// sides apart, with a margin) and die-bright between them. Of such faces
// the clearly less foreshortened one is the up face (the camera looks down
// on the tray, so the sides are seen edge-on); when their foreshortening is
// alike, the camera looks down at a slant, and the up face is the one
// further up the photo: a camera tilted down with the horizon up (the way
// webcams and tower cameras stand) sees the sides that face it, below each
// die's top. Faces of one die that neither rule orders make it null.
func upFaces(g, inv *grayImg, ps []pip, fs []face) []pipDie {
	n := len(fs)
	side := make([]bool, n)
	ambiguous := make([]bool, n)
	sides := make([][]int, n) // the faces found to be each face's sides
	same := make([][]bool, n)
	for i := range same {
		same[i] = make([]bool, n)
	}
	for i := range fs {
		for j := i + 1; j < n; j++ {
			if sameDie(g, inv, ps, &fs[i], &fs[j]) {
				same[i][j], same[j][i] = true, true
			}
		}
	}
	down := viewDown(fs, same)
	for i := range fs {
		for j := i + 1; j < n; j++ {
			if !same[i][j] {
				continue
			}
			switch upOfPips(ps, &fs[i], &fs[j], down) {
			case 1:
				side[j] = true
				sides[i] = append(sides[i], j)
			case -1:
				side[i] = true
				sides[j] = append(sides[j], i)
			default:
				ambiguous[i], ambiguous[j] = true, true
			}
		}
	}
	freeSides(side, sides, same)
	// A face seen this edge-on is the side of a die whose up face was not
	// found (or a flat spot on something else): not a die to report —
	// unless there are several tops and none is seen squarer (every pip
	// drawn out alike: motion blur across the photo, matteop65's smeared
	// 3s). One such face alone may be marks on another kind of die.
	upFore := minUpFore
	var best float64
	tops := 0
	for i, f := range fs {
		if !side[i] && f.n >= 2 {
			best = max(best, f.fore)
			tops++
		}
	}
	if tops >= 2 {
		upFore = min(upFore, best-clearFore)
	}
	var out []pipDie
	for i, f := range fs {
		if side[i] || f.fore < upFore && !lowOne(fs, i, sides[i]) {
			continue
		}
		d := pipDie{f: f, conf: confidence(f)}
		// A cube shows the camera its top and at most two sides: more
		// "sides" around a face are a pile of dice, not this die's.
		// And a top and a side are not both seen near square on: two
		// such "faces" are pieces of one (two sides of a rendered 4 made
		// two 2s).
		if len(sides[i]) <= 2 {
			for _, j := range sides[i] {
				if topAndSide(&f, &fs[j]) {
					d.sidePips = append(d.sidePips, fs[j].pips...)
				}
			}
		}
		// A lone pip says nothing of its die but itself: one that is not
		// clean (see checkFace's quality) may be what blur left of a 3
		// or 5 whose corner pips faded into the die's edge.
		if ambiguous[i] || f.doubt || f.n == 1 && f.q < minOneQuality {
			d.null = true
		}
		out = append(out, d)
	}
	markCocked(out)
	markOrphans(out, ps)
	return out
}

// lowOne reports whether face i, a lone pip seen flatter than minUpFore,
// is still a die's top: a face of several pips of its die was found its
// side (sides, see upOf), seen with it as a top and a side can be. A
// camera lower than matteop65's sees every top that flat (matteop65
// squashed to 0.65 of its height: 60 of its 1s were lost), and when the
// dice all show 1 no top of several pips lowers upFaces' bar. Faces of
// several pips seen that flat, and lone pips whose only sides are lone
// pips, stay unread: in that copy they were a side 4, a side 6 and a
// keyboard's legend.
func lowOne(fs []face, i int, sides []int) bool {
	f := &fs[i]
	if f.n != 1 || f.fore < minLowOneFore {
		return false
	}
	for _, j := range sides {
		if fs[j].n >= 2 && topAndSide(f, &fs[j]) {
			return true
		}
	}
	return false
}

// minLowOneFore is the flattest a 1 may be seen and be read as a top by
// lowOne: a camera tilted 70° from looking straight down.
const minLowOneFore = 0.35

// viewDown is the photo's direction toward the camera's foot, along which
// a slanted camera sees a die's sides below its top: straight down the
// photo (a camera upright), unless the top and side faces of the dice
// that their foreshortening alone orders say otherwise — from at least
// minDownPairs tops (a top with two sides counts once), agreeing on the
// whole (their mean direction at least half as long as each), and turned
// over 60° from upright (a camera on its side or upside down: matteop65
// turned 180° had 60 dice missed and 33 sides answered as tops; now 48
// and 26, turned 90° and 270° a little better too, upright unchanged).
// One top was too few: a die's side seen squarer than its top (a leaning
// die) turned three photos' dice over.
func viewDown(fs []face, same [][]bool) [2]float64 {
	upright := [2]float64{0, 1}
	var sx, sy float64
	tops := map[int]bool{} // the squarer faces of the pairs: one a die
	for i := range fs {
		for j := i + 1; j < len(fs); j++ {
			t, s := i, j
			if !same[t][s] || fs[t].n < 2 || fs[s].n < 2 || min(fs[t].q, fs[s].q) < minDownQuality || math.Abs(fs[t].fore-fs[s].fore) <= sureFore {
				continue
			}
			if fs[s].fore > fs[t].fore {
				t, s = s, t
			}
			dx, dy := fs[s].cx-fs[t].cx, fs[s].cy-fs[t].cy
			l := math.Hypot(dx, dy)
			if l == 0 {
				continue
			}
			sx, sy = sx+dx/l, sy+dy/l
			tops[t] = true
		}
	}
	k := len(tops)
	l := math.Hypot(sx, sy)
	if k < minDownPairs || l < 0.5*float64(k) || sy/l > 0.5 {
		return upright
	}
	return [2]float64{sx / l, sy / l}
}

// minDownPairs is the least number of dice showing a clear top and side
// that turn viewDown from upright.
const minDownPairs = 2

// minDownQuality is the least quality (checkFace) of the faces of a pair
// that viewDown counts: in matteop65's dice_46 washed out (a probe), a
// 2 made of a die's side pips (0.49) with its top, and two sides of
// another die, turned the view and two sides were answered as tops. On
// matteop65 turned 90°, 180° and 270° it changes no die (leaving out
// faces in doubt instead lost three there).
const minDownQuality = 0.6

// freeSides undoes side[j] when every face j was found a side of is
// itself the side of another die's top: two dice touching, the front
// face of one beside the top of the die before it (matteop65: a 3 on top
// taken for the side of the die behind's side face). sides[i] lists the
// faces found to be i's sides; same[i][j] says i and j are of one die.
func freeSides(side []bool, sides [][]int, same [][]bool) {
	n := len(side)
	over := make([][]int, n)
	for i, js := range sides {
		for _, j := range js {
			over[j] = append(over[j], i)
		}
	}
	var free []int
	for j := range n {
		if !side[j] {
			continue
		}
		grounded := true // every face over j is the side of a top not of j's die
		for _, i := range over[j] {
			top := false
			for _, k := range over[i] {
				if !side[k] && !same[k][j] {
					top = true
				}
			}
			grounded = grounded && top
		}
		if grounded {
			free = append(free, j)
		}
	}
	for _, j := range free {
		side[j] = false
	}
}

// orphanReach is how far from a face's centre, in its half sides, pips are
// looked at by markOrphans: past the corners of a missed-pip 6 seen as a 3.
const orphanReach = 1.8

// oneOrphanElong is the least roundness of a spot as large as a 1's pip
// that makes the 1 doubtful (see markOrphans): the green 4's merged pips
// were 0.57 and 0.59; other orphans must be rounder than 0.6.
const oneOrphanElong = 0.45

// orphanEdge is how far out, in the face's half sides, a pip may lie and
// still be on the face (its half side is a guess from the pip size): on
// matteop65 the side faces' pips lie 1.53 half sides out or more, and the
// other half of a slanted rendered 4 lay 1.10–1.36 out.
const orphanEdge = 1.45

// oneSideEdge is orphanEdge for a 1, whose face is a guess from its pip
// (oneHalf of its radii): matteop65's 1s see their side faces' pips 2.4–2.9
// such half sides out; a 3's other pips lie within about 2 of a corner.
const oneSideEdge = 2.0

// markOrphans makes doubtful (null) a face with two or more pips beside it
// that belong to no face and look like its own (same polarity, round,
// alike in size and contrast): the rest of a bigger face the pattern
// missed. A 6 whose one pip is lost in glare otherwise reads as the 3 of
// its other diagonal (matteop65: five sixes read as 3). The pips of the
// die's own side faces, past the edge of its top, are no such rest
// (matteop65: seven dice seen at a slant were left unread for them).
func markOrphans(ds []pipDie, ps []pip) {
	used := map[int]bool{}
	for _, d := range ds {
		for _, k := range d.f.pips {
			used[k] = true
		}
	}
	for i := range ds {
		f := &ds[i].f
		if f.n >= 6 || ds[i].null {
			continue
		}
		core, ring, r := pipMeans(ps, f)
		c := ring - core
		light := ps[f.pips[0]].light
		reach := orphanReach * f.halfPx()
		alike, past := 0, 0
		edge := orphanEdge
		if f.n == 1 {
			edge = oneSideEdge
		}
		for k, p := range ps {
			if used[k] || !p.ok || p.light != light || p.r > r*1.6 || p.ring-p.core < minPipContrastShare*c {
				continue
			}
			if math.Hypot(p.x-f.cx, p.y-f.cy) > reach {
				continue
			}
			// A 1's pip is a die's largest: one as large beside it, not
			// of a side face, makes the 1 a pip of a bigger face, even
			// drawn out (out of focus a green 4's pips merged with its
			// edge, and the one left round was answered as 1).
			if f.n == 1 && p.r >= r && p.elong >= oneOrphanElong && !slices.Contains(ds[i].sidePips, k) {
				alike += 2
				continue
			}
			if p.elong < 0.6 || p.r < r/1.6 {
				continue
			}
			// The rest of a bigger face lies on this face; the pips of a
			// die's side face (seen below its top at a slant) lie past
			// the top's edge.
			if slices.Contains(ds[i].sidePips, k) {
				if u, v, ok := f.toFace(p.x, p.y); ok && max(math.Abs(u), math.Abs(v)) > edge*f.half {
					past++
					continue
				}
				if f.n == 1 {
					// A lone pip's face size is a guess from the pip: a
					// "side" on it may be the rest of its own face (the
					// other two pips of a scratched 3), and then all its
					// pips count.
					alike += past
					past, edge = 0, math.Inf(1)
				}
			}
			alike++
		}
		if alike >= 2 {
			ds[i].null = true
		}
	}
}

// halfPx is the face's half side in working pixels, unforeshortened.
func (f *face) halfPx() float64 {
	s1, _ := f.A.svals()
	return f.half * s1
}

// sameDie tells whether faces f and h are two faces of one die.
func sameDie(g, inv *grayImg, ps []pip, f, h *face) bool {
	// A die shows one 1: two lone pips alike in size and contrast, their
	// faces (guessed from the pips) clear of each other, are two dice,
	// whatever lies between them (matteop65's dice_20 blurred: the
	// front die of a pile of 1s was taken for a side of the die beside
	// it, and its own side 2 was answered in its place). A smaller and
	// fainter one may be a side's pip (see upOfPips): in dice_46 blurred by
	// motion, a side 3's corner pip.
	d := math.Hypot(f.cx-h.cx, f.cy-h.cy)
	if f.n == 1 && h.n == 1 && d >= f.halfPx()+h.halfPx() {
		cf, gf, rf := pipMeans(ps, f)
		ch, gh, rh := pipMeans(ps, h)
		if min(rf, rh) >= sideR*max(rf, rh) && min(gf-cf, gh-ch) >= sideContrast*max(gf-cf, gh-ch) {
			return false
		}
	}
	light := ps[f.pips[0]].light
	if light != ps[h.pips[0]].light {
		return false
	}
	if light {
		g = inv
	}
	if d >= sameDieReach*(f.halfPx()+h.halfPx()) {
		return false
	}
	// Die-bright all the way between them: two dice have a gap or a shadow
	// between their faces, the faces of one die do not. The die's
	// brightness is the darker face's (a side in shade is still the die),
	// so the answer does not hang on which face is f.
	return dieBright(g, ps, f.cx, f.cy, h.cx, h.cy, append(slices.Clip(f.pips), h.pips...), min(ringOf(ps, f), ringOf(ps, h)))
}

// ringOf is the mean brightness around f's pips: the die's face.
func ringOf(ps []pip, f *face) float64 {
	_, ring, _ := pipMeans(ps, f)
	return ring
}

// pipMeans are the means of f's pips' core and ring grey and radius
// (working pixels).
func pipMeans(ps []pip, f *face) (core, ring, r float64) {
	for _, k := range f.pips {
		core += ps[k].core
		ring += ps[k].ring
		r += ps[k].r
	}
	n := float64(f.n)
	return core / n, ring / n, r / n
}

// dieBright reports whether g is at least sameDieBright of the die's
// brightness ring at every pixel of the line from (ax,ay) to (bx,by),
// away from the pips near.
func dieBright(g *grayImg, ps []pip, ax, ay, bx, by float64, near []int, ring float64) bool {
	return alongLine(g, ps, ax, ay, bx, by, near, func(v float64) bool { return v >= sameDieBright*ring })
}

// alongLine reports whether ok holds for g at every pixel of the line
// from (ax,ay) to (bx,by) that is not within two radii of a pip near.
func alongLine(g *grayImg, ps []pip, ax, ay, bx, by float64, near []int, ok func(float64) bool) bool {
	steps := max(16, int(math.Hypot(bx-ax, by-ay)))
	for t := 1; t < steps; t++ {
		x := ax + (bx-ax)*float64(t)/float64(steps)
		y := ay + (by-ay)*float64(t)/float64(steps)
		nearPip := false
		for _, k := range near {
			if math.Hypot(x-ps[k].x, y-ps[k].y) < 2*ps[k].r {
				nearPip = true
				break
			}
		}
		if !nearPip && !ok(g.at(x, y)) {
			return false
		}
	}
	return true
}

// noLighter reports whether g is at most hi at every pixel of the line
// from (ax,ay) to (bx,by), away from the pips near.
func noLighter(g *grayImg, ps []pip, ax, ay, bx, by float64, near []int, hi float64) bool {
	return alongLine(g, ps, ax, ay, bx, by, near, func(v float64) bool { return v <= hi })
}

// trayLighter is how much lighter than a face of light pips, in shares of
// their contrast, the inverted grey between its pips may be (see
// checkFace).
const trayLighter = 0.3

// Reach and brightness of one die's faces (see sameDie).
const (
	sameDieReach  = 1.2
	sameDieBright = 0.75
)

// upOfPips is upOf, but a lone pip under tinyOne of the other face's
// pips' radius is a side's pip, never the top over them: a die's 1 is as
// large as its other pips or larger, and a side's pips, seen edge-on,
// are smaller. matteop65: a speck at a 3's side (radius 1.4 against
// 3.8–4.1, seen rounder) was taken for the top and the 3 was missed; a
// speck beside a 2 (1.5 against 3.8) left it unread.
func upOfPips(ps []pip, f, h *face, down [2]float64) int {
	cf, gf, rf := pipMeans(ps, f)
	ch, gh, rh := pipMeans(ps, h)
	switch {
	case f.n == 1 && rf < tinyOne*rh:
		return -1
	case h.n == 1 && rh < tinyOne*rf:
		return 1
	}
	// Faces alike in foreshortening: a side's pips, seen edge-on and less
	// lit, are smaller and fainter than the top's, wherever the side lies
	// (matteop65's six_54: a 3's side 2 above it, its pips 0.77 of the 3's
	// radius and 0.62 of their contrast, had made the 3 a side).
	if math.Abs(f.fore-h.fore) <= sureFore && f.n >= 2 && h.n >= 2 {
		switch {
		case rh < sideR*rf && gh-ch < sideContrast*(gf-cf):
			return 1
		case rf < sideR*rh && gf-cf < sideContrast*(gh-ch):
			return -1
		}
	}
	return upOf(f, h, down)
}

// sideR and sideContrast are the shares of a face's pip radius and
// contrast under which the pips of another face of its die, alike in
// foreshortening, make that face its side (see upOfPips).
const sideR, sideContrast = 0.85, 0.75

// tinyOne is the share of a face's pip radius under which a lone pip of
// the same die is no top (see upOfPips).
const tinyOne = 0.5

// upOf tells which of two faces of one die is up: 1 for f, -1 for h, 0
// when neither can be told.
func upOf(f, h *face, down [2]float64) int {
	df := f.fore - h.fore
	sure := sureFore
	if f.n == 1 || h.n == 1 {
		sure = clearFore
	}
	switch {
	case df > sure:
		return 1
	case df < -sure:
		return -1
	}
	// Slanted view: the up face is further from the camera's foot than
	// the sides (further up the photo, the camera upright).
	dy := (h.cx-f.cx)*down[0] + (h.cy-f.cy)*down[1]
	lim := 0.3 * min(f.halfPx(), h.halfPx())
	switch {
	case dy > lim:
		return 1
	case dy < -lim:
		return -1
	case df > clearFore:
		return 1
	case df < -clearFore:
		return -1
	}
	return 0
}

// sureFore is the difference in foreshortening that decides which of two
// faces of several pips is up whatever their places in the photo; below
// it, a camera at a slant sees the top above the side (matteop65's
// two_29: a far die's top 2 at 0.58 over its side's 4 at 0.73). A lone
// pip's foreshortening is its pip's shape, and clearFore decides for it.
const sureFore = 0.2

// maxTopSideFore2 bounds the sum of the squared foreshortenings of a
// die's top and a side seen together: they are the cosines of the view's
// angles to two of the cube's axes, whose squares sum to at most 1 (with
// room for the error of faces fitted to a few small pips).
const maxTopSideFore2 = 1.3

// topAndSide reports whether faces f and h can be a die's top and a side
// seen together (see maxTopSideFore2).
func topAndSide(f, h *face) bool {
	return f.fore*f.fore+h.fore*h.fore <= maxTopSideFore2
}

// clearFore is a clear difference in two faces' foreshortening.
const clearFore = 0.15

// minOneQuality is the quality (see checkFace) a lone pip needs to be
// read as 1. matteop65's 153 1s and its inverted copy's all check 1;
// rendered dice under blur or coarse JPEG (1,920 dice), 1s read right
// 0.84–1 (7 of 229 under 0.9), the middle pips of 3s and 5s whose corner
// pips blur hid, read as 1, 0.82–0.88 (8), and one of a white die's 5
// of red pips under 2 pixels of blur at 0.90 (session 30: 0.92).
const minOneQuality = 0.92

// minUpFore is the foreshortening below which a face cannot be a die's
// top seen by a camera looking down: the face is tilted over 55° to it.
const minUpFore = 0.55

// markCocked flags dice whose up face is tilted much more than the others':
// a die leaning on another die or the wall shows no face straight up. The
// reference is the median of three or more faces of several pips (a
// numbered die's marks, taken for lone pips, say nothing of the slant),
// else the squarest of all the dice, 1s too (a webcam at a slant sees
// every pip foreshortened: matteop65 had ten flat 1s flagged against a
// flat face). A die alone is never flagged here, as the camera's slant is
// unknown (under TopDown, markLeaning judges each die alone).
func markCocked(ds []pipDie) {
	var fores, all []float64
	for _, d := range ds {
		all = append(all, d.f.fore)
		if d.f.n >= 2 {
			fores = append(fores, d.f.fore)
		}
	}
	ref := 1.0
	switch {
	case len(fores) >= 3:
		slices.Sort(fores)
		ref = fores[len(fores)/2]
	case len(all) > 0:
		ref = slices.Max(all)
	}
	for i := range ds {
		if ds[i].f.fore < min(ref, 1)-0.3 {
			ds[i].cocked = true
			ds[i].null = true
		}
	}
}

// minFlatFore is the least foreshortening of a die lying flat under a
// camera that looks straight down: tilted over 25°, it leans on something.
const minFlatFore = 0.9

// minFlatPip is the least minor/major axis ratio of the pip of a lone-pip
// face lying flat: a round pip seen tilted is an ellipse. It is looser than
// minFlatFore because a pip a few pixels across is never quite round.
const minFlatPip = 0.85

// markLeaning flags, for a camera looking straight down, dice whose up face
// is tilted too far to lie flat; a face of one pip is judged by its pip
// (fitOne takes the pip's elongation as the face's foreshortening).
func markLeaning(ds []pipDie) {
	for i := range ds {
		least := minFlatFore
		if ds[i].f.n == 1 {
			least = minFlatPip
		}
		if ds[i].f.fore < least {
			ds[i].cocked = true
			ds[i].null = true
		}
	}
}

// confidence turns a face's quality into a probability-like number.
func confidence(f face) float64 {
	c := 0.5 + 0.5*f.q
	if f.n == 1 {
		c -= 0.02
	}
	return math.Round(min(c, 0.999)*1000) / 1000
}

// box returns the face's square (half side faceHalf) bounds.
func (f *face) box() image.Rectangle {
	h := f.half
	minX, minY := math.Inf(1), math.Inf(1)
	maxX, maxY := math.Inf(-1), math.Inf(-1)
	for _, c := range [][2]float64{{-h, -h}, {h, -h}, {h, h}, {-h, h}} {
		x, y := f.toImage(c[0], c[1])
		minX, maxX = min(minX, x), max(maxX, x)
		minY, maxY = min(minY, y), max(maxY, y)
	}
	return image.Rect(int(math.Floor(minX)), int(math.Floor(minY)), int(math.Ceil(maxX)), int(math.Ceil(maxY)))
}

// chooseFaces keeps, best first (most pips, then the better fit), the
// valid faces that share no pip with a face kept before: a pip belongs to
// one face. A face whose pips all lie in a larger face that was not kept
// is kept on its own: a top's 4 with two pips of the side 6 below it fit
// as a 6 (matteop65's four_13 at half size, blurred), that 6 lost to the
// side's own, and dropping the 4 as a piece of it left the side answered.
// When the larger face is kept, a piece of it that fits clearly better
// makes it doubtful (markRivals). It sorts valid in that order.
func chooseFaces(valid []face) []face {
	sort.SliceStable(valid, func(i, j int) bool {
		if valid[i].n != valid[j].n {
			return valid[i].n > valid[j].n
		}
		return valid[i].q > valid[j].q
	})
	used := map[int]bool{}
	var chosen []face
	for _, f := range valid {
		if slices.ContainsFunc(f.pips, func(k int) bool { return used[k] }) {
			continue
		}
		for _, k := range f.pips {
			used[k] = true
		}
		chosen = append(chosen, f)
	}
	return chosen
}

// consistent drops the dice that do not look like the dice of the same
// roll. Dice of one roll share a material, pip colour and lighting, so the
// dice read from a clear pattern of several pips set the reference: a
// single dark or light spot (a 1) must have the same pip polarity, a pip of
// similar size and a similar contrast to be taken for a die. Without such
// a reference, the 1s whose dice show side faces set it, or failing those
// the strongest 1s. The 1s left out for their polarity or contrast are
// returned as odd: a die of another colour may vouch for them.
func consistent(ds []pipDie, ps []pip) (kept, odd []pipDie) {
	if len(ds) == 0 {
		return ds, nil
	}
	type stat struct{ contrast, r float64 }
	st := make([]stat, len(ds))
	for i, d := range ds {
		for _, k := range d.f.pips {
			st[i].contrast += ps[k].ring - ps[k].core
			st[i].r += ps[k].r
		}
		st[i].contrast /= float64(d.f.n)
		st[i].r /= float64(d.f.n)
	}
	var ref []int
	for i, d := range ds {
		if d.f.n >= 2 && !d.null && !d.cocked {
			ref = append(ref, i)
		}
	}
	strong := len(ref) > 0
	// Dice with side faces seen beside them are surely dice (a highlight
	// on a cable passes for a light pip, and its contrast outshone a die's
	// dark 1): without a clear face of several pips they set the
	// reference, and with one the 1s among them vote with it, die by die,
	// on the polarity (two light dots on a keyboard's key outvoted five
	// dark 1s).
	var sided []int
	for i, d := range ds {
		if len(d.sidePips) > 0 && (!strong || d.f.n == 1) {
			sided = append(sided, i)
		}
	}
	if !strong {
		ref = sided
	}
	if len(ref) == 0 {
		for i := range ds {
			ref = append(ref, i)
		}
	}
	// Polarity: the one with the most contrast summed over the reference,
	// unless the dice that vote are more of the other.
	var dark, light float64
	for _, i := range ref {
		if ps[ds[i].f.pips[0]].light {
			light += st[i].contrast
		} else {
			dark += st[i].contrast
		}
	}
	wantLight := light > dark
	facesLight := wantLight
	if strong {
		votes := 0
		for _, i := range append(slices.Clone(ref), sided...) {
			if ps[ds[i].f.pips[0]].light {
				votes++
			} else {
				votes--
			}
		}
		// A clear majority: a key's glyph among other keys' glyphs
		// passes for a 1 with side faces too.
		if votes >= 2 || votes <= -2 {
			wantLight = votes > 0
		}
	}
	var cs, rs []float64
	for _, i := range ref {
		if ps[ds[i].f.pips[0]].light == wantLight {
			cs = append(cs, st[i].contrast)
			rs = append(rs, st[i].r)
		}
	}
	if len(cs) == 0 {
		// The sided 1s outvoted every clear face of several pips: they
		// are the reference.
		strong = false
		for _, i := range sided {
			if ps[ds[i].f.pips[0]].light == wantLight {
				cs = append(cs, st[i].contrast)
				rs = append(rs, st[i].r)
			}
		}
	}
	medC := median(cs)
	refC := slices.Max(cs)
	if strong {
		refC = medC
	}
	refR := median(rs)
	// A face of several pips of the other polarity, its pips both smaller
	// and fainter than the roll's (the median, not the clearest, when 1s
	// set it), is light marks on something dark (a keyboard's legends)
	// as often as a die of another colour: unread, and no reference for
	// that colour's 1s below. (Where 1s set the reference and their pips
	// are larger than their dice's other pips, a real die of another
	// colour is nulled sooner: a face lost, never a wrong one.)
	marks := make([]bool, len(ds))
	for i, d := range ds {
		marks[i] = d.f.n >= 2 && ps[d.f.pips[0]].light != wantLight && st[i].r < markR*refR && st[i].contrast < markContrast*medC
	}
	// Dice of two colours in one roll: a 1 of the other polarity is
	// measured against the clean faces of its own polarity, when there
	// are some (a light 2 on a keyboard's key checked 0.71).
	var ocs, ors []float64
	if strong {
		for _, i := range ref {
			if d := ds[i]; ps[d.f.pips[0]].light != wantLight && d.f.q >= otherColourQuality && !marks[i] {
				ocs = append(ocs, st[i].contrast)
				ors = append(ors, st[i].r)
			}
		}
	}
	// When the 1s outvoted the clear faces, the 1s are in doubt: dark
	// keys with a light dot off their tops' middles and light marks on
	// their sides outvoted two ivory dice.
	flipped := wantLight != facesLight
	out := ds[:0]
	for i, d := range ds {
		if marks[i] {
			d.null = true
		}
		if d.f.n == 1 {
			share := minContrastShare
			if d.f.q >= 1 {
				share = cleanContrastShare
			}
			c, r := refC, refR
			// Not a spot seen whole (see wholeDie): that is a die's or a
			// key's light mark, not another colour's 1 (a keyboard's key
			// with a light "o", beside one with two light marks).
			if p := &ps[d.f.pips[0]]; p.light != wantLight && len(ocs) > 0 && !p.whole {
				c, r = median(ocs), median(ors)
			} else if ps[d.f.pips[0]].light != wantLight {
				odd = append(odd, d)
				continue
			}
			if st[i].contrast < share*c {
				odd = append(odd, d)
				continue
			}
			// A pip unlike the roll's in size is odd too: a die of another
			// size may vouch for it (a blue die's 1, 0.6 of the radius of
			// a larger die's pips, was dropped).
			if strong && (st[i].r < 0.7*r || st[i].r > 2.2*r) {
				odd = append(odd, d)
				continue
			}
			d.contested = flipped
		}
		out = append(out, d)
	}
	return out, odd
}

// markR and markContrast bound, as shares of the roll's pips, the radius
// and contrast under which a face of the other polarity is unread (see
// consistent): keyboard legends read as 2s in matteop65's altered copies
// were 0.47–0.55 and 0.36–0.55; of 105 faces of dice of another colour
// in 200 rendered rolls, one was under both (0.62 and 0.20): the
// smallest pips were clear (0.51 of the radius at 0.97 of the contrast),
// and the faint ones (under 0.6) 0.60 of the radius or more.
const (
	markR        = 0.65
	markContrast = 0.6
)

// otherColourQuality is the quality a face of several pips needs to vouch
// for 1s of its pips' polarity against the roll's (see consistent).
const otherColourQuality = 0.9

// minContrastShare is the share of the roll's pip contrast a lone pip needs:
// side-face pips, dots on the tray and marks on other things are fainter.
// cleanContrastShare is the share a lone pip needs whose face checked
// clean (quality 1: round, alone on an even face, 60 grey levels of
// contrast): a die's 1 in shade or blur. matteop65: two 1s at 0.68 of
// their rolls' (one at the photo's foot, one with its side's 2 seen)
// were missed; lint on burksbuilds' felt in that band checks unclean
// (0.82–0.90 confidence), so it stays out.
const (
	minContrastShare   = 0.7
	cleanContrastShare = 0.6
)

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
