package vision

import (
	"image"
	"image/color"
	"math"
	"slices"

	"gocv.io/x/gocv"
)

// blob is a region that differs from the tray: a die, or something else.
type blob struct {
	box     image.Rectangle // photo pixels
	outline []image.Point   // convex hull, photo pixels
	area    float64         // photo pixels²
	corners int             // vertices of the simplified hull
	solid   float64         // area / hull area
	aspect  float64         // long/short side of the min-area rectangle
}

// colourImg is a photo in YCrCb at the coarse scale blobs are found at.
type colourImg struct {
	mat   gocv.Mat // CV_8UC3
	scale float64  // coarse pixels per photo pixel
	off   image.Point
}

func (c *colourImg) close() { c.mat.Close() }

// coarseSide is the longest side blobs are looked for at: dice are tens of
// pixels across even there.
const coarseSide = 400

// newColour converts img to YCrCb at the coarse scale (at most
// coarseSide across).
func newColour(img image.Image) (*colourImg, error) { return newColourSide(img, coarseSide) }

// newColourSide converts img to YCrCb at most side pixels across. The
// first step halves the photo while converting (2x2 means), the second is
// OpenCV's area resize.
func newColourSide(img image.Image, side int) (*colourImg, error) {
	b := img.Bounds()
	hw, hh := (b.Dx()+1)/2, (b.Dy()+1)/2
	buf := make([]uint8, hw*hh*3)
	if m, ok := img.(*image.RGBA); ok {
		rgbaHalfYCrCb(buf, m, hw, hh)
	} else if m, ok := img.(*image.YCbCr); ok && m.SubsampleRatio == image.YCbCrSubsampleRatio420 && b.Min.X%2 == 0 && b.Min.Y%2 == 0 {
		jpegHalfYCrCb(buf, m, hw, hh)
	} else {
		halfYCrCb(buf, hw, hh, b, func(x, y int) (uint8, uint8, uint8) { return pixelYCrCb(img, x, y) })
	}
	half, err := gocv.NewMatFromBytes(hh, hw, gocv.MatTypeCV8UC3, buf)
	if err != nil {
		return nil, err
	}
	defer half.Close()
	c := &colourImg{mat: gocv.NewMat(), off: b.Min}
	nw, nh := coarseSizeAt(b.Dx(), b.Dy(), side)
	if nw == hw && nh == hh {
		half.CopyTo(&c.mat)
	} else {
		gocv.Resize(half, &c.mat, image.Pt(nw, nh), 0, 0, gocv.InterpolationArea)
	}
	c.scale = float64(nw) / float64(b.Dx())
	return c, nil
}

// coarseSizeAt is the size newColourSide gives a w×h photo: halved, then
// at most side across.
func coarseSizeAt(w, h, side int) (int, int) {
	hw, hh := (w+1)/2, (h+1)/2
	k := min(1, float64(side)/float64(max(hw, hh)))
	return max(1, int(float64(hw)*k+0.5)), max(1, int(float64(hh)*k+0.5))
}

// pixelYCrCb is the colour of img at (x, y) in YCrCb.
func pixelYCrCb(img image.Image, x, y int) (uint8, uint8, uint8) {
	switch m := img.(type) {
	case *image.YCbCr:
		yi, ci := m.YOffset(x, y), m.COffset(x, y)
		return m.Y[yi], m.Cr[ci], m.Cb[ci]
	case *image.RGBA:
		i := m.PixOffset(x, y)
		yy, cb, cr := color.RGBToYCbCr(m.Pix[i], m.Pix[i+1], m.Pix[i+2])
		return yy, cr, cb
	default:
		r, g, bb, _ := img.At(x, y).RGBA()
		yy, cb, cr := color.RGBToYCbCr(uint8(r>>8), uint8(g>>8), uint8(bb>>8))
		return yy, cr, cb
	}
}

// halfYCrCb fills buf with the 2x2 means of the photo's pixels in YCrCb,
// read one by one through sample.
func halfYCrCb(buf []uint8, hw, hh int, b image.Rectangle, sample func(x, y int) (uint8, uint8, uint8)) {
	for y := 0; y < hh; y++ {
		for x := 0; x < hw; x++ {
			var s [3]int
			n := 0
			for dy := 0; dy < 2; dy++ {
				for dx := 0; dx < 2; dx++ {
					px, py := b.Min.X+2*x+dx, b.Min.Y+2*y+dy
					if px >= b.Max.X || py >= b.Max.Y {
						continue
					}
					a, c, d := sample(px, py)
					s[0] += int(a)
					s[1] += int(c)
					s[2] += int(d)
					n++
				}
			}
			i := 3 * (y*hw + x)
			buf[i], buf[i+1], buf[i+2] = uint8(s[0]/n), uint8(s[1]/n), uint8(s[2]/n)
		}
	}
}

// jpegHalfYCrCb is halfYCrCb for a 4:2:0 YCbCr photo, as JPEGs decode:
// each 2x2 block of luma shares one chroma sample, taken as it is.
func jpegHalfYCrCb(buf []uint8, m *image.YCbCr, hw, hh int) {
	b := m.Rect
	for y := 0; y < hh; y++ {
		y0 := b.Min.Y + 2*y
		y1 := min(y0+1, b.Max.Y-1)
		r0 := m.Y[m.YOffset(b.Min.X, y0):]
		r1 := m.Y[m.YOffset(b.Min.X, y1):]
		ci := m.COffset(b.Min.X, y0)
		for x := 0; x < hw; x++ {
			x0 := 2 * x
			x1 := min(x0+1, b.Dx()-1)
			i := 3 * (y*hw + x)
			buf[i] = uint8((int(r0[x0]) + int(r0[x1]) + int(r1[x0]) + int(r1[x1]) + 2) / 4)
			buf[i+1], buf[i+2] = m.Cr[ci+x], m.Cb[ci+x]
		}
	}
}

// rgbaHalfYCrCb is halfYCrCb for an RGBA photo, the camera's and PNGs'
// usual form: the 2x2 means are taken in RGB and converted once (the
// conversion is affine, so this differs only by rounding), four times
// fewer conversions.
func rgbaHalfYCrCb(buf []uint8, m *image.RGBA, hw, hh int) {
	b := m.Rect
	for y := 0; y < hh; y++ {
		y0 := b.Min.Y + 2*y
		y1 := min(y0+1, b.Max.Y-1)
		r0 := m.Pix[m.PixOffset(b.Min.X, y0):]
		r1 := m.Pix[m.PixOffset(b.Min.X, y1):]
		for x := 0; x < hw; x++ {
			x0 := 2 * x
			x1 := min(x0+1, b.Dx()-1)
			var s [3]int
			for ch := range 3 {
				s[ch] = int(r0[4*x0+ch]) + int(r0[4*x1+ch]) + int(r1[4*x0+ch]) + int(r1[4*x1+ch])
			}
			yy, cb, cr := color.RGBToYCbCr(uint8((s[0]+2)/4), uint8((s[1]+2)/4), uint8((s[2]+2)/4))
			i := 3 * (y*hw + x)
			buf[i], buf[i+1], buf[i+2] = yy, cr, cb
		}
	}
}

// estimateBackground guesses the empty tray from the photo itself: a wide
// median at a very coarse scale, where dice are small spots the median
// ignores.
func estimateBackground(c *colourImg) gocv.Mat {
	w, h := c.mat.Cols(), c.mat.Rows()
	tiny := gocv.NewMat()
	defer tiny.Close()
	tw, th := max(1, w/4), max(1, h/4)
	gocv.Resize(c.mat, &tiny, image.Pt(tw, th), 0, 0, gocv.InterpolationArea)
	med := gocv.NewMat()
	defer med.Close()
	k := max(tw, th)/4 | 1
	gocv.MedianBlur(tiny, &med, max(k, 5))
	bg := gocv.NewMat()
	gocv.Resize(med, &bg, image.Pt(w, h), 0, 0, gocv.InterpolationLinear)
	return bg
}

// blobThreshold is the luma difference from which a pixel belongs to
// something on the tray, and blobChroma the chroma difference (the larger
// channel's; chroma weighs 1.5), unless a learnt tray's own steadiness
// allows less (Scene.chroma).
const (
	blobThreshold = 34
	blobChroma    = (2*blobThreshold + 2) / 3
)

// diffMask marks (255) the pixels of c that differ from bg by
// blobThreshold or more in luma, or chroma or more in chroma, once the
// tray's light is matched to the photo's (fitLight) when match is set: a
// tray learnt or photographed under other light (a webcam's exposure
// drifts) still matches where nothing lies on it. A tray estimated from
// the photo itself has its light already.
func diffMask(c *colourImg, bg gocv.Mat, match bool, chroma int) []uint8 {
	mask, _ := diffMasks(c, bg, match, chroma, false)
	return mask
}

// diffMasks is diffMask also returning, withWeak, the weak mask: the
// pixels (255) that differ from bg by half as much, where a die of about
// the colour of what lies behind it still shows (see growInto). Without,
// weak is nil and costs nothing.
func diffMasks(c *colourImg, bg gocv.Mat, match bool, chroma int, withWeak bool) (mask, weak []uint8) {
	w, h := c.mat.Cols(), c.mat.Rows()
	a, err := c.mat.DataPtrUint8()
	if err != nil {
		return nil, nil
	}
	b, err := bg.DataPtrUint8()
	if err != nil || len(b) != len(a) {
		return nil, nil
	}
	l := sameLight()
	if match {
		l = photoLight(a, b)
	}
	mask = make([]uint8, w*h)
	if withWeak {
		weak = make([]uint8, w*h)
	}
	for i := range mask {
		d0, dc := l.residual(a[3*i:3*i+3], b[3*i:3*i+3])
		if d0 >= blobThreshold || dc >= chroma {
			mask[i] = 255
		}
		if weak != nil && (2*d0 >= blobThreshold || 2*dc >= chroma) {
			weak[i] = 255
		}
	}
	return mask, weak
}

// growShare is how far, as a share of a region's longer side, growInto
// may extend it.
const growShare = 0.4

// growInto extends each region of mask (8-bit, 255 marks; weak the same
// size) by the pixels of weak that join it, up to growShare of its own size out: where a die
// lies over something of about its own colour (a black die against a
// roller's dark body) only its numerals differ clearly, the opening drops
// them, and the region ends where the die's colour meets the body's. Its
// box was then cut short by up to a third of the die, and the face read
// through it was a side's. A pixel next to another region is left out,
// so that two regions never join by growing.
func growInto(mask gocv.Mat, weak []uint8) {
	w, h := mask.Cols(), mask.Rows()
	buf, err := mask.DataPtrUint8()
	if err != nil {
		return
	}
	labels, stats, cents := gocv.NewMat(), gocv.NewMat(), gocv.NewMat()
	defer labels.Close()
	defer stats.Close()
	defer cents.Close()
	n := gocv.ConnectedComponentsWithStatsWithParams(mask, &labels, &stats, &cents, 8, gocv.MatTypeCV32S, gocv.CCL_DEFAULT)
	if n <= 1 {
		return
	}
	label, err := int32s(labels)
	if err != nil {
		return
	}
	st, err := int32s(stats)
	if err != nil {
		return
	}
	// around calls f with each pixel next to pixel j (8 of them, fewer at
	// the photo's edge) until f returns false.
	around := func(j int, f func(k int) bool) {
		x, y := j%w, j/w
		for yy := max(y-1, 0); yy <= min(y+1, h-1); yy++ {
			for xx := max(x-1, 0); xx <= min(x+1, w-1); xx++ {
				if k := yy*w + xx; k != j && !f(k) {
					return
				}
			}
		}
	}
	limit := make([]int, n) // per region, the steps it may grow
	for i := 1; i < n; i++ {
		s := st[i*5 : i*5+5]
		limit[i] = int(growShare * float64(max(s[2], s[3])))
	}
	var front []int
	for i, l := range label {
		if l != 0 {
			front = append(front, i)
		}
	}
	// Grow all regions a step at a time; a pixel next to another region
	// than the one reaching it is left out.
	var next []int
	for step := 1; len(front) > 0; step++ {
		next = next[:0]
		for _, j := range front {
			id := label[j]
			if step > limit[id] {
				continue
			}
			around(j, func(k int) bool {
				if label[k] != 0 || weak[k] == 0 {
					return true
				}
				other := false
				around(k, func(n int) bool {
					other = label[n] != 0 && label[n] != id
					return !other
				})
				if !other {
					label[k], buf[k] = id, 255
					next = append(next, k)
				}
				return true
			})
		}
		front, next = next, front
	}
}

// light maps the tray's colours to a photo's under another exposure and
// white balance: luma by a gain and an offset, chroma by the same gain
// about grey (scaling RGB scales Cr and Cb about 128) and a shift that
// grows with the tray's luma (a white balance scales R, G and B: a grey
// of luma v turns by a tint times v).
type light struct {
	gain   float64
	lut    [256]int    // the tray's luma as the photo would show it
	cgain  [256]int    // a tray chroma value as the photo would show it, before shift
	cshift [2][256]int // the chroma shift (Cr, Cb) of a tray pixel of each luma
}

// residual is how far a photo pixel a is from the tray pixel b under l:
// in luma, and the larger of the chroma channels (YCrCb, 3 bytes each).
func (l *light) residual(a, b []uint8) (int, int) {
	// Brighter than the camera can show is as bright as it shows.
	d0 := abs(int(a[0]) - min(l.lut[b[0]], 255))
	return d0, max(abs(int(a[1])-l.cgain[b[1]]-l.cshift[0][b[0]]), abs(int(a[2])-l.cgain[b[2]]-l.cshift[1][b[0]]))
}

// photoLight matches the light of tray b to photo a's (YCrCb, same size)
// on every third pixel, which is plenty.
func photoLight(a, b []uint8) light {
	n := len(a) / 3
	return fitLight((n+2)/3, func(i int) ([]uint8, []uint8) { return a[9*i : 9*i+3], b[9*i : 9*i+3] })
}

// sameLight is the light of a tray seen under the photo's own light.
func sameLight() light {
	l := light{gain: 1}
	for v := range l.lut {
		l.lut[v], l.cgain[v] = v, v
	}
	return l
}

// lightBands is how many bands of the tray's luma fitLight compares.
const lightBands = 16

// fitLight matches the tray's light to the photo's from n pairs of
// pixels (photo, tray; YCrCb). Luma: a line from the tray's luma to the
// median of the photo's over each band of the tray's luma (least squares,
// bands weighted by their pixels), within the exposure drift a camera
// shows. Chroma: the tint (a shift growing with the tray's luma) that
// best fits the median shift left in each band once the gain is
// applied. Dice cover a minority of each band, so the medians are the
// tray's.
func fitLight(n int, pair func(i int) (a, b []uint8)) light {
	var ya [lightBands][256]int32
	var counts [lightBands]int // the tray's pixels in each band
	for i := range n {
		a, b := pair(i)
		band := int(b[0]) * lightBands / 256
		ya[band][a[0]]++
		counts[band]++
	}
	median := func(hist []int32, total int) float64 {
		acc := 0
		for v, k := range hist {
			if acc += int(k); 2*acc >= total {
				return float64(v)
			}
		}
		return float64(len(hist) - 1)
	}
	// A band of under 1% of the pixels is too few to say.
	few := func(total int) bool { return total == 0 || total*100 < n }
	var sw, sx, sy, sxx, sxy float64
	for band, total := range counts {
		if few(total) {
			continue
		}
		w := float64(total)
		x := (float64(band) + 0.5) * 256 / lightBands
		y := median(ya[band][:], total)
		sw += w
		sx += w * x
		sy += w * y
		sxx += w * x * x
		sxy += w * x * y
	}
	l := light{gain: 1}
	off := 0.0
	if sw > 0 {
		mx, my := sx/sw, sy/sw
		if vx := sxx/sw - mx*mx; vx >= 64 { // the tray spans more than a band or two
			l.gain = min(max((sxy/sw-mx*my)/vx, 1/maxGain), maxGain)
		}
		off = min(max(my-l.gain*mx, -maxShift), maxShift)
	}
	for v := range l.lut {
		l.lut[v] = int(l.gain*float64(v) + off + 0.5)
		l.cgain[v] = int(128 + l.gain*float64(v-128) + 0.5)
	}
	// Chroma: the median shift left in each band of the tray's luma, and
	// the tint through black that fits them best (least squares, bands
	// weighted by their pixels): a white balance scales a pixel's chroma
	// shift with its luma. A line with an offset would match any two
	// colours of one tray to any two of another.
	var cd [2][lightBands][511]int32
	for i := range n {
		a, b := pair(i)
		band := int(b[0]) * lightBands / 256
		cd[0][band][255+int(a[1])-l.cgain[b[1]]]++
		cd[1][band][255+int(a[2])-l.cgain[b[2]]]++
	}
	for ch := range 2 {
		var sxx, sxy float64
		for band, total := range counts {
			if few(total) {
				continue
			}
			w, x := float64(total), (float64(band)+0.5)*256/lightBands
			sxx += w * x * x
			sxy += w * x * (median(cd[ch][band][:], total) - 255)
		}
		if sxx == 0 {
			continue
		}
		tint := sxy / sxx
		for v := range l.cshift[ch] {
			lim := max(maxChromaShift, maxChromaTint*float64(v))
			l.cshift[ch][v] = int(math.Round(min(max(tint*float64(v), -lim), lim)))
		}
	}
	return l
}

// maxShift bounds the change of luma, maxGain its gain, and
// maxChromaShift, or maxChromaTint times the tray's luma where that is
// more, the change of colour (white balance) that matching the light
// takes off: more than that is not the same tray. A webcam's white
// balance drifting from daylight toward a lamp (R ×1.15, B ×0.8) turns a
// light grey of luma 180 by about +16 Cr and −22 Cb, a dark felt of luma
// 70 by less than 10 (where a tint as large would make one felt
// another: grey neoprene brown leather).
const (
	maxShift       = 48
	maxGain        = 1.3
	maxChromaShift = 10
	maxChromaTint  = 0.14
)

// findBlobs returns the regions of c that differ from bg (same size), a
// tray photographed or learnt under other light.
func findBlobs(c *colourImg, bg gocv.Mat) []blob {
	bs, _ := findBlobsMask(c, bg, blobChroma, false)
	return bs
}

// findBlobsMask is findBlobs, with the chroma difference that marks a pixel
// (see diffMask), also returning the cleaned mask the regions were found
// in (for litBox). With lookInto (bg is a tray learnt at enrolment), a
// region that is not die-like is looked into for dice (dieWithin), the
// tray in shade told by shaded: a die whose shadow fell long across a busy
// floor made one ragged region with it (the roller stand-in on wood
// missed 2 of 300 dice so, and reads 300 now). Without a learnt tray that
// is done on a plain tray only (findBlobsAlone): grain is no shade there.
func findBlobsMask(c *colourImg, bg gocv.Mat, chroma int, lookInto bool) ([]blob, []uint8) {
	mask, weak := diffMasks(c, bg, true, chroma, true)
	var tv *trayView
	if lookInto {
		tv = &trayView{c: c, bg: bg, learnt: true}
	}
	return maskBlobs(c, mask, weak, tv), mask // maskBlobs cleans mask in place
}

// findBlobsAlone returns the regions of c that differ from the tray,
// guessed from c alone. When the tray shows as one wide region of the
// colour at the photo's middle, only what lies within its convex hull is
// looked at, against a background estimated with the walls painted over
// in the tray's colour: else the wide median blends the walls into the
// tray's edge, and a die near a wall joins the wall. On a plain tray a
// region that is no die is looked into for one (dieWithin); regions of
// shade are dropped (shade).
func findBlobsAlone(c *colourImg) []blob {
	tray, felt := findTray(c)
	if tray == nil {
		bg := estimateBackground(c)
		defer bg.Close()
		return maskBlobs(c, diffMask(c, bg, false, blobChroma), nil, nil)
	}
	filled := c.mat.Clone()
	defer filled.Close()
	f, err := filled.DataPtrUint8()
	if err != nil {
		return nil
	}
	for i, in := range tray {
		if !in {
			f[3*i], f[3*i+1], f[3*i+2] = felt[0], felt[1], felt[2]
		}
	}
	bg := estimateBackground(&colourImg{mat: filled, scale: c.scale, off: c.off})
	defer bg.Close()
	mask := diffMask(c, bg, false, blobChroma)
	if mask == nil {
		return nil
	}
	for i, in := range tray {
		if !in {
			mask[i] = 0
		}
	}
	var tv *trayView
	if p := plainShare(c, tray, felt); p >= plainTray {
		tv = &trayView{c: c, bg: bg}
	}
	bs := maskBlobs(c, mask, nil, tv)
	return slices.DeleteFunc(bs, func(b blob) bool { return c.shade(mask, bg, b) })
}

// findTray finds the tray in c: the colour of the photo's middle half
// (the felt: dice cover little of it), and the convex hull of the widest
// region of pixels near that colour, a little shrunk. It returns nil when
// that region covers less than a quarter of the photo (a busy tray, or no
// tray in view).
func findTray(c *colourImg) ([]bool, [3]uint8) {
	w, h := c.mat.Cols(), c.mat.Rows()
	var felt [3]uint8
	d, err := c.mat.DataPtrUint8()
	if err != nil || w < 8 || h < 8 {
		return nil, felt
	}
	var hist [3][256]int
	n := 0
	for y := h / 4; y < 3*h/4; y++ {
		for x := w / 4; x < 3*w/4; x++ {
			i := 3 * (y*w + x)
			hist[0][d[i]]++
			hist[1][d[i+1]]++
			hist[2][d[i+2]]++
			n++
		}
	}
	for ch := range 3 {
		acc := 0
		for v, k := range hist[ch] {
			if acc += k; 2*acc >= n {
				felt[ch] = uint8(v)
				break
			}
		}
	}
	// The widest region near the felt's colour: first with chroma held
	// close (light changes a felt's luma, not its chroma; a brown wall of
	// low saturation in shade passed for grey felt and the "tray" was the
	// whole photo), then, if that region is small (a textured floor's
	// chroma varies), as loose as the luma.
	region := func(chroma int) (gocv.PointsVector, int, float64, error) {
		near := make([]uint8, w*h)
		for i := range near {
			if nearFelt(d[3*i:3*i+3], felt, chroma) {
				near[i] = 255
			}
		}
		nm, err := gocv.NewMatFromBytes(h, w, gocv.MatTypeCV8UC1, near)
		if err != nil {
			return gocv.PointsVector{}, -1, 0, err
		}
		defer nm.Close()
		cs := gocv.FindContours(nm, gocv.RetrievalExternal, gocv.ChainApproxSimple)
		best, bestArea := -1, 0.0
		for i := 0; i < cs.Size(); i++ {
			if a := gocv.ContourArea(cs.At(i)); a > bestArea {
				best, bestArea = i, a
			}
		}
		return cs, best, bestArea, nil
	}
	cs, best, bestArea, err := region(1)
	if err != nil {
		return nil, felt
	}
	if best < 0 || bestArea < float64(w*h)/4 {
		cs.Close()
		if cs, best, bestArea, err = region(2); err != nil {
			return nil, felt
		}
	}
	defer cs.Close()
	if best < 0 || bestArea < float64(w*h)/4 {
		return nil, felt
	}
	hull := gocv.NewMat()
	defer hull.Close()
	gocv.ConvexHull(cs.At(best), &hull, true, true)
	hpv := gocv.NewPointVectorFromMat(hull)
	defer hpv.Close()
	filled := gocv.Zeros(h, w, gocv.MatTypeCV8UC1)
	defer filled.Close()
	pvs := gocv.NewPointsVector()
	defer pvs.Close()
	pvs.Append(hpv)
	gocv.FillPoly(&filled, pvs, color.RGBA{255, 255, 255, 0})
	k := gocv.GetStructuringElement(gocv.MorphRect, image.Pt(5, 5))
	defer k.Close()
	gocv.Erode(filled, &filled, k)
	fd, err := filled.DataPtrUint8()
	if err != nil {
		return nil, felt
	}
	tray := make([]bool, w*h)
	for i, v := range fd {
		tray[i] = v != 0
	}
	return tray, felt
}

// plainShare is the share of the tray's pixels near the felt's colour
// (chroma held to a third of the tolerance).
func plainShare(c *colourImg, tray []bool, felt [3]uint8) float64 {
	d, err := c.mat.DataPtrUint8()
	if err != nil {
		return 0
	}
	in, near := 0, 0
	for i, t := range tray {
		if !t {
			continue
		}
		in++
		if nearFelt(d[3*i:3*i+3], felt, 1) {
			near++
		}
	}
	return float64(near) / float64(max(in, 1))
}

// nearFelt reports whether the YCrCb pixel px is near the felt's colour:
// luma within feltTolerance, chroma within chroma thirds of it.
func nearFelt(px []uint8, felt [3]uint8, chroma int) bool {
	return abs(int(px[0])-int(felt[0])) < feltTolerance && 3*chromaDist(px, felt[:]) < chroma*feltTolerance
}

// chromaDist is the larger difference of two YCrCb pixels' chroma.
func chromaDist(a, b []uint8) int {
	return max(abs(int(a[1])-int(b[1])), abs(int(a[2])-int(b[2])))
}

// plainTray is the plainShare from which a tray is plain, like a tower's
// felt, and a region that is no die may be looked into for one (see
// dieWithin): rendered felt trays measure 0.85–1, a desk's light wood
// 0.8–1, busy wood grain 0.3–0.85 (there, pieces of grain passed for
// dice: 2 more wrong faces; the few grain trays above 0.8 still pass).
const plainTray = 0.8

// feltTolerance is how far (in luma) a pixel may be
// from the felt's colour to count as felt when finding the tray. Where
// light falls off towards a corner the felt may drop out; the convex hull
// takes the corner back. Chroma is held to a third of it, or two thirds
// where that finds no tray (see findTray).
const feltTolerance = blobThreshold

// maskBlobs returns the regions marked in mask (255) at c's scale, in
// photo pixels. It cleans maskBuf in place (an opening, then a closing;
// the Mat shares the slice), so the caller reads the cleaned mask after.
// With weak (diffMasks'), the regions then grow into it (growInto; weak
// is filtered in place). With tv, a region that is not die-like is
// looked into for dice (see dieWithin).
func maskBlobs(c *colourImg, maskBuf, weak []uint8, tv *trayView) []blob {
	w, h := c.mat.Cols(), c.mat.Rows()
	if maskBuf == nil {
		return nil
	}
	mask, err := gocv.NewMatFromBytes(h, w, gocv.MatTypeCV8UC1, maskBuf)
	if err != nil {
		return nil
	}
	defer mask.Close()
	k := gocv.GetStructuringElement(gocv.MorphEllipse, image.Pt(3, 3))
	defer k.Close()
	gocv.MorphologyEx(mask, &mask, gocv.MorphOpen, k)
	k5 := gocv.GetStructuringElement(gocv.MorphEllipse, image.Pt(5, 5))
	defer k5.Close()
	gocv.MorphologyEx(mask, &mask, gocv.MorphClose, k5)
	if weak != nil {
		// A weak pixel counts where most of its neighbours are weak too:
		// pixels of noise would give the region tendrils.
		if wm, err := gocv.NewMatFromBytes(h, w, gocv.MatTypeCV8UC1, weak); err == nil {
			gocv.MedianBlur(wm, &wm, 3)
			wm.Close()
		}
		growInto(mask, weak)
	}
	cs := gocv.FindContours(mask, gocv.RetrievalExternal, gocv.ChainApproxSimple)
	defer cs.Close()
	side := float64(max(w, h))
	// Nothing narrower than a 45th of a 400-pixel scale is a die, however
	// fine the scale (a scene learnt at a finer one for small dice keeps
	// that floor, not one grown with the scale).
	minArea := math.Pow(min(side, coarseSide)/45, 2)
	maxArea := math.Pow(side/3, 2)
	var out []blob
	for i := 0; i < cs.Size(); i++ {
		pv := cs.At(i)
		area := gocv.ContourArea(pv)
		if area < minArea || area > maxArea {
			continue
		}
		bl := contourBlob(c, pv, image.Point{})
		if !bl.dieLike() && tv != nil {
			if parts := dieWithin(tv, mask, cs, i, minArea); len(parts) > 0 {
				out = append(out, parts...)
				continue
			}
		}
		out = append(out, bl)
	}
	return out
}

// contourBlob measures the region outlined by pv (coarse pixels, offset by
// at) in photo pixels.
func contourBlob(c *colourImg, pv gocv.PointVector, at image.Point) blob {
	inv := 1 / c.scale
	area := gocv.ContourArea(pv)
	hull := gocv.NewMat()
	gocv.ConvexHull(pv, &hull, true, true)
	hpv := gocv.NewPointVectorFromMat(hull)
	hull.Close()
	defer hpv.Close()
	harea := gocv.ContourArea(hpv)
	rr := gocv.MinAreaRect(pv)
	bl := blob{area: area * inv * inv, solid: area / math.Max(harea, 1)}
	if rr.Width > 0 && rr.Height > 0 {
		bl.aspect = math.Max(float64(rr.Width), float64(rr.Height)) / math.Min(float64(rr.Width), float64(rr.Height))
	}
	peri := gocv.ArcLength(hpv, true)
	approx := gocv.ApproxPolyDP(hpv, 0.06*peri, true)
	bl.corners = approx.Size()
	approx.Close()
	for _, p := range hpv.ToPoints() {
		p = p.Add(at)
		bl.outline = append(bl.outline, image.Pt(int(float64(p.X)*inv+0.5), int(float64(p.Y)*inv+0.5)).Add(c.off))
	}
	r := gocv.BoundingRect(pv).Add(at)
	bl.box = image.Rect(int(float64(r.Min.X)*inv), int(float64(r.Min.Y)*inv), int(math.Ceil(float64(r.Max.X)*inv)), int(math.Ceil(float64(r.Max.Y)*inv))).Add(c.off)
	return bl
}

// shade reports whether blob b, found in mask against bg, is shade, not a
// die: the tray dimmed (its pixels at least shadeDim of the tray's luma on
// average, and of the tray's chroma), and smooth inside. The shade of a
// wall, or a tray's corner darker than a wide median can follow, differs
// from the estimated tray as much as a die does, but a die has facets,
// marks and a colour of its own; a black die on grey felt, as smooth inside
// when it is large in the photo, is far darker than a shadow (rendered
// shade: 0.64 of the tray's luma, on a desk 0.74–0.79; black dice on grey
// felt 0.31–0.51). mask is the one maskBlobs cleaned (it rewrites its
// argument in place).
func (c *colourImg) shade(mask []uint8, bg gocv.Mat, b blob) bool {
	w, h := c.mat.Cols(), c.mat.Rows()
	d, err := c.mat.DataPtrUint8()
	if err != nil || len(mask) != w*h || w < 5 || h < 5 {
		return false
	}
	bd, err := bg.DataPtrUint8()
	if err != nil || len(bd) != len(d) {
		return false
	}
	r := image.Rect(int(float64(b.box.Min.X-c.off.X)*c.scale), int(float64(b.box.Min.Y-c.off.Y)*c.scale),
		int(float64(b.box.Max.X-c.off.X)*c.scale), int(float64(b.box.Max.Y-c.off.Y)*c.scale)).Intersect(image.Rect(2, 2, w-2, h-2))
	var grad, dim, chroma float64
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			// Inside only: the edge of shade is as sharp as a die's.
			i := y*w + x
			if mask[i] == 0 || mask[i-2] == 0 || mask[i+2] == 0 || mask[i-2*w] == 0 || mask[i+2*w] == 0 {
				continue
			}
			gx := float64(d[3*(i+1)]) - float64(d[3*(i-1)])
			gy := float64(d[3*(i+w)]) - float64(d[3*(i-w)])
			grad += math.Hypot(gx, gy)
			dim += float64(d[3*i]) / math.Max(1, float64(bd[3*i]))
			chroma += float64(chromaDist(d[3*i:3*i+3], bd[3*i:3*i+3]))
			n++
		}
	}
	k := float64(n)
	return n > 0 && dim < k && dim >= shadeDim*k && 3*chroma < blobThreshold*k && grad < shadeTexture*k
}

const (
	// shadeDim is the least mean share of the tray's luma shade keeps.
	shadeDim = 0.6
	// shadeTexture is the mean luma gradient (central differences over
	// 2 coarse pixels, not halved) below which a dimmed region is shade
	// (rendered shade ≤ 7.9; dice of their felt's colour from 12).
	shadeTexture = 8
)

// trayView is a photo with a plain tray, and the empty tray estimated
// from it; or, learnt, a photo and the tray learnt at enrolment.
type trayView struct {
	c      *colourImg
	bg     gocv.Mat
	learnt bool
}

// dieWithin looks inside region i of mask, which is not die-like, for
// dice: a die joined by its shadow to the shade along the tray's wall
// (taken out, the die stands alone), else a die whose dark facets, near
// the felt's colour, left its edge ragged (closed, it is solid).
func dieWithin(tv *trayView, mask gocv.Mat, cs gocv.PointsVector, i int, minArea float64) []blob {
	c := tv.c
	w, h := mask.Cols(), mask.Rows()
	rect := gocv.BoundingRect(cs.At(i)).Inset(-4).Intersect(image.Rect(0, 0, w, h))
	region := gocv.Zeros(h, w, gocv.MatTypeCV8UC1)
	defer region.Close()
	gocv.DrawContours(&region, cs, i, color.RGBA{255, 255, 255, 0}, -1)
	roi := region.Region(rect)
	defer roi.Close()
	mroi := mask.Region(rect)
	defer mroi.Close()
	comp := gocv.NewMat()
	defer comp.Close()
	gocv.BitwiseAnd(roi, mroi, &comp)
	dice := func(m gocv.Mat) []blob {
		cs := gocv.FindContours(m, gocv.RetrievalExternal, gocv.ChainApproxSimple)
		defer cs.Close()
		var out []blob
		for j := 0; j < cs.Size(); j++ {
			if gocv.ContourArea(cs.At(j)) < minArea {
				continue
			}
			if b := contourBlob(c, cs.At(j), rect.Min); b.dieLike() {
				out = append(out, b)
			}
		}
		return out
	}
	lit := comp.Clone()
	defer lit.Close()
	if tv.unshade(lit, rect) {
		k3 := gocv.GetStructuringElement(gocv.MorphEllipse, image.Pt(3, 3))
		defer k3.Close()
		gocv.MorphologyEx(lit, &lit, gocv.MorphOpen, k3)
		if out := dice(lit); len(out) > 0 {
			return out
		}
	}
	k7 := gocv.GetStructuringElement(gocv.MorphEllipse, image.Pt(7, 7))
	defer k7.Close()
	gocv.MorphologyEx(comp, &comp, gocv.MorphClose, k7)
	return dice(comp)
}

// unshade clears the pixels of m (the part rect of the tray's photo) that
// may be shade: darker than the tray by any amount, of its chroma (a die
// of the felt's tint, darker than it, is cleared whole: dieWithin then
// closes the region instead). Against a learnt tray it is what shaded
// takes for shade: a shadow on a coloured floor dims its chroma with its
// luma, and a stripe of a wood floor darker than the next is no shade
// there, since the learnt tray has the stripe too. It reports false when
// it could not.
func (tv *trayView) unshade(m gocv.Mat, rect image.Rectangle) bool {
	d, err := tv.c.mat.DataPtrUint8()
	if err != nil {
		return false
	}
	bd, err := tv.bg.DataPtrUint8()
	if err != nil || len(bd) != len(d) {
		return false
	}
	md, err := m.DataPtrUint8()
	if err != nil || len(md) != rect.Dx()*rect.Dy() {
		return false
	}
	w := tv.c.mat.Cols()
	for y := range rect.Dy() {
		for x := range rect.Dx() {
			j := 3 * ((y+rect.Min.Y)*w + x + rect.Min.X)
			if tv.learnt && shaded(d[j:j+3], bd[j:j+3]) || !tv.learnt && d[j] < bd[j] && 3*chromaDist(d[j:j+3], bd[j:j+3]) < blobThreshold {
				md[y*rect.Dx()+x] = 0
			}
		}
	}
	return true
}

// litBox is the box (photo pixels) of blob b, found in mask against bg,
// without its shade: of the region's pixels, those that may be the tray
// in shade (shaded) are dropped, and the largest part left is boxed. It
// reports false when that part holds less than litMinShare of the region
// (a die of the tray's tint, darker than it, is mostly "shade": its box
// is no better for the trimming).
func (c *colourImg) litBox(mask []uint8, bg gocv.Mat, b blob) (image.Rectangle, bool) {
	w, h := c.mat.Cols(), c.mat.Rows()
	d, err := c.mat.DataPtrUint8()
	if err != nil || len(mask) != w*h {
		return image.Rectangle{}, false
	}
	bd, err := bg.DataPtrUint8()
	if err != nil || len(bd) != len(d) {
		return image.Rectangle{}, false
	}
	r := image.Rect(int(float64(b.box.Min.X-c.off.X)*c.scale), int(float64(b.box.Min.Y-c.off.Y)*c.scale),
		int(math.Ceil(float64(b.box.Max.X-c.off.X)*c.scale)), int(math.Ceil(float64(b.box.Max.Y-c.off.Y)*c.scale))).Intersect(image.Rect(0, 0, w, h))
	if r.Dx() < 3 || r.Dy() < 3 {
		return image.Rectangle{}, false
	}
	sub := make([]uint8, r.Dx()*r.Dy())
	all := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			i := y*w + x
			if mask[i] == 0 {
				continue
			}
			all++
			if j := 3 * i; shaded(d[j:j+3], bd[j:j+3]) {
				continue
			}
			sub[(y-r.Min.Y)*r.Dx()+x-r.Min.X] = 255
		}
	}
	m, err := gocv.NewMatFromBytes(r.Dy(), r.Dx(), gocv.MatTypeCV8UC1, sub)
	if err != nil {
		return image.Rectangle{}, false
	}
	defer m.Close()
	k := gocv.GetStructuringElement(gocv.MorphEllipse, image.Pt(3, 3))
	defer k.Close()
	gocv.MorphologyEx(m, &m, gocv.MorphOpen, k)
	cs := gocv.FindContours(m, gocv.RetrievalExternal, gocv.ChainApproxSimple)
	defer cs.Close()
	best, bestArea := -1, 0.0
	for i := 0; i < cs.Size(); i++ {
		if a := gocv.ContourArea(cs.At(i)); a > bestArea {
			best, bestArea = i, a
		}
	}
	if best < 0 || bestArea < litMinShare*float64(all) {
		return image.Rectangle{}, false
	}
	inv := 1 / c.scale
	lr := gocv.BoundingRect(cs.At(best)).Add(r.Min)
	return image.Rect(int(float64(lr.Min.X)*inv), int(float64(lr.Min.Y)*inv),
		int(math.Ceil(float64(lr.Max.X)*inv)), int(math.Ceil(float64(lr.Max.Y)*inv))).Add(c.off), true
}

// litMinShare is the least share of a region litBox keeps.
const litMinShare = 0.5

// shaded reports whether photo pixel a may be tray pixel b in shade (both
// YCrCb): darker, with its chroma about grey scaled as its luma is (light
// dimmed by k scales Y, and Cr and Cb about 128, by k). unshade's fixed
// chroma tolerance passes shade on grey felt but not on a brown floor,
// whose shade is less brown.
func shaded(a, b []uint8) bool {
	if a[0] >= b[0] {
		return false
	}
	k := float64(a[0]) / float64(b[0])
	if k < shadeMinLight {
		return false
	}
	return math.Abs(float64(a[1])-128-k*(float64(b[1])-128)) <= shadeChroma &&
		math.Abs(float64(a[2])-128-k*(float64(b[2])-128)) <= shadeChroma
}

// shadeChroma is how far (Cr, Cb) a shaded pixel's chroma may lie from the
// tray's scaled by the dimming: JPEG and sensor noise. shadeMinLight is the
// least share of the tray's luma a shade keeps: what is darker is a die (a
// black one, whose near-grey chroma passes the test above, or a dark
// facet), not its shadow, which the room's light still reaches (0.6–0.65
// on the stand-ins; a black d20 at 0.05–0.2 had all of it taken for shade,
// and no box fix was learnt).
const (
	shadeChroma   = 10
	shadeMinLight = 0.3
)

// dieLike tells a blob that may be one die from clutter: compact, roughly
// as wide as long.
func (b *blob) dieLike() bool { return b.solid >= 0.8 && b.aspect > 0 && b.aspect <= 2 }

// outlineKind guesses the kind from the outline alone, among allowed: a
// triangle is a d4, a square a d6; other outlines (hexagons of d8 and d20,
// the kites of d10) do not tell the kind, and "" is returned.
func (r *Reader) outlineKind(b *blob) string {
	if r.allowed != nil && len(r.allowed) == 1 {
		for k := range r.allowed {
			return k
		}
	}
	switch {
	case b.corners == 3 && r.allows("d4"):
		return "d4"
	case b.square() && r.allows("d6"):
		return "d6"
	}
	return ""
}

// square tells an outline of four corners about as wide as long: a d6
// seen from above.
func (b *blob) square() bool { return b.corners == 4 && b.aspect < 1.3 }
