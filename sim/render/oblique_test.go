package render

import (
	"bufio"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"

	"golang.org/x/image/vector"
)

// v3 is a point or direction in the roller's world: millimetres, z up,
// the floor at z = 0.
type v3 [3]float64

func (a v3) add(b v3) v3      { return v3{a[0] + b[0], a[1] + b[1], a[2] + b[2]} }
func (a v3) sub(b v3) v3      { return v3{a[0] - b[0], a[1] - b[1], a[2] - b[2]} }
func (a v3) mul(k float64) v3 { return v3{a[0] * k, a[1] * k, a[2] * k} }
func (a v3) dot(b v3) float64 { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] }
func (a v3) cross(b v3) v3 {
	return v3{a[1]*b[2] - a[2]*b[1], a[2]*b[0] - a[0]*b[2], a[0]*b[1] - a[1]*b[0]}
}
func (a v3) unit() v3      { return a.mul(1 / math.Sqrt(a.dot(a))) }
func (m m3) apply(a v3) v3 { return v3{m[0].dot(a), m[1].dot(a), m[2].dot(a)} }
func (m m3) then(n m3) (o m3) { // n after m
	for i := range 3 {
		for j := range 3 {
			o[i][j] = n[i][0]*m[0][j] + n[i][1]*m[1][j] + n[i][2]*m[2][j]
		}
	}
	return o
}

type m3 [3]v3

// turn is the rotation by t about the unit axis a (Rodrigues).
func turn(a v3, t float64) m3 {
	s, c := math.Sincos(t)
	x, y, z := a[0], a[1], a[2]
	k := 1 - c
	return m3{
		{c + x*x*k, x*y*k - z*s, x*z*k + y*s},
		{y*x*k + z*s, c + y*y*k, y*z*k - x*s},
		{z*x*k - y*s, z*y*k + x*s, c + z*z*k},
	}
}

// icosa is a d20: 12 corners, 20 outward faces (the numeral's top points at
// the face's first corner) and their numbers, opposite faces summing to 21.
type icosa struct {
	v   [12]v3
	f   [20][3]int
	num [20]int
}

func newIcosa(r *rand.Rand) icosa {
	var d icosa
	p := (1 + math.Sqrt(5)) / 2
	i := 0
	for _, a := range []float64{-1, 1} {
		for _, b := range []float64{-p, p} {
			d.v[i], d.v[i+1], d.v[i+2] = v3{0, a, b}, v3{a, b, 0}, v3{b, 0, a}
			i += 3
		}
	}
	n := 0
	for a := 0; a < 12; a++ {
		for b := a + 1; b < 12; b++ {
			for c := b + 1; c < 12; c++ {
				e := func(i, j int) bool { q := d.v[i].sub(d.v[j]); return math.Abs(q.dot(q)-4) < 1e-6 }
				if e(a, b) && e(b, c) && e(a, c) {
					f := [3]int{a, b, c}
					if d.v[b].sub(d.v[a]).cross(d.v[c].sub(d.v[a])).dot(d.v[a]) < 0 {
						f[1], f[2] = f[2], f[1]
					}
					// The numeral's top: a corner chosen per face, as sets differ.
					k := r.IntN(3)
					d.f[n] = [3]int{f[k], f[(k+1)%3], f[(k+2)%3]}
					n++
				}
			}
		}
	}
	pairs := r.Perm(10)
	next := 0
	for i := range d.f {
		if d.num[i] != 0 {
			continue
		}
		c := d.centre(i)
		for j := range d.f {
			if o := d.centre(j); o.add(c).dot(o.add(c)) < 1e-9 {
				d.num[i], d.num[j] = pairs[next]+1, 20-pairs[next]
				next++
			}
		}
	}
	return d
}

func (d *icosa) centre(i int) v3 {
	f := d.f[i]
	return d.v[f[0]].add(d.v[f[1]]).add(d.v[f[2]]).mul(1.0 / 3)
}

func (d *icosa) normal(i int) v3 { return d.centre(i).unit() }

// obliqueCam is a webcam looking down at elev radians onto a roller's
// floor from dist millimetres, focal length focal pixels.
type obliqueCam struct {
	pos, fwd, right, up v3
	focal, w, h         float64
}

func newObliqueCam(elev, dist, focal float64, w, h int) obliqueCam {
	s, c := math.Sincos(elev)
	fwd := v3{0, c, -s}
	right := fwd.cross(v3{0, 0, 1}).unit()
	return obliqueCam{pos: v3{0, -dist * c, dist * s}, fwd: fwd, right: right, up: right.cross(fwd), focal: focal, w: float64(w), h: float64(h)}
}

func (c obliqueCam) project(p v3) [2]float64 {
	d := p.sub(c.pos)
	z := d.dot(c.fwd)
	return [2]float64{c.w/2 + c.focal*d.dot(c.right)/z, c.h/2 - c.focal*d.dot(c.up)/z}
}

// obliqueSet is one owner's dice: body and ink colours.
type obliqueSet struct{ body, ink color.NRGBA }

var obliqueSets = map[string]obliqueSet{
	"purple": {color.NRGBA{96, 44, 140, 255}, color.NRGBA{236, 236, 236, 255}},
	"ivory":  {color.NRGBA{226, 218, 196, 255}, color.NRGBA{30, 30, 30, 255}},
	"blue":   {color.NRGBA{40, 90, 170, 255}, color.NRGBA{230, 200, 90, 255}},
	"red":    {color.NRGBA{170, 30, 36, 255}, color.NRGBA{240, 240, 236, 255}},
	"black":  {color.NRGBA{28, 28, 32, 255}, color.NRGBA{236, 236, 236, 255}},
}

// obliqueRoller draws photos of one d20 on a popper's floor seen at an
// angle: the up face foreshortened, the faces toward the camera showing
// their numbers, glossy highlights, a shadow, glare off the dome, webcam
// blur, noise and JPEG.
type obliqueRoller struct {
	cam    obliqueCam
	die    icosa
	set    obliqueSet
	scale  float64 // mm per icosahedron unit
	floor  *image.RGBA
	light  v3
	glare  [][4]float64 // x, y, radius, strength
	z      vector.Rasterizer
	p      path
	w, h   int
	rx, ry float64 // the floor's half extent, mm
	blur   float64 // scales the webcam's softness
}

func newObliqueRoller(seed uint64, elev float64, set obliqueSet, w, h int, dist float64) *obliqueRoller {
	r := rand.New(rand.NewPCG(seed, 0x0b11))
	o := &obliqueRoller{
		// A 21 mm die 250 mm away (the default dist) is about 60 px
		// across.
		cam: newObliqueCam(elev, dist, 720, w, h), die: newIcosa(r), set: set,
		scale: 10.5 / math.Sqrt(1+math.Pow((1+math.Sqrt(5))/2, 2)),
		light: v3{-0.4, -0.3, 1}.unit(), w: w, h: h, rx: 70, ry: 55, blur: 1,
	}
	o.floor = image.NewRGBA(image.Rect(0, 0, w, h))
	base := color.NRGBA{uint8(150 + r.IntN(60)), uint8(150 + r.IntN(60)), uint8(150 + r.IntN(60)), 255}
	for y := range h {
		for x := range w {
			// The floor is what lies inside an ellipse on z = 0; the
			// machine's dark body lies around it.
			c := shade(color.NRGBA{40, 40, 46, 255}, 1+0.2*math.Sin(float64(x)/37))
			fx, fy := o.floorAt(float64(x), float64(y))
			if (fx/(o.rx+12))*(fx/(o.rx+12))+(fy/(o.ry+12))*(fy/(o.ry+12)) < 1 {
				c = shade(base, 0.85+0.15*math.Cos(fx/40)+0.03*math.Sin(fx*fy/90))
			}
			i := o.floor.PixOffset(x, y)
			o.floor.Pix[i], o.floor.Pix[i+1], o.floor.Pix[i+2], o.floor.Pix[i+3] = c.R, c.G, c.B, 255
		}
	}
	for range 3 {
		o.glare = append(o.glare, [4]float64{r.Float64() * float64(w), r.Float64() * float64(h), 15 + 40*r.Float64(), 0.15 + 0.3*r.Float64()})
	}
	return o
}

// floorAt is the floor point (z = 0) that pixel (x, y) sees.
func (o *obliqueRoller) floorAt(x, y float64) (float64, float64) {
	c := o.cam
	d := c.fwd.mul(c.focal).add(c.right.mul(x - c.w/2)).add(c.up.mul(c.h/2 - y))
	t := -c.pos[2] / d[2]
	return c.pos[0] + t*d[0], c.pos[1] + t*d[1]
}

// photo draws the die with face up (its number), turned yaw about the
// vertical, at floor point (x, y), with the room's light scaling R, G and
// B by cast, and returns the frame and die's box.
func (o *obliqueRoller) photo(r *rand.Rand, face int, yaw, x, y float64, cast [3]float64) (*image.RGBA, image.Rectangle) {
	fi := 0
	for i, n := range o.die.num {
		if n == face {
			fi = i
		}
	}
	// Rotate the face's normal onto +z, then yaw, then a slight wobble.
	n := o.die.normal(fi)
	up := v3{0, 0, 1}
	rot := turn(v3{1, 0, 0}, math.Pi)
	if ax := n.cross(up); ax.dot(ax) > 1e-12 {
		rot = turn(ax.unit(), math.Acos(max(-1, min(1, n.dot(up)))))
	}
	rot = rot.then(turn(up, yaw)).then(turn(v3{r.Float64() - 0.5, r.Float64() - 0.5, 0}.unit(), 0.03*r.NormFloat64()))
	// The die rests on its down face: its centre one inradius up.
	centre := v3{x, y, o.scale * math.Sqrt(o.die.centre(fi).dot(o.die.centre(fi)))}
	world := func(p v3) v3 { return rot.apply(p).mul(o.scale).add(centre) }

	img := image.NewRGBA(o.floor.Rect)
	copy(img.Pix, o.floor.Pix)
	// The shadow: the die's corners cast along the light onto the floor.
	var sh, im [][2]float64
	for _, v := range o.die.v {
		p := world(v)
		sh = append(sh, o.cam.project(p.sub(o.light.mul(p[2]/o.light[2]))))
		im = append(im, o.cam.project(p))
	}
	o.p.reset()
	o.p.poly(identity(), hull2d(sh))
	fill(img, &o.z, &o.p, color.NRGBA{A: 255}, 0.35)

	box := boundsOf(im).Inset(-2).Intersect(img.Rect)
	const ss = 4
	patch := image.NewRGBA(image.Rect(0, 0, box.Dx()*ss, box.Dy()*ss))
	toPatch := translate(-float64(box.Min.X), -float64(box.Min.Y)).then(scale(ss, ss))
	view := o.cam.pos.sub(centre).unit()
	half := v3{}.add(o.light).add(view).unit()
	lit := func(c color.NRGBA, nw v3) color.NRGBA {
		k := 0.35 + 0.75*max(0, nw.dot(o.light))
		s := 110 * math.Pow(max(0, nw.dot(half)), 40)
		f := func(v uint8) uint8 { return uint8(max(0, min(255, float64(v)*k+s))) }
		return color.NRGBA{f(c.R), f(c.G), f(c.B), 255}
	}
	// Silhouette first so faces meet without seams.
	o.p.reset()
	o.p.poly(toPatch, hull2d(im))
	fill(patch, &o.z, &o.p, shade(o.set.body, 0.5), 1)
	edge := 2 * o.scale // mm
	for i := range o.die.f {
		nw := rot.apply(o.die.normal(i))
		cw := world(o.die.centre(i))
		if nw.dot(o.cam.pos.sub(cw)) <= 0 {
			continue
		}
		f := o.die.f[i]
		var pts [][2]float64
		for _, k := range f {
			pts = append(pts, o.cam.project(world(o.die.v[k])))
		}
		o.p.reset()
		o.p.poly(toPatch, pts)
		fill(patch, &o.z, &o.p, lit(o.set.body, nw), 1)
		for k := range pts {
			a, b := pts[k], pts[(k+1)%3]
			o.p.reset()
			o.p.line(toPatch, a[0], a[1], b[0], b[1], 0.8)
			fill(patch, &o.z, &o.p, shade(o.set.body, 0.6), 0.6)
		}
		// The numeral: its top toward the face's first corner.
		top := world(o.die.v[f[0]]).sub(cw).unit()
		right := top.cross(nw)
		text := strconv.Itoa(o.die.num[i])
		hgt := 0.40 * edge
		if len(text) == 2 {
			hgt = 0.34 * edge
		}
		c0 := o.cam.project(cw)
		cr := o.cam.project(cw.add(right.mul(hgt)))
		cd := o.cam.project(cw.sub(top.mul(hgt)))
		m := affine{a: cr[0] - c0[0], b: cd[0] - c0[0], c: cr[1] - c0[1], d: cd[1] - c0[1], e: c0[0], f: c0[1]}
		o.p.reset()
		textPath(&o.p, text, translate(0, -0.08).then(m).then(toPatch), text == "6" || text == "9")
		fill(patch, &o.z, &o.p, lit(o.set.ink, nw), 1)
	}
	// Down-sample the patch onto the frame (premultiplied over).
	for py := 0; py < box.Dy(); py++ {
		for px := 0; px < box.Dx(); px++ {
			var s [4]int
			for dy := range ss {
				for dx := range ss {
					q := patch.PixOffset(px*ss+dx, py*ss+dy)
					for c := range 4 {
						s[c] += int(patch.Pix[q+c])
					}
				}
			}
			q := img.PixOffset(box.Min.X+px, box.Min.Y+py)
			a := float64(s[3]) / (ss * ss * 255)
			for c := range 3 {
				img.Pix[q+c] = uint8(min(255, float64(s[c])/(ss*ss)+float64(img.Pix[q+c])*(1-a)+0.5))
			}
		}
	}
	// Glare off the dome, over everything.
	for _, g := range o.glare {
		for yy := max(0, int(g[1]-g[2])); yy < min(o.h, int(g[1]+g[2])); yy++ {
			for xx := max(0, int(g[0]-g[2])); xx < min(o.w, int(g[0]+g[2])); xx++ {
				d := math.Hypot(float64(xx)-g[0], (float64(yy)-g[1])*1.6) / g[2]
				if d >= 1 {
					continue
				}
				k := g[3] * (1 - d*d)
				q := img.PixOffset(xx, yy)
				for c := range 3 {
					img.Pix[q+c] = uint8(float64(img.Pix[q+c])*(1-k) + 255*k)
				}
			}
		}
	}
	blurRGBA(img, o.blur*(0.45+0.5*r.Float64()))
	gain, lift := 0.85+0.3*r.Float64(), 8*r.NormFloat64()
	for i := range img.Pix {
		if c := i % 4; c != 3 {
			img.Pix[i] = uint8(min(255, max(0, float64(img.Pix[i])*gain*cast[c]+lift+0.5)))
		}
	}
	AddNoise(img, 3, r.Uint64())
	return img, boundsOf(im).Intersect(img.Rect)
}

func boundsOf(pts [][2]float64) image.Rectangle {
	x0, y0, x1, y1 := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, p := range pts {
		x0, y0, x1, y1 = min(x0, p[0]), min(y0, p[1]), max(x1, p[0]), max(y1, p[1])
	}
	return image.Rect(int(math.Floor(x0)), int(math.Floor(y0)), int(math.Ceil(x1)), int(math.Ceil(y1)))
}

// hull2d is the convex hull of pts (monotone chain).
func hull2d(pts [][2]float64) [][2]float64 {
	p := append([][2]float64(nil), pts...)
	sort.Slice(p, func(i, j int) bool { return p[i][0] < p[j][0] || p[i][0] == p[j][0] && p[i][1] < p[j][1] })
	cr := func(o, a, b [2]float64) float64 { return (a[0]-o[0])*(b[1]-o[1]) - (a[1]-o[1])*(b[0]-o[0]) }
	var h [][2]float64
	for pass := 0; pass < 2; pass++ {
		start := len(h)
		for _, q := range p {
			for len(h) >= start+2 && cr(h[len(h)-2], h[len(h)-1], q) <= 0 {
				h = h[:len(h)-1]
			}
			h = append(h, q)
		}
		h = h[:len(h)-1]
		for i, j := 0, len(p)-1; i < j; i, j = i+1, j-1 {
			p[i], p[j] = p[j], p[i]
		}
	}
	return h
}

// blurRGBA blurs img by a Gaussian of sigma pixels (a webcam's softness).
func blurRGBA(img *image.RGBA, sigma float64) {
	rad := int(math.Ceil(2.5 * sigma))
	k := make([]float64, 2*rad+1)
	sum := 0.0
	for i := range k {
		d := float64(i - rad)
		k[i] = math.Exp(-d * d / (2 * sigma * sigma))
		sum += k[i]
	}
	for i := range k {
		k[i] /= sum
	}
	b := img.Rect
	tmp := make([]float64, len(img.Pix))
	for pass := 0; pass < 2; pass++ {
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				q := img.PixOffset(x, y)
				for c := range 3 {
					s := 0.0
					for i, w := range k {
						xx, yy := x, y
						if pass == 0 {
							xx = min(b.Max.X-1, max(b.Min.X, x+i-rad))
						} else {
							yy = min(b.Max.Y-1, max(b.Min.Y, y+i-rad))
						}
						s += w * float64(img.Pix[img.PixOffset(xx, yy)+c])
					}
					tmp[q+c] = s
				}
			}
		}
		for i := range img.Pix {
			if i%4 != 3 {
				img.Pix[i] = uint8(min(255, max(0, tmp[i]+0.5)))
			}
		}
	}
}

// TestWriteObliqueD20 writes a labelled dataset of a d20 in a popper
// seen at an angle by a webcam to TOWERD_OBLIQUE_OUT: 1,000 photos in
// enrol/ and 300 in test/ (TOWERD_OBLIQUE_PHOTOS=N: N and 0.3 N). Unlike
// the roller stand-in in vision (one top-down photo per face, squashed),
// the die is a 3-D icosahedron: its up face is foreshortened and the faces
// toward the camera show their own numbers, as on the kept-back roller.
// Options:
//   - TOWERD_OBLIQUE_ELEV: the camera's elevation in degrees (default 40);
//   - TOWERD_OBLIQUE_SET: the dice (purple, ivory, blue, red, black);
//   - TOWERD_OBLIQUE_SPREAD: the sd in mm of where the die lands about the
//     floor's middle (a popper's dished floor; default anywhere on it);
//   - TOWERD_OBLIQUE_SIZE: the frame (default 640x480);
//   - TOWERD_OBLIQUE_DRIFT: how far the room's light changes over the set;
//   - TOWERD_OBLIQUE_BLUR: a factor on the webcam's softness (default 1);
//   - TOWERD_OBLIQUE_DIST: the camera's distance in mm (default 250: a die
//     about 60 px across);
//   - TOWERD_OBLIQUE_GLARE: the strength (0..1) of a glare on the dome
//     right over the floor's middle.
//
// A tool for measuring `towerd enroll` and `towerd eval`, not a test run
// by make test.
func TestWriteObliqueD20(t *testing.T) {
	out := os.Getenv("TOWERD_OBLIQUE_OUT")
	if out == "" {
		t.Skip("set TOWERD_OBLIQUE_OUT=DIR to write the oblique d20 dataset")
	}
	// envFloat is the number in environment variable name, or def.
	envFloat := func(name string, def float64) float64 {
		v := os.Getenv(name)
		if v == "" {
			return def
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", name, v, err)
		}
		return f
	}
	photos, setName := int(envFloat("TOWERD_OBLIQUE_PHOTOS", 1000)), "purple"
	elev := envFloat("TOWERD_OBLIQUE_ELEV", 40)
	if v := os.Getenv("TOWERD_OBLIQUE_SET"); v != "" {
		setName = v
	}
	// mm: the landing spot's sd about the middle; 0: anywhere on the floor
	spread := envFloat("TOWERD_OBLIQUE_SPREAD", 0)
	set, ok := obliqueSets[setName]
	if !ok {
		t.Fatalf("unknown set %q", setName)
	}
	width, height := 640, 480
	if v := os.Getenv("TOWERD_OBLIQUE_SIZE"); v != "" {
		// A wider frame at the same focal length: the die stays about
		// 60 px across, the machine's body fills the rest.
		if _, err := fmt.Sscanf(v, "%dx%d", &width, &height); err != nil || width < 320 || height < 240 {
			t.Fatalf("TOWERD_OBLIQUE_SIZE=%q: want WxH, at least 320x240", v)
		}
	}
	// TOWERD_OBLIQUE_DRIFT=K: the room's light changes steadily from the
	// first enrolment photo to the last test photo, dimming by K and
	// warming (R up by K/3, B down by K/2), as daylight gives way to a
	// lamp over a session; the test photos, taken last, are the dimmest.
	drift := envFloat("TOWERD_OBLIQUE_DRIFT", 0)
	dist := envFloat("TOWERD_OBLIQUE_DIST", 250) // mm to the floor's middle
	o := newObliqueRoller(1, elev*math.Pi/180, set, width, height, dist)
	o.blur = envFloat("TOWERD_OBLIQUE_BLUR", o.blur)
	if k := envFloat("TOWERD_OBLIQUE_GLARE", 0); k > 0 {
		// A lamp's reflection in the dome right over the dish, where
		// the die comes to rest: it washes out part of the die.
		p := o.cam.project(v3{0, 0, 10})
		o.glare = append(o.glare, [4]float64{p[0] + 10, p[1] - 8, 28, k})
	}
	r := rand.New(rand.NewPCG(3, 3))
	parts := []struct {
		dir    string
		photos int
	}{{"enrol", photos}, {"test", photos * 3 / 10}}
	shot, shots := 0, parts[0].photos+parts[1].photos
	for _, part := range parts {
		dir := filepath.Join(out, part.dir)
		if err := os.MkdirAll(filepath.Join(dir, "images"), 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(filepath.Join(dir, "labels.csv"))
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriter(f)
		fmt.Fprintln(w, "file,die,face,x,y,w,h")
		for i := range part.photos {
			face := 1 + r.IntN(20)
			var x, y float64
			for {
				if spread > 0 {
					x, y = spread*r.NormFloat64(), spread*r.NormFloat64()
				} else {
					x, y = 0.85*o.rx*(2*r.Float64()-1), 0.85*o.ry*(2*r.Float64()-1)
				}
				if (x/o.rx)*(x/o.rx)+(y/o.ry)*(y/o.ry) <= 0.85*0.85 {
					break
				}
			}
			k := drift * float64(shot) / float64(max(shots-1, 1))
			shot++
			img, box := o.photo(r, face, 2*math.Pi*r.Float64(), x, y, [3]float64{(1 - k) * (1 + k/3), 1 - k, (1 - k) * (1 - k/2)})
			name := fmt.Sprintf("images/roll-%04d.jpg", i)
			jf, err := os.Create(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			if err := jpeg.Encode(jf, img, &jpeg.Options{Quality: 80}); err != nil {
				t.Fatal(err)
			}
			jf.Close()
			fmt.Fprintf(w, "%s,d20,%d,%d,%d,%d,%d\n", name, face, box.Min.X, box.Min.Y, box.Dx(), box.Dy())
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
}
