// Package tower is the roll loop: it takes requests and button presses,
// tumbles the dice, reads them, resolves the outcome and publishes it.
package tower

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/towerd/towerd/clock"
	"github.com/towerd/towerd/history"
	"github.com/towerd/towerd/hw"
	"github.com/towerd/towerd/mqtt"
	"github.com/towerd/towerd/rules"
)

// Publisher is where the loop takes requests from and sends what happens:
// *mqtt.Client.
type Publisher interface {
	Requests() <-chan *mqtt.Incoming
	QueueLen() int
	PublishResult(in *mqtt.Incoming, res rules.Result) (rules.Result, error)
	PublishError(in *mqtt.Incoming, msg rules.ErrorMsg) error
	PublishState(state, requestID string, queue int) error
	PublishEvent(event string, fields map[string]any) error
}

var _ Publisher = (*mqtt.Client)(nil)

// History records published results and errors (*history.Log).
type History interface {
	Append(history.Record) error
}

var _ History = (*history.Log)(nil)

// States the loop reports (the contract's state values).
const (
	StateIdle     = "idle"
	StateWaiting  = "waiting"
	StateTumbling = "tumbling"
	StateSettling = "settling"
	StateReading  = "reading"
	StateFault    = "fault"
)

// Config is the loop's behaviour.
type Config struct {
	// Tower is the tower id results carry.
	Tower string
	// Default is rolled by a button press with no request pending;
	// LongPress by a long press (nil: Default).
	Default, LongPress *rules.Request
	// AutoRoll rolls a request as soon as it is taken, without waiting for
	// the button: the simulated tower, or a tower whose dice never leave
	// the drum. Otherwise the plan is announced and the tower waits for
	// the player to drop the dice and press the button.
	AutoRoll bool
	// WaitTimeout bounds the wait for the button (0: 10 minutes); then the
	// request is answered with a timeout error.
	WaitTimeout time.Duration
	// MaxRetries is how many times a misread is tumbled again before the
	// request is answered "misread".
	MaxRetries int
	// Profile is the tumble (zero: the motor's configured profile).
	Profile hw.Profile
	// Source is the results' source: rules.SourceCamera or rules.SourceSim.
	Source string
	// SettleTimeout bounds the wait for still dice after the motor stops
	// (0: 8 s) and ReadTimeout the reading (0: 10 s); past either the roll
	// fails with code timeout.
	SettleTimeout, ReadTimeout time.Duration
	// ProbeEvery is how often a faulted tower checks whether its camera
	// works again (0: 5 s).
	ProbeEvery time.Duration
	Clock      clock.Clock
	Log        *slog.Logger
	// Progress is called whenever the loop makes progress, at least every
	// ProgressEvery while idle: it feeds the systemd watchdog.
	Progress      func()
	ProgressEvery time.Duration
	// Done is told of every result published (the console of make sim).
	Done func(Done)
}

// Done is one finished roll, for display.
type Done struct {
	Request *rules.Request
	Result  *rules.Result   // nil on error
	Error   *rules.ErrorMsg // nil on success
	Button  bool
}

// Loop is the roll loop. Run it once.
type Loop struct {
	cfg    Config
	motor  hw.Motor
	button <-chan hw.ButtonEvent
	eyes   Eyes
	out    Publisher
	hist   History
	log    *slog.Logger
	clk    clock.Clock

	mu    sync.Mutex
	state string
	reqID string
	fault string
}

// New assembles a loop. button may be nil (no button); hist may be nil.
func New(cfg Config, motor hw.Motor, button <-chan hw.ButtonEvent, eyes Eyes, out Publisher, hist History) (*Loop, error) {
	if cfg.Default == nil {
		return nil, errors.New("tower: no default request")
	}
	if cfg.LongPress == nil {
		cfg.LongPress = cfg.Default
	}
	if cfg.WaitTimeout <= 0 {
		cfg.WaitTimeout = 10 * time.Minute
	}
	if cfg.MaxRetries < 0 {
		cfg.MaxRetries = 0
	}
	if cfg.SettleTimeout <= 0 {
		cfg.SettleTimeout = 8 * time.Second
	}
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = 10 * time.Second
	}
	if cfg.ProbeEvery <= 0 {
		cfg.ProbeEvery = 5 * time.Second
	}
	if cfg.ProgressEvery <= 0 {
		cfg.ProgressEvery = 5 * time.Second
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Source == "" {
		cfg.Source = rules.SourceCamera
	}
	if cfg.Progress == nil {
		cfg.Progress = func() {}
	}
	if cfg.Done == nil {
		cfg.Done = func(Done) {}
	}
	if motor == nil || eyes == nil || out == nil {
		return nil, errors.New("tower: motor, eyes and publisher are required")
	}
	return &Loop{cfg: cfg, motor: motor, button: button, eyes: eyes, out: out, hist: hist,
		log: cfg.Log, clk: cfg.Clock, state: StateIdle}, nil
}

// State returns the current state and, in fault, its reason.
func (l *Loop) State() (state, reason string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.state, l.fault
}

func (l *Loop) setState(state, reqID string) {
	l.mu.Lock()
	changed := state != l.state || reqID != l.reqID
	l.state, l.reqID = state, reqID
	l.mu.Unlock()
	l.cfg.Progress()
	if !changed && state != StateIdle {
		return
	}
	if err := l.out.PublishState(state, reqID, l.out.QueueLen()); err != nil {
		l.log.Warn("tower: publish state", "state", state, "err", err)
	}
}

func (l *Loop) setFault(reason string) {
	l.mu.Lock()
	l.fault = reason
	l.mu.Unlock()
	l.log.Error("tower: fault", "reason", reason)
	l.event("fault", map[string]any{"reason": reason})
	l.setState(StateFault, "")
}

func (l *Loop) clearFault() {
	l.mu.Lock()
	was := l.fault
	l.fault = ""
	l.mu.Unlock()
	if was != "" {
		l.log.Info("tower: recovered", "was", was)
		l.event("recovered", map[string]any{"reason": was})
	}
}

func (l *Loop) faulted() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fault != ""
}

func (l *Loop) event(name string, fields map[string]any) {
	if err := l.out.PublishEvent(name, fields); err != nil {
		l.log.Warn("tower: publish event", "event", name, "err", err)
	}
}

// rest reports the resting state: idle, or fault while a fault stands.
func (l *Loop) rest() {
	if l.faulted() {
		l.setState(StateFault, "")
		return
	}
	l.setState(StateIdle, "")
}

// Run takes requests and presses until ctx is done. A roll under way when
// ctx ends is aborted with the motor off; its request stays unanswered, so
// the journal hands it out again after a restart. Run returns nil on a
// clean stop.
func (l *Loop) Run(ctx context.Context) (err error) {
	defer func() {
		// Whatever happens here, the motor ends up off.
		if offErr := l.motor.Off(); offErr != nil && err == nil {
			err = fmt.Errorf("tower: motor off: %w", offErr)
		}
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: panic in the roll loop: %v", ErrHardware, r)
			l.log.Error("tower: panic", "panic", r)
		}
	}()
	reqs := l.out.Requests()
	button := l.button
	l.rest()
	tick := l.clk.NewTimer(l.cfg.ProgressEvery)
	defer func() { tick.Stop() }()
	probe := l.clk.NewTimer(l.cfg.ProbeEvery)
	defer func() { probe.Stop() }()
	for {
		select {
		case <-ctx.Done():
			return nil
		case in, ok := <-reqs:
			if !ok {
				reqs = nil
				continue
			}
			l.request(ctx, in)
			l.rest()
		case ev, ok := <-button:
			if !ok {
				button = nil
				continue
			}
			l.event("button", map[string]any{"kind": ev.Kind.String()})
			req := l.cfg.Default
			if ev.Kind == hw.LongPress {
				req = l.cfg.LongPress
			}
			l.roll(ctx, req, nil, true)
			l.rest()
		case <-tick.C():
			l.cfg.Progress()
			tick = l.clk.NewTimer(l.cfg.ProgressEvery)
		case <-probe.C():
			l.probe(ctx)
			probe = l.clk.NewTimer(l.cfg.ProbeEvery)
		}
	}
}

// probe checks a faulted tower's eyes; the fault clears when they work.
func (l *Loop) probe(ctx context.Context) {
	if !l.faulted() {
		return
	}
	p, ok := l.eyes.(Prober)
	if !ok {
		return
	}
	if err := p.Probe(ctx); err != nil {
		l.log.Debug("tower: still faulted", "err", err)
		return
	}
	l.clearFault()
	l.rest()
}

// request announces a request's plan, waits for the button unless the
// tower rolls by itself, and rolls it.
func (l *Loop) request(ctx context.Context, in *mqtt.Incoming) {
	req := in.Request
	plan := req.Plan()
	l.log.Info("tower: request", "id", req.ID, "label", req.Label, "plan", plan.Text, "resumed", in.Resumed)
	if !l.cfg.AutoRoll {
		if !l.waitButton(ctx, req.ID, plan.Text, plan.Dice) {
			if ctx.Err() == nil {
				l.answerError(in, req, &rules.Error{Code: rules.CodeTimeout,
					Message: fmt.Sprintf("nobody pressed the button within %v to roll %q", l.cfg.WaitTimeout, plan.Text)}, nil, 0)
			}
			return
		}
	}
	l.roll(ctx, req, in, false)
}

// waitButton announces what to drop and waits for a press. false: timed
// out or stopped.
func (l *Loop) waitButton(ctx context.Context, id, text string, dice []rules.Die) bool {
	l.setState(StateWaiting, id)
	l.event("plan", map[string]any{"request": id, "plan": text, "dice": dice})
	if l.button == nil {
		l.log.Warn("tower: no button to confirm the roll; set tower.auto_roll")
	}
	t := l.clk.NewTimer(l.cfg.WaitTimeout)
	defer t.Stop()
	tick := l.clk.NewTimer(l.cfg.ProgressEvery)
	defer func() { tick.Stop() }()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C():
			return false
		case <-tick.C():
			l.cfg.Progress()
			tick = l.clk.NewTimer(l.cfg.ProgressEvery)
		case ev, ok := <-l.button:
			if !ok {
				return false
			}
			l.event("button", map[string]any{"kind": ev.Kind.String(), "request": id})
			return true
		}
	}
}

// roll plays one request to its answer: in is nil for a button roll.
func (l *Loop) roll(ctx context.Context, req *rules.Request, in *mqtt.Incoming, pressed bool) {
	plan := req.Plan()
	var faces []int
	var free []rules.DieFace
	var settle time.Duration
	var err error
	if plan.Free {
		var lk Look
		lk, err = l.tumbleRead(ctx, req.ID, nil, func(seen []Seen) error {
			var e error
			free, e = AssignFree(seen)
			return e
		})
		settle = lk.Settle
	} else {
		dice := plan.Dice
		for len(dice) > 0 && err == nil {
			var lk Look
			lk, err = l.tumbleRead(ctx, req.ID, dice, func(seen []Seen) error {
				f, e := Assign(dice, seen)
				if e == nil {
					faces = append(faces, f...)
				}
				return e
			})
			settle += lk.Settle
			if err != nil {
				break
			}
			// Follow-up dice (the ydin confirmation die) go round again.
			if dice = req.Need(faces); len(dice) > 0 && !l.cfg.AutoRoll {
				if !l.waitButton(ctx, req.ID, "follow-up: "+dropText(dice), dice) {
					if ctx.Err() != nil {
						return
					}
					err = &rules.Error{Code: rules.CodeTimeout, Message: "nobody pressed the button to roll the follow-up " + dropText(dice)}
				}
			}
		}
	}
	if ctx.Err() != nil || errors.Is(err, errShutdown) {
		// Stopping: the request stays unanswered and is rolled after the
		// restart; a button roll is simply dropped.
		l.log.Info("tower: roll aborted by shutdown", "id", req.ID)
		return
	}
	if err != nil {
		l.answerError(in, req, err, nil, settle)
		return
	}
	var o rules.Outcome
	if plan.Free {
		o, err = req.ResolveFree(free)
	} else {
		o, err = req.Resolve(faces)
	}
	if err != nil {
		// The faces were checked on reading; this is a bug, not a guess.
		l.answerError(in, req, err, nil, settle)
		return
	}
	l.clearFault()
	res := rules.NewResult(req, o, l.cfg.Tower, 0, l.clk.Now(), l.cfg.Source)
	res, err = l.out.PublishResult(in, res)
	if err != nil {
		l.log.Error("tower: publish result", "id", req.ID, "err", err)
		return
	}
	l.log.Info("tower: result", "id", req.ID, "seq", res.Seq, "text", res.Text)
	if l.hist != nil {
		rec, err := history.ResultRecord(res, nil, settle)
		if err == nil {
			err = l.hist.Append(rec)
		}
		if err != nil {
			l.log.Error("tower: history", "err", err)
		}
	}
	l.cfg.Done(Done{Request: req, Result: &res, Button: pressed})
}

// answerError publishes err for the request (code from its kind).
func (l *Loop) answerError(in *mqtt.Incoming, req *rules.Request, err error, faces []history.Face, settle time.Duration) {
	code := rules.CodeHardware
	var mr *Misread
	var re *rules.Error
	switch {
	case errors.As(err, &re):
		code = re.Code
	case errors.As(err, &mr):
		code = rules.CodeMisread
	case errors.Is(err, ErrSettle):
		code = rules.CodeTimeout
	}
	msg := rules.NewErrorMsg(req.ID, l.cfg.Tower, l.clk.Now(), err, code)
	if re == nil {
		msg.Message = strings.TrimPrefix(err.Error(), "tower: ")
	}
	if perr := l.out.PublishError(in, msg); perr != nil {
		l.log.Error("tower: publish error", "id", req.ID, "err", perr)
	}
	l.log.Warn("tower: roll failed", "id", req.ID, "code", msg.Code, "err", msg.Message)
	if l.hist != nil {
		if rec, herr := history.ErrorRecord(msg, faces, settle); herr == nil {
			if herr = l.hist.Append(rec); herr != nil {
				l.log.Error("tower: history", "err", herr)
			}
		}
	}
	l.cfg.Done(Done{Request: req, Error: &msg, Button: in == nil})
}

// tumbleRead tumbles and reads until accept takes the dice, tumbling again
// after a misread up to MaxRetries times.
func (l *Loop) tumbleRead(ctx context.Context, id string, dice []rules.Die, accept func([]Seen) error) (Look, error) {
	var lk Look
	var err error
	for try := 0; try <= l.cfg.MaxRetries; try++ {
		if try > 0 {
			l.log.Info("tower: misread, tumbling again", "id", id, "try", try, "why", err)
			l.event("retumble", map[string]any{"request": id, "try": try, "reason": err.Error()})
		}
		lk, err = l.once(ctx, id, dice)
		if err == nil {
			err = accept(lk.Dice)
		}
		var mr *Misread
		if err == nil || !errors.As(err, &mr) || ctx.Err() != nil {
			return lk, err
		}
	}
	return lk, err
}

// errShutdown: the motor was switched off because towerd is stopping.
var errShutdown = errors.New("tower: stopping")

// once is one tumble: the eyes watch while the motor runs.
func (l *Loop) once(parent context.Context, id string, dice []rules.Die) (lk Look, err error) {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	type looked struct {
		lk  Look
		err error
	}
	settledc := make(chan struct{}, 1)
	lookc := make(chan looked, 1)
	var once sync.Once
	physical := Physical(dice)
	l.setState(StateTumbling, id)
	go func() {
		defer func() {
			// A bug in the eyes must not kill the daemon with the motor on.
			if p := recover(); p != nil {
				l.motor.Off()
				l.log.Error("tower: panic reading the dice", "panic", p)
				lookc <- looked{err: fmt.Errorf("%w: panic reading the dice: %v", ErrHardware, p)}
			}
		}()
		lk, err := l.eyes.Look(ctx, physical, func() { once.Do(func() { settledc <- struct{}{} }) })
		lookc <- looked{lk, err}
	}()
	if terr := l.motor.Tumble(ctx, l.cfg.Profile); terr != nil {
		cancel()
		<-lookc
		if parent.Err() != nil {
			return Look{}, parent.Err()
		}
		if errors.Is(terr, hw.ErrShutdown) {
			// A signal switched the motor off a moment before the
			// shutdown reaches ctx: an abort, not a fault.
			return Look{}, fmt.Errorf("%w: %w", errShutdown, terr)
		}
		if errors.Is(terr, hw.ErrBusy) {
			return Look{}, fmt.Errorf("%w: %v", ErrHardware, terr)
		}
		l.setFault("motor: " + terr.Error())
		return Look{}, fmt.Errorf("%w: motor: %v", ErrHardware, terr)
	}
	l.setState(StateSettling, id)
	var r looked
	got := false
	st := l.clk.NewTimer(l.cfg.SettleTimeout)
	select {
	case <-settledc:
	case r = <-lookc:
		got = true
	case <-st.C():
		cancel()
		<-lookc
		got, r = true, looked{err: fmt.Errorf("%w: still moving %v after the motor stopped", ErrSettle, l.cfg.SettleTimeout)}
	}
	st.Stop()
	if !got || r.err == nil {
		l.setState(StateReading, id)
	}
	if !got {
		rt := l.clk.NewTimer(l.cfg.ReadTimeout)
		select {
		case r = <-lookc:
		case <-rt.C():
			cancel()
			<-lookc
			r = looked{err: &rules.Error{Code: rules.CodeTimeout, Message: fmt.Sprintf("reading the dice took longer than %v", l.cfg.ReadTimeout)}}
		}
		rt.Stop()
	}
	if r.err != nil {
		if errors.Is(r.err, ErrHardware) {
			l.setFault("camera: " + strings.TrimPrefix(r.err.Error(), ErrHardware.Error()+": "))
		}
		return r.lk, r.err
	}
	return r.lk, nil
}

func dropText(dice []rules.Die) string {
	if len(dice) == 0 {
		return "drop any dice"
	}
	var parts []string
	n := 1
	for i, d := range dice {
		if i+1 < len(dice) && dice[i+1] == d {
			n++
			continue
		}
		parts = append(parts, fmt.Sprintf("%d %s", n, d))
		n = 1
	}
	return "drop " + strings.Join(parts, ", ")
}
