package camera_test

import (
	"context"
	"image"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/towerd/towerd/sim/simcam"
	"github.com/towerd/towerd/vision/camera"
)

func iou(a, b image.Rectangle) float64 {
	in := a.Intersect(b)
	u := a.Dx()*a.Dy() + b.Dx()*b.Dy() - in.Dx()*in.Dy()
	return float64(in.Dx()*in.Dy()) / float64(u)
}

// TestCalibrateSim calibrates simulated trays, including a red felt in
// dark wood and a brown leather tray the colour of its walls (seeds 1 and
// 5), which a colour-only tray finder ran into the walls.
func TestCalibrateSim(t *testing.T) {
	seeds := []uint64{1, 5}
	if os.Getenv("TOWERD_LONG") != "" {
		seeds = nil
		for s := uint64(1); s <= 40; s++ {
			seeds = append(seeds, s)
		}
	}
	for _, seed := range seeds {
		cam := simcam.New(simcam.Config{Seed: seed, Width: 320, Height: 240})
		cal, bg, err := camera.Calibrate(context.Background(), cam, camera.Locks{Exposure: true, WhiteBalance: true}, time.Unix(0, 0))
		if err != nil {
			t.Fatal(err)
		}
		if !cal.OK() {
			t.Errorf("seed %d: problems %v (edge %.1f mean %.0f)", seed, cal.Problems, cal.EdgeWidth, cal.Mean)
		}
		if v := iou(cal.Tray, cam.Tray()); v < 0.9 {
			t.Errorf("seed %d: tray %v, truth %v (IoU %.2f)", seed, cal.Tray, cam.Tray(), v)
		}
		// Rendered edges are perfect steps.
		if cal.EdgeWidth < 1 || cal.EdgeWidth > 1.5 {
			t.Errorf("seed %d: sharp tray's edge %.1f px wide", seed, cal.EdgeWidth)
		}
		if seed == 1 {
			dir := t.TempDir()
			if err := cal.Save(dir, bg); err != nil {
				t.Fatal(err)
			}
			got, gbg, err := camera.LoadCalibration(dir)
			if err != nil {
				t.Fatal(err)
			}
			if got.Tray != cal.Tray || gbg.Bounds() != bg.Bounds() || got.EdgeWidth != cal.EdgeWidth {
				t.Fatalf("loaded %v %v %v, saved %v %v %v", got.Tray, gbg.Bounds(), got.EdgeWidth, cal.Tray, bg.Bounds(), cal.EdgeWidth)
			}
			if _, err := os.Stat(filepath.Join(dir, camera.AnnotatedFile)); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestCalibrateDark(t *testing.T) {
	cam := simcam.New(simcam.Config{Seed: 1, Width: 320, Height: 240, Faults: simcam.Faults{Dark: true}})
	cal, _, err := camera.Calibrate(context.Background(), cam, camera.Locks{}, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if cal.OK() || !strings.Contains(strings.Join(cal.Problems, ";"), "too dark") {
		t.Fatalf("dark tray: problems %v (mean %.0f)", cal.Problems, cal.Mean)
	}
}

// TestCalibrateBlurred: a tray blurred by a 7-px box is flagged (seed 5's
// faint edge blurs away entirely: focus cannot be judged, also a problem),
// a 3-px blur (slight, still readable) is not, and the figure does not
// depend on the camera's resolution.
func TestCalibrateBlurred(t *testing.T) {
	for _, seed := range []uint64{2, 5} {
		cam := simcam.New(simcam.Config{Seed: seed, Width: 320, Height: 240})
		_, bg, err := camera.Calibrate(context.Background(), cam, camera.Locks{}, time.Unix(0, 0))
		if err != nil {
			t.Fatal(err)
		}
		cal := camera.Analyse(boxBlur(bg, 3))
		if cal.OK() || !strings.Contains(strings.Join(cal.Problems, ";"), "focus") {
			t.Errorf("seed %d: blurred tray: edge %.1f, problems %v", seed, cal.EdgeWidth, cal.Problems)
		}
		if seed == 5 {
			continue
		}
		if cal.EdgeWidth < 4.5 {
			t.Errorf("seed %d: 7-px blur measured %.1f px", seed, cal.EdgeWidth)
		}
		if cal := camera.Analyse(boxBlur(bg, 1)); !cal.OK() || cal.EdgeWidth < 2 {
			t.Errorf("seed %d: 3-px blur: edge %.1f, problems %v", seed, cal.EdgeWidth, cal.Problems)
		}
	}
	// The figure is taken at about 640 px wide: a 480x360 picture and the
	// same at 960x720 (each pixel 2x2, halved again for the figure)
	// measure the same.
	cam := simcam.New(simcam.Config{Seed: 3, Width: 480, Height: 360})
	_, bg, err := camera.Calibrate(context.Background(), cam, camera.Locks{}, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	bg = boxBlur(bg, 2)
	small, big := camera.Analyse(bg), camera.Analyse(upscale2(bg))
	if small.EdgeWidth < 3.5 || math.Abs(big.EdgeWidth-small.EdgeWidth) > 0.25 ||
		iou(big.Tray, image.Rect(2*small.Tray.Min.X, 2*small.Tray.Min.Y, 2*small.Tray.Max.X, 2*small.Tray.Max.Y)) < 0.95 {
		t.Errorf("480x360: edge %.2f tray %v; 960x720: edge %.2f tray %v", small.EdgeWidth, small.Tray, big.EdgeWidth, big.Tray)
	}
}

// boxBlur averages each pixel's (2r+1)² neighbourhood (clamped at the
// frame's edges), separably.
func boxBlur(src *image.RGBA, r int) *image.RGBA {
	b := src.Rect
	pass := func(in *image.RGBA, dx, dy int) *image.RGBA {
		out := image.NewRGBA(b)
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				var s [3]int
				for k := -r; k <= r; k++ {
					p := image.Pt(min(max(x+k*dx, b.Min.X), b.Max.X-1), min(max(y+k*dy, b.Min.Y), b.Max.Y-1))
					i := in.PixOffset(p.X, p.Y)
					s[0] += int(in.Pix[i])
					s[1] += int(in.Pix[i+1])
					s[2] += int(in.Pix[i+2])
				}
				n := 2*r + 1
				i := out.PixOffset(x, y)
				out.Pix[i], out.Pix[i+1], out.Pix[i+2], out.Pix[i+3] = uint8(s[0]/n), uint8(s[1]/n), uint8(s[2]/n), 255
			}
		}
		return out
	}
	return pass(pass(src, 1, 0), 0, 1)
}

// upscale2 doubles the picture, each pixel becoming 2x2.
func upscale2(src *image.RGBA) *image.RGBA {
	b := src.Rect
	out := image.NewRGBA(image.Rect(0, 0, 2*b.Dx(), 2*b.Dy()))
	for y := 0; y < b.Dy(); y++ {
		row := out.Pix[2*y*out.Stride : (2*y+1)*out.Stride]
		in := src.Pix[y*src.Stride:]
		for x := 0; x < b.Dx(); x++ {
			copy(row[8*x:8*x+4], in[4*x:4*x+4])
			copy(row[8*x+4:8*x+8], in[4*x:4*x+4])
		}
		copy(out.Pix[(2*y+1)*out.Stride:], row)
	}
	return out
}

func TestCalibrateFailingCamera(t *testing.T) {
	cam := simcam.New(simcam.Config{Seed: 1, Width: 320, Height: 240, Faults: simcam.Faults{Empty: true}})
	if _, _, err := camera.Calibrate(context.Background(), cam, camera.Locks{}, time.Unix(0, 0)); err == nil || !strings.Contains(err.Error(), "empty frame") {
		t.Fatalf("err %v", err)
	}
}

func TestParseCalibrationErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{`, "unexpected end"},
		{`{"width":640,"height":480,"tray":[0,0,0,10]}`, `field "tray"`},
		{`{"width":640,"height":480,"tray":[600,0,100,10]}`, `field "tray"`},
		{`{"width":0,"height":480,"tray":[0,0,10,10]}`, `field "width"`},
	} {
		if _, err := camera.ParseCalibration([]byte(c.in)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseCalibration(%s): %v, want %q", c.in, err, c.want)
		}
	}
}

func FuzzParseCalibration(f *testing.F) {
	f.Add([]byte(`{"width":640,"height":480,"tray":[10,10,600,400],"edge_width":1.5}`))
	f.Add([]byte(`{"tray":[1,2]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := camera.ParseCalibration(data)
		if err == nil && (c.Tray.Empty() || !c.Tray.In(image.Rect(0, 0, c.Width, c.Height))) {
			t.Fatalf("accepted tray %v in %dx%d", c.Tray, c.Width, c.Height)
		}
	})
}
