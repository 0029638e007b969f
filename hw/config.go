package hw

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Motor driver kinds for MotorConfig.Driver.
const (
	DriverNone      = "none"      // no motor: Tumble returns at once
	DriverOnOff     = "onoff"     // MOSFET or relay on Pin
	DriverDirection = "direction" // H-bridge: enable on Pin, direction on DirPin ("hbridge" is accepted too)
	DriverPWM       = "pwm"       // speed by sysfs PWM (MotorConfig.PWM); optional enable Pin and DirPin
	DriverStepper   = "stepper"   // STEP on StepPin (or sysfs PWM); optional DirPin and enable Pin
)

// Pull settings for ButtonConfig.Pull.
const (
	PullAuto = ""     // up when ActiveLow, down otherwise
	PullUp   = "up"   // internal pull-up
	PullDown = "down" // internal pull-down
	PullNone = "none" // external resistor
)

// Defaults applied to zero fields by Config.WithDefaults.
const (
	DefaultDebounce     = 30 * time.Millisecond
	DefaultLongPress    = time.Second
	DefaultMaxOn        = 5 * time.Second
	DefaultDutyWindow   = 60 * time.Second
	DefaultDutyMax      = 0.5
	DefaultReversePause = 50 * time.Millisecond
	DefaultRun          = 1500 * time.Millisecond
	DefaultStepRate     = 800 // steps per second at speed 1
	DefaultMotorPWMHz   = 20000
	DefaultLightPWMHz   = 1000
)

// Config says how the tower is wired and how the motor may be driven. Zero
// fields take the defaults above (see WithDefaults); the config package maps
// the YAML file onto it.
type Config struct {
	Button ButtonConfig
	Motor  MotorConfig
	Light  LightConfig
}

// ButtonConfig describes the push button.
type ButtonConfig struct {
	// Pin is the GPIO name ("GPIO17"; "17" and "gpio17" are accepted).
	// Empty means no button.
	Pin string
	// ActiveLow is true when a press pulls the pin low (button to GND with a
	// pull-up): the recommended wiring.
	ActiveLow bool
	// Pull is PullUp, PullDown, PullNone or PullAuto.
	Pull string
	// Debounce is how long the level must stay put before it counts.
	Debounce time.Duration
	// LongPress is the hold time that makes a LongPress instead of a Press.
	// Negative disables long presses: a Press is then sent as soon as the
	// button is down (lowest latency) instead of on release.
	LongPress time.Duration
}

// MotorConfig describes the tumble motor, its driver and its safety limits.
type MotorConfig struct {
	Driver string // DriverNone, DriverOnOff, DriverDirection, DriverPWM or DriverStepper
	// Pin is the on/off line (onoff), the bridge's enable (direction), or an
	// optional enable/standby line switched with the motor (pwm; stepper,
	// e.g. the A4988's EN, which is active low).
	Pin string
	// ActiveLow inverts Pin and the pwm driver's PWM (relay boards, EN).
	ActiveLow bool
	// DirPin sets the direction (required by direction, optional for pwm
	// and stepper). Low is forward unless DirInvert.
	DirPin    string
	DirInvert bool
	// StepPin is the stepper's STEP line when it is not a PWM channel.
	StepPin string
	// PWM is the sysfs PWM channel for speed (pwm) or for hardware-timed
	// step pulses (stepper). Nil: none.
	PWM *PWMConfig
	// StepRate is the stepper's steps per second at speed 1.
	StepRate float64

	// MaxOn is the hard limit of continuous on-time, whatever a caller asks.
	MaxOn time.Duration
	// The motor may be on at most DutyMax (0..1] of any DutyWindow.
	DutyWindow time.Duration
	DutyMax    float64
	// ReversePause is the off time before a reverse jolt (protects the
	// H-bridge from switching direction under load).
	ReversePause time.Duration

	// Profile fills the fields a Tumble request leaves zero.
	Profile Profile
}

// PWMConfig names a channel of the kernel's sysfs PWM (/sys/class/pwm), which
// works on every Pi including the Pi 5 (periph's gpioioctl has no PWM).
type PWMConfig struct {
	Chip    int // /sys/class/pwm/pwmchipN
	Channel int // pwmM under that chip
	// Hz is the PWM frequency; 0: DefaultMotorPWMHz for a motor,
	// DefaultLightPWMHz for the light (a stepper uses its step rate).
	Hz int
	// Sysfs overrides /sys/class/pwm (tests).
	Sysfs string
}

// LightConfig describes the LED over the tray.
type LightConfig struct {
	Pin       string // empty and PWM nil: no light
	ActiveLow bool
	PWM       *PWMConfig // optional: dimmable through sysfs PWM
	// Brightness is the PWM duty (0..1] while on; 0 means full.
	Brightness float64
}

// Profile is one tumble: run forward for Run at Speed, optionally jolt in
// reverse for Reverse (drivers with a direction line), then switch off and
// hold off for Brake before Tumble returns, so the drum has stopped when
// the camera looks. Zero fields take the configured defaults; a negative
// Reverse or Brake means none even if the default has one.
type Profile struct {
	Run     time.Duration
	Speed   float64 // (0, 1]; PWM duty or fraction of StepRate, ignored by on/off drivers
	Reverse time.Duration
	Brake   time.Duration
}

// DefaultConfig is the wiring docs/hardware.md recommends: an active-low
// button on GPIO17, a MOSFET motor driver on GPIO27, the light on GPIO22.
func DefaultConfig() Config {
	c := Config{
		Button: ButtonConfig{Pin: "GPIO17", ActiveLow: true},
		Motor:  MotorConfig{Driver: DriverOnOff, Pin: "GPIO27"},
		Light:  LightConfig{Pin: "GPIO22"},
	}
	return c.WithDefaults()
}

// WithDefaults returns c with zero durations and limits set to the defaults.
func (c Config) WithDefaults() Config {
	b := &c.Button
	b.Pin = strings.TrimSpace(b.Pin)
	if b.Debounce == 0 {
		b.Debounce = DefaultDebounce
	}
	if b.LongPress == 0 {
		b.LongPress = DefaultLongPress
	}
	m := &c.Motor
	m.Driver = strings.ToLower(strings.TrimSpace(m.Driver))
	switch m.Driver {
	case "":
		m.Driver = DriverNone
	case "hbridge":
		m.Driver = DriverDirection
	}
	if m.MaxOn == 0 {
		m.MaxOn = DefaultMaxOn
	}
	if m.DutyWindow == 0 {
		m.DutyWindow = DefaultDutyWindow
	}
	if m.DutyMax == 0 {
		m.DutyMax = DefaultDutyMax
	}
	if m.ReversePause == 0 {
		m.ReversePause = DefaultReversePause
	}
	if m.StepRate == 0 {
		m.StepRate = DefaultStepRate
	}
	if m.Profile.Run == 0 {
		m.Profile.Run = DefaultRun
	}
	if m.Profile.Speed == 0 {
		m.Profile.Speed = 1
	}
	if m.PWM != nil {
		p := *m.PWM
		if p.Hz == 0 && m.Driver != DriverStepper {
			p.Hz = DefaultMotorPWMHz
		}
		m.PWM = &p
	}
	if c.Light.Brightness == 0 {
		c.Light.Brightness = 1
	}
	if c.Light.PWM != nil {
		p := *c.Light.PWM
		if p.Hz == 0 {
			p.Hz = DefaultLightPWMHz
		}
		c.Light.PWM = &p
	}
	return c
}

// Validate reports the first impossible setting, naming its field. It
// expects defaults applied.
func (c Config) Validate() error {
	var errs []error
	bad := func(field, format string, a ...any) {
		errs = append(errs, fmt.Errorf("hw: config %s: %s", field, fmt.Sprintf(format, a...)))
	}
	b := c.Button
	switch b.Pull {
	case PullAuto, PullUp, PullDown, PullNone:
	default:
		bad("button.pull", "%q is not one of up, down, none", b.Pull)
	}
	if b.Debounce < time.Millisecond || b.Debounce > time.Second {
		bad("button.debounce", "%v is outside 1ms..1s", b.Debounce)
	}
	if b.LongPress > 0 && b.LongPress <= b.Debounce {
		bad("button.long_press", "%v must be longer than the debounce %v", b.LongPress, b.Debounce)
	}

	m := c.Motor
	switch m.Driver {
	case DriverNone:
	case DriverOnOff:
		if m.Pin == "" {
			bad("motor.pin", "the onoff driver needs a pin")
		}
	case DriverDirection:
		if m.Pin == "" {
			bad("motor.pin", "the direction driver needs an enable pin")
		}
		if m.DirPin == "" {
			bad("motor.dir_pin", "the direction driver needs a direction pin")
		}
	case DriverPWM:
		if m.PWM == nil {
			bad("motor.pwm", "the pwm driver needs a sysfs PWM chip and channel")
		}
	case DriverStepper:
		if m.StepPin == "" && m.PWM == nil {
			bad("motor.step_pin", "the stepper driver needs a STEP pin or a PWM channel")
		}
		if m.StepRate < 1 || m.StepRate > 100000 {
			bad("motor.step_rate", "%v steps/s is outside 1..100000", m.StepRate)
		}
	default:
		bad("motor.driver", "%q is not one of none, onoff, direction, pwm, stepper", m.Driver)
	}
	if m.MaxOn <= 0 || m.MaxOn > 60*time.Second {
		bad("motor.max_on", "%v is outside (0, 60s]", m.MaxOn)
	}
	if m.DutyWindow <= 0 {
		bad("motor.duty_window", "%v must be positive", m.DutyWindow)
	}
	if m.DutyMax <= 0 || m.DutyMax > 1 {
		bad("motor.duty_max", "%v is outside (0, 1]", m.DutyMax)
	}
	if m.ReversePause < 0 || m.ReversePause > time.Second {
		bad("motor.reverse_pause", "%v is outside 0..1s", m.ReversePause)
	}
	if m.Profile.Run < 0 {
		bad("motor.profile.run", "%v is negative", m.Profile.Run)
	}
	if m.Profile.Speed <= 0 || m.Profile.Speed > 1 {
		bad("motor.profile.speed", "%v is outside (0, 1]", m.Profile.Speed)
	}
	if m.Profile.Reverse > 2*time.Second {
		bad("motor.profile.reverse", "%v is over 2s", m.Profile.Reverse)
	}
	if m.Profile.Brake > 10*time.Second {
		bad("motor.profile.brake", "%v is over 10s", m.Profile.Brake)
	}
	if m.PWM != nil {
		validPWM("motor.pwm", *m.PWM, bad)
	}

	l := c.Light
	if l.Brightness < 0 || l.Brightness > 1 {
		bad("light.brightness", "%v is outside (0, 1]", l.Brightness)
	}
	if l.PWM != nil {
		validPWM("light.pwm", *l.PWM, bad)
	}
	if l.Brightness < 1 && l.PWM == nil {
		bad("light.brightness", "dimming needs light.pwm (a sysfs PWM channel)")
	}
	if m.PWM != nil && l.PWM != nil && m.PWM.Chip == l.PWM.Chip && m.PWM.Channel == l.PWM.Channel {
		bad("light.pwm", "pwmchip%d channel %d is already the motor's", l.PWM.Chip, l.PWM.Channel)
	}

	// One pin, one job.
	seen := map[string]string{}
	for _, u := range c.pinUses() {
		n := NormalizePinName(u.name)
		if prev, dup := seen[n]; dup {
			bad(u.field, "%s is already used by %s", u.name, prev)
			continue
		}
		seen[n] = u.field
	}
	return errors.Join(errs...)
}

func validPWM(field string, p PWMConfig, bad func(string, string, ...any)) {
	if p.Chip < 0 || p.Channel < 0 {
		bad(field, "chip %d channel %d: both must be >= 0", p.Chip, p.Channel)
	}
	if p.Hz < 0 || p.Hz > 1000000 {
		bad(field+".hz", "%d Hz is outside 1..1000000", p.Hz)
	}
}

type pinUse struct{ field, name string }

// pinUses lists the GPIO pins the configuration needs, with their fields.
func (c Config) pinUses() []pinUse {
	var u []pinUse
	add := func(field, name string) {
		if name != "" {
			u = append(u, pinUse{field, name})
		}
	}
	add("button.pin", c.Button.Pin)
	m := c.Motor
	switch m.Driver {
	case DriverOnOff:
		add("motor.pin", m.Pin)
	case DriverDirection, DriverPWM:
		add("motor.pin", m.Pin)
		add("motor.dir_pin", m.DirPin)
	case DriverStepper:
		add("motor.pin", m.Pin)
		add("motor.dir_pin", m.DirPin)
		if m.PWM == nil {
			add("motor.step_pin", m.StepPin)
		}
	}
	if c.Light.PWM == nil {
		add("light.pin", c.Light.Pin)
	}
	return u
}

func canReverse(m MotorConfig) bool {
	switch m.Driver {
	case DriverDirection, DriverPWM, DriverStepper:
		return m.DirPin != ""
	}
	return false
}

// NormalizePinName turns "17", "gpio17" and " GPIO17 " into "GPIO17"; other
// names (board aliases like "P1_11") are returned trimmed.
func NormalizePinName(name string) string {
	n := strings.TrimSpace(name)
	up := strings.ToUpper(n)
	digits := strings.TrimPrefix(up, "GPIO")
	if digits != "" && strings.Trim(digits, "0123456789") == "" {
		return "GPIO" + strings.TrimLeft(digits[:len(digits)-1], "0") + digits[len(digits)-1:]
	}
	return n
}
