package hw

import (
	"errors"
	"fmt"
	"time"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/physic"

	"github.com/towerd/towerd/clock"
)

// driver switches a motor's outputs. Methods are called with motor.mu held.
type driver interface {
	// drive turns the motor on (or changes direction and speed).
	drive(reverse bool, speed float64) error
	// stop puts every output at its inactive level; idempotent.
	stop() error
	close() error
}

func newDriver(c MotorConfig, pins Pins, clk clock.Clock) (driver, error) {
	need := func(p gpio.PinOut, field string) error {
		if p == nil {
			return fmt.Errorf("hw: motor %s driver: no pin for %s", c.Driver, field)
		}
		return nil
	}
	dir := dirOut{pins.Dir, c.DirInvert}
	en := line{pins.Motor, c.ActiveLow}
	switch c.Driver {
	case DriverNone:
		return nil, nil
	case DriverOnOff:
		if err := need(pins.Motor, "motor.pin"); err != nil {
			return nil, err
		}
		return &onoffDriver{en: en}, nil
	case DriverDirection:
		if err := errors.Join(need(pins.Motor, "motor.pin"), need(pins.Dir, "motor.dir_pin")); err != nil {
			return nil, err
		}
		return &onoffDriver{en: en, dir: dir}, nil
	case DriverPWM:
		if err := need(pins.MotorPWM, "motor.pwm"); err != nil {
			return nil, err
		}
		return &pwmDriver{out: pins.MotorPWM, activeLow: c.ActiveLow, hz: c.PWM.Hz, en: en, dir: dir}, nil
	case DriverStepper:
		step, hwPWM := pins.Step, false
		if c.PWM != nil {
			step, hwPWM = pins.MotorPWM, true
		}
		if err := need(step, "motor.step_pin"); err != nil {
			return nil, err
		}
		return &stepperDriver{step: step, hwPWM: hwPWM, rate: c.StepRate, dir: dir, en: en, clk: clk}, nil
	}
	return nil, fmt.Errorf("hw: motor driver %q unknown", c.Driver)
}

// line is an optional on/off output with its polarity.
type line struct {
	out       gpio.PinOut
	activeLow bool
}

func (l line) set(on bool) error {
	if l.out == nil {
		return nil
	}
	return l.out.Out(level(on, l.activeLow))
}

// dirOut is an optional direction pin: low is forward unless inverted.
type dirOut struct {
	out    gpio.PinOut
	invert bool
}

func (d dirOut) set(reverse bool) error {
	if d.out == nil {
		return nil
	}
	return d.out.Out(gpio.Level(reverse != d.invert))
}

// rest leaves the direction pin low, so an idle tower has every line low.
func (d dirOut) rest() error {
	if d.out == nil {
		return nil
	}
	return d.out.Out(gpio.Low)
}

// onoffDriver is a MOSFET or relay, or with a direction line an H-bridge
// whose enable input is switched fully on.
type onoffDriver struct {
	en  line
	dir dirOut
}

func (d *onoffDriver) drive(reverse bool, _ float64) error {
	if err := d.dir.set(reverse); err != nil {
		return err
	}
	return d.en.set(true)
}

func (d *onoffDriver) stop() error {
	return errors.Join(d.en.set(false), d.dir.rest())
}

func (d *onoffDriver) close() error { return nil }

// pwmDriver sets the speed as the duty of a sysfs PWM channel, with an
// optional enable/standby line switched alongside.
type pwmDriver struct {
	out       gpio.PinOut
	activeLow bool
	hz        int
	en        line
	dir       dirOut
}

func (d *pwmDriver) drive(reverse bool, speed float64) error {
	if err := d.dir.set(reverse); err != nil {
		return err
	}
	if err := d.en.set(true); err != nil {
		return err
	}
	return d.out.PWM(dutyOf(speed, d.activeLow), physic.Frequency(d.hz)*physic.Hertz)
}

func (d *pwmDriver) stop() error {
	return errors.Join(d.out.Out(level(false, d.activeLow)), d.en.set(false), d.dir.rest())
}

func (d *pwmDriver) close() error { return nil }

// stepperDriver pulses STEP: in hardware when STEP is a PWM channel (steady
// timing, no CPU), else from a goroutine paced by the clock.
type stepperDriver struct {
	step  gpio.PinOut
	hwPWM bool
	rate  float64
	dir   dirOut
	en    line // optional EN
	clk   clock.Clock

	quit chan struct{} // software stepping: closed to stop
	done chan struct{}
}

func (d *stepperDriver) drive(reverse bool, speed float64) error {
	d.stopStepping()
	if err := d.dir.set(reverse); err != nil {
		return err
	}
	if err := d.en.set(true); err != nil {
		return err
	}
	rate := max(d.rate*speed, 1)
	if d.hwPWM {
		return d.step.PWM(gpio.DutyHalf, physic.Frequency(rate*float64(physic.Hertz)))
	}
	half := max(time.Duration(float64(time.Second)/rate/2), 20*time.Microsecond)
	d.quit, d.done = make(chan struct{}), make(chan struct{})
	go d.pulse(half, d.quit, d.done)
	return nil
}

func (d *stepperDriver) pulse(half time.Duration, quit, done chan struct{}) {
	defer close(done)
	var l gpio.Level
	for {
		t := d.clk.NewTimer(half)
		select {
		case <-quit:
			t.Stop()
			return
		case <-t.C():
		}
		l = !l
		if err := d.step.Out(l); err != nil {
			return // stop() reports the pin's error
		}
	}
}

func (d *stepperDriver) stopStepping() {
	if d.quit != nil {
		close(d.quit)
		<-d.done
		d.quit, d.done = nil, nil
	}
}

func (d *stepperDriver) stop() error {
	d.stopStepping()
	return errors.Join(d.en.set(false), d.step.Out(gpio.Low), d.dir.rest())
}

func (d *stepperDriver) close() error { return nil }
