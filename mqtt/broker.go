package mqtt

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	mochi "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/listeners"
	"github.com/mochi-mqtt/server/v2/packets"
)

// Broker is the embedded MQTT broker towerd serves when no external broker
// is configured. It keeps sessions and retained messages in memory: they
// last as long as towerd runs, and the client republishes what matters
// (status, state, the last result, discovery) when it connects.
type Broker struct {
	srv  *mochi.Server
	addr string
	// internal is the account towerd's own client uses when the broker
	// requires logins; its password is random per start.
	internalUser, internalPass string
	closeOnce                  sync.Once
	stop                       func() bool
	// status is the status topic of the tower served (see ClientConfig):
	// Close first delivers what is in flight on it.
	status atomic.Value // string
	// acked is signalled when a delivery completes or a client leaves.
	acked chan struct{}
}

// drainLimit bounds how long Close waits for connected subscribers to
// acknowledge the tower's status: towerd publishes "offline" just before
// its broker closes, the broker acknowledges it at once, and a bot under
// load saw its connection end before its copy came.
const drainLimit = time.Second

const internalUser = "towerd-internal"

// StartBroker starts the embedded broker on cfg.Listen. It refuses a
// non-loopback address unless cfg.AllowRemote is set and cfg.Users is not
// empty. The broker stops when ctx ends or Close is called.
func StartBroker(ctx context.Context, cfg Config, log *slog.Logger) (*Broker, error) {
	cfg = cfg.withDefaults()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := checkListen(cfg); err != nil {
		return nil, err
	}
	users, err := cfg.brokerUsers()
	if err != nil {
		return nil, err
	}
	b := &Broker{acked: make(chan struct{}, 1)}
	if len(users) > 0 {
		var pw [16]byte
		rand.Read(pw[:])
		b.internalUser, b.internalPass = internalUser, hex.EncodeToString(pw[:])
		users[b.internalUser] = b.internalPass
	}
	caps := mochi.NewDefaultServerCapabilities()
	// Requests over MaxPayload still reach towerd so it can answer
	// bad_request; far larger packets are refused by the broker.
	caps.MaximumPacketSize = 1 << 20
	b.srv = mochi.New(&mochi.Options{
		Capabilities:           caps,
		Logger:                 log.With("component", "mqtt-broker"),
		SysTopicResendInterval: 60,
	})
	if err := b.srv.AddHook(&authHook{users: users}, nil); err != nil {
		return nil, fmt.Errorf("mqtt: broker auth: %w", err)
	}
	if err := b.srv.AddHook(newIDHook(), nil); err != nil {
		return nil, fmt.Errorf("mqtt: broker packet ids: %w", err)
	}
	if err := b.srv.AddHook(&drainHook{b: b}, nil); err != nil {
		return nil, fmt.Errorf("mqtt: broker drain: %w", err)
	}
	// Last, so that it sees each packet as mochi will process it.
	if err := b.srv.AddHook(&retainHook{aliasMax: caps.TopicAliasMaximum}, nil); err != nil {
		return nil, fmt.Errorf("mqtt: broker retain order: %w", err)
	}
	tcp := listeners.NewTCP(listeners.Config{ID: "tcp", Address: cfg.Listen})
	if err := b.srv.AddListener(tcp); err != nil {
		return nil, fmt.Errorf("mqtt: broker listen on %s: %w", cfg.Listen, err)
	}
	if err := b.srv.Serve(); err != nil {
		b.srv.Close()
		return nil, fmt.Errorf("mqtt: broker: %w", err)
	}
	b.addr = tcp.Address()
	b.stop = context.AfterFunc(ctx, func() { b.Close() })
	log.Info("mqtt: embedded broker listening", "addr", b.addr, "logins", len(users) > 0)
	return b, nil
}

// Addr is the address the broker listens on (the real port when Listen
// asked for port 0).
func (b *Broker) Addr() string { return b.addr }

// URL is the broker's tcp:// URL.
func (b *Broker) URL() string { return "tcp://" + b.addr }

// ClientConfig returns cfg pointed at this broker, with the login towerd's
// own client uses.
func (b *Broker) ClientConfig(cfg Config) Config {
	b.status.Store(cfg.withDefaults().topics().status)
	cfg.Broker = b.URL()
	cfg.Username, cfg.Password = b.internalUser, b.internalPass
	cfg.PasswordEnv, cfg.PasswordFile, cfg.Credential = "", "", ""
	cfg.CAFile, cfg.CertFile, cfg.KeyFile, cfg.ServerName = "", "", "", ""
	return cfg
}

// Close stops the broker and disconnects its clients.
func (b *Broker) Close() error {
	b.closeOnce.Do(func() {
		if b.stop != nil {
			b.stop()
		}
		if topic, _ := b.status.Load().(string); topic != "" {
			b.drain(topic, drainLimit)
		}
		b.srv.Close()
	})
	return nil
}

// drain waits, at most limit, until no connected client has a QoS 1 or 2
// delivery on topic unacknowledged. Only the status: a busy stream of
// results is never drained, and what is left is resent on reconnection.
func (b *Broker) drain(topic string, limit time.Duration) {
	t := time.NewTimer(limit)
	defer t.Stop()
	for b.pending(topic) {
		select {
		case <-b.acked:
		case <-t.C:
			return
		}
	}
}

// pending reports whether a connected client has a delivery on topic in
// flight.
func (b *Broker) pending(topic string) bool {
	for _, cl := range b.srv.Clients.GetAll() {
		if cl.Closed() {
			continue
		}
		for _, pk := range cl.State.Inflight.GetAll(false) {
			if pk.FixedHeader.Type == packets.Publish && pk.TopicName == topic {
				return true
			}
		}
	}
	return false
}

// drainHook tells drain when a delivery completes, is dropped, or its
// client leaves.
type drainHook struct {
	mochi.HookBase
	b *Broker
}

func (h *drainHook) ID() string { return "towerd-drain" }

func (h *drainHook) Provides(b byte) bool {
	return bytes.Contains([]byte{mochi.OnQosComplete, mochi.OnQosDropped, mochi.OnDisconnect}, []byte{b})
}

func (h *drainHook) signal() {
	select {
	case h.b.acked <- struct{}{}:
	default:
	}
}

func (h *drainHook) OnQosComplete(*mochi.Client, packets.Packet) { h.signal() }
func (h *drainHook) OnQosDropped(*mochi.Client, packets.Packet)  { h.signal() }
func (h *drainHook) OnDisconnect(*mochi.Client, error, bool)     { h.signal() }

// authHook admits anyone when there are no accounts (loopback only, see
// checkListen), otherwise exactly the configured logins. Every client may
// use every topic: the broker serves one household's tower.
type authHook struct {
	mochi.HookBase
	users map[string]string
}

func (h *authHook) ID() string { return "towerd-auth" }

func (h *authHook) Provides(b byte) bool {
	return bytes.Contains([]byte{mochi.OnConnectAuthenticate, mochi.OnACLCheck}, []byte{b})
}

func (h *authHook) OnConnectAuthenticate(cl *mochi.Client, pk packets.Packet) bool {
	if len(h.users) == 0 {
		return true
	}
	want, ok := h.users[string(pk.Connect.Username)]
	if !ok {
		// Compare anyway so an unknown user costs the same as a wrong
		// password.
		subtle.ConstantTimeCompare(pk.Connect.Password, []byte("x"))
		return false
	}
	return subtle.ConstantTimeCompare(pk.Connect.Password, []byte(want)) == 1
}

func (h *authHook) OnACLCheck(cl *mochi.Client, topic string, write bool) bool { return true }

// idHook works around mochi-mqtt v2.7.9 treating the packet ids a client
// picks and the ids of the broker's publishes to that client as one space
// (MQTT 3.1.1 §2.3.1: they are independent, and clients number theirs
// freely). Unfixed, a SUBSCRIBE whose id equals that of a publish the broker
// has in flight to the client is refused with 0x91 (the client silently
// misses its retained messages and everything after), and a QoS 1 PUBLISH
// with such an id wipes the broker's in-flight publish, which is then never
// redelivered. The hook hands mochi every such packet under an id counted
// down from the top, away from the broker's own (counted up from 1), and
// puts the client's id back into the acknowledgement.
type idHook struct {
	mochi.HookBase
	n       atomic.Int64 // len(renamed), read without the lock
	mu      sync.Mutex
	renamed map[renameKey]uint16 // → the client's id
}

// renameKey names an acknowledgement the broker will send: its type and the
// id mochi knows the packet by.
type renameKey struct {
	cl  *mochi.Client
	ack byte
	id  uint16
}

func newIDHook() *idHook { return &idHook{renamed: map[renameKey]uint16{}} }

func (h *idHook) ID() string { return "towerd-packet-ids" }

func (h *idHook) Provides(b byte) bool {
	return bytes.Contains([]byte{mochi.OnPacketRead, mochi.OnPacketEncode, mochi.OnDisconnect}, []byte{b})
}

func (h *idHook) OnPacketRead(cl *mochi.Client, pk packets.Packet) (packets.Packet, error) {
	var ack byte
	switch {
	case pk.FixedHeader.Type == packets.Subscribe:
		ack = packets.Suback
	case pk.FixedHeader.Type == packets.Unsubscribe:
		ack = packets.Unsuback
	case pk.FixedHeader.Type == packets.Publish && pk.FixedHeader.Qos == 1:
		ack = packets.Puback
	default:
		// QoS 2 keeps its id: mochi tracks the exchange under it.
		return pk, nil
	}
	if pk.PacketID == 0 {
		return pk, nil
	}
	// Every such packet is renamed, not only one whose id is in flight
	// now: between this check and mochi handling the packet, a publish to
	// the client can take that id (a subscription refused with 0x91 was
	// seen in a clean-clone test run when only clashes were renamed).
	h.mu.Lock()
	defer h.mu.Unlock()
	// From the top down: mochi numbers its publishes upwards from 1, so a
	// high id stays free while the packet is handled.
	for id := uint16(math.MaxUint16); id > 0; id-- {
		k := renameKey{cl, ack, id}
		if _, used := h.renamed[k]; used {
			continue
		}
		if _, used := cl.State.Inflight.Get(id); used {
			continue
		}
		h.renamed[k] = pk.PacketID
		h.n.Add(1)
		pk.PacketID = id
		break
	}
	return pk, nil
}

func (h *idHook) OnPacketEncode(cl *mochi.Client, pk packets.Packet) packets.Packet {
	switch pk.FixedHeader.Type {
	case packets.Puback, packets.Suback, packets.Unsuback:
	default:
		return pk
	}
	if h.n.Load() == 0 {
		return pk
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	k := renameKey{cl, pk.FixedHeader.Type, pk.PacketID}
	if orig, ok := h.renamed[k]; ok {
		pk.PacketID = orig
		delete(h.renamed, k)
		h.n.Add(-1)
	}
	return pk
}

// OnDisconnect forgets renames whose acknowledgement was never sent.
func (h *idHook) OnDisconnect(cl *mochi.Client, _ error, _ bool) {
	if h.n.Load() == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for k := range h.renamed {
		if k.cl == cl {
			delete(h.renamed, k)
			h.n.Add(-1)
		}
	}
}

// retainHook works around a data race in mochi-mqtt v2.7.9 (upstream issue
// #200): a retained PUBLISH writes the topic's retain path under the topic
// node's lock, while a SUBSCRIBE with a wildcard reads it without that lock
// when it collects the retained messages for the new subscriber. The hook
// runs those two kinds of packet one at a time: it takes its lock when such
// a packet has been read and releases it when mochi has processed it. The
// packets mochi refuses before processing (and so before
// OnPacketProcessed) are left alone, by the same validation mochi does.
type retainHook struct {
	mochi.HookBase
	aliasMax uint16
	mu       sync.Mutex
}

func (h *retainHook) ID() string { return "towerd-retain-order" }

func (h *retainHook) Provides(b byte) bool {
	return b == mochi.OnPacketRead || b == mochi.OnPacketProcessed
}

// serialised reports whether mochi will process pk with the hook's lock
// held; it must give the same answer for the same packet in both hooks.
func (h *retainHook) serialised(pk packets.Packet) bool {
	switch pk.FixedHeader.Type {
	case packets.Subscribe:
		return pk.SubscribeValidate() == packets.CodeSuccess
	case packets.Publish:
		return pk.FixedHeader.Retain && pk.PublishValidate(h.aliasMax) == packets.CodeSuccess
	}
	return false
}

func (h *retainHook) OnPacketRead(cl *mochi.Client, pk packets.Packet) (packets.Packet, error) {
	if h.serialised(pk) {
		h.mu.Lock()
	}
	return pk, nil
}

func (h *retainHook) OnPacketProcessed(cl *mochi.Client, pk packets.Packet, err error) {
	if h.serialised(pk) {
		h.mu.Unlock()
	}
}
