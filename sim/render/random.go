package render

import (
	"image"
	"image/color"
	"math"
	"math/rand/v2"

	"github.com/towerd/towerd/rules"
)

// D6Style chooses how RandomScene draws d6s.
type D6Style int

const (
	// D6Mixed picks pips or a numeral per die at random.
	D6Mixed D6Style = iota
	// D6Pips draws every d6 with pips.
	D6Pips
	// D6Numerals draws every d6 with a numeral.
	D6Numerals
)

// Options shape a RandomScene.
type Options struct {
	// Width, Height default to 640x480.
	Width, Height int
	// Faces fixes the physical faces in the order of kinds; missing
	// entries are drawn at random.
	Faces []int
	D6    D6Style
	// MaxTilt bounds each die's slight tilt (radians); 0 means 0.12,
	// negative means none.
	MaxTilt float64
	// Noise is the sensor noise sd; 0 means a random 1.5–4 levels,
	// negative means none.
	Noise float64
	// Tray, when set, is the empty tray (felt, walls, light) the dice are
	// laid in, as a tower's camera sees the same one every roll; nil
	// draws a random tray.
	Tray *Scene
}

// A palette of real dice sets: body and ink.
var dicePalette = [][2]color.NRGBA{
	{{236, 230, 214, 255}, {20, 20, 22, 255}},   // ivory / black
	{{245, 245, 245, 255}, {200, 30, 30, 255}},  // white / red
	{{200, 32, 38, 255}, {245, 245, 240, 255}},  // red / white
	{{30, 70, 170, 255}, {245, 245, 240, 255}},  // blue / white
	{{110, 50, 150, 255}, {240, 215, 120, 255}}, // purple / gold
	{{238, 200, 60, 255}, {25, 25, 25, 255}},    // yellow / black
	{{40, 40, 44, 255}, {240, 240, 235, 255}},   // black / white
	{{60, 150, 80, 255}, {250, 250, 245, 255}},  // green / white
	{{230, 120, 40, 255}, {20, 20, 20, 255}},    // orange / black
}

var feltPalette = []color.NRGBA{
	{34, 72, 50, 255},  // green felt
	{22, 22, 26, 255},  // black felt
	{28, 44, 92, 255},  // blue felt
	{92, 30, 36, 255},  // red felt
	{70, 70, 74, 255},  // grey neoprene
	{110, 84, 60, 255}, // brown leather
}

var wallPalette = []color.NRGBA{
	{168, 140, 104, 255}, // light wood
	{120, 86, 58, 255},   // dark wood
	{190, 190, 186, 255}, // grey print
	{235, 235, 230, 255}, // white print
}

func luma(c color.NRGBA) float64 {
	return 0.299*float64(c.R) + 0.587*float64(c.G) + 0.114*float64(c.B)
}

func colourDist(a, b color.NRGBA) float64 {
	return math.Sqrt(sq(float64(a.R)-float64(b.R)) + sq(float64(a.G)-float64(b.G)) + sq(float64(a.B)-float64(b.B)))
}

func sq(x float64) float64 { return x * x }

// RandomScene lays out dice of the given kinds in a random tray, light and
// colours, all from seed: the same seed and kinds give the same scene.
// Dice are placed apart (not touching) inside the tray.
func RandomScene(seed uint64, kinds []rules.Die, o Options) Scene {
	rng := rand.New(rand.NewPCG(seed, 0xd1ce_5ce_7e))
	w, h := o.Width, o.Height
	if w <= 0 || h <= 0 {
		w, h = 640, 480
	}
	s := RandomTray(rng, w, h)
	if o.Tray != nil {
		s = *o.Tray
		s.Dice = nil
	}
	s.Seed = seed
	switch {
	case o.Noise > 0:
		s.Noise = o.Noise
	case o.Noise < 0:
		s.Noise = 0
	}
	maxTilt := o.MaxTilt
	if maxTilt == 0 {
		maxTilt = 0.12
	} else if maxTilt < 0 {
		maxTilt = 0
	}
	var placed []Die
	for i, k := range kinds {
		d := Die{Kind: k}
		fs := Faces(k)
		if i < len(o.Faces) {
			d.Face = o.Faces[i]
		} else {
			d.Face = fs[rng.IntN(len(fs))]
		}
		if k == rules.D6 {
			switch o.D6 {
			case D6Pips:
				d.Pips = true
			case D6Mixed:
				d.Pips = rng.IntN(2) == 0
			}
		}
		d.Body, d.Ink = DiceColours(rng, s.Felt)
		d.Size = DefaultSize(k, w) * (0.93 + 0.14*rng.Float64())
		d.Angle = rng.Float64() * 2 * math.Pi
		d.Tilt = rng.Float64() * maxTilt
		d.TiltDir = rng.Float64() * 2 * math.Pi
		d.X, d.Y = Place(rng, s.Tray, d.Size, placed)
		placed = append(placed, d)
	}
	s.Dice = placed
	return s
}

// RandomTray returns an empty tray scene (no dice) of random felt, walls,
// light and noise.
func RandomTray(rng *rand.Rand, w, h int) Scene {
	mx := int(float64(w) * (0.03 + 0.06*rng.Float64()))
	my := int(float64(h) * (0.03 + 0.06*rng.Float64()))
	mx2 := int(float64(w) * (0.03 + 0.06*rng.Float64()))
	my2 := int(float64(h) * (0.03 + 0.06*rng.Float64()))
	return Scene{
		Width: w, Height: h,
		Tray: image.Rect(mx, my, w-mx2, h-my2),
		Felt: feltPalette[rng.IntN(len(feltPalette))],
		Wall: wallPalette[rng.IntN(len(wallPalette))],
		Light: Light{
			Brightness: 0.9 + 0.2*rng.Float64(),
			Gradient:   0.25 * rng.Float64(),
			Dir:        rng.Float64() * 2 * math.Pi,
			Vignette:   0.05 + 0.2*rng.Float64(),
		},
		Noise: 1.5 + 2.5*rng.Float64(),
		Seed:  rng.Uint64(),
	}
}

// DiceColours picks a body and ink from real-looking sets that stand out
// from the felt.
func DiceColours(rng *rand.Rand, felt color.NRGBA) (body, ink color.NRGBA) {
	for range 20 {
		p := dicePalette[rng.IntN(len(dicePalette))]
		if colourDist(p[0], felt) > 90 && math.Abs(luma(p[0])-luma(felt)) > 25 {
			return p[0], p[1]
		}
	}
	return dicePalette[0][0], dicePalette[0][1]
}

// Place finds a centre for a die of the given size inside tray, clear of
// the dice already placed (a gap of a fifth of a die); after many misses
// it returns the best spot found, which may touch another die.
func Place(rng *rand.Rand, tray image.Rectangle, size float64, placed []Die) (x, y float64) {
	r := size / 2
	best, bestGap := [2]float64{}, math.Inf(-1)
	for range 200 {
		x = float64(tray.Min.X) + r + rng.Float64()*math.Max(1, float64(tray.Dx())-2*r)
		y = float64(tray.Min.Y) + r + rng.Float64()*math.Max(1, float64(tray.Dy())-2*r)
		gap := math.Inf(1)
		for _, p := range placed {
			pr := p.Size / 2
			gap = math.Min(gap, math.Hypot(p.X-x, p.Y-y)-(pr+r)*1.2)
		}
		if gap >= 0 {
			return x, y
		}
		if gap > bestGap {
			best, bestGap = [2]float64{x, y}, gap
		}
	}
	return best[0], best[1]
}
