// Package camera captures tray frames from V4L2/libcamera or a simulated
// source, calibrates the empty tray and waits for dice to settle.
//
// Everything after capture (settle detection, calibration checks) is pure Go
// over *image.RGBA frames, so it is tested against rendered frames and its
// speed does not depend on OpenCV; only Device touches gocv.
package camera

import (
	"context"
	"errors"
	"image"
	"time"
)

// ErrHardware marks a camera that is missing, unplugged, frozen or
// returning empty frames. Errors wrap it; test with errors.Is.
var ErrHardware = errors.New("camera hardware fault")

// ErrTimeout marks dice that did not settle within the time limit.
var ErrTimeout = errors.New("dice did not settle in time")

// Frame is one captured picture.
type Frame struct {
	// Image is owned by the receiver: a Source never reuses it.
	Image *image.RGBA
	// Time is when it was captured (by the source's clock).
	Time time.Time
	// Seq counts frames from the source's start, from 1.
	Seq uint64
}

// Source delivers frames. Capture returns the next frame, bounded by ctx:
// it never blocks past ctx's deadline. A failed capture returns an error
// wrapping ErrHardware; a later Capture tries again (reopening the device),
// so a camera that comes back is picked up without a restart.
type Source interface {
	Capture(ctx context.Context) (Frame, error)
	Close() error
}

// Locker is a Source whose exposure and white balance can be fixed at
// their current values so frames compare and dice look the same every roll.
type Locker interface {
	// Lock fixes, of what is asked, what the camera allows and reports
	// what it fixed.
	Lock(ctx context.Context, what Locks) (Locked, error)
}

// Locks says which automatic controls calibration fixes: Exposure the
// exposure, gain and focus (how bright and sharp a frame is),
// WhiteBalance the colour temperature.
type Locks struct{ Exposure, WhiteBalance bool }

// Any reports whether anything is to be fixed.
func (l Locks) Any() bool { return l.Exposure || l.WhiteBalance }

// Locked is what Lock fixed; fields are nil when the camera does not
// allow that control. It is saved with the calibration and applied again
// when the camera is reopened.
type Locked struct {
	Exposure      *float64 `json:"exposure,omitempty"`
	Gain          *float64 `json:"gain,omitempty"`
	WBTemperature *float64 `json:"wb_temperature,omitempty"`
	Focus         *float64 `json:"focus,omitempty"`
}
