package hw

import (
	"fmt"
	"sync"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/physic"
)

// light drives the LED: a plain GPIO, or a PWM channel when dimmed.
type light struct {
	mu        sync.Mutex
	out       gpio.PinOut // nil: no light
	activeLow bool
	pwm       bool
	hz        int
	bright    float64
	on        bool
}

var _ Light = (*light)(nil)

func newLight(c LightConfig, out gpio.PinOut) *light {
	l := &light{out: out, activeLow: c.ActiveLow, bright: c.Brightness}
	if c.PWM != nil {
		l.pwm, l.hz = true, c.PWM.Hz
	}
	return l
}

// On lights the tray; with PWM at the configured brightness.
func (l *light) On() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.out == nil {
		return nil
	}
	var err error
	if l.pwm && l.bright < 1 {
		err = l.out.PWM(dutyOf(l.bright, l.activeLow), physic.Frequency(l.hz)*physic.Hertz)
	} else {
		err = l.out.Out(level(true, l.activeLow))
	}
	if err != nil {
		return fmt.Errorf("hw: light on (%s): %w: %w", l.out, ErrFault, err)
	}
	l.on = true
	return nil
}

// Off darkens the tray.
func (l *light) Off() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.out == nil {
		return nil
	}
	l.on = false
	if err := l.out.Out(level(false, l.activeLow)); err != nil {
		return fmt.Errorf("hw: light off (%s): %w: %w", l.out, ErrFault, err)
	}
	return nil
}

// dutyOf converts a 0..1 drive level into a PWM duty, inverted for
// active-low outputs.
func dutyOf(x float64, activeLow bool) gpio.Duty {
	if x < 0 {
		x = 0
	}
	if x > 1 {
		x = 1
	}
	if activeLow {
		x = 1 - x
	}
	return gpio.Duty(x*float64(gpio.DutyMax) + 0.5)
}
