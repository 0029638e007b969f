package render

import (
	"sync"

	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
)

// glyph is one character's outline in em units (cap height ≈ 0.73 em),
// baseline at y=0, y growing down, with its advance.
type glyph struct {
	segs    []seg
	advance float64
}

type seg struct {
	op  sfnt.SegmentOp
	pts [3][2]float64
}

var (
	glyphOnce sync.Once
	glyphs    map[rune]glyph
	glyphErr  error
)

// glyphPPEM is the size outlines are loaded at; coordinates are divided by
// it so the cache holds em units.
const glyphPPEM = 1024

// capHeight is the height of a digit in em units for Go Bold.
const capHeight = 0.729

// loadGlyphs parses Go Bold once: digits only, that is all dice carry.
func loadGlyphs() (map[rune]glyph, error) {
	glyphOnce.Do(func() {
		f, err := sfnt.Parse(gobold.TTF)
		if err != nil {
			glyphErr = err
			return
		}
		var b sfnt.Buffer
		glyphs = map[rune]glyph{}
		ppem := fixed.I(glyphPPEM)
		for _, r := range "0123456789" {
			idx, err := f.GlyphIndex(&b, r)
			if err != nil {
				glyphErr = err
				return
			}
			segs, err := f.LoadGlyph(&b, idx, ppem, nil)
			if err != nil {
				glyphErr = err
				return
			}
			adv, err := f.GlyphAdvance(&b, idx, ppem, 0)
			if err != nil {
				glyphErr = err
				return
			}
			g := glyph{advance: float64(adv) / 64 / glyphPPEM}
			for _, s := range segs {
				var o seg
				o.op = s.Op
				for i := 0; i < 3; i++ {
					o.pts[i] = [2]float64{float64(s.Args[i].X) / 64 / glyphPPEM, float64(s.Args[i].Y) / 64 / glyphPPEM}
				}
				g.segs = append(g.segs, o)
			}
			glyphs[r] = g
		}
	})
	return glyphs, glyphErr
}

// textPath adds the outline of text to p, centred on (0,0) in a frame whose
// unit is the digit height (so height 1 means digits 1 unit tall), with an
// optional underline bar (6 and 9 on real dice). m maps that frame to pixels.
func textPath(p *path, text string, m affine, underline bool) {
	gs, err := loadGlyphs()
	if err != nil {
		// The font is compiled in; failing to parse it is a programming
		// error that every test would show.
		panic("render: parse Go Bold: " + err.Error())
	}
	width := 0.0
	for _, r := range text {
		width += gs[r].advance
	}
	// Tight digits: Go Bold advances include side bearings; squeeze a little.
	const track = -0.04
	width += track * float64(len(text)-1)
	s := 1 / capHeight // em -> digit heights
	x0 := -width / 2
	for _, r := range text {
		g := gs[r]
		for _, sg := range g.segs {
			var q [3][2]float64
			for i := 0; i < 3; i++ {
				x := (sg.pts[i][0] + x0) * s
				y := sg.pts[i][1]*s + 0.5 // baseline at +0.5: digits span -0.5..0.5
				q[i][0], q[i][1] = m.apply(x, y)
			}
			switch sg.op {
			case sfnt.SegmentOpMoveTo:
				p.moveTo(q[0][0], q[0][1])
			case sfnt.SegmentOpLineTo:
				p.lineTo(q[0][0], q[0][1])
			case sfnt.SegmentOpQuadTo:
				p.quadTo(q[0][0], q[0][1], q[1][0], q[1][1])
			case sfnt.SegmentOpCubeTo:
				p.cubeTo(q[0][0], q[0][1], q[1][0], q[1][1], q[2][0], q[2][1])
			}
		}
		x0 += g.advance + track
	}
	if underline {
		w := width * s * 0.8
		p.poly(m, [][2]float64{{-w / 2, 0.62}, {w / 2, 0.62}, {w / 2, 0.74}, {-w / 2, 0.74}})
	}
}
