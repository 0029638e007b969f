package hw

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/gpio/gpioreg"
	"periph.io/x/host/v3"

	"github.com/towerd/towerd/clock"
)

// Open initialises periph.io's host drivers (GPIO through the kernel's
// character device, which serves the Pi 3, 4 and 5 alike), resolves the
// configured pins and PWM channels and assembles the tower on the real
// clock.
func Open(cfg Config, log *slog.Logger) (*Tower, error) {
	if log == nil {
		log = slog.Default()
	}
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if _, err := host.Init(); err != nil {
		return nil, fmt.Errorf("hw: periph host init: %w", err)
	}
	pins, err := openPins(cfg, log)
	if err != nil {
		return nil, err
	}
	t, err := New(cfg, pins, clock.Real{}, log)
	if err != nil {
		closePins(pins)
		return nil, err
	}
	return t, nil
}

func closePins(p Pins) {
	for _, x := range []any{p.MotorPWM, p.Light} {
		if c, ok := x.(io.Closer); ok {
			_ = c.Close()
		}
	}
}

func openPins(cfg Config, log *slog.Logger) (Pins, error) {
	var p Pins
	var errs []error
	pin := func(field, name string) gpio.PinIO {
		if name == "" {
			return nil
		}
		warnPin(log, field, name)
		x, err := LookupPin(name)
		if err != nil {
			errs = append(errs, fmt.Errorf("hw: %s: %w", field, err))
			return nil
		}
		return x
	}
	pwm := func(field string, c PWMConfig) gpio.PinOut {
		x, err := OpenPWM(c)
		if err != nil {
			errs = append(errs, fmt.Errorf("hw: %s: %w", field, err))
			return nil
		}
		return x
	}
	if x := pin("button.pin", cfg.Button.Pin); x != nil {
		p.Button = x
	}
	m := cfg.Motor
	if m.Driver != DriverNone {
		// A nil PinIO converts to a nil PinOut, so unset pins stay nil.
		p.Motor = pin("motor.pin", m.Pin)
		if m.Driver != DriverOnOff {
			p.Dir = pin("motor.dir_pin", m.DirPin)
		}
		switch {
		case m.PWM != nil && (m.Driver == DriverPWM || m.Driver == DriverStepper):
			p.MotorPWM = pwm("motor.pwm", *m.PWM)
		case m.Driver == DriverStepper:
			p.Step = pin("motor.step_pin", m.StepPin)
		}
	}
	if cfg.Light.PWM != nil {
		p.Light = pwm("light.pwm", *cfg.Light.PWM)
	} else {
		p.Light = pin("light.pin", cfg.Light.Pin)
	}
	if err := errors.Join(errs...); err != nil {
		closePins(p)
		return Pins{}, err
	}
	return p, nil
}

// LookupPin finds a GPIO by name ("GPIO17", "17", "gpio17" or a board alias
// such as "P1_11") among the pins periph.io registered. An unknown name is
// an error that lists the pins this board has.
func LookupPin(name string) (gpio.PinIO, error) {
	if p := gpioreg.ByName(strings.TrimSpace(name)); p != nil {
		return p, nil
	}
	if p := gpioreg.ByName(NormalizePinName(name)); p != nil {
		return p, nil
	}
	all := gpioreg.All()
	if len(all) == 0 {
		return nil, fmt.Errorf("pin %q: no GPIO pins found (not a Raspberry Pi, or no access to /dev/gpiochip*: add the user to group gpio, see docs/hardware.md)", name)
	}
	names := make([]string, len(all))
	for i, p := range all {
		names[i] = p.Name()
	}
	return nil, fmt.Errorf("pin %q: no such pin; this board has %s", name, strings.Join(names, ", "))
}

// warnPin logs pins that work but clash with something on a Pi header.
func warnPin(log *slog.Logger, field, name string) {
	var why string
	switch NormalizePinName(name) {
	case "GPIO0", "GPIO1":
		why = "reserved for the HAT ID EEPROM"
	case "GPIO2", "GPIO3":
		why = "has a fixed 1.8 kΩ pull-up to 3.3 V (I2C); only active-low inputs work"
	case "GPIO14", "GPIO15":
		why = "is the serial console (UART) if enabled"
	default:
		return
	}
	log.Warn("hw: pin "+why, "field", field, "pin", name)
}
