package numeral

import (
	"image"
	"image/color"
	"math"
)

// Margin is the share of the die's box side that CropDie adds on each side
// of the box. Train and Classify expect crops made this way: the die in the
// middle, about 1/(1+2·Margin) of the crop's side across.
const Margin = 0.25

// CropDie copies the square around box (the die's bounding box in img),
// grown by Margin on each side, into a new image. Parts outside img repeat
// its nearest edge pixel, so a die at the border still sits in the middle.
func CropDie(img image.Image, box image.Rectangle) *image.RGBA {
	b := img.Bounds()
	side := max(box.Dx(), box.Dy())
	if side < 1 {
		side = 1
	}
	cs := int(math.Round(float64(side) * (1 + 2*Margin)))
	// Centre in half pixels so that odd and even sizes stay centred.
	x0 := (box.Min.X + box.Max.X - cs) / 2
	y0 := (box.Min.Y + box.Max.Y - cs) / 2
	out := image.NewRGBA(image.Rect(0, 0, cs, cs))
	if b.Empty() {
		return out
	}
	for y := 0; y < cs; y++ {
		sy := min(max(y0+y, b.Min.Y), b.Max.Y-1)
		row := out.Pix[y*out.Stride:]
		for x := 0; x < cs; x++ {
			sx := min(max(x0+x, b.Min.X), b.Max.X-1)
			r, g, bb := rgbAt(img, sx, sy)
			row[4*x], row[4*x+1], row[4*x+2], row[4*x+3] = r, g, bb, 255
		}
	}
	return out
}

// rgbAt reads one pixel as 8-bit RGB, with fast paths for the image types
// the JPEG and PNG decoders and the renderers produce.
func rgbAt(img image.Image, x, y int) (r, g, b uint8) {
	switch m := img.(type) {
	case *image.RGBA:
		i := m.PixOffset(x, y)
		return m.Pix[i], m.Pix[i+1], m.Pix[i+2]
	case *image.NRGBA:
		i := m.PixOffset(x, y)
		return m.Pix[i], m.Pix[i+1], m.Pix[i+2]
	case *image.YCbCr:
		yi, ci := m.YOffset(x, y), m.COffset(x, y)
		return color.YCbCrToRGB(m.Y[yi], m.Cb[ci], m.Cr[ci])
	case *image.Gray:
		v := m.Pix[m.PixOffset(x, y)]
		return v, v, v
	}
	rr, gg, bb, _ := img.At(x, y).RGBA()
	return uint8(rr >> 8), uint8(gg >> 8), uint8(bb >> 8)
}

// canon is a crop as three 8-bit planes, shrunk (area averaging) so that
// sampling the network's view from it needs no more than a few taps.
type canon struct {
	w, h int
	pix  []uint8 // R plane, G plane, B plane
}

// toCanon converts img, shrinking it so that its longer side is at most
// maxSide pixels.
func toCanon(img image.Image, maxSide int) *canon {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if w <= 0 || h <= 0 {
		return &canon{w: 1, h: 1, pix: make([]uint8, 3)}
	}
	f := 1.0
	if s := max(w, h); s > maxSide {
		f = float64(s) / float64(maxSide)
	}
	if f == 1 {
		c := &canon{w: w, h: h, pix: make([]uint8, 3*w*h)}
		n := w * h
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				r, g, bb := rgbAt(img, b.Min.X+x, b.Min.Y+y)
				i := y*w + x
				c.pix[i], c.pix[n+i], c.pix[2*n+i] = r, g, bb
			}
		}
		return c
	}
	ow := max(1, int(math.Round(float64(w)/f)))
	oh := max(1, int(math.Round(float64(h)/f)))
	fx, fy := float64(w)/float64(ow), float64(h)/float64(oh)
	// Accumulate each source pixel into the output cells it overlaps,
	// row by row, so big crops are read once.
	acc := make([]float32, 3*ow*oh)
	xs := spans(w, ow, fx)
	ys := spans(h, oh, fy)
	rowAcc := make([]float32, 3*ow)
	for y := 0; y < h; y++ {
		clear(rowAcc)
		for x := 0; x < w; x++ {
			r, g, bb := rgbAt(img, b.Min.X+x, b.Min.Y+y)
			for _, s := range xs[x] {
				rowAcc[s.i] += s.w * float32(r)
				rowAcc[ow+s.i] += s.w * float32(g)
				rowAcc[2*ow+s.i] += s.w * float32(bb)
			}
		}
		for _, s := range ys[y] {
			for ch := 0; ch < 3; ch++ {
				dst := acc[ch*ow*oh+s.i*ow:][:ow]
				for i, v := range rowAcc[ch*ow : ch*ow+ow] {
					dst[i] += s.w * v
				}
			}
		}
	}
	c := &canon{w: ow, h: oh, pix: make([]uint8, 3*ow*oh)}
	norm := float32(1 / (fx * fy))
	for i, v := range acc {
		c.pix[i] = uint8(min(255, max(0, v*norm+0.5)))
	}
	return c
}

type span struct {
	i int
	w float32
}

// spans lists, for each of n source pixels, the output cells (of m, each f
// source pixels wide) it overlaps and by how much.
func spans(n, m int, f float64) [][]span {
	out := make([][]span, n)
	for x := 0; x < n; x++ {
		a, b := float64(x), float64(x+1)
		for i := int(a / f); i < m && float64(i)*f < b; i++ {
			lo, hi := max(a, float64(i)*f), min(b, float64(i+1)*f)
			if hi > lo {
				out[x] = append(out[x], span{i, float32(hi - lo)})
			}
		}
	}
	return out
}

// view says where the network looks in a canon image: input pixel offset
// o from the input's centre maps to canon point (cx, cy) + m·o.
type view struct {
	cx, cy float64
	m      [4]float64 // row-major 2×2
}

// dieSide is the die's side in canon pixels for a crop made by CropDie.
func (c *canon) dieSide() float64 { return float64(max(c.w, c.h)) / (1 + 2*Margin) }

// centreView is the un-augmented view of a crop made by CropDie: its
// centre, covering frac of the die's side.
func centreView(c *canon, size int, frac float64) view {
	a := c.dieSide() * frac / float64(size)
	return view{cx: float64(c.w) / 2, cy: float64(c.h) / 2, m: [4]float64{a, 0, 0, a}}
}

// sample renders the view into out as the net a takes it (a.Channels
// planes, values 0..1): a Size×Size square, or for a polar net Size/2
// radii (rows) by 2·Size angles (columns) of the disc inside that square.
// It averages up to 3×3 bilinear taps per pixel when shrinking.
func (c *canon) sample(v view, a Arch, out []float32) {
	size, channels := a.Size, a.Channels
	sc := math.Sqrt(math.Abs(v.m[0]*v.m[3] - v.m[1]*v.m[2]))
	ss := min(3, max(1, int(math.Ceil(sc-0.25))))
	inv := 1 / float64(ss)
	n := c.w * c.h
	half := float64(size) / 2
	wScale := float32(1.0 / (255 * float64(ss*ss)))
	rows, cols := a.inShape()
	// offset maps a point of the input grid (column, row; fractional) to
	// an offset from the view's centre in input pixels.
	offset := func(px, py float64, _ int) (float64, float64) { return px - half, py - half }
	if a.Polar {
		// The angles are the same for every row: their cosines and sines
		// once, not per sample (they were a tenth of a look's time).
		dth := 2 * math.Pi / float64(cols)
		cosT, sinT := make([]float64, cols*ss), make([]float64, cols*ss)
		for px := range cols {
			for sx := range ss {
				th := (float64(px) + (float64(sx)+0.5)*inv) * dth
				cosT[px*ss+sx], sinT[px*ss+sx] = math.Cos(th), math.Sin(th)
			}
		}
		offset = func(_, py float64, k int) (float64, float64) {
			return py * cosT[k], py * sinT[k]
		}
	}
	for py := 0; py < rows; py++ {
		for px := 0; px < cols; px++ {
			var r, g, b float32
			for sy := 0; sy < ss; sy++ {
				fy := float64(py) + (float64(sy)+0.5)*inv
				for sx := 0; sx < ss; sx++ {
					ox, oy := offset(float64(px)+(float64(sx)+0.5)*inv, fy, px*ss+sx)
					x := v.cx + v.m[0]*ox + v.m[1]*oy - 0.5
					y := v.cy + v.m[2]*ox + v.m[3]*oy - 0.5
					x = min(max(x, 0), float64(c.w-1))
					y = min(max(y, 0), float64(c.h-1))
					x0, y0 := int(x), int(y)
					x1, y1 := min(x0+1, c.w-1), min(y0+1, c.h-1)
					fx, fy := float32(x-float64(x0)), float32(y-float64(y0))
					i00, i01, i10, i11 := y0*c.w+x0, y0*c.w+x1, y1*c.w+x0, y1*c.w+x1
					w00, w01, w10, w11 := (1-fx)*(1-fy), fx*(1-fy), (1-fx)*fy, fx*fy
					p := c.pix
					r += w00*float32(p[i00]) + w01*float32(p[i01]) + w10*float32(p[i10]) + w11*float32(p[i11])
					p = c.pix[n:]
					g += w00*float32(p[i00]) + w01*float32(p[i01]) + w10*float32(p[i10]) + w11*float32(p[i11])
					p = c.pix[2*n:]
					b += w00*float32(p[i00]) + w01*float32(p[i01]) + w10*float32(p[i10]) + w11*float32(p[i11])
				}
			}
			o := py*cols + px
			if channels == 1 {
				out[o] = (0.299*r + 0.587*g + 0.114*b) * wScale
			} else {
				out[o] = r * wScale
				out[rows*cols+o] = g * wScale
				out[2*rows*cols+o] = b * wScale
			}
		}
	}
}

// standardize scales x to zero mean and unit spread, so the net sees the
// same numbers under brighter or dimmer light; the floor on the spread
// keeps an empty, flat crop from having its noise blown up.
func standardize(x []float32) {
	var s, s2 float64
	for _, v := range x {
		s += float64(v)
		s2 += float64(v) * float64(v)
	}
	n := float64(len(x))
	mean := s / n
	sd := math.Sqrt(max(0, s2/n-mean*mean))
	k := float32(1 / max(sd, 0.05))
	m := float32(mean)
	for i, v := range x {
		x[i] = (v - m) * k
	}
}
