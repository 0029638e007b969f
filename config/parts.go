package config

import (
	"github.com/towerd/towerd/hw"
	"github.com/towerd/towerd/mqtt"
)

// usesPWM reports whether the motor is driven through its PWM channel:
// driver pwm, or a stepper whose STEP is that channel (step_pwm).
func (m Motor) usesPWM() bool {
	return m.Driver == DriverPWM || m.Driver == DriverStepper && m.StepPWM
}

// HW is the hardware part of the configuration as package hw takes it.
func (c *Config) HW() hw.Config {
	m := c.Motor
	out := hw.Config{
		Button: hw.ButtonConfig{
			Pin: c.Button.Pin, ActiveLow: c.Button.ActiveLow, Pull: c.Button.Pull,
			Debounce: c.Button.Debounce, LongPress: c.Button.LongPress,
		},
		Motor: hw.MotorConfig{
			Driver: m.Driver, Pin: m.Pin, ActiveLow: m.ActiveLow, DirPin: m.DirPin, DirInvert: m.DirInvert, StepPin: m.StepPin,
			StepRate: float64(m.StepsPerSecond), MaxOn: m.MaxOnTime,
			DutyWindow: m.DutyWindow, DutyMax: m.DutyLimit,
			Profile: hw.Profile{Run: m.Profile.Run, Speed: m.Profile.Speed, Reverse: m.Profile.ReverseJolt, Brake: m.Profile.Brake},
		},
		Light: hw.LightConfig{Pin: c.Light.Pin, ActiveLow: c.Light.ActiveLow, Brightness: c.Light.Brightness},
	}
	if m.usesPWM() {
		// A stepper's PWM runs at its step rate, not pwm_frequency.
		out.Motor.PWM = &hw.PWMConfig{Chip: m.PWMChip, Channel: m.PWMChannel}
		if m.Driver == DriverPWM {
			out.Motor.PWM.Hz = m.PWMFrequency
		}
	}
	if c.Light.PWMChip != nil && c.Light.PWMChannel != nil {
		out.Light.PWM = &hw.PWMConfig{Chip: *c.Light.PWMChip, Channel: *c.Light.PWMChannel}
	}
	return out
}

// MQTTConfig is the MQTT part of the configuration as package mqtt takes it.
func (c *Config) MQTTConfig() mqtt.Config {
	q := c.MQTT
	out := mqtt.Config{
		Broker: q.Broker, Listen: q.Listen, AllowRemote: q.AllowRemote,
		Username: q.Username, Password: q.Password, PasswordEnv: q.PasswordEnv,
		PasswordFile: q.PasswordFile, Credential: q.Credential,
		CAFile: q.CAFile, CertFile: q.CertFile, KeyFile: q.KeyFile, ServerName: q.ServerName,
		TowerID: c.Tower.ID, Prefix: q.Prefix, ClientID: q.ClientID,
		HomeAssistant: mqtt.HomeAssistant{
			Enabled: q.HomeAssistant.Enabled, Prefix: q.HomeAssistant.Prefix,
			DefaultRoll: string(c.Tower.DefaultRequest),
		},
		QueueSize: c.Tower.QueueSize,
	}
	for _, u := range q.Users {
		out.Users = append(out.Users, mqtt.User{Username: u.Username, PasswordFile: u.PasswordFile})
	}
	return out
}
