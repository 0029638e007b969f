// Package hw drives the tower's button, tumble motor and light through
// periph.io GPIO and sysfs PWM, and enforces the motor's safety limits.
package hw

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"periph.io/x/conn/v3/gpio"

	"github.com/towerd/towerd/clock"
)

// Errors callers map to the contract's codes: all but ErrBusy are the
// "hardware" code. They are returned wrapped, so test with errors.Is.
var (
	// ErrDutyLimit: the tumble would put the motor over its duty limit; it
	// was refused and the motor never started.
	ErrDutyLimit = errors.New("motor duty limit")
	// ErrOnTimeLimit: the tumble asked for more continuous on-time than
	// MaxOn allows; the motor was cut off at MaxOn.
	ErrOnTimeLimit = errors.New("motor on-time limit")
	// ErrFault: a pin or PWM write failed, or a panic was recovered.
	ErrFault = errors.New("hardware fault")
	// ErrStopped: the tumble was stopped by Off, Close or a signal.
	ErrStopped = errors.New("motor stopped")
	// ErrShutdown: the process is stopping (OffOnSignal saw a signal): the
	// tumble was stopped, or refused, and the motor stays off from then on.
	// The roll it served was aborted, not failed.
	ErrShutdown = errors.New("motor off for shutdown")
	// ErrBusy: another tumble is running.
	ErrBusy = errors.New("motor busy")
	// ErrClosed: the tower was closed.
	ErrClosed = errors.New("hardware closed")
)

// ButtonKind tells a short press from a long one.
type ButtonKind int

const (
	Press     ButtonKind = iota + 1 // released before the long-press time
	LongPress                       // held for the long-press time
)

func (k ButtonKind) String() string {
	switch k {
	case Press:
		return "press"
	case LongPress:
		return "long_press"
	}
	return fmt.Sprintf("ButtonKind(%d)", int(k))
}

// ButtonEvent is one debounced press.
type ButtonEvent struct {
	Kind ButtonKind
	At   time.Time     // when it was recognised
	Held time.Duration // how long the button was down (LongPress: the threshold)
}

// Button delivers debounced presses.
type Button interface {
	// Events delivers presses; it is closed when the tower is closed.
	Events() <-chan ButtonEvent
}

// Motor runs tumble profiles within the safety limits.
type Motor interface {
	// Tumble runs p (zero fields from the configured profile) and returns
	// when it is done or aborted, with the motor off in every case. Errors
	// wrap ErrDutyLimit, ErrOnTimeLimit, ErrFault, ErrStopped, ErrBusy,
	// ErrClosed or the context's error.
	Tumble(ctx context.Context, p Profile) error
	// Off turns the motor off at once and aborts a running tumble. Safe to
	// call at any time, from any goroutine, any number of times.
	Off() error
}

// Light is the LED over the tray.
type Light interface {
	On() error
	Off() error
}

// Offer is anything that can be switched off: Motor and Light.
type Offer interface{ Off() error }

// MotorEvent is published as motor_start / motor_stop.
type MotorEvent struct {
	Kind   string // "motor_start" or "motor_stop"
	At     time.Time
	Driver string
	// Reason says why it stopped: "done", "limit", "cancel", "off",
	// "close", "fault" or "panic". Empty for motor_start.
	Reason string
	On     time.Duration // on-time of this run (motor_stop)
}

// Pins are the lines a Tower drives, already resolved: Open looks them up
// by name with periph.io, hwtest makes fakes. Unused ones may be nil.
type Pins struct {
	Button   gpio.PinIn
	Motor    gpio.PinOut // MotorConfig.Pin: on/off or enable line
	MotorPWM gpio.PinOut // MotorConfig.PWM: the pwm driver's speed, or stepper STEP pulses
	Step     gpio.PinOut // MotorConfig.StepPin
	Dir      gpio.PinOut
	Light    gpio.PinOut // a GPIO, or a PWM channel when the light dims
}

// Tower is the assembled hardware. Button, Motor and Light are never nil:
// parts the configuration leaves out do nothing.
type Tower struct {
	Button Button
	Motor  Motor
	Light  Light

	cfg    Config
	log    *slog.Logger
	btn    *button
	motor  *motor
	light  *light
	pins   Pins
	closed sync.Once
	cerr   error
}

// New assembles a tower from resolved pins. cfg gets its defaults applied
// and is validated; clk drives debounce and every motor limit.
func New(cfg Config, pins Pins, clk clock.Clock, log *slog.Logger) (*Tower, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	t := &Tower{cfg: cfg, log: log, pins: pins}
	var err error
	if t.motor, err = newMotor(cfg.Motor, pins, clk, log); err != nil {
		return nil, err
	}
	t.light = newLight(cfg.Light, pins.Light)
	if err := t.light.Off(); err != nil {
		t.motor.Close()
		return nil, err
	}
	if t.btn, err = newButton(cfg.Button, pins.Button, clk, log); err != nil {
		t.motor.Close()
		return nil, err
	}
	t.Button, t.Motor, t.Light = t.btn, t.motor, t.light
	return t, nil
}

// Config returns the configuration in use, defaults applied.
func (t *Tower) Config() Config { return t.cfg }

// Observe sets the function told of every motor start and stop (for the
// MQTT event topic). It runs on its own goroutine, so it may block briefly
// without delaying the motor; nil removes it.
func (t *Tower) Observe(fn func(MotorEvent)) { t.motor.observe(fn) }

// Close turns the motor and light off, stops the button watcher (closing
// its Events channel) and releases PWM channels. Safe to call twice.
func (t *Tower) Close() error {
	t.closed.Do(func() {
		errs := []error{t.motor.Close(), t.light.Off(), t.btn.Close()}
		for _, p := range []any{t.pins.MotorPWM, t.pins.Light} {
			if c, ok := p.(io.Closer); ok {
				errs = append(errs, c.Close())
			}
		}
		t.cerr = errors.Join(errs...)
	})
	return t.cerr
}

// Guard is for a defer in the goroutine that rolls: it turns the motor and
// light off on every exit and, if that goroutine is panicking, recovers and
// stores the panic in *errp as an error wrapping ErrFault (re-panicking
// when errp is nil, after the motor is off).
//
//	func (d *Daemon) roll(ctx context.Context) (err error) {
//		defer d.tower.Guard(&err)
//		...
func (t *Tower) Guard(errp *error) {
	r := recover()
	guard(t.log, r, errp, t.motor, t.light)
}

// Guard is Tower.Guard for any set of motors and lights:
//
//	defer hw.Guard(&err, motor, light)
func Guard(errp *error, offs ...Offer) {
	r := recover()
	guard(slog.Default(), r, errp, offs...)
}

func guard(log *slog.Logger, r any, errp *error, offs ...Offer) {
	var offErr error
	for _, o := range offs {
		if o == nil {
			continue
		}
		if err := o.Off(); err != nil {
			offErr = errors.Join(offErr, err)
		}
	}
	if r == nil {
		if offErr != nil && errp != nil && *errp == nil {
			*errp = fmt.Errorf("hw: guard: switch off: %w: %w", ErrFault, offErr)
		}
		return
	}
	log.Error("hw: panic recovered, motor and light off", "panic", r, "stack", string(debug.Stack()))
	if errp == nil {
		panic(r)
	}
	*errp = fmt.Errorf("hw: panic: %v: %w", r, ErrFault)
}

// OffOnSignal turns the motor off the moment one of sigs (default SIGTERM
// and SIGINT) arrives, before the daemon's own shutdown gets there. The
// signal still reaches other signal.Notify users. Call stop to undo.
func (t *Tower) OffOnSignal(sigs ...os.Signal) (stop func()) {
	if len(sigs) == 0 {
		sigs = defaultSignals
	}
	c := make(chan os.Signal, 1)
	signal.Notify(c, sigs...)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case s := <-c:
				t.log.Info("hw: signal, motor off", "signal", s.String())
				if err := t.motor.shutdown(); err != nil {
					t.log.Error("hw: motor off on signal", "err", err)
				}
				_ = t.light.Off()
			case <-done:
				return
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			signal.Stop(c)
			close(done)
			<-finished
		})
	}
}

var defaultSignals = []os.Signal{os.Interrupt, syscall.SIGTERM}

// WithLight turns l on for the duration of fn (the camera read) and off
// again however fn ends.
func WithLight(l Light, fn func() error) (err error) {
	if err := l.On(); err != nil {
		_ = l.Off()
		return err
	}
	defer func() {
		if offErr := l.Off(); offErr != nil && err == nil {
			err = offErr
		}
	}()
	return fn()
}

// level is the pin level for an active or inactive output.
func level(active, activeLow bool) gpio.Level { return gpio.Level(active != activeLow) }
