package camera

import (
	"context"
	"errors"
	"fmt"
	"image"
	"log/slog"
	"sync"
	"time"

	"gocv.io/x/gocv"

	"github.com/towerd/towerd/clock"
)

// Device sources.
const (
	SourceV4L2      = "v4l2"
	SourceLibcamera = "libcamera"
)

// DeviceConfig chooses and sets up a real camera.
type DeviceConfig struct {
	// Source is SourceV4L2 (USB webcams: /dev/videoN, MJPG) or
	// SourceLibcamera (Pi CSI cameras through GStreamer's libcamerasrc).
	Source string
	// Device is the V4L2 device path, e.g. /dev/video0.
	Device string
	// Pipeline, when set, replaces the GStreamer pipeline built for
	// libcamera (it must end in an appsink delivering BGR).
	Pipeline string
	// Width, Height and FPS requested from the camera.
	Width, Height, FPS int
	// Rotate turns every frame clockwise by 0, 90, 180 or 270 degrees: a
	// camera mounted on its side or upside down (a Pi camera's ribbon
	// often makes it so) gives upright frames, with the far side of the
	// tray at the top.
	Rotate int
	// Locked values to apply on every (re)open, from the calibration.
	Locked *Locked
	// Log receives open/close events; nil discards them.
	Log *slog.Logger
	// Clock stamps frames; nil means the real clock.
	Clock clock.Clock
}

// LibcameraPipeline is the GStreamer pipeline used for a Pi CSI camera.
func LibcameraPipeline(w, h, fps int) string {
	return fmt.Sprintf("libcamerasrc ! video/x-raw,width=%d,height=%d,framerate=%d/1 ! videoconvert ! video/x-raw,format=BGR ! appsink drop=true max-buffers=1 sync=false", w, h, fps)
}

// grabber is the part of gocv.VideoCapture that Device uses (a fake in
// tests stands in for a camera).
type grabber interface {
	Read(m *gocv.Mat) bool
	Set(p gocv.VideoCaptureProperties, v float64)
	Get(p gocv.VideoCaptureProperties) float64
	Close() error
}

// Device captures from a real camera. It opens lazily on the first
// Capture and again after any failure, so a camera unplugged mid-run is
// picked up when it comes back. Every Capture is bounded by its context:
// the blocking OpenCV read runs in a goroutine that Capture stops waiting
// for. Safe for concurrent use.
type Device struct {
	cfg  DeviceConfig
	log  *slog.Logger
	clk  clock.Clock
	open func() (grabber, error)

	// sem is held by whoever uses cap, including a read that outlived its
	// Capture's context: a new Capture waits for it (bounded by its own
	// context) rather than touching the capture concurrently.
	sem    chan struct{}
	mu     sync.Mutex
	cap    grabber
	locked *Locked
	seq    uint64
	closed bool
}

var (
	_ Source = (*Device)(nil)
	_ Locker = (*Device)(nil)
)

// NewDevice checks cfg and returns a device that opens on first use.
func NewDevice(cfg DeviceConfig) (*Device, error) {
	switch cfg.Source {
	case SourceV4L2:
		if cfg.Device == "" {
			return nil, errors.New("camera: v4l2 needs a device path such as /dev/video0")
		}
	case SourceLibcamera:
	default:
		return nil, fmt.Errorf("camera: source %q is not %s or %s", cfg.Source, SourceV4L2, SourceLibcamera)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.FPS <= 0 {
		return nil, fmt.Errorf("camera: size %dx%d at %d fps is not usable", cfg.Width, cfg.Height, cfg.FPS)
	}
	if _, ok := rotations[cfg.Rotate]; !ok && cfg.Rotate != 0 {
		return nil, fmt.Errorf("camera: rotate %d is not 0, 90, 180 or 270 (degrees clockwise)", cfg.Rotate)
	}
	d := &Device{cfg: cfg, log: cfg.Log, clk: cfg.Clock, sem: make(chan struct{}, 1), locked: cfg.Locked}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	if d.clk == nil {
		d.clk = clock.Real{}
	}
	d.open = d.openGocv
	return d, nil
}

func (d *Device) name() string {
	if d.cfg.Source == SourceV4L2 {
		return d.cfg.Device
	}
	return "libcamera"
}

func (d *Device) openGocv() (grabber, error) {
	var (
		vc  *gocv.VideoCapture
		err error
	)
	if d.cfg.Source == SourceV4L2 {
		vc, err = gocv.OpenVideoCaptureWithAPI(d.cfg.Device, gocv.VideoCaptureV4L2)
	} else {
		p := d.cfg.Pipeline
		if p == "" {
			p = LibcameraPipeline(d.cfg.Width, d.cfg.Height, d.cfg.FPS)
		}
		vc, err = gocv.OpenVideoCaptureWithAPI(p, gocv.VideoCaptureGstreamer)
	}
	if err != nil {
		return nil, err
	}
	if !vc.IsOpened() {
		vc.Close()
		return nil, errors.New("not opened (missing, busy, or no permission: is the user in the video group?)")
	}
	if d.cfg.Source == SourceV4L2 {
		// MJPG lets USB 2 webcams deliver 720p at 30 fps; a fresh frame
		// matters more than a queue, so keep one buffer.
		vc.Set(gocv.VideoCaptureFOURCC, vc.ToCodec("MJPG"))
		vc.Set(gocv.VideoCaptureFrameWidth, float64(d.cfg.Width))
		vc.Set(gocv.VideoCaptureFrameHeight, float64(d.cfg.Height))
		vc.Set(gocv.VideoCaptureFPS, float64(d.cfg.FPS))
		vc.Set(gocv.VideoCaptureBufferSize, 1)
	}
	return vc, nil
}

// acquire takes the capture for the caller, opening it if needed.
func (d *Device) acquire(ctx context.Context) (grabber, error) {
	select {
	case d.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("camera: %s busy with a stuck read: %w (%w)", d.name(), ErrHardware, ctx.Err())
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		<-d.sem
		return nil, fmt.Errorf("camera: %s closed: %w", d.name(), ErrHardware)
	}
	if d.cap == nil {
		g, err := d.open()
		if err != nil {
			<-d.sem
			return nil, fmt.Errorf("camera: open %s: %v: %w", d.name(), err, ErrHardware)
		}
		if d.locked != nil && d.cfg.Source == SourceV4L2 {
			applyLocked(g, d.locked)
		}
		d.cap = g
		d.log.Info("camera opened", "camera", d.name(), "width", d.cfg.Width, "height", d.cfg.Height, "fps", d.cfg.FPS)
	}
	return d.cap, nil
}

func (d *Device) release() { <-d.sem }

// drop closes the capture after a failure so the next Capture reopens it.
// The caller holds sem.
func (d *Device) drop(why error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cap != nil {
		d.cap.Close()
		d.cap = nil
		d.log.Warn("camera lost; will reopen on the next capture", "camera", d.name(), "err", why)
	}
}

// Capture reads one frame.
func (d *Device) Capture(ctx context.Context) (Frame, error) {
	g, err := d.acquire(ctx)
	if err != nil {
		return Frame{}, err
	}
	type result struct {
		img *image.RGBA
		err error
	}
	ch := make(chan result, 1)
	go func() {
		// This goroutine owns sem until the read ends, even if Capture
		// has given up waiting.
		defer d.release()
		img, err := readFrame(g, d.cfg.Rotate)
		if err != nil {
			d.drop(err)
		}
		ch <- result{img, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			return Frame{}, fmt.Errorf("camera: read %s: %v: %w", d.name(), r.err, ErrHardware)
		}
		d.mu.Lock()
		d.seq++
		seq := d.seq
		d.mu.Unlock()
		return Frame{Image: r.img, Time: d.clk.Now(), Seq: seq}, nil
	case <-ctx.Done():
		return Frame{}, fmt.Errorf("camera: read %s: no frame in time: %w (%w)", d.name(), ErrHardware, ctx.Err())
	}
}

// readFrame reads and converts one frame, closing its Mat.
func readFrame(g grabber, rotate int) (*image.RGBA, error) {
	m := gocv.NewMat()
	defer m.Close()
	if !g.Read(&m) {
		return nil, errors.New("read failed (unplugged?)")
	}
	if m.Empty() {
		return nil, errors.New("empty frame")
	}
	if code, ok := rotations[rotate]; ok {
		r := gocv.NewMat()
		defer r.Close()
		gocv.Rotate(m, &r, code)
		return matToRGBA(r)
	}
	return matToRGBA(m)
}

// rotations are the turns DeviceConfig.Rotate may ask for besides 0.
var rotations = map[int]gocv.RotateFlag{
	90:  gocv.Rotate90Clockwise,
	180: gocv.Rotate180Clockwise,
	270: gocv.Rotate90CounterClockwise,
}

// matToRGBA converts an 8-bit BGR (or grey) Mat to RGBA.
func matToRGBA(m gocv.Mat) (*image.RGBA, error) {
	w, h := m.Cols(), m.Rows()
	ch := m.Channels()
	if m.Type() != gocv.MatTypeCV8UC3 && m.Type() != gocv.MatTypeCV8UC1 {
		return nil, fmt.Errorf("unexpected frame type %v", m.Type())
	}
	data, err := m.DataPtrUint8()
	if err != nil {
		return nil, err
	}
	step := m.Step()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		src := data[y*step:]
		dst := img.Pix[y*img.Stride:]
		for x := 0; x < w; x++ {
			if ch == 3 {
				dst[4*x], dst[4*x+1], dst[4*x+2] = src[3*x+2], src[3*x+1], src[3*x]
			} else {
				dst[4*x], dst[4*x+1], dst[4*x+2] = src[x], src[x], src[x]
			}
			dst[4*x+3] = 255
		}
	}
	return img, nil
}

// Lock fixes exposure, gain, white balance and focus at their current
// values (V4L2; with libcamera set them in the pipeline, see
// docs/camera.md). Controls the camera lacks read as 0 or -1 and are left
// alone.
func (d *Device) Lock(ctx context.Context, what Locks) (Locked, error) {
	g, err := d.acquire(ctx)
	if err != nil {
		return Locked{}, err
	}
	defer d.release()
	if d.cfg.Source != SourceV4L2 {
		return Locked{}, nil
	}
	var l Locked
	get := func(p gocv.VideoCaptureProperties) *float64 {
		v := g.Get(p)
		if v <= 0 {
			return nil
		}
		return &v
	}
	if what.Exposure {
		l.Exposure = get(gocv.VideoCaptureExposure)
		l.Gain = get(gocv.VideoCaptureGain)
		l.Focus = get(gocv.VideoCaptureFocus)
	}
	if what.WhiteBalance {
		l.WBTemperature = get(gocv.VideoCaptureWBTemperature)
	}
	applyLocked(g, &l)
	d.mu.Lock()
	d.locked = &l
	d.mu.Unlock()
	return l, nil
}

// applyLocked turns the automatic controls off and sets the saved values.
// V4L2's auto exposure menu: 1 is manual, 3 aperture priority (auto).
func applyLocked(g grabber, l *Locked) {
	if l.Exposure != nil {
		g.Set(gocv.VideoCaptureAutoExposure, 1)
		g.Set(gocv.VideoCaptureExposure, *l.Exposure)
	}
	if l.Gain != nil {
		g.Set(gocv.VideoCaptureGain, *l.Gain)
	}
	if l.WBTemperature != nil {
		g.Set(gocv.VideoCaptureAutoWB, 0)
		g.Set(gocv.VideoCaptureWBTemperature, *l.WBTemperature)
	}
	if l.Focus != nil {
		g.Set(gocv.VideoCaptureAutoFocus, 0)
		g.Set(gocv.VideoCaptureFocus, *l.Focus)
	}
}

// Close releases the camera. A read still running finishes first.
func (d *Device) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	select {
	case d.sem <- struct{}{}:
		defer func() { <-d.sem }()
	case <-ctx.Done():
		// A read is stuck in the driver; mark closed and let it end.
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	if d.cap != nil && len(d.sem) == 1 {
		err := d.cap.Close()
		d.cap = nil
		return err
	}
	return nil
}
