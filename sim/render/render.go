// Package render draws simulated top-down photos of dice lying in the tower's
// tray, with the ground truth of every die, deterministically from a seed.
//
// It is pure Go (no OpenCV) so it builds and runs fast in every test. The
// look is simple but has what makes reading real photos hard: rotation,
// slight tilt, side faces with other numbers, shadows, a light gradient,
// vignetting and sensor noise.
package render

import (
	"fmt"
	"image"
	"image/color"
	"math"

	"golang.org/x/image/vector"

	"github.com/towerd/towerd/rules"
)

// Die is one die to draw.
type Die struct {
	Kind rules.Die
	// Face is the PHYSICAL up face: d10 0–9, d100 0,10,…,90 (drawn "00"
	// for 0), others 1–N.
	Face int
	// Pips draws a d6 with pips instead of a numeral (d6 only).
	Pips bool
	// Body and Ink are the die's colour and its numbers' colour; zero
	// values mean ivory with black ink.
	Body, Ink color.NRGBA
	// X, Y is the centre in pixels.
	X, Y float64
	// Size is the across-size in pixels; 0 means DefaultSize.
	Size float64
	// Angle is the rotation in radians.
	Angle float64
	// Tilt (radians, keep below ~0.2) leans the die toward TiltDir: the up
	// face is foreshortened and shifted and one side shows.
	Tilt, TiltDir float64
	// Cocked draws the die leaning steeply (on a wall or another die), as
	// a die that shows no clear up face; the truth flags it.
	Cocked bool
}

// Light is the scene's lighting.
type Light struct {
	// Brightness scales everything: 1 is a normal exposure, ~0.1 a dark
	// frame (lamp off, lens covered).
	Brightness float64
	// Gradient is the relative brightness change from the centre to the
	// edge toward Dir (radians): 0.2 means +20% there, −20% opposite.
	Gradient, Dir float64
	// Vignette darkens the corners by this fraction.
	Vignette float64
}

// Scene is a tray photo to draw.
type Scene struct {
	Width, Height int
	// Tray is the felt area inside the tower walls; empty means the
	// whole frame less a 6% margin.
	Tray image.Rectangle
	// Felt is the tray colour, Wall the surround; zero means dark green
	// felt on light wood.
	Felt, Wall color.NRGBA
	Light      Light
	// Noise is the sensor noise's standard deviation in 8-bit levels.
	Noise float64
	// Seed drives the noise so a scene renders the same every time.
	Seed uint64
	Dice []Die
}

// Truth is what a perfect reader would report for one drawn die.
type Truth struct {
	Kind rules.Die `json:"die"`
	// Face is the physical face (as Die.Face).
	Face int `json:"face"`
	// Box is the die's outline bounding box, clipped to the frame.
	Box    image.Rectangle `json:"-"`
	Center image.Point     `json:"-"`
	Pips   bool            `json:"pips,omitempty"`
	// Cocked: leaning, no clear up face (a reader should not answer it).
	Cocked bool `json:"cocked,omitempty"`
	// OffTray: the die's centre is outside the tray.
	OffTray bool `json:"off_tray,omitempty"`
	// Touching: the die touches or overlaps another die.
	Touching bool `json:"touching,omitempty"`
}

// DefaultTray is the tray rectangle used when Scene.Tray is empty.
func DefaultTray(w, h int) image.Rectangle {
	mx, my := w*6/100, h*6/100
	return image.Rect(mx, my, w-mx, h-my)
}

var (
	defaultFelt = color.NRGBA{R: 34, G: 72, B: 50, A: 255}
	defaultWall = color.NRGBA{R: 168, G: 140, B: 104, A: 255}
	ivory       = color.NRGBA{R: 236, G: 230, B: 214, A: 255}
	black       = color.NRGBA{R: 20, G: 20, B: 22, A: 255}
)

func (s *Scene) tray() image.Rectangle {
	if s.Tray.Empty() {
		return DefaultTray(s.Width, s.Height)
	}
	return s.Tray
}

// Validate reports the first thing in s that cannot be drawn.
func (s *Scene) Validate() error {
	if s.Width <= 0 || s.Height <= 0 || s.Width > 8192 || s.Height > 8192 {
		return fmt.Errorf("render: frame size %dx%d out of range", s.Width, s.Height)
	}
	for i, d := range s.Dice {
		if !d.Kind.Valid() {
			return fmt.Errorf("render: dice[%d]: %v is not a die kind", i, int(d.Kind))
		}
		if !ValidFace(d.Kind, d.Face) {
			return fmt.Errorf("render: dice[%d]: %v has no physical face %d", i, d.Kind, d.Face)
		}
		if d.Pips && d.Kind != rules.D6 {
			return fmt.Errorf("render: dice[%d]: pips only on a d6, not %v", i, d.Kind)
		}
	}
	return nil
}

// Render draws s into a new image.
func Render(s Scene) (*image.RGBA, []Truth, error) {
	if err := s.Validate(); err != nil {
		return nil, nil, err
	}
	img := image.NewRGBA(image.Rect(0, 0, s.Width, s.Height))
	t, err := RenderInto(img, s)
	return img, t, err
}

// MustRender is Render for tests and fixed scenes; it panics on a scene
// that Validate rejects.
func MustRender(s Scene) (*image.RGBA, []Truth) {
	img, t, err := Render(s)
	if err != nil {
		panic(err)
	}
	return img, t
}

// RenderInto draws s into dst (which must be s.Width x s.Height at the
// origin), reusing its pixels: a camera simulation renders many frames.
func RenderInto(dst *image.RGBA, s Scene) ([]Truth, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if dst.Rect != image.Rect(0, 0, s.Width, s.Height) {
		return nil, fmt.Errorf("render: destination is %v, scene is %dx%d", dst.Rect, s.Width, s.Height)
	}
	r := renderer{dst: dst, z: vector.NewRasterizer(1, 1), s: &s}
	r.background(dst.Rect)
	geo := r.drawDice()
	r.light(dst.Rect)
	AddNoise(dst, s.Noise, s.Seed)
	return r.truth(geo), nil
}

// drawDice draws the shadows, then the dice, and returns where they are.
func (r *renderer) drawDice() []dieGeo {
	s := r.s
	geo := make([]dieGeo, len(s.Dice))
	for i := range s.Dice {
		geo[i] = r.geometry(&s.Dice[i])
	}
	for i := range s.Dice {
		r.shadow(&geo[i])
	}
	for i := range s.Dice {
		r.die(&s.Dice[i], &geo[i])
	}
	return geo
}

// Backdrop is a scene's empty tray drawn and lit once, without noise. A
// camera simulation draws many frames of dice moving over the same tray:
// over a backdrop only the areas around the dice are drawn and lit again,
// which is most of the cost of a frame saved.
type Backdrop struct {
	s   Scene
	img *image.RGBA
}

// NewBackdrop draws the tray of s; its dice, noise and seed are ignored.
func NewBackdrop(s Scene) (*Backdrop, error) {
	s.Dice, s.Noise, s.Seed = nil, 0, 0
	img, _, err := Render(s)
	if err != nil {
		return nil, err
	}
	return &Backdrop{s: s, img: img}, nil
}

// Scene is the backdrop's scene (no dice, no noise).
func (b *Backdrop) Scene() Scene { return b.s }

// RenderInto draws dice over the backdrop into dst (the scene's size at
// the origin) with sensor noise of sd noise from seed: the same pixels as
// RenderInto of the backdrop's scene with these dice, noise and seed.
func (b *Backdrop) RenderInto(dst *image.RGBA, dice []Die, noise float64, seed uint64) ([]Truth, error) {
	s := b.s
	s.Dice, s.Noise, s.Seed = dice, noise, seed
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if dst.Rect != b.img.Rect {
		return nil, fmt.Errorf("render: destination is %v, scene is %dx%d", dst.Rect, s.Width, s.Height)
	}
	copy(dst.Pix, b.img.Pix)
	r := renderer{dst: dst, z: vector.NewRasterizer(1, 1), s: &s}
	geo := make([]dieGeo, len(dice))
	var areas []image.Rectangle
	for i := range dice {
		geo[i] = r.geometry(&dice[i])
		areas = append(areas, r.reach(&geo[i]))
	}
	// Each pixel must be lit once: merge overlapping areas first.
	areas = disjoint(areas)
	for _, a := range areas {
		r.background(a)
	}
	r.drawDice()
	for _, a := range areas {
		r.light(a)
	}
	AddNoise(dst, noise, seed)
	return r.truth(geo), nil
}

// reach is the area a die and its shadow may touch, with a margin for
// antialiasing, clipped to the frame.
func (r *renderer) reach(g *dieGeo) image.Rectangle {
	m := int(math.Ceil(0.15*g.radius+g.shadowDist)) + 3
	return g.box.Inset(-m).Intersect(r.dst.Rect)
}

// disjoint replaces overlapping rectangles by their bounding boxes until
// none overlap.
func disjoint(rs []image.Rectangle) []image.Rectangle {
	for merged := true; merged; {
		merged = false
		for i := 0; i < len(rs) && !merged; i++ {
			for j := i + 1; j < len(rs); j++ {
				if rs[i].Overlaps(rs[j]) {
					rs[i] = rs[i].Union(rs[j])
					rs = append(rs[:j], rs[j+1:]...)
					merged = true
					break
				}
			}
		}
	}
	return rs
}

type renderer struct {
	dst *image.RGBA
	z   *vector.Rasterizer
	s   *Scene
	p   path
}

// dieGeo is where a die lands in the frame.
type dieGeo struct {
	shape      shape
	base, top  affine // unit frame -> pixels for the die's foot and its up face
	radius     float64
	box        image.Rectangle
	cx, cy     float64
	body, ink  color.NRGBA
	kind       rules.Die
	face       int
	pips       bool
	cocked     bool
	shadowDist float64
}

// background draws the unlit wall, felt and the lip's shadow inside clip.
func (r *renderer) background(clip image.Rectangle) {
	s := r.s
	felt, wall := s.Felt, s.Wall
	if felt.A == 0 {
		felt = defaultFelt
	}
	if wall.A == 0 {
		wall = defaultWall
	}
	fillRect(r.dst, clip, wall)
	tr := r.s.tray()
	fillRect(r.dst, tr.Intersect(clip), felt)
	// The tray's lip casts a soft shadow on the felt: darker bands along
	// its edges, drawn directly (a rasterised frame costs far more).
	for i := 0; i < 6; i++ {
		in := tr.Inset(i)
		if in.Empty() {
			break
		}
		k := 1 - 0.28*(1-float64(i)/6)
		shadeRect(r.dst, image.Rect(in.Min.X, in.Min.Y, in.Max.X, in.Min.Y+1).Intersect(clip), k)
		shadeRect(r.dst, image.Rect(in.Min.X, in.Max.Y-1, in.Max.X, in.Max.Y).Intersect(clip), k)
		shadeRect(r.dst, image.Rect(in.Min.X, in.Min.Y+1, in.Min.X+1, in.Max.Y-1).Intersect(clip), k)
		shadeRect(r.dst, image.Rect(in.Max.X-1, in.Min.Y+1, in.Max.X, in.Max.Y-1).Intersect(clip), k)
	}
}

// shadeRect multiplies the colours in rect by k.
//
// norace: see AddNoise.
//
//go:norace
func shadeRect(dst *image.RGBA, rect image.Rectangle, k float64) {
	rect = rect.Intersect(dst.Rect)
	g := uint32(k * 256)
	for y := rect.Min.Y; y < rect.Max.Y; y++ {
		row := dst.Pix[dst.PixOffset(rect.Min.X, y):dst.PixOffset(rect.Max.X, y)]
		for i := 0; i+3 < len(row); i += 4 {
			row[i] = uint8(uint32(row[i]) * g >> 8)
			row[i+1] = uint8(uint32(row[i+1]) * g >> 8)
			row[i+2] = uint8(uint32(row[i+2]) * g >> 8)
		}
	}
}

// fillRect fills rect with c.
//
// norace: see AddNoise.
//
//go:norace
func fillRect(dst *image.RGBA, rect image.Rectangle, c color.NRGBA) {
	rect = rect.Intersect(dst.Rect)
	for y := rect.Min.Y; y < rect.Max.Y; y++ {
		row := dst.Pix[dst.PixOffset(rect.Min.X, y):dst.PixOffset(rect.Max.X, y)]
		for i := 0; i < len(row); i += 4 {
			row[i], row[i+1], row[i+2], row[i+3] = c.R, c.G, c.B, 255
		}
	}
}

func (r *renderer) geometry(d *Die) dieGeo {
	size := d.Size
	if size <= 0 {
		size = DefaultSize(d.Kind, r.s.Width)
	}
	rad := size / 2
	tilt, tdir := d.Tilt, d.TiltDir
	if d.Cocked {
		tilt = math.Max(tilt, 0.65)
	}
	tilt = math.Max(-1.2, math.Min(1.2, tilt))
	base := scale(rad, rad).then(rotate(d.Angle)).then(squash(tdir, math.Cos(tilt)))
	// The up face rises by about the die's height and moves with the lean.
	off := rad * 0.55 * math.Sin(tilt)
	ox, oy := off*math.Cos(tdir), off*math.Sin(tdir)
	top := base.then(translate(d.X+ox/2, d.Y+oy/2))
	base = base.then(translate(d.X-ox/2, d.Y-oy/2))
	g := dieGeo{
		shape: dieShape(d.Kind, d.Face, d.Pips && d.Kind == rules.D6),
		base:  base, top: top, radius: rad, cx: d.X, cy: d.Y,
		body: d.Body, ink: d.Ink, kind: d.Kind, face: d.Face, pips: d.Pips && d.Kind == rules.D6, cocked: d.Cocked,
		shadowDist: rad * (0.14 + 0.3*math.Sin(tilt)),
	}
	if g.body.A == 0 {
		g.body = ivory
	}
	if g.ink.A == 0 {
		g.ink = black
	}
	minX, minY, maxX, maxY := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, m := range []affine{base, top} {
		for _, q := range g.shape.outline {
			x, y := m.apply(q[0], q[1])
			minX, minY = math.Min(minX, x), math.Min(minY, y)
			maxX, maxY = math.Max(maxX, x), math.Max(maxY, y)
		}
	}
	g.box = image.Rect(int(math.Floor(minX)), int(math.Floor(minY)), int(math.Ceil(maxX)), int(math.Ceil(maxY))).Intersect(r.dst.Rect)
	return g
}

// shadowDir is the direction shadows fall: away from the light.
func (r *renderer) shadowDir() (float64, float64) {
	s, c := math.Sincos(r.s.Light.Dir + math.Pi)
	if r.s.Light.Gradient == 0 {
		// Unlit direction unknown: a light from above-left.
		return 0.6, 0.8
	}
	return c, s
}

func (r *renderer) shadow(g *dieGeo) {
	dx, dy := r.shadowDir()
	for i, k := range []float64{1.1, 1.04, 0.98} {
		r.p.reset()
		m := scale(k, k).then(g.base).then(translate(dx*g.shadowDist, dy*g.shadowDist))
		r.p.poly(m, g.shape.outline)
		fill(r.dst, r.z, &r.p, color.NRGBA{A: 255}, []float64{0.16, 0.18, 0.2}[i])
	}
}

func shade(c color.NRGBA, k float64) color.NRGBA {
	f := func(v uint8) uint8 { return uint8(math.Max(0, math.Min(255, float64(v)*k))) }
	return color.NRGBA{R: f(c.R), G: f(c.G), B: f(c.B), A: 255}
}

func (r *renderer) die(d *Die, g *dieGeo) {
	// Body: the foot and the top outline in the side colour make the
	// silhouette, including the side that a tilt shows.
	r.p.reset()
	r.p.poly(g.base, g.shape.outline)
	r.p.poly(g.top, g.shape.outline)
	fill(r.dst, r.z, &r.p, shade(g.body, 0.62), 1)
	for _, f := range g.shape.facets {
		r.p.reset()
		r.p.poly(g.top, f.pts)
		fill(r.dst, r.z, &r.p, shade(g.body, f.shade), 1)
	}
	if len(g.shape.edges) > 0 {
		r.p.reset()
		w := 1.2 / g.radius
		for _, e := range g.shape.edges {
			r.p.line(g.top, e[0], e[1], e[2], e[3], w)
		}
		fill(r.dst, r.z, &r.p, shade(g.body, 0.5), 0.8)
	}
	// Facet borders: thin dark lines where faces meet.
	r.p.reset()
	w := 1.0 / g.radius
	for _, f := range g.shape.facets {
		for i := range f.pts {
			a, b := f.pts[i], f.pts[(i+1)%len(f.pts)]
			r.p.line(g.top, a[0], a[1], b[0], b[1], w)
		}
	}
	fill(r.dst, r.z, &r.p, shade(g.body, 0.55), 0.5)
	if g.pips {
		r.p.reset()
		for _, p := range g.shape.pips {
			r.p.circle(g.top, p[0], p[1], g.shape.pipR)
		}
		fill(r.dst, r.z, &r.p, g.ink, 1)
	}
	for _, l := range g.shape.labels {
		r.p.reset()
		m := scale(l.h, l.h*l.squash).then(rotate(l.rot)).then(translate(l.x, l.y)).then(g.top)
		textPath(&r.p, l.text, m, l.underline)
		fill(r.dst, r.z, &r.p, g.ink, l.alpha)
	}
	_ = d
}

// light applies the light gradient, vignette and brightness inside clip.
//
// norace: see AddNoise.
//
//go:norace
func (r *renderer) light(clip image.Rectangle) {
	s := r.s
	b := s.Light.Brightness
	if b == 0 {
		b = 1
	}
	clip = clip.Intersect(r.dst.Rect)
	w, h := s.Width, s.Height
	cx, cy := float64(w)/2, float64(h)/2
	gx, gy := math.Cos(s.Light.Dir)*s.Light.Gradient/cx, math.Sin(s.Light.Dir)*s.Light.Gradient/cx
	vig := s.Light.Vignette / (cx*cx + cy*cy)
	pix := r.dst.Pix
	for y := clip.Min.Y; y < clip.Max.Y; y++ {
		dy := float64(y) - cy
		row := pix[y*r.dst.Stride+4*clip.Min.X : y*r.dst.Stride+4*clip.Max.X]
		for x := clip.Min.X; x < clip.Max.X; x++ {
			dx := float64(x) - cx
			gain := b * (1 + gx*dx + gy*dy) * (1 - vig*(dx*dx+dy*dy))
			g := int32(gain * 1024)
			px := row[4*(x-clip.Min.X) : 4*(x-clip.Min.X)+4 : 4*(x-clip.Min.X)+4]
			for c := 0; c < 3; c++ {
				v := (int32(px[c])*g + 512) >> 10
				if v > 255 {
					v = 255
				}
				px[c] = uint8(v)
			}
			px[3] = 255
		}
	}
}

// AddNoise adds sensor noise of standard deviation sigma (grey levels) to
// every colour sample of img, deterministically from seed. A camera
// simulation draws a still scene once and re-noises a copy per frame.
//
// The per-pixel kernels (this, light, fillRect, shadeRect) are exempt
// from the race detector (go:norace): they only touch a picture their
// caller owns, from one goroutine, and instrumented they made every test
// that draws frames 10–15x slower under -race.
//
//go:norace
func AddNoise(img *image.RGBA, sigma float64, seed uint64) {
	if sigma <= 0 {
		return
	}
	// SplitMix64 kept in a local: no call or memory access per draw, so
	// this stays fast under the race detector too (a PCG behind
	// math/rand's interface made noise 40x slower there than the rest of
	// a frame).
	x := seed ^ 0x5eed_7a11_0f_d1ce
	// Each sample sums three 7-bit uniforms from one 64-bit draw (three
	// samples per draw): u = 2·sum − 381 has mean 0 and sd ≈ 128, close
	// enough to a Gaussian. Integer maths: k is sigma/128 in 1/1024ths.
	k := int32(sigma / 128 * 1024)
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		row := img.Pix[img.PixOffset(b.Min.X, y):img.PixOffset(b.Max.X, y)]
		for i := 0; i+3 < len(row); i += 4 {
			x += 0x9e3779b97f4a7c15
			bits := x
			bits = (bits ^ bits>>30) * 0xbf58476d1ce4e5b9
			bits = (bits ^ bits>>27) * 0x94d049bb133111eb
			bits ^= bits >> 31
			for c := 0; c < 3; c++ {
				u := 2*(int32(bits&0x7f)+int32(bits>>7&0x7f)+int32(bits>>14&0x7f)) - 381
				bits >>= 21
				v := int32(row[i+c]) + ((u*k + 512) >> 10)
				if v < 0 {
					v = 0
				} else if v > 255 {
					v = 255
				}
				row[i+c] = uint8(v)
			}
		}
	}
}

func (r *renderer) truth(geo []dieGeo) []Truth {
	tr := r.s.tray()
	out := make([]Truth, len(geo))
	for i, g := range geo {
		out[i] = Truth{
			Kind: g.kind, Face: g.face, Box: g.box,
			Center: image.Pt(int(math.Round(g.cx)), int(math.Round(g.cy))),
			Pips:   g.pips, Cocked: g.cocked,
			OffTray: !image.Pt(int(g.cx), int(g.cy)).In(tr),
		}
		for j, h := range geo {
			if j != i && touching(g, h) {
				out[i].Touching = true
			}
		}
	}
	return out
}

// touching compares the dice as discs of their inscribed-to-outer mean
// radius: dice whose outlines meet or overlap.
func touching(a, b dieGeo) bool {
	ra := a.radius * 0.9
	rb := b.radius * 0.9
	return math.Hypot(a.cx-b.cx, a.cy-b.cy) <= ra+rb
}
