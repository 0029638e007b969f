package cli

import (
	"context"
	"errors"
	"fmt"
	"image"
	"io/fs"
	"log/slog"
	"time"

	"github.com/towerd/towerd/clock"
	"github.com/towerd/towerd/config"
	"github.com/towerd/towerd/sim"
	"github.com/towerd/towerd/sim/render"
	"github.com/towerd/towerd/sim/simcam"
	"github.com/towerd/towerd/tower"
	"github.com/towerd/towerd/vision"
	"github.com/towerd/towerd/vision/camera"
	"github.com/towerd/towerd/vision/numeral"
)

func init() { openCameraEyes = newCameraEyes }

// newCameraEyes opens the camera of cfg (or, with useSim, a simulated
// camera whose faces come from the simulated entropy source) and the vision
// reader, and returns them as the roll loop's eyes.
func newCameraEyes(cfg *config.Config, useSim bool, seed int64, log *slog.Logger) (tower.Eyes, func(), error) {
	cc := cfg.Camera
	eyes := &tower.CameraEyes{Settle: camera.SettleConfig{
		StillFrames:   cc.Settle.StillFrames,
		DiffThreshold: cc.Settle.DiffThreshold,
		Timeout:       cc.Settle.Timeout,
	}}
	model, err := loadModel(cfg.Vision.Model, log)
	if err != nil {
		return nil, nil, err
	}
	if model != nil && model.MinConfidence() > cfg.Vision.MinConfidence {
		log.Info("vision: the model's own threshold is above vision.min_confidence and is used for its faces: its held-back photos were read wrongly below it",
			"model_min_confidence", model.MinConfidence(), "min_confidence", cfg.Vision.MinConfidence)
	}
	if useSim || cc.Source == config.SourceSim {
		src := sim.NewSource()
		if seed >= 0 {
			src = sim.NewSeeded(uint64(seed))
		}
		// Paced like a real camera, so a roll takes as long as a tumble
		// and a settle do, but the settle wait is timed by the frames' own
		// clock: a machine too busy to draw 30 frames a second does not
		// time the dice out. Its d6 have pips.
		frames := clock.NewFake(time.Now())
		eyes.Settle.Clock = frames
		sc := simcam.Config{Seed: uint64(max(seed, 0)), Face: src.Face, D6: render.D6Pips,
			Clock: clock.Real{}, Pace: true, Advance: frames.Advance}
		cam := simcam.New(sc)
		// The empty tray, which towerd calibrate keeps on a real tower:
		// with it the reader finds dice as what differs from the tray.
		empty, err := cam.Capture(context.Background())
		if err != nil {
			cam.Close()
			return nil, nil, fmt.Errorf("vision: simulated camera: %w", err)
		}
		r, err := newVisionReader(cfg, model, empty.Image, cam.Tray(), true)
		if err != nil {
			cam.Close()
			return nil, nil, err
		}
		eyes.Source, eyes.Stage, eyes.Reader = cam, cam.Roll, r
		return eyes, func() { cam.Close() }, nil
	}
	var bg image.Image
	var tray image.Rectangle
	switch cal, b, err := camera.LoadCalibration(cfg.Tower.StateDir); {
	case err == nil && cal.Rotate != cc.Rotate:
		// The empty tray and its place were seen turned another way.
		log.Warn("vision: the calibration was taken with another camera.rotate: reading without the empty tray (run towerd calibrate)",
			"state_dir", cfg.Tower.StateDir, "calibration_rotate", cal.Rotate, "rotate", cc.Rotate)
	case err == nil:
		bg, tray = b, cal.Tray
	case errors.Is(err, fs.ErrNotExist):
		log.Warn("vision: no calibration: reading without the empty tray (run towerd calibrate)", "state_dir", cfg.Tower.StateDir)
	default:
		return nil, nil, err
	}
	r, err := newVisionReader(cfg, model, bg, tray, cc.TopDown)
	if err != nil {
		return nil, nil, err
	}
	dev, err := camera.NewDevice(camera.DeviceConfig{
		Source: cc.Source, Device: cc.Device, Width: cc.Width, Height: cc.Height, FPS: cc.FPS, Rotate: cc.Rotate, Log: log,
	})
	if err != nil {
		return nil, nil, err
	}
	eyes.Source, eyes.Reader, eyes.Settle.Region = dev, r, tray
	return eyes, func() { dev.Close() }, nil
}

// loadModel loads the enrolled model; with none, only pip d6 can be read,
// and numbered dice come back with no face: their rolls are misreads,
// never guesses.
func loadModel(path string, log *slog.Logger) (*numeral.Model, error) {
	m, err := numeral.Load(path)
	switch {
	case err == nil:
		log.Info("vision: model loaded", "model", path, "kinds", m.Kinds())
		return m, nil
	case errors.Is(err, fs.ErrNotExist):
		log.Warn("vision: no enrolled model: only pip d6 can be read (run towerd enroll)", "model", path)
		return nil, nil
	}
	return nil, fmt.Errorf("vision: %w", err)
}

// newVisionReader builds the reader of cfg's vision section with the
// model (may be nil), the empty tray (may be nil), the tray region and
// whether the camera looks straight down (the simulated one does).
func newVisionReader(cfg *config.Config, m *numeral.Model, bg image.Image, tray image.Rectangle, topDown bool) (*tower.VisionReader, error) {
	vc := cfg.Vision
	opts := vision.Options{MinConfidence: vc.MinConfidence, Background: bg, Crop: tray, TopDown: topDown}
	if m != nil {
		opts.Model = m
	}
	for _, d := range vc.Dice {
		opts.AllowedKinds = append(opts.AllowedKinds, d.String())
	}
	r, err := vision.NewReader(opts)
	if err != nil {
		return nil, err
	}
	return &tower.VisionReader{Reader: r}, nil
}
