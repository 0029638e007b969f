package render

import (
	"image"
	"image/color"
	"image/draw"
	"math"

	"golang.org/x/image/vector"
)

// affine maps (x, y) to (a*x + b*y + e, c*x + d*y + f).
type affine struct{ a, b, c, d, e, f float64 }

func identity() affine { return affine{a: 1, d: 1} }

func (m affine) apply(x, y float64) (float64, float64) {
	return m.a*x + m.b*y + m.e, m.c*x + m.d*y + m.f
}

// then returns the transform that applies m first and n second.
func (m affine) then(n affine) affine {
	return affine{
		a: n.a*m.a + n.b*m.c, b: n.a*m.b + n.b*m.d,
		c: n.c*m.a + n.d*m.c, d: n.c*m.b + n.d*m.d,
		e: n.a*m.e + n.b*m.f + n.e, f: n.c*m.e + n.d*m.f + n.f,
	}
}

func translate(x, y float64) affine { return affine{a: 1, d: 1, e: x, f: y} }
func scale(sx, sy float64) affine   { return affine{a: sx, d: sy} }
func rotate(t float64) affine {
	s, c := math.Sincos(t)
	return affine{a: c, b: -s, c: s, d: c}
}

// squash compresses by k along direction t (foreshortening of a tilt).
func squash(t, k float64) affine {
	return rotate(-t).then(scale(k, 1)).then(rotate(t))
}

// path records outlines in pixel coordinates so they can be rasterised in a
// small box around them rather than over the whole frame.
type path struct {
	ops                    []pathOp
	open                   bool
	minX, minY, maxX, maxY float64
}

type pathOp struct {
	op byte // 'M', 'L', 'Q', 'C'
	p  [3][2]float64
}

func (p *path) reset() {
	p.ops = p.ops[:0]
	p.open = false
	p.minX, p.minY = math.Inf(1), math.Inf(1)
	p.maxX, p.maxY = math.Inf(-1), math.Inf(-1)
}

func (p *path) grow(x, y float64) {
	p.minX = math.Min(p.minX, x)
	p.minY = math.Min(p.minY, y)
	p.maxX = math.Max(p.maxX, x)
	p.maxY = math.Max(p.maxY, y)
}

func (p *path) moveTo(x, y float64) {
	p.ops = append(p.ops, pathOp{op: 'M', p: [3][2]float64{{x, y}}})
	p.grow(x, y)
}

func (p *path) lineTo(x, y float64) {
	p.ops = append(p.ops, pathOp{op: 'L', p: [3][2]float64{{x, y}}})
	p.grow(x, y)
}

func (p *path) quadTo(x1, y1, x2, y2 float64) {
	p.ops = append(p.ops, pathOp{op: 'Q', p: [3][2]float64{{x1, y1}, {x2, y2}}})
	p.grow(x1, y1)
	p.grow(x2, y2)
}

func (p *path) cubeTo(x1, y1, x2, y2, x3, y3 float64) {
	p.ops = append(p.ops, pathOp{op: 'C', p: [3][2]float64{{x1, y1}, {x2, y2}, {x3, y3}}})
	p.grow(x1, y1)
	p.grow(x2, y2)
	p.grow(x3, y3)
}

// poly adds the closed polygon pts (local coordinates) mapped by m.
func (p *path) poly(m affine, pts [][2]float64) {
	for i, q := range pts {
		x, y := m.apply(q[0], q[1])
		if i == 0 {
			p.moveTo(x, y)
		} else {
			p.lineTo(x, y)
		}
	}
	x, y := m.apply(pts[0][0], pts[0][1])
	p.lineTo(x, y)
}

// circle adds a circle of radius r at (cx, cy) in local coordinates.
func (p *path) circle(m affine, cx, cy, r float64) {
	const n = 16
	var pts [n][2]float64
	for i := range pts {
		s, c := math.Sincos(2 * math.Pi * float64(i) / n)
		pts[i] = [2]float64{cx + r*c, cy + r*s}
	}
	p.poly(m, pts[:])
}

// line adds a stroke of width w from (x0,y0) to (x1,y1) in local coordinates.
func (p *path) line(m affine, x0, y0, x1, y1, w float64) {
	dx, dy := x1-x0, y1-y0
	l := math.Hypot(dx, dy)
	if l == 0 {
		return
	}
	nx, ny := -dy/l*w/2, dx/l*w/2
	p.poly(m, [][2]float64{{x0 + nx, y0 + ny}, {x1 + nx, y1 + ny}, {x1 - nx, y1 - ny}, {x0 - nx, y0 - ny}})
}

// fill rasterises p onto dst in colour c with opacity alpha (0..1), using
// z as scratch.
func fill(dst *image.RGBA, z *vector.Rasterizer, p *path, c color.NRGBA, alpha float64) {
	if len(p.ops) == 0 || alpha <= 0 {
		return
	}
	box := image.Rect(int(math.Floor(p.minX)), int(math.Floor(p.minY)), int(math.Ceil(p.maxX))+1, int(math.Ceil(p.maxY))+1)
	box = box.Intersect(dst.Bounds())
	if box.Empty() {
		return
	}
	z.Reset(box.Dx(), box.Dy())
	z.DrawOp = draw.Over
	ox, oy := float64(box.Min.X), float64(box.Min.Y)
	f := func(q [2]float64) (float32, float32) { return float32(q[0] - ox), float32(q[1] - oy) }
	started := false
	for _, o := range p.ops {
		switch o.op {
		case 'M':
			if started {
				z.ClosePath()
			}
			z.MoveTo(f(o.p[0]))
			started = true
		case 'L':
			z.LineTo(f(o.p[0]))
		case 'Q':
			x1, y1 := f(o.p[0])
			x2, y2 := f(o.p[1])
			z.QuadTo(x1, y1, x2, y2)
		case 'C':
			x1, y1 := f(o.p[0])
			x2, y2 := f(o.p[1])
			x3, y3 := f(o.p[2])
			z.CubeTo(x1, y1, x2, y2, x3, y3)
		}
	}
	if started {
		z.ClosePath()
	}
	a := math.Max(0, math.Min(1, alpha)) * float64(c.A) / 255
	src := image.NewUniform(color.RGBA{
		R: uint8(float64(c.R)*a + 0.5), G: uint8(float64(c.G)*a + 0.5), B: uint8(float64(c.B)*a + 0.5), A: uint8(255*a + 0.5),
	})
	z.Draw(dst, box, src, image.Point{})
}
