package camera

import (
	"context"
	"image"
	"image/color"
	"math"
	"testing"

	"gocv.io/x/gocv"
)

// frameGrabber delivers one 3x2 BGR frame whose top-left pixel is red and
// the rest black.
type frameGrabber struct{}

var _ grabber = frameGrabber{}

func (frameGrabber) Read(m *gocv.Mat) bool {
	f := gocv.NewMatWithSize(2, 3, gocv.MatTypeCV8UC3)
	defer f.Close()
	f.SetUCharAt(0, 2, 255) // BGR: red at (0, 0)
	f.CopyTo(m)
	return true
}
func (frameGrabber) Set(gocv.VideoCaptureProperties, float64) {}
func (frameGrabber) Get(gocv.VideoCaptureProperties) float64  { return 0 }
func (frameGrabber) Close() error                             { return nil }

// TestReadFrameRotates: a camera mounted on its side or upside down gives
// frames turned upright (the far side of the tray at the top): the
// corner pixel goes where the turn takes it, and the frame's sides swap
// for a quarter turn.
func TestReadFrameRotates(t *testing.T) {
	for _, tc := range []struct {
		rotate   int
		w, h     int
		redX, rY int
	}{
		{0, 3, 2, 0, 0},
		{90, 2, 3, 1, 0},
		{180, 3, 2, 2, 1},
		{270, 2, 3, 0, 2},
	} {
		img, err := readFrame(frameGrabber{}, tc.rotate)
		if err != nil {
			t.Fatalf("rotate %d: %v", tc.rotate, err)
		}
		if b := img.Bounds(); b.Dx() != tc.w || b.Dy() != tc.h {
			t.Errorf("rotate %d: frame %dx%d, want %dx%d", tc.rotate, b.Dx(), b.Dy(), tc.w, tc.h)
			continue
		}
		if got := img.RGBAAt(tc.redX, tc.rY); got != (color.RGBA{R: 255, A: 255}) {
			t.Errorf("rotate %d: pixel (%d,%d) = %v, want red", tc.rotate, tc.redX, tc.rY, got)
		}
	}
}

// TestNewDeviceRotate: only quarter turns are taken.
func TestNewDeviceRotate(t *testing.T) {
	for _, r := range []int{0, 90, 180, 270} {
		d, err := NewDevice(DeviceConfig{Source: SourceLibcamera, Width: 640, Height: 480, FPS: 30, Rotate: r})
		if err != nil {
			t.Errorf("rotate %d: %v", r, err)
			continue
		}
		d.Close()
	}
	for _, r := range []int{45, -90, 360} {
		if _, err := NewDevice(DeviceConfig{Source: SourceLibcamera, Width: 640, Height: 480, FPS: 30, Rotate: r}); err == nil {
			t.Errorf("rotate %d: no error", r)
		}
	}
}

// TestEdgeWidthTurned: a frame turned on its side is judged for focus at
// the same scale (about 640 px on its longer side): a 1280x720 camera
// that passed upright failed, turned, with its edges twice as wide.
func TestEdgeWidthTurned(t *testing.T) {
	const w, h = 1280, 720
	tray := image.Rect(160, 90, 1120, 630)
	grey := func(x, y int) uint8 {
		// The tray's edge rises over 4 pixels.
		d := min(x-tray.Min.X, tray.Max.X-1-x, y-tray.Min.Y, tray.Max.Y-1-y)
		return uint8(40 + 140*min(max(float64(d+2)/4, 0), 1))
	}
	land, port := make([]uint8, w*h), make([]uint8, w*h)
	for y := range h {
		for x := range w {
			land[y*w+x] = grey(x, y)
			port[x*h+y] = grey(x, y) // turned: portrait h wide, w high
		}
	}
	a := edgeWidth(land, w, h, tray)
	b := edgeWidth(port, h, w, image.Rect(tray.Min.Y, tray.Min.X, tray.Max.Y, tray.Max.X))
	if a == 0 || math.Abs(a-b) > 0.25 {
		t.Errorf("edge width upright %.2f, turned %.2f; want alike", a, b)
	}
}

// controlGrabber reports fixed values for the camera's controls and
// records what is set.
type controlGrabber struct {
	frameGrabber
	set map[gocv.VideoCaptureProperties]float64
}

func (g *controlGrabber) Set(p gocv.VideoCaptureProperties, v float64) { g.set[p] = v }
func (g *controlGrabber) Get(p gocv.VideoCaptureProperties) float64 {
	return map[gocv.VideoCaptureProperties]float64{
		gocv.VideoCaptureExposure: 120, gocv.VideoCaptureGain: 4,
		gocv.VideoCaptureWBTemperature: 4600, gocv.VideoCaptureFocus: 30,
	}[p]
}

// TestLockWhatIsAsked: lock_exposure and lock_white_balance are separate
// (they were one switch): exposure fixes exposure, gain and focus and
// leaves white balance automatic, and the other way round.
func TestLockWhatIsAsked(t *testing.T) {
	for _, tc := range []struct {
		what   Locks
		wb, ex bool
	}{
		{Locks{Exposure: true}, false, true},
		{Locks{WhiteBalance: true}, true, false},
		{Locks{Exposure: true, WhiteBalance: true}, true, true},
	} {
		d, err := NewDevice(DeviceConfig{Source: SourceV4L2, Device: "/dev/video9", Width: 640, Height: 480, FPS: 30})
		if err != nil {
			t.Fatal(err)
		}
		g := &controlGrabber{set: map[gocv.VideoCaptureProperties]float64{}}
		d.open = func() (grabber, error) { return g, nil }
		l, err := d.Lock(context.Background(), tc.what)
		if err != nil {
			t.Fatal(err)
		}
		_, autoWB := g.set[gocv.VideoCaptureAutoWB]
		_, autoEx := g.set[gocv.VideoCaptureAutoExposure]
		if (l.WBTemperature != nil) != tc.wb || autoWB != tc.wb || (l.Exposure != nil) != tc.ex || autoEx != tc.ex ||
			(l.Gain != nil) != tc.ex || (l.Focus != nil) != tc.ex {
			t.Errorf("%+v: locked %+v, set %v", tc.what, l, g.set)
		}
		d.Close()
	}
}
