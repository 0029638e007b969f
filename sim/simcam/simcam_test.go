package simcam_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/towerd/towerd/clock"
	"github.com/towerd/towerd/rules"
	"github.com/towerd/towerd/sim/simcam"
	"github.com/towerd/towerd/vision/camera"
)

func capture(t *testing.T, cam *simcam.Camera) camera.Frame {
	t.Helper()
	f, err := cam.Capture(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestTumbleThenRest: a roll moves, then rests for good; frames are
// stamped one period apart on the camera's clock and numbered.
func TestTumbleThenRest(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	cam := simcam.New(simcam.Config{Width: 320, Height: 240, Seed: 1, Clock: clk, Advance: clk.Advance})
	if err := cam.Roll([]rules.Die{rules.D6, rules.D20}); err != nil {
		t.Fatal(err)
	}
	if cam.AtRest() {
		t.Fatal("at rest before the first frame of a roll")
	}
	moving, rest := 0, 0
	var prev camera.Frame
	for i := 0; i < 60; i++ {
		f := capture(t, cam)
		if i > 0 && (f.Seq != prev.Seq+1 || f.Time.Sub(prev.Time) != time.Second/30) {
			t.Fatalf("frame %d: seq %d at %v after %d at %v", i, f.Seq, f.Time, prev.Seq, prev.Time)
		}
		prev = f
		switch {
		case cam.AtRest():
			rest++
			if cam.RestFrames() != rest {
				t.Fatalf("frame %d: RestFrames %d, want %d", i, cam.RestFrames(), rest)
			}
		case rest > 0:
			t.Fatalf("frame %d: moving again after %d frames at rest", i, rest)
		default:
			moving++
		}
	}
	if moving < 10 || rest < 10 {
		t.Fatalf("%d frames moving, %d at rest", moving, rest)
	}
	tr := cam.Truth()
	if len(tr) != 2 || tr[0].Kind != rules.D6 || tr[1].Kind != rules.D20 || tr[0].Touching || tr[0].OffTray || tr[0].Cocked {
		t.Fatalf("truth %+v", tr)
	}
}

// TestDeterministic: the same seed gives the same frames.
func TestDeterministic(t *testing.T) {
	frames := func() [][]byte {
		cam := simcam.New(simcam.Config{Width: 160, Height: 120, Seed: 9})
		cam.Roll([]rules.Die{rules.D8, rules.D12})
		var out [][]byte
		for range 5 {
			out = append(out, capture(t, cam).Image.Pix)
		}
		return out
	}
	a, b := frames(), frames()
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			t.Fatalf("frame %d differs between runs", i)
		}
	}
	if bytes.Equal(a[3], a[4]) {
		t.Fatal("consecutive frames identical (no noise, no motion)")
	}
}

// TestPlacementFaults: the truth flags what was injected.
func TestPlacementFaults(t *testing.T) {
	cam := simcam.New(simcam.Config{Width: 320, Height: 240, Seed: 2,
		Faults: simcam.Faults{Cocked: true, Touching: true, OffTray: true}})
	if err := cam.Roll([]rules.Die{rules.D6, rules.D8, rules.D20}); err != nil {
		t.Fatal(err)
	}
	tr := cam.Truth()
	if !tr[0].Cocked || !tr[0].Touching || !tr[1].Touching || !tr[2].OffTray || tr[1].Cocked {
		t.Fatalf("truth %+v", tr)
	}
	if err := cam.Roll([]rules.Die{7}); err == nil {
		t.Fatal("rolled a d7")
	}
}

func mean(pix []byte) float64 {
	s := 0
	for i := 0; i < len(pix); i += 4 {
		s += int(pix[i]) + int(pix[i+1]) + int(pix[i+2])
	}
	return float64(s) / float64(len(pix)/4*3)
}

// TestCameraFaults: dark, frozen, unplugged (and back), empty, closed.
func TestCameraFaults(t *testing.T) {
	cam := simcam.New(simcam.Config{Width: 160, Height: 120, Seed: 3})
	lit := mean(capture(t, cam).Image.Pix)
	cam.SetFaults(simcam.Faults{Dark: true})
	if dark := mean(capture(t, cam).Image.Pix); dark > lit/4 {
		t.Fatalf("dark frame mean %.0f, lit %.0f", dark, lit)
	}

	cam.SetFaults(simcam.Faults{Frozen: true})
	cam.Roll([]rules.Die{rules.D4})
	a, b := capture(t, cam), capture(t, cam)
	if !bytes.Equal(a.Image.Pix, b.Image.Pix) || b.Seq != a.Seq+1 {
		t.Fatal("frozen camera delivered a new picture")
	}

	cam.SetFaults(simcam.Faults{FailAfter: 2, FailFor: 2})
	capture(t, cam)
	for i := 0; i < 2; i++ {
		if _, err := cam.Capture(context.Background()); !errors.Is(err, camera.ErrHardware) {
			t.Fatalf("unplugged capture %d: %v", i, err)
		}
	}
	capture(t, cam) // back

	cam.SetFaults(simcam.Faults{Empty: true})
	if _, err := cam.Capture(context.Background()); !errors.Is(err, camera.ErrHardware) {
		t.Fatalf("empty frame: %v", err)
	}
	cam.SetFaults(simcam.Faults{})
	cam.Close()
	if _, err := cam.Capture(context.Background()); !errors.Is(err, camera.ErrHardware) {
		t.Fatalf("closed: %v", err)
	}
}

// TestPacedCaptureWaitsOnTheClock: with Pace a frame comes one period
// later on the clock, and a cancelled wait returns at once.
func TestPacedCaptureWaitsOnTheClock(t *testing.T) {
	clk := clock.NewFake(time.Unix(0, 0))
	cam := simcam.New(simcam.Config{Width: 64, Height: 48, Seed: 4, Clock: clk, Pace: true})
	done := make(chan camera.Frame, 1)
	go func() {
		f, err := cam.Capture(context.Background())
		if err != nil {
			t.Error(err)
		}
		done <- f
	}()
	clk.BlockUntil(1)
	clk.Advance(time.Second / 30)
	if f := <-done; !f.Time.Equal(time.Unix(0, 0).Add(time.Second / 30)) {
		t.Fatalf("frame at %v", f.Time)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := cam.Capture(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}
