package numeral

import (
	"fmt"
	"image"
	"math"
	"math/rand/v2"
	"runtime"
)

// Lens says where a camera fixed at a slant sees a die's up face within
// the die's crop, so that the net looks at the up face as a camera looking
// straight down would.
//
// Seen from the side, a die's up face lies above its middle (toward the
// far side of the tray) and is foreshortened along that direction, while
// the faces toward the camera fill the middle of the crop. A polar net
// centred on the crop then sees the up face at its rim, squashed, and its
// turn with the die is no turn about the net's centre. Looked at from the
// up face's centre and stretched back, a die turned on the tray is the
// same picture turned, which the polar net is made for. The zero Lens is
// a camera looking straight down.
type Lens struct {
	// DX, DY is the up face's centre from the crop's centre, in die sides
	// (DY < 0: above it in the photo).
	DX float64 `json:"dx"`
	DY float64 `json:"dy"`
	// Squash is the up face's foreshortening along (DX, DY): the sine of
	// the camera's elevation. 0 means 1 (none).
	Squash float64 `json:"squash,omitempty"`
}

// check rejects a lens no camera has (a damaged or hand-edited model).
func (l Lens) check() error {
	if !(math.Abs(l.DX) <= 0.5 && math.Abs(l.DY) <= 0.5) {
		return fmt.Errorf("lens: up face offset (%g, %g) beyond half a die", l.DX, l.DY)
	}
	if !(l.Squash >= 0 && l.Squash <= 1) || l.Squash > 0 && l.Squash < 0.2 {
		return fmt.Errorf("lens: squash %g out of range 0.2..1", l.Squash)
	}
	// An offset too small to give a way to squash along (or to step along
	// in Classify's extra looks) is none.
	if n := math.Hypot(l.DX, l.DY); n > 0 && n < 0.01 {
		return fmt.Errorf("lens: up face offset (%g, %g) below a hundredth of a die", l.DX, l.DY)
	}
	if l.straight() && l.Squash != 0 && l.Squash != 1 {
		return fmt.Errorf("lens: squash %g with no offset to squash along", l.Squash)
	}
	return nil
}

// straight reports whether l is a camera looking straight down: the up
// face in the middle (a squash needs a way to squash along).
func (l Lens) straight() bool { return l.DX == 0 && l.DY == 0 }

// look moves view v of c to the up face and squashes it as the camera
// does: v's own turn, scale and stretch happen on the up face first.
func (l Lens) look(v view, c *canon) view {
	if l.straight() {
		return v
	}
	d := c.dieSide()
	v.cx += l.DX * d
	v.cy += l.DY * d
	s := l.Squash
	if s == 0 {
		s = 1
	}
	if s == 1 {
		return v
	}
	n := math.Hypot(l.DX, l.DY)
	// M = I − (1−s)·u·uᵀ squashes along u; the view maps input offsets o
	// to M·m·o.
	ux, uy := l.DX/n, l.DY/n
	k := 1 - s
	m00, m01, m10, m11 := 1-k*ux*ux, -k*ux*uy, -k*uy*ux, 1-k*uy*uy
	a := v.m
	v.m = [4]float64{m00*a[0] + m01*a[2], m00*a[1] + m01*a[3], m10*a[0] + m11*a[2], m10*a[1] + m11*a[3]}
	return v
}

// LensFit is what FitLens found: the lens and how well dice of the same
// face looked alike through it and straight on.
type LensFit struct {
	Lens Lens
	// Score and Straight are the share of crops whose nearest neighbour
	// (by a turn-invariant signature of the view) shows the same face,
	// through Lens and through no lens; Crops is how many were compared.
	Score, Straight float64
	// Best is the best score of any slant tried, kept or not.
	Best  float64
	Crops int
}

// lensCrops bounds the crops FitLens compares: its cost grows with their
// square. Below MinLensCrops it looks for no slant: among a few dozen
// crops, one of forty candidates beats straight-on by chance.
const (
	lensCrops    = 800
	MinLensCrops = 200
)

// FitLens finds the Lens through which the labelled dice of one fixed
// camera look most alike face by face: for each candidate, every crop's
// nearest neighbour by a signature that a turn of the view does not change
// (per ring of the polar view, the magnitudes of its angular frequencies
// and the phase steps between rings) should show the same face. Only a
// turn of the up face leaves that signature as it is, so the lens that
// centres and unsquashes the up face wins. It keeps no lens unless one
// beats straight-down clearly (a tenth more neighbours right, and 2% of
// the crops), as for a tower's camera looking down.
func FitLens(samples []Sample, a Arch, frac float64) LensFit {
	if frac == 0 {
		frac = 0.6
	}
	a.Polar = true // the signature is of the polar view, whatever the net
	dice := spreadDice(samples, lensCrops)
	fit := LensFit{Crops: len(dice)}
	if len(dice) < MinLensCrops {
		return fit
	}
	cs := make([]*canon, len(dice))
	labels := make([]class, len(dice))
	for i, s := range dice {
		// Fine enough for the most squashed view tried (0.4).
		cs[i] = toCanon(s.Img, maxSide(a.Size, frac*0.4))
		labels[i] = class{s.Die, s.Face}
	}
	score := func(l Lens) float64 {
		s := nearestAgree(signatures(cs, a, frac, l), labels)
		if !l.straight() {
			fit.Best = max(fit.Best, s)
		}
		return s
	}
	fit.Straight = score(Lens{})
	best, bestScore := Lens{}, fit.Straight
	try := func(l Lens) {
		if s := score(l); s > bestScore {
			best, bestScore = l, s
		}
	}
	// Which way the far side lies (eight ways), at a middling slant; then
	// how far and how steep along the best.
	const d0, s0 = 0.25, 0.65
	for k := range 8 {
		try(slanted(d0, float64(k)*math.Pi/4, s0))
	}
	if best.straight() {
		fit.Score = bestScore
		return fit
	}
	// The best way, snapped back to its eighth of a turn (best is rounded).
	dir := math.Round(math.Atan2(best.DY, best.DX)/(math.Pi/4)) * (math.Pi / 4)
	for _, d := range []float64{0.1, 0.15, 0.2, 0.25, 0.3, 0.35} {
		for _, sq := range []float64{1, 0.8, 0.65, 0.5, 0.4} {
			try(slanted(d, dir, sq))
		}
	}
	// Then each of where and how much in small steps, while one helps: a
	// box that holds the die's shadow too moves the up face off the way
	// the camera looks.
	for _, step := range []float64{0.05, 0.025} {
		for moved := true; moved; {
			moved = false
			from := best
			for _, l := range []Lens{
				{DX: from.DX - step, DY: from.DY, Squash: from.Squash}, {DX: from.DX + step, DY: from.DY, Squash: from.Squash},
				{DX: from.DX, DY: from.DY - step, Squash: from.Squash}, {DX: from.DX, DY: from.DY + step, Squash: from.Squash},
				{DX: from.DX, DY: from.DY, Squash: from.Squash - 2*step}, {DX: from.DX, DY: from.DY, Squash: min(1, from.Squash+2*step)},
			} {
				l = Lens{DX: round6(l.DX), DY: round6(l.DY), Squash: round6(l.Squash)}
				if l == from || l.check() != nil {
					continue
				}
				if s := score(l); s > bestScore {
					best, bestScore, moved = l, s, true
				}
			}
		}
	}
	fit.Score = bestScore
	if bestScore >= 1.1*fit.Straight && bestScore-fit.Straight >= 0.02 {
		fit.Lens = best
	} else {
		fit.Score = fit.Straight
	}
	return fit
}

// slanted is the lens with the up face d die sides from the middle toward
// angle th (image axes, y down), squashed to sq; rounded so that a
// straight way reads as one.
func slanted(d, th, sq float64) Lens {
	return Lens{DX: round6(d * math.Cos(th)), DY: round6(d * math.Sin(th)), Squash: sq}
}

// round6 rounds to a millionth, and -0 to 0, so that a lens reads plainly.
func round6(x float64) float64 { return math.Round(x*1e6)/1e6 + 0 }

// sigFreqs is how many angular frequencies (from 0) a signature keeps.
const sigFreqs = 9

// signatures computes the turn-invariant signature of every crop's view
// through l, on all CPUs.
func signatures(cs []*canon, a Arch, frac float64, l Lens) [][]float32 {
	rows, cols := a.inShape()
	// cos and sin of 2πkj/cols, shared by every ring.
	cosT, sinT := make([]float64, sigFreqs*cols), make([]float64, sigFreqs*cols)
	for k := range sigFreqs {
		for j := range cols {
			sinT[k*cols+j], cosT[k*cols+j] = math.Sincos(2 * math.Pi * float64(k*j) / float64(cols))
		}
	}
	out := make([][]float32, len(cs))
	parallel(len(cs), runtime.GOMAXPROCS(0), func(i int) {
		c := cs[i]
		in := make([]float32, a.Channels*rows*cols)
		var re, im [sigFreqs]float64
		c.sample(l.look(centreView(c, a.Size, frac), c), a, in)
		standardize(in)
		f := make([]float32, 0, a.Channels*rows*sigFreqs*3)
		for ch := range a.Channels {
			for r := range rows {
				row := in[(ch*rows+r)*cols : (ch*rows+r+1)*cols]
				for k := range sigFreqs {
					var x, y float64
					for j, v := range row {
						x += float64(v) * cosT[k*cols+j]
						y += float64(v) * sinT[k*cols+j]
					}
					x, y = x/float64(cols), y/float64(cols)
					f = append(f, float32(math.Hypot(x, y)))
					if r > 0 {
						// This ring against the one inside it: a turn
						// shifts both phases alike.
						n := 1e-3 + math.Hypot(re[k], im[k])
						f = append(f, float32((x*re[k]+y*im[k])/n), float32((y*re[k]-x*im[k])/n))
					}
					re[k], im[k] = x, y
				}
			}
		}
		var n float64
		for _, v := range f {
			n += float64(v) * float64(v)
		}
		if n > 0 {
			k := float32(1 / math.Sqrt(n))
			for j := range f {
				f[j] *= k
			}
		}
		out[i] = f
	})
	return out
}

// nearestAgree is the share of signatures whose nearest other one (by
// Euclidean distance) has the same label.
func nearestAgree(sig [][]float32, labels []class) float64 {
	same := make([]bool, len(sig))
	parallel(len(sig), runtime.GOMAXPROCS(0), func(i int) {
		best, bd := -1, float32(math.Inf(1))
		for j := range sig {
			if j == i {
				continue
			}
			var d float32
			for k, v := range sig[i] {
				x := v - sig[j][k]
				d += x * x
			}
			if d < bd {
				best, bd = j, d
			}
		}
		same[i] = best >= 0 && labels[best] == labels[i]
	})
	right := 0
	for _, ok := range same {
		if ok {
			right++
		}
	}
	return float64(right) / float64(len(sig))
}

// Probing: FitLens finds the way the camera looks reliably, but how far
// and how steep only roughly. Its neighbour score is flat over a wide
// range of squash (on the 40° stand-in with located boxes, 0.297–0.304
// from squash 0.82 to 0.5), so it picks among near ties, while the net
// reads very differently through them: recall 0.81 through (0, −0.15)
// squash 0.8, 0.90 through (0, −0.27) squash 0.55. A short training run
// through each candidate tells them apart, judged on held-back crops
// moved as the boxes reading finds are. It measures how fast the net
// learns, not how well it ends: no candidate is steeper than squash 0.65
// (on the 30° stand-in squash 0.5 led the short runs and then read 0.68
// and 0.75 of 300 dice, where 0.75 and 0.65 read 0.79).
const (
	probeCrops  = 600  // die crops a probe trains and checks on, spread through the set
	probeEpochs = 60   // a probe's training passes
	probeHeld   = 3    // of every 10 crops of a face, how many a probe holds back
	probeShift  = 0.03 // the held-back boxes' random shift, sd in die sides each way (reading's boxes: 0.024–0.027)
	probeScale  = 0.04 // and their random scale, sd of its log
	probeMargin = 0.03 // how much better than FitLens's own lens a candidate must read
)

// ProbeCandidates are the lenses ProbeLens compares for a fitted lens:
// fit itself, and a mild and a middling slant along its way (up the photo
// when fit is straight), upright, placed as a die's up face lies for a
// camera at that slant (offset 0.35 of a side times the cosine of the
// elevation, squash its sine).
func ProbeCandidates(fit Lens) []Lens {
	out := []Lens{fit}
	// Along the nearest eighth of a turn: a camera is mounted upright or
	// about. Straight on, up the photo: a camera at a slant sees a die's
	// top above its middle.
	th := -math.Pi / 2
	if !fit.straight() {
		th = math.Round(math.Atan2(fit.DY, fit.DX)/(math.Pi/4)) * (math.Pi / 4)
	}
	for _, s := range []float64{0.8, 0.65} {
		if l := slanted(0.35*math.Sqrt(1-s*s), th, s); l != fit {
			out = append(out, l)
		}
	}
	return out
}

// ProbeLens trains a small net through each of lenses for a few epochs
// (opts gives the rotation, seed, workers and context; the same crops and
// start for each, so that the runs differ only in the lens) and returns
// the share of the held-back crops each reads right (Classify), their
// boxes moved and scaled a little at random, the same for every lens.
func ProbeLens(samples []Sample, lenses []Lens, opts TrainOptions) ([]float64, error) {
	dice := spreadDice(samples, probeCrops)
	var train, held []Sample
	seen := map[class]int{}
	for _, s := range dice {
		k := class{s.Die, s.Face}
		if seen[k]%10 < probeHeld {
			held = append(held, s)
		} else {
			train = append(train, s)
		}
		seen[k]++
	}
	r := rand.New(rand.NewPCG(opts.Seed, 0x70726f6265))
	moved := make([]image.Image, len(held))
	for i, s := range held {
		b := s.Img.Bounds()
		side := float64(max(b.Dx(), b.Dy())) / (1 + 2*Margin)
		k := math.Exp(probeScale * r.NormFloat64())
		cx := float64(b.Min.X+b.Max.X)/2 + probeShift*side*r.NormFloat64()
		cy := float64(b.Min.Y+b.Max.Y)/2 + probeShift*side*r.NormFloat64()
		h := k * side / 2
		moved[i] = CropDie(s.Img, image.Rect(int(math.Round(cx-h)), int(math.Round(cy-h)), int(math.Round(cx+h)), int(math.Round(cy+h))))
	}
	scores := make([]float64, len(lenses))
	for i, l := range lenses {
		o := opts
		o.Lens, o.Epochs, o.Validation, o.Progress = l, probeEpochs, -1, nil
		m, err := Train(train, o)
		if err != nil {
			return nil, fmt.Errorf("numeral: probe lens %+v: %w", l, err)
		}
		right := 0
		for j, s := range held {
			if die, face, _ := m.Classify(moved[j], nil); die == s.Die && face == s.Face {
				right++
			}
		}
		if len(held) > 0 {
			scores[i] = float64(right) / float64(len(held))
		}
	}
	return scores, nil
}

// PickProbed returns the index of the lens ProbeLens scored best, unless
// it reads less than probeMargin better than the first (FitLens's own).
func PickProbed(scores []float64) int {
	best := 0
	for i, s := range scores {
		if s > scores[best] {
			best = i
		}
	}
	if best != 0 && scores[best]-scores[0] < probeMargin {
		return 0
	}
	return best
}

// spreadDice returns at most n of the samples that show a die, spread
// through the set: photos come in the order they were taken.
func spreadDice(samples []Sample, n int) []Sample {
	var dice []Sample
	for _, s := range samples {
		if s.Die != "" {
			dice = append(dice, s)
		}
	}
	if len(dice) <= n {
		return dice
	}
	picked := make([]Sample, n)
	for i := range picked {
		picked[i] = dice[i*len(dice)/n]
	}
	return picked
}
