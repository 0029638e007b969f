package hw_test

import (
	"testing"
	"time"

	"periph.io/x/conn/v3/gpio"

	"github.com/towerd/towerd/clock"
	"github.com/towerd/towerd/hw"
	"github.com/towerd/towerd/hw/hwtest"
)

func buttonOnly(long time.Duration) hw.Config {
	return hw.Config{Button: hw.ButtonConfig{Pin: "GPIO17", ActiveLow: true, LongPress: long}}
}

// stepper advances the fake clock and waits until the watcher, having
// handled whatever fired, waits on the clock again (it owns the only timer).
func stepper(clk *clock.Fake) func(time.Duration) {
	return func(d time.Duration) {
		clk.BlockUntil(1)
		clk.Advance(d)
		clk.BlockUntil(1)
	}
}

func bounce(s *hwtest.Sim, step func(time.Duration), end bool, n int, gap time.Duration) {
	for i := 0; i < n; i++ {
		s.SetButton(i%2 == 0 == end)
		step(gap)
	}
	s.SetButton(end)
}

func kinds(evs []hw.ButtonEvent) []hw.ButtonKind {
	var k []hw.ButtonKind
	for _, e := range evs {
		k = append(k, e.Kind)
	}
	return k
}

func TestBounceGivesOnePress(t *testing.T) {
	s, clk := newSim(t, buttonOnly(0))
	step := stepper(clk)
	bounce(s, step, true, 6, time.Millisecond) // contact chatters for 6 ms, ends closed
	step(29 * time.Millisecond)                // 29 ms of quiet: not yet stable
	select {
	case e := <-s.Button.Events():
		t.Fatalf("event %v before release", e.Kind)
	default:
	}
	step(time.Millisecond) // stable down
	step(200 * time.Millisecond)
	bounce(s, step, false, 6, 2*time.Millisecond) // release chatters too
	step(30 * time.Millisecond)

	e := <-s.Button.Events()
	if e.Kind != hw.Press {
		t.Fatalf("kind = %v, want press", e.Kind)
	}
	// Down from the last closing bounce (6 ms) to the last opening one.
	if want := 30*time.Millisecond + 200*time.Millisecond + 12*time.Millisecond; e.Held != want {
		t.Errorf("held = %v, want %v", e.Held, want)
	}
	if rest := drain(t, s); len(rest) != 0 {
		t.Fatalf("extra events %v", kinds(rest))
	}
	if n := s.ButtonPin.ForeverWaits(); n != 0 {
		t.Fatalf("%d WaitForEdge calls without a finite timeout", n)
	}
}

func TestEdgeStormGivesOnePress(t *testing.T) {
	s, clk := newSim(t, buttonOnly(0))
	step := stepper(clk)
	// 201 edges in no time at all, ending pressed, then the same to release.
	for i := 0; i <= 200; i++ {
		s.SetButton(i%2 == 0)
	}
	step(30 * time.Millisecond)
	step(100 * time.Millisecond)
	for i := 0; i <= 200; i++ {
		s.SetButton(i%2 == 1)
	}
	step(30 * time.Millisecond)
	evs := drain(t, s)
	if len(evs) != 1 || evs[0].Kind != hw.Press {
		t.Fatalf("events %v, want exactly one press", kinds(evs))
	}
}

func TestGlitchGivesNoPress(t *testing.T) {
	s, clk := newSim(t, buttonOnly(0))
	step := stepper(clk)
	// A spike from the motor: the line dips for 5 ms and comes back.
	s.SetButton(true)
	step(5 * time.Millisecond)
	s.SetButton(false)
	step(30 * time.Millisecond)
	step(time.Second)
	if evs := drain(t, s); len(evs) != 0 {
		t.Fatalf("events %v from a glitch", kinds(evs))
	}
}

func TestLongPressIsSeparate(t *testing.T) {
	s, clk := newSim(t, buttonOnly(0))
	step := stepper(clk)
	s.SetButton(true)
	step(30 * time.Millisecond)  // stable down at t+0 (the edge)
	step(969 * time.Millisecond) // 999 ms held
	select {
	case e := <-s.Button.Events():
		t.Fatalf("event %v at 999 ms", e.Kind)
	default:
	}
	step(time.Millisecond)
	e := <-s.Button.Events()
	if e.Kind != hw.LongPress || e.Held != time.Second {
		t.Fatalf("got %v held %v, want long_press after 1s", e.Kind, e.Held)
	}
	step(3 * time.Second) // keep holding: no repeat
	s.SetButton(false)
	step(30 * time.Millisecond) // release: no press after a long press

	// A short press right after is a plain press.
	s.SetButton(true)
	step(30 * time.Millisecond)
	step(400 * time.Millisecond)
	s.SetButton(false)
	step(30 * time.Millisecond)
	evs := drain(t, s)
	if len(evs) != 1 || evs[0].Kind != hw.Press || evs[0].Held != 430*time.Millisecond {
		t.Fatalf("after the long press: %+v, want one press held 430ms", evs)
	}
}

func TestLongPressDisabledPressesOnDown(t *testing.T) {
	s, clk := newSim(t, buttonOnly(-1))
	step := stepper(clk)
	bounce(s, step, true, 4, time.Millisecond)
	step(30 * time.Millisecond)
	e := <-s.Button.Events() // no release needed
	if e.Kind != hw.Press {
		t.Fatalf("kind %v", e.Kind)
	}
	step(5 * time.Second) // held long: still no long press
	s.SetButton(false)
	step(30 * time.Millisecond)
	if evs := drain(t, s); len(evs) != 0 {
		t.Fatalf("extra events %v", kinds(evs))
	}
}

func TestMissedEdgeIsCaughtByPolling(t *testing.T) {
	s, clk := newSim(t, buttonOnly(0))
	step := stepper(clk)
	s.ButtonPin.SetQuiet(gpio.Low) // pressed, but the kernel lost the edge
	step(250 * time.Millisecond)   // the poll sees it
	step(30 * time.Millisecond)
	step(100 * time.Millisecond)
	s.ButtonPin.SetQuiet(gpio.High)
	step(250 * time.Millisecond)
	step(30 * time.Millisecond)
	evs := drain(t, s)
	if len(evs) != 1 || evs[0].Kind != hw.Press {
		t.Fatalf("events %v, want one press", kinds(evs))
	}
}

func TestButtonHeldAtStartIsIgnoredUntilReleased(t *testing.T) {
	clk := clock.NewFake(t0)
	pin := hwtest.NewPin("GPIO17", 17, clk)
	pin.SetQuiet(gpio.Low) // stuck down before towerd starts
	tw, err := hw.New(buttonOnly(0), hw.Pins{Button: pin}, clk, quiet())
	if err != nil {
		t.Fatal(err)
	}
	step := stepper(clk)
	clk.BlockUntil(1)
	step(5 * time.Second) // held: neither press nor long press
	pin.Set(gpio.High)
	step(30 * time.Millisecond) // released: it was never a press
	pin.Set(gpio.Low)           // a real press now counts
	step(30 * time.Millisecond)
	step(100 * time.Millisecond)
	pin.Set(gpio.High)
	step(30 * time.Millisecond)
	tw.Close()
	var evs []hw.ButtonEvent
	for e := range tw.Button.Events() {
		evs = append(evs, e)
	}
	if len(evs) != 1 || evs[0].Kind != hw.Press || evs[0].Held != 130*time.Millisecond {
		t.Fatalf("events %+v, want one press held 130ms", evs)
	}
}

func TestCloseStopsWatcher(t *testing.T) {
	s, clk := newSim(t, buttonOnly(0))
	clk.BlockUntil(1) // the watcher is blocked in WaitForEdge
	done := make(chan error)
	go func() { done <- s.Close() }()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !s.ButtonPin.Halted() {
		t.Fatal("Close did not halt the pin's WaitForEdge")
	}
	if _, open := <-s.Button.Events(); open {
		t.Fatal("Events still open after Close")
	}
	if n := clk.Pending(); n != 0 {
		t.Fatalf("%d timers left: the watcher is still waiting", n)
	}
	s.SetButton(true) // must not block with nobody watching
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestCloseDuringPressStopsWatcher(t *testing.T) {
	s, clk := newSim(t, buttonOnly(0))
	step := stepper(clk)
	s.SetButton(true)
	step(10 * time.Millisecond) // mid-debounce
	if evs := drain(t, s); len(evs) != 0 {
		t.Fatalf("events %v", kinds(evs))
	}
	if clk.Pending() != 0 {
		t.Fatal("watcher still waiting after Close")
	}
}
