// Package simcam is a simulated tray camera: it renders a tumbling roll of
// the planned dice (moving, then still) so settle detection and the dice
// reader run end to end without hardware, with faults to inject.
package simcam

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"math"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/towerd/towerd/clock"
	"github.com/towerd/towerd/rules"
	"github.com/towerd/towerd/sim/render"
	"github.com/towerd/towerd/vision/camera"
)

// Config sets up a simulated camera.
type Config struct {
	// Width, Height default to 640x480.
	Width, Height int
	// Seed fixes the tray, the light, the dice set's colours and every
	// tumble's paths (and the faces when Face is nil).
	Seed uint64
	// Face rolls a die with the given number of sides, returning 1..sides
	// uniformly, e.g. (*sim.Source).Face. A d10 rolls Face(10) and shows
	// the result mod 10 (10 shows 0); a percentile d100 rolls Face(10) and
	// shows 10·(result mod 10) ("00" for 0). nil rolls from Seed.
	Face func(sides int) int
	// FPS is the simulated frame rate (frame times and pacing); 0 means 30.
	FPS int
	// Clock stamps frames; nil means a private fake clock that moves one
	// frame period per frame, so frame times are reproducible.
	Clock clock.Clock
	// Pace waits one frame period on Clock before each frame, as a real
	// camera does; off, frames come as fast as they are drawn.
	Pace bool
	// Advance, when set, is called with the frame period after each frame:
	// pass (*clock.Fake).Advance so a settle wait timed on a fake clock
	// sees time pass with the frames, without any sleep.
	Advance func(time.Duration)
	// TumbleFrames is about how long a die moves after it drops in; 0
	// means 24 (0.8 s at 30 fps).
	TumbleFrames int
	// D6 chooses pips or numerals for d6s (render.D6Mixed: one style per
	// camera, from Seed).
	D6 render.D6Style
	// Noise is the sensor noise sd in grey levels; 0 means 2.5, negative
	// none.
	Noise float64
	// Faults to inject from the start; SetFaults changes them later.
	Faults Faults
}

// Faults are failures to inject, for tests of everything downstream.
type Faults struct {
	// Cocked: the first die lands leaning on the tray wall (truth: Cocked).
	Cocked bool
	// Touching: the second die lands against the first (truth: Touching).
	Touching bool
	// OffTray: the last die lands on the tray's rim, outside the felt
	// (truth: OffTray).
	OffTray bool
	// Dark: the tray light is off: frames are nearly black.
	Dark bool
	// Frozen: the camera repeats the same frame forever, even while dice
	// tumble (a hung driver). Settle with RequireMotion reports it as a
	// hardware error ("nothing moved after the tumble").
	Frozen bool
	// Creep: the first die keeps creeping two pixels per frame for this
	// many frames after the others have stopped (from the tray's centre
	// side toward its rest).
	Creep int
	// Bounce: the first die stops for this many frames mid-tumble, then
	// moves on (a die that rests a moment on an edge).
	Bounce int
	// FailAfter makes Capture fail with camera.ErrHardware from the
	// FailAfter-th capture after SetFaults (1 = the next one), for FailFor
	// captures (0: until the faults are changed): an unplugged camera that
	// may come back. 0 means no failure.
	FailAfter, FailFor int
	// Empty: every Capture fails as a camera returning empty frames.
	Empty bool
}

// Camera is the simulated camera. Safe for concurrent use.
type Camera struct {
	mu      sync.Mutex
	cfg     Config
	period  time.Duration
	clk     clock.Clock
	rng     *rand.Rand
	base    render.Scene        // the empty tray, noise-free
	drop    [2]*render.Backdrop // base drawn once, lit and dark
	body    map[rules.Die][2]color.NRGBA
	pips    bool
	faults  Faults
	roll    *roll
	rolls   uint64
	seq     uint64
	calls   int // captures since SetFaults, for FailAfter
	failed  int
	frozen  *image.RGBA
	still   *image.RGBA // the clean frame of the scene at rest
	stillOf stillKey
	last    bool // the last frame showed the dice at rest
	restRun int  // frames in a row, up to the last, showing them at rest
	closed  bool
}

type stillKey struct {
	r    *roll
	dark bool
	set  bool
}

// New returns a camera looking at an empty tray.
func New(cfg Config) *Camera {
	if cfg.Width <= 0 || cfg.Height <= 0 {
		cfg.Width, cfg.Height = 640, 480
	}
	if cfg.FPS <= 0 {
		cfg.FPS = 30
	}
	if cfg.TumbleFrames <= 0 {
		cfg.TumbleFrames = 24
	}
	switch {
	case cfg.Noise == 0:
		cfg.Noise = 2.5
	case cfg.Noise < 0:
		cfg.Noise = 0
	}
	c := &Camera{cfg: cfg, period: time.Second / time.Duration(cfg.FPS), faults: cfg.Faults}
	c.clk = cfg.Clock
	if c.clk == nil {
		f := clock.NewFake(time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC))
		c.clk = f
		if c.cfg.Advance == nil {
			c.cfg.Advance = f.Advance
		}
	}
	c.rng = rand.New(rand.NewPCG(cfg.Seed, 0x51ca_3e7a))
	c.base = render.RandomTray(c.rng, cfg.Width, cfg.Height)
	c.base.Noise = 0
	c.body = map[rules.Die][2]color.NRGBA{}
	for _, k := range rules.Kinds {
		b, i := render.DiceColours(c.rng, c.base.Felt)
		c.body[k] = [2]color.NRGBA{b, i}
	}
	switch cfg.D6 {
	case render.D6Pips:
		c.pips = true
	case render.D6Mixed:
		c.pips = c.rng.IntN(2) == 0
	}
	return c
}

var _ camera.Source = (*Camera)(nil)

// Tray is the felt area of the simulated tray in frame pixels.
func (c *Camera) Tray() image.Rectangle { return c.base.Tray }

// SetFaults replaces the injected faults; the FailAfter count starts again.
func (c *Camera) SetFaults(f Faults) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.faults = f
	c.calls, c.failed = 0, 0
	if !f.Frozen {
		c.frozen = nil
	}
}

// Clear takes the dice out: the camera sees the empty tray (calibration).
func (c *Camera) Clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.roll = nil
}

// Roll drops dice of the given kinds into the tray: the next frames show
// them tumbling, then at rest with faces from Config.Face. Placement
// faults (Cocked, Touching, OffTray) apply to this roll.
func (c *Camera) Roll(kinds []rules.Die) error {
	for i, k := range kinds {
		if !k.Valid() {
			return fmt.Errorf("simcam: dice[%d]: %d is not a die kind", i, int(k))
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rolls++
	faces := make([]int, len(kinds))
	for i, k := range kinds {
		faces[i] = c.face(k)
	}
	r, err := c.plan(kinds, faces)
	if err != nil {
		return err
	}
	c.roll = r
	c.last, c.restRun = false, 0
	return nil
}

// face rolls one physical face of kind.
func (c *Camera) face(k rules.Die) int {
	roll := func(n int) int {
		if c.cfg.Face != nil {
			return c.cfg.Face(n)
		}
		return c.rng.IntN(n) + 1
	}
	switch k {
	case rules.D10:
		return roll(10) % 10
	case rules.D100:
		return roll(10) % 10 * 10
	}
	return roll(int(k))
}

// Truth is the ground truth of the current roll's dice at rest, in the
// order they were rolled; nil before any roll or after Clear.
func (c *Camera) Truth() []render.Truth {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.roll == nil {
		return nil
	}
	return append([]render.Truth(nil), c.roll.truth...)
}

// Faces are the physical faces of the current roll, in roll order.
func (c *Camera) Faces() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.roll == nil {
		return nil
	}
	out := make([]int, len(c.roll.final))
	for i, d := range c.roll.final {
		out[i] = d.Face
	}
	return out
}

// AtRest reports whether the last frame captured showed the dice at rest:
// every die on its final face and no point of it more than RestTolerance
// from where it stops. True for an empty tray.
func (c *Camera) AtRest() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

// RestFrames is how many frames in a row, up to the last one captured,
// showed the dice at rest (see AtRest): how long a settle wait took to
// notice.
func (c *Camera) RestFrames() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.restRun
}

// RestScene is the scene of the current roll at rest (the empty tray
// before any roll), for tests that render it themselves.
func (c *Camera) RestScene() render.Scene {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.base
	if c.roll != nil {
		s.Dice = append([]render.Die(nil), c.roll.final...)
	}
	return s
}

// Close stops the camera; Capture then fails.
func (c *Camera) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	return nil
}

// Capture returns the next frame.
func (c *Camera) Capture(ctx context.Context) (camera.Frame, error) {
	if err := ctx.Err(); err != nil {
		return camera.Frame{}, fmt.Errorf("simcam: capture: %w", err)
	}
	if c.cfg.Pace {
		t := c.clk.NewTimer(c.period)
		select {
		case <-t.C():
		case <-ctx.Done():
			t.Stop()
			return camera.Frame{}, fmt.Errorf("simcam: capture: %w", ctx.Err())
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return camera.Frame{}, fmt.Errorf("simcam: capture: camera closed: %w", camera.ErrHardware)
	}
	c.calls++
	f := c.faults
	if f.Empty {
		return camera.Frame{}, fmt.Errorf("simcam: capture: empty frame: %w", camera.ErrHardware)
	}
	if f.FailAfter > 0 && c.calls >= f.FailAfter && (f.FailFor == 0 || c.failed < f.FailFor) {
		c.failed++
		return camera.Frame{}, fmt.Errorf("simcam: capture: camera unplugged: %w", camera.ErrHardware)
	}
	var img *image.RGBA
	if f.Frozen && c.frozen != nil {
		img = cloneRGBA(c.frozen)
	} else {
		var err error
		img, err = c.draw()
		if err != nil {
			return camera.Frame{}, err
		}
		if f.Frozen {
			c.frozen = cloneRGBA(img)
		}
	}
	c.seq++
	if c.last {
		c.restRun++
	} else {
		c.restRun = 0
	}
	fr := camera.Frame{Image: img, Time: c.clk.Now(), Seq: c.seq}
	if c.cfg.Advance != nil {
		c.cfg.Advance(c.period)
	}
	return fr, nil
}

// draw renders the next frame of the current roll.
func (c *Camera) draw() (*image.RGBA, error) {
	dark := c.faults.Dark
	r := c.roll
	t := 0
	if r != nil {
		t = r.frame
		r.frame++
	}
	noiseSeed := c.cfg.Seed ^ c.seq*0x9e3779b97f4a7c15 ^ 0x7e57
	bd, err := c.backdrop(dark)
	if err != nil {
		return nil, err
	}
	img := image.NewRGBA(image.Rect(0, 0, c.cfg.Width, c.cfg.Height))
	if r == nil || t >= r.end {
		// At rest: the clean frame is drawn once, each frame re-noised.
		c.last = true
		key := stillKey{r: r, dark: dark, set: true}
		if c.stillOf != key {
			var dice []render.Die
			if r != nil {
				dice = r.final
			}
			still := image.NewRGBA(img.Rect)
			if _, err := bd.RenderInto(still, dice, 0, 0); err != nil {
				return nil, fmt.Errorf("simcam: %w", err)
			}
			c.still, c.stillOf = still, key
		}
		copy(img.Pix, c.still.Pix)
		render.AddNoise(img, c.cfg.Noise, noiseSeed)
		return img, nil
	}
	dice := r.at(t)
	c.last = r.nearRest(dice)
	if _, err := bd.RenderInto(img, dice, c.cfg.Noise, noiseSeed); err != nil {
		return nil, fmt.Errorf("simcam: %w", err)
	}
	return img, nil
}

// backdrop is the empty tray, lit or dark, drawn on first use.
func (c *Camera) backdrop(dark bool) (*render.Backdrop, error) {
	i := 0
	if dark {
		i = 1
	}
	if c.drop[i] == nil {
		s := c.base
		if dark {
			s.Light.Brightness = darkBrightness
		}
		bd, err := render.NewBackdrop(s)
		if err != nil {
			return nil, fmt.Errorf("simcam: %w", err)
		}
		c.drop[i] = bd
	}
	return c.drop[i], nil
}

// darkBrightness is the tray with its light off: a little daylight.
const darkBrightness = 0.07

func cloneRGBA(m *image.RGBA) *image.RGBA {
	out := &image.RGBA{Pix: make([]uint8, len(m.Pix)), Stride: m.Stride, Rect: m.Rect}
	copy(out.Pix, m.Pix)
	return out
}

// roll is one tumble: every die's path from the chute to its rest.
type roll struct {
	final  []render.Die
	truth  []render.Truth
	start  [][2]float64 // where each die drops in
	enter  []int        // frame it drops in
	dur    []int        // frames until it rests
	spin   []float64    // extra rotation at drop-in
	wobble []float64    // sideways bounce amplitude, pixels
	faceAt []int        // seeds for the faces flashed while rolling
	creep  int
	cdir   [2]float64
	bounce int
	end    int // first frame with everything at rest
	frame  int // frames drawn so far
}

// plan lays out a roll: rest poses (with placement faults), then paths.
func (c *Camera) plan(kinds []rules.Die, faces []int) (*roll, error) {
	rng := rand.New(rand.NewPCG(c.cfg.Seed^c.rolls*0x2545f4914f6cdd1d, 0x7011))
	tray := c.base.Tray
	f := c.faults
	r := &roll{}
	var placed []render.Die
	for i, k := range kinds {
		col := c.body[k]
		d := render.Die{
			Kind: k, Face: faces[i], Pips: k == rules.D6 && c.pips,
			Body: col[0], Ink: col[1],
			Size:    render.DefaultSize(k, c.cfg.Width) * (0.96 + 0.08*rng.Float64()),
			Angle:   rng.Float64() * 2 * math.Pi,
			Tilt:    rng.Float64() * 0.1,
			TiltDir: rng.Float64() * 2 * math.Pi,
		}
		rad := d.Size / 2
		switch {
		case i == 0 && f.Cocked:
			d.Cocked = true
			d.X = float64(tray.Min.X) + rad*0.9
			d.Y = float64(tray.Min.Y) + rad + rng.Float64()*math.Max(1, float64(tray.Dy())-2*rad)
			d.TiltDir = math.Pi // leaning on the left wall
		case i == 1 && f.Touching:
			d.X, d.Y = touchingSpot(rng, tray, placed[0], rad)
		case i == len(kinds)-1 && f.OffTray && i > 0:
			d.X = float64(tray.Max.X) + math.Min(float64(c.cfg.Width-tray.Max.X)-1, rad*0.5)
			d.Y = float64(tray.Min.Y) + rad + rng.Float64()*math.Max(1, float64(tray.Dy())-2*rad)
		default:
			d.X, d.Y = render.Place(rng, tray, d.Size, placed)
		}
		placed = append(placed, d)
	}
	if f.OffTray && len(kinds) == 1 {
		d := &placed[0]
		d.X = float64(tray.Max.X) + math.Min(float64(c.cfg.Width-tray.Max.X)-1, d.Size/4)
	}
	r.final = placed
	bd, err := c.backdrop(false)
	if err != nil {
		return nil, err
	}
	truth, err := bd.RenderInto(image.NewRGBA(image.Rect(0, 0, c.cfg.Width, c.cfg.Height)), placed, 0, 0)
	if err != nil {
		return nil, fmt.Errorf("simcam: %w", err)
	}
	r.truth = truth

	// Paths: dice drop from the tower's chute near the top edge, staggered
	// by a few frames, and slow down to rest.
	chute := [2]float64{float64(tray.Min.X) + float64(tray.Dx())*(0.3+0.4*rng.Float64()), float64(tray.Min.Y) + float64(tray.Dy())*0.15}
	T := c.cfg.TumbleFrames
	for i := range placed {
		r.start = append(r.start, [2]float64{chute[0] + (rng.Float64()-0.5)*40, chute[1] + (rng.Float64()-0.5)*20})
		r.enter = append(r.enter, 1+2*i+rng.IntN(3))
		r.dur = append(r.dur, T*6/10+rng.IntN(T*4/10+1))
		r.spin = append(r.spin, (rng.Float64()-0.5)*4*math.Pi)
		r.wobble = append(r.wobble, (rng.Float64()-0.5)*60)
		r.faceAt = append(r.faceAt, rng.IntN(1<<20))
		if e := r.enter[i] + r.dur[i]; e > r.end {
			r.end = e
		}
	}
	if len(placed) > 0 && f.Bounce > 0 {
		r.bounce = f.Bounce
		r.dur[0] += f.Bounce
		if e := r.enter[0] + r.dur[0]; e > r.end {
			r.end = e
		}
	}
	if len(placed) > 0 && f.Creep > 0 {
		// The creep comes from the tray's centre side, so the die stays
		// on the felt while it creeps.
		r.creep = f.Creep
		cx, cy := float64(tray.Min.X+tray.Max.X)/2, float64(tray.Min.Y+tray.Max.Y)/2
		a := math.Atan2(cy-placed[0].Y, cx-placed[0].X) + (rng.Float64()-0.5)*math.Pi/2
		r.cdir = [2]float64{math.Cos(a), math.Sin(a)}
		r.end += f.Creep
	}
	return r, nil
}

// touchingSpot puts a die of radius rad against die a, inside the tray.
func touchingSpot(rng *rand.Rand, tray image.Rectangle, a render.Die, rad float64) (float64, float64) {
	dist := (a.Size/2 + rad) * 0.82
	a0 := rng.Float64() * 2 * math.Pi
	for k := 0; k < 16; k++ {
		s, co := math.Sincos(a0 + float64(k)*math.Pi/8)
		x, y := a.X+dist*co, a.Y+dist*s
		if x-rad >= float64(tray.Min.X) && x+rad <= float64(tray.Max.X) && y-rad >= float64(tray.Min.Y) && y+rad <= float64(tray.Max.Y) {
			return x, y
		}
	}
	return a.X + dist, a.Y
}

// RestTolerance is how far (pixels, at any point of its outline) a die may
// be from where it stops and still count as at rest: sub-pixel remains of
// a slowing die are below what any camera sees, and a reader reads the
// same face.
const RestTolerance = 0.5

// nearRest reports whether the dice drawn are all down, on their final
// face and within RestTolerance of their rest.
func (r *roll) nearRest(ds []render.Die) bool {
	if len(ds) != len(r.final) {
		return false
	}
	for i, d := range ds {
		f := r.final[i]
		if d.Face != f.Face || d.Cocked != f.Cocked || displacement(d, f) > RestTolerance {
			return false
		}
	}
	return true
}

// displacement bounds how far any point of die a's outline is from die
// b's: the centre's move, the rim's move from turning, and the up face's
// move from a change of lean (it shifts by about 0.55·r·sin(tilt) toward
// the lean and is foreshortened by cos(tilt)).
func displacement(a, b render.Die) float64 {
	rad := math.Max(a.Size, b.Size) / 2
	lean := func(d render.Die) (float64, float64) {
		s, c := math.Sincos(d.TiltDir)
		k := 0.55 * rad * math.Sin(d.Tilt)
		return k * c, k * s
	}
	ax, ay := lean(a)
	bx, by := lean(b)
	return math.Hypot(a.X-b.X, a.Y-b.Y) +
		rad*math.Abs(a.Angle-b.Angle) +
		math.Hypot(ax-bx, ay-by) +
		rad*math.Abs(math.Cos(a.Tilt)-math.Cos(b.Tilt))
}

// at returns the dice visible in frame t of the tumble.
//
// A die slows at a constant rate (sliding and rolling friction on felt):
// its remaining travel, turn and lean shrink as (1−u)², so its speed falls
// linearly to zero and it stops within a frame or two of dropping below a
// pixel per frame, as real dice do, instead of crawling on at sub-pixel
// speed.
func (r *roll) at(t int) []render.Die {
	var out []render.Die
	for i, fin := range r.final {
		if t < r.enter[i] {
			continue // still inside the tower
		}
		d := fin
		dur := r.dur[i]
		tt := t - r.enter[i]
		if i == 0 && r.bounce > 0 {
			// Rest a moment at the half-way point, then move on.
			half := (dur - r.bounce) / 2
			switch {
			case tt >= half && tt < half+r.bounce:
				tt = half
			case tt >= half+r.bounce:
				tt -= r.bounce
			}
			dur -= r.bounce
		}
		// Where the tumble ends: the rest, or for a creeping die the
		// start of its creep.
		tx, ty := fin.X, fin.Y
		if i == 0 && r.creep > 0 {
			tx += 2 * r.cdir[0] * float64(r.creep)
			ty += 2 * r.cdir[1] * float64(r.creep)
		}
		u := math.Min(1, float64(tt)/float64(dur))
		e := (1 - u) * (1 - u)
		d.X = tx + (r.start[i][0]-tx)*e + r.wobble[i]*e*math.Sin(3*math.Pi*u)
		d.Y = ty + (r.start[i][1]-ty)*e
		d.Angle = fin.Angle + r.spin[i]*e
		if u < 1 {
			d.Cocked = false
			d.Tilt = fin.Tilt + 0.35*e
			d.TiltDir = fin.TiltDir + 5*e
			if u < 0.7 {
				// Tumbling: a different face every couple of frames.
				fs := render.Faces(fin.Kind)
				d.Face = fs[(r.faceAt[i]+tt/2*7919)%len(fs)]
			}
		}
		if i == 0 && r.creep > 0 && u >= 1 {
			// Creep to rest two pixels per frame once the others stopped.
			left := math.Max(0, math.Min(float64(r.end-t), float64(r.creep)))
			d.X = fin.X + 2*r.cdir[0]*left
			d.Y = fin.Y + 2*r.cdir[1]*left
		}
		out = append(out, d)
	}
	return out
}
