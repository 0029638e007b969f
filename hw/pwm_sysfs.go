package hw

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/physic"
)

// DefaultSysfsPWM is where the kernel exposes PWM chips.
const DefaultSysfsPWM = "/sys/class/pwm"

// SysfsPWM is one channel of the kernel's sysfs PWM interface, used as a
// gpio.PinOut: PWM sets a duty, Out(High) is full on, Out(Low) is off. It
// works on every Pi, including the Pi 5's RP1, where periph's gpioioctl
// driver has no PWM.
type SysfsPWM struct {
	mu       sync.Mutex
	dir      string // .../pwmchipN/pwmM
	chipDir  string
	channel  int
	name     string
	periodNs int64
	enabled  bool
	exported bool // exported by us, so unexported on Close
}

var _ gpio.PinOut = (*SysfsPWM)(nil)

// OpenPWM exports (if needed) and opens a sysfs PWM channel, with duty 0.
func OpenPWM(c PWMConfig) (*SysfsPWM, error) {
	root := c.Sysfs
	if root == "" {
		root = DefaultSysfsPWM
	}
	chipDir := filepath.Join(root, fmt.Sprintf("pwmchip%d", c.Chip))
	p := &SysfsPWM{
		chipDir: chipDir, channel: c.Channel,
		dir:  filepath.Join(chipDir, fmt.Sprintf("pwm%d", c.Channel)),
		name: fmt.Sprintf("pwmchip%d/pwm%d", c.Chip, c.Channel),
	}
	if _, err := os.Stat(chipDir); err != nil {
		return nil, fmt.Errorf("hw: PWM %s: no such chip (%s); enable PWM with a dtoverlay, see docs/hardware.md", p.name, listChips(root))
	}
	if b, err := os.ReadFile(filepath.Join(chipDir, "npwm")); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && c.Channel >= n {
			return nil, fmt.Errorf("hw: PWM %s: pwmchip%d has channels 0..%d", p.name, c.Chip, n-1)
		}
	}
	if _, err := os.Stat(p.dir); errors.Is(err, os.ErrNotExist) {
		if err := os.WriteFile(filepath.Join(chipDir, "export"), []byte(strconv.Itoa(c.Channel)), 0); err != nil {
			return nil, fmt.Errorf("hw: PWM %s: export: %w (is the user in group gpio? see docs/hardware.md)", p.name, err)
		}
		p.exported = true
		// udev sets the new files' group a moment after they appear.
		if err := waitWritable(filepath.Join(p.dir, "enable"), time.Second); err != nil {
			return nil, fmt.Errorf("hw: PWM %s: after export: %w", p.name, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(p.dir, "period")); err == nil {
		p.periodNs, _ = strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	}
	if err := p.Out(gpio.Low); err != nil {
		return nil, err
	}
	return p, nil
}

func waitWritable(path string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err == nil {
			return f.Close()
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(10 * time.Millisecond) // polling the kernel, not synchronising tests
	}
}

func listChips(root string) string {
	m, _ := filepath.Glob(filepath.Join(root, "pwmchip*"))
	if len(m) == 0 {
		return "this board has no PWM chips enabled"
	}
	var s []string
	for _, d := range m {
		n := "?"
		if b, err := os.ReadFile(filepath.Join(d, "npwm")); err == nil {
			n = strings.TrimSpace(string(b))
		}
		s = append(s, fmt.Sprintf("%s (%s channels)", filepath.Base(d), n))
	}
	sort.Strings(s)
	return "this board has " + strings.Join(s, ", ")
}

func (p *SysfsPWM) write(file string, v int64) error {
	if err := os.WriteFile(filepath.Join(p.dir, file), []byte(strconv.FormatInt(v, 10)), 0); err != nil {
		return fmt.Errorf("hw: PWM %s: write %s=%d: %w", p.name, file, v, err)
	}
	return nil
}

// PWM sets duty at frequency f (0 keeps the current period).
func (p *SysfsPWM) PWM(duty gpio.Duty, f physic.Frequency) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	period := p.periodNs
	if f > 0 {
		period = int64(physic.Hertz) * int64(time.Second) / int64(f)
	}
	if period <= 0 {
		return fmt.Errorf("hw: PWM %s: no frequency set", p.name)
	}
	duty = min(max(duty, 0), gpio.DutyMax)
	return p.set(period, int64(float64(period)*float64(duty)/float64(gpio.DutyMax)+0.5))
}

// set writes period and duty in an order the kernel accepts (duty never
// above period) and enables the channel.
func (p *SysfsPWM) set(period, dutyNs int64) error {
	if period != p.periodNs {
		if err := p.write("duty_cycle", 0); err != nil {
			return err
		}
		if err := p.write("period", period); err != nil {
			return err
		}
		p.periodNs = period
	}
	if err := p.write("duty_cycle", dutyNs); err != nil {
		return err
	}
	if !p.enabled {
		if err := p.write("enable", 1); err != nil {
			return err
		}
		p.enabled = true
	}
	return nil
}

// Out drives the channel fully on (High) or off (Low). Off keeps the
// channel enabled at duty 0, so the pin is driven low rather than left to
// the controller's idle state.
func (p *SysfsPWM) Out(l gpio.Level) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	period := p.periodNs
	if period <= 0 {
		period = int64(time.Second) / DefaultMotorPWMHz
	}
	var d int64
	if l {
		d = period
	}
	return p.set(period, d)
}

// Halt sets duty 0.
func (p *SysfsPWM) Halt() error { return p.Out(gpio.Low) }

// Close sets duty 0, disables the channel and unexports it if OpenPWM
// exported it.
func (p *SysfsPWM) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	errs := []error{p.write("duty_cycle", 0), p.write("enable", 0)}
	p.enabled = false
	if p.exported {
		errs = append(errs, os.WriteFile(filepath.Join(p.chipDir, "unexport"), []byte(strconv.Itoa(p.channel)), 0))
		p.exported = false
	}
	return errors.Join(errs...)
}

func (p *SysfsPWM) String() string   { return p.name }
func (p *SysfsPWM) Name() string     { return p.name }
func (p *SysfsPWM) Number() int      { return -1 }
func (p *SysfsPWM) Function() string { return "PWM" }
