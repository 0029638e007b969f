package hw

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"periph.io/x/conn/v3/gpio"

	"github.com/towerd/towerd/clock"
)

const (
	// pollEvery bounds every WaitForEdge: the loop then rereads the level
	// (catching an edge the kernel dropped) and notices Close even if Halt
	// raced. Never 0: on the ioctl driver 0 means "wait forever".
	pollEvery = 250 * time.Millisecond
	minWait   = time.Millisecond
	// eventBuffer presses may queue before new ones are dropped.
	eventBuffer = 16
)

// button turns edges on a pin into debounced Press and LongPress events.
// One goroutine owns all state; the pin's WaitForEdge is its only blocking
// point, with a timeout that is the next debounce or long-press deadline.
type button struct {
	pin       gpio.PinIn // nil: no button
	activeLow bool
	debounce  time.Duration
	long      time.Duration // < 0: no long press, Press on the press itself
	clk       clock.Clock
	log       *slog.Logger

	events chan ButtonEvent
	quit   chan struct{}
	done   chan struct{}
	once   sync.Once
}

var _ Button = (*button)(nil)

func newButton(c ButtonConfig, pin gpio.PinIn, clk clock.Clock, log *slog.Logger) (*button, error) {
	b := &button{
		pin: pin, activeLow: c.ActiveLow, debounce: c.Debounce, long: c.LongPress,
		clk: clk, log: log,
		events: make(chan ButtonEvent, eventBuffer),
		quit:   make(chan struct{}), done: make(chan struct{}),
	}
	if pin == nil {
		close(b.done)
		close(b.events)
		return b, nil
	}
	if err := pin.In(pullOf(c), gpio.BothEdges); err != nil {
		return nil, fmt.Errorf("hw: button %s: input with edge detection: %w", pin, err)
	}
	// Read the level before returning, so an edge that follows New is
	// measured against the state New saw.
	go b.watch(b.pressed())
	return b, nil
}

func pullOf(c ButtonConfig) gpio.Pull {
	switch c.Pull {
	case PullUp:
		return gpio.PullUp
	case PullDown:
		return gpio.PullDown
	case PullNone:
		return gpio.Float
	}
	if c.ActiveLow {
		return gpio.PullUp
	}
	return gpio.PullDown
}

// Events delivers presses until Close, then is closed.
func (b *button) Events() <-chan ButtonEvent { return b.events }

// Close stops the watcher and waits for it to exit.
func (b *button) Close() error {
	b.once.Do(func() {
		close(b.quit)
		if b.pin != nil {
			_ = b.pin.Halt() // interrupts a pending WaitForEdge on the ioctl driver
		}
	})
	<-b.done
	return nil
}

func (b *button) pressed() bool { return b.pin.Read() == level(true, b.activeLow) }

func (b *button) emit(e ButtonEvent) {
	select {
	case b.events <- e:
	default:
		b.log.Warn("hw: button event dropped, nobody is reading", "kind", e.Kind.String())
	}
}

func (b *button) watch(stable bool) {
	defer close(b.done)
	defer close(b.events)

	// A button already down at start (stuck, or held through a restart)
	// counts only once it has been released.
	spent := stable
	var lastEdge, downAt time.Time
	pending := false
	early := 0
	for {
		select {
		case <-b.quit:
			return
		default:
		}
		now := b.clk.Now()
		if pending && now.Sub(lastEdge) >= b.debounce {
			pending = false
			if lvl := b.pressed(); lvl != stable {
				stable = lvl
				switch {
				case stable:
					downAt, spent = lastEdge, false
					if b.long < 0 {
						b.emit(ButtonEvent{Kind: Press, At: now})
						spent = true
					}
				case !spent:
					b.emit(ButtonEvent{Kind: Press, At: now, Held: lastEdge.Sub(downAt)})
				}
			}
		}
		if stable && !spent && b.long > 0 && now.Sub(downAt) >= b.long {
			b.emit(ButtonEvent{Kind: LongPress, At: now, Held: b.long})
			spent = true
		}

		wait := pollEvery
		if pending {
			wait = min(wait, lastEdge.Add(b.debounce).Sub(now))
		}
		if stable && !spent && b.long > 0 {
			wait = min(wait, downAt.Add(b.long).Sub(now))
		}
		wait = max(wait, minWait)
		if b.pin.WaitForEdge(wait) {
			lastEdge, pending, early = b.clk.Now(), true, 0
			continue
		}
		// Timed out: catch a level change whose edge was lost.
		if !pending && b.pressed() != stable {
			lastEdge, pending = b.clk.Now(), true
		}
		// A pin that cannot wait for edges returns false at once; fall back
		// to polling instead of spinning.
		if b.clk.Now().Sub(now) < wait/4 {
			if early++; early == 3 {
				b.log.Warn("hw: button pin does not wait for edges; polling it", "pin", b.pin.String())
			}
			if early >= 3 {
				select {
				case <-b.clk.After(min(wait, 5*time.Millisecond)):
				case <-b.quit:
					return
				}
			}
		} else {
			early = 0
		}
	}
}
