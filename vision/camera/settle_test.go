package camera_test

import (
	"context"
	"errors"
	"image"
	"image/color"
	"os"
	"testing"
	"time"

	"github.com/towerd/towerd/clock"
	"github.com/towerd/towerd/rules"
	"github.com/towerd/towerd/sim/render"
	"github.com/towerd/towerd/sim/simcam"
	"github.com/towerd/towerd/vision/camera"
)

// newSim returns a simulated camera whose frames advance clk, and a settle
// config timed on clk that requires motion (the wait starts with the
// tumble, as in the roll loop).
func newSim(t *testing.T, seed uint64, w, h int, f simcam.Faults) (*simcam.Camera, camera.SettleConfig) {
	t.Helper()
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	cam := simcam.New(simcam.Config{Width: w, Height: h, Seed: seed, Clock: clk, Advance: clk.Advance, Faults: f})
	t.Cleanup(func() { cam.Close() })
	return cam, camera.SettleConfig{Clock: clk, Region: cam.Tray(), RequireMotion: true, Timeout: 5 * time.Second}
}

// maxRestFrames bounds how many frames at rest a wait may take to return:
// the still run must span DefaultMinStill (9 frames at 30 fps), and the
// last sub-pixel motion of a die (at rest for the simulation, within half
// a pixel, but still moving the picture by nearly the threshold) can push
// the drift from the run's first frame over the threshold a few frames
// in, starting the run again: the sweep saw up to 20.
const maxRestFrames = 21

func settle(t *testing.T, cam *simcam.Camera, cfg camera.SettleConfig, kinds []rules.Die) camera.Settled {
	t.Helper()
	if err := cam.Roll(kinds); err != nil {
		t.Fatal(err)
	}
	got, err := camera.WaitSettled(context.Background(), cam, cfg)
	if err != nil {
		t.Fatalf("%v: settle: %v (diffs %.1f)", kinds, err, got.Diffs)
	}
	if !cam.AtRest() {
		t.Fatalf("%v: settled after %d frames while dice were still moving (diffs %.1f)", kinds, got.Captured, got.Diffs)
	}
	if n := cam.RestFrames(); n > maxRestFrames {
		t.Errorf("%v: settled %d frames after the dice came to rest, want ≤ %d (diffs %.1f)", kinds, n, maxRestFrames, got.Diffs)
	}
	if !got.MotionSeen {
		t.Fatalf("%v: no motion seen during a tumble", kinds)
	}
	if len(got.Frames) != camera.DefaultStillFrames {
		t.Fatalf("%v: %d frames returned, want %d", kinds, len(got.Frames), camera.DefaultStillFrames)
	}
	// The frames returned are the still ones, in a row.
	for i := 1; i < len(got.Frames); i++ {
		if got.Frames[i].Seq != got.Frames[i-1].Seq+1 {
			t.Fatalf("%v: frames not consecutive: %d, %d", kinds, got.Frames[i-1].Seq, got.Frames[i].Seq)
		}
	}
	return got
}

// TestSettleEveryKind rolls each kind alone and checks settle never
// returns while anything moves.
func TestSettleEveryKind(t *testing.T) {
	cam, cfg := newSim(t, 1, 320, 240, simcam.Faults{})
	for _, k := range rules.Kinds {
		settle(t, cam, cfg, []rules.Die{k})
		tr := cam.Truth()
		if len(tr) != 1 || tr[0].Kind != k || !render.ValidFace(k, tr[0].Face) {
			t.Fatalf("%v: truth %+v", k, tr)
		}
	}
}

func TestSettleMixed(t *testing.T) {
	cam, cfg := newSim(t, 2, 320, 240, simcam.Faults{})
	for _, kinds := range [][]rules.Die{
		{rules.D6, rules.D6, rules.D6},
		{rules.D4, rules.D6, rules.D8, rules.D10, rules.D12, rules.D20, rules.D100},
	} {
		settle(t, cam, cfg, kinds)
		if got := cam.Faces(); len(got) != len(kinds) {
			t.Fatalf("faces %v for %v", got, kinds)
		}
	}
}

// TestSettleSweep rolls many seeds, sets and faults (TOWERD_LONG=1; a few
// minutes): settle never returns while a die moves, and returns soon after
// they stop.
func TestSettleSweep(t *testing.T) {
	if os.Getenv("TOWERD_LONG") == "" {
		t.Skip("set TOWERD_LONG=1 for the sweep over seeds, sets and faults")
	}
	sets := [][]rules.Die{{rules.D4}, {rules.D6}, {rules.D8}, {rules.D10}, {rules.D12}, {rules.D20}, {rules.D100},
		{rules.D6, rules.D20}, {rules.D10, rules.D100}, {rules.D4, rules.D6, rules.D8, rules.D10, rules.D12, rules.D20, rules.D100}}
	hist := map[int]int{}
	for seed := uint64(1); seed <= 8; seed++ {
		for _, f := range []simcam.Faults{{}, {Creep: 8}, {Bounce: 6}} {
			cam, cfg := newSim(t, seed, 320, 240, f)
			for _, kinds := range sets {
				settle(t, cam, cfg, kinds)
				hist[cam.RestFrames()]++
			}
		}
	}
	t.Logf("frames at rest before settle returned: %v", hist)
}

// TestSettleFacesFromSource: faces come from the source function, mapped
// to physical faces.
func TestSettleFacesFromSource(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	next := 10
	cam := simcam.New(simcam.Config{Width: 320, Height: 240, Seed: 3, Clock: clk, Advance: clk.Advance,
		Face: func(sides int) int { return min(next, sides) }})
	if err := cam.Roll([]rules.Die{rules.D10, rules.D100, rules.D6}); err != nil {
		t.Fatal(err)
	}
	if got := cam.Faces(); got[0] != 0 || got[1] != 0 || got[2] != 6 {
		t.Fatalf("faces %v, want [0 0 6] (d10 10→0, d100 10→00)", got)
	}
}

// TestSettleCreepAndBounce: a die creeping on after the others stopped,
// and a die that rests a moment on an edge mid-tumble, are waited for.
func TestSettleCreepAndBounce(t *testing.T) {
	for _, f := range []simcam.Faults{{Creep: 8}, {Bounce: 6}} {
		cam, cfg := newSim(t, 4, 320, 240, f)
		settle(t, cam, cfg, []rules.Die{rules.D6, rules.D20})
	}
}

func TestSettleFrozenCamera(t *testing.T) {
	cam, cfg := newSim(t, 5, 320, 240, simcam.Faults{Frozen: true})
	cfg.MotionWait = 2 * time.Second
	if err := cam.Roll([]rules.Die{rules.D6}); err != nil {
		t.Fatal(err)
	}
	got, err := camera.WaitSettled(context.Background(), cam, cfg)
	if !errors.Is(err, camera.ErrHardware) {
		t.Fatalf("frozen camera: err %v, want ErrHardware", err)
	}
	if got.MotionSeen || got.Captured < 50 {
		t.Fatalf("frozen camera: %+v", got)
	}
	// Without RequireMotion a frozen picture is simply still.
	cfg.RequireMotion = false
	if _, err := camera.WaitSettled(context.Background(), cam, cfg); err != nil {
		t.Fatalf("frozen camera without RequireMotion: %v", err)
	}
}

func TestSettleCameraFailsAndRecovers(t *testing.T) {
	cam, cfg := newSim(t, 6, 320, 240, simcam.Faults{FailAfter: 3, FailFor: 2})
	if err := cam.Roll([]rules.Die{rules.D8}); err != nil {
		t.Fatal(err)
	}
	_, err := camera.WaitSettled(context.Background(), cam, cfg)
	if !errors.Is(err, camera.ErrHardware) {
		t.Fatalf("unplugged: err %v, want ErrHardware", err)
	}
	if _, err := camera.WaitSettled(context.Background(), cam, cfg); !errors.Is(err, camera.ErrHardware) {
		t.Fatalf("second capture while unplugged: err %v", err)
	}
	// Back: the next roll settles.
	settle(t, cam, cfg, []rules.Die{rules.D8})

	cam.SetFaults(simcam.Faults{Empty: true})
	if _, err := cam.Capture(context.Background()); !errors.Is(err, camera.ErrHardware) {
		t.Fatalf("empty frame: err %v", err)
	}
}

func TestSettleTimeout(t *testing.T) {
	// A die that keeps creeping (3 s) longer than the limit.
	cam, cfg := newSim(t, 7, 320, 240, simcam.Faults{Creep: 90})
	cfg.Timeout = 2 * time.Second
	if err := cam.Roll([]rules.Die{rules.D6}); err != nil {
		t.Fatal(err)
	}
	got, err := camera.WaitSettled(context.Background(), cam, cfg)
	if !errors.Is(err, camera.ErrTimeout) {
		t.Fatalf("err %v, want ErrTimeout", err)
	}
	if got.Captured < 60 || got.Captured > 61 || len(got.Frames) == 0 {
		t.Fatalf("timeout after %d frames (want 60 at 30 fps), %d frames kept", got.Captured, len(got.Frames))
	}
}

// blocking never delivers a frame until its context ends.
type blocking struct{}

func (blocking) Capture(ctx context.Context) (camera.Frame, error) {
	<-ctx.Done()
	return camera.Frame{}, errors.Join(camera.ErrHardware, ctx.Err())
}
func (blocking) Close() error { return nil }

func TestSettleBlockedCaptureTimesOut(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	done := make(chan error, 1)
	go func() {
		_, err := camera.WaitSettled(context.Background(), blocking{}, camera.SettleConfig{Clock: clk, Timeout: time.Second})
		done <- err
	}()
	clk.BlockUntil(1)
	clk.Advance(time.Second)
	if err := <-done; !errors.Is(err, camera.ErrTimeout) {
		t.Fatalf("err %v, want ErrTimeout", err)
	}
}

func TestSettleCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := camera.WaitSettled(ctx, blocking{}, camera.SettleConfig{Clock: clock.NewFake(time.Unix(0, 0))})
	if !errors.Is(err, context.Canceled) || errors.Is(err, camera.ErrTimeout) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
}

// TestDetectorNoiseAndMotion measures what the defaults rest on, with a
// die of lower contrast than the simulation ever picks (30 grey levels
// over the felt): two frames of the still tray differ by sensor noise
// only, well under the threshold; the die moved by two pixels differs by
// more, and so does its drift from where it started when it creeps there
// half a pixel a frame.
func TestDetectorNoiseAndMotion(t *testing.T) {
	scene := func(x float64, seed uint64) *image.RGBA {
		img, _ := render.MustRender(render.Scene{Width: 320, Height: 240, Noise: 2.5, Seed: seed,
			Felt: color.NRGBA{R: 70, G: 70, B: 74, A: 255},
			Dice: []render.Die{{Kind: rules.D6, Face: 5, Pips: true, X: x, Y: 120, Angle: 0.3,
				Body: color.NRGBA{R: 100, G: 100, B: 104, A: 255}, Ink: color.NRGBA{R: 60, G: 60, B: 60, A: 255}}}})
		return img
	}
	d := camera.NewDetector(camera.SettleConfig{})
	d.Add(scene(160, 1))
	d.Mark()
	if noise, _ := d.Add(scene(160, 2)); noise > camera.DefaultDiffThreshold/2 {
		t.Errorf("still tray: diff %.2f, want ≤ %.1f", noise, camera.DefaultDiffThreshold/2)
	}
	d.Reset()
	d.Add(scene(160, 1))
	if moved, _ := d.Add(scene(162, 2)); moved <= camera.DefaultDiffThreshold {
		t.Errorf("die moved 2 px: diff %.2f, want > %.1f", moved, camera.DefaultDiffThreshold)
	}
	d.Reset()
	d.Add(scene(160, 1))
	d.Mark()
	for i := 1; i <= 4; i++ {
		diff, _ := d.Add(scene(160+0.5*float64(i), uint64(i+1)))
		drift, ok := d.Drift()
		if !ok {
			t.Fatal("no drift after Mark")
		}
		t.Logf("crept %.1f px: diff %.2f, drift %.2f", 0.5*float64(i), diff, drift)
		if i == 4 && drift <= camera.DefaultDiffThreshold {
			t.Errorf("crept 2 px: drift %.2f, want > %.1f", drift, camera.DefaultDiffThreshold)
		}
	}
}

func TestDetectorSizeChange(t *testing.T) {
	d := camera.NewDetector(camera.SettleConfig{})
	a := image.NewRGBA(image.Rect(0, 0, 64, 48))
	if _, ok := d.Add(a); ok {
		t.Fatal("first frame compared")
	}
	if diff, ok := d.Add(a); !ok || diff != 0 {
		t.Fatalf("same frame: %v %v", diff, ok)
	}
	b := image.NewRGBA(image.Rect(0, 0, 32, 24))
	for i := range b.Pix {
		b.Pix[i] = 200
	}
	if _, ok := d.Add(b); ok {
		t.Fatal("frame of another size compared")
	}
	b2 := image.NewRGBA(b.Rect)
	if diff, ok := d.Add(b2); !ok || diff < 150 {
		t.Fatalf("white to black: diff %v ok %v", diff, ok)
	}
}
