package hw_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/gpio/gpioreg"
	"periph.io/x/conn/v3/gpio/gpiotest"
	"periph.io/x/conn/v3/physic"

	"github.com/towerd/towerd/clock"
	"github.com/towerd/towerd/hw"
	"github.com/towerd/towerd/hw/hwtest"
)

func TestLight(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  hw.LightConfig
		on   gpio.Duty
		off  gpio.Duty
	}{
		{"gpio", hw.LightConfig{Pin: "GPIO22"}, gpio.DutyMax, 0},
		{"gpio-active-low", hw.LightConfig{Pin: "GPIO22", ActiveLow: true}, 0, gpio.DutyMax},
		{"pwm-dimmed", hw.LightConfig{PWM: &hw.PWMConfig{Chip: 0, Channel: 1}, Brightness: 0.25}, gpio.DutyMax / 4, 0},
		{"pwm-full", hw.LightConfig{PWM: &hw.PWMConfig{Chip: 0, Channel: 1}}, gpio.DutyMax, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, _ := newSim(t, hw.Config{Light: c.cfg})
			if d := s.LightPin.Duty(); d != c.off || s.LightOn() {
				t.Fatalf("at start duty %v, want off %v", d, c.off)
			}
			if err := s.Light.On(); err != nil {
				t.Fatal(err)
			}
			if d := s.LightPin.Duty(); d != c.on || !s.LightOn() {
				t.Fatalf("on: duty %v, want %v", d, c.on)
			}
			if c.cfg.PWM != nil && c.cfg.Brightness > 0 {
				if f := s.LightPin.Frequency(); f != hw.DefaultLightPWMHz*physic.Hertz {
					t.Errorf("frequency %v", f)
				}
			}
			s.Close() // Close darkens the tray too
			if d := s.LightPin.Duty(); d != c.off {
				t.Fatalf("after Close duty %v, want %v", d, c.off)
			}
		})
	}
}

func TestWithLightTurnsOffOnError(t *testing.T) {
	s, _ := newSim(t, hw.Config{Light: hw.LightConfig{Pin: "GPIO22"}})
	boom := errors.New("camera gone")
	err := hw.WithLight(s.Light, func() error {
		if !s.LightOn() {
			t.Error("light off while reading")
		}
		return boom
	})
	if !errors.Is(err, boom) || s.LightOn() {
		t.Fatalf("err %v, light on %v", err, s.LightOn())
	}
	func() {
		defer func() { _ = recover() }()
		_ = hw.WithLight(s.Light, func() error { panic("reader bug") })
	}()
	if s.LightOn() {
		t.Fatal("light left on after a panic")
	}
}

func TestConfigValidation(t *testing.T) {
	ok := hw.DefaultConfig()
	if err := ok.Validate(); err != nil {
		t.Fatalf("default config: %v", err)
	}
	for _, c := range []struct {
		field string
		mod   func(*hw.Config)
	}{
		{"button.pull", func(c *hw.Config) { c.Button.Pull = "sideways" }},
		{"button.debounce", func(c *hw.Config) { c.Button.Debounce = 5 * time.Second }},
		{"button.long_press", func(c *hw.Config) { c.Button.LongPress = 10 * time.Millisecond }},
		{"motor.driver", func(c *hw.Config) { c.Motor.Driver = "turbine" }},
		{"motor.pin", func(c *hw.Config) { c.Motor.Pin = "" }},
		{"motor.dir_pin", func(c *hw.Config) { c.Motor.Driver = "hbridge" }},
		{"motor.pwm", func(c *hw.Config) { c.Motor.Driver = hw.DriverPWM }},
		{"motor.max_on", func(c *hw.Config) { c.Motor.MaxOn = time.Hour }},
		{"motor.duty_max", func(c *hw.Config) { c.Motor.DutyMax = 1.5 }},
		{"motor.profile.speed", func(c *hw.Config) { c.Motor.Profile.Speed = 2 }},
		{"motor.profile.reverse", func(c *hw.Config) { c.Motor.Profile.Reverse = 3 * time.Second }},
		{"motor.step_pin", func(c *hw.Config) { c.Motor.Driver = hw.DriverStepper }},
		{"light.brightness", func(c *hw.Config) { c.Light.Brightness = 0.5 }},
		{"light.pin", func(c *hw.Config) { c.Light.Pin = "gpio17" }}, // the button's
		{"motor.step_rate", func(c *hw.Config) {
			c.Motor = hw.MotorConfig{Driver: hw.DriverStepper, StepPin: "GPIO5", DirPin: "GPIO6", StepRate: -1}
		}},
	} {
		cfg := hw.DefaultConfig()
		c.mod(&cfg)
		err := cfg.WithDefaults().Validate()
		if err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: err %v, want one naming the field", c.field, err)
		}
	}
}

func FuzzNormalizePinName(f *testing.F) {
	for _, s := range []string{"GPIO17", "17", "gpio07", " GPIO4 ", "P1_11", "", "GPIO", "gpio-1", "٣"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := hw.NormalizePinName(s)
		if hw.NormalizePinName(n) != n {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, n, hw.NormalizePinName(n))
		}
	})
}

func TestNormalizePinName(t *testing.T) {
	for in, want := range map[string]string{"17": "GPIO17", "gpio17": "GPIO17", " GPIO04": "GPIO4", "0": "GPIO0", "P1_11": "P1_11", "GPIOX": "GPIOX"} {
		if got := hw.NormalizePinName(in); got != want {
			t.Errorf("%q -> %q, want %q", in, got, want)
		}
	}
}

func TestLookupPinListsBoardPins(t *testing.T) {
	for i, n := range []string{"GPIO905", "GPIO906"} {
		if err := gpioreg.Register(&gpiotest.Pin{N: n, Num: 905 + i}); err != nil {
			t.Fatal(err)
		}
	}
	defer gpioreg.Unregister("GPIO905")
	defer gpioreg.Unregister("GPIO906")
	if p, err := hw.LookupPin("905"); err != nil || p.Name() != "GPIO905" {
		t.Fatalf("LookupPin(905) = %v, %v", p, err)
	}
	_, err := hw.LookupPin("GPIO99")
	if err == nil || !strings.Contains(err.Error(), `"GPIO99"`) || !strings.Contains(err.Error(), "GPIO905, GPIO906") {
		t.Fatalf("error %v should name the pin and list the board's", err)
	}
}

func TestSimRejectsUnknownPin(t *testing.T) {
	_, err := hwtest.NewTower(hw.Config{Button: hw.ButtonConfig{Pin: "GPIO40"}}, clock.NewFake(t0), quiet())
	if err == nil || !strings.Contains(err.Error(), "GPIO0..GPIO27") || !strings.Contains(err.Error(), "button.pin") {
		t.Fatalf("err = %v", err)
	}
}

func TestSimPress(t *testing.T) {
	s, clk := newSim(t, hw.Config{Button: hw.ButtonConfig{Pin: "GPIO17", ActiveLow: true}})
	done := make(chan struct{})
	go func() { s.Press(0); close(done) }()
	clk.BlockUntil(2) // the watcher's debounce wait and Press's hold
	clk.Advance(hw.DefaultDebounce)
	clk.BlockUntil(2) // debounced; the hold goes on
	clk.Advance(hw.DefaultDebounce * 2)
	<-done
	clk.BlockUntil(1)
	clk.Advance(hw.DefaultDebounce)
	if e := <-s.Button.Events(); e.Kind != hw.Press || e.Held != 3*hw.DefaultDebounce {
		t.Fatalf("event %+v", e)
	}
}

// fakeSysfs lays out /sys/class/pwm/pwmchip0 with channel ch exported.
func fakeSysfs(t *testing.T, ch int) string {
	root := t.TempDir()
	chip := filepath.Join(root, "pwmchip0")
	pwm := filepath.Join(chip, "pwm"+string(rune('0'+ch)))
	if err := os.MkdirAll(pwm, 0o755); err != nil {
		t.Fatal(err)
	}
	for f, v := range map[string]string{
		"pwmchip0/npwm": "2\n", "pwmchip0/export": "", "pwmchip0/unexport": "",
		"pwmchip0/pwm" + string(rune('0'+ch)) + "/period":     "0\n",
		"pwmchip0/pwm" + string(rune('0'+ch)) + "/duty_cycle": "0\n",
		"pwmchip0/pwm" + string(rune('0'+ch)) + "/enable":     "0\n",
	} {
		if err := os.WriteFile(filepath.Join(root, f), []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func readSys(t *testing.T, root, f string) string {
	b, err := os.ReadFile(filepath.Join(root, "pwmchip0", f))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func TestSysfsPWM(t *testing.T) {
	root := fakeSysfs(t, 1)
	p, err := hw.OpenPWM(hw.PWMConfig{Chip: 0, Channel: 1, Sysfs: root})
	if err != nil {
		t.Fatal(err)
	}
	if got := readSys(t, root, "pwm1/duty_cycle"); got != "0" {
		t.Fatalf("duty after open %s", got)
	}
	if err := p.PWM(gpio.DutyHalf, physic.KiloHertz); err != nil {
		t.Fatal(err)
	}
	for f, want := range map[string]string{"pwm1/period": "1000000", "pwm1/duty_cycle": "500000", "pwm1/enable": "1"} {
		if got := readSys(t, root, f); got != want {
			t.Errorf("%s = %s, want %s", f, got, want)
		}
	}
	if err := p.Out(gpio.High); err != nil {
		t.Fatal(err)
	}
	if got := readSys(t, root, "pwm1/duty_cycle"); got != "1000000" {
		t.Errorf("full on duty %s", got)
	}
	if err := p.Out(gpio.Low); err != nil {
		t.Fatal(err)
	}
	if got := readSys(t, root, "pwm1/duty_cycle"); got != "0" {
		t.Errorf("off duty %s", got)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if got := readSys(t, root, "pwm1/enable"); got != "0" {
		t.Errorf("enable after Close %s", got)
	}

	_, err = hw.OpenPWM(hw.PWMConfig{Chip: 3, Channel: 0, Sysfs: root})
	if err == nil || !strings.Contains(err.Error(), "pwmchip0 (2 channels)") {
		t.Errorf("missing chip error %v should list the chips", err)
	}
	_, err = hw.OpenPWM(hw.PWMConfig{Chip: 0, Channel: 2, Sysfs: root})
	if err == nil || !strings.Contains(err.Error(), "channels 0..1") {
		t.Errorf("bad channel error %v", err)
	}
}

// TestOpenDimmedLight runs the real Open path with only a sysfs PWM light,
// which needs no GPIO chip.
func TestOpenDimmedLight(t *testing.T) {
	root := fakeSysfs(t, 0)
	cfg := hw.Config{Light: hw.LightConfig{PWM: &hw.PWMConfig{Chip: 0, Channel: 0, Sysfs: root}, Brightness: 0.5}}
	tw, err := hw.Open(cfg, quiet())
	if err != nil {
		t.Fatal(err)
	}
	if err := tw.Light.On(); err != nil {
		t.Fatal(err)
	}
	if got := readSys(t, root, "pwm0/duty_cycle"); got != "500000" { // 1 kHz, half
		t.Errorf("duty %s, want 500000", got)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if got := readSys(t, root, "pwm0/enable"); got != "0" {
		t.Errorf("enable after Close %s", got)
	}
}
