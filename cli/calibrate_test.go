package cli

import (
	"bytes"
	"context"
	"image"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/towerd/towerd/config"
	"github.com/towerd/towerd/tower"
	"github.com/towerd/towerd/vision/camera"
)

// TestCalibrateSimCommand: `towerd calibrate --sim` works on a bare
// machine — it finds the rendered tray, finds no problem, and saves what
// `towerd run` loads.
func TestCalibrateSimCommand(t *testing.T) {
	var out, errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Log: slog.New(slog.DiscardHandler)}
	tmp := t.TempDir()
	cfgFile := filepath.Join(tmp, "towerd.yaml")
	if err := os.WriteFile(cfgFile, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "state")
	code := Main(context.Background(), []string{"calibrate", "--sim", "--seed", "2", "--state-dir", dir, "--config", cfgFile}, env)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	for _, want := range []string{"simulated tray (seed 2)", "tray:", "focus:", "saved:"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "PROBLEM") {
		t.Errorf("problems on a clean simulated tray:\n%s", out.String())
	}
	cal, bg, err := camera.LoadCalibration(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !cal.OK() || cal.Tray.Empty() || bg.Bounds().Dx() != cal.Width {
		t.Fatalf("saved calibration %+v, background %v", cal, bg.Bounds())
	}
	if _, err := os.Stat(filepath.Join(dir, camera.AnnotatedFile)); err != nil {
		t.Fatal(err)
	}
}

// TestEyesRefuseTurnedCalibration: a calibration taken with another
// camera.rotate shows the empty tray turned the other way, its tray box
// in the wrong place: the camera's eyes read without it, and say so.
func TestEyesRefuseTurnedCalibration(t *testing.T) {
	dir := t.TempDir()
	bg := image.NewRGBA(image.Rect(0, 0, 64, 48))
	cal := &camera.Calibration{Width: 64, Height: 48, Tray: image.Rect(8, 8, 56, 40), TrayBox: [4]int{8, 8, 48, 32}}
	if err := cal.Save(dir, bg); err != nil {
		t.Fatal(err)
	}
	for _, rotate := range []int{0, 180} {
		cfg := config.Default()
		cfg.Tower.StateDir = dir
		cfg.Vision.Model = filepath.Join(dir, "no-model.json")
		cfg.Camera.Source, cfg.Camera.Device, cfg.Camera.Rotate = config.SourceV4L2, "/dev/video-none", rotate
		var logs bytes.Buffer
		eyes, closeEyes, err := newCameraEyes(cfg, false, -1, slog.New(slog.NewTextHandler(&logs, nil)))
		if err != nil {
			t.Fatalf("rotate %d: %v", rotate, err)
		}
		closeEyes()
		region := eyes.(*tower.CameraEyes).Settle.Region
		warned := strings.Contains(logs.String(), "another camera.rotate")
		if want := rotate == 0; region.Empty() == want || warned == want {
			t.Errorf("rotate %d: tray region %v, warned %v; want the calibration used: %v", rotate, region, warned, want)
		}
	}
}
