package mqtt

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"log/slog"
	"sync"

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
}

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
	b := &Broker{}
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
		b.srv.Close()
	})
	return nil
}

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
