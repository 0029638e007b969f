package hw

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/towerd/towerd/clock"
)

// motor runs tumble profiles and owns every safety rule: the hard on-time
// limit, the duty limit and "off on every exit path". Callers cannot switch
// the motor on except through Tumble.
type motor struct {
	cfg MotorConfig
	drv driver // nil: no motor
	clk clock.Clock
	log *slog.Logger

	tumbling sync.Mutex // held by the running Tumble

	mu       sync.Mutex // guards the driver and the fields below
	duty     dutyLog
	closed   bool
	abort    chan struct{} // closed to stop the running tumble; nil when idle
	abortWhy string        // "off", "signal" or "close" once abort is closed
	stopping bool          // a signal came: no more tumbles

	obsMu   sync.Mutex
	obs     func(MotorEvent)
	events  chan queuedEvent
	obsDone chan struct{}
	once    sync.Once
}

var _ Motor = (*motor)(nil)

func newMotor(c MotorConfig, pins Pins, clk clock.Clock, log *slog.Logger) (*motor, error) {
	drv, err := newDriver(c, pins, clk)
	if err != nil {
		return nil, err
	}
	m := &motor{
		cfg: c, drv: drv, clk: clk, log: log,
		duty:    dutyLog{window: c.DutyWindow, max: c.DutyMax},
		events:  make(chan queuedEvent, 32),
		obsDone: make(chan struct{}),
	}
	if drv != nil && c.Profile.Reverse > 0 && !canReverse(c) {
		log.Info("hw: motor has no direction line; reverse jolts are skipped", "driver", c.Driver)
	}
	if drv != nil {
		// Whatever state the pins were left in, start with the motor off.
		if err := drv.stop(); err != nil {
			return nil, fmt.Errorf("hw: motor: switch off at start: %w: %w", ErrFault, err)
		}
	}
	go m.dispatch()
	return m, nil
}

type phase struct {
	on      bool
	reverse bool
	d       time.Duration
}

// resolve fills p from the configured profile and drops what the driver
// cannot do.
func (m *motor) resolve(p Profile) (Profile, error) {
	d := m.cfg.Profile
	if p.Run < 0 || p.Speed < 0 {
		return p, fmt.Errorf("hw: motor: profile run %v speed %v: must not be negative", p.Run, p.Speed)
	}
	if p.Run == 0 {
		p.Run = d.Run
	}
	if p.Speed == 0 {
		p.Speed = d.Speed
	}
	p.Speed = min(p.Speed, 1)
	switch {
	case p.Reverse < 0:
		p.Reverse = 0
	case p.Reverse == 0:
		p.Reverse = d.Reverse
	}
	if !canReverse(m.cfg) {
		p.Reverse = 0 // warned once at start
	}
	switch {
	case p.Brake < 0:
		p.Brake = 0
	case p.Brake == 0:
		p.Brake = d.Brake
	}
	return p, nil
}

func (m *motor) phases(p Profile) []phase {
	ph := []phase{{on: true, d: p.Run}}
	if p.Reverse > 0 {
		ph = append(ph, phase{d: m.cfg.ReversePause}, phase{on: true, reverse: true, d: p.Reverse})
	}
	return ph
}

// Tumble runs one profile; see Motor.
func (m *motor) Tumble(ctx context.Context, p Profile) (err error) {
	if m.drv == nil {
		return ctx.Err()
	}
	if !m.tumbling.TryLock() {
		return fmt.Errorf("hw: motor: tumble: %w", ErrBusy)
	}
	defer m.tumbling.Unlock()
	p, err = m.resolve(p)
	if err != nil {
		return err
	}
	phases := m.phases(p)
	var total time.Duration
	for _, ph := range phases {
		total += ph.d
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("hw: motor: tumble: %w", err)
	}

	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return fmt.Errorf("hw: motor: tumble: %w", ErrClosed)
	}
	if m.stopping {
		m.mu.Unlock()
		return fmt.Errorf("hw: motor: tumble refused: %w", ErrShutdown)
	}
	start := m.clk.Now()
	if err := m.duty.admit(start, min(total, m.cfg.MaxOn)); err != nil {
		m.mu.Unlock()
		return err
	}
	abort := make(chan struct{})
	m.abort, m.abortWhy = abort, ""
	m.mu.Unlock()

	// The watchdog is armed before the motor can start and is part of
	// every wait below, so no path keeps the motor on past MaxOn.
	watchdog := m.clk.NewTimer(m.cfg.MaxOn)
	reason := "panic" // until a return says otherwise
	stopped := false
	defer func() {
		watchdog.Stop()
		if !stopped {
			if stopErr := m.finish(start, reason); stopErr != nil {
				err = errors.Join(err, stopErr)
			}
		}
		m.mu.Lock()
		m.abort, m.abortWhy = nil, ""
		m.mu.Unlock()
	}()

	for i, ph := range phases {
		if err := m.output(ph, p.Speed); err != nil {
			reason = "fault"
			return err
		}
		if i == 0 {
			m.emit(MotorEvent{Kind: "motor_start", At: start, Driver: m.cfg.Driver})
		}
		t := m.clk.NewTimer(ph.d)
		select {
		case <-t.C():
		case <-watchdog.C():
			// A phase ending at exactly MaxOn is not a cut.
			if i == len(phases)-1 && !t.Stop() {
				break
			}
			t.Stop()
			reason = "limit"
			return fmt.Errorf("hw: motor: cut off at the %v maximum on-time (profile asked %v): %w",
				m.cfg.MaxOn, total, ErrOnTimeLimit)
		case <-ctx.Done():
			t.Stop()
			reason = "cancel"
			return fmt.Errorf("hw: motor: tumble: %w", ctx.Err())
		case <-abort:
			t.Stop()
			return m.aborted(&reason)
		}
	}
	reason, stopped = "done", true
	if err := m.finish(start, reason); err != nil {
		return err
	}
	if p.Brake <= 0 {
		return nil
	}
	// Off, and held off while the drum slows down.
	t := m.clk.NewTimer(p.Brake)
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		return fmt.Errorf("hw: motor: brake: %w", ctx.Err())
	case <-abort:
		return nil // the motor is already off
	}
}

func (m *motor) aborted(reason *string) error {
	m.mu.Lock()
	*reason = m.abortWhy
	m.mu.Unlock()
	switch *reason {
	case "close":
		return fmt.Errorf("hw: motor: tumble: %w", ErrClosed)
	case "signal":
		return fmt.Errorf("hw: motor: tumble stopped by a signal: %w: %w", ErrStopped, ErrShutdown)
	}
	return fmt.Errorf("hw: motor: tumble stopped by %s: %w", *reason, ErrStopped)
}

// output switches to one phase, unless Off or Close came first.
func (m *motor) output(ph phase, speed float64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.abortWhy != "" {
		return fmt.Errorf("hw: motor: tumble stopped by %s: %w", m.abortWhy, ErrStopped)
	}
	var err error
	if ph.on {
		err = m.drv.drive(ph.reverse, speed)
	} else {
		err = m.drv.stop()
	}
	if err != nil {
		return fmt.Errorf("hw: motor %s: %w: %w", m.cfg.Driver, ErrFault, err)
	}
	return nil
}

// finish switches off, books the on-time and reports the stop.
func (m *motor) finish(start time.Time, reason string) error {
	m.mu.Lock()
	err := m.stopLocked()
	now := m.clk.Now()
	m.duty.record(start, now)
	m.mu.Unlock()
	lv := slog.LevelInfo
	if reason != "done" {
		lv = slog.LevelWarn
	}
	m.log.Log(context.Background(), lv, "hw: motor stopped", "reason", reason, "on", now.Sub(start))
	// The motor is off: wait for the observer to have taken motor_stop, so
	// that it goes out before what the roll loop says next (settling) —
	// but not for long on an observer that hangs (real time: a fake clock
	// in a test would never end the wait).
	if done := m.emit(MotorEvent{Kind: "motor_stop", At: now, Driver: m.cfg.Driver, Reason: reason, On: now.Sub(start)}); done != nil {
		t := time.NewTimer(observerWait)
		select {
		case <-done:
		case <-t.C:
			m.log.Warn("hw: motor observer slow; motor_stop may follow what comes next")
		}
		t.Stop()
	}
	return err
}

// observerWait bounds how long a tumble waits for the observer to take
// its motor_stop.
const observerWait = time.Second

// stopLocked switches the outputs off, trying twice: a motor left running
// is the one failure that must not pass quietly.
func (m *motor) stopLocked() error {
	err := m.drv.stop()
	if err != nil {
		if err2 := m.drv.stop(); err2 == nil {
			return nil
		}
		m.log.Error("hw: MOTOR COULD NOT BE SWITCHED OFF", "err", err)
		return fmt.Errorf("hw: motor off: %w: %w", ErrFault, err)
	}
	return nil
}

// Off switches the motor off now and aborts a running tumble.
func (m *motor) Off() error {
	if m.drv == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.abortLocked("off")
}

// shutdown switches the motor off for good because the process is
// stopping: a running tumble fails with ErrShutdown and later ones are
// refused, so the roll loop cannot start the motor again before its own
// shutdown reaches it.
func (m *motor) shutdown() error {
	if m.drv == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.stopping = true
	return m.abortLocked("signal")
}

func (m *motor) abortLocked(why string) error {
	err := m.stopLocked()
	if m.abort != nil && m.abortWhy == "" {
		m.abortWhy = why
		close(m.abort)
	}
	return err
}

// Close switches the motor off, waits for a running tumble to return and
// stops the observer. Later tumbles fail with ErrClosed.
func (m *motor) Close() error {
	var err error
	m.once.Do(func() {
		if m.drv != nil {
			m.mu.Lock()
			m.closed = true
			err = m.abortLocked("close")
			m.mu.Unlock()
			m.tumbling.Lock() // the tumble has returned, its motor_stop is queued
			m.tumbling.Unlock()
			err = errors.Join(err, m.drv.close())
		}
		close(m.events)
		<-m.obsDone
	})
	return err
}

func (m *motor) observe(fn func(MotorEvent)) {
	m.obsMu.Lock()
	m.obs = fn
	m.obsMu.Unlock()
}

// queuedEvent is an event on its way to the observer; done is closed
// once the observer has returned from it.
type queuedEvent struct {
	e    MotorEvent
	done chan struct{}
}

// emit queues an event for the observer without ever blocking the motor;
// the channel it returns (nil if the event was dropped) is closed when the
// observer has taken it.
func (m *motor) emit(e MotorEvent) <-chan struct{} {
	q := queuedEvent{e, make(chan struct{})}
	select {
	case m.events <- q:
		return q.done
	default:
		m.log.Warn("hw: motor event dropped, observer too slow", "kind", e.Kind)
		return nil
	}
}

func (m *motor) dispatch() {
	defer close(m.obsDone)
	for q := range m.events {
		m.obsMu.Lock()
		fn := m.obs
		m.obsMu.Unlock()
		if fn != nil {
			fn(q.e)
		}
		close(q.done)
	}
}
