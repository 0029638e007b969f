package camera

import (
	"context"
	"fmt"
	"image"
	"time"

	"github.com/towerd/towerd/clock"
)

// Settle defaults, measured on rendered tumbling sequences (see
// docs/camera.md and TestSettleMeasure): the still-frame difference of
// sensor noise stays below ~1.3 grey levels per block, a die creeping
// one pixel per frame gives ≥ 4.
const (
	DefaultStillFrames   = 3
	DefaultDiffThreshold = 2.0
	DefaultSettleTimeout = 5 * time.Second
	DefaultScale         = 4
	DefaultBlock         = 8
)

// SettleConfig says when the dice in the tray count as at rest.
type SettleConfig struct {
	// StillFrames consecutive still frames (each compared with the one
	// before) mean the dice are at rest; 0 means DefaultStillFrames.
	StillFrames int
	// DiffThreshold: a frame is still when no block of the downscaled grey
	// tray changed by more than this mean absolute grey-level difference
	// (0–255) since the previous frame; 0 means DefaultDiffThreshold.
	DiffThreshold float64
	// Timeout bounds the whole wait; 0 means DefaultSettleTimeout. On
	// timeout the latest frames are still returned with ErrTimeout.
	Timeout time.Duration
	// Keep is how many of the last frames to return for the reader to
	// vote over; 0 means StillFrames.
	Keep int
	// Region is the tray in frame pixels (from the calibration); empty
	// means the whole frame.
	Region image.Rectangle
	// Scale is the downscaling factor before differencing (0: 4) and Block
	// the side of a difference block in downscaled pixels (0: 8): one die
	// covers a few blocks, so a single moving die is not averaged away by
	// a large still tray.
	Scale, Block int
	// RequireMotion: the wait started with the tumble, so motion must be
	// seen before stillness counts. No motion within MotionWait (0: the
	// Timeout) is a hardware error: a frozen camera (or dice stuck in the
	// tower) shows nothing moving.
	RequireMotion bool
	MotionWait    time.Duration
	// Clock times the wait; nil means the real clock.
	Clock clock.Clock
}

func (c SettleConfig) withDefaults() SettleConfig {
	if c.StillFrames <= 0 {
		c.StillFrames = DefaultStillFrames
	}
	if c.DiffThreshold <= 0 {
		c.DiffThreshold = DefaultDiffThreshold
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultSettleTimeout
	}
	if c.Keep <= 0 {
		c.Keep = c.StillFrames
	}
	if c.Scale <= 0 {
		c.Scale = DefaultScale
	}
	if c.Block <= 0 {
		c.Block = DefaultBlock
	}
	if c.MotionWait <= 0 || c.MotionWait > c.Timeout {
		c.MotionWait = c.Timeout
	}
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	return c
}

// Settled is the outcome of a wait.
type Settled struct {
	// Frames are the last frames seen, oldest first: on success the last
	// Keep frames of the still run (at most StillFrames+1 of them).
	Frames []Frame
	// Captured counts the frames looked at.
	Captured int
	// MotionSeen reports whether any frame changed by more than the
	// threshold.
	MotionSeen bool
	// Diffs is each frame's difference from the one before (the first
	// frame has none): for logs and for tuning the threshold.
	Diffs []float64
	// Elapsed is the wait's duration by the configured clock.
	Elapsed time.Duration
}

// WaitSettled captures from src until the dice are still, the time limit
// passes (ErrTimeout, with the latest frames) or the camera fails
// (ErrHardware). A Capture blocked past the time limit is cancelled.
func WaitSettled(ctx context.Context, src Source, cfg SettleConfig) (Settled, error) {
	cfg = cfg.withDefaults()
	clk := cfg.Clock
	start := clk.Now()
	deadline := start.Add(cfg.Timeout)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	timer := clk.NewTimer(cfg.Timeout)
	defer timer.Stop()
	go func() {
		select {
		case <-timer.C():
			cancel()
		case <-cctx.Done():
		}
	}()

	det := NewDetector(cfg)
	var out Settled
	ring := make([]Frame, 0, cfg.Keep)
	push := func(f Frame) {
		if len(ring) == cfg.Keep {
			copy(ring, ring[1:])
			ring = ring[:cfg.Keep-1]
		}
		ring = append(ring, f)
	}
	finish := func() Settled {
		out.Frames = append([]Frame(nil), ring...)
		out.Elapsed = clk.Now().Sub(start)
		return out
	}
	still := 0
	for {
		f, err := src.Capture(cctx)
		if err != nil {
			switch {
			case ctx.Err() != nil:
				return finish(), fmt.Errorf("camera: settle: %w", ctx.Err())
			case cctx.Err() != nil:
				return finish(), fmt.Errorf("camera: settle: no still picture after %s (%d frames): %w", cfg.Timeout, out.Captured, ErrTimeout)
			}
			return finish(), fmt.Errorf("camera: settle: %w", err)
		}
		out.Captured++
		diff, ok := det.Add(f.Image)
		switch {
		case !ok:
			still = 0
		case diff > cfg.DiffThreshold:
			out.MotionSeen = true
			still = 0
			ring = ring[:0]
		case out.MotionSeen || !cfg.RequireMotion:
			still++
		}
		if ok {
			out.Diffs = append(out.Diffs, diff)
		}
		push(f)
		if still >= cfg.StillFrames {
			return finish(), nil
		}
		now := clk.Now()
		if cfg.RequireMotion && !out.MotionSeen && now.Sub(start) >= cfg.MotionWait {
			return finish(), fmt.Errorf("camera: settle: nothing moved in %s after the tumble (camera frozen, or dice stuck in the tower): %w", cfg.MotionWait, ErrHardware)
		}
		if !now.Before(deadline) {
			return finish(), fmt.Errorf("camera: settle: no still picture after %s (%d frames): %w", cfg.Timeout, out.Captured, ErrTimeout)
		}
	}
}

// Detector measures how much consecutive frames differ over the tray:
// frames are downscaled to grey by averaging Scale×Scale pixels and the
// difference is the largest mean absolute difference of any Block×Block
// block. Not safe for concurrent use.
type Detector struct {
	region      image.Rectangle
	sampleRect  image.Rectangle
	scale       int
	block       int
	prev, cur   []uint8
	w, h        int
	frameBounds image.Rectangle
	sums        []uint32
	blockSums   []uint32
	blockCounts []uint32
}

// NewDetector returns a detector for cfg's Region, Scale and Block.
func NewDetector(cfg SettleConfig) *Detector {
	cfg = cfg.withDefaults()
	return &Detector{region: cfg.Region, scale: cfg.Scale, block: cfg.Block}
}

// Reset forgets the previous frame.
func (d *Detector) Reset() { d.frameBounds = image.Rectangle{} }

// Add takes the next frame and returns its difference from the previous
// one; ok is false for the first frame (or after the frame size changed).
func (d *Detector) Add(img *image.RGBA) (diff float64, ok bool) {
	if img == nil {
		d.Reset()
		return 0, false
	}
	if img.Rect != d.frameBounds {
		d.setup(img.Rect)
		d.downscale(img, d.prev)
		return 0, false
	}
	d.downscale(img, d.cur)
	diff = d.compare()
	d.prev, d.cur = d.cur, d.prev
	return diff, true
}

func (d *Detector) setup(b image.Rectangle) {
	d.frameBounds = b
	r := b
	if !d.region.Empty() {
		r = d.region.Intersect(b)
		if r.Empty() {
			r = b
		}
	}
	d.w, d.h = r.Dx()/d.scale, r.Dy()/d.scale
	if d.w < 1 || d.h < 1 {
		d.w, d.h = 1, 1
	}
	// Centre the sampled area in the region (drop the remainder evenly).
	r.Min.X += (r.Dx() - d.w*d.scale) / 2
	r.Min.Y += (r.Dy() - d.h*d.scale) / 2
	r.Max = r.Min.Add(image.Pt(d.w*d.scale, d.h*d.scale))
	d.sampleRect = r
	n := d.w * d.h
	d.prev = make([]uint8, n)
	d.cur = make([]uint8, n)
	d.sums = make([]uint32, d.w)
	bw, bh := (d.w+d.block-1)/d.block, (d.h+d.block-1)/d.block
	d.blockSums = make([]uint32, bw*bh)
	d.blockCounts = make([]uint32, bw*bh)
	for y := 0; y < d.h; y++ {
		for x := 0; x < d.w; x++ {
			d.blockCounts[(y/d.block)*bw+x/d.block]++
		}
	}
}

// downscale writes the grey (R+2G+B)/4 mean of each Scale×Scale cell.
func (d *Detector) downscale(img *image.RGBA, out []uint8) {
	s := d.scale
	r := d.sampleRect
	div := uint32(4 * s * s)
	for oy := 0; oy < d.h; oy++ {
		sums := d.sums
		clear(sums)
		for k := 0; k < s; k++ {
			y := r.Min.Y + oy*s + k
			row := img.Pix[img.PixOffset(r.Min.X, y):]
			row = row[:4*d.w*s]
			for ox := range sums {
				cell := row[4*ox*s : 4*(ox+1)*s]
				var acc uint32
				for i := 0; i+3 < len(cell); i += 4 {
					acc += uint32(cell[i]) + 2*uint32(cell[i+1]) + uint32(cell[i+2])
				}
				sums[ox] += acc
			}
		}
		line := out[oy*d.w : (oy+1)*d.w]
		for ox, v := range sums {
			line[ox] = uint8((v + div/2) / div)
		}
	}
}

func (d *Detector) compare() float64 {
	clear(d.blockSums)
	bw := (d.w + d.block - 1) / d.block
	for y := 0; y < d.h; y++ {
		a := d.prev[y*d.w : (y+1)*d.w]
		b := d.cur[y*d.w : (y+1)*d.w]
		bs := d.blockSums[(y/d.block)*bw:]
		for x := range a {
			v := int32(a[x]) - int32(b[x])
			if v < 0 {
				v = -v
			}
			bs[x/d.block] += uint32(v)
		}
	}
	best := 0.0
	for i, s := range d.blockSums {
		if m := float64(s) / float64(d.blockCounts[i]); m > best {
			best = m
		}
	}
	return best
}
