package mqtt_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/towerd/towerd/mqtt"
	"github.com/towerd/towerd/mqtt/mqtttest"
	"github.com/towerd/towerd/rules"
)

// guard bounds every wait; it only fires when something is broken. It is
// generous because a stop and restart of the broker waits out reconnect
// backoff, and a loaded CI machine (or a VM its host pauses for seconds)
// stretches that (one run at load 11 failed with a 30 s guard, its output
// lost, and passed five times after).
const guard = 60 * time.Second

// testLog collects the package's logs and prints them when the test fails.
func testLog(t *testing.T) *slog.Logger {
	var mu sync.Mutex
	var buf bytes.Buffer
	t.Cleanup(func() {
		if t.Failed() || os.Getenv("TOWERD_MQTT_LOGS") != "" {
			mu.Lock()
			t.Logf("logs:\n%s", buf.String())
			mu.Unlock()
		}
	})
	return slog.New(slog.NewTextHandler(lockedWriter{&mu, &buf}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

// broker is a broker a test can stop and start again on the same address.
type broker interface {
	URL() string
	Stop()
	Start()
}

// embedded runs mqtt.StartBroker, restartable on its port.
type embedded struct {
	t    *testing.T
	cfg  mqtt.Config
	log  *slog.Logger
	addr string
	b    *mqtt.Broker
}

func startEmbedded(t *testing.T, cfg mqtt.Config, log *slog.Logger) *embedded {
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	e := &embedded{t: t, cfg: cfg, log: log}
	e.Start()
	e.addr = e.b.Addr()
	e.cfg.Listen = e.addr
	t.Cleanup(e.Stop)
	return e
}

func (e *embedded) URL() string { return e.b.URL() }
func (e *embedded) Stop()       { e.b.Close() }
func (e *embedded) Start() {
	b, err := mqtt.StartBroker(context.Background(), e.cfg, e.log)
	if err != nil {
		e.t.Fatalf("StartBroker: %v", err)
	}
	e.b = b
}

type brokerKind struct {
	name  string
	start func(t *testing.T, log *slog.Logger) broker
}

var kinds = []brokerKind{
	{"embedded", func(t *testing.T, log *slog.Logger) broker { return startEmbedded(t, mqtt.Config{}, log) }},
	{"mosquitto", func(t *testing.T, _ *slog.Logger) broker { return mqtttest.StartMosquitto(t) }},
}

func forEachBroker(t *testing.T, f func(t *testing.T, b broker, log *slog.Logger)) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			log := testLog(t)
			f(t, k.start(t, log), log)
		})
	}
}

// rolls counts, per request id, the answers stored by the rollers of all
// the clients a test runs on one state dir.
type rolls struct {
	mu     sync.Mutex
	byID   map[string]int
	handed map[string]int
}

func newRolls() *rolls { return &rolls{byID: map[string]int{}, handed: map[string]int{}} }

func (r *rolls) answered(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.byID[id]
}

// tower is a client with a simulated roller.
type tower struct {
	c    *mqtt.Client
	done chan struct{}
}

func startTower(t *testing.T, cfg mqtt.Config, stateDir string, log *slog.Logger, r *rolls) *tower {
	t.Helper()
	c, err := mqtt.Connect(context.Background(), cfg, stateDir, log)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	tw := &tower{c: c, done: make(chan struct{})}
	roller := &mqtttest.Roller{Client: c, Rand: rand.New(rand.NewPCG(7, uint64(time.Now().UnixNano()))), Parallel: 8}
	if r != nil {
		roller.OnAnswered = func(in *mqtt.Incoming, _ rules.Result) {
			r.mu.Lock()
			r.byID[in.Request.ID]++
			r.mu.Unlock()
		}
	}
	go func() {
		defer close(tw.done)
		roller.Run()
	}()
	t.Cleanup(func() { tw.close(t) })
	return tw
}

func (tw *tower) close(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := tw.c.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
	<-tw.done
}

func (tw *tower) crash() {
	mqtt.Crash(tw.c)
	<-tw.done
}

func towerConfig(url, id string) mqtt.Config {
	// A connect attempt that reaches a broker as it restarts, and a
	// publish caught as the connection drops (a crash, a broker stopped),
	// wait out their timeouts: 10 s each by default, and runs of
	// TestNothingLostNothingRolledTwice took 10, 20, 40 s.
	return mqtt.Config{Broker: url, TowerID: id, MaxReconnectInterval: 100 * time.Millisecond,
		ConnectTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second}
}

func TestRequestsResultsAndErrors(t *testing.T) {
	forEachBroker(t, func(t *testing.T, b broker, log *slog.Logger) {
		cfg := towerConfig(b.URL(), "t1")
		tw := startTower(t, cfg, t.TempDir(), log, nil)
		bot := mqtttest.NewBot(t, b.URL(), "dicetower/t1", mqtttest.BotOptions{ClientID: "bot-" + t.Name()})
		bot.WaitStatus(guard, "online")

		good := map[string]string{
			"r1": `{"id":"r1","system":"dice","expr":"2d6"}`,
			"r2": `{"id":"r2","label":"Damage","system":"dice","expr":"3d4+4"}`,
			"r3": `{"id":"r3","system":"dice"}`,
			"r4": `{"id":"r4","system":"ydin","attribute":4,"skill":2}`,
		}
		bad := map[string]string{
			"b1": `{"id":"b1","system":`,
			"b2": `{"id":"b2","system":"dice","expr":7}`,
			"b3": `{"id":"b3","system":"dice","label":"` + strings.Repeat("x", 17<<10) + `"}`,
			"b4": `{"id":"b4","system":"dice","expr":"2d6","colour":"red"}`,
		}
		var ids []string
		for id, p := range good {
			bot.Send(id, []byte(p))
			ids = append(ids, id)
		}
		for id, p := range bad {
			bot.Send(id, []byte(p))
			ids = append(ids, id)
		}
		bot.Send("", []byte("\x00\x01\xfe\xffgarbage"))
		bot.WaitAnswered(guard, ids...)
		bot.Wait("the error for the garbage", guard, func() bool { return len(bot.Errors("")) > 0 })

		seqs := map[uint64]string{}
		for id := range good {
			res := mqtttest.Distinct(bot.Results(id))
			if len(res) != 1 || len(bot.Errors(id)) != 0 {
				t.Fatalf("%s: %d results %v errors, want one result", id, len(res), bot.Errors(id))
			}
			a := res[0]
			if a.Tower != "t1" || a.Seq == 0 || a.Outcome == "" {
				t.Errorf("%s: result %s", id, a.Raw)
			}
			if other, dup := seqs[a.Seq]; dup {
				t.Errorf("seq %d given to %s and %s", a.Seq, id, other)
			}
			seqs[a.Seq] = id
		}
		for id := range bad {
			errs := mqtttest.Distinct(bot.Errors(id))
			if len(errs) != 1 || errs[0].Code != rules.CodeBadRequest || errs[0].Message == "" || len(bot.Results(id)) != 0 {
				t.Errorf("%s: errors %+v, want one bad_request", id, errs)
			}
		}
		if f := bot.Errors("b2")[0].Field; f != "expr" {
			t.Errorf("b2 blamed field %q, want expr", f)
		}
		if e := bot.Errors("")[0]; e.Code != rules.CodeBadRequest {
			t.Errorf("garbage: %+v", e)
		}

		// State (retained) and events reach subscribers.
		// Every state change goes out, in order with the events.
		bot.Watch("dicetower/t1/state")
		bot.Watch("dicetower/t1/event")
		bot.Watch("dicetower/t1/stats")
		if err := tw.c.PublishState("tumbling", "r9", 2); err != nil {
			t.Fatal(err)
		}
		if err := tw.c.PublishState("spinning", "", 0); err == nil {
			t.Error("unknown state accepted")
		}
		tw.c.PublishEvent("motor_start", map[string]any{"ms": 1200})
		for _, st := range []string{"settling", "reading", "idle"} {
			tw.c.PublishState(st, "", 0)
		}
		if err := tw.c.PublishStats([]byte(`{"rolls":1}`)); err != nil {
			t.Fatal(err)
		}
		if err := tw.c.PublishStats([]byte(`{"rolls":`)); err == nil {
			t.Error("stats that are not JSON accepted")
		}
		var seen []string
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("seen %q", seen)
			}
		})
		bot.Wait("states, event and stats", guard, func() bool {
			seen = seen[:0]
			for _, m := range bot.Watched() {
				var v struct{ State, Event string }
				json.Unmarshal(m.Payload, &v)
				switch {
				case strings.HasSuffix(m.Topic, "/stats") && string(m.Payload) == `{"rolls":1}` && m.Retained == false:
					seen = append(seen, "stats")
				case v.State != "" && v.State != "idle" || v.State == "idle" && len(seen) > 0:
					seen = append(seen, v.State)
				case v.Event != "" && strings.Contains(string(m.Payload), `"ms":1200`):
					seen = append(seen, v.Event)
				}
			}
			return strings.Join(seen, " ") == "tumbling motor_start settling reading idle stats"
		})
		// The stats are retained for a subscriber arriving later.
		late := mqtttest.NewBot(t, b.URL(), "dicetower/t1", mqtttest.BotOptions{ClientID: "late-" + t.Name()})
		late.Watch("dicetower/t1/stats")
		late.Wait("retained stats", guard, func() bool {
			for _, m := range late.Watched() {
				if m.Retained && string(m.Payload) == `{"rolls":1}` {
					return true
				}
			}
			return false
		})
	})
}

func TestRetainedStatusAndLastWill(t *testing.T) {
	forEachBroker(t, func(t *testing.T, b broker, log *slog.Logger) {
		cfg := towerConfig(b.URL(), "t2")
		dir := t.TempDir()
		tw := startTower(t, cfg, dir, log, nil)
		first := mqtttest.NewBot(t, b.URL(), "dicetower/t2", mqtttest.BotOptions{ClientID: "watch-" + t.Name()})
		first.WaitStatus(guard, "online")

		// A subscriber arriving later gets the retained status.
		late := retainedStatus(t, b.URL(), "dicetower/t2")
		if late != "online" {
			t.Fatalf("retained status %q, want online", late)
		}

		tw.crash()
		first.WaitStatus(guard, "offline") // the last will
		if s := retainedStatus(t, b.URL(), "dicetower/t2"); s != "offline" {
			t.Fatalf("retained status after a crash %q, want offline", s)
		}

		tw2 := startTower(t, cfg, dir, log, nil)
		first.WaitStatus(guard, "online")
		tw2.close(t) // clean: says offline itself (no will on DISCONNECT)
		first.WaitStatus(guard, "offline")
		if s := retainedStatus(t, b.URL(), "dicetower/t2"); s != "offline" {
			t.Fatalf("retained status after Close %q, want offline", s)
		}
	})
}

// retainedStatus subscribes with a fresh clean session and returns the
// retained status.
func retainedStatus(t *testing.T, url, prefix string) string {
	t.Helper()
	got := make(chan string, 1)
	opts := paho.NewClientOptions().AddBroker(url).SetClientID(fmt.Sprintf("peek-%d", time.Now().UnixNano())).SetCleanSession(true)
	pc := paho.NewClient(opts)
	if tok := pc.Connect(); !tok.WaitTimeout(guard) || tok.Error() != nil {
		t.Fatalf("peek connect: %v", tok.Error())
	}
	defer pc.Disconnect(50)
	pc.Subscribe(prefix+"/status", 1, func(_ paho.Client, m paho.Message) {
		if m.Retained() {
			select {
			case got <- string(m.Payload()):
			default:
			}
		}
	})
	select {
	case s := <-got:
		return s
	case <-time.After(guard):
		t.Fatal("no retained status")
		return ""
	}
}

func TestBusyWhenTheQueueIsFull(t *testing.T) {
	log := testLog(t)
	b := startEmbedded(t, mqtt.Config{}, log)
	cfg := towerConfig(b.URL(), "t3")
	cfg.QueueSize = 2
	c, err := mqtt.Connect(context.Background(), cfg, t.TempDir(), log)
	if err != nil {
		t.Fatal(err)
	}
	bot := mqtttest.NewBot(t, b.URL(), "dicetower/t3", mqtttest.BotOptions{})
	bot.WaitStatus(guard, "online")
	for i := 1; i <= 5; i++ {
		bot.SendDice(fmt.Sprint("q", i), "d6")
	}
	bot.WaitAnswered(guard, "q3", "q4", "q5")
	for _, id := range []string{"q3", "q4", "q5"} {
		if e := mqtttest.Distinct(bot.Errors(id)); len(e) != 1 || e[0].Code != rules.CodeBusy {
			t.Errorf("%s: %+v, want busy", id, e)
		}
	}
	if n := c.QueueLen(); n != 2 {
		t.Errorf("QueueLen %d, want 2", n)
	}
	// The queued ones are rolled once the tower gets to them.
	tw := &tower{c: c, done: make(chan struct{})}
	go func() {
		defer close(tw.done)
		(&mqtttest.Roller{Client: c}).Run()
	}()
	t.Cleanup(func() { tw.close(t) })
	bot.WaitAnswered(guard, "q1", "q2")
	for _, id := range []string{"q1", "q2"} {
		if n := len(mqtttest.Distinct(bot.Results(id))); n != 1 {
			t.Errorf("%s: %d distinct results, want 1", id, n)
		}
	}
}

func TestRedeliveredRequestIsAnsweredNotRolled(t *testing.T) {
	log := testLog(t)
	b := startEmbedded(t, mqtt.Config{}, log)
	c, err := mqtt.Connect(context.Background(), towerConfig(b.URL(), "t4"), t.TempDir(), log)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	bot := mqtttest.NewBot(t, b.URL(), "dicetower/t4", mqtttest.BotOptions{})
	bot.WaitStatus(guard, "online")
	next := func() *mqtt.Incoming {
		t.Helper()
		select {
		case in := <-c.Requests():
			return in
		case <-time.After(guard):
			t.Fatal("no request handed out")
			return nil
		}
	}
	answer := func(in *mqtt.Incoming) rules.Result {
		t.Helper()
		o, err := mqtttest.Roll(in.Request, rand.New(rand.NewPCG(1, 1)))
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.PublishResult(in, rules.NewResult(in.Request, o, "", 0, time.Now(), rules.SourceSim))
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	// A duplicate of a request in progress is not handed out again: the
	// request after it comes next.
	bot.SendDice("a", "2d6")
	inA := next()
	bot.SendDice("a", "2d6")
	bot.SendDice("b", "d8")
	if inB := next(); inB.Request.ID != "b" {
		t.Fatalf("handed out %q, want b (the duplicate of a must be dropped)", inB.Request.ID)
	} else {
		answer(inB)
	}
	resA := answer(inA)
	bot.WaitAnswered(guard, "a", "b")

	// A duplicate of an answered request gets the stored answer again.
	bot.SendDice("a", "2d6")
	bot.Wait("the answer to a again", guard, func() bool { return len(bot.Results("a")) == 2 })
	for _, r := range bot.Results("a") {
		if r.Seq != resA.Seq {
			t.Errorf("a answered with seq %d, want %d both times", r.Seq, resA.Seq)
		}
	}
	if _, err := c.PublishResult(inA, rules.NewResult(inA.Request, rules.Outcome{}, "", 0, time.Now(), rules.SourceSim)); err != mqtt.ErrAnswered {
		t.Errorf("second answer to a: %v, want ErrAnswered", err)
	}

	// Requests without an id cannot be told apart: each is a new roll.
	bot.Send("", []byte(`{"system":"dice","expr":"d4"}`))
	bot.Send("", []byte(`{"system":"dice","expr":"d4"}`))
	x, y := answer(next()), answer(next())
	if x.Seq == y.Seq {
		t.Errorf("two requests without id share seq %d", x.Seq)
	}
}

// TestNothingLostNothingRolledTwice streams requests while the broker is
// stopped and restarted and while towerd crashes and restarts from its state
// dir: every request gets exactly one result (one seq), none is rolled
// twice.
func TestNothingLostNothingRolledTwice(t *testing.T) {
	forEachBroker(t, func(t *testing.T, b broker, log *slog.Logger) {
		cfg := towerConfig(b.URL(), "t5")
		cfg.QueueSize = 256
		dir := t.TempDir()
		r := newRolls()
		tw := startTower(t, cfg, dir, log, r)
		bot := mqtttest.NewBot(t, b.URL(), "dicetower/t5", mqtttest.BotOptions{ClientID: "bot-" + t.Name(), Resend: true})
		bot.WaitStatus(guard, "online")

		var ids []string
		send := func(from, to int) {
			for i := from; i < to; i++ {
				id := fmt.Sprintf("s%03d", i)
				ids = append(ids, id)
				bot.SendDice(id, "3d6")
			}
		}
		send(0, 30)
		bot.WaitAnswered(guard, ids[:10]...)

		b.Stop() // mid-stream: the tower keeps rolling what it has
		send(30, 45)
		b.Start()
		bot.WaitAnswered(guard, ids[:45]...)

		send(45, 75)
		bot.WaitAnswered(guard, ids[45:50]...)
		tw.crash() // mid-stream again, now towerd itself
		send(75, 90)
		tw = startTower(t, cfg, dir, log, r)
		send(90, 100)
		bot.WaitAnswered(guard, ids...)
		// What the crashed run left undelivered is delivered by this one,
		// not left for the next start (its publisher once began before
		// paho connected, and paho refused those).
		tw.close(t)
		if n := mqtt.Unacked(tw.c); n > 0 {
			t.Errorf("%d answers left undelivered at close", n)
		}

		seqOwner := map[uint64]string{}
		for _, id := range ids {
			if e := bot.Errors(id); len(e) > 0 {
				t.Errorf("%s: error %s", id, e[0].Raw)
			}
			seqs := mqtttest.Seqs(bot.Results(id))
			if len(seqs) != 1 {
				t.Errorf("%s: answered with %d different seqs %v, want 1", id, len(seqs), seqs)
			}
			for s := range seqs {
				if o, ok := seqOwner[s]; ok && o != id {
					t.Errorf("seq %d answers both %s and %s", s, o, id)
				}
				seqOwner[s] = id
			}
			if n := r.answered(id); n > 1 {
				t.Errorf("%s rolled and answered %d times", id, n)
			}
		}
	})
}

func TestHomeAssistantDiscovery(t *testing.T) {
	log := testLog(t)
	b := startEmbedded(t, mqtt.Config{}, log)
	cfg := towerConfig(b.URL(), "t6")
	cfg.HomeAssistant = mqtt.HomeAssistant{Enabled: true, DefaultRoll: `{"system":"dice","expr":"1d20"}`}
	startTower(t, cfg, t.TempDir(), log, nil)
	const filter = "homeassistant/+/towerd_t6/+/config"
	// configs returns the discovery configs a bot received (from its
	// from-th watched message on), by topic; with retainedOnly only those
	// that came as retained messages.
	configs := func(bot *mqtttest.Bot, from int, retainedOnly bool) map[string][]byte {
		out := map[string][]byte{}
		for _, m := range bot.Watched()[from:] {
			if strings.HasSuffix(m.Topic, "/config") && (m.Retained || !retainedOnly) {
				out[m.Topic] = m.Payload
			}
		}
		return out
	}
	ha := mqtttest.NewBot(t, b.URL(), "dicetower/t6", mqtttest.BotOptions{ClientID: "ha"})
	ha.Watch(filter)
	ha.Wait("three discovery configs", guard, func() bool { return len(configs(ha, 0, false)) == 3 })

	// They are retained: a subscriber arriving later gets them too.
	late := mqtttest.NewBot(t, b.URL(), "dicetower/t6", mqtttest.BotOptions{ClientID: "ha-late"})
	late.Watch(filter)
	late.Wait("three retained discovery configs", guard, func() bool { return len(configs(late, 0, true)) == 3 })

	// Home Assistant (re)starting says online on its status topic: the
	// tower sends discovery again.
	n := len(ha.Watched())
	ha.Publish("homeassistant/status", false, []byte("online"))
	ha.Wait("discovery re-sent", guard, func() bool { return len(configs(ha, n, false)) == 3 })

	all := configs(late, 0, true)
	var button struct {
		CommandTopic string `json:"command_topic"`
		PayloadPress string `json:"payload_press"`
		Availability string `json:"availability_topic"`
	}
	if err := json.Unmarshal(all["homeassistant/button/towerd_t6/roll/config"], &button); err != nil {
		t.Fatal(err)
	}
	if button.Availability != "dicetower/t6/status" || button.CommandTopic != "dicetower/t6/roll" {
		t.Errorf("button config %+v", button)
	}
	var sensor, event struct {
		StateTopic string   `json:"state_topic"`
		Attributes string   `json:"json_attributes_topic"`
		Types      []string `json:"event_types"`
	}
	if err := json.Unmarshal(all["homeassistant/sensor/towerd_t6/last_result/config"], &sensor); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(all["homeassistant/event/towerd_t6/outcome/config"], &event); err != nil {
		t.Fatal(err)
	}
	if sensor.StateTopic != "dicetower/t6/result" || sensor.Attributes != "dicetower/t6/result" {
		t.Errorf("sensor config %+v", sensor)
	}
	if event.StateTopic != "dicetower/t6/result" || !slices.Contains(event.Types, "rolled") || !slices.Contains(event.Types, "critical_success") {
		t.Errorf("event config %+v", event)
	}

	// Pressing the button is publishing its payload: a roll without id.
	ha.Publish(button.CommandTopic, false, []byte(button.PayloadPress))
	ha.Wait("the button's roll", guard, func() bool { return len(ha.Results("")) > 0 })
	a := ha.Results("")[0]
	if a.System != "dice" || a.Total < 1 || a.Total > 20 {
		t.Errorf("button roll: %s", a.Raw)
	}

	// The embedded broker keeps nothing across a restart: when the tower
	// reconnects it restores its status, discovery and the last result.
	b.Stop()
	b.Start()
	// A subscriber present while the tower reconnects sees the restored
	// messages live; the last result is the last of them.
	watcher := mqtttest.NewBot(t, b.URL(), "dicetower/t6", mqtttest.BotOptions{ClientID: "ha-watch"})
	watcher.Wait("the last result restored", guard, func() bool { return len(watcher.Results("")) > 0 })
	// One arriving later gets them retained.
	after := mqtttest.NewBot(t, b.URL(), "dicetower/t6", mqtttest.BotOptions{ClientID: "ha-after"})
	after.Watch(filter)
	after.Wait("discovery restored", guard, func() bool { return len(configs(after, 0, true)) == 3 })
	after.WaitStatus(guard, "online")
	after.Wait("retained result", guard, func() bool { return len(after.Results("")) > 0 })
	if r := after.Results("")[0]; r.Seq != a.Seq || !r.Retained {
		t.Errorf("retained result after the restart: %s (retained %v), want seq %d", r.Raw, r.Retained, a.Seq)
	}
}

func TestEmbeddedBrokerLogins(t *testing.T) {
	log := testLog(t)
	if _, err := mqtt.StartBroker(context.Background(), mqtt.Config{Listen: "0.0.0.0:0", AllowRemote: true}, log); err == nil {
		t.Fatal("broker opened to the network without users")
	}
	b := startEmbedded(t, mqtt.Config{Users: []mqtt.User{{Username: "display", Password: "s3cret"}}}, log)
	try := func(user, pass string) error {
		opts := paho.NewClientOptions().AddBroker(b.URL()).SetClientID("try-" + user).SetUsername(user).SetPassword(pass)
		pc := paho.NewClient(opts)
		tok := pc.Connect()
		if !tok.WaitTimeout(guard) {
			t.Fatal("connect did not finish")
		}
		if tok.Error() == nil {
			pc.Disconnect(50)
		}
		return tok.Error()
	}
	if try("", "") == nil {
		t.Error("anonymous login accepted")
	}
	if try("display", "wrong") == nil {
		t.Error("wrong password accepted")
	}
	if err := try("display", "s3cret"); err != nil {
		t.Errorf("right password refused: %v", err)
	}
	// towerd's own client gets in with the broker's internal login.
	cfg := b.b.ClientConfig(mqtt.Config{TowerID: "t7"})
	startTower(t, cfg, t.TempDir(), log, nil)
	bot := mqtttest.NewBot(t, b.URL(), "dicetower/t7", mqtttest.BotOptions{Username: "display", Password: "s3cret"})
	bot.WaitStatus(guard, "online")
	bot.SendDice("x", "d12")
	bot.WaitAnswered(guard, "x")
}

// TestCloseWarnsOfflineUnconfirmed: a client closed after its broker has
// gone cannot have its "offline" status acknowledged, and says so in its
// log rather than closing as if subscribers had been told.
func TestCloseWarnsOfflineUnconfirmed(t *testing.T) {
	var mu sync.Mutex
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(lockedWriter{&mu, &buf}, nil))
	b := startEmbedded(t, mqtt.Config{}, log)
	tw := startTower(t, towerConfig(b.URL(), "t9"), t.TempDir(), log, nil)
	bot := mqtttest.NewBot(t, b.URL(), "dicetower/t9", mqtttest.BotOptions{ClientID: "watch-" + t.Name()})
	bot.WaitStatus(guard, "online")
	b.Stop()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := tw.c.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	<-tw.done
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(buf.String(), "acknowledgement of the offline status") {
		t.Errorf("no warning that the offline status went unacknowledged; log:\n%s", buf.String())
	}
}
