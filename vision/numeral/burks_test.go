package numeral

import (
	"fmt"
	"image"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// burksDir is the burksbuilds-dice set beside the repository (CI keeps
// shared/ next to the clone).
var burksDir = filepath.Join("..", "..", "..", "shared", "datasets", "burksbuilds-dice")

func needBurks(tb testing.TB) {
	tb.Helper()
	if _, err := os.Stat(filepath.Join(burksDir, "labels.csv")); err != nil {
		tb.Skipf("burksbuilds-dice dataset not found at %s (expected ../shared/datasets beside the repo): %v", burksDir, err)
	}
}

// loadPhotos decodes every photo of a dataset with its labels.
func loadPhotos(tb testing.TB, dir string) ([]Label, map[string]image.Image) {
	tb.Helper()
	f, err := os.Open(filepath.Join(dir, "labels.csv"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	labels, err := ParseLabels(f)
	if err != nil {
		tb.Fatal(err)
	}
	photos := map[string]image.Image{}
	for _, l := range labels {
		if photos[l.File] != nil {
			continue
		}
		g, err := os.Open(filepath.Join(dir, l.File))
		if err != nil {
			tb.Fatal(err)
		}
		img, _, err := image.Decode(g)
		g.Close()
		if err != nil {
			tb.Fatalf("%s: %v", l.File, err)
		}
		photos[l.File] = img
	}
	return labels, photos
}

// transformedCrop renders the die of l as it appears in the photo turned
// by th radians about its centre and scaled by s (with the anti-aliasing
// a lower-resolution camera gives), boxes it as a detector would (the
// bounding box of the turned label box, off by a few percent) and crops it
// with CropDie.
func transformedCrop(img image.Image, l Label, th, s float64, r *rand.Rand) image.Image {
	b := img.Bounds()
	cx, cy := float64(b.Min.X+b.Max.X)/2, float64(b.Min.Y+b.Max.Y)/2
	cs, sn := math.Cos(th), math.Sin(th)
	// Die centre in the new photo (same centre, scaled about it).
	dx := float64(l.Box.Min.X+l.Box.Max.X)/2 - cx
	dy := float64(l.Box.Min.Y+l.Box.Max.Y)/2 - cy
	nx, ny := cx+s*(cs*dx-sn*dy), cy+s*(sn*dx+cs*dy)
	w, h := float64(l.Box.Dx()), float64(l.Box.Dy())
	hw := s * (math.Abs(cs)*w + math.Abs(sn)*h) / 2
	hh := s * (math.Abs(sn)*w + math.Abs(cs)*h) / 2
	side := 2 * max(hw, hh)
	jit := func(a float64) float64 { return a * (2*r.Float64() - 1) }
	nx += jit(0.03 * side)
	ny += jit(0.03 * side)
	k := 1 + jit(0.05)
	hw, hh = hw*k, hh*k
	box := image.Rect(int(math.Round(nx-hw)), int(math.Round(ny-hh)), int(math.Round(nx+hw)), int(math.Round(ny+hh)))
	// Render the part of the new photo around the box.
	win := box.Inset(-int(side))
	out := image.NewRGBA(win)
	const ss = 2
	for y := win.Min.Y; y < win.Max.Y; y++ {
		for x := win.Min.X; x < win.Max.X; x++ {
			var acc [3]float64
			for sy := 0; sy < ss; sy++ {
				for sx := 0; sx < ss; sx++ {
					qx := float64(x) + (float64(sx)+0.5)/ss - cx
					qy := float64(y) + (float64(sy)+0.5)/ss - cy
					// Inverse transform into the original photo.
					px := (cs*qx+sn*qy)/s + cx - 0.5
					py := (-sn*qx+cs*qy)/s + cy - 0.5
					c := bilinear(img, px, py)
					for i := range acc {
						acc[i] += c[i]
					}
				}
			}
			o := out.PixOffset(x, y)
			for i := range 3 {
				out.Pix[o+i] = uint8(min(255, max(0, acc[i]/(ss*ss)+0.5)))
			}
			out.Pix[o+3] = 255
		}
	}
	return CropDie(out, box)
}

func bilinear(img image.Image, x, y float64) [3]float64 {
	b := img.Bounds()
	x = min(max(x, float64(b.Min.X)), float64(b.Max.X-1))
	y = min(max(y, float64(b.Min.Y)), float64(b.Max.Y-1))
	x0, y0 := int(x), int(y)
	x1, y1 := min(x0+1, b.Max.X-1), min(y0+1, b.Max.Y-1)
	fx, fy := x-float64(x0), y-float64(y0)
	var out [3]float64
	for _, t := range []struct {
		x, y int
		w    float64
	}{{x0, y0, (1 - fx) * (1 - fy)}, {x1, y0, fx * (1 - fy)}, {x0, y1, (1 - fx) * fy}, {x1, y1, fx * fy}} {
		r, g, bb := rgbAt(img, t.x, t.y)
		out[0] += t.w * float64(r)
		out[1] += t.w * float64(g)
		out[2] += t.w * float64(bb)
	}
	return out
}

// score is a reader's tally: dice read right, read wrong, left unanswered.
type score struct{ right, wrong, none int }

func (s score) precision() float64 { return float64(s.right) / float64(max(1, s.right+s.wrong)) }
func (s score) recall() float64 {
	return float64(s.right) / float64(max(1, s.right+s.wrong+s.none))
}
func (s score) String() string {
	return fmt.Sprintf("precision %.4f recall %.4f (%d right, %d wrong, %d unanswered)", s.precision(), s.recall(), s.right, s.wrong, s.none)
}

// evalTransformed reads views of every labelled die in random rotations
// (0–360°) and scales (0.5–1.0) and scores them at DefaultMinConfidence.
func evalTransformed(tb testing.TB, m *Model, labels []Label, photos map[string]image.Image, views int, seed uint64) (score, map[string]*score) {
	r := rand.New(rand.NewPCG(seed, 99))
	var sc score
	kinds := map[string]*score{}
	for _, l := range labels {
		for v := 0; v < views; v++ {
			th := 2 * math.Pi * r.Float64()
			s := 0.5 + 0.5*r.Float64()
			crop := transformedCrop(photos[l.File], l, th, s, r)
			die, face, conf := m.classify(crop, nil, envInt("NUMERAL_LOOKS", Views))
			k := kinds[l.Die]
			if k == nil {
				k = &score{}
				kinds[l.Die] = k
			}
			switch {
			case conf < DefaultMinConfidence:
				sc.none++
				k.none++
			case die == l.Die && face == l.Face:
				sc.right++
				k.right++
			default:
				sc.wrong++
				k.wrong++
				tb.Logf("%s (%s %d) at %.0f° ×%.2f read as %s %d (%.3f)", l.File, l.Die, l.Face, th*180/math.Pi, s, die, face, conf)
			}
		}
	}
	return sc, kinds
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

// TestEnrollBurksbuilds enrolls the burksbuilds set and reads its dice
// turned to random angles and scaled 0.5–1.0.
func TestEnrollBurksbuilds(t *testing.T) {
	if os.Getenv("TOWERD_LONG") == "" {
		t.Skip("enrolling a whole set takes minutes; set TOWERD_LONG=1 to run it")
	}
	needBurks(t)
	labels, photos := loadPhotos(t, burksDir)
	if in := os.Getenv("TOWERD_MODEL_IN"); in != "" {
		// Read with a model enrolled before (TOWERD_MODEL_OUT, or towerd
		// enroll), to try reading changes without minutes of training.
		m, err := Load(in)
		if err != nil {
			t.Fatal(err)
		}
		checkTransformed(t, m, labels, photos)
		return
	}
	samples, err := LoadDataset(burksDir, DatasetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	opts := TrainOptions{Epochs: envInt("NUMERAL_EPOCHS", 0), Seed: uint64(envInt("NUMERAL_SEED", 1)),
		Batch: envInt("NUMERAL_BATCH", 0), LearningRate: float64(envInt("NUMERAL_LR_E4", 0)) / 1e4, Rotation: float64(envInt("NUMERAL_ROT", 0))}
	if n := envInt("NUMERAL_NORM", -1); n >= 0 {
		opts.Arch = DefaultArch()
		opts.Arch.Norm = n
	}
	if envInt("NUMERAL_POLAR", 0) == 1 {
		opts.Arch = Arch{Size: 32, Channels: 3, Convs: []Conv{{16, true}, {32, true}, {64, true}, {64, false}}, Hidden: 128, Polar: true,
			Norm: envInt("NUMERAL_PNORM", 0)}
	}
	opts.View = float64(envInt("NUMERAL_VIEW_E2", 0)) / 100 // 0: the default
	start := time.Now()
	opts.Progress = func(p Progress) {
		if p.Epoch%10 == 0 || p.Epoch == p.Epochs {
			t.Logf("epoch %d/%d loss %.3f acc %.3f %v", p.Epoch, p.Epochs, p.Loss, p.Accuracy, p.Elapsed.Round(time.Second))
		}
	}
	m, err := Train(samples, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("trained %d crops in %v, stats %+v", len(samples), time.Since(start).Round(time.Second), m.Stats())
	if out := os.Getenv("TOWERD_MODEL_OUT"); out != "" {
		// Keep the model for the whole-photo tests (vision's TOWERD_BURKS_MODEL).
		if err := m.Save(out); err != nil {
			t.Fatal(err)
		}
	}
	checkTransformed(t, m, labels, photos)
}

// checkTransformed scores m on turned and scaled crops (NUMERAL_VIEWS per
// die, default 6; NUMERAL_LOOKS looks per crop, default Views; the turns
// and scales drawn with NUMERAL_EVAL_SEED, default 7) against the targets.
func checkTransformed(t *testing.T, m *Model, labels []Label, photos map[string]image.Image) {
	sc, kinds := evalTransformed(t, m, labels, photos, envInt("NUMERAL_VIEWS", 6), uint64(envInt("NUMERAL_EVAL_SEED", 7)))
	t.Logf("turned 0–360°, scaled 0.5–1.0: %v", sc)
	for _, k := range []string{"d4", "d6", "d8", "d10", "d12", "d20", "d100"} {
		if kinds[k] != nil {
			t.Logf("  %-4s %v", k, *kinds[k])
		}
	}
	if sc.precision() < 0.995 || sc.recall() < 0.98 {
		t.Errorf("%v; want precision ≥ 0.995 and recall ≥ 0.98", sc)
	}
}
