// Package hwtest provides fake pins and a simulated tower for tests and for
// towerd's --sim mode: the same hw code runs against them.
package hwtest

import (
	"sync"
	"time"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/gpio/gpiotest"
	"periph.io/x/conn/v3/physic"

	"github.com/towerd/towerd/clock"
)

// Change is one recorded output change of a Pin.
type Change struct {
	At    time.Time
	Level gpio.Level
	Duty  gpio.Duty
}

// Pin is a fake GPIO built on gpiotest.Pin. Unlike gpiotest.Pin, its
// WaitForEdge times out on a clock.Clock (so a fake clock controls it),
// Halt interrupts it, and Set delivers an edge synchronously: Set returns
// only once the waiting code has taken the edge and is waiting again, so a
// test knows the edge was seen before it advances the clock.
//
// Outputs record every change (Changes) and keep Level and Duty
// consistent: Out(High) is duty max, PWM(d) reads High when d > 0.
type Pin struct {
	gpiotest.Pin // N, Num, L, P, D, F under its Mutex

	clk   clock.Clock
	edges chan edgeMsg
	halt  chan struct{}

	mu        sync.Mutex // guards the fields below
	driven    bool       // Set or SetQuiet was called: the pull no longer decides the level
	edgeOn    bool
	halted    bool
	ack       chan struct{} // closed when the waiter is back in WaitForEdge
	changes   []Change
	hook      func(Change)
	fault     func(l gpio.Level, d gpio.Duty) error
	waits     int
	entered   chan struct{} // closed at the next entry into WaitForEdge
	foreverWs int
}

type edgeMsg struct{ ack chan struct{} }

var _ gpio.PinIO = (*Pin)(nil)

// NewPin returns a fake pin named name whose timeouts run on clk.
func NewPin(name string, num int, clk clock.Clock) *Pin {
	p := &Pin{clk: clk, edges: make(chan edgeMsg), halt: make(chan struct{})}
	p.N, p.Num = name, num
	return p
}

// In configures the pin as an input; the pull sets the level unless the
// input was already driven with Set or SetQuiet.
func (p *Pin) In(pull gpio.Pull, edge gpio.Edge) error {
	p.mu.Lock()
	p.edgeOn = edge != gpio.NoEdge
	driven := p.driven
	p.mu.Unlock()
	p.Pin.Lock()
	p.P = pull
	switch {
	case driven:
	case pull == gpio.PullDown:
		p.L = gpio.Low
	case pull == gpio.PullUp:
		p.L = gpio.High
	}
	p.Pin.Unlock()
	return nil
}

// Set drives the input to l, as a person pressing or a bouncing contact
// would, and if edge detection is on delivers one edge and waits until the
// waiter has taken it and waits again (or the pin was halted).
func (p *Pin) Set(l gpio.Level) {
	p.Pin.Lock()
	p.L = l
	p.Pin.Unlock()
	p.mu.Lock()
	p.driven = true
	on := p.edgeOn && !p.halted
	p.mu.Unlock()
	if !on {
		return
	}
	e := edgeMsg{ack: make(chan struct{})}
	select {
	case p.edges <- e:
	case <-p.halt:
		return
	}
	select {
	case <-e.ack:
	case <-p.halt:
	}
}

// SetQuiet changes the input level without an edge, as when the kernel
// drops one; the watcher must notice by polling.
func (p *Pin) SetQuiet(l gpio.Level) {
	p.Pin.Lock()
	p.L = l
	p.Pin.Unlock()
	p.mu.Lock()
	p.driven = true
	p.mu.Unlock()
}

// WaitForEdge waits for an edge from Set for at most timeout on the pin's
// clock. A timeout <= 0 waits forever, as the ioctl driver does for 0; it
// is counted by ForeverWaits so tests can forbid it.
func (p *Pin) WaitForEdge(timeout time.Duration) bool {
	select {
	case <-p.halt:
		return false
	default:
	}
	var tc <-chan time.Time
	var t clock.Timer
	if timeout > 0 {
		t = p.clk.NewTimer(timeout)
		tc = t.C()
	}
	p.mu.Lock()
	p.waits++
	if p.entered != nil {
		close(p.entered)
		p.entered = nil
	}
	if timeout <= 0 {
		p.foreverWs++
	}
	ack := p.ack
	p.ack = nil
	p.mu.Unlock()
	if ack != nil {
		close(ack) // the edge's sender may go on: we are waiting again
	}
	stop := func() {
		if t != nil {
			t.Stop()
		}
	}
	select {
	case e := <-p.edges:
		stop()
		p.mu.Lock()
		if p.halted {
			close(e.ack)
		} else {
			p.ack = e.ack
		}
		p.mu.Unlock()
		return true
	case <-tc:
		return false
	case <-p.halt:
		stop()
		return false
	}
}

// Waits counts the calls of WaitForEdge so far.
func (p *Pin) Waits() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.waits
}

// AwaitWaits returns once WaitForEdge has been called more than n times in
// all, or at once when nobody watches the pin's edges (edge detection off
// or the pin halted).
func (p *Pin) AwaitWaits(n int) {
	for {
		p.mu.Lock()
		if p.waits > n || !p.edgeOn || p.halted {
			p.mu.Unlock()
			return
		}
		if p.entered == nil {
			p.entered = make(chan struct{})
		}
		ch := p.entered
		p.mu.Unlock()
		select {
		case <-ch:
		case <-p.halt:
		}
	}
}

// Halt interrupts WaitForEdge for good: the fake's stand-in for closing
// the line. Later Set calls change the level without edges.
func (p *Pin) Halt() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.halted {
		p.halted = true
		close(p.halt)
		if p.ack != nil {
			close(p.ack)
			p.ack = nil
		}
	}
	return nil
}

// Halted reports whether Halt was called (the watcher was stopped).
func (p *Pin) Halted() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.halted
}

// ForeverWaits counts WaitForEdge calls without a finite timeout.
func (p *Pin) ForeverWaits() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.foreverWs
}

// Fail makes outputs consult fn first: when it returns an error (or
// panics) the output is left unchanged. nil heals the pin.
func (p *Pin) Fail(fn func(l gpio.Level, d gpio.Duty) error) {
	p.mu.Lock()
	p.fault = fn
	p.mu.Unlock()
}

// Out drives the output.
func (p *Pin) Out(l gpio.Level) error {
	d := gpio.Duty(0)
	if l {
		d = gpio.DutyMax
	}
	return p.set(l, d, 0)
}

// PWM drives a duty cycle, as a sysfs PWM channel would.
func (p *Pin) PWM(d gpio.Duty, f physic.Frequency) error {
	return p.set(d > 0, d, f)
}

func (p *Pin) set(l gpio.Level, d gpio.Duty, f physic.Frequency) error {
	p.mu.Lock()
	fault := p.fault
	p.mu.Unlock()
	if fault != nil {
		if err := fault(l, d); err != nil {
			return err
		}
	}
	p.Pin.Lock()
	p.L, p.D = l, d
	if f > 0 {
		p.F = f
	}
	p.Pin.Unlock()
	c := Change{At: p.clk.Now(), Level: l, Duty: d}
	p.mu.Lock()
	p.changes = append(p.changes, c)
	hook := p.hook
	p.mu.Unlock()
	if hook != nil {
		hook(c)
	}
	return nil
}

// Level is the pin's current level.
func (p *Pin) Level() gpio.Level { return p.Read() }

// Duty is the current PWM duty (DutyMax after Out(High), 0 after Out(Low)).
func (p *Pin) Duty() gpio.Duty {
	p.Pin.Lock()
	defer p.Pin.Unlock()
	return p.D
}

// Frequency is the last PWM frequency set.
func (p *Pin) Frequency() physic.Frequency {
	p.Pin.Lock()
	defer p.Pin.Unlock()
	return p.F
}

// Changes returns every output change so far, in order.
func (p *Pin) Changes() []Change {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Change(nil), p.changes...)
}

// OnChange sets a function called (synchronously, by the writer) on every
// output change; nil removes it.
func (p *Pin) OnChange(fn func(Change)) {
	p.mu.Lock()
	p.hook = fn
	p.mu.Unlock()
}
