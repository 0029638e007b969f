package hwtest

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"periph.io/x/conn/v3/gpio"

	"github.com/towerd/towerd/clock"
	"github.com/towerd/towerd/hw"
)

// Sim is a tower on fake pins: the real hw code (debounce, motor limits,
// light) driving Pins a test or the --sim daemon can press and inspect.
type Sim struct {
	*hw.Tower
	Clock clock.Clock
	// The fake lines; nil where the configuration has none. MotorPin is
	// MotorConfig.Pin (on/off or enable), PWMPin the motor's PWM channel,
	// StepPin a stepper's STEP GPIO; LightPin is a GPIO or a PWM channel.
	ButtonPin, MotorPin, PWMPin, StepPin, DirPin, LightPin *Pin
	cfg                                                    hw.Config
}

// piPins is the BCM GPIO range on the Pi's 40-pin header.
const piPins = 28

// NewTower builds a simulated tower wired as cfg says (pin names are
// checked against a Pi's GPIO0..GPIO27, as on the real board). clk drives
// the button's debounce and every motor limit: clock.Real{} for --sim, a
// *clock.Fake for tests.
func NewTower(cfg hw.Config, clk clock.Clock, log *slog.Logger) (*Sim, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Sim{Clock: clk, cfg: cfg}
	var errs []string
	mk := func(field, name string) *Pin {
		if name == "" {
			return nil
		}
		n := hw.NormalizePinName(name)
		num, err := strconv.Atoi(strings.TrimPrefix(n, "GPIO"))
		if !strings.HasPrefix(n, "GPIO") || err != nil || num >= piPins {
			errs = append(errs, fmt.Sprintf("hw: %s: pin %q: no such pin; this board has GPIO0..GPIO%d", field, name, piPins-1))
			return nil
		}
		return NewPin(n, num, clk)
	}
	pwm := func(c *hw.PWMConfig) *Pin {
		return NewPin(fmt.Sprintf("pwmchip%d/pwm%d", c.Chip, c.Channel), -1, clk)
	}
	var pins hw.Pins
	s.ButtonPin = mk("button.pin", cfg.Button.Pin)
	m := cfg.Motor
	if m.Driver != hw.DriverNone {
		s.MotorPin = mk("motor.pin", m.Pin)
		if m.Driver != hw.DriverOnOff {
			s.DirPin = mk("motor.dir_pin", m.DirPin)
		}
		switch {
		case m.PWM != nil && (m.Driver == hw.DriverPWM || m.Driver == hw.DriverStepper):
			s.PWMPin = pwm(m.PWM)
		case m.Driver == hw.DriverStepper:
			s.StepPin = mk("motor.step_pin", m.StepPin)
		}
	}
	if cfg.Light.PWM != nil {
		s.LightPin = pwm(cfg.Light.PWM)
	} else {
		s.LightPin = mk("light.pin", cfg.Light.Pin)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	// Typed nils must stay untyped nils in the interfaces.
	if s.ButtonPin != nil {
		pins.Button = s.ButtonPin
	}
	for _, x := range []struct {
		p   *Pin
		dst *gpio.PinOut
	}{{s.MotorPin, &pins.Motor}, {s.PWMPin, &pins.MotorPWM}, {s.StepPin, &pins.Step}, {s.DirPin, &pins.Dir}, {s.LightPin, &pins.Light}} {
		if x.p != nil {
			*x.dst = x.p
		}
	}
	t, err := hw.New(cfg, pins, clk, log)
	if err != nil {
		return nil, err
	}
	s.Tower = t
	return s, nil
}

// SetButton moves the button to pressed or released with one clean edge,
// returning once the watcher has seen it.
func (s *Sim) SetButton(pressed bool) {
	if s.ButtonPin != nil {
		s.ButtonPin.Set(gpio.Level(pressed != s.cfg.Button.ActiveLow))
	}
}

// Press presses the button, holds it for hold (0: three debounce times)
// on the sim's clock, and releases it: one Press event. It releases only
// once the watcher has gone back to waiting for edges after the hold, so
// it has looked at the pressed level whatever the machine's load (on a
// busy CI machine the watcher may run long after the edge). With a fake
// clock the caller must advance it while Press waits.
func (s *Sim) Press(hold time.Duration) {
	if hold <= 0 {
		hold = 3 * s.cfg.Button.Debounce
	}
	s.SetButton(true)
	if s.ButtonPin == nil {
		return
	}
	// Set has returned: the watcher took the edge and waits out the
	// debounce. Its next wait comes after it sampled the level.
	n := s.ButtonPin.Waits()
	<-s.Clock.After(hold)
	s.ButtonPin.AwaitWaits(n)
	s.SetButton(false)
}

// MotorOn reports whether the motor is driven: its on/off or enable line
// is active, or its PWM has a non-idle duty. A stepper stepped in software
// without an enable line shows only whether STEP is high.
func (s *Sim) MotorOn() bool {
	m := s.cfg.Motor
	switch {
	case m.Driver == hw.DriverNone:
		return false
	case m.Driver == hw.DriverPWM:
		return s.PWMPin.Duty() != idleDuty(m.ActiveLow)
	case s.MotorPin != nil:
		return s.MotorPin.Level() == gpio.Level(!m.ActiveLow)
	case s.PWMPin != nil:
		return s.PWMPin.Duty() != 0
	case s.StepPin != nil:
		return s.StepPin.Level() == gpio.High
	}
	return false
}

// MotorIdle reports whether every motor line is at its inactive level: the
// on/off or enable line off, PWM idle, STEP and direction low.
func (s *Sim) MotorIdle() bool {
	m := s.cfg.Motor
	ok := true
	if s.MotorPin != nil {
		ok = ok && s.MotorPin.Level() == gpio.Level(m.ActiveLow)
	}
	if s.PWMPin != nil {
		idle := gpio.Duty(0) // STEP pulses stop at duty 0
		if m.Driver == hw.DriverPWM {
			idle = idleDuty(m.ActiveLow)
		}
		ok = ok && s.PWMPin.Duty() == idle
	}
	if s.StepPin != nil {
		ok = ok && s.StepPin.Level() == gpio.Low
	}
	if s.DirPin != nil {
		ok = ok && s.DirPin.Level() == gpio.Low
	}
	return ok
}

func idleDuty(activeLow bool) gpio.Duty {
	if activeLow {
		return gpio.DutyMax
	}
	return 0
}

// LightOn reports whether the light is lit.
func (s *Sim) LightOn() bool {
	if s.LightPin == nil {
		return false
	}
	return s.LightPin.Duty() != idleDuty(s.cfg.Light.ActiveLow)
}
