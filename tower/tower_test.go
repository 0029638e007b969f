package tower

import (
	"context"
	"errors"
	"fmt"
	"image"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/towerd/towerd/clock"
	"github.com/towerd/towerd/history"
	"github.com/towerd/towerd/hw"
	"github.com/towerd/towerd/mqtt"
	"github.com/towerd/towerd/rules"
)

// fakeOut is a Publisher that hands every message to the test.
type fakeOut struct {
	reqs chan *mqtt.Incoming
	mu   sync.Mutex
	seq  uint64
	// every state, event, result and error, in order, as a short string
	log     []string
	results chan rules.Result
	errs    chan rules.ErrorMsg
	states  chan string
}

func newOut() *fakeOut {
	return &fakeOut{reqs: make(chan *mqtt.Incoming), results: make(chan rules.Result, 16),
		errs: make(chan rules.ErrorMsg, 16), states: make(chan string, 256)}
}

func (o *fakeOut) Requests() <-chan *mqtt.Incoming { return o.reqs }
func (o *fakeOut) QueueLen() int                   { return 0 }
func (o *fakeOut) PublishResult(in *mqtt.Incoming, r rules.Result) (rules.Result, error) {
	o.mu.Lock()
	o.seq++
	r.Seq = o.seq
	o.log = append(o.log, "result "+r.ID)
	o.mu.Unlock()
	o.results <- r
	return r, nil
}
func (o *fakeOut) PublishError(in *mqtt.Incoming, m rules.ErrorMsg) error {
	o.record("error " + m.Code)
	o.errs <- m
	return nil
}
func (o *fakeOut) PublishState(state, id string, q int) error {
	o.record("state " + state)
	o.states <- state
	return nil
}
func (o *fakeOut) PublishEvent(ev string, f map[string]any) error {
	o.record("event " + ev)
	return nil
}
func (o *fakeOut) record(s string) {
	o.mu.Lock()
	o.log = append(o.log, s)
	o.mu.Unlock()
}
func (o *fakeOut) history() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.log...)
}

// waitState reads states until want (the loop publishes every change).
func (o *fakeOut) waitState(t *testing.T, want string) {
	t.Helper()
	for s := range o.states {
		if s == want {
			return
		}
	}
}

// fakeMotor records tumbles; fail makes the next ones fail; block makes
// Tumble wait for ctx.
type fakeMotor struct {
	mu      sync.Mutex
	tumbles int
	offs    int
	fail    error
	block   bool
	started chan struct{}
}

var _ hw.Motor = (*fakeMotor)(nil)

func (m *fakeMotor) Tumble(ctx context.Context, p hw.Profile) error {
	m.mu.Lock()
	m.tumbles++
	fail, block := m.fail, m.block
	m.mu.Unlock()
	if m.started != nil {
		m.started <- struct{}{}
	}
	if block {
		<-ctx.Done()
		return fmt.Errorf("hw: tumble: %w", hw.ErrStopped)
	}
	return fail
}
func (m *fakeMotor) Off() error {
	m.mu.Lock()
	m.offs++
	m.mu.Unlock()
	return nil
}
func (m *fakeMotor) counts() (tumbles, offs int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.tumbles, m.offs
}

// scriptEyes return scripted looks in turn, then faces of 1.
type scriptEyes struct {
	mu     sync.Mutex
	looks  []func(physical []rules.Die) (Look, error)
	asked  [][]rules.Die
	panics bool
}

func (e *scriptEyes) Look(ctx context.Context, physical []rules.Die, settled func()) (Look, error) {
	e.mu.Lock()
	e.asked = append(e.asked, physical)
	var f func([]rules.Die) (Look, error)
	if len(e.looks) > 0 {
		f, e.looks = e.looks[0], e.looks[1:]
	}
	panics := e.panics
	e.mu.Unlock()
	if panics {
		panic("eyes exploded")
	}
	if f == nil {
		f = func(p []rules.Die) (Look, error) {
			if len(p) == 0 {
				p = FreeDice // a free roll: the player dropped two d6
			}
			return faces(p, 1), nil
		}
	}
	lk, err := f(physical)
	if err == nil {
		settled()
	}
	return lk, err
}

// faces is a look of the physical dice all showing face f (physical
// numbering; 0 for d10 and d100 gives 10 and 100).
func faces(physical []rules.Die, f ...int) Look {
	var out []Seen
	for i, d := range physical {
		v := f[min(i, len(f)-1)]
		out = append(out, Seen{Die: d, Face: &v, Confidence: 1})
	}
	return Look{Dice: out, Settle: 100 * time.Millisecond}
}

type memHist struct {
	mu   sync.Mutex
	recs []history.Record
}

func (h *memHist) Append(r history.Record) error {
	h.mu.Lock()
	h.recs = append(h.recs, r)
	h.mu.Unlock()
	return nil
}

type rig struct {
	loop   *Loop
	out    *fakeOut
	motor  *fakeMotor
	eyes   *scriptEyes
	button chan hw.ButtonEvent
	hist   *memHist
	clk    *clock.Fake
	cancel context.CancelFunc
	done   chan error
}

func req(t *testing.T, js string) *rules.Request {
	t.Helper()
	r, err := rules.ParseRequest([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func newRig(t *testing.T, mod func(*Config)) *rig {
	t.Helper()
	r := &rig{out: newOut(), motor: &fakeMotor{}, eyes: &scriptEyes{}, button: make(chan hw.ButtonEvent),
		hist: &memHist{}, clk: clock.NewFake(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))}
	cfg := Config{Tower: "t1", Default: req(t, `{"system":"dice","expr":"2d6"}`), AutoRoll: true,
		MaxRetries: 2, Source: rules.SourceSim, Clock: r.clk}
	if mod != nil {
		mod(&cfg)
	}
	l, err := New(cfg, r.motor, r.button, r.eyes, r.out, r.hist)
	if err != nil {
		t.Fatal(err)
	}
	r.loop = l
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel, r.done = cancel, make(chan error, 1)
	go func() { r.done <- l.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-r.done; err != nil {
			t.Errorf("Run: %v", err)
		}
		if _, offs := r.motor.counts(); offs == 0 {
			t.Error("the motor was never switched off on the way out")
		}
	})
	r.out.waitState(t, StateIdle)
	return r
}

func (r *rig) send(t *testing.T, js string) {
	t.Helper()
	r.out.reqs <- &mqtt.Incoming{Request: req(t, js)}
}

func TestRequestRollsAndPublishes(t *testing.T) {
	r := newRig(t, nil)
	r.eyes.looks = append(r.eyes.looks, func(p []rules.Die) (Look, error) { return faces(p, 3, 5), nil })
	r.send(t, `{"id":"r1","system":"dice","expr":"2d6+1"}`)
	res := <-r.out.results
	if res.ID != "r1" || res.Total != 9 || res.Source != rules.SourceSim || res.Tower != "t1" {
		t.Fatalf("result %+v", res)
	}
	r.out.waitState(t, StateIdle)
	want := []string{"state tumbling", "state settling", "state reading", "result r1", "state idle"}
	if got := r.out.history()[1:]; strings.Join(got, ";") != strings.Join(want, ";") {
		t.Fatalf("messages %q, want %q", got, want)
	}
	r.hist.mu.Lock()
	defer r.hist.mu.Unlock()
	if len(r.hist.recs) != 1 || r.hist.recs[0].Kind != history.KindResult || r.hist.recs[0].SettleMS != 100 {
		t.Fatalf("history %+v", r.hist.recs)
	}
}

func TestButtonRollsDefault(t *testing.T) {
	r := newRig(t, func(c *Config) { c.LongPress = req(t, `{"system":"dice","expr":"1d20"}`) })
	r.button <- hw.ButtonEvent{Kind: hw.Press}
	if res := <-r.out.results; res.ID != "" || len(res.Dice) != 2 || res.Dice[0].Die != rules.D6 {
		t.Fatalf("press: %+v", res)
	}
	r.button <- hw.ButtonEvent{Kind: hw.LongPress}
	if res := <-r.out.results; len(res.Dice) != 1 || res.Dice[0].Die != rules.D20 {
		t.Fatalf("long press: %+v", res)
	}
}

func TestMisreadTumblesAgain(t *testing.T) {
	r := newRig(t, nil)
	cocked := func(p []rules.Die) (Look, error) {
		lk := faces(p, 2)
		lk.Dice[0].Cocked, lk.Dice[0].Face = true, nil
		return lk, nil
	}
	missing := func(p []rules.Die) (Look, error) { return faces(p[:1], 2), nil }
	r.eyes.looks = append(r.eyes.looks, cocked, missing)
	r.send(t, `{"id":"m1","system":"dice","expr":"2d8"}`)
	res := <-r.out.results
	if res.ID != "m1" || res.Total != 2 {
		t.Fatalf("result %+v", res)
	}
	if n, _ := r.motor.counts(); n != 3 {
		t.Fatalf("%d tumbles, want 3 (two misreads)", n)
	}
	h := strings.Join(r.out.history(), ";")
	if strings.Count(h, "event retumble") != 2 {
		t.Fatalf("messages %s", h)
	}
}

func TestMisreadGivesUp(t *testing.T) {
	r := newRig(t, func(c *Config) { c.MaxRetries = 1 })
	unread := func(p []rules.Die) (Look, error) {
		lk := faces(p, 4)
		lk.Dice[0].Face = nil
		return lk, nil
	}
	r.eyes.looks = append(r.eyes.looks, unread, unread)
	r.send(t, `{"id":"m2","system":"dice","expr":"1d12"}`)
	e := <-r.out.errs
	if e.ID != "m2" || e.Code != rules.CodeMisread || !strings.Contains(e.Message, "d12 could not be read") {
		t.Fatalf("error %+v", e)
	}
	if n, _ := r.motor.counts(); n != 2 {
		t.Fatalf("%d tumbles, want 2", n)
	}
	if len(r.out.results) != 0 {
		t.Fatal("a result was published for dice that were not read")
	}
}

func TestMotorFaultAndRecovery(t *testing.T) {
	r := newRig(t, nil)
	r.motor.fail = fmt.Errorf("hw: tumble: %w", hw.ErrFault)
	r.send(t, `{"id":"f1","system":"dice","expr":"1d6"}`)
	e := <-r.out.errs
	if e.Code != rules.CodeHardware || e.ID != "f1" {
		t.Fatalf("error %+v", e)
	}
	r.out.waitState(t, StateFault)
	if s, why := r.loop.State(); s != StateFault || !strings.Contains(why, "hardware fault") {
		t.Fatalf("state %s %q", s, why)
	}
	r.motor.mu.Lock()
	r.motor.fail = nil
	r.motor.mu.Unlock()
	r.send(t, `{"id":"f2","system":"dice","expr":"1d6"}`)
	if res := <-r.out.results; res.ID != "f2" {
		t.Fatalf("result %+v", res)
	}
	r.out.waitState(t, StateIdle)
	if h := strings.Join(r.out.history(), ";"); !strings.Contains(h, "event fault") || !strings.Contains(h, "event recovered") {
		t.Fatalf("messages %s", h)
	}
}

func TestCameraFaultRecoversByProbe(t *testing.T) {
	pe := &probeEyes{scriptEyes: &scriptEyes{}, probe: errors.New("no camera")}
	out, motor := newOut(), &fakeMotor{}
	clk := clock.NewFake(time.Unix(0, 0))
	l, err := New(Config{Tower: "t", Default: req(t, `{"system":"dice","expr":"d6"}`), AutoRoll: true, Clock: clk,
		ProbeEvery: time.Second, ProgressEvery: time.Hour}, motor, nil, pe, out, nil)
	if err != nil {
		t.Fatal(err)
	}
	pe.looks = append(pe.looks, func([]rules.Die) (Look, error) {
		return Look{}, fmt.Errorf("%w: camera unplugged", ErrHardware)
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx) }()
	out.waitState(t, StateIdle)
	out.reqs <- &mqtt.Incoming{Request: req(t, `{"id":"c1","system":"dice","expr":"d6"}`)}
	if e := <-out.errs; e.Code != rules.CodeHardware || !strings.Contains(e.Message, "camera unplugged") {
		t.Fatalf("error %+v", e)
	}
	out.waitState(t, StateFault)
	// While the camera is still gone the probe keeps the fault.
	clk.BlockUntil(2)
	clk.Advance(time.Second)
	clk.BlockUntil(2) // the next probe is scheduled: this one failed
	if s, _ := l.State(); s != StateFault {
		t.Fatalf("state %s while the camera is gone", s)
	}
	pe.mu.Lock()
	pe.probe = nil
	pe.mu.Unlock()
	clk.Advance(time.Second)
	out.waitState(t, StateIdle)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if s, _ := l.State(); s != StateIdle {
		t.Fatalf("state %s after the camera came back", s)
	}
}

type probeEyes struct {
	*scriptEyes
	probe error
}

func (p *probeEyes) Probe(context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.probe
}

func TestWaitsForButton(t *testing.T) {
	r := newRig(t, func(c *Config) { c.AutoRoll = false })
	r.send(t, `{"id":"w1","system":"dice","expr":"3d4"}`)
	r.out.waitState(t, StateWaiting)
	if n, _ := r.motor.counts(); n != 0 {
		t.Fatal("the motor ran before the button was pressed")
	}
	r.button <- hw.ButtonEvent{Kind: hw.Press}
	if res := <-r.out.results; res.ID != "w1" || len(res.Dice) != 3 {
		t.Fatalf("result %+v", res)
	}
	if h := strings.Join(r.out.history(), ";"); !strings.Contains(h, "event plan") {
		t.Fatalf("no plan event: %s", h)
	}
}

func TestWaitTimesOut(t *testing.T) {
	r := newRig(t, func(c *Config) { c.AutoRoll = false; c.WaitTimeout = time.Minute; c.ProgressEvery = time.Hour })
	r.send(t, `{"id":"w2","system":"dice","expr":"1d4"}`)
	r.out.waitState(t, StateWaiting)
	r.clk.BlockUntil(4) // loop tick, loop probe, wait timeout, wait tick
	r.clk.Advance(time.Minute)
	if e := <-r.out.errs; e.Code != rules.CodeTimeout || e.ID != "w2" {
		t.Fatalf("error %+v", e)
	}
	if n, _ := r.motor.counts(); n != 0 {
		t.Fatal("the motor ran for a request nobody confirmed")
	}
}

func TestFollowupDie(t *testing.T) {
	r := newRig(t, nil)
	r.eyes.looks = append(r.eyes.looks,
		func(p []rules.Die) (Look, error) { return faces(p, 8), nil },
		func(p []rules.Die) (Look, error) { return faces(p, 8), nil })
	r.send(t, `{"id":"y1","system":"ydin","attribute":4,"skill":2}`)
	res := <-r.out.results
	if res.Outcome.Outcome != "catastrophic_failure" || len(res.Dice) != 2 || !res.Dice[1].Followup {
		t.Fatalf("result %+v", res)
	}
	r.eyes.mu.Lock()
	defer r.eyes.mu.Unlock()
	if len(r.eyes.asked) != 2 || len(r.eyes.asked[1]) != 1 || r.eyes.asked[1][0] != rules.D8 {
		t.Fatalf("dice asked for: %v", r.eyes.asked)
	}
}

func TestPercentileAndFree(t *testing.T) {
	r := newRig(t, nil)
	// d% + d10: the percentile die 00 pairs with the d10 beside it (0):
	// 100; the far d10 shows 7.
	r.eyes.looks = append(r.eyes.looks, func(p []rules.Die) (Look, error) {
		zero, seven := 0, 7
		return Look{Dice: []Seen{
			{Die: rules.D100, Face: &zero, Box: rect(0, 0)},
			{Die: rules.D10, Face: &seven, Box: rect(500, 0)},
			{Die: rules.D10, Face: &zero, Box: rect(40, 0)},
		}}, nil
	})
	r.send(t, `{"id":"p1","system":"dice","expr":"d%+1d10"}`)
	if res := <-r.out.results; res.Total != 107 {
		t.Fatalf("result %+v", res)
	}
	r.send(t, `{"id":"free","system":"dice"}`)
	if res := <-r.out.results; res.Total != 2 || len(res.Dice) != 2 {
		t.Fatalf("free roll %+v", res)
	}
}

func TestSettleTimeout(t *testing.T) {
	r := newRig(t, func(c *Config) { c.SettleTimeout = 3 * time.Second; c.ProgressEvery = time.Hour })
	r.eyes.looks = append(r.eyes.looks, nil)
	blocked := make(chan struct{})
	r.eyes.looks[0] = func([]rules.Die) (Look, error) { <-blocked; return Look{}, context.Canceled }
	r.send(t, `{"id":"s1","system":"dice","expr":"1d6"}`)
	r.out.waitState(t, StateSettling)
	r.clk.BlockUntil(3)
	r.clk.Advance(3 * time.Second)
	close(blocked)
	if e := <-r.out.errs; e.Code != rules.CodeTimeout || e.ID != "s1" {
		t.Fatalf("error %+v", e)
	}
}

// runBare runs a loop with no button, eyes that read ones and no history.
func runBare(t *testing.T, motor *fakeMotor, out *fakeOut) (context.CancelFunc, <-chan error) {
	l, err := New(Config{Tower: "t", Default: req(t, `{"system":"dice","expr":"d6"}`), AutoRoll: true,
		Clock: clock.NewFake(time.Unix(0, 0))}, motor, nil, &scriptEyes{}, out, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx) }()
	return cancel, done
}

func TestShutdownMidRoll(t *testing.T) {
	out, motor := newOut(), &fakeMotor{block: true, started: make(chan struct{}, 1)}
	cancel, done := runBare(t, motor, out)
	out.reqs <- &mqtt.Incoming{Request: req(t, `{"id":"x","system":"dice","expr":"d6"}`)}
	<-motor.started
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, offs := motor.counts(); offs == 0 {
		t.Fatal("motor not switched off")
	}
	if len(out.results)+len(out.errs) != 0 {
		t.Fatal("an aborted roll was answered; it must stay in the journal for the restart")
	}
}

func TestPanicLeavesMotorOff(t *testing.T) {
	r := newRig(t, nil)
	r.eyes.panics = true
	r.send(t, `{"id":"x","system":"dice","expr":"d6"}`)
	if e := <-r.out.errs; e.Code != rules.CodeHardware || !strings.Contains(e.Message, "panic") {
		t.Fatalf("error %+v", e)
	}
	if _, offs := r.motor.counts(); offs == 0 {
		t.Fatal("motor not switched off after the panic")
	}
	// The loop goes on.
	r.eyes.mu.Lock()
	r.eyes.panics = false
	r.eyes.mu.Unlock()
	r.send(t, `{"id":"y","system":"dice","expr":"d6"}`)
	if res := <-r.out.results; res.ID != "y" {
		t.Fatalf("result %+v", res)
	}
}

func rect(x, y int) image.Rectangle { return image.Rect(x, y, x+30, y+30) }

// A signal switches the motor off (hw.OffOnSignal) a moment before the
// shutdown reaches the loop: the roll is aborted, not answered with a
// hardware error, and the tower does not go to fault.
func TestSignalMidRollIsAnAbort(t *testing.T) {
	out := newOut()
	motor := &fakeMotor{fail: fmt.Errorf("hw: motor: tumble stopped by a signal: %w: %w", hw.ErrStopped, hw.ErrShutdown),
		started: make(chan struct{}, 1)}
	cancel, done := runBare(t, motor, out)
	out.reqs <- &mqtt.Incoming{Request: req(t, `{"id":"x","system":"dice","expr":"d6"}`)}
	<-motor.started
	out.reqs <- &mqtt.Incoming{Request: req(t, `{"id":"y","system":"dice","expr":"d6"}`)}
	<-motor.started // the loop is sequential: x is over
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(out.results)+len(out.errs) != 0 {
		t.Fatal("a roll stopped by the shutdown signal was answered; it must stay in the journal")
	}
	for _, h := range out.history() {
		if h == "state "+StateFault {
			t.Fatalf("the tower went to fault on a shutdown: %v", out.history())
		}
	}
}
