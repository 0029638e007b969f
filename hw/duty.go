package hw

import (
	"fmt"
	"time"
)

// dutyLog remembers when the motor was on, to keep it within a duty limit:
// at most max×window of on-time in any window-long stretch.
type dutyLog struct {
	window time.Duration
	max    float64
	spans  []span
}

type span struct{ from, to time.Time }

func (d *dutyLog) budget() time.Duration {
	return time.Duration(float64(d.window) * d.max)
}

// used is the on-time inside [from, to].
func (d *dutyLog) used(from, to time.Time) time.Duration {
	var u time.Duration
	for _, s := range d.spans {
		a, b := s.from, s.to
		if a.Before(from) {
			a = from
		}
		if b.After(to) {
			b = to
		}
		if b.After(a) {
			u += b.Sub(a)
		}
	}
	return u
}

// admit says whether `want` more on-time may start at now. Any window that
// overlaps the new run holds at most the on-time of [now-window, now] plus
// the run itself, so checking that sum keeps every window within budget.
func (d *dutyLog) admit(now time.Time, want time.Duration) error {
	d.prune(now)
	budget := d.budget()
	if want > budget {
		return fmt.Errorf("hw: motor: %v of on-time exceeds the whole duty budget of %v per %v: %w",
			want, budget, d.window, ErrDutyLimit)
	}
	used := d.used(now.Add(-d.window), now)
	if used+want <= budget {
		return nil
	}
	// Find when enough past on-time has slid out of the window.
	lo, hi := time.Duration(0), d.window
	for hi-lo > 10*time.Millisecond {
		mid := (lo + hi) / 2
		if d.used(now.Add(mid-d.window), now)+want <= budget {
			hi = mid
		} else {
			lo = mid
		}
	}
	return fmt.Errorf("hw: motor: %v on in the last %v, %v more would pass the %.0f%% duty limit; retry in %v: %w",
		used.Round(time.Millisecond), d.window, want, d.max*100, hi.Round(100*time.Millisecond), ErrDutyLimit)
}

// record adds an on span.
func (d *dutyLog) record(from, to time.Time) {
	if to.After(from) {
		d.spans = append(d.spans, span{from, to})
	}
}

func (d *dutyLog) prune(now time.Time) {
	keep := d.spans[:0]
	for _, s := range d.spans {
		if s.to.After(now.Add(-d.window)) {
			keep = append(keep, s)
		}
	}
	d.spans = keep
}
