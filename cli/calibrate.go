package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/towerd/towerd/config"
	"github.com/towerd/towerd/sim/simcam"
	"github.com/towerd/towerd/vision/camera"
)

func init() {
	Register(&Command{
		Name:    "calibrate",
		Usage:   "calibrate [--sim] [--seed N] [--state-dir DIR] [--config FILE] [--force]",
		Summary: "Capture the empty tray as the background, find the tray, check focus and light, lock exposure, and save them in the state directory.",
		Run:     runCalibrate,
	})
}

func runCalibrate(ctx context.Context, env *Env, args []string) error {
	c := commands["calibrate"]
	flags := NewFlagSet(env, c)
	useSim := flags.Bool("sim", false, "calibrate the simulated camera (rendered tray) instead of the real one")
	seed := flags.Uint64("seed", 1, "with --sim: the simulated tray's seed")
	stateDir := flags.String("state-dir", "", "where to save the calibration (default: tower.state_dir of the configuration)")
	cfgPath := flags.String("config", "", configFlagHelp)
	force := flags.Bool("force", false, "save the calibration even when problems were found")
	if err := ParseFlags(flags, args); err != nil {
		return err
	}
	if flags.NArg() != 0 {
		flags.Usage()
		return Exit(2, "")
	}
	cfg, _, _, err := loadConfig(*cfgPath)
	if err != nil {
		return Exit(2, err.Error())
	}
	dir := *stateDir
	if dir == "" {
		dir = cfg.Tower.StateDir
	}
	cc := cfg.Camera
	var src camera.Source
	name := ""
	if *useSim || cc.Source == config.SourceSim {
		cam := simcam.New(simcam.Config{Seed: *seed})
		src, name = cam, fmt.Sprintf("simulated tray (seed %d)", *seed)
	} else {
		dev, err := camera.NewDevice(camera.DeviceConfig{
			Source: cc.Source, Device: cc.Device, Width: cc.Width, Height: cc.Height, FPS: cc.FPS, Rotate: cc.Rotate, Log: env.Log,
		})
		if err != nil {
			return Exit(2, err.Error())
		}
		src, name = dev, fmt.Sprintf("%s %dx%d@%d", cc.Source, cc.Width, cc.Height, cc.FPS)
		if cc.Source == config.SourceV4L2 {
			name = fmt.Sprintf("%s (%s) %dx%d@%d", cc.Device, cc.Source, cc.Width, cc.Height, cc.FPS)
		}
	}
	defer src.Close()
	// Every capture is bounded; a camera that delivers nothing in 20 s
	// (warm-up frames included) is reported, not waited for.
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	cal, bg, err := camera.Calibrate(cctx, src, camera.Locks{Exposure: cc.LockExposure, WhiteBalance: cc.LockWhiteBalance}, time.Now())
	if err != nil {
		return err
	}
	if _, ok := src.(*camera.Device); ok {
		cal.Rotate = cc.Rotate // a simulated tray is never turned
	}
	out := env.Stdout
	fmt.Fprintf(out, "camera:  %s\n", name)
	if cal.Rotate != 0 {
		fmt.Fprintf(out, "frame:   %dx%d (turned %d° clockwise)\n", cal.Width, cal.Height, cal.Rotate)
	} else {
		fmt.Fprintf(out, "frame:   %dx%d\n", cal.Width, cal.Height)
	}
	t := cal.Tray
	fmt.Fprintf(out, "tray:    %dx%d at (%d,%d), %.0f%% of the frame\n", t.Dx(), t.Dy(), t.Min.X, t.Min.Y, 100*float64(t.Dx()*t.Dy())/float64(cal.Width*cal.Height))
	if cal.EdgeWidth > 0 {
		fmt.Fprintf(out, "focus:   the tray's edge rises over %.1f px at 640 px on the longer side (want ≤ %.1f)\n", cal.EdgeWidth, camera.MaxEdgeWidth)
	} else {
		fmt.Fprintf(out, "focus:   not judged (no clear tray edge)\n")
	}
	fmt.Fprintf(out, "light:   mean grey %.0f, %.2f%% clipped\n", cal.Mean, cal.Clipped*100)
	if l := cal.Locked; l != nil {
		fmt.Fprintf(out, "locked:  exposure %s, gain %s, white balance %s, focus %s\n", opt(l.Exposure), opt(l.Gain), opt(l.WBTemperature), opt(l.Focus))
	}
	for _, p := range cal.Problems {
		fmt.Fprintf(out, "PROBLEM: %s\n", p)
	}
	if !cal.OK() && !*force {
		return Exit(1, "towerd calibrate: not saved: fix the problems above and run it again (or --force)")
	}
	if err := cal.Save(dir, bg); err != nil {
		return err
	}
	fmt.Fprintf(out, "saved:   %s, %s, %s\n", filepath.Join(dir, camera.CalibrationFile), filepath.Join(dir, camera.BackgroundFile), filepath.Join(dir, camera.AnnotatedFile))
	return nil
}

func opt(v *float64) string {
	if v == nil {
		return "auto (not lockable)"
	}
	return fmt.Sprintf("%g", *v)
}
