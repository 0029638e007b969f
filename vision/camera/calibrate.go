package camera

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"time"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// Files written into the state directory by a calibration.
const (
	CalibrationFile = "calibration.json"
	BackgroundFile  = "background.png"
	AnnotatedFile   = "calibration.png"
)

// Checks applied to the empty tray.
//
// Focus is judged by how many pixels the tray's edge (where the felt meets
// the wall: the one sharp structure an empty tray has) takes to rise,
// measured on the picture scaled to about 640 pixels wide so the figure
// does not depend on the camera's resolution. It does not depend on the
// edge's contrast either (a dark tray in a dark tower is as sharp as a
// green one in white walls), unlike the variance of the Laplacian, which
// ranged over 150–4900 on sharp rendered trays and overlapped blurred
// ones. Sharp edges rise in 1–2.5 px (a Gaussian blur of sd σ measures
// about 2.5σ); a numeral's strokes are 3–4 px wide at 640x480, so an edge
// wider than MaxEdgeWidth blurs them into the face.
const (
	MaxEdgeWidth = 3.5
	// MinEdgeContrast (grey levels) is the least rise of an edge
	// profile that is measured: fainter ones are mostly noise.
	MinEdgeContrast = 12.0
	MinMean         = 25.0 // mean grey of the whole frame: below, the light is off
	MaxClipped      = 0.02 // share of tray pixels at 250+
	MinTrayShare    = 0.2  // the tray must fill at least this share of the frame
	calFrames       = 5    // frames averaged into the background
)

// Calibration is what the empty tray looked like.
type Calibration struct {
	Time   time.Time `json:"time"`
	Width  int       `json:"width"`
	Height int       `json:"height"`
	// Tray is the felt area in frame pixels.
	Tray image.Rectangle `json:"-"`
	// TrayBox is Tray as [x, y, w, h] for the JSON file.
	TrayBox [4]int `json:"tray"`
	// Rotate is the turn (camera.rotate) the frames were taken with: a
	// calibration taken with another lies the wrong way round.
	Rotate int `json:"rotate,omitempty"`
	// EdgeWidth is how many pixels (at ~640 px on the frame's longer
	// side) the tray's edge
	// takes to rise: ~1 in focus, more the blurrier; 0 when the edge was
	// too faint to measure.
	EdgeWidth float64 `json:"edge_width"`
	// Mean is the mean grey level of the tray (0–255); Clipped the share
	// of tray pixels at 250 or more.
	Mean    float64 `json:"mean"`
	Clipped float64 `json:"clipped"`
	// Locked is what was fixed of exposure and white balance (nil when the
	// camera does not allow it).
	Locked *Locked `json:"locked,omitempty"`
	// Problems found; empty means the calibration is good.
	Problems []string `json:"problems,omitempty"`
}

// OK reports whether no problem was found.
func (c *Calibration) OK() bool { return len(c.Problems) == 0 }

// Calibrate captures the empty tray (several frames averaged), finds the
// tray, checks focus and light and, when src is a Locker, first fixes
// what lock asks (exposure, white balance). It returns the calibration and
// the background picture; problems are listed in the calibration, a
// camera that fails is an error wrapping ErrHardware.
func Calibrate(ctx context.Context, src Source, lock Locks, now time.Time) (*Calibration, *image.RGBA, error) {
	cal := &Calibration{Time: now.UTC()}
	if l, ok := src.(Locker); ok && lock.Any() {
		// Let auto exposure settle on the lit tray before fixing it.
		for i := 0; i < 10; i++ {
			if _, err := src.Capture(ctx); err != nil {
				return nil, nil, fmt.Errorf("camera: calibrate: %w", err)
			}
		}
		locked, err := l.Lock(ctx, lock)
		if err != nil {
			return nil, nil, fmt.Errorf("camera: calibrate: lock exposure: %w", err)
		}
		cal.Locked = &locked
	}
	var sum []uint32
	var bounds image.Rectangle
	for i := 0; i < calFrames; i++ {
		f, err := src.Capture(ctx)
		if err != nil {
			return nil, nil, fmt.Errorf("camera: calibrate: %w", err)
		}
		if i == 0 {
			bounds = f.Image.Rect
			sum = make([]uint32, len(f.Image.Pix))
		} else if f.Image.Rect != bounds {
			return nil, nil, fmt.Errorf("camera: calibrate: frame size changed from %v to %v: %w", bounds, f.Image.Rect, ErrHardware)
		}
		accumulate(sum, f.Image.Pix)
	}
	bg := image.NewRGBA(bounds)
	for j, v := range sum {
		bg.Pix[j] = uint8((v + calFrames/2) / calFrames)
	}
	analyse(cal, bg)
	return cal, bg, nil
}

// Analyse runs the checks of Calibrate on a background picture already
// taken.
func Analyse(bg *image.RGBA) *Calibration {
	cal := &Calibration{}
	analyse(cal, bg)
	return cal
}

// analyse fills the tray, focus and light figures of cal from bg.
func analyse(cal *Calibration, bg *image.RGBA) {
	b := bg.Rect
	cal.Width, cal.Height = b.Dx(), b.Dy()
	gray := grey(bg)
	w, h := b.Dx(), b.Dy()
	frameMean := 0.0
	for _, v := range gray {
		frameMean += float64(v)
	}
	frameMean /= float64(len(gray))
	if frameMean < MinMean {
		cal.Problems = append(cal.Problems, fmt.Sprintf("too dark: mean grey %.0f of 255 (is the tray light on?)", frameMean))
	}
	tray, ok := findTray(bg)
	if !ok {
		cal.Problems = append(cal.Problems, "tray not found: no uniform area around the centre of the picture (is the camera over the tray, and the tray empty?)")
		tray = b
	} else if share := float64(tray.Dx()*tray.Dy()) / float64(w*h); share < MinTrayShare {
		cal.Problems = append(cal.Problems, fmt.Sprintf("tray too small: %.0f%% of the picture (want ≥ %.0f%%; is something lying in it?)", share*100, MinTrayShare*100))
	}
	cal.Tray = tray
	cal.TrayBox = [4]int{tray.Min.X, tray.Min.Y, tray.Dx(), tray.Dy()}
	var sum float64
	clipped := 0
	n := 0
	for y := tray.Min.Y; y < tray.Max.Y; y++ {
		for x := tray.Min.X; x < tray.Max.X; x++ {
			v := gray[(y-b.Min.Y)*w+(x-b.Min.X)]
			sum += float64(v)
			if v >= 250 {
				clipped++
			}
			n++
		}
	}
	if n > 0 {
		cal.Mean = sum / float64(n)
		cal.Clipped = float64(clipped) / float64(n)
	}
	if cal.Clipped > MaxClipped {
		cal.Problems = append(cal.Problems, fmt.Sprintf("too bright: %.1f%% of the tray is clipped white (lower the exposure or the light)", cal.Clipped*100))
	}
	if frameMean >= MinMean {
		cal.EdgeWidth = edgeWidth(gray, w, h, tray.Sub(b.Min))
		switch {
		case cal.EdgeWidth == 0:
			cal.Problems = append(cal.Problems, fmt.Sprintf("focus not judged: no edge of the tray rises by %.0f grey levels (badly out of focus, or a tray the colour of its walls)", MinEdgeContrast))
		case cal.EdgeWidth > MaxEdgeWidth:
			cal.Problems = append(cal.Problems, fmt.Sprintf("out of focus: the tray's edge is %.1f px wide (want ≤ %.1f; turn the lens or lock the focus)", cal.EdgeWidth, MaxEdgeWidth))
		}
	}
}

// grey returns (R+2G+B)/4 per pixel.
//
// norace: per-pixel kernel over a picture the caller owns (see Detector).
//
//go:norace
func grey(img *image.RGBA) []uint8 {
	b := img.Rect
	out := make([]uint8, b.Dx()*b.Dy())
	for y := 0; y < b.Dy(); y++ {
		row := img.Pix[y*img.Stride:]
		for x := 0; x < b.Dx(); x++ {
			i := 4 * x
			out[y*b.Dx()+x] = uint8((uint32(row[i]) + 2*uint32(row[i+1]) + uint32(row[i+2]) + 2) / 4)
		}
	}
	return out
}

// accumulate adds pix into sum.
//
//go:norace
func accumulate(sum []uint32, pix []uint8) {
	sum = sum[:len(pix)]
	for j, v := range pix {
		sum[j] += uint32(v)
	}
}

// Edge profiles: each is the mean of edgeGroup rows (or columns) across
// the tray's side (noise averages out), edgeReach px either side of where
// the tray was found.
const (
	edgeGroup = 8
	edgeReach = 12
)

// edgeWidth is the median over the tray's sides of how many pixels the
// edge takes to rise (see riseWidth), on the grey picture scaled down to
// about 640 px on its longer side (a camera turned on its side gives
// upright frames). 0 means no profile rose by MinEdgeContrast.
func edgeWidth(gray []uint8, w, h int, tray image.Rectangle) float64 {
	n := max(1, (max(w, h)+320)/640)
	if n > 1 {
		gray, w, h = shrink(gray, w, h, n)
		tray = image.Rect(tray.Min.X/n, tray.Min.Y/n, tray.Max.X/n, tray.Max.Y/n)
	}
	at := func(x, y int) float64 { return float64(gray[y*w+x]) }
	var widths []float64
	prof := make([]float64, 2*edgeReach+1)
	// measure averages edgeGroup lines of the profile across one side:
	// pixel k of the profile is at(line(j, k)) for the j-th line.
	measure := func(line func(j, k int) (int, int), lines int) {
		for j0 := 0; j0+edgeGroup <= lines; j0 += edgeGroup {
			clear(prof)
			for j := j0; j < j0+edgeGroup; j++ {
				for k := range prof {
					prof[k] += at(line(j, k))
				}
			}
			for k := range prof {
				prof[k] /= edgeGroup
			}
			if v, ok := riseWidth(prof); ok {
				widths = append(widths, v)
			}
		}
	}
	// The middle 80% of each side, clear of the corners; profiles that
	// would leave the picture are skipped.
	side := func(lo, hi int) (int, int) { d := (hi - lo) / 10; return lo + d, hi - d }
	y0, y1 := side(tray.Min.Y, tray.Max.Y)
	x0, x1 := side(tray.Min.X, tray.Max.X)
	for _, c := range []int{tray.Min.X, tray.Max.X - 1} {
		if c-edgeReach >= 0 && c+edgeReach < w && y1 > y0 {
			measure(func(j, k int) (int, int) { return c - edgeReach + k, y0 + j }, y1-y0)
		}
	}
	for _, r := range []int{tray.Min.Y, tray.Max.Y - 1} {
		if r-edgeReach >= 0 && r+edgeReach < h && x1 > x0 {
			measure(func(j, k int) (int, int) { return x0 + j, r - edgeReach + k }, x1-x0)
		}
	}
	if len(widths) == 0 {
		return 0
	}
	slices.Sort(widths)
	return widths[len(widths)/2]
}

// riseWidth finds the steepest one-pixel step of p and the whole rise (or
// fall) it is part of: the steps beside it going the same way at a tenth
// of its steepness or more. It returns the rise divided by the steepest
// step: 1 for a sharp edge, about the blur's width for a blurred one. ok
// is false when the rise is below MinEdgeContrast.
func riseWidth(p []float64) (float64, bool) {
	at, peak := 0, 0.0
	for x := 0; x+1 < len(p); x++ {
		if d := math.Abs(p[x+1] - p[x]); d > peak {
			at, peak = x, d
		}
	}
	sign := 1.0
	if p[at+1] < p[at] {
		sign = -1
	}
	rise := peak
	for x := at - 1; x >= 0 && sign*(p[x+1]-p[x]) > peak/10; x-- {
		rise += sign * (p[x+1] - p[x])
	}
	for x := at + 1; x+1 < len(p) && sign*(p[x+1]-p[x]) > peak/10; x++ {
		rise += sign * (p[x+1] - p[x])
	}
	if rise < MinEdgeContrast {
		return 0, false
	}
	return rise / peak, true
}

// shrink averages n×n pixels.
//
//go:norace
func shrink(gray []uint8, w, h, n int) ([]uint8, int, int) {
	w2, h2 := w/n, h/n
	out := make([]uint8, w2*h2)
	for y := 0; y < h2; y++ {
		for x := 0; x < w2; x++ {
			s := 0
			for dy := 0; dy < n; dy++ {
				row := gray[(y*n+dy)*w+x*n:]
				for dx := 0; dx < n; dx++ {
					s += int(row[dx])
				}
			}
			out[y*w2+x] = uint8((s + n*n/2) / (n * n))
		}
	}
	return out, w2, h2
}

// findTray grows the region of felt from the centre of a 4x downscaled
// picture and returns its bounding box in frame pixels.
//
// A cell joins the region when it differs little from its neighbour
// already in it (the felt's brightness changes smoothly with the light;
// the wall starts with a step) and, as a guard against leaking through a
// gap in a faint edge, not too much from the centre's colour. A felt close
// to the wall's colour (red felt in dark wood) is still told apart by the
// step.
func findTray(img *image.RGBA) (image.Rectangle, bool) {
	const s = 4
	b := img.Rect
	w, h := b.Dx()/s, b.Dy()/s
	if w < 8 || h < 8 {
		return image.Rectangle{}, false
	}
	cells := cellMeans(img, s, w, h)
	// The seed colour: the mean of the middle 5x5 cells.
	var seed [3]float64
	cnt := 0
	for y := h/2 - 2; y <= h/2+2; y++ {
		for x := w/2 - 2; x <= w/2+2; x++ {
			for i := range seed {
				seed[i] += cells[y*w+x][i]
			}
			cnt++
		}
	}
	for i := range seed {
		seed[i] /= float64(cnt)
	}
	lum := (seed[0] + 2*seed[1] + seed[2]) / 4
	// Light gradients change the felt's brightness by tens of percent; a
	// wall is a different colour or far brighter.
	tol := 22 + 0.45*lum
	near := func(c [3]float64) bool {
		d := math.Sqrt((c[0]-seed[0])*(c[0]-seed[0]) + (c[1]-seed[1])*(c[1]-seed[1]) + (c[2]-seed[2])*(c[2]-seed[2]))
		return d <= tol
	}
	stepTol := stepTolerance(cells, w, h)
	step := func(a, b [3]float64) bool {
		return math.Abs(a[0]-b[0]) <= stepTol && math.Abs(a[1]-b[1]) <= stepTol && math.Abs(a[2]-b[2]) <= stepTol
	}
	seen := make([]bool, w*h)
	stack := []int{(h/2)*w + w/2}
	seen[stack[0]] = true
	minX, minY, maxX, maxY := w, h, -1, -1
	count := 0
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		x, y := i%w, i/w
		count++
		minX, minY = min(minX, x), min(minY, y)
		maxX, maxY = max(maxX, x), max(maxY, y)
		for _, d := range [4][2]int{{1, 0}, {-1, 0}, {0, 1}, {0, -1}} {
			nx, ny := x+d[0], y+d[1]
			if nx < 0 || ny < 0 || nx >= w || ny >= h {
				continue
			}
			j := ny*w + nx
			if !seen[j] && step(cells[i], cells[j]) && near(cells[j]) {
				seen[j] = true
				stack = append(stack, j)
			}
		}
	}
	// A region that is mostly holes is not felt.
	area := (maxX - minX + 1) * (maxY - minY + 1)
	if count < area/2 {
		return image.Rectangle{}, false
	}
	r := image.Rect(minX*s, minY*s, (maxX+1)*s, (maxY+1)*s).Add(b.Min)
	return r, true
}

// stepTolerance is how much (per colour channel) neighbouring felt cells
// may differ: at least 6 grey levels, more for a felt whose texture or a
// camera whose noise makes the middle of the tray differ more than that
// (four times the 90th percentile of its steps).
func stepTolerance(cells [][3]float64, w, h int) float64 {
	var steps []float64
	for y := h * 3 / 8; y < h*5/8; y++ {
		for x := w * 3 / 8; x < w*5/8; x++ {
			a, b := cells[y*w+x], cells[y*w+x+1]
			steps = append(steps, max(math.Abs(a[0]-b[0]), math.Abs(a[1]-b[1]), math.Abs(a[2]-b[2])))
		}
	}
	if len(steps) == 0 {
		return 6
	}
	slices.Sort(steps)
	return max(6, 4*steps[len(steps)*9/10])
}

// cellMeans averages s×s pixels into w×h cells of mean RGB.
//
//go:norace
func cellMeans(img *image.RGBA, s, w, h int) [][3]float64 {
	b := img.Rect
	cells := make([][3]float64, w*h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			var c [3]float64
			for k := 0; k < s; k++ {
				row := img.Pix[img.PixOffset(b.Min.X+x*s, b.Min.Y+y*s+k):]
				for j := 0; j < s; j++ {
					c[0] += float64(row[4*j])
					c[1] += float64(row[4*j+1])
					c[2] += float64(row[4*j+2])
				}
			}
			for i := range c {
				c[i] /= float64(s * s)
			}
			cells[y*w+x] = c
		}
	}
	return cells
}

// Save writes the calibration, the background and an annotated picture
// into dir.
func (c *Calibration) Save(dir string, bg *image.RGBA) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("camera: save calibration: %w", err)
	}
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("camera: save calibration: %w", err)
	}
	if err := writeFile(filepath.Join(dir, CalibrationFile), func(f *os.File) error {
		_, err := f.Write(append(data, '\n'))
		return err
	}); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, BackgroundFile), func(f *os.File) error { return fastPNG.Encode(f, bg) }); err != nil {
		return err
	}
	ann := Annotate(c, bg)
	return writeFile(filepath.Join(dir, AnnotatedFile), func(f *os.File) error { return fastPNG.Encode(f, ann) })
}

// fastPNG trades a larger file for speed: a noisy camera frame hardly
// compresses, and full compression of one took seconds on a Pi-class core.
var fastPNG = png.Encoder{CompressionLevel: png.BestSpeed}

// writeFile writes atomically: a temporary file renamed into place.
func writeFile(name string, write func(*os.File) error) error {
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*")
	if err != nil {
		return fmt.Errorf("camera: write %s: %w", name, err)
	}
	defer os.Remove(f.Name())
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("camera: write %s: %w", name, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("camera: write %s: %w", name, err)
	}
	if err := os.Rename(f.Name(), name); err != nil {
		return fmt.Errorf("camera: write %s: %w", name, err)
	}
	return nil
}

// LoadCalibration reads what Save wrote: the calibration and background.
func LoadCalibration(dir string) (*Calibration, image.Image, error) {
	data, err := os.ReadFile(filepath.Join(dir, CalibrationFile))
	if err != nil {
		return nil, nil, fmt.Errorf("camera: load calibration: %w (run towerd calibrate)", err)
	}
	c, err := ParseCalibration(data)
	if err != nil {
		return nil, nil, fmt.Errorf("camera: load calibration %s: %w", filepath.Join(dir, CalibrationFile), err)
	}
	f, err := os.Open(filepath.Join(dir, BackgroundFile))
	if err != nil {
		return nil, nil, fmt.Errorf("camera: load background: %w", err)
	}
	defer f.Close()
	bg, err := png.Decode(f)
	if err != nil {
		return nil, nil, fmt.Errorf("camera: load background %s: %w", f.Name(), err)
	}
	if bg.Bounds().Dx() != c.Width || bg.Bounds().Dy() != c.Height {
		return nil, nil, errors.New("camera: load calibration: background size does not match the calibration; run towerd calibrate again")
	}
	return c, bg, nil
}

// ParseCalibration decodes calibration.json and checks its tray.
func ParseCalibration(data []byte) (*Calibration, error) {
	var c Calibration
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, err
	}
	t := c.TrayBox
	if c.Width <= 0 || c.Height <= 0 || c.Width > 1<<14 || c.Height > 1<<14 {
		return nil, fmt.Errorf("field \"width\"/\"height\": frame size %dx%d out of range", c.Width, c.Height)
	}
	if t[2] <= 0 || t[3] <= 0 || t[0] < 0 || t[1] < 0 || t[0]+t[2] > c.Width || t[1]+t[3] > c.Height {
		return nil, fmt.Errorf("field \"tray\": %v is not inside the %dx%d frame", t, c.Width, c.Height)
	}
	c.Tray = image.Rect(t[0], t[1], t[0]+t[2], t[1]+t[3])
	return &c, nil
}

// Annotate draws the tray found and the figures onto a copy of bg.
func Annotate(c *Calibration, bg *image.RGBA) *image.RGBA {
	out := image.NewRGBA(bg.Rect)
	draw.Draw(out, out.Rect, bg, bg.Rect.Min, draw.Src)
	col := color.RGBA{R: 40, G: 230, B: 40, A: 255}
	if !c.OK() {
		col = color.RGBA{R: 240, G: 40, B: 40, A: 255}
	}
	t := c.Tray
	for k := 0; k < 2; k++ {
		r := t.Inset(-k)
		for x := r.Min.X; x < r.Max.X; x++ {
			out.Set(x, r.Min.Y, col)
			out.Set(x, r.Max.Y-1, col)
		}
		for y := r.Min.Y; y < r.Max.Y; y++ {
			out.Set(r.Min.X, y, col)
			out.Set(r.Max.X-1, y, col)
		}
	}
	lines := []string{
		fmt.Sprintf("tray %dx%d at %d,%d", t.Dx(), t.Dy(), t.Min.X, t.Min.Y),
		fmt.Sprintf("edge %.1f px  mean %.0f  clipped %.1f%%", c.EdgeWidth, c.Mean, c.Clipped*100),
	}
	lines = append(lines, c.Problems...)
	d := font.Drawer{Dst: out, Src: image.NewUniform(col), Face: basicfont.Face7x13}
	for i, l := range lines {
		y := out.Rect.Min.Y + 16 + 15*i
		// A dark box behind the text keeps it readable on any tray.
		w := d.MeasureString(l).Ceil()
		draw.Draw(out, image.Rect(out.Rect.Min.X+4, y-12, out.Rect.Min.X+10+w, y+3), image.NewUniform(color.RGBA{A: 200}), image.Point{}, draw.Over)
		d.Dot = fixed.P(out.Rect.Min.X+7, y)
		d.DrawString(l)
	}
	return out
}
