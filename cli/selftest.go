package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/towerd/towerd/clock"
	"github.com/towerd/towerd/hw"
	"github.com/towerd/towerd/hw/hwtest"
)

func init() {
	Register(&Command{
		Name:    "selftest",
		Usage:   "selftest [--sim] [--config FILE] [--wait 10s]",
		Summary: "Check the wiring: blink the light, run the motor 300 ms, wait for one button press, and print what worked (--sim: against the simulated tower).",
		Run:     runSelftest,
	})
}

// Selftest timings: short enough to finish promptly in --sim, long enough
// to see on the tower.
const (
	selftestBlinks   = 3
	selftestBlink    = 150 * time.Millisecond
	selftestMotorRun = 300 * time.Millisecond
)

func runSelftest(ctx context.Context, env *Env, args []string) error {
	c := &Command{Name: "selftest", Usage: "selftest [--sim] [--config FILE] [--wait 10s]",
		Summary: "Blink the light, run the motor 300 ms, wait for one button press and report what worked."}
	flags := NewFlagSet(env, c)
	sim := flags.Bool("sim", false, "test the simulated tower (fake pins, the press is simulated) instead of the GPIO")
	path := flags.String("config", "", configFlagHelp)
	wait := flags.Duration("wait", 10*time.Second, "how long to wait for the button press")
	if err := ParseFlags(flags, args); err != nil {
		return err
	}
	if flags.NArg() != 0 {
		flags.Usage()
		return Exit(2, "")
	}
	cfg, _, _, err := loadConfig(*path)
	if err != nil {
		return Exit(2, err.Error())
	}
	hcfg := cfg.HW()

	var tower *hw.Tower
	var press func()
	if *sim {
		s, err := hwtest.NewTower(hcfg, clock.Real{}, env.Log)
		if err != nil {
			return Exit(2, err.Error())
		}
		tower, press = s.Tower, func() { s.Press(0) }
		fmt.Fprintln(env.Stdout, "towerd selftest: simulated tower")
	} else {
		tower, err = hw.Open(hcfg, env.Log)
		if err != nil {
			return err
		}
		fmt.Fprintln(env.Stdout, "towerd selftest: watch the tray and be ready to press the button")
	}
	defer tower.Close()
	failed := selftest(ctx, env, tower, *wait, press)
	if failed > 0 {
		return Exit(1, fmt.Sprintf("towerd selftest: %d of 3 checks failed", failed))
	}
	fmt.Fprintln(env.Stdout, "all checks passed")
	return nil
}

// selftest runs the three checks, prints one line each and returns how
// many failed. press, when set, simulates the press once the wait starts.
func selftest(ctx context.Context, env *Env, t *hw.Tower, wait time.Duration, press func()) (failed int) {
	defer t.Guard(nil) // motor and light off whatever happens
	cfg := t.Config()
	report := func(part string, err error, format string, a ...any) {
		status := "ok"
		msg := fmt.Sprintf(format, a...)
		switch {
		case errors.Is(err, errSkipped):
			status = "skip"
		case err != nil:
			status, msg = "FAIL", err.Error()
			failed++
		}
		fmt.Fprintf(env.Stdout, "%-7s %-5s %s\n", part, status, msg)
	}
	sleep := func(d time.Duration) error {
		select {
		case <-time.After(d):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}

	// Light: blink.
	if cfg.Light.Pin == "" && cfg.Light.PWM == nil {
		report("light", errSkipped, "no light configured (light.pin)")
	} else {
		err := func() error {
			for i := 0; i < selftestBlinks; i++ {
				if err := t.Light.On(); err != nil {
					return err
				}
				if err := sleep(selftestBlink); err != nil {
					return err
				}
				if err := t.Light.Off(); err != nil {
					return err
				}
				if err := sleep(selftestBlink); err != nil {
					return err
				}
			}
			return nil
		}()
		report("light", err, "blinked %d times on %s (did you see it?)", selftestBlinks, lightWhere(cfg.Light))
	}

	// Motor: one short run, no jolt, no brake.
	if cfg.Motor.Driver == hw.DriverNone {
		report("motor", errSkipped, "no motor configured (motor.driver)")
	} else {
		events := make(chan hw.MotorEvent, 4)
		t.Observe(func(e hw.MotorEvent) { events <- e })
		err := t.Motor.Tumble(ctx, hw.Profile{Run: selftestMotorRun, Reverse: -1, Brake: -1})
		var on time.Duration
	collect:
		for err == nil {
			select {
			case e := <-events:
				if e.Kind == "motor_stop" {
					on = e.On
					break collect
				}
			case <-time.After(time.Second): // events are best effort
				break collect
			}
		}
		t.Observe(nil)
		report("motor", err, "%s driver on %s: on for %v", cfg.Motor.Driver, motorWhere(cfg.Motor), on.Round(time.Millisecond))
	}

	// Button: one press.
	if cfg.Button.Pin == "" {
		report("button", errSkipped, "no button configured (button.pin)")
		return failed
	}
	fmt.Fprintf(env.Stdout, "button  ...   press the button (%s) within %v\n", cfg.Button.Pin, wait)
	start := time.Now()
	if press != nil {
		go press()
	}
	select {
	case e, ok := <-t.Button.Events():
		if !ok {
			report("button", errors.New("button watcher stopped"), "")
			break
		}
		report("button", nil, "%s after %v (held %v)", e.Kind, time.Since(start).Round(10*time.Millisecond), e.Held.Round(time.Millisecond))
	case <-time.After(wait):
		pol := "active high, pull-down"
		if cfg.Button.ActiveLow {
			pol = "active low, pull-up"
		}
		report("button", fmt.Errorf("no press within %v on %s (%s; pull %q): check the wiring in docs/hardware.md", wait, cfg.Button.Pin, pol, cfg.Button.Pull), "")
	case <-ctx.Done():
		report("button", ctx.Err(), "")
	}
	return failed
}

var errSkipped = errors.New("skipped")

func lightWhere(l hw.LightConfig) string {
	if l.PWM != nil {
		return fmt.Sprintf("pwmchip%d/pwm%d at %.0f%%", l.PWM.Chip, l.PWM.Channel, l.Brightness*100)
	}
	return l.Pin
}

func motorWhere(m hw.MotorConfig) string {
	var parts []string
	if m.PWM != nil {
		parts = append(parts, fmt.Sprintf("pwmchip%d/pwm%d", m.PWM.Chip, m.PWM.Channel))
	}
	for _, p := range []struct{ name, pin string }{{"", m.Pin}, {"step ", m.StepPin}, {"dir ", m.DirPin}} {
		if p.pin != "" {
			parts = append(parts, p.name+p.pin)
		}
	}
	return strings.Join(parts, ", ")
}
