package camera

import (
	"context"
	"encoding/binary"
	"fmt"
	"image"
	"time"

	"github.com/towerd/towerd/clock"
)

// Settle defaults, measured on rendered tumbling sequences (see
// docs/camera.md and TestSettleNoiseFloor): the block difference of two
// still frames with 2.5 levels of sensor noise stays below ~1 grey level,
// while a low-contrast die moving two pixels gives ≥ 3. A die rocking to
// rest on an edge pauses for up to a few frames, so a still run must also
// last MinStill before the dice count as at rest.
const (
	DefaultStillFrames   = 3
	DefaultDiffThreshold = 2.0
	DefaultMinStill      = 300 * time.Millisecond
	DefaultSettleTimeout = 5 * time.Second
	DefaultScale         = 4
	DefaultBlock         = 4
)

// SettleConfig says when the dice in the tray count as at rest.
type SettleConfig struct {
	// StillFrames consecutive still frames (each compared with the one
	// before) mean the dice are at rest; 0 means DefaultStillFrames.
	StillFrames int
	// DiffThreshold: a frame is still when no block of the downscaled grey
	// tray changed by more than this mean absolute grey-level difference
	// (0–255) since the previous frame, nor since the frame the still run
	// started from (so a die creeping too slowly to show between two
	// frames still breaks the run); 0 means DefaultDiffThreshold.
	DiffThreshold float64
	// MinStill is how long (by frame times) the still run must last as
	// well: a die that balances on an edge for a moment and then falls
	// over is not taken for at rest. 0 means DefaultMinStill, negative
	// none.
	MinStill time.Duration
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
	// the side of a difference block in downscaled pixels (0: 4): a block
	// is smaller than a die, so a die's moving edge is not averaged away
	// by the still felt around it.
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
	switch {
	case c.MinStill == 0:
		c.MinStill = DefaultMinStill
	case c.MinStill < 0:
		c.MinStill = 0
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
	// Keep frames of the still run.
	Frames []Frame
	// Captured counts the frames looked at.
	Captured int
	// MotionSeen reports whether any frame changed by more than the
	// threshold (from the frame before it or from the start of a still
	// run).
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
//
// The dice are at rest after a still run: at least StillFrames frames,
// spanning at least MinStill, each within DiffThreshold of the frame
// before it and of the frame the run started from.
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
	// still counts the frames of the current still run; anchorAt is the
	// time of the frame it started from (the last one that moved).
	still := 0
	var anchorAt time.Time
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
		at := f.Time
		if at.IsZero() {
			at = clk.Now()
		}
		diff, ok := det.Add(f.Image)
		if ok {
			out.Diffs = append(out.Diffs, diff)
		}
		moved := false
		switch {
		case !ok:
			// First frame (or a new size): nothing to compare with yet.
		case diff > cfg.DiffThreshold:
			moved = true
		default:
			if drift, _ := det.Drift(); drift > cfg.DiffThreshold {
				moved = true // creeping: small steps that add up
			}
		}
		if moved {
			out.MotionSeen = true
		}
		switch {
		case !ok || moved || (cfg.RequireMotion && !out.MotionSeen):
			// This frame starts a new candidate run.
			still = 0
			anchorAt = at
			det.Mark()
			ring = ring[:0]
		default:
			still++
		}
		push(f)
		if still >= cfg.StillFrames && at.Sub(anchorAt) >= cfg.MinStill {
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
	ref         []uint8 // the frame Mark kept, for Drift
	hasRef      bool
	w, h        int
	frameBounds image.Rectangle
	sums        []uint32
	rb, g       []uint64 // downscaleSWAR's lanes
	blockSums   []uint32
	blockCounts []uint32
}

// NewDetector returns a detector for cfg's Region, Scale and Block.
func NewDetector(cfg SettleConfig) *Detector {
	cfg = cfg.withDefaults()
	return &Detector{region: cfg.Region, scale: cfg.Scale, block: cfg.Block}
}

// Reset forgets the previous frame.
func (d *Detector) Reset() {
	d.frameBounds = image.Rectangle{}
	d.hasRef = false
}

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
	diff = d.compare(d.prev, d.cur)
	d.prev, d.cur = d.cur, d.prev
	return diff, true
}

// Mark keeps the last frame added as the reference for Drift.
func (d *Detector) Mark() {
	if d.frameBounds.Empty() {
		return
	}
	copy(d.ref, d.prev)
	d.hasRef = true
}

// Drift returns the last frame's difference (as Add's) from the frame
// kept by Mark; ok is false when there is none (or the size changed).
func (d *Detector) Drift() (diff float64, ok bool) {
	if !d.hasRef {
		return 0, false
	}
	return d.compare(d.ref, d.prev), true
}

func (d *Detector) setup(b image.Rectangle) {
	d.frameBounds = b
	d.hasRef = false
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
	d.ref = make([]uint8, n)
	d.sums = make([]uint32, d.w)
	d.rb, d.g = make([]uint64, d.w), make([]uint64, d.w)
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
//
// The detector's kernels are exempt from the race detector (go:norace):
// they read frames the caller owns, from one goroutine, and instrumented
// they made settle tests 10x slower under -race.
//
//go:norace
func (d *Detector) downscale(img *image.RGBA, out []uint8) {
	s := d.scale
	if s%2 == 0 && s <= maxSWARScale {
		d.downscaleSWAR(img, out)
		return
	}
	d.downscaleBytes(img, out)
}

// downscaleBytes is downscale a byte at a time, for any scale.
//
//go:norace
func (d *Detector) downscaleBytes(img *image.RGBA, out []uint8) {
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

// maxSWARScale keeps downscaleSWAR's 16-bit lanes from overflowing: a lane
// adds s*s/2 bytes of at most 255.
const maxSWARScale = 22

// downscaleSWAR is downscale for an even scale, two pixels per 64-bit
// load: the red and blue bytes of both are added in four 16-bit lanes and
// the green ones in two 32-bit lanes, so a 640x480 frame costs a third of
// the byte-by-byte loop (the settle detector must keep up with 200 fps on
// one core of a Pi).
//
//go:norace
func (d *Detector) downscaleSWAR(img *image.RGBA, out []uint8) {
	const rbMask, gMask = 0x00FF00FF00FF00FF, 0x000000FF000000FF
	s := d.scale
	r := d.sampleRect
	div := uint64(4 * s * s)
	for oy := 0; oy < d.h; oy++ {
		rb, g := d.rb, d.g
		clear(rb)
		clear(g)
		for k := 0; k < s; k++ {
			y := r.Min.Y + oy*s + k
			row := img.Pix[img.PixOffset(r.Min.X, y):]
			row = row[:4*d.w*s]
			if s == 4 { // the default, unrolled
				for ox := range rb {
					cell := row[16*ox : 16*ox+16]
					v, u := binary.LittleEndian.Uint64(cell[:8]), binary.LittleEndian.Uint64(cell[8:])
					rb[ox] += v&rbMask + u&rbMask
					g[ox] += (v>>8)&gMask + (u>>8)&gMask
				}
				continue
			}
			for ox := range rb {
				cell := row[4*ox*s : 4*(ox+1)*s]
				var a, b uint64
				for i := 0; i+8 <= len(cell); i += 8 {
					v := binary.LittleEndian.Uint64(cell[i:])
					a += v & rbMask
					b += (v >> 8) & gMask
				}
				rb[ox] += a
				g[ox] += b
			}
		}
		line := out[oy*d.w : (oy+1)*d.w]
		for ox := range line {
			a, b := rb[ox], g[ox]
			sum := a&0xFFFF + a>>16&0xFFFF + a>>32&0xFFFF + a>>48 + 2*(b&0xFFFFFFFF+b>>32)
			line[ox] = uint8((sum + div/2) / div)
		}
	}
}

// compare returns the largest block mean absolute difference of p and q.
//
//go:norace
func (d *Detector) compare(p, q []uint8) float64 {
	clear(d.blockSums)
	bw := (d.w + d.block - 1) / d.block
	for y := 0; y < d.h; y++ {
		a := p[y*d.w : (y+1)*d.w]
		b := q[y*d.w : (y+1)*d.w]
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
