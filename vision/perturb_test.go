package vision

import (
	"bytes"
	"image"
	"image/jpeg"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"gocv.io/x/gocv"
	"golang.org/x/image/draw"

	"github.com/towerd/towerd/vision/dataset"
)

// perturbation changes a photo as another webcam, light or encoder would;
// scale and flip say how the labelled boxes move with it.
type perturbation struct {
	name  string
	scale float64 // 0: 1
	flip  bool
	apply func(img *image.RGBA, rng *rand.Rand) image.Image
}

// TestMatteop65Perturbed reads copies of matteop65-d6 made harder or
// different — scaled (down to a 320x240 webcam's), darker, brighter,
// noisier, blurred, coarsely compressed, grey, unevenly lit, tinted,
// mirrored, inverted (dark dice with light pips) — to see that the pip
// reader's rules hold beyond the photos they were tuned on (the issue's
// kept-back webcam set is another camera's). The floors are below the
// issue's targets: they guard against rules that only fit the set as it
// is. Session 11: recall 0.9621 (JPEG at 40) to 0.9779, precision 0.9957
// (half size) to 1.
func TestMatteop65Perturbed(t *testing.T) {
	if os.Getenv("TOWERD_LONG") == "" {
		t.Skip("reading 15 copies of the set takes minutes; set TOWERD_LONG=1 to run it")
	}
	set, err := dataset.Load(datasetDir(t, "matteop65-d6"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewReader(Options{AllowedKinds: []string{"d6"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range perturbations() {
		t.Run(p.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			s := dataset.NewScore()
			for _, f := range set.Files {
				src := mustDecode(t, set.Path(f))
				rgba := image.NewRGBA(src.Bounds())
				draw.Draw(rgba, rgba.Rect, src, src.Bounds().Min, draw.Src)
				img := p.apply(rgba, rng)
				dice, took := readTimed(t, r, img, f)
				labels, ans := moveLabels(set.Labels[f], p, src.Bounds().Dx()), Answers(dice)
				for _, pr := range s.Add(labels, ans, took) {
					if pr.Label >= 0 && pr.Answer >= 0 && ans[pr.Answer].Face != nil && *ans[pr.Answer].Face != labels[pr.Label].Face {
						t.Logf("%s: %d read as %s", f, labels[pr.Label].Face, show(ans[pr.Answer]))
					}
				}
			}
			t.Logf("%s: %s", p.name, summary(s))
			if s.Precision() < 0.99 || s.Recall() < 0.955 {
				t.Errorf("%s: precision %.4f recall %.4f, below the floors 0.99 and 0.955", p.name, s.Precision(), s.Recall())
			}
		})
	}
}

// moveLabels moves the labelled boxes as p moved the photo (width w).
func moveLabels(ls []dataset.Label, p perturbation, w int) []dataset.Label {
	out := make([]dataset.Label, len(ls))
	for i, l := range ls {
		out[i] = l
		b := l.Box
		if b.Empty() {
			continue
		}
		if p.flip {
			b = image.Rect(w-b.Max.X, b.Min.Y, w-b.Min.X, b.Max.Y)
		}
		if p.scale != 0 {
			k := p.scale
			b = image.Rect(int(math.Round(float64(b.Min.X)*k)), int(math.Round(float64(b.Min.Y)*k)),
				int(math.Round(float64(b.Max.X)*k)), int(math.Round(float64(b.Max.Y)*k)))
		}
		out[i].Box = b
	}
	return out
}

func perturbations() []perturbation {
	scaled := func(k float64) func(*image.RGBA, *rand.Rand) image.Image {
		return func(img *image.RGBA, _ *rand.Rand) image.Image {
			b := img.Bounds()
			dst := image.NewRGBA(image.Rect(0, 0, int(math.Round(float64(b.Dx())*k)), int(math.Round(float64(b.Dy())*k))))
			draw.CatmullRom.Scale(dst, dst.Rect, img, b, draw.Src, nil)
			return dst
		}
	}
	// perPixel maps each pixel's colour (x, y in 0..1 across the photo).
	perPixel := func(fn func(c [3]float64, x, y float64, rng *rand.Rand) [3]float64) func(*image.RGBA, *rand.Rand) image.Image {
		return func(img *image.RGBA, rng *rand.Rand) image.Image {
			b := img.Rect
			for y := b.Min.Y; y < b.Max.Y; y++ {
				for x := b.Min.X; x < b.Max.X; x++ {
					i := img.PixOffset(x, y)
					px := img.Pix[i : i+3 : i+3]
					c := fn([3]float64{float64(px[0]), float64(px[1]), float64(px[2])},
						float64(x-b.Min.X)/float64(b.Dx()), float64(y-b.Min.Y)/float64(b.Dy()), rng)
					for k := range 3 {
						px[k] = uint8(max(0, min(255, math.Round(c[k]))))
					}
				}
			}
			return img
		}
	}
	each := func(fn func(v float64) float64) func([3]float64, float64, float64, *rand.Rand) [3]float64 {
		return func(c [3]float64, _, _ float64, _ *rand.Rand) [3]float64 {
			return [3]float64{fn(c[0]), fn(c[1]), fn(c[2])}
		}
	}
	return []perturbation{
		{name: "scaled 0.5", scale: 0.5, apply: scaled(0.5)},
		{name: "scaled 0.8", scale: 0.8, apply: scaled(0.8)},
		{name: "scaled 1.25", scale: 1.25, apply: scaled(1.25)},
		{name: "scaled 2", scale: 2, apply: scaled(2)},
		{name: "darker", apply: perPixel(each(func(v float64) float64 { return 0.7 * v }))},
		{name: "brighter", apply: perPixel(each(func(v float64) float64 { return 1.2*v + 10 }))},
		{name: "gamma 1.4", apply: perPixel(each(func(v float64) float64 { return 255 * math.Pow(v/255, 1.4) }))},
		{name: "noise", apply: perPixel(func(c [3]float64, _, _ float64, rng *rand.Rand) [3]float64 {
			return [3]float64{c[0] + 6*rng.NormFloat64(), c[1] + 6*rng.NormFloat64(), c[2] + 6*rng.NormFloat64()}
		})},
		{name: "light gradient", apply: perPixel(func(c [3]float64, x, y float64, _ *rand.Rand) [3]float64 {
			k := 1 + 0.8*(0.6*(x-0.5)+0.8*0.75*(y-0.5))
			return [3]float64{k * c[0], k * c[1], k * c[2]}
		})},
		{name: "warm", apply: perPixel(func(c [3]float64, _, _ float64, _ *rand.Rand) [3]float64 {
			return [3]float64{1.1 * c[0], c[1], 0.8 * c[2]}
		})},
		{name: "inverted", apply: perPixel(each(func(v float64) float64 { return 255 - v }))},
		{name: "grey", apply: perPixel(func(c [3]float64, _, _ float64, _ *rand.Rand) [3]float64 {
			v := 0.299*c[0] + 0.587*c[1] + 0.114*c[2]
			return [3]float64{v, v, v}
		})},
		{name: "mirrored", flip: true, apply: func(img *image.RGBA, _ *rand.Rand) image.Image {
			b := img.Rect
			out := image.NewRGBA(b)
			for y := b.Min.Y; y < b.Max.Y; y++ {
				for x := b.Min.X; x < b.Max.X; x++ {
					out.SetRGBA(b.Max.X-1-(x-b.Min.X), y, img.RGBAAt(x, y))
				}
			}
			return out
		}},
		{name: "JPEG 40", apply: func(img *image.RGBA, _ *rand.Rand) image.Image {
			var buf bytes.Buffer
			if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 40}); err != nil {
				panic(err)
			}
			out, err := jpeg.Decode(&buf)
			if err != nil {
				panic(err)
			}
			return out
		}},
		{name: "blur", apply: func(img *image.RGBA, _ *rand.Rand) image.Image {
			m, err := gocv.ImageToMatRGBA(img)
			if err != nil {
				panic(err)
			}
			defer m.Close()
			gocv.GaussianBlur(m, &m, image.Pt(0, 0), 1, 1, gocv.BorderReflect)
			out, err := m.ToImage()
			if err != nil {
				panic(err)
			}
			return out
		}},
	}
}
