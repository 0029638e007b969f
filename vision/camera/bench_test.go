package camera_test

import (
	"testing"

	"github.com/towerd/towerd/internal/cputime"
	"github.com/towerd/towerd/rules"
	"github.com/towerd/towerd/sim/render"
	"github.com/towerd/towerd/vision/camera"
)

// BenchmarkDetector measures settle detection per 640x480 frame, as
// WaitSettled does it: the difference from the previous frame and the
// drift from the start of the still run (target: ≥ 200 frames per second
// on one core, i.e. ≤ 5 ms/op; run with -cpu 1).
func BenchmarkDetector(b *testing.B) {
	s := render.RandomScene(1, []rules.Die{rules.D6, rules.D20, rules.D8}, render.Options{})
	a, _ := render.MustRender(s)
	s.Seed++
	c, _ := render.MustRender(s)
	d := camera.NewDetector(camera.SettleConfig{Region: s.Tray})
	d.Add(a)
	d.Mark()
	frames := [2]*camera.Frame{{Image: a}, {Image: c}}
	i := 0
	t0 := cputime.Now()
	for b.Loop() {
		d.Add(frames[i&1].Image)
		d.Drift()
		i++
	}
	cpu := cputime.Now() - t0
	cputime.Report(b, t0)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "frames/s")
	// What one core does when it is not shared: the figure for the target.
	b.ReportMetric(float64(b.N)/cpu.Seconds(), "cpu-frames/s")
}
