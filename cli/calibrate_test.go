package cli

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
