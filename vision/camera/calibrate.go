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

// Checks applied to the empty tray. Focus is the variance of the
// Laplacian around the tray's edge (where there is structure to be sharp):
// rendered trays measure ~150–400 in focus and < 30 blurred by 3 px.
const (
	MinFocus     = 60.0
	MinMean      = 25.0 // mean grey of the whole frame: below, the light is off
	MaxClipped   = 0.02 // share of tray pixels at 250+
	MinTrayShare = 0.2  // the tray must fill at least this share of the frame
	calFrames    = 5    // frames averaged into the background
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
	// Focus is the variance of the Laplacian around the tray's edge.
	Focus float64 `json:"focus"`
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
// tray, checks focus and light and, when src is a Locker and lock is set,
// fixes exposure and white balance first. It returns the calibration and
// the background picture; problems are listed in the calibration, a
// camera that fails is an error wrapping ErrHardware.
func Calibrate(ctx context.Context, src Source, lock bool, now time.Time) (*Calibration, *image.RGBA, error) {
	cal := &Calibration{Time: now.UTC()}
	if l, ok := src.(Locker); ok && lock {
		// Let auto exposure settle on the lit tray before fixing it.
		for i := 0; i < 10; i++ {
			if _, err := src.Capture(ctx); err != nil {
				return nil, nil, fmt.Errorf("camera: calibrate: %w", err)
			}
		}
		locked, err := l.Lock(ctx)
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
		for j, v := range f.Image.Pix {
			sum[j] += uint32(v)
		}
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
	cal.Focus = edgeFocus(gray, w, h, tray.Sub(b.Min))
	if frameMean >= MinMean && cal.Focus < MinFocus {
		cal.Problems = append(cal.Problems, fmt.Sprintf("out of focus: sharpness %.0f (want ≥ %.0f; turn the lens or lock the focus)", cal.Focus, MinFocus))
	}
}

// grey returns (R+2G+B)/4 per pixel.
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

// edgeFocus is the variance of the 4-neighbour Laplacian of a 2x
// downscaled grey picture (sensor noise averaged out) in a band around
// the tray's edge, where the felt meets the wall.
func edgeFocus(gray []uint8, w, h int, tray image.Rectangle) float64 {
	w2, h2 := w/2, h/2
	small := make([]float64, w2*h2)
	for y := 0; y < h2; y++ {
		for x := 0; x < w2; x++ {
			i := 2*y*w + 2*x
			small[y*w2+x] = (float64(gray[i]) + float64(gray[i+1]) + float64(gray[i+w]) + float64(gray[i+w+1])) / 4
		}
	}
	t := image.Rect(tray.Min.X/2, tray.Min.Y/2, tray.Max.X/2, tray.Max.Y/2)
	const band = 6
	outer, inner := t.Inset(-band), t.Inset(band)
	var sum, sum2 float64
	n := 0
	for y := 1; y < h2-1; y++ {
		for x := 1; x < w2-1; x++ {
			p := image.Pt(x, y)
			if !p.In(outer) || p.In(inner) {
				continue
			}
			i := y*w2 + x
			l := small[i-1] + small[i+1] + small[i-w2] + small[i+w2] - 4*small[i]
			sum += l
			sum2 += l * l
			n++
		}
	}
	if n == 0 {
		return 0
	}
	m := sum / float64(n)
	return sum2/float64(n) - m*m
}

// findTray grows the region of felt-like colour from the centre of a 4x
// downscaled picture and returns its bounding box in frame pixels.
func findTray(img *image.RGBA) (image.Rectangle, bool) {
	const s = 4
	b := img.Rect
	w, h := b.Dx()/s, b.Dy()/s
	if w < 8 || h < 8 {
		return image.Rectangle{}, false
	}
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
				c[i] /= s * s
			}
			cells[y*w+x] = c
		}
	}
	// The seed colour: the median-ish centre (mean of the middle 5x5).
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
			if !seen[j] && near(cells[j]) {
				seen[j] = true
				stack = append(stack, j)
			}
		}
	}
	// A region that reaches every border is not a tray inside walls but
	// the whole picture (lens cap, blank wall): still usable, so report it,
	// but a region that is mostly holes is not felt.
	area := (maxX - minX + 1) * (maxY - minY + 1)
	if count < area/2 {
		return image.Rectangle{}, false
	}
	r := image.Rect(minX*s, minY*s, (maxX+1)*s, (maxY+1)*s).Add(b.Min)
	return r, true
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
	if err := writeFile(filepath.Join(dir, BackgroundFile), func(f *os.File) error { return png.Encode(f, bg) }); err != nil {
		return err
	}
	ann := Annotate(c, bg)
	return writeFile(filepath.Join(dir, AnnotatedFile), func(f *os.File) error { return png.Encode(f, ann) })
}

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
		fmt.Sprintf("focus %.0f  mean %.0f  clipped %.1f%%", c.Focus, c.Mean, c.Clipped*100),
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
