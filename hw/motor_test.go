package hw_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/physic"

	"github.com/towerd/towerd/clock"
	"github.com/towerd/towerd/hw"
	"github.com/towerd/towerd/hw/hwtest"
)

type motorCase struct {
	name   string
	motor  hw.MotorConfig
	timers int // fake-clock timers while running: watchdog, phase (+ software STEP)
}

func motorCases() []motorCase {
	pwm := &hw.PWMConfig{Chip: 0, Channel: 0}
	return []motorCase{
		{"onoff", hw.MotorConfig{Driver: hw.DriverOnOff, Pin: "GPIO27"}, 2},
		{"onoff-active-low", hw.MotorConfig{Driver: hw.DriverOnOff, Pin: "GPIO27", ActiveLow: true}, 2},
		{"direction", hw.MotorConfig{Driver: hw.DriverDirection, Pin: "GPIO27", DirPin: "GPIO23"}, 2},
		{"pwm", hw.MotorConfig{Driver: hw.DriverPWM, PWM: pwm, DirPin: "GPIO23"}, 2},
		{"pwm-enable-active-low", hw.MotorConfig{Driver: hw.DriverPWM, PWM: pwm, Pin: "GPIO27", ActiveLow: true}, 2},
		{"stepper", hw.MotorConfig{Driver: hw.DriverStepper, StepPin: "GPIO24", DirPin: "GPIO23", Pin: "GPIO27", ActiveLow: true}, 3},
		{"stepper-pwm", hw.MotorConfig{Driver: hw.DriverStepper, PWM: pwm, DirPin: "GPIO23"}, 2},
	}
}

// motorSim is a tower with only a motor, so the motor owns every timer.
func motorSim(tb testing.TB, m hw.MotorConfig) (*hwtest.Sim, *clock.Fake, chan hw.MotorEvent) {
	tb.Helper()
	s, clk := newSim(tb, hw.Config{Motor: m})
	ev := make(chan hw.MotorEvent, 64)
	s.Observe(func(e hw.MotorEvent) { ev <- e })
	return s, clk, ev
}

func tumble(s *hwtest.Sim, ctx context.Context, p hw.Profile) <-chan error {
	done := make(chan error, 1)
	go func() { done <- s.Motor.Tumble(ctx, p) }()
	return done
}

// onSpans returns how long the motor's power output (PWM channel, or the
// on/off line) was on each time it was on.
func onSpans(s *hwtest.Sim, activeLow bool) []time.Duration {
	var spans []time.Duration
	var since time.Time
	on := false
	idle := gpio.Duty(0)
	if activeLow {
		idle = gpio.DutyMax
	}
	out := s.MotorPin
	if s.PWMPin != nil {
		out = s.PWMPin
	}
	for _, c := range out.Changes() {
		now := c.Duty != idle
		if now && !on {
			since = c.At
		}
		if !now && on {
			spans = append(spans, c.At.Sub(since))
		}
		on = now
	}
	if on {
		spans = append(spans, -1) // still on
	}
	return spans
}

// TestEveryExitLeavesMotorOff runs each driver through each way a tumble
// can end and checks every motor line is back at its inactive level.
func TestEveryExitLeavesMotorOff(t *testing.T) {
	exits := []struct {
		name   string
		run    time.Duration
		end    func(t *testing.T, s *hwtest.Sim, clk *clock.Fake, cancel context.CancelFunc)
		want   error
		reason string
	}{
		{"done", time.Second, func(t *testing.T, s *hwtest.Sim, clk *clock.Fake, _ context.CancelFunc) {
			clk.Advance(time.Second)
		}, nil, "done"},
		{"limit", time.Minute, func(t *testing.T, s *hwtest.Sim, clk *clock.Fake, _ context.CancelFunc) {
			clk.Advance(hw.DefaultMaxOn)
		}, hw.ErrOnTimeLimit, "limit"},
		{"cancel", time.Second, func(t *testing.T, s *hwtest.Sim, clk *clock.Fake, cancel context.CancelFunc) {
			cancel()
		}, context.Canceled, "cancel"},
		{"off", time.Second, func(t *testing.T, s *hwtest.Sim, clk *clock.Fake, _ context.CancelFunc) {
			if err := s.Motor.Off(); err != nil {
				t.Errorf("Off: %v", err)
			}
		}, hw.ErrStopped, "off"},
		{"close", time.Second, func(t *testing.T, s *hwtest.Sim, clk *clock.Fake, _ context.CancelFunc) {
			if err := s.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		}, hw.ErrClosed, "close"},
		{"signal", time.Second, func(t *testing.T, s *hwtest.Sim, clk *clock.Fake, _ context.CancelFunc) {
			// SIGUSR1 stands in for SIGTERM, which would end the test binary if mishandled.
			t.Cleanup(s.OffOnSignal(syscall.SIGUSR1))
			if err := syscall.Kill(os.Getpid(), syscall.SIGUSR1); err != nil {
				t.Fatal(err)
			}
		}, hw.ErrShutdown, "signal"},
		{"guard", time.Second, func(t *testing.T, s *hwtest.Sim, clk *clock.Fake, _ context.CancelFunc) {
			err := func() (err error) {
				defer s.Guard(&err)
				panic("roll loop bug")
			}()
			if !errors.Is(err, hw.ErrFault) {
				t.Errorf("Guard stored %v, want ErrFault", err)
			}
		}, hw.ErrStopped, "off"},
	}
	for _, mc := range motorCases() {
		for _, ex := range exits {
			t.Run(mc.name+"/"+ex.name, func(t *testing.T) {
				s, clk, ev := motorSim(t, mc.motor)
				if !s.MotorIdle() {
					t.Fatal("motor not idle at start")
				}
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				done := tumble(s, ctx, hw.Profile{Run: ex.run})
				clk.BlockUntil(mc.timers)
				if !s.MotorOn() {
					t.Fatal("motor not on while tumbling")
				}
				ex.end(t, s, clk, cancel)
				err := <-done
				if ex.want == nil && err != nil || ex.want != nil && !errors.Is(err, ex.want) {
					t.Fatalf("Tumble = %v, want %v", err, ex.want)
				}
				if !s.MotorIdle() {
					t.Fatalf("motor lines not idle after %s", ex.name)
				}
				if start := <-ev; start.Kind != "motor_start" {
					t.Errorf("first event %+v", start)
				}
				if stop := <-ev; stop.Kind != "motor_stop" || stop.Reason != ex.reason {
					t.Errorf("stop event %+v, want reason %s", stop, ex.reason)
				}
				if mc.motor.Driver != hw.DriverStepper {
					for _, d := range onSpans(s, mc.motor.ActiveLow) {
						if d < 0 || d > hw.DefaultMaxOn {
							t.Errorf("motor on for %v", d)
						}
					}
				}
			})
		}
	}
}

// After a signal the motor stays off: the roll loop, which learns of the
// shutdown a moment later, cannot start it again.
func TestSignalKeepsMotorOff(t *testing.T) {
	s, clk, _ := motorSim(t, hw.MotorConfig{Driver: hw.DriverOnOff, Pin: "GPIO27"})
	stop := s.OffOnSignal(syscall.SIGUSR1)
	done := tumble(s, context.Background(), hw.Profile{Run: time.Second})
	clk.BlockUntil(2)
	if err := syscall.Kill(os.Getpid(), syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, hw.ErrShutdown) || !errors.Is(err, hw.ErrStopped) {
		t.Fatalf("tumble during the signal: %v", err)
	}
	stop()
	if err := s.Motor.Tumble(context.Background(), hw.Profile{Run: time.Second}); !errors.Is(err, hw.ErrShutdown) {
		t.Fatalf("tumble after the signal: %v, want ErrShutdown", err)
	}
	if !s.MotorIdle() {
		t.Fatal("motor lines not idle")
	}
}

func TestSixtySecondsIsCutAtMaxOn(t *testing.T) {
	s, clk, ev := motorSim(t, hw.MotorConfig{Driver: hw.DriverOnOff, Pin: "GPIO27"})
	done := tumble(s, context.Background(), hw.Profile{Run: 60 * time.Second})
	clk.BlockUntil(2)
	clk.Advance(hw.DefaultMaxOn - time.Millisecond)
	if !s.MotorOn() {
		t.Fatal("motor off before the limit")
	}
	clk.Advance(time.Millisecond)
	err := <-done
	if !errors.Is(err, hw.ErrOnTimeLimit) {
		t.Fatalf("Tumble = %v, want ErrOnTimeLimit", err)
	}
	if s.MotorOn() || s.MotorPin.Level() != gpio.Low {
		t.Fatal("motor still on past the limit")
	}
	spans := onSpans(s, false)
	if len(spans) != 1 || spans[0] != hw.DefaultMaxOn {
		t.Fatalf("on spans %v, want exactly [%v]", spans, hw.DefaultMaxOn)
	}
	<-ev
	if stop := <-ev; stop.On != hw.DefaultMaxOn || stop.Reason != "limit" {
		t.Fatalf("stop event %+v", stop)
	}
	// Nothing left ticking: the motor cannot come back on by itself.
	clk.Advance(time.Hour)
	if len(s.MotorPin.Changes()) != 3 { // off at start, on, off
		t.Fatalf("changes %+v", s.MotorPin.Changes())
	}
}

// TestStopObservedBeforeTumbleReturns: the observer has taken motor_stop
// by the time Tumble returns, so an event publisher sends it before the
// roll loop's next state (settling).
func TestStopObservedBeforeTumbleReturns(t *testing.T) {
	s, clk, ev := motorSim(t, hw.MotorConfig{Driver: hw.DriverOnOff, Pin: "GPIO27"})
	done := tumble(s, context.Background(), hw.Profile{Run: time.Second})
	clk.BlockUntil(2)
	clk.Advance(time.Second)
	if err := <-done; err != nil {
		t.Fatalf("Tumble = %v", err)
	}
	var kinds []string
	for len(ev) > 0 {
		kinds = append(kinds, (<-ev).Kind)
	}
	if strings.Join(kinds, " ") != "motor_start motor_stop" {
		t.Fatalf("events observed when Tumble returned: %v, want motor_start motor_stop", kinds)
	}
}

func TestRunEqualToMaxOnIsNotACut(t *testing.T) {
	s, clk, _ := motorSim(t, hw.MotorConfig{Driver: hw.DriverOnOff, Pin: "GPIO27"})
	done := tumble(s, context.Background(), hw.Profile{Run: hw.DefaultMaxOn})
	clk.BlockUntil(2)
	clk.Advance(hw.DefaultMaxOn)
	if err := <-done; err != nil {
		t.Fatalf("Tumble = %v", err)
	}
}

func TestDutyLimitRefusesTheRequestThatWouldBreakIt(t *testing.T) {
	s, clk, _ := motorSim(t, hw.MotorConfig{Driver: hw.DriverOnOff, Pin: "GPIO27"})
	run := func() error {
		done := tumble(s, context.Background(), hw.Profile{Run: 4 * time.Second})
		select {
		case err := <-done: // refused before starting
			return err
		default:
		}
		clk.BlockUntil(2)
		clk.Advance(4 * time.Second)
		return <-done
	}
	// A flood of back-to-back requests: 7 × 4 s = 28 s fit the 30 s budget
	// (50 % of 60 s); the 8th would make 32 s.
	for i := 0; i < 7; i++ {
		if err := run(); err != nil {
			t.Fatalf("tumble %d: %v", i+1, err)
		}
	}
	before := len(s.MotorPin.Changes())
	err := s.Motor.Tumble(context.Background(), hw.Profile{Run: 4 * time.Second})
	if !errors.Is(err, hw.ErrDutyLimit) {
		t.Fatalf("8th tumble = %v, want ErrDutyLimit", err)
	}
	if len(s.MotorPin.Changes()) != before {
		t.Fatal("refused tumble touched the motor pin")
	}
	// A shorter one still fits, exactly.
	done := tumble(s, context.Background(), hw.Profile{Run: 2 * time.Second})
	clk.BlockUntil(2)
	clk.Advance(2 * time.Second)
	if err := <-done; err != nil {
		t.Fatalf("2 s tumble within budget: %v", err)
	}
	if err := s.Motor.Tumble(context.Background(), hw.Profile{Run: 100 * time.Millisecond}); !errors.Is(err, hw.ErrDutyLimit) {
		t.Fatalf("over budget: %v", err)
	}
	// Once the first run slides out of the window (at 64 s the window starts
	// at 4 s and holds 26 s), tumbling works again.
	clk.Advance(34 * time.Second)
	done = tumble(s, context.Background(), hw.Profile{Run: 4 * time.Second})
	clk.BlockUntil(2)
	clk.Advance(4 * time.Second)
	if err := <-done; err != nil {
		t.Fatalf("after the window slid: %v", err)
	}
	// Over any 60 s the motor was on at most 30 s.
	changes := s.MotorPin.Changes()
	for _, c := range changes {
		from, to := c.At, c.At.Add(60*time.Second)
		var on time.Duration
		var since time.Time
		high := false
		for _, d := range changes {
			at := d.At
			if at.Before(from) {
				at = from
			}
			if at.After(to) {
				at = to
			}
			if bool(d.Level) && !high {
				since = at
			}
			if !bool(d.Level) && high {
				on += at.Sub(since)
			}
			high = bool(d.Level)
		}
		if on > 30*time.Second {
			t.Fatalf("%v on in the 60 s from %v", on, from.Sub(t0))
		}
	}
}

func TestDutyLimitErrorSaysWhenToRetry(t *testing.T) {
	s, clk, _ := motorSim(t, hw.MotorConfig{Driver: hw.DriverOnOff, Pin: "GPIO27", MaxOn: 20 * time.Second, DutyWindow: 40 * time.Second})
	done := tumble(s, context.Background(), hw.Profile{Run: 20 * time.Second})
	clk.BlockUntil(2)
	clk.Advance(20 * time.Second)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	err := s.Motor.Tumble(context.Background(), hw.Profile{Run: time.Second})
	if !errors.Is(err, hw.ErrDutyLimit) {
		t.Fatalf("err = %v", err)
	}
	// 20 s on in the last 40 s; 1 s more fits once 1 s has slid out, in 21 s.
	if got := err.Error(); !strings.Contains(got, "retry in 21s") {
		t.Fatalf("message %q does not say when to retry", got)
	}
}

func TestConcurrentTumbleIsBusy(t *testing.T) {
	s, clk, _ := motorSim(t, hw.MotorConfig{Driver: hw.DriverOnOff, Pin: "GPIO27"})
	done := tumble(s, context.Background(), hw.Profile{})
	clk.BlockUntil(2)
	if err := s.Motor.Tumble(context.Background(), hw.Profile{}); !errors.Is(err, hw.ErrBusy) {
		t.Fatalf("second tumble = %v, want ErrBusy", err)
	}
	clk.Advance(hw.DefaultRun)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestReverseJoltProfile(t *testing.T) {
	s, clk, _ := motorSim(t, hw.MotorConfig{Driver: hw.DriverDirection, Pin: "GPIO27", DirPin: "GPIO23"})
	done := tumble(s, context.Background(), hw.Profile{Run: time.Second, Reverse: 200 * time.Millisecond})
	for _, d := range []time.Duration{time.Second, hw.DefaultReversePause, 200 * time.Millisecond} {
		clk.BlockUntil(2)
		clk.Advance(d)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	type lv struct {
		at time.Duration
		l  gpio.Level
	}
	got := func(p *hwtest.Pin) []lv {
		var out []lv
		for _, c := range p.Changes() {
			out = append(out, lv{c.At.Sub(t0), c.Level})
		}
		return out
	}
	ms := time.Millisecond
	wantEn := []lv{{0, gpio.Low}, {0, gpio.High}, {1000 * ms, gpio.Low}, {1050 * ms, gpio.High}, {1250 * ms, gpio.Low}}
	wantDir := []lv{{0, gpio.Low}, {0, gpio.Low}, {1000 * ms, gpio.Low}, {1050 * ms, gpio.High}, {1250 * ms, gpio.Low}}
	if g := got(s.MotorPin); !equal(g, wantEn) {
		t.Errorf("enable %v, want %v", g, wantEn)
	}
	if g := got(s.DirPin); !equal(g, wantDir) {
		t.Errorf("dir %v, want %v", g, wantDir)
	}
	if err := s.Motor.Tumble(context.Background(), hw.Profile{Run: -time.Second}); err == nil {
		t.Error("negative run accepted")
	}
}

func TestFaultMidTumbleSwitchesOff(t *testing.T) {
	s, clk, ev := motorSim(t, hw.MotorConfig{Driver: hw.DriverDirection, Pin: "GPIO27", DirPin: "GPIO23"})
	s.DirPin.Fail(func(l gpio.Level, _ gpio.Duty) error {
		if l {
			return errors.New("line lost")
		}
		return nil
	})
	done := tumble(s, context.Background(), hw.Profile{Run: time.Second, Reverse: 200 * time.Millisecond})
	clk.BlockUntil(2)
	clk.Advance(time.Second)
	clk.BlockUntil(2)
	clk.Advance(hw.DefaultReversePause) // the reverse phase cannot set DIR
	err := <-done
	if !errors.Is(err, hw.ErrFault) {
		t.Fatalf("Tumble = %v, want ErrFault", err)
	}
	if !s.MotorIdle() {
		t.Fatal("motor lines not idle after a fault")
	}
	<-ev
	if stop := <-ev; stop.Reason != "fault" {
		t.Fatalf("stop %+v", stop)
	}
}

func TestSwitchOffIsRetried(t *testing.T) {
	s, clk, _ := motorSim(t, hw.MotorConfig{Driver: hw.DriverOnOff, Pin: "GPIO27"})
	done := tumble(s, context.Background(), hw.Profile{})
	clk.BlockUntil(2)
	failed := 0
	s.MotorPin.Fail(func(l gpio.Level, _ gpio.Duty) error {
		if !l && failed == 0 {
			failed++
			return errors.New("transient")
		}
		return nil
	})
	clk.Advance(hw.DefaultRun)
	if err := <-done; err != nil {
		t.Fatalf("Tumble = %v after one failed switch-off", err)
	}
	if failed != 1 || !s.MotorIdle() {
		t.Fatalf("failed %d times, idle %v", failed, s.MotorIdle())
	}
	// A line that cannot be switched off at all is a loud fault.
	done = tumble(s, context.Background(), hw.Profile{})
	clk.BlockUntil(2)
	s.MotorPin.Fail(func(l gpio.Level, _ gpio.Duty) error {
		if !l {
			return errors.New("stuck")
		}
		return nil
	})
	clk.Advance(hw.DefaultRun)
	if err := <-done; !errors.Is(err, hw.ErrFault) {
		t.Fatalf("Tumble = %v, want ErrFault", err)
	}
	s.MotorPin.Fail(nil)
}

func TestPanicInDriverSwitchesOff(t *testing.T) {
	s, clk, _ := motorSim(t, hw.MotorConfig{Driver: hw.DriverDirection, Pin: "GPIO27", DirPin: "GPIO23"})
	s.DirPin.Fail(func(l gpio.Level, _ gpio.Duty) error {
		if l {
			panic("driver bug")
		}
		return nil
	})
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		_ = s.Motor.Tumble(context.Background(), hw.Profile{Run: time.Second, Reverse: 200 * time.Millisecond})
	}()
	clk.BlockUntil(2)
	clk.Advance(time.Second)
	clk.BlockUntil(2)
	clk.Advance(hw.DefaultReversePause)
	if r := <-done; r != "driver bug" {
		t.Fatalf("recovered %v", r)
	}
	if !s.MotorIdle() {
		t.Fatal("motor lines not idle after a panic inside Tumble")
	}
}

func TestGuardWithoutErrRepanicsAfterOff(t *testing.T) {
	s, clk, _ := motorSim(t, hw.MotorConfig{Driver: hw.DriverOnOff, Pin: "GPIO27"})
	done := tumble(s, context.Background(), hw.Profile{})
	clk.BlockUntil(2)
	r := func() (r any) {
		defer func() { r = recover() }()
		defer hw.Guard(nil, s.Motor, s.Light)
		panic("boom")
	}()
	if r != "boom" {
		t.Fatalf("recovered %v, want the original panic", r)
	}
	if err := <-done; !errors.Is(err, hw.ErrStopped) {
		t.Fatalf("Tumble = %v", err)
	}
	if !s.MotorIdle() {
		t.Fatal("motor on after Guard")
	}
}

func TestMotorDrivesSpeedAndSteps(t *testing.T) {
	pwm := &hw.PWMConfig{Chip: 0, Channel: 1}
	cases := []struct {
		name     string
		m        hw.MotorConfig
		speed    float64
		wantDuty gpio.Duty
		wantF    physic.Frequency
	}{
		{"pwm", hw.MotorConfig{Driver: hw.DriverPWM, PWM: pwm}, 0.5, gpio.DutyHalf, 20 * physic.KiloHertz},
		{"pwm-active-low", hw.MotorConfig{Driver: hw.DriverPWM, PWM: pwm, ActiveLow: true}, 0.25, gpio.DutyMax * 3 / 4, 20 * physic.KiloHertz},
		{"stepper-pwm", hw.MotorConfig{Driver: hw.DriverStepper, PWM: pwm, DirPin: "GPIO23", StepRate: 1000}, 0.5, gpio.DutyHalf, 500 * physic.Hertz},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, clk, _ := motorSim(t, c.m)
			done := tumble(s, context.Background(), hw.Profile{Speed: c.speed})
			clk.BlockUntil(2)
			if d := s.PWMPin.Duty(); d != c.wantDuty {
				t.Errorf("duty %v, want %v", d, c.wantDuty)
			}
			if f := s.PWMPin.Frequency(); f != c.wantF {
				t.Errorf("frequency %v, want %v", f, c.wantF)
			}
			clk.Advance(hw.DefaultRun)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestSoftwareStepperPulses(t *testing.T) {
	s, clk, _ := motorSim(t, hw.MotorConfig{Driver: hw.DriverStepper, StepPin: "GPIO24", DirPin: "GPIO23", StepRate: 1000})
	done := tumble(s, context.Background(), hw.Profile{Run: 10 * time.Millisecond})
	clk.BlockUntil(3)
	for i := 0; i < 10; i++ { // 10 half periods of 0.5 ms: 5 steps
		clk.Advance(500 * time.Microsecond)
		clk.BlockUntil(3)
	}
	var highs int
	for _, c := range s.StepPin.Changes() {
		if c.Level {
			highs++
		}
	}
	if highs != 5 {
		t.Fatalf("%d step pulses in 5 ms at 1000 steps/s, want 5", highs)
	}
	clk.Advance(5 * time.Millisecond)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !s.MotorIdle() {
		t.Fatal("STEP left high")
	}
}

func TestNoMotorConfigured(t *testing.T) {
	s, _ := newSim(t, hw.Config{})
	if err := s.Motor.Tumble(context.Background(), hw.Profile{Run: time.Hour}); err != nil {
		t.Fatalf("Tumble without a motor = %v", err)
	}
	if err := s.Motor.Off(); err != nil {
		t.Fatal(err)
	}
}

func TestTumbleAfterCloseFails(t *testing.T) {
	s, _, _ := motorSim(t, hw.MotorConfig{Driver: hw.DriverOnOff, Pin: "GPIO27"})
	s.Close()
	if err := s.Motor.Tumble(context.Background(), hw.Profile{}); !errors.Is(err, hw.ErrClosed) {
		t.Fatalf("Tumble after Close = %v", err)
	}
	if !s.MotorIdle() {
		t.Fatal("motor on")
	}
}

func equal[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestBrakeHoldsOffBeforeReturning(t *testing.T) {
	s, clk, ev := motorSim(t, hw.MotorConfig{Driver: hw.DriverOnOff, Pin: "GPIO27", Profile: hw.Profile{Brake: 500 * time.Millisecond}})
	done := tumble(s, context.Background(), hw.Profile{Run: time.Second})
	clk.BlockUntil(2)
	clk.Advance(time.Second)
	clk.BlockUntil(2) // the brake wait, and the (idle) watchdog
	if s.MotorOn() {
		t.Fatal("motor on while braking")
	}
	select {
	case err := <-done:
		t.Fatalf("Tumble returned %v before the brake time", err)
	default:
	}
	<-ev
	if stop := <-ev; stop.On != time.Second {
		t.Fatalf("stop %+v: on-time must not include the brake", stop)
	}
	clk.Advance(500 * time.Millisecond)
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	// Close during the brake returns at once.
	done = tumble(s, context.Background(), hw.Profile{Run: time.Second, Brake: -1})
	clk.BlockUntil(2)
	clk.Advance(time.Second)
	if err := <-done; err != nil { // Brake -1: no brake at all
		t.Fatal(err)
	}
	done = tumble(s, context.Background(), hw.Profile{Run: time.Second})
	clk.BlockUntil(2)
	clk.Advance(time.Second)
	clk.BlockUntil(2)
	s.Close()
	if err := <-done; err != nil {
		t.Fatalf("Close while braking: %v", err)
	}
}
