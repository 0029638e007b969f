package mqtttest

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
)

// Answer is a result or an error as a bot received it.
type Answer struct {
	ID      string `json:"id"`
	Tower   string `json:"tower"`
	Seq     uint64 `json:"seq"`
	System  string `json:"system"`
	Outcome string `json:"outcome"`
	Total   int    `json:"total"`
	Code    string `json:"code"`
	Field   string `json:"field"`
	Message string `json:"message"`
	// Raw is the payload; Retained whether it came as a retained message.
	Raw      []byte `json:"-"`
	Retained bool   `json:"-"`
}

// Message is any message a bot watched.
type Message struct {
	Topic    string
	Payload  []byte
	Retained bool
}

// BotOptions configure a Bot.
type BotOptions struct {
	ClientID           string // "bot" when empty; keep it stable for a persistent session
	Username, Password string
	// Resend makes the bot send every unanswered request again whenever the
	// tower's status says online, as a well-behaved client does after an
	// outage: the tower answers each id once.
	Resend bool
}

// Bot is an MQTT client that talks to a tower like a chat bot or a display
// would: it sends requests and collects results, errors and status. Its
// Wait methods wait on messages (with a timeout only as a failure guard).
type Bot struct {
	tb     testing.TB
	pc     paho.Client
	prefix string
	opt    BotOptions

	mu          sync.Mutex
	changed     chan struct{} // closed and replaced on every message
	results     map[string][]Answer
	errors      map[string][]Answer
	statuses    []string
	watched     []Message
	outstanding map[string][]byte
	order       []string // ids in the order first sent
	sentAt      map[string]time.Time
	latencies   []time.Duration
	subscribed  chan struct{}
	filters     map[string]byte
}

// NewBot connects a bot to url for the tower at prefix and waits until it
// is subscribed. It disconnects when the test ends.
func NewBot(tb testing.TB, url, prefix string, opt BotOptions) *Bot {
	tb.Helper()
	if opt.ClientID == "" {
		opt.ClientID = "bot"
	}
	b := &Bot{
		tb: tb, prefix: prefix, opt: opt, changed: make(chan struct{}),
		results: map[string][]Answer{}, errors: map[string][]Answer{},
		outstanding: map[string][]byte{}, sentAt: map[string]time.Time{},
		subscribed: make(chan struct{}, 1),
		filters:    map[string]byte{prefix + "/result": 1, prefix + "/error": 1, prefix + "/status": 1},
	}
	opts := paho.NewClientOptions().AddBroker(url).SetClientID(opt.ClientID).
		SetUsername(opt.Username).SetPassword(opt.Password).
		// In order: tests check the order of what towerd sends; the
		// handlers only record, so they never block paho.
		SetCleanSession(false).SetOrderMatters(true).
		SetAutoReconnect(true).SetConnectRetry(true).
		SetConnectRetryInterval(100 * time.Millisecond).SetMaxReconnectInterval(100 * time.Millisecond).
		// paho's Publish waits this long when it catches the connection
		// just as it drops (30 s by default); the message is stored and
		// sent after the reconnect either way.
		SetWriteTimeout(time.Second).
		// And a connect attempt that reaches a restarting broker waits
		// this long for its CONNACK (30 s by default).
		SetConnectTimeout(2 * time.Second).
		SetOnConnectHandler(func(pc paho.Client) { b.subscribe(pc) }).
		// Logged so a test that sees an answer twice shows why.
		SetConnectionLostHandler(func(_ paho.Client, err error) {
			tb.Logf("mqtttest: bot %s lost its connection: %v", opt.ClientID, err)
		})
	b.pc = paho.NewClient(opts)
	b.pc.AddRoute(prefix+"/result", b.onResult)
	b.pc.AddRoute(prefix+"/error", b.onError)
	b.pc.AddRoute(prefix+"/status", b.onStatus)
	// paho runs OnConnect before it resends what its store kept from the
	// session (resume), and resume sends again whatever is in the store
	// by then: a request sent as soon as the bot is subscribed could reach
	// the tower twice (seen once in a clean-clone run: every bad request
	// answered twice). The connect token completes after resume.
	connected := b.pc.Connect()
	guard := time.After(30 * time.Second) // failure guard
	select {
	case <-b.subscribed:
	case <-guard:
		tb.Fatalf("mqtttest: bot %s did not connect to %s", opt.ClientID, url)
	}
	select {
	case <-connected.Done():
	case <-guard:
		tb.Fatalf("mqtttest: bot %s: connecting to %s did not finish", opt.ClientID, url)
	}
	tb.Cleanup(func() { b.pc.Disconnect(100) })
	return b
}

func (b *Bot) subscribe(pc paho.Client) {
	b.mu.Lock()
	f := make(map[string]byte, len(b.filters))
	for k, v := range b.filters {
		f[k] = v
	}
	b.mu.Unlock()
	tok := pc.SubscribeMultiple(f, nil)
	tok.Wait()
	if err := refused(tok); err != nil {
		// Logged, not fatal: this runs on paho's goroutine. The bot then
		// never signals subscribed, so NewBot fails.
		b.tb.Logf("mqtttest: bot %s: %v", b.opt.ClientID, err)
		return
	}
	if tok.Error() == nil {
		select {
		case b.subscribed <- struct{}{}:
		default:
		}
	}
}

// Watch subscribes to filter and records its messages (see Watched).
func (b *Bot) Watch(filter string) {
	b.tb.Helper()
	b.mu.Lock()
	b.filters[filter] = 1
	b.mu.Unlock()
	b.pc.AddRoute(filter, func(_ paho.Client, m paho.Message) {
		b.update(func() { b.watched = append(b.watched, Message{m.Topic(), m.Payload(), m.Retained()}) })
	})
	tok := b.pc.Subscribe(filter, 1, nil)
	if !tok.WaitTimeout(30*time.Second) || tok.Error() != nil {
		b.tb.Fatalf("mqtttest: subscribe %s: %v", filter, tok.Error())
	}
	if err := refused(tok); err != nil {
		b.tb.Fatalf("mqtttest: %v", err)
	}
}

// refused reports a subscription the broker did not grant (a SUBACK return
// code of 0x80 or more), which paho does not treat as an error.
func refused(tok paho.Token) error {
	st, ok := tok.(*paho.SubscribeToken)
	if !ok {
		return nil
	}
	for filter, code := range st.Result() {
		if code >= 0x80 {
			return fmt.Errorf("the broker refused the subscription to %s (code %#x)", filter, code)
		}
	}
	return nil
}

func (b *Bot) update(f func()) {
	b.mu.Lock()
	f()
	close(b.changed)
	b.changed = make(chan struct{})
	b.mu.Unlock()
}

func (b *Bot) onResult(_ paho.Client, m paho.Message) {
	var a Answer
	if json.Unmarshal(m.Payload(), &a) != nil {
		a.Message = "undecodable"
	}
	a.Raw, a.Retained = m.Payload(), m.Retained()
	now := time.Now()
	b.update(func() {
		if len(b.results[a.ID]) == 0 && !a.Retained {
			if t, ok := b.sentAt[a.ID]; ok {
				b.latencies = append(b.latencies, now.Sub(t))
			}
		}
		b.results[a.ID] = append(b.results[a.ID], a)
		delete(b.outstanding, a.ID)
	})
}

func (b *Bot) onError(_ paho.Client, m paho.Message) {
	var a Answer
	json.Unmarshal(m.Payload(), &a)
	a.Raw, a.Retained = m.Payload(), m.Retained()
	b.update(func() {
		b.errors[a.ID] = append(b.errors[a.ID], a)
		if a.ID != "" {
			delete(b.outstanding, a.ID)
		}
	})
}

func (b *Bot) onStatus(pc paho.Client, m paho.Message) {
	s := string(m.Payload())
	var resend [][]byte
	b.update(func() {
		b.statuses = append(b.statuses, s)
		if s == "online" && b.opt.Resend {
			for _, id := range b.order {
				if p, ok := b.outstanding[id]; ok {
					resend = append(resend, p)
				}
			}
		}
	})
	if len(resend) == 0 {
		return
	}
	// Not from this handler: paho runs handlers in order on its router, and
	// a Publish made there can wait for that router forever.
	go func() {
		for _, p := range resend {
			pc.Publish(b.prefix+"/roll", 1, false, p)
		}
	}()
}

// Send publishes a request (QoS 1) and remembers it under id until it is
// answered. While the broker is away the request waits in the bot's client.
func (b *Bot) Send(id string, payload []byte) {
	b.mu.Lock()
	if _, seen := b.sentAt[id]; !seen && id != "" {
		b.order = append(b.order, id)
		b.sentAt[id] = time.Now()
	}
	if id != "" {
		b.outstanding[id] = payload
	}
	b.mu.Unlock()
	b.pc.Publish(b.prefix+"/roll", 1, false, payload)
}

// SendDice sends {"id": id, "system": "dice", "expr": expr}.
func (b *Bot) SendDice(id, expr string) {
	b.Send(id, fmt.Appendf(nil, `{"id":%q,"system":"dice","expr":%q}`, id, expr))
}

// Publish sends payload to any topic (QoS 1), e.g. Home Assistant's status.
func (b *Bot) Publish(topic string, retained bool, payload []byte) {
	b.pc.Publish(topic, 1, retained, payload)
}

// Wait blocks until cond holds, failing the test after timeout. cond is
// evaluated after every message the bot receives; it may call the bot's
// accessors (Results, Errors, Watched...).
func (b *Bot) Wait(what string, timeout time.Duration, cond func() bool) {
	b.tb.Helper()
	b.wait(what, timeout, cond, nil)
}

// wait is Wait; seen, when not nil, says what was received instead, for
// the failure message.
func (b *Bot) wait(what string, timeout time.Duration, cond func() bool, seen func() string) {
	b.tb.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		// Take the change signal before looking: a message arriving while
		// cond runs closes ch, so no wake-up is missed.
		b.mu.Lock()
		ch := b.changed
		b.mu.Unlock()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			if seen != nil {
				b.tb.Fatalf("mqtttest: timed out after %v waiting for %s (%s)", timeout, what, seen())
			}
			b.tb.Fatalf("mqtttest: timed out after %v waiting for %s", timeout, what)
		}
	}
}

// WaitAnswered waits until every id has a result or an error.
func (b *Bot) WaitAnswered(timeout time.Duration, ids ...string) {
	b.tb.Helper()
	b.Wait(fmt.Sprintf("answers to %d requests", len(ids)), timeout, func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, id := range ids {
			if len(b.results[id])+len(b.errors[id]) == 0 {
				return false
			}
		}
		return true
	})
}

// WaitStatus waits until the newest status message is want.
func (b *Bot) WaitStatus(timeout time.Duration, want string) {
	b.tb.Helper()
	b.wait("status "+want, timeout, func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return len(b.statuses) > 0 && b.statuses[len(b.statuses)-1] == want
	}, func() string { return fmt.Sprintf("statuses received: %q", b.Statuses()) })
}

// Results returns the results received for id (duplicates included).
func (b *Bot) Results(id string) []Answer {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.results[id])
}

// Distinct drops the answers that repeat an earlier one byte for byte: at
// QoS 1 a broker may deliver a message twice (a bot that reconnects gets
// what it had not acknowledged again, and the retained result once more),
// so a consumer counts distinct answers, as it keys results by seq.
func Distinct(as []Answer) []Answer {
	var out []Answer
	for _, a := range as {
		if !slices.ContainsFunc(out, func(o Answer) bool { return string(o.Raw) == string(a.Raw) }) {
			out = append(out, a)
		}
	}
	return out
}

// Seqs is the set of sequence numbers among as. A request rolled once
// has one however often its result was delivered; a second seq means it
// was rolled (or answered) twice.
func Seqs(as []Answer) map[uint64]bool {
	m := map[uint64]bool{}
	for _, a := range as {
		m[a.Seq] = true
	}
	return m
}

// Errors returns the errors received for id ("" for errors without one).
func (b *Bot) Errors(id string) []Answer {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.errors[id])
}

// Statuses returns every status message received, in order.
func (b *Bot) Statuses() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.statuses)
}

// Watched returns the messages received on watched filters.
func (b *Bot) Watched() []Message {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.watched)
}

// Latencies returns, per answered request, the time from its first Send to
// its first (non-retained) result.
func (b *Bot) Latencies() []time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.latencies)
}

// Answered counts the ids with at least one result.
func (b *Bot) Answered() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.results)
}

// Disconnect closes the bot's connection cleanly.
func (b *Bot) Disconnect() { b.pc.Disconnect(100) }
