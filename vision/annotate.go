package vision

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// Annotation colours: read, unread (null), cocked.
var (
	colRead   = color.RGBA{0, 200, 0, 255}
	colNull   = color.RGBA{255, 190, 0, 255}
	colCocked = color.RGBA{230, 0, 0, 255}
)

// Annotate returns a copy of img with each die's outline and a label with
// its kind, face (or "?") and confidence: green when read, amber when its
// face is null, red when cocked.
func Annotate(img image.Image, dice []Die) image.Image {
	b := img.Bounds()
	out := image.NewRGBA(b)
	draw.Draw(out, b, img, b.Min, draw.Src)
	for _, d := range dice {
		col := colRead
		switch {
		case d.Cocked:
			col = colCocked
		case d.Face == nil:
			col = colNull
		}
		pts := d.Outline
		if len(pts) < 3 {
			r := d.Box
			pts = []image.Point{r.Min, {r.Max.X, r.Min.Y}, r.Max, {r.Min.X, r.Max.Y}}
		}
		for i := range pts {
			line(out, pts[i], pts[(i+1)%len(pts)], col)
		}
		label(out, d, col)
	}
	return out
}

// Label returns the text Annotate writes beside a die.
func Label(d Die) string {
	kind := d.Kind
	if kind == "" {
		kind = "die"
	}
	f := "?"
	if d.Face != nil {
		f = fmt.Sprint(*d.Face)
	}
	s := fmt.Sprintf("%s %s %.2f", kind, f, d.Confidence)
	if d.Cocked {
		s += " cocked"
	}
	return s
}

func label(img *image.RGBA, d Die, col color.RGBA) {
	text := Label(d)
	face := basicfont.Face7x13
	w := font.MeasureString(face, text).Ceil()
	x := d.Box.Min.X
	y := d.Box.Min.Y - 3
	if y-13 < img.Bounds().Min.Y {
		y = d.Box.Max.Y + 13
	}
	x = min(max(x, img.Bounds().Min.X), img.Bounds().Max.X-w)
	bg := image.Rect(x-1, y-11, x+w+1, y+3).Intersect(img.Bounds())
	draw.Draw(img, bg, image.NewUniform(color.RGBA{0, 0, 0, 160}), image.Point{}, draw.Over)
	dr := font.Drawer{Dst: img, Src: image.NewUniform(col), Face: face, Dot: fixed.P(x, y)}
	dr.DrawString(text)
}

// line draws a 2-pixel line from a to b.
func line(img *image.RGBA, a, b image.Point, col color.RGBA) {
	dx, dy := abs(b.X-a.X), -abs(b.Y-a.Y)
	sx, sy := 1, 1
	if a.X > b.X {
		sx = -1
	}
	if a.Y > b.Y {
		sy = -1
	}
	e := dx + dy
	x, y := a.X, a.Y
	r := img.Bounds()
	for n := 0; n < 1<<16; n++ {
		for _, p := range [...]image.Point{{x, y}, {x + 1, y}, {x, y + 1}} {
			if p.In(r) {
				img.SetRGBA(p.X, p.Y, col)
			}
		}
		if x == b.X && y == b.Y {
			return
		}
		e2 := 2 * e
		if e2 >= dy {
			e += dy
			x += sx
		}
		if e2 <= dx {
			e += dx
			y += sy
		}
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
