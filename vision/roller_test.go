package vision

import (
	"bufio"
	"fmt"
	"image"
	"image/jpeg"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/towerd/towerd/vision/dataset"
)

// rollerScene is a stand-in for a dice roller seen at an angle by a
// webcam: a fixed busy tray inside a grey cup wall, one die about side
// pixels across lying anywhere on the tray floor, foreshortened by the
// camera's slant, under a light level that drifts from photo to photo.
type rollerScene struct {
	tray           *image.RGBA
	cx, cy, rx, ry float64 // the floor: an ellipse
	// spot, when above 0, makes dice come to rest near one spot (the
	// bottom of a chute): within spot die sides of (sx, sy).
	spot, sx, sy float64
	// shadow, when not zero, casts each die's shadow (its silhouette moved
	// by shadow die boxes, the tray there at 0.6 of its light).
	shadow [2]float64
}

func newRollerScene(seed uint64) *rollerScene { return newRollerSceneSized(seed, 640) }

// newRollerSceneSized is the roller in a photo w pixels wide (4:3): the
// same cup and floor, a larger frame for the same die.
func newRollerSceneSized(seed uint64, w int) *rollerScene {
	r := rand.New(rand.NewPCG(seed, 0x5011e5))
	h := w * 3 / 4
	k := float64(w) / 640
	s := &rollerScene{tray: woodTexture(r, w, h), cx: 320 * k, cy: 250 * k, rx: 260 * k, ry: 175 * k}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			u, v := (float64(x)-s.cx)/s.rx, (float64(y)-s.cy)/s.ry
			if d := math.Hypot(u, v); d > 1 {
				// The cup wall: grey plastic, lit from above.
				g := uint8(min(255, 90+60*(1-float64(y)/float64(h))+10*math.Sin(d*9)))
				o := s.tray.PixOffset(x, y)
				s.tray.Pix[o], s.tray.Pix[o+1], s.tray.Pix[o+2] = g, g, g+8
			}
		}
	}
	return s
}

// photo paints sp on a copy of the tray and returns it with the die's box.
func (s *rollerScene) photo(sp dieSprite, r *rand.Rand, side float64) (*image.RGBA, image.Rectangle) {
	img := image.NewRGBA(s.tray.Rect)
	copy(img.Pix, s.tray.Pix)
	// Anywhere on the floor, the die's centre at least half a die in.
	var px, py float64
	for {
		px, py = s.cx+s.rx*(2*r.Float64()-1), s.cy+s.ry*(2*r.Float64()-1)
		if s.spot > 0 {
			px, py = s.sx+s.spot*side*(2*r.Float64()-1), s.sy+s.spot*side*(2*r.Float64()-1)
		}
		u, v := (px-s.cx)/(s.rx-side/2), (py-s.cy)/(s.ry-side/2)
		if u*u+v*v <= 1 {
			break
		}
	}
	box := composite(img, sp, 2*math.Pi*r.Float64(), side*(0.9+0.2*r.Float64()), 0.72+0.06*r.Float64(), 0, px, py)
	if s.shadow != [2]float64{} {
		dx, dy := int(s.shadow[0]*float64(box.Dx())), int(s.shadow[1]*float64(box.Dy()))
		die := func(x, y int) bool {
			o := img.PixOffset(x, y)
			return image.Pt(x, y).In(img.Rect) && !slices.Equal(img.Pix[o:o+3], s.tray.Pix[o:o+3])
		}
		// Where the shadow falls is found first: a pixel already dimmed
		// would pass for the die and cast shadow again.
		var shade []int
		sh := box.Add(image.Pt(dx, dy)).Intersect(img.Rect)
		for y := sh.Min.Y; y < sh.Max.Y; y++ {
			for x := sh.Min.X; x < sh.Max.X; x++ {
				if !die(x, y) && die(x-dx, y-dy) {
					shade = append(shade, img.PixOffset(x, y))
				}
			}
		}
		for _, o := range shade {
			for k := range 3 {
				img.Pix[o+k] = uint8(float64(img.Pix[o+k]) * 0.6)
			}
		}
	}
	gain, lift := 0.85+0.3*r.Float64(), 10*r.NormFloat64()
	for i := range img.Pix {
		if i%4 != 3 {
			img.Pix[i] = uint8(min(255, max(0, float64(img.Pix[i])*gain+lift+3*r.NormFloat64()+0.5)))
		}
	}
	return img, box.Intersect(img.Rect)
}

// TestWriteRollerProxy writes a labelled dataset of roller photos
// (rollerScene) of the burksbuilds d20 to TOWERD_ROLLER_OUT: 1,000 photos
// in enrol/, 300 in test/ and 1,000 more without boxes in enrol-nobox/,
// JPEG as a webcam gives them. TOWERD_ROLLER_SPOT=K makes the dice rest
// within K die sides of one spot, as at the bottom of a chute;
// TOWERD_ROLLER_WIDTH=W draws a W-pixel-wide frame around the same 60 px
// die; TOWERD_ROLLER_PHOTOS=N enrols N photos (and reads 0.3 N). It is a tool
// for measuring `towerd enroll` and `towerd eval` on a roller like the one
// the kept-back check uses, not a test run by make test.
func TestWriteRollerProxy(t *testing.T) {
	out := os.Getenv("TOWERD_ROLLER_OUT")
	if out == "" {
		t.Skip("set TOWERD_ROLLER_OUT=DIR to write the roller proxy dataset")
	}
	set, err := dataset.Load(datasetDir(t, "burksbuilds-dice"))
	if err != nil {
		t.Fatal(err)
	}
	var sprites []dieSprite
	for _, f := range set.Files {
		for _, l := range set.Labels[f] {
			if l.Die == "d20" {
				sprites = append(sprites, cutDie(toRGBA(mustDecode(t, set.Path(f))), l))
			}
		}
	}
	width, photos := 640, 1000
	if v := os.Getenv("TOWERD_ROLLER_WIDTH"); v != "" {
		fmt.Sscan(v, &width)
	}
	if v := os.Getenv("TOWERD_ROLLER_PHOTOS"); v != "" {
		fmt.Sscan(v, &photos)
	}
	scene := newRollerSceneSized(1, width)
	if v := os.Getenv("TOWERD_ROLLER_SPOT"); v != "" {
		// Dice rest near one spot, low on the floor.
		fmt.Sscan(v, &scene.spot)
		scene.sx, scene.sy = scene.cx, scene.cy+90*float64(width)/640
	}
	r := rand.New(rand.NewPCG(2, 2))
	for _, part := range []struct {
		dir    string
		photos int
		boxes  bool
	}{{"enrol", photos, true}, {"test", photos * 3 / 10, true}, {"enrol-nobox", photos, false}} {
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
			sp := sprites[r.IntN(len(sprites))]
			img, box := scene.photo(sp, r, 60)
			name := fmt.Sprintf("images/roll-%04d.jpg", i)
			jf, err := os.Create(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			if err := jpeg.Encode(jf, img, &jpeg.Options{Quality: 85}); err != nil {
				t.Fatal(err)
			}
			jf.Close()
			if part.boxes {
				fmt.Fprintf(w, "%s,d20,%d,%d,%d,%d,%d\n", name, sp.label.Face, box.Min.X, box.Min.Y, box.Dx(), box.Dy())
			} else {
				fmt.Fprintf(w, "%s,d20,%d,,,,\n", name, sp.label.Face)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
}
