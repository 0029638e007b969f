package vision

import (
	"fmt"
	"image"
	"image/color"

	"gocv.io/x/gocv"
)

// maxWorkSide is the longest side the reader works at: larger photos are
// shrunk first, which keeps the time per photo bounded while pips stay
// several pixels across on any die that fills a sensible part of the tray.
const maxWorkSide = 800

// minWorkSide is the longest side a photo is read at, enlarged if need be:
// the pip finder's sizes and rings are made for pips a few pixels across,
// and a 320x240 webcam's are 3–4 (matteop65 at half size: recall 0.922,
// 46 unread; enlarged back to 640, 0.975). Enlarging is bicubic: bilinear
// softens pip edges more (see enlargedPipFill).
const minWorkSide = 640

// grayImg is a photo in grey at working scale.
type grayImg struct {
	mat   gocv.Mat // CV_8UC1, continuous, working scale
	pix   []uint8  // mat's data
	w, h  int
	scale float64 // working pixels per photo pixel
	off   image.Point
}

func (g *grayImg) close() { g.mat.Close() }

// toPhoto maps a working-scale rectangle back to photo pixels.
func (g *grayImg) toPhoto(r image.Rectangle) image.Rectangle {
	if g.scale == 1 {
		return r.Add(g.off)
	}
	s := 1 / g.scale
	return image.Rect(int(float64(r.Min.X)*s), int(float64(r.Min.Y)*s),
		int(float64(r.Max.X)*s+0.999), int(float64(r.Max.Y)*s+0.999)).Add(g.off)
}

// toPhotoPt maps a working-scale point back to photo pixels.
func (g *grayImg) toPhotoPt(x, y float64) image.Point {
	s := 1 / g.scale
	return image.Pt(int(x*s+0.5), int(y*s+0.5)).Add(g.off)
}

// newGray converts img to grey at working scale, with fast paths for the
// image types JPEG/PNG decoding and the renderer produce.
func newGray(img image.Image) (*grayImg, error) { return newGrayAt(img, 0) }

// newGrayAt is newGray that enlarges a photo whose longer side is below
// minSide to it (see minWorkSide).
func newGrayAt(img image.Image, minSide int) (*grayImg, error) {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	buf := make([]uint8, w*h)
	switch m := img.(type) {
	case *image.YCbCr:
		for y := 0; y < h; y++ {
			i := m.YOffset(b.Min.X, b.Min.Y+y)
			copy(buf[y*w:(y+1)*w], m.Y[i:i+w])
		}
	case *image.Gray:
		for y := 0; y < h; y++ {
			i := m.PixOffset(b.Min.X, b.Min.Y+y)
			copy(buf[y*w:(y+1)*w], m.Pix[i:i+w])
		}
	case *image.RGBA:
		rgbaGray(buf, m.Pix, m.Stride, m.PixOffset(b.Min.X, b.Min.Y), w, h)
	case *image.NRGBA:
		rgbaGray(buf, m.Pix, m.Stride, m.PixOffset(b.Min.X, b.Min.Y), w, h)
	default:
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				buf[y*w+x] = color.GrayModel.Convert(img.At(b.Min.X+x, b.Min.Y+y)).(color.Gray).Y
			}
		}
	}
	src, err := gocv.NewMatFromBytes(h, w, gocv.MatTypeCV8UC1, buf)
	if err != nil {
		return nil, fmt.Errorf("vision: grey image: %w", err)
	}
	g, err := workScale(src, minSide)
	src.Close()
	if err != nil {
		return nil, err
	}
	g.off = b.Min
	return g, nil
}

// rgbaGray converts RGBA bytes to grey with the BT.601 weights the JPEG
// luma uses, so all input types agree.
func rgbaGray(dst, pix []uint8, stride, off, w, h int) {
	for y := 0; y < h; y++ {
		row := pix[off+y*stride : off+y*stride+4*w]
		d := dst[y*w : (y+1)*w]
		for x := range d {
			r, g, b := int(row[4*x]), int(row[4*x+1]), int(row[4*x+2])
			d[x] = uint8((19595*r + 38470*g + 7471*b + 1<<15) >> 16)
		}
	}
}

// grayFromMat converts a BGR, BGRA or grey frame (minSide: see newGrayAt).
func grayFromMat(m gocv.Mat, minSide int) (*grayImg, error) {
	gray := gocv.NewMat()
	defer gray.Close()
	switch m.Channels() {
	case 1:
		m.CopyTo(&gray)
	case 3:
		gocv.CvtColor(m, &gray, gocv.ColorBGRToGray)
	case 4:
		gocv.CvtColor(m, &gray, gocv.ColorBGRAToGray)
	default:
		return nil, fmt.Errorf("vision: frame has %d channels, want 1, 3 or 4", m.Channels())
	}
	if gray.Type() != gocv.MatTypeCV8UC1 {
		return nil, fmt.Errorf("vision: frame type %v, want 8-bit", m.Type())
	}
	return workScale(gray, minSide)
}

// workScale returns src (CV_8UC1) shrunk to the working size, or enlarged
// to minSide, as a new Mat.
func workScale(src gocv.Mat, minSide int) (*grayImg, error) {
	w, h := src.Cols(), src.Rows()
	g := &grayImg{scale: 1, mat: gocv.NewMat()}
	if side := max(w, h); side > maxWorkSide {
		g.scale = float64(maxWorkSide) / float64(side)
		nw, nh := max(1, int(float64(w)*g.scale+0.5)), max(1, int(float64(h)*g.scale+0.5))
		gocv.Resize(src, &g.mat, image.Pt(nw, nh), 0, 0, gocv.InterpolationArea)
		g.scale = float64(nw) / float64(w)
	} else if side < minSide {
		g.scale = float64(minSide) / float64(side)
		nw, nh := max(1, int(float64(w)*g.scale+0.5)), max(1, int(float64(h)*g.scale+0.5))
		gocv.Resize(src, &g.mat, image.Pt(nw, nh), 0, 0, gocv.InterpolationCubic)
		g.scale = float64(nw) / float64(w)
	} else {
		src.CopyTo(&g.mat)
	}
	g.w, g.h = g.mat.Cols(), g.mat.Rows()
	pix, err := g.mat.DataPtrUint8()
	if err != nil {
		g.mat.Close()
		return nil, fmt.Errorf("vision: grey data: %w", err)
	}
	g.pix = pix
	return g, nil
}
