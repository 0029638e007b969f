package hw_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"periph.io/x/conn/v3/gpio"

	"github.com/towerd/towerd/hw"
	"github.com/towerd/towerd/hw/hwtest"
)

// The button benchmarks time the software path from an edge at the fake
// pin to the event on Events(): the fake clock jumps over the debounce, so
// on hardware add the configured debounce (30 ms) to these figures.

func benchButton(b *testing.B, long time.Duration, measureRelease bool) {
	s, clk := newSim(b, hw.Config{Button: hw.ButtonConfig{Pin: "GPIO17", ActiveLow: true, LongPress: long}})
	debounce := hw.DefaultDebounce
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		s.SetButton(true)
		clk.Advance(debounce)
		if measureRelease {
			clk.BlockUntil(1)
			start = time.Now()
		} else {
			<-s.Button.Events()
			lat = append(lat, time.Since(start))
		}
		s.SetButton(false)
		clk.Advance(debounce)
		if measureRelease {
			<-s.Button.Events()
			lat = append(lat, time.Since(start))
		}
		clk.BlockUntil(1)
	}
	report(b, lat, "edge-to-press")
}

// report adds the median and 99th percentile: on a shared machine the mean
// mostly measures how long the scheduler kept a goroutine waiting.
func report(b *testing.B, lat []time.Duration, what string) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns/"+what)
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns/"+what)
}

// BenchmarkButtonEdgeToPress: long press off, so the press is sent on the
// falling edge itself.
func BenchmarkButtonEdgeToPress(b *testing.B) { benchButton(b, -1, false) }

// BenchmarkButtonReleaseToPress: the default, the press is sent on release.
func BenchmarkButtonReleaseToPress(b *testing.B) { benchButton(b, 0, true) }

// BenchmarkTumbleStartToMotorHigh times a Tumble call until the motor pin
// goes high (duty check, watchdog arming, driver write).
func BenchmarkTumbleStartToMotorHigh(b *testing.B) {
	for _, mc := range motorCases() {
		b.Run(mc.name, func(b *testing.B) {
			s, _ := newSim(b, hw.Config{Motor: mc.motor})
			on := make(chan time.Time, 1)
			// The power output: the PWM channel of a pwm motor or a
			// PWM-stepped stepper, else the on/off or enable line.
			pin, idle := s.MotorPin, gpio.Duty(0)
			if mc.motor.Driver == hw.DriverPWM || pin == nil {
				pin = s.PWMPin
			}
			if mc.motor.ActiveLow && (pin == s.MotorPin || mc.motor.Driver == hw.DriverPWM) {
				idle = gpio.DutyMax
			}
			pin.OnChange(func(c hwtest.Change) {
				if c.Duty != idle {
					select {
					case on <- time.Now():
					default:
					}
				}
			})
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				started := make(chan time.Time, 1)
				done := make(chan error, 1)
				go func() {
					started <- time.Now()
					done <- s.Motor.Tumble(context.Background(), hw.Profile{Run: time.Second})
				}()
				t1 := <-on
				lat = append(lat, t1.Sub(<-started))
				_ = s.Motor.Off()
				<-done
			}
			report(b, lat, "start-to-high")
		})
	}
}
