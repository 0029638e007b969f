// Package mqtt connects towerd to MQTT: it takes roll requests from
// <prefix>/roll and delivers results, errors, state, events and Home
// Assistant discovery, losing nothing across broker outages and crashes, and
// can serve an embedded broker itself.
package mqtt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/towerd/towerd/mqtt/outbox"
	"github.com/towerd/towerd/rules"
)

// Incoming is a validated roll request for the roll loop. Answer it with
// exactly one PublishResult or PublishError.
type Incoming struct {
	Request *rules.Request
	// Payload is the request JSON as received.
	Payload []byte
	// Received is when towerd accepted it.
	Received time.Time
	// Resumed marks a request accepted before a restart (or crash) whose
	// roll never finished; it is handed out once more after the restart.
	Resumed bool

	key string // journal key
}

// States a tower reports on <prefix>/state.
var States = []string{"idle", "waiting", "tumbling", "settling", "reading", "fault"}

// Errors of the client API.
var (
	ErrClosed   = errors.New("mqtt: client closed")
	ErrAnswered = errors.New("mqtt: request already answered")
)

// Client is towerd's connection to the broker. Safe for concurrent use.
type Client struct {
	cfg   Config
	t     topics
	log   *slog.Logger
	store *outbox.Store
	pc    paho.Client
	dial  *dialer
	track *trackStore
	pub   *publisher

	reqs     chan *Incoming
	dispWake chan struct{}
	dispStop chan struct{}
	dispDone chan struct{}
	acks     chan pendingAck
	done     chan struct{} // closed to stop the goroutines
	wg       sync.WaitGroup

	mu       sync.Mutex
	queue    []*Incoming // accepted, waiting for the roll loop
	reserved int         // requests being journaled, counted as queued
	closing  bool

	ackMu     sync.Mutex
	ackedNs   []uint64
	ackWake   chan struct{}
	ackSignal chan struct{} // an outbox entry was acknowledged
	maxAcked  uint64        // newest result seq acknowledged (acker only)
}

type pendingAck struct {
	m paho.Message
	t outbox.Ticket
}

// Connect starts the client: it opens the outbox and journal in
// stateDir/mqtt, hands out requests left unfinished by the previous run and
// connects to cfg.Broker (for the embedded broker use Broker.ClientConfig).
// It does not wait for the broker: results made while it is away are kept
// and delivered once it is back. ctx only bounds this call.
func Connect(ctx context.Context, cfg Config, stateDir string, log *slog.Logger) (*Client, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.Broker == "" {
		return nil, errors.New("mqtt: no broker URL (start the embedded broker with StartBroker and connect with its ClientConfig)")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	u, _ := brokerURL(cfg.Broker)
	password, _ := cfg.clientPassword()
	tc, err := cfg.tlsConfig()
	if err != nil {
		return nil, err
	}
	store, err := outbox.Open(filepath.Join(stateDir, "mqtt"), outbox.Options{
		KeepDone: cfg.DedupeKeep, KeepFor: cfg.DedupeFor, Log: log,
	})
	if err != nil {
		return nil, fmt.Errorf("mqtt: state dir: %w", err)
	}

	c := &Client{
		cfg: cfg, t: cfg.topics(), log: log, store: store,
		dial:      &dialer{tls: tc, timeout: 10 * time.Second},
		reqs:      make(chan *Incoming),
		dispWake:  make(chan struct{}, 1),
		dispStop:  make(chan struct{}),
		dispDone:  make(chan struct{}),
		acks:      make(chan pendingAck, 256),
		done:      make(chan struct{}),
		ackWake:   make(chan struct{}, 1),
		ackSignal: make(chan struct{}, 1),
	}
	c.track = newTrackStore(c.onPuback)
	c.track.connectLimit = cfg.ConnectTimeout
	c.dial.opened = c.track.dialed
	c.pub = newPublisher(c)

	// What the previous run left: requests to roll, answers to deliver.
	var badResumed []outbox.Accept
	for _, a := range store.Pending() {
		req, _, rerr := decodeRequest(a.Payload)
		if rerr != nil {
			badResumed = append(badResumed, a)
			continue
		}
		c.queue = append(c.queue, &Incoming{Request: req, Payload: a.Payload, Received: a.At, Resumed: true, key: a.Key})
	}
	for _, e := range store.Unacked() {
		c.pub.send(e)
	}
	if len(c.queue) > 0 || store.UnackedCount() > 0 {
		log.Info("mqtt: resuming", "requests", len(c.queue), "undelivered", store.UnackedCount())
	}
	for _, a := range badResumed {
		// Rules changed under a journaled request: answer it, do not drop it.
		_, id, rerr := decodeRequest(a.Payload)
		c.finishError(a.Key, rules.ErrorMsg{V: 1, ID: id, Code: rerr.Code, Field: rerr.Field, Message: rerr.Message})
	}

	opts := paho.NewClientOptions().
		AddBroker(u.String()).
		SetClientID(cfg.ClientID).
		SetUsername(cfg.Username).
		SetPassword(password).
		SetCleanSession(false).
		SetResumeSubs(false).
		SetOrderMatters(true).
		SetAutoAckDisabled(true).
		SetAutoReconnect(true).
		SetConnectRetry(true).
		SetConnectRetryInterval(min(time.Second, cfg.MaxReconnectInterval)).
		SetMaxReconnectInterval(cfg.MaxReconnectInterval).
		SetKeepAlive(cfg.KeepAlive).
		SetPingTimeout(10*time.Second).
		SetConnectTimeout(cfg.ConnectTimeout).
		SetWriteTimeout(cfg.WriteTimeout).
		SetProtocolVersion(4).
		SetWill(c.t.status, "offline", 1, true).
		SetStore(c.track).
		SetCustomOpenConnectionFn(c.dial.open).
		SetOnConnectHandler(func(paho.Client) {
			c.track.connected()
			c.pub.connected(c.dial.sessionPresent())
		}).
		SetConnectionLostHandler(func(_ paho.Client, err error) {
			log.Warn("mqtt: connection lost; reconnecting", "broker", cfg.Broker, "err", err)
		}).
		SetDefaultPublishHandler(func(_ paho.Client, m paho.Message) { m.Ack() })
	c.pc = paho.NewClient(opts)
	c.track.open = c.pc.IsConnectionOpen
	// Routes before connecting: a persistent session's redeliveries can
	// arrive before the subscriptions are renewed.
	c.pc.AddRoute(c.t.roll, c.onRoll)
	c.pc.AddRoute(c.t.status, c.onStatus)
	if cfg.HomeAssistant.Enabled {
		c.pc.AddRoute(c.t.haStatus, c.onHAStatus)
	}

	c.wg.Add(3)
	go c.dispatch()
	go c.acceptor()
	go c.acker()
	// paho keeps what is published while it connects, but refuses (and
	// forgets) what is published before Connect, whose Open also empties
	// its store: the publisher, kicked by the entries resumed above, starts
	// after it (else those entries waited for the next start).
	c.pc.Connect()
	c.pub.start()
	log.Info("mqtt: client started", "broker", cfg.Broker, "client_id", cfg.ClientID, "prefix", cfg.Prefix)
	return c, nil
}

// Requests delivers validated requests, oldest first. It is closed when the
// client closes.
func (c *Client) Requests() <-chan *Incoming { return c.reqs }

// QueueLen is the number of requests waiting for the roll loop.
func (c *Client) QueueLen() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.queue)
}

// Connected reports whether the broker connection is up.
func (c *Client) Connected() bool { return c.pc.IsConnectionOpen() }

// Tower is the tower id results and errors carry.
func (c *Client) Tower() string { return c.cfg.TowerID }

// PublishResult persists res in the outbox, with its per-tower sequence
// number assigned, and returns once it is on disk; it is then published
// (retained) whenever the broker is reachable. in is the request it answers,
// nil for a roll no request asked for (the tower's button). Tower and seq
// are set here; the returned result carries them. Concurrent calls share
// one fdatasync.
func (c *Client) PublishResult(in *Incoming, res rules.Result) (rules.Result, error) {
	key := ""
	if in != nil {
		key = in.key
	}
	res.V, res.Tower = 1, c.cfg.TowerID
	e, err := c.store.Finish(key, outbox.Result, func(seq uint64) ([]byte, error) {
		res.Seq = seq
		return json.Marshal(res)
	})
	switch {
	case errors.Is(err, outbox.ErrDone):
		return res, ErrAnswered
	case errors.Is(err, outbox.ErrClosed):
		return res, ErrClosed
	case err != nil:
		return res, fmt.Errorf("mqtt: publish result: %w", err)
	}
	c.pub.send(e)
	return res, nil
}

// PublishError answers a request with an error (misread, hardware,
// timeout...): persisted like a result, so it is delivered even after a
// crash. With in nil the error is about no request and is sent once, best
// effort.
func (c *Client) PublishError(in *Incoming, msg rules.ErrorMsg) error {
	msg.V, msg.Tower = 1, c.cfg.TowerID
	if msg.At.IsZero() {
		msg.At = time.Now().UTC()
	}
	if msg.Code == "" {
		return errors.New("mqtt: publish error: no code")
	}
	if in == nil {
		b, err := json.Marshal(msg)
		if err != nil {
			return fmt.Errorf("mqtt: publish error: %w", err)
		}
		c.pub.plain(c.t.error, 1, false, b)
		return nil
	}
	msg.ID = in.Request.ID
	return c.finishError(in.key, msg)
}

func (c *Client) finishError(key string, msg rules.ErrorMsg) error {
	msg.V, msg.Tower = 1, c.cfg.TowerID
	if msg.At.IsZero() {
		msg.At = time.Now().UTC()
	}
	e, err := c.store.Finish(key, outbox.Error, func(uint64) ([]byte, error) { return json.Marshal(msg) })
	switch {
	case errors.Is(err, outbox.ErrDone):
		return ErrAnswered
	case errors.Is(err, outbox.ErrClosed):
		return ErrClosed
	case err != nil:
		return fmt.Errorf("mqtt: publish error: %w", err)
	}
	c.pub.send(e)
	return nil
}

// statePayload is the contract's state message.
type statePayload struct {
	State   string  `json:"state"`
	Request *string `json:"request"`
	Queue   int     `json:"queue"`
}

// PublishState reports the tower's state (retained); requestID is the
// request being rolled ("" for none, sent as null). Only the newest state is
// kept while the broker is away. It does not block.
func (c *Client) PublishState(state, requestID string, queue int) error {
	if !slices.Contains(States, state) {
		return fmt.Errorf("mqtt: state %q is not one of %v", state, States)
	}
	p := statePayload{State: state, Queue: queue}
	if requestID != "" {
		p.Request = &requestID
	}
	b, _ := json.Marshal(p)
	c.pub.setState(b)
	return nil
}

// PublishStats sends the tower's statistics (a JSON object, the payload of
// `towerd stats --json`), retained on <prefix>/stats at QoS 1. Only the
// newest waits while the broker is away. It does not block.
func (c *Client) PublishStats(payload []byte) error {
	if !json.Valid(payload) {
		return errors.New("mqtt: stats payload is not JSON")
	}
	c.pub.setStats(payload)
	return nil
}

// PublishEvent sends {"event": event, "tower": ..., "at": ..., fields...}
// at QoS 0: dropped while the broker is away. It does not block.
func (c *Client) PublishEvent(event string, fields map[string]any) error {
	if event == "" {
		return errors.New("mqtt: event without a name")
	}
	m := make(map[string]any, len(fields)+3)
	for k, v := range fields {
		m[k] = v
	}
	m["event"], m["tower"], m["at"] = event, c.cfg.TowerID, time.Now().UTC()
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("mqtt: event %s: %w", event, err)
	}
	c.pub.event(b)
	return nil
}

// onRoll handles one message on <prefix>/roll. It runs on paho's router
// goroutine, so it never blocks on the roll loop: a request is journaled,
// queued and acknowledged to the broker once the journal entry is durable.
func (c *Client) onRoll(_ paho.Client, m paho.Message) {
	c.mu.Lock()
	closing := c.closing
	c.mu.Unlock()
	if closing {
		return // not acknowledged: the broker keeps it for the next run
	}
	req, id, rerr := decodeRequest(m.Payload())
	if rerr != nil {
		c.log.Info("mqtt: bad request", "id", id, "field", rerr.Field, "err", rerr.Message, "bytes", len(m.Payload()))
		c.replyError(id, rerr)
		c.ackAfter(m, 0)
		return
	}
	key := ""
	if req.ID != "" {
		key = "id:" + req.ID
		switch st, e := c.store.Lookup(key); st {
		case outbox.Done:
			c.log.Info("mqtt: request answered before; sending the answer again", "id", req.ID)
			c.pub.again(e)
			c.ackAfter(m, 0)
			return
		case outbox.Accepted:
			c.log.Info("mqtt: duplicate of a request in progress ignored", "id", req.ID)
			c.ackAfter(m, c.store.Mark())
			return
		}
	}
	c.mu.Lock()
	if n := len(c.queue) + c.reserved; n >= c.cfg.QueueSize {
		c.mu.Unlock()
		c.replyError(req.ID, &rules.Error{Code: rules.CodeBusy, Message: fmt.Sprintf("the tower's queue is full (%d requests waiting)", n)})
		c.ackAfter(m, 0)
		return
	}
	c.reserved++
	c.mu.Unlock()

	key, t, err := c.store.Accept(key, m.Payload())

	c.mu.Lock()
	c.reserved--
	if err == nil {
		c.queue = append(c.queue, &Incoming{Request: req, Payload: slices.Clone(m.Payload()), Received: time.Now(), key: key})
	}
	c.mu.Unlock()
	switch {
	case errors.Is(err, outbox.ErrClosed):
		return
	case err != nil:
		c.log.Error("mqtt: journal request", "id", req.ID, "err", err)
		c.replyError(req.ID, &rules.Error{Code: rules.CodeHardware, Message: "the tower cannot record the request: " + err.Error()})
		c.ackAfter(m, 0)
		return
	}
	select {
	case c.dispWake <- struct{}{}:
	default:
	}
	// The roll may start before the journal entry is durable: its result
	// is written after it, so a durable result implies a durable request.
	// Only the broker's acknowledgement has to wait.
	c.ackAfter(m, t)
}

// replyError sends an error for a request that was not accepted (bad
// request, busy): not journaled, the request can simply be sent again.
func (c *Client) replyError(id string, e *rules.Error) {
	b, _ := json.Marshal(rules.ErrorMsg{V: 1, ID: id, Tower: c.cfg.TowerID, At: time.Now().UTC(), Code: e.Code, Field: e.Field, Message: e.Message})
	c.pub.plain(c.t.error, 1, false, b)
}

// ackAfter acknowledges m to the broker once the journal is durable up to t.
func (c *Client) ackAfter(m paho.Message, t outbox.Ticket) {
	select {
	case c.acks <- pendingAck{m, t}:
	case <-c.done:
	}
}

// acceptor acknowledges requests in order, each once its journal entry is
// durable; concurrent syncs from results usually cover it already.
func (c *Client) acceptor() {
	defer c.wg.Done()
	for {
		select {
		case a := <-c.acks:
			if err := c.store.Sync(a.t); err != nil {
				// Not acknowledged: the broker redelivers it after a
				// reconnect, and the journal knows it by then or not.
				c.log.Error("mqtt: journal sync", "err", err)
				continue
			}
			a.m.Ack()
		case <-c.done:
			return
		}
	}
}

// dispatch hands queued requests to the roll loop one at a time.
func (c *Client) dispatch() {
	defer c.wg.Done()
	defer close(c.dispDone)
	for {
		c.mu.Lock()
		var in *Incoming
		if len(c.queue) > 0 {
			in = c.queue[0]
		}
		c.mu.Unlock()
		if in == nil {
			select {
			case <-c.dispWake:
				continue
			case <-c.dispStop:
				return
			}
		}
		select {
		case c.reqs <- in:
			c.mu.Lock()
			c.queue = c.queue[1:]
			c.mu.Unlock()
		case <-c.dispStop:
			return
		}
	}
}

// onPuback is called (from paho's network goroutine, so it must not block)
// when the broker acknowledges an outbox entry.
func (c *Client) onPuback(n uint64) {
	c.ackMu.Lock()
	c.ackedNs = append(c.ackedNs, n)
	c.ackMu.Unlock()
	select {
	case c.ackWake <- struct{}{}:
	default:
	}
}

// acker records broker acknowledgements in the outbox. When a result is
// acknowledged after a newer one (a resend after a reconnect), the broker now
// retains the older one, so the newest is published again.
func (c *Client) acker() {
	defer c.wg.Done()
	for {
		select {
		case <-c.ackWake:
		case <-c.done:
			return
		}
		c.ackMu.Lock()
		ns := c.ackedNs
		c.ackedNs = nil
		c.ackMu.Unlock()
		for _, n := range ns {
			e := c.store.Ack(n)
			if e == nil || e.Kind != outbox.Result {
				continue
			}
			if e.Seq < c.maxAcked {
				if last := c.store.Last(); last != nil && c.store.Durable(last) {
					c.pub.again(last)
				}
			} else {
				c.maxAcked = e.Seq
			}
		}
		select {
		case c.ackSignal <- struct{}{}:
		default:
		}
	}
}

// onStatus watches the tower's own status topic: a last will that lands
// after towerd reconnected (the broker noticed the old connection late)
// would leave the tower "offline", so it says "online" again.
func (c *Client) onStatus(_ paho.Client, m paho.Message) {
	m.Ack()
	c.mu.Lock()
	closing := c.closing
	c.mu.Unlock()
	if string(m.Payload()) == "offline" && !closing {
		c.pub.online()
	}
}

// onHAStatus re-sends discovery when Home Assistant (re)starts.
func (c *Client) onHAStatus(_ paho.Client, m paho.Message) {
	m.Ack()
	if string(m.Payload()) == "online" {
		c.pub.discoveryNow()
	}
}

// Close shuts the client down cleanly: it stops handing out requests (stop
// the roll loop first; requests not rolled yet are kept for the next run),
// waits until the broker has acknowledged the outbox or ctx ends, publishes
// the "offline" status, disconnects and closes the state files.
func (c *Client) Close(ctx context.Context) error {
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return nil
	}
	c.closing = true
	c.mu.Unlock()
	close(c.dispStop)
	<-c.dispDone
	close(c.reqs)

	for c.store.UnackedCount() > 0 && ctx.Err() == nil {
		select {
		case <-c.ackSignal:
		case <-ctx.Done():
		}
	}
	if n := c.store.UnackedCount(); n > 0 {
		c.log.Warn("mqtt: closing with undelivered messages; they are sent on the next start", "count", n)
	}
	tok := c.pub.publishUntil(ctx.Done(), c.t.status, 1, true, []byte("offline"), 0)
	select {
	case <-tok.Done():
	case <-ctx.Done():
	}
	if err := unconfirmed(ctx, tok); err != nil {
		// Subscribers then learn it from the last will, once the broker
		// finds the connection gone.
		c.log.Warn("mqtt: closing without the broker's acknowledgement of the offline status", "err", err)
	}
	close(c.done)
	c.pub.wait()
	c.wg.Wait()
	c.pc.Disconnect(250)
	if err := c.store.Close(); err != nil {
		return fmt.Errorf("mqtt: close: %w", err)
	}
	c.log.Info("mqtt: client closed")
	return nil
}

// unconfirmed is why tok, a QoS 1 publish waited for until ctx ended,
// was not acknowledged, or nil when it was.
func unconfirmed(ctx context.Context, tok paho.Token) error {
	select {
	case <-tok.Done():
		return tok.Error()
	default:
		return fmt.Errorf("no acknowledgement before the close deadline: %w", ctx.Err())
	}
}

// crash stops the client the way a killed process would: the connection is
// cut without an MQTT DISCONNECT (the broker publishes the last will) and the
// state files are released without a final sync. For tests.
func (c *Client) crash() {
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return
	}
	c.closing = true
	c.mu.Unlock()
	c.dial.kill()
	close(c.dispStop)
	<-c.dispDone
	close(c.reqs)
	close(c.done)
	c.pub.wait()
	c.wg.Wait()
	c.pc.Disconnect(0)
	c.store.Abandon()
}
